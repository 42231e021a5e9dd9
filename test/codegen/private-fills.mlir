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
