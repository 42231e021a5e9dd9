// RUN: tract-opt %s | FileCheck %s
// Round trip: the printed form parses back to the same IR, in both the
// custom and the generic syntax.
// RUN: tract-opt %s | tract-opt | FileCheck %s
// RUN: tract-opt %s --mlir-print-op-generic | tract-opt | FileCheck %s

// Einsum, convolutions, pools, reductions and normalizations: output sizes follow tract's formulas over symbolic dims.

// CHECK-LABEL: func.func @einsum
// CHECK: tract.einsum %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} {expr = "mk,kn->mn"} : (tensor<?x8xf32, #tract.dims<[M]>>, tensor<8x16xf32>) -> tensor<?x16xf32, #tract.dims<[M]>>
// CHECK: tract.einsum %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} {expr = "bhmk,bhkn->bhmn"} : (tensor<2x1x8x4xf32>, tensor<2x3x4x5xf32>) -> tensor<2x3x8x5xf32>
// CHECK: tract.einsum %{{[a-zA-Z0-9_#]+}} {expr = "mk"} : (tensor<?x8xf32, #tract.dims<[M]>>) -> tensor<8x?xf32, #tract.dims<[M]>>
// CHECK: tract.einsum %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} {expr = "mk,mk->"} : (tensor<?x8xf32, #tract.dims<[M]>>, tensor<?x8xf32, #tract.dims<[M]>>) -> tensor<f32>
func.func @einsum(%a: tensor<?x8xf32, #tract.dims<[M]>>, %b: tensor<8x16xf32>, %c: tensor<2x1x8x4xf32>, %d: tensor<2x3x4x5xf32>) {
  %0 = tract.einsum %a, %b {expr = "mk,kn->mn"} : (tensor<?x8xf32, #tract.dims<[M]>>, tensor<8x16xf32>) -> tensor<?x16xf32, #tract.dims<[M]>>
  %1 = tract.einsum %c, %d {expr = "bhmk,bhkn->bhmn"} : (tensor<2x1x8x4xf32>, tensor<2x3x4x5xf32>) -> tensor<2x3x8x5xf32>
  %2 = tract.einsum %a {expr = "mk"} : (tensor<?x8xf32, #tract.dims<[M]>>) -> tensor<8x?xf32, #tract.dims<[M]>>
  %3 = tract.einsum %a, %a {expr = "mk,mk->"} : (tensor<?x8xf32, #tract.dims<[M]>>, tensor<?x8xf32, #tract.dims<[M]>>) -> tensor<f32>
  return
}

// CHECK-LABEL: func.func @convs
// CHECK: tract.conv %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} {strides = array<i64: 2>} : (tensor<1x64x?xf32, #tract.dims<[S]>>, tensor<128x64x3xf32>, tensor<128xf32>) -> tensor<1x128x?xf32, #tract.dims<[(S-1)/2]>>
// CHECK: tract.conv %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} {group = 64 : i64, padding = #tract<padding explicit>, pads_after = array<i64: 2>, pads_before = array<i64: 2>} : (tensor<1x64x?xf32, #tract.dims<[S]>>, tensor<64x1x5xf32>) -> tensor<1x64x?xf32, #tract.dims<[S]>>
// CHECK: tract.conv %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} {padding = #tract<padding same_upper>, strides = array<i64: 2, 2>} : (tensor<1x3x224x224xf32>, tensor<32x3x3x3xf32>) -> tensor<1x32x112x112xf32>
// CHECK: tract.conv %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} {dilations = array<i64: 2>} : (tensor<1x64x?xf32, #tract.dims<[S]>>, tensor<128x64x3xf32>) -> tensor<1x128x?xf32, #tract.dims<[S-4]>>
func.func @convs(%x: tensor<1x64x?xf32, #tract.dims<[S]>>, %k: tensor<128x64x3xf32>, %bias: tensor<128xf32>, %dw: tensor<64x1x5xf32>, %img: tensor<1x3x224x224xf32>, %k2: tensor<32x3x3x3xf32>) {
  %0 = tract.conv %x, %k, %bias {strides = array<i64: 2>} : (tensor<1x64x?xf32, #tract.dims<[S]>>, tensor<128x64x3xf32>, tensor<128xf32>) -> tensor<1x128x?xf32, #tract.dims<[(S-1)/2]>>
  %1 = tract.conv %x, %dw {group = 64 : i64, padding = #tract<padding explicit>, pads_before = array<i64: 2>, pads_after = array<i64: 2>} : (tensor<1x64x?xf32, #tract.dims<[S]>>, tensor<64x1x5xf32>) -> tensor<1x64x?xf32, #tract.dims<[S]>>
  %2 = tract.conv %img, %k2 {strides = array<i64: 2, 2>, padding = #tract<padding same_upper>} : (tensor<1x3x224x224xf32>, tensor<32x3x3x3xf32>) -> tensor<1x32x112x112xf32>
  %3 = tract.conv %x, %k {dilations = array<i64: 2>} : (tensor<1x64x?xf32, #tract.dims<[S]>>, tensor<128x64x3xf32>) -> tensor<1x128x?xf32, #tract.dims<[S-4]>>
  return
}

// CHECK-LABEL: func.func @deconv
// CHECK: tract.deconv %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} {padding = #tract<padding explicit>, pads_after = array<i64: 1>, pads_before = array<i64: 1>, strides = array<i64: 2>} : (tensor<1x16x?xf32, #tract.dims<[S]>>, tensor<16x8x4xf32>) -> tensor<1x8x?xf32, #tract.dims<[2*S]>>
// CHECK: tract.deconv %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} {adjustments = array<i64: 1>, group = 2 : i64} : (tensor<1x16x?xf32, #tract.dims<[S]>>, tensor<16x8x4xf32>) -> tensor<1x16x?xf32, #tract.dims<[S+4]>>
func.func @deconv(%x: tensor<1x16x?xf32, #tract.dims<[S]>>, %k: tensor<16x8x4xf32>) {
  %0 = tract.deconv %x, %k {strides = array<i64: 2>, padding = #tract<padding explicit>, pads_before = array<i64: 1>, pads_after = array<i64: 1>} : (tensor<1x16x?xf32, #tract.dims<[S]>>, tensor<16x8x4xf32>) -> tensor<1x8x?xf32, #tract.dims<[2*S]>>
  %1 = tract.deconv %x, %k {group = 2 : i64, adjustments = array<i64: 1>} : (tensor<1x16x?xf32, #tract.dims<[S]>>, tensor<16x8x4xf32>) -> tensor<1x16x?xf32, #tract.dims<[S+4]>>
  return
}

// CHECK-LABEL: func.func @pools
// CHECK: tract.max_pool %{{[a-zA-Z0-9_#]+}} {kernel_shape = array<i64: 2>, strides = array<i64: 2>} : (tensor<1x128x?xf32, #tract.dims<[S]>>) -> tensor<1x128x?xf32, #tract.dims<[S/2]>>
// CHECK: tract.max_pool %{{[a-zA-Z0-9_#]+}} {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, with_index = true} : (tensor<1x8x7x7xf32>) -> (tensor<1x8x3x3xf32>, tensor<1x8x3x3xi64>)
// CHECK: tract.sum_pool %{{[a-zA-Z0-9_#]+}} {ceil_mode = true, kernel_shape = array<i64: 2, 2>, normalize = true, padding = #tract<padding explicit>, pads_after = array<i64: 1, 1>, pads_before = array<i64: 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x8x7x7xf32>) -> tensor<1x8x4x4xf32>
func.func @pools(%x: tensor<1x128x?xf32, #tract.dims<[S]>>, %img: tensor<1x8x7x7xf32>) {
  %0 = tract.max_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 2>} : (tensor<1x128x?xf32, #tract.dims<[S]>>) -> tensor<1x128x?xf32, #tract.dims<[S/2]>>
  %1:2 = tract.max_pool %img {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, with_index = true} : (tensor<1x8x7x7xf32>) -> (tensor<1x8x3x3xf32>, tensor<1x8x3x3xi64>)
  %2 = tract.sum_pool %img {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = #tract<padding explicit>, pads_before = array<i64: 0, 0>, pads_after = array<i64: 1, 1>, ceil_mode = true, normalize = true} : (tensor<1x8x7x7xf32>) -> tensor<1x8x4x4xf32>
  return
}

// CHECK-LABEL: func.func @reductions
// CHECK: tract.reduce  sum %{{[a-zA-Z0-9_#]+}} {axes = array<i64: 1, 2>} : tensor<2x?x8xf32, #tract.dims<[S]>> -> tensor<2x1x1xf32>
// CHECK: tract.reduce  argmax %{{[a-zA-Z0-9_#]+}} {axes = array<i64: 1>, last = true} : tensor<2x?x8xf32, #tract.dims<[S]>> -> tensor<2x1x8xi64>
// CHECK: tract.reduce  mean_of_squares %{{[a-zA-Z0-9_#]+}} {axes = array<i64: 2>} : tensor<2x?x8xf32, #tract.dims<[S]>> -> tensor<2x?x1xf32, #tract.dims<[S]>>
// CHECK: tract.reduce  any %{{[a-zA-Z0-9_#]+}} {axes = array<i64: 0>} : tensor<4x4xi1> -> tensor<1x4xi1>
// CHECK: tract.softmax %{{[a-zA-Z0-9_#]+}} {axes = array<i64: 2>} : tensor<2x?x8xf32, #tract.dims<[S]>> -> tensor<2x?x8xf32, #tract.dims<[S]>>
// CHECK: tract.log_softmax %{{[a-zA-Z0-9_#]+}} {axes = array<i64: 1>} : tensor<2x?x8xf32, #tract.dims<[S]>> -> tensor<2x?x8xf32, #tract.dims<[S]>>
// CHECK: tract.rms_norm %{{[a-zA-Z0-9_#]+}} {axis = 2 : i64, eps = 1.000000e-05 : f64} : tensor<2x?x8xf32, #tract.dims<[S]>> -> tensor<2x?x8xf32, #tract.dims<[S]>>
// CHECK: tract.resize %{{[a-zA-Z0-9_#]+}} {coord_transform = #tract<coord_transform align_corners>, interpolator = #tract<interpolator linear>, sizes = #tract.shape<[2, 2*S, 16]>} : tensor<2x?x8xf32, #tract.dims<[S]>> -> tensor<2x?x16xf32, #tract.dims<[2*S]>>
// CHECK: tract.resize %{{[a-zA-Z0-9_#]+}} {cubic_coeff_a = -5.000000e-01 : f64, exclude_outside = true, interpolator = #tract<interpolator cubic>, scales = array<f64: 1.000000e+00, 6.000000e-01, 6.000000e-01>, sizes = #tract.shape<[2, (3*S)/5, 4]>} : tensor<2x?x8xf32, #tract.dims<[S]>> -> tensor<2x?x4xf32, #tract.dims<[(3*S)/5]>>
// CHECK: tract.resize %{{[a-zA-Z0-9_#]+}} {coord_transform = #tract<coord_transform tf_crop_and_resize>, extrapolation_value = 1.000000e+01 : f64, interpolator = #tract<interpolator linear>, roi = array<f64: 0.000000e+00, 0.000000e+00, 2.500000e-01, 1.000000e+00, 1.000000e+00, 7.500000e-01>, sizes = #tract.shape<[2, S, 3]>} : tensor<2x?x8xf32, #tract.dims<[S]>> -> tensor<2x?x3xf32, #tract.dims<[S]>>
func.func @reductions(%x: tensor<2x?x8xf32, #tract.dims<[S]>>, %b: tensor<4x4xi1>) {
  %0 = tract.reduce sum %x {axes = array<i64: 1, 2>} : tensor<2x?x8xf32, #tract.dims<[S]>> -> tensor<2x1x1xf32>
  %1 = tract.reduce argmax %x {axes = array<i64: 1>, last = true} : tensor<2x?x8xf32, #tract.dims<[S]>> -> tensor<2x1x8xi64>
  %2 = tract.reduce mean_of_squares %x {axes = array<i64: 2>} : tensor<2x?x8xf32, #tract.dims<[S]>> -> tensor<2x?x1xf32, #tract.dims<[S]>>
  %3 = tract.reduce any %b {axes = array<i64: 0>} : tensor<4x4xi1> -> tensor<1x4xi1>
  %4 = tract.softmax %x {axes = array<i64: 2>} : tensor<2x?x8xf32, #tract.dims<[S]>> -> tensor<2x?x8xf32, #tract.dims<[S]>>
  %5 = tract.log_softmax %x {axes = array<i64: 1>} : tensor<2x?x8xf32, #tract.dims<[S]>> -> tensor<2x?x8xf32, #tract.dims<[S]>>
  %6 = tract.rms_norm %x {axis = 2 : i64, eps = 1.0e-5 : f64} : tensor<2x?x8xf32, #tract.dims<[S]>> -> tensor<2x?x8xf32, #tract.dims<[S]>>
  %7 = tract.resize %x {sizes = #tract.shape<[2, 2*S, 16]>, interpolator = #tract<interpolator linear>, coord_transform = #tract<coord_transform align_corners>} : tensor<2x?x8xf32, #tract.dims<[S]>> -> tensor<2x?x16xf32, #tract.dims<[2*S]>>
  %8 = tract.resize %x {sizes = #tract.shape<[2, (3*S)/5, 4]>, scales = array<f64: 1.0, 0.6, 0.6>, interpolator = #tract<interpolator cubic>, cubic_coeff_a = -0.5 : f64, exclude_outside = true} : tensor<2x?x8xf32, #tract.dims<[S]>> -> tensor<2x?x4xf32, #tract.dims<[(3*S)/5]>>
  %9 = tract.resize %x {sizes = #tract.shape<[2, S, 3]>, interpolator = #tract<interpolator linear>, coord_transform = #tract<coord_transform tf_crop_and_resize>, roi = array<f64: 0.0, 0.0, 0.25, 1.0, 1.0, 0.75>, extrapolation_value = 10.0 : f64} : tensor<2x?x8xf32, #tract.dims<[S]>> -> tensor<2x?x3xf32, #tract.dims<[S]>>
  return
}

