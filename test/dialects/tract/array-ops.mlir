// RUN: tract-opt %s | FileCheck %s
// Round trip: the printed form parses back to the same IR, in both the
// custom and the generic syntax.
// RUN: tract-opt %s | tract-opt | FileCheck %s
// RUN: tract-opt %s --mlir-print-op-generic | tract-opt | FileCheck %s

// Axis, shape, slicing, gather/scatter and index operators.

// CHECK-LABEL: func.func @axis_ops
// CHECK: tract.add_axis %{{[a-zA-Z0-9_#]+}} {axis = 3 : i64} : tensor<1x?x64xf32, #tract.dims<[S]>> -> tensor<1x?x64x1xf32, #tract.dims<[S]>>
// CHECK: tract.rm_axis %{{[a-zA-Z0-9_#]+}} {axis = 0 : i64} : tensor<1x?x64x1xf32, #tract.dims<[S]>> -> tensor<?x64x1xf32, #tract.dims<[S]>>
// CHECK: tract.move_axis %{{[a-zA-Z0-9_#]+}} {from = 2 : i64, to = 0 : i64} : tensor<?x64x1xf32, #tract.dims<[S]>> -> tensor<1x?x64xf32, #tract.dims<[S]>>
// CHECK: tract.reshape %{{[a-zA-Z0-9_#]+}} {at = 0 : i64, count = 3 : i64, to = #tract.shape<[S, 4, 16]>} : tensor<1x?x64xf32, #tract.dims<[S]>> -> tensor<?x4x16xf32, #tract.dims<[S]>>
// CHECK: return %{{[a-zA-Z0-9_#]+}} : tensor<?x4x16xf32, #tract.dims<[S]>>
func.func @axis_ops(%x: tensor<1x?x64xf32, #tract.dims<[S]>>) -> tensor<?x4x16xf32, #tract.dims<[S]>> {
  %0 = tract.add_axis %x {axis = 3 : i64} : tensor<1x?x64xf32, #tract.dims<[S]>> -> tensor<1x?x64x1xf32, #tract.dims<[S]>>
  %1 = tract.rm_axis %0 {axis = 0 : i64} : tensor<1x?x64x1xf32, #tract.dims<[S]>> -> tensor<?x64x1xf32, #tract.dims<[S]>>
  %2 = tract.move_axis %1 {from = 2 : i64, to = 0 : i64} : tensor<?x64x1xf32, #tract.dims<[S]>> -> tensor<1x?x64xf32, #tract.dims<[S]>>
  %3 = tract.reshape %2 {at = 0 : i64, count = 3 : i64, to = #tract.shape<[S, 4, 16]>} : tensor<1x?x64xf32, #tract.dims<[S]>> -> tensor<?x4x16xf32, #tract.dims<[S]>>
  return %3 : tensor<?x4x16xf32, #tract.dims<[S]>>
}

// CHECK-LABEL: func.func @reshape_symbolic
// CHECK: tract.reshape %{{[a-zA-Z0-9_#]+}} {at = 0 : i64, count = 1 : i64, to = #tract.shape<[S, 4]>} : tensor<?xf32, #tract.dims<[4*S]>> -> tensor<?x4xf32, #tract.dims<[S]>>
// CHECK: return %{{[a-zA-Z0-9_#]+}} : tensor<?x4xf32, #tract.dims<[S]>>
func.func @reshape_symbolic(%x: tensor<?xf32, #tract.dims<[4*S]>>) -> tensor<?x4xf32, #tract.dims<[S]>> {
  %0 = tract.reshape %x {at = 0 : i64, count = 1 : i64, to = #tract.shape<[S, 4]>} : tensor<?xf32, #tract.dims<[4*S]>> -> tensor<?x4xf32, #tract.dims<[S]>>
  return %0 : tensor<?x4xf32, #tract.dims<[S]>>
}

// CHECK-LABEL: func.func @broadcast_tile
// CHECK: tract.broadcast %{{[a-zA-Z0-9_#]+}} {shape = #tract.shape<[B, 3]>} : tensor<1x3xf32> -> tensor<?x3xf32, #tract.dims<[B]>>
// CHECK: tract.tile %{{[a-zA-Z0-9_#]+}} {multipliers = #tract.shape<[2, 2]>} : tensor<?x3xf32, #tract.dims<[B]>> -> tensor<?x6xf32, #tract.dims<[2*B]>>
// CHECK: return %{{[a-zA-Z0-9_#]+}} : tensor<?x6xf32, #tract.dims<[2*B]>>
func.func @broadcast_tile(%x: tensor<1x3xf32>) -> tensor<?x6xf32, #tract.dims<[2*B]>> {
  %0 = tract.broadcast %x {shape = #tract.shape<[B, 3]>} : tensor<1x3xf32> -> tensor<?x3xf32, #tract.dims<[B]>>
  %1 = tract.tile %0 {multipliers = #tract.shape<[2, 2]>} : tensor<?x3xf32, #tract.dims<[B]>> -> tensor<?x6xf32, #tract.dims<[2*B]>>
  return %1 : tensor<?x6xf32, #tract.dims<[2*B]>>
}

// CHECK-LABEL: func.func @slices
// CHECK: tract.slice %{{[a-zA-Z0-9_#]+}} {axis = 1 : i64, end = #tract.dim<S-1>, start = #tract.dim<2>} : tensor<1x?x8xf32, #tract.dims<[S]>> -> tensor<1x?x8xf32, #tract.dims<[S-3]>>
// CHECK: tract.dyn_slice %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} {axis = 2 : i64, len = #tract.dim<L>} : (tensor<1x?x8xf32, #tract.dims<[S]>>, tensor<i64>, tensor<i64>) -> tensor<1x?x?xf32, #tract.dims<[S, L]>>
// CHECK: tract.downsample %{{[a-zA-Z0-9_#]+}} {axis = 1 : i64, modulo = 1 : i64, stride = 2 : i64} : tensor<1x?x8xf32, #tract.dims<[S]>> -> tensor<1x?x8xf32, #tract.dims<[S/2]>>
// CHECK: tract.pad %{{[a-zA-Z0-9_#]+}} {after = array<i64: 0, 3, 1>, before = array<i64: 0, 2, 1>, mode = #tract<pad_mode reflect>} : tensor<1x?x8xf32, #tract.dims<[S]>> -> tensor<1x?x10xf32, #tract.dims<[S+5]>>
// CHECK: tract.pad %{{[a-zA-Z0-9_#]+}} {after = array<i64: 0, 0, 0>, before = array<i64: 0, 0, 1>, value = 1.500000e+00 : f32} : tensor<1x?x8xf32, #tract.dims<[S]>> -> tensor<1x?x9xf32, #tract.dims<[S]>>
// CHECK: tract.concat %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} {axis = 1 : i64} : (tensor<1x?x8xf32, #tract.dims<[S]>>, tensor<1x?x8xf32, #tract.dims<[S-3]>>) -> tensor<1x?x8xf32, #tract.dims<[2*S-3]>>
func.func @slices(%x: tensor<1x?x8xf32, #tract.dims<[S]>>, %s: tensor<i64>, %e: tensor<i64>) {
  %0 = tract.slice %x {axis = 1 : i64, start = #tract.dim<2>, end = #tract.dim<S-1>} : tensor<1x?x8xf32, #tract.dims<[S]>> -> tensor<1x?x8xf32, #tract.dims<[S-3]>>
  %1 = tract.dyn_slice %x, %s, %e {axis = 2 : i64, len = #tract.dim<L>} : (tensor<1x?x8xf32, #tract.dims<[S]>>, tensor<i64>, tensor<i64>) -> tensor<1x?x?xf32, #tract.dims<[S, L]>>
  %2 = tract.downsample %x {axis = 1 : i64, stride = 2 : i64, modulo = 1 : i64} : tensor<1x?x8xf32, #tract.dims<[S]>> -> tensor<1x?x8xf32, #tract.dims<[S/2]>>
  %3 = tract.pad %x {before = array<i64: 0, 2, 1>, after = array<i64: 0, 3, 1>, mode = #tract<pad_mode reflect>} : tensor<1x?x8xf32, #tract.dims<[S]>> -> tensor<1x?x10xf32, #tract.dims<[S+5]>>
  %4 = tract.pad %x {before = array<i64: 0, 0, 1>, after = array<i64: 0, 0, 0>, value = 1.5 : f32} : tensor<1x?x8xf32, #tract.dims<[S]>> -> tensor<1x?x9xf32, #tract.dims<[S]>>
  %5 = tract.concat %x, %0 {axis = 1 : i64} : (tensor<1x?x8xf32, #tract.dims<[S]>>, tensor<1x?x8xf32, #tract.dims<[S-3]>>) -> tensor<1x?x8xf32, #tract.dims<[2*S-3]>>
  return
}

// CHECK-LABEL: func.func @gathers
// CHECK: tract.gather %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} {axis = 1 : i64} : (tensor<?x16xf32, #tract.dims<[N]>>, tensor<3x2xi64>) -> tensor<?x3x2xf32, #tract.dims<[N]>>
// CHECK: tract.gather_elements %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} {axis = 1 : i64} : (tensor<?x16xf32, #tract.dims<[N]>>, tensor<?x4xi64, #tract.dims<[N]>>) -> tensor<?x4xf32, #tract.dims<[N]>>
// CHECK: tract.gather_nd %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<?x16xf32, #tract.dims<[N]>>, tensor<5x1xi64>) -> tensor<5x16xf32>
// CHECK: tract.scatter_elements %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} {axis = 1 : i64, reduction = #tract<scatter_reduction add>} : (tensor<?x16xf32, #tract.dims<[N]>>, tensor<?x4xi64, #tract.dims<[N]>>, tensor<?x4xf32, #tract.dims<[N]>>) -> tensor<?x16xf32, #tract.dims<[N]>>
// CHECK: tract.scatter_nd %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<?x16xf32, #tract.dims<[N]>>, tensor<5x1xi64>, tensor<5x16xf32>) -> tensor<?x16xf32, #tract.dims<[N]>>
func.func @gathers(%x: tensor<?x16xf32, #tract.dims<[N]>>, %i: tensor<3x2xi64>, %e: tensor<?x4xi64, #tract.dims<[N]>>, %u: tensor<?x4xf32, #tract.dims<[N]>>, %nd: tensor<5x1xi64>, %ndu: tensor<5x16xf32>) {
  %0 = tract.gather %x, %i {axis = 1 : i64} : (tensor<?x16xf32, #tract.dims<[N]>>, tensor<3x2xi64>) -> tensor<?x3x2xf32, #tract.dims<[N]>>
  %1 = tract.gather_elements %x, %e {axis = 1 : i64} : (tensor<?x16xf32, #tract.dims<[N]>>, tensor<?x4xi64, #tract.dims<[N]>>) -> tensor<?x4xf32, #tract.dims<[N]>>
  %2 = tract.gather_nd %x, %nd : (tensor<?x16xf32, #tract.dims<[N]>>, tensor<5x1xi64>) -> tensor<5x16xf32>
  %3 = tract.scatter_elements %x, %e, %u {axis = 1 : i64, reduction = #tract<scatter_reduction add>} : (tensor<?x16xf32, #tract.dims<[N]>>, tensor<?x4xi64, #tract.dims<[N]>>, tensor<?x4xf32, #tract.dims<[N]>>) -> tensor<?x16xf32, #tract.dims<[N]>>
  %4 = tract.scatter_nd %x, %nd, %ndu : (tensor<?x16xf32, #tract.dims<[N]>>, tensor<5x1xi64>, tensor<5x16xf32>) -> tensor<?x16xf32, #tract.dims<[N]>>
  return
}

// CHECK-LABEL: func.func @misc
// CHECK: tract.one_hot %{{[a-zA-Z0-9_#]+}} {axis = 1 : i64, dim = 10 : i64, off = 0.000000e+00 : f32, on = 1.000000e+00 : f32} : tensor<4xi64> -> tensor<4x10xf32>
// CHECK: tract.topk %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} {axis = 1 : i64, len = #tract.dim<K>} : (tensor<2x?xf32, #tract.dims<[S]>>, tensor<i64>) -> (tensor<2x?xf32, #tract.dims<[K]>>, tensor<2x?xi64, #tract.dims<[K]>>)
// CHECK: tract.trilu %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} {upper = true} : (tensor<2x?xf32, #tract.dims<[S]>>, tensor<i64>) -> tensor<2x?xf32, #tract.dims<[S]>>
// CHECK: tract.range %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} {len = #tract.dim<R>} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64, #tract.dims<[R]>>
// CHECK: tract.shape_of %{{[a-zA-Z0-9_#]+}} : tensor<2x?xf32, #tract.dims<[S]>> -> tensor<2xi64>
func.func @misc(%i: tensor<4xi64>, %x: tensor<2x?xf32, #tract.dims<[S]>>, %k: tensor<i64>, %a: tensor<i64>, %b: tensor<i64>, %c: tensor<i64>) {
  %0 = tract.one_hot %i {axis = 1 : i64, dim = 10 : i64, off = 0.0 : f32, on = 1.0 : f32} : tensor<4xi64> -> tensor<4x10xf32>
  %1:2 = tract.topk %x, %k {axis = 1 : i64, largest = true, len = #tract.dim<K>} : (tensor<2x?xf32, #tract.dims<[S]>>, tensor<i64>) -> (tensor<2x?xf32, #tract.dims<[K]>>, tensor<2x?xi64, #tract.dims<[K]>>)
  %2 = tract.trilu %x, %k {upper = true} : (tensor<2x?xf32, #tract.dims<[S]>>, tensor<i64>) -> tensor<2x?xf32, #tract.dims<[S]>>
  %3 = tract.range %a, %b, %c {len = #tract.dim<R>} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64, #tract.dims<[R]>>
  %4 = tract.shape_of %x : tensor<2x?xf32, #tract.dims<[S]>> -> tensor<2xi64>
  return
}

