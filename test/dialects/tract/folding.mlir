// RUN: tract-opt %s -canonicalize -split-input-file | FileCheck %s

// Unary folders evaluate constants in the element type.
// CHECK-LABEL: func.func @unary
// CHECK-DAG: tract.const dense<[5.000000e-01, 0.7310585{{[0-9]+}}]> : tensor<2xf32>
// CHECK-DAG: tract.const dense<[2.000000e+00, 2.000000e+00, -2.000000e+00, -4.000000e+00]> : tensor<4xf32>
// CHECK-DAG: tract.const dense<[3, 4]> : tensor<2xi32>
// CHECK-DAG: tract.const dense<[254, 255]> : tensor<2xui8>
// CHECK-NOT: tract.sigmoid
// CHECK-NOT: tract.round_even
func.func @unary() -> (tensor<2xf32>, tensor<4xf32>, tensor<2xi32>, tensor<2xui8>) {
  %x = tract.const dense<[0.0, 1.0]> : tensor<2xf32>
  %0 = tract.sigmoid %x : tensor<2xf32>
  %r = tract.const dense<[1.5, 2.5, -2.5, -3.5]> : tensor<4xf32>
  %1 = tract.round_even %r : tensor<4xf32>
  %i = tract.const dense<[-3, 4]> : tensor<2xi32>
  %2 = tract.abs %i : tensor<2xi32>
  %u = tract.const dense<[1, 0]> : tensor<2xui8>
  %3 = tract.bitnot %u : tensor<2xui8>
  return %0, %1, %2, %3 : tensor<2xf32>, tensor<4xf32>, tensor<2xi32>, tensor<2xui8>
}

// -----

// Binary folders broadcast, and respect signedness.
// CHECK-LABEL: func.func @binary
// CHECK-DAG: tract.const dense<{{\[\[}}11, 21], [12, 22]]> : tensor<2x2xi64>
// CHECK-DAG: tract.const dense<[2147483647, 0]> : tensor<2xui32>
// CHECK-DAG: tract.const dense<[-2, 2]> : tensor<2xi32>
// CHECK-DAG: tract.const dense<[true, false]> : tensor<2xi1>
func.func @binary() -> (tensor<2x2xi64>, tensor<2xui32>, tensor<2xi32>, tensor<2xi1>) {
  %col = tract.const dense<[[1], [2]]> : tensor<2x1xi64>
  %row = tract.const dense<[[10, 20]]> : tensor<1x2xi64>
  %0 = tract.add %col, %row : (tensor<2x1xi64>, tensor<1x2xi64>) -> tensor<2x2xi64>
  %big = tract.const dense<[4294967294, 7]> : tensor<2xui32>
  %two = tract.const dense<[2, 8]> : tensor<2xui32>
  %1 = tract.div %big, %two : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui32>
  %neg = tract.const dense<[-7, 7]> : tensor<2xi32>
  %three = tract.const dense<3> : tensor<2xi32>
  %2 = tract.div %neg, %three : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  %nan = tract.const dense<[0x7FC00000, 1.0]> : tensor<2xf32>
  %3 = tract.ne %nan, %nan : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  return %0, %1, %2, %3 : tensor<2x2xi64>, tensor<2xui32>, tensor<2xi32>, tensor<2xi1>
}

// -----

