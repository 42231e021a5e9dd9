// RUN: tract-opt %s -canonicalize -split-input-file | FileCheck %s

// Dense transposes, broadcasts and tiles fold element by element.
// CHECK-LABEL: func.func @movement
// CHECK-DAG: tract.const dense<{{\[\[}}1, 4], [2, 5], [3, 6]]> : tensor<3x2xi64>
// CHECK-DAG: tract.const dense<{{\[\[}}1, 1, 1], [2, 2, 2]]> : tensor<2x3xi64>
// CHECK-DAG: tract.const dense<{{\[\[}}1, 2, 1, 2]]> : tensor<1x4xi64>
// CHECK-NOT: tract.move_axis
// CHECK-NOT: tract.broadcast
// CHECK-NOT: tract.tile
func.func @movement() -> (tensor<3x2xi64>, tensor<2x3xi64>, tensor<1x4xi64>) {
  %m = tract.const dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %0 = tract.move_axis %m {from = 1 : i64, to = 0 : i64} : tensor<2x3xi64> -> tensor<3x2xi64>
  %c = tract.const dense<[[1], [2]]> : tensor<2x1xi64>
  %1 = tract.broadcast %c {shape = #tract.shape<[2, 3]>} : tensor<2x1xi64> -> tensor<2x3xi64>
  %r = tract.const dense<[[1, 2]]> : tensor<1x2xi64>
  %2 = tract.tile %r {multipliers = #tract.shape<[1, 2]>} : tensor<1x2xi64> -> tensor<1x4xi64>
  return %0, %1, %2 : tensor<3x2xi64>, tensor<2x3xi64>, tensor<1x4xi64>
}

// -----

// A 3-D move folds through the inverse permutation.
// CHECK-LABEL: func.func @move_3d
// CHECK: tract.const dense<{{\[\[\[}}0, 2], [4, 6]], {{\[\[}}1, 3], [5, 7]]]> : tensor<2x2x2xi32>
func.func @move_3d() -> tensor<2x2x2xi32> {
  %m = tract.const dense<[[[0, 1], [2, 3]], [[4, 5], [6, 7]]]> : tensor<2x2x2xi32>
  %0 = tract.move_axis %m {from = 2 : i64, to = 0 : i64} : tensor<2x2x2xi32> -> tensor<2x2x2xi32>
  return %0 : tensor<2x2x2xi32>
}

// -----

// Slices and concatenations of shape vectors fold: ONNX shape subgraphs.
// CHECK-LABEL: func.func @slice_concat
// CHECK-DAG: tract.const dense<[3, 4]> : tensor<2xi64>
// CHECK-DAG: tract.const dense<[1, 2, 3, 4, 5]> : tensor<5xi64>
// CHECK-DAG: tract.const dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-DAG: tract.const dense<[1, 3]> : tensor<2xi64>
// CHECK-NOT: tract.slice
// CHECK-NOT: tract.concat
// CHECK-NOT: tract.downsample
func.func @slice_concat() -> (tensor<2xi64>, tensor<5xi64>, tensor<3x2xf32>, tensor<2xi64>) {
  %s = tract.const dense<[1, 2, 3, 4]> : tensor<4xi64>
  %0 = tract.slice %s {axis = 0 : i64, start = #tract.dim<2>, end = #tract.dim<4>} : tensor<4xi64> -> tensor<2xi64>
  %five = tract.const dense<5> : tensor<1xi64>
  %1 = tract.concat %s, %five {axis = 0 : i64} : (tensor<4xi64>, tensor<1xi64>) -> tensor<5xi64>
  %a = tract.const dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  %b = tract.const dense<[[3.0, 4.0], [5.0, 6.0]]> : tensor<2x2xf32>
  %2 = tract.concat %a, %b {axis = 0 : i64} : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %3 = tract.downsample %s {axis = 0 : i64, stride = 2 : i64} : tensor<4xi64> -> tensor<2xi64>
  return %0, %1, %2, %3 : tensor<2xi64>, tensor<5xi64>, tensor<3x2xf32>, tensor<2xi64>
}

// -----

// Concatenation along an inner axis interleaves the inputs' rows.
// CHECK-LABEL: func.func @concat_inner
// CHECK: tract.const dense<{{\[\[}}1, 2, 9], [3, 4, 9]]> : tensor<2x3xi8>
func.func @concat_inner() -> tensor<2x3xi8> {
  %a = tract.const dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>
  %b = tract.const dense<9> : tensor<2x1xi8>
  %0 = tract.concat %a, %b {axis = 1 : i64} : (tensor<2x2xi8>, tensor<2x1xi8>) -> tensor<2x3xi8>
  return %0 : tensor<2x3xi8>
}

// -----

// Gathers fold with negative indices; an index out of range does not fold.
// CHECK-LABEL: func.func @gather
// CHECK-DAG: tract.const dense<[4, 1]> : tensor<2xi64>
// CHECK-DAG: tract.const dense<{{\[\[}}2, 1], [3, 3]]> : tensor<2x2xi64>
// CHECK-DAG: tract.const dense<{{\[\[}}1, 4], [1, 4]]> : tensor<2x2xi64>
// CHECK: tract.gather %{{.*}}, %{{.*}} {axis = 0 : i64}
// CHECK-NOT: tract.gather
// CHECK-NOT: tract.gather_elements
func.func @gather() -> (tensor<2xi64>, tensor<2x2xi64>, tensor<2x2xi64>, tensor<i64>) {
  %s = tract.const dense<[1, 2, 3, 4]> : tensor<4xi64>
  %i = tract.const dense<[-1, 0]> : tensor<2xi32>
  %0 = tract.gather %s, %i {axis = 0 : i64} : (tensor<4xi64>, tensor<2xi32>) -> tensor<2xi64>
  %ii = tract.const dense<[[1, 0], [2, 2]]> : tensor<2x2xi64>
  %1 = tract.gather %s, %ii {axis = 0 : i64} : (tensor<4xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>
  %m = tract.const dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %e = tract.const dense<[[0, 1], [0, 1]]> : tensor<2x2xi64>
  %2 = tract.gather_elements %m, %e {axis = 0 : i64} : (tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>
  %bad = tract.const dense<4> : tensor<i64>
  %3 = tract.gather %s, %bad {axis = 0 : i64} : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  return %0, %1, %2, %3 : tensor<2xi64>, tensor<2x2xi64>, tensor<2x2xi64>, tensor<i64>
}

// -----

// Pads fold in every mode.
// CHECK-LABEL: func.func @pad
// CHECK-DAG: tract.const dense<[7, 1, 2, 3, 7, 7]> : tensor<6xi32>
// CHECK-DAG: tract.const dense<[2, 1, 2, 3, 2, 1]> : tensor<6xi32>
// CHECK-DAG: tract.const dense<[1, 1, 2, 3, 3, 3]> : tensor<6xi32>
// CHECK-NOT: tract.pad
func.func @pad() -> (tensor<6xi32>, tensor<6xi32>, tensor<6xi32>) {
  %x = tract.const dense<[1, 2, 3]> : tensor<3xi32>
  %0 = tract.pad %x {before = array<i64: 1>, after = array<i64: 2>, value = 7 : i32} : tensor<3xi32> -> tensor<6xi32>
  %1 = tract.pad %x {before = array<i64: 1>, after = array<i64: 2>, mode = #tract<pad_mode reflect>} : tensor<3xi32> -> tensor<6xi32>
  %2 = tract.pad %x {before = array<i64: 1>, after = array<i64: 2>, mode = #tract<pad_mode edge>} : tensor<3xi32> -> tensor<6xi32>
  return %0, %1, %2 : tensor<6xi32>, tensor<6xi32>, tensor<6xi32>
}

// -----

// Reductions fold: the product of a shape, NaN-propagating max, argmax with
// ties, booleans.
// CHECK-LABEL: func.func @reduce
// CHECK-DAG: tract.const dense<24> : tensor<1xi64>
// CHECK-DAG: tract.const dense<{{\[\[}}4.000000e+00], [0x7FC00000]]> : tensor<2x1xf32>
// CHECK-DAG: tract.const dense<{{\[\[}}1], [0]]> : tensor<2x1xi64>
// CHECK-DAG: tract.const dense<{{\[\[}}0], [1]]> : tensor<2x1xi64>
// CHECK-DAG: tract.const dense<{{\[\[}}false], [true]]> : tensor<2x1xi1>
// CHECK-DAG: tract.const dense<5.000000e+00> : tensor<1x1xf32>
// CHECK-NOT: tract.reduce
func.func @reduce() -> (tensor<1xi64>, tensor<2x1xf32>, tensor<2x1xi64>, tensor<2x1xi64>, tensor<2x1xi1>, tensor<1x1xf32>) {
  %s = tract.const dense<[1, 2, 3, 4]> : tensor<4xi64>
  %0 = tract.reduce prod %s {axes = array<i64: 0>} : tensor<4xi64> -> tensor<1xi64>
  %f = tract.const dense<[[1.0, 4.0], [0x7FC00000, 2.0]]> : tensor<2x2xf32>
  %1 = tract.reduce max %f {axes = array<i64: 1>} : tensor<2x2xf32> -> tensor<2x1xf32>
  %t = tract.const dense<[[1, 3], [2, 2]]> : tensor<2x2xi32>
  %2 = tract.reduce argmax %t {axes = array<i64: 1>} : tensor<2x2xi32> -> tensor<2x1xi64>
  %3 = tract.reduce argmin %t {axes = array<i64: 1>, last = true} : tensor<2x2xi32> -> tensor<2x1xi64>
  %b = tract.const dense<[[true, false], [true, true]]> : tensor<2x2xi1>
  %4 = tract.reduce all %b {axes = array<i64: 1>} : tensor<2x2xi1> -> tensor<2x1xi1>
  %q = tract.const dense<[[1.0, 3.0], [-1.0, 3.0]]> : tensor<2x2xf32>
  %5 = tract.reduce mean_of_squares %q {axes = array<i64: 0, 1>} : tensor<2x2xf32> -> tensor<1x1xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<1xi64>, tensor<2x1xf32>, tensor<2x1xi64>, tensor<2x1xi64>, tensor<2x1xi1>, tensor<1x1xf32>
}

// -----

// Einsum folds matrix products, broadcasting and diagonals.
// CHECK-LABEL: func.func @einsum
// CHECK-DAG: tract.const dense<{{\[\[}}19, 22], [43, 50]]> : tensor<2x2xi32>
// CHECK-DAG: tract.const dense<[1.000000e+00, 4.000000e+00]> : tensor<2xf32>
// CHECK-DAG: tract.const dense<5.000000e+00> : tensor<f32>
// CHECK-NOT: tract.einsum
func.func @einsum() -> (tensor<2x2xi32>, tensor<2xf32>, tensor<f32>) {
  %a = tract.const dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %b = tract.const dense<[[5, 6], [7, 8]]> : tensor<2x2xi32>
  %0 = tract.einsum %a, %b {expr = "mk,kn->mn"} : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi32>
  %m = tract.const dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %1 = tract.einsum %m {expr = "ii->i"} : (tensor<2x2xf32>) -> tensor<2xf32>
  %2 = tract.einsum %m {expr = "ii"} : (tensor<2x2xf32>) -> tensor<f32>
  return %0, %1, %2 : tensor<2x2xi32>, tensor<2xf32>, tensor<f32>
}

// -----

// Ranges and one-hot encodings of constants fold.
// CHECK-LABEL: func.func @range_one_hot
// CHECK-DAG: tract.const dense<[1, 4, 7]> : tensor<3xi64>
// CHECK-DAG: tract.const dense<[5.000000e-01, 1.000000e+00]> : tensor<2xf32>
// CHECK-DAG: tract.const dense<{{\[\[}}0.000000e+00, 0.000000e+00], [1.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00]]> : tensor<3x2xf32>
// CHECK-NOT: tract.range
// CHECK-NOT: tract.one_hot
func.func @range_one_hot() -> (tensor<3xi64>, tensor<2xf32>, tensor<3x2xf32>) {
  %start = tract.const dense<1> : tensor<i64>
  %end = tract.const dense<8> : tensor<i64>
  %step = tract.const dense<3> : tensor<i64>
  %0 = tract.range %start, %end, %step {len = #tract.dim<3>} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<3xi64>
  %fs = tract.const dense<0.5> : tensor<f32>
  %fe = tract.const dense<1.2> : tensor<f32>
  %1 = tract.range %fs, %fe, %fs {len = #tract.dim<2>} : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<2xf32>
  %i = tract.const dense<[1, -1]> : tensor<2xi64>
  %2 = tract.one_hot %i {axis = 0 : i64, dim = 3 : i64, off = 0.0 : f32, on = 1.0 : f32} : tensor<2xi64> -> tensor<3x2xf32>
  return %0, %1, %2 : tensor<3xi64>, tensor<2xf32>, tensor<3x2xf32>
}
