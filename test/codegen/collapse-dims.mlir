// RUN: tract-opt --tract-collapse-dims --split-input-file %s | FileCheck %s

// A 1×1 convolution as an einsum over (n, f, h, w, c): h and w are read
// together, in order, by the input and the output, so they become one dim
// of 49 columns. n and f do not (the input has no f).
// CHECK-DAG:   #[[X:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG:   #[[K:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-DAG:   #[[O:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @pointwise_conv(
// CHECK:         %[[XC:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : tensor<1x8x7x7xf32> into tensor<1x8x49xf32>
// CHECK:         %[[OC:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : tensor<1x16x7x7xf32> into tensor<1x16x49xf32>
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[X]], #[[K]], #[[O]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[XC]], %{{.*}} : tensor<1x8x49xf32>, tensor<16x8xf32>) outs(%[[OC]] : tensor<1x16x49xf32>)
// CHECK:         tensor.expand_shape %[[R]] {{\[}}[0], [1], [2, 3]] output_shape [1, 16, 7, 7]
#x = affine_map<(n, f, h, w, c) -> (n, c, h, w)>
#k = affine_map<(n, f, h, w, c) -> (f, c)>
#o = affine_map<(n, f, h, w, c) -> (n, f, h, w)>
func.func @pointwise_conv(%x: tensor<1x8x7x7xf32>, %k: tensor<16x8xf32>, %init: tensor<1x16x7x7xf32>) -> tensor<1x16x7x7xf32> {
  %r = linalg.generic {indexing_maps = [#x, #k, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
    ins(%x, %k : tensor<1x8x7x7xf32>, tensor<16x8xf32>) outs(%init : tensor<1x16x7x7xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x16x7x7xf32>
  return %r : tensor<1x16x7x7xf32>
}

// -----

// A per-channel bias on (n, c, h, w): h and w merge; c is not read with
// them by the bias, so it stays apart.
// CHECK-LABEL: func.func @channel_bias(
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x3x20xf32>, tensor<3xf32>) outs(%{{.*}} : tensor<2x3x20xf32>)
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#ch = affine_map<(n, c, h, w) -> (c)>
func.func @channel_bias(%x: tensor<2x3x4x5xf32>, %b: tensor<3xf32>) -> tensor<2x3x4x5xf32> {
  %e = tensor.empty() : tensor<2x3x4x5xf32>
  %r = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
    ins(%x, %b : tensor<2x3x4x5xf32>, tensor<3xf32>) outs(%e : tensor<2x3x4x5xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<2x3x4x5xf32>
  return %r : tensor<2x3x4x5xf32>
}

// -----

// A transpose reads its dims out of order: nothing merges.
// CHECK-LABEL: func.func @transpose(
// CHECK-NOT:     tensor.collapse_shape
#in = affine_map<(a, b) -> (b, a)>
#out = affine_map<(a, b) -> (a, b)>
func.func @transpose(%x: tensor<3x4xf32>) -> tensor<4x3xf32> {
  %e = tensor.empty() : tensor<4x3xf32>
  %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel"]}
    ins(%x : tensor<3x4xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// -----

// Dims known only at run time stay apart (a dynamic expand_shape of buffers
// does not survive expand-strided-metadata in LLVM 22).
// CHECK-LABEL: func.func @dynamic(
// CHECK-NOT:     tensor.collapse_shape
#dyn = affine_map<(a, b) -> (a, b)>
func.func @dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%n) : tensor<?x4xf32>
  %r = linalg.generic {indexing_maps = [#dyn, #dyn], iterator_types = ["parallel", "parallel"]}
    ins(%x : tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.exp %a : f32
    linalg.yield %s : f32
  } -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// -----

// A 1×1 convolution's bias, read as 1×C×1×1 through (n, c, 0, 0): the
// bias loses its unit dims (a projected permutation (n, c) then), and the
// add collapses exactly as the product did, no further (n and c stay
// apart), so that it reads the product's own result and the kernels can
// run it on the product's tiles.
// CHECK-DAG:   #[[ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:   #[[NC:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @pointwise_conv_bias(
// CHECK:         %[[P:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x16x49xf32>)
// CHECK:         %[[B:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2, 3]] : tensor<1x16x1x1xf32> into tensor<1x16xf32>
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[ID3]], #[[NC]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[P]], %[[B]] : tensor<1x16x49xf32>, tensor<1x16xf32>) outs(%{{.*}} : tensor<1x16x49xf32>)
// CHECK:         tensor.expand_shape %[[R]] {{\[}}[0], [1], [2, 3]] output_shape [1, 16, 7, 7]
#x = affine_map<(n, f, h, w, c) -> (n, c, h, w)>
#k = affine_map<(n, f, h, w, c) -> (f, c)>
#o = affine_map<(n, f, h, w, c) -> (n, f, h, w)>
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#bias = affine_map<(n, c, h, w) -> (n, c, 0, 0)>
func.func @pointwise_conv_bias(%x: tensor<1x8x7x7xf32>, %k: tensor<16x8xf32>, %b: tensor<1x16x1x1xf32>, %init: tensor<1x16x7x7xf32>) -> tensor<1x16x7x7xf32> {
  %r = linalg.generic {indexing_maps = [#x, #k, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
    ins(%x, %k : tensor<1x8x7x7xf32>, tensor<16x8xf32>) outs(%init : tensor<1x16x7x7xf32>) {
  ^bb0(%a: f32, %w: f32, %acc: f32):
    %p = arith.mulf %a, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x16x7x7xf32>
  %e = tensor.empty() : tensor<1x16x7x7xf32>
  %y = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
    ins(%r, %b : tensor<1x16x7x7xf32>, tensor<1x16x1x1xf32>) outs(%e : tensor<1x16x7x7xf32>) {
  ^bb0(%v: f32, %c: f32, %out: f32):
    %s = arith.addf %v, %c : f32
    linalg.yield %s : f32
  } -> tensor<1x16x7x7xf32>
  return %y : tensor<1x16x7x7xf32>
}
