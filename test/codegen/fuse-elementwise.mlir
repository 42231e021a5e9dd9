// RUN: tract-opt --tract-fuse-elementwise --split-input-file %s | FileCheck %s

// add → max → mul, each with one user: one loop nest computes all three.
// CHECK-LABEL: func.func @chain(
// CHECK:         linalg.generic
// CHECK:           arith.addf
// CHECK-NEXT:      arith.maximumf
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      linalg.yield
// CHECK-NOT:     linalg.generic
#id = affine_map<(d0) -> (d0)>
func.func @chain(%x: tensor<64xf32>, %y: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
    ins(%x, %y : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
    ins(%a : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%p: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %s = arith.maximumf %p, %z : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
    ins(%m, %x : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.mulf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

// An activation feeding a matrix product stays apart: fused, it would be
// recomputed for every row of the product.
// CHECK-LABEL: func.func @into_contraction(
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK:           arith.maximumf
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-NOT:       arith.maximumf
#a2 = affine_map<(i, j) -> (i, j)>
#mA = affine_map<(m, n, k) -> (m, k)>
#mB = affine_map<(m, n, k) -> (k, n)>
#mC = affine_map<(m, n, k) -> (m, n)>
func.func @into_contraction(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %c: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#a2, #a2], iterator_types = ["parallel", "parallel"]}
    ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %s = arith.maximumf %p, %z : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %m = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
    ins(%r, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %m : tensor<4x16xf32>
}

// -----

// A value with two users is computed once, not fused into both.
// CHECK-LABEL: func.func @two_users(
// CHECK-COUNT-3: linalg.generic
#id1 = affine_map<(d0) -> (d0)>
func.func @two_users(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %e = tensor.empty() : tensor<64xf32>
  %a = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
    ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = math.exp %p : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %b = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
    ins(%a : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = arith.negf %p : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %c = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
    ins(%a : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = arith.mulf %p, %p : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %b, %c : tensor<64xf32>, tensor<64xf32>
}
