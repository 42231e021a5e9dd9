// RUN: tract-opt %s -tract-private-fills -split-input-file | FileCheck %s

// One zero fill (CSE merged them) that two products accumulate into, and
// that a third op reads: each product gets a fill of its own on an empty
// tensor of its own, right before it; the reader keeps the first.
// CHECK-LABEL: func.func @shared_zeros
// CHECK:         %[[ZEROS:.*]] = linalg.fill ins(%[[C:.*]] : f32) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK:         %[[E1:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT:    %[[F1:.*]] = linalg.fill ins(%[[C]] : f32) outs(%[[E1]] : tensor<4x8xf32>)
// CHECK-NEXT:    %[[P1:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<3x8xf32>) outs(%[[F1]] : tensor<4x8xf32>)
// CHECK:         %[[E2:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT:    %[[F2:.*]] = linalg.fill ins(%[[C]] : f32) outs(%[[E2]] : tensor<4x8xf32>)
// CHECK-NEXT:    %[[P2:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<3x8xf32>) outs(%[[F2]] : tensor<4x8xf32>)
// CHECK:         tensor.insert_slice %[[ZEROS]]
func.func @shared_zeros(%a: tensor<4x3xf32>, %b: tensor<3x8xf32>, %c: tensor<3x8xf32>, %d: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p1 = linalg.matmul ins(%a, %b : tensor<4x3xf32>, tensor<3x8xf32>) outs(%zeros : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p2 = linalg.matmul ins(%a, %c : tensor<4x3xf32>, tensor<3x8xf32>) outs(%zeros : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = tensor.insert_slice %zeros into %d[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<8x8xf32>
  return %p1, %p2, %r : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x8xf32>
}

// -----

// Only products use it: the first keeps it.
// CHECK-LABEL: func.func @products_only
// CHECK:         %[[ZEROS:.*]] = linalg.fill
// CHECK-NEXT:    linalg.matmul {{.*}} outs(%[[ZEROS]] : tensor<4x8xf32>)
// CHECK-NEXT:    tensor.empty
// CHECK-NEXT:    %[[F2:.*]] = linalg.fill
// CHECK-NEXT:    linalg.matmul {{.*}} outs(%[[F2]] : tensor<4x8xf32>)
func.func @products_only(%a: tensor<4x3xf32>, %b: tensor<3x8xf32>, %c: tensor<3x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p1 = linalg.matmul ins(%a, %b : tensor<4x3xf32>, tensor<3x8xf32>) outs(%zeros : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p2 = linalg.matmul ins(%a, %c : tensor<4x3xf32>, tensor<3x8xf32>) outs(%zeros : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %p1, %p2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// One bias broadcast (CSE merged two equal ones) that two products
// accumulate into: the second gets a broadcast of its own, on an empty
// tensor of its own (bufferized, it was a copy of the whole first one).
// CHECK-LABEL: func.func @shared_bias
// CHECK:         %[[B1:.*]] = linalg.broadcast ins(%[[BIAS:.*]] : tensor<8xf32>)
// CHECK-NEXT:    linalg.matmul {{.*}} outs(%[[B1]] : tensor<4x8xf32>)
// CHECK-NEXT:    %[[E2:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT:    %[[B2:.*]] = linalg.broadcast ins(%[[BIAS]] : tensor<8xf32>) outs(%[[E2]] : tensor<4x8xf32>)
// CHECK-NEXT:    linalg.matmul {{.*}} outs(%[[B2]] : tensor<4x8xf32>)
func.func @shared_bias(%a: tensor<4x3xf32>, %b: tensor<3x8xf32>, %c: tensor<3x8xf32>, %bias: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.broadcast ins(%bias : tensor<8xf32>) outs(%e : tensor<4x8xf32>) dimensions = [0]
  %p1 = linalg.matmul ins(%a, %b : tensor<4x3xf32>, tensor<3x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p2 = linalg.matmul ins(%a, %c : tensor<4x3xf32>, tensor<3x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %p1, %p2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// One empty tensor (CSE merged them) that an activation writes, then a
// product's zeros (through a reshape), then the activation of the
// product: each writer after the first gets an empty tensor of its own,
// so that the last activation does not write into the buffer of the
// first, which the product reads, and can run on the product's tiles.
// CHECK-LABEL: func.func @shared_empty
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x2x8xf32>
// CHECK:         %[[R1:.*]] = linalg.generic {{.*}} outs(%[[E]] : tensor<2x2x8xf32>)
// CHECK:         %[[E2:.*]] = tensor.empty() : tensor<2x2x8xf32>
// CHECK-NEXT:    %[[C:.*]] = tensor.collapse_shape %[[E2]]
// CHECK-NEXT:    %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[C]] : tensor<4x8xf32>)
// CHECK:         %[[P:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x8xf32>) outs(%[[Z]] : tensor<4x8xf32>)
// CHECK:         %[[E3:.*]] = tensor.empty() : tensor<2x2x8xf32>
// CHECK-NEXT:    linalg.generic {{.*}} outs(%[[E3]] : tensor<2x2x8xf32>)
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @shared_empty(%x: tensor<2x2x8xf32>, %w: tensor<8x8xf32>) -> tensor<2x2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2x8xf32>
  %r1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<2x2x8xf32>) outs(%e : tensor<2x2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x2x8xf32>
  %rows = tensor.collapse_shape %r1 [[0, 1], [2]] : tensor<2x2x8xf32> into tensor<4x8xf32>
  %c = tensor.collapse_shape %e [[0, 1], [2]] : tensor<2x2x8xf32> into tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%c : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = linalg.matmul ins(%rows, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %pe = tensor.expand_shape %p [[0, 1], [2]] output_shape [2, 2, 8] : tensor<4x8xf32> into tensor<2x2x8xf32>
  %r2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pe : tensor<2x2x8xf32>) outs(%e : tensor<2x2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x2x8xf32>
  return %r2 : tensor<2x2x8xf32>
}

// -----

// An empty tensor that only slices are inserted into (two
// concatenations that start from it) is left as it is.
// CHECK-LABEL: func.func @slices_only
// CHECK-COUNT-1: tensor.empty
// CHECK-NOT:     tensor.empty
func.func @slices_only(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %e = tensor.empty() : tensor<2x8xf32>
  %s1 = tensor.insert_slice %a into %e[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x8xf32>
  %s2 = tensor.insert_slice %b into %s1[0, 4] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x8xf32>
  %t1 = tensor.insert_slice %b into %e[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x8xf32>
  %t2 = tensor.insert_slice %a into %t1[0, 4] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x8xf32>
  return %s2, %t2 : tensor<2x8xf32>, tensor<2x8xf32>
}
