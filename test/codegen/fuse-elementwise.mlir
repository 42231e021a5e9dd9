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

// -----

// A squeeze-and-excitation's scale: the sigmoid of one value per channel,
// broadcast over the map. Fused, its exponential would run at every pixel:
// it stays a loop of its own over the channels. The shift added to those
// values is cheap, and fuses into the sigmoid.
// CHECK-LABEL: func.func @excitation(
// CHECK:         %[[GATE:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<8xf32>)
// CHECK:           arith.addf
// CHECK:           math.exp
// CHECK:         linalg.generic {{.*}} ins(%[[GATE]], %{{.*}} : tensor<8xf32>, tensor<16x8xf32>)
// CHECK-NOT:       math.exp
// CHECK:           arith.mulf
// CHECK-NEXT:      linalg.yield
#channel = affine_map<(d0, d1) -> (d1)>
#map = affine_map<(d0, d1) -> (d0, d1)>
#one = affine_map<(d0) -> (d0)>
func.func @excitation(%s: tensor<8xf32>, %x: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %e8 = tensor.empty() : tensor<8xf32>
  %shift = linalg.generic {indexing_maps = [#one, #one], iterator_types = ["parallel"]}
    ins(%s : tensor<8xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%p: f32, %o: f32):
    %c = arith.constant 3.0 : f32
    %a = arith.addf %p, %c : f32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  %gate = linalg.generic {indexing_maps = [#one, #one], iterator_types = ["parallel"]}
    ins(%shift : tensor<8xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%p: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %n = arith.negf %p : f32
    %x1 = math.exp %n : f32
    %d = arith.addf %x1, %one : f32
    %g = arith.divf %one, %d : f32
    linalg.yield %g : f32
  } -> tensor<8xf32>
  %e = tensor.empty() : tensor<16x8xf32>
  %r = linalg.generic {indexing_maps = [#channel, #map, #map], iterator_types = ["parallel", "parallel"]}
    ins(%gate, %x : tensor<8xf32>, tensor<16x8xf32>) outs(%e : tensor<16x8xf32>) {
  ^bb0(%g: f32, %p: f32, %o: f32):
    %m = arith.mulf %g, %p : f32
    linalg.yield %m : f32
  } -> tensor<16x8xf32>
  return %r : tensor<16x8xf32>
}