// Division by a constant zero is a run-time matter: it is not folded.
// CHECK-LABEL: func.func @no_fold_division_by_zero
// CHECK: tract.div
func.func @no_fold_division_by_zero() -> tensor<2xi32> {
  %a = tract.const dense<[1, 2]> : tensor<2xi32>
  %z = tract.const dense<0> : tensor<2xi32>
  %0 = tract.div %a, %z : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// NaN propagates through min and max.
// CHECK-LABEL: func.func @nan_min
// CHECK: tract.const dense<[0x7FC00000, 1.000000e+00]> : tensor<2xf32>
func.func @nan_min() -> tensor<2xf32> {
  %a = tract.const dense<[0x7FC00000, 1.0]> : tensor<2xf32>
  %b = tract.const dense<[0.0, 3.0]> : tensor<2xf32>
  %0 = tract.min %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @select_and_cast
// CHECK-SAME: (%[[A:.*]]: tensor<3xf32>, %[[B:.*]]: tensor<3xf32>)
// CHECK-DAG: %[[I:.*]] = tract.const dense<[1, -2, 255]> : tensor<3xi32>
// CHECK-DAG: %[[U:.*]] = tract.const dense<[1, 254, 255]> : tensor<3xui8>
// CHECK: return %[[A]], %[[I]], %[[U]]
func.func @select_and_cast(%a: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xi32>, tensor<3xui8>) {
  %t = tract.const dense<true> : tensor<1xi1>
  %0 = tract.select %t, %a, %b : (tensor<1xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %f = tract.const dense<[1.9, -2.9, 255.5]> : tensor<3xf32>
  %1 = tract.cast %f : tensor<3xf32> to tensor<3xi32>
  %i = tract.const dense<[1, -2, -1]> : tensor<3xi32>
  %2 = tract.cast %i : tensor<3xi32> to tensor<3xui8>
  return %0, %1, %2 : tensor<3xf32>, tensor<3xi32>, tensor<3xui8>
}

// -----

// Shape and axis ops fold on constants and static shapes.
// CHECK-LABEL: func.func @shapes
// CHECK-DAG: tract.const dense<[2, 3]> : tensor<2xi64>
// CHECK-DAG: tract.const dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00]]> : tensor<1x3xf32>
// CHECK-DAG: tract.const dense<5.000000e-01> : tensor<4x3xf32>
// CHECK-NOT: tract.shape_of
// CHECK-NOT: tract.add_axis
// CHECK-NOT: tract.broadcast
func.func @shapes(%x: tensor<2x3xf32>) -> (tensor<2xi64>, tensor<1x3xf32>, tensor<4x3xf32>) {
  %0 = tract.shape_of %x : tensor<2x3xf32> -> tensor<2xi64>
  %v = tract.const dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %1 = tract.add_axis %v {axis = 0 : i64} : tensor<3xf32> -> tensor<1x3xf32>
  %h = tract.const dense<0.5> : tensor<1x3xf32>
  %2 = tract.broadcast %h {shape = #tract.shape<[4, 3]>} : tensor<1x3xf32> -> tensor<4x3xf32>
  return %0, %1, %2 : tensor<2xi64>, tensor<1x3xf32>, tensor<4x3xf32>
}

// -----

// Identity axis ops vanish; shape_of a symbolic shape stays.
// CHECK-LABEL: func.func @identities
// CHECK-SAME: (%[[X:.*]]: tensor<?x3xf32, #tract.dims<[S]>>)
// CHECK: %[[S:.*]] = tract.shape_of %[[X]]
// CHECK: return %[[X]], %[[S]]
func.func @identities(%x: tensor<?x3xf32, #tract.dims<[S]>>) -> (tensor<?x3xf32, #tract.dims<[S]>>, tensor<2xi64>) {
  %0 = tract.move_axis %x {from = 1 : i64, to = 1 : i64} : tensor<?x3xf32, #tract.dims<[S]>> -> tensor<?x3xf32, #tract.dims<[S]>>
  %1 = tract.slice %0 {axis = 1 : i64, start = #tract.dim<0>, end = #tract.dim<3>} : tensor<?x3xf32, #tract.dims<[S]>> -> tensor<?x3xf32, #tract.dims<[S]>>
  %2 = tract.concat %1 {axis = 0 : i64} : (tensor<?x3xf32, #tract.dims<[S]>>) -> tensor<?x3xf32, #tract.dims<[S]>>
  %3 = tract.shape_of %2 : tensor<?x3xf32, #tract.dims<[S]>> -> tensor<2xi64>
  return %2, %3 : tensor<?x3xf32, #tract.dims<[S]>>, tensor<2xi64>
}

// -----

// Logical ops fold element by element, not only on splats.
// CHECK-LABEL: func.func @logical
// CHECK-DAG: tract.const dense<[true, false, false, false]> : tensor<4xi1>
// CHECK-DAG: tract.const dense<[true, true, true, false]> : tensor<4xi1>
// CHECK-DAG: tract.const dense<[false, true, true, false]> : tensor<4xi1>
func.func @logical() -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %a = tract.const dense<[true, true, false, false]> : tensor<4xi1>
  %b = tract.const dense<[true, false, true, false]> : tensor<4xi1>
  %0 = tract.and %a, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %1 = tract.or %a, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %2 = tract.xor %a, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0, %1, %2 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}
