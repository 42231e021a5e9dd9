// RUN: tract-opt %s -tract-concat-in-place -split-input-file | FileCheck %s

// Two producers concatenated along the channels: the concatenation is one
// empty tensor made first; the first producer writes into its slice of it
// and is inserted back right after; the second writes into its slice of
// that insertion. The input that comes from no empty tensor (an argument)
// is inserted as it is.
// CHECK-LABEL: func.func @fire
// CHECK-SAME:  (%[[X:.*]]: tensor<1x4x4x8xf32>, %[[Y:.*]]: tensor<1x4x4x2xf32>)
// CHECK-NEXT:    %[[ALL:.*]] = tensor.empty() : tensor<1x4x4x18xf32>
// CHECK:         %[[S0:.*]] = tensor.extract_slice %[[ALL]][0, 0, 0, 0] [1, 4, 4, 8] [1, 1, 1, 1]
// CHECK-NEXT:    %[[A:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<1x4x4x8xf32>) outs(%[[S0]] : tensor<1x4x4x8xf32>)
// CHECK:         %[[I0:.*]] = tensor.insert_slice %[[A]] into %[[ALL]][0, 0, 0, 0] [1, 4, 4, 8] [1, 1, 1, 1]
// CHECK:         %[[S1:.*]] = tensor.extract_slice %[[I0]][0, 0, 0, 8] [1, 4, 4, 8] [1, 1, 1, 1]
// CHECK-NEXT:    %[[B:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<1x4x4x8xf32>) outs(%[[S1]] : tensor<1x4x4x8xf32>)
// CHECK:         %[[I1:.*]] = tensor.insert_slice %[[B]] into %[[I0]][0, 0, 0, 8] [1, 4, 4, 8] [1, 1, 1, 1]
// CHECK-NEXT:    %[[I2:.*]] = tensor.insert_slice %[[Y]] into %[[I1]][0, 0, 0, 16] [1, 4, 4, 2] [1, 1, 1, 1]
// CHECK-NEXT:    return %[[I2]]
// CHECK-NOT:   tensor.concat
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @fire(%x: tensor<1x4x4x8xf32>, %y: tensor<1x4x4x2xf32>) -> tensor<1x4x4x18xf32> {
  %e = tensor.empty() : tensor<1x4x4x8xf32>
  %cst = arith.constant 0.0 : f32
  %a = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x4x4x8xf32>) outs(%e : tensor<1x4x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %cst : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x8xf32>
  %b = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x4x4x8xf32>) outs(%e : tensor<1x4x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.minimumf %in, %cst : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x8xf32>
  %c = tensor.concat dim(3) %a, %b, %y : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x18xf32>
  return %c : tensor<1x4x4x18xf32>
}

// -----

// Through a product and a reshape: the root is the empty tensor under the
// fill and the collapse, of the input's own type.
// CHECK-LABEL: func.func @through_reshape
// CHECK:         %[[ALL:.*]] = tensor.empty() : tensor<2x3x8xf32>
// CHECK:         %[[S0:.*]] = tensor.extract_slice %[[ALL]][0, 0, 0] [2, 3, 4] [1, 1, 1]
// CHECK-NEXT:    %[[FLAT:.*]] = tensor.collapse_shape %[[S0]] {{\[}}[0, 1], [2]]
// CHECK-NEXT:    linalg.fill ins(%{{.*}} : f32) outs(%[[FLAT]] : tensor<6x4xf32>)
// CHECK-NOT:   tensor.concat
func.func @through_reshape(%x: tensor<6x5xf32>, %w: tensor<5x4xf32>, %y: tensor<2x3x4xf32>) -> tensor<2x3x8xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x4xf32>
  %flat = tensor.collapse_shape %e [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  %zero = linalg.fill ins(%cst : f32) outs(%flat : tensor<6x4xf32>) -> tensor<6x4xf32>
  %p = linalg.matmul ins(%x, %w : tensor<6x5xf32>, tensor<5x4xf32>) outs(%zero : tensor<6x4xf32>) -> tensor<6x4xf32>
  %r = tensor.expand_shape %p [[0, 1], [2]] output_shape [2, 3, 4] : tensor<6x4xf32> into tensor<2x3x4xf32>
  %c = tensor.concat dim(2) %r, %y : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x8xf32>
  return %c : tensor<2x3x8xf32>
}

// -----

// No input computed in place: the concatenation stays.
// CHECK-LABEL: func.func @arguments
// CHECK:         tensor.concat
func.func @arguments(%x: tensor<2x3xf32>, %y: tensor<2x5xf32>) -> tensor<2x8xf32> {
  %c = tensor.concat dim(1) %x, %y : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  return %c : tensor<2x8xf32>
}

// -----

// A collapse that merges the concatenated dim with another: the slice of
// the concatenation would not collapse in place. The producer keeps its
// empty tensor, and the concatenation copies it.
// CHECK-LABEL: func.func @merged_dim
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x3x4xf32>
// CHECK-NEXT:    tensor.collapse_shape %[[E]]
// CHECK:         tensor.concat
func.func @merged_dim(%x: tensor<2x5xf32>, %w: tensor<5x12xf32>, %y: tensor<2x3x4xf32>) -> tensor<2x3x8xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x4xf32>
  %flat = tensor.collapse_shape %e [[0], [1, 2]] : tensor<2x3x4xf32> into tensor<2x12xf32>
  %zero = linalg.fill ins(%cst : f32) outs(%flat : tensor<2x12xf32>) -> tensor<2x12xf32>
  %p = linalg.matmul ins(%x, %w : tensor<2x5xf32>, tensor<5x12xf32>) outs(%zero : tensor<2x12xf32>) -> tensor<2x12xf32>
  %r = tensor.expand_shape %p [[0], [1, 2]] output_shape [2, 3, 4] : tensor<2x12xf32> into tensor<2x3x4xf32>
  %c = tensor.concat dim(2) %r, %y : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x8xf32>
  return %c : tensor<2x3x8xf32>
}

// -----

// A dense block: the inputs of the second concatenation begin with those of
// the first. The first is the slice of the second's buffer that holds its
// inputs, taken once they are inserted; each producer writes once, into
// the longest concatenation.
// CHECK-LABEL: func.func @dense
// CHECK-SAME:  (%[[X:.*]]: tensor<1x2x2x4xf32>)
// CHECK-NEXT:    %[[ALL:.*]] = tensor.empty() : tensor<1x2x2x12xf32>
// CHECK-NEXT:    %[[I0:.*]] = tensor.insert_slice %[[X]] into %[[ALL]][0, 0, 0, 0] [1, 2, 2, 4] [1, 1, 1, 1]
// CHECK:         %[[S1:.*]] = tensor.extract_slice %[[I0]][0, 0, 0, 4] [1, 2, 2, 4] [1, 1, 1, 1]
// CHECK-NEXT:    %[[A:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<1x2x2x4xf32>) outs(%[[S1]] : tensor<1x2x2x4xf32>)
// CHECK:         %[[I1:.*]] = tensor.insert_slice %[[A]] into %[[I0]][0, 0, 0, 4] [1, 2, 2, 4] [1, 1, 1, 1]
// CHECK:         %[[FIRST:.*]] = tensor.extract_slice %[[I1]][0, 0, 0, 0] [1, 2, 2, 8] [1, 1, 1, 1]
// CHECK:         %[[U:.*]] = linalg.generic {{.*}} ins(%[[FIRST]] : tensor<1x2x2x8xf32>)
// CHECK:         %[[S2:.*]] = tensor.extract_slice %[[I1]][0, 0, 0, 8] [1, 2, 2, 4] [1, 1, 1, 1]
// CHECK-NEXT:    %[[B:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<1x2x2x4xf32>) outs(%[[S2]] : tensor<1x2x2x4xf32>)
// CHECK:         %[[I2:.*]] = tensor.insert_slice %[[B]] into %[[I1]][0, 0, 0, 8] [1, 2, 2, 4] [1, 1, 1, 1]
// CHECK-NEXT:    return %[[U]], %[[I2]]
// CHECK-NOT:   tensor.concat
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @dense(%x: tensor<1x2x2x4xf32>) -> (tensor<1x2x2x8xf32>, tensor<1x2x2x12xf32>) {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x2x4xf32>
  %a = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x2x2x4xf32>) outs(%e : tensor<1x2x2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %cst : f32
    linalg.yield %m : f32
  } -> tensor<1x2x2x4xf32>
  %first = tensor.concat dim(3) %x, %a : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x8xf32>
  %e8 = tensor.empty() : tensor<1x2x2x8xf32>
  %u = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%first : tensor<1x2x2x8xf32>) outs(%e8 : tensor<1x2x2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %cst : f32
    linalg.yield %m : f32
  } -> tensor<1x2x2x8xf32>
  %b = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x2x2x4xf32>) outs(%e : tensor<1x2x2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.minimumf %in, %cst : f32
    linalg.yield %m : f32
  } -> tensor<1x2x2x4xf32>
  %all = tensor.concat dim(3) %x, %a, %b : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x12xf32>
  return %u, %all : tensor<1x2x2x8xf32>, tensor<1x2x2x12xf32>
}
