// RUN: tract-opt %s -tract-channels-last -split-input-file | FileCheck %s
// RUN: tract-opt %s -tract-channels-last=dense=false -split-input-file | FileCheck %s --check-prefix=DEPTHWISE
// RUN: tract-opt %s -tract-channels-last=lanes=4 -split-input-file | FileCheck %s --check-prefix=LANES4

// A depthwise block: the convolution takes its input channels last (one
// move_axis of the argument), its kernel is transposed at compile time to
// k, k, 1, C, and what follows stays channels last (the per-channel shift
// moves its axis, the einsum its letters) until the result moves back.
// CHECK-LABEL: func.func @block
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x6x6xf32>)
// CHECK-DAG: %[[IN:.*]] = tract.move_axis %[[X]] {from = 1 : i64, to = 3 : i64} : tensor<1x4x6x6xf32> -> tensor<1x6x6x4xf32>
// CHECK-DAG: %[[K:.*]] = tract.const dense<{{\[\[\[\[}}1.000000e+00, 1.000000e+00, 0.000000e+00, 0.000000e+00]], {{\[\[}}2.000000e+00, 0.000000e+00, 1.000000e+00, 0.000000e+00]], {{.*}} : tensor<3x3x1x4xf32>
// CHECK-DAG: %[[SHIFT:.*]] = tract.const dense<{{\[\[\[\[}}5.000000e-01, 1.500000e+00, 2.500000e+00, 3.500000e+00]]]]> : tensor<1x1x1x4xf32>
// CHECK: %[[C:.*]] = tract.conv %[[IN]], %[[K]], %{{.*}} {channels_last, group = 4 : i64, {{.*}}} : (tensor<1x6x6x4xf32>, tensor<3x3x1x4xf32>, tensor<4xf32>) -> tensor<1x6x6x4xf32>
// CHECK-NEXT: %[[A:.*]] = tract.add %[[C]], %[[SHIFT]] : (tensor<1x6x6x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x6x6x4xf32>
// CHECK-NEXT: %[[M:.*]] = tract.min %[[A]], %{{.*}} : (tensor<1x6x6x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x6x6x4xf32>
// CHECK-NEXT: %[[E:.*]] = tract.einsum %[[M]], %{{.*}} {expr = "nxyc,oc->nxyo"} : (tensor<1x6x6x4xf32>, tensor<2x4xf32>) -> tensor<1x6x6x2xf32>
// CHECK-NEXT: %[[OUT:.*]] = tract.move_axis %[[E]] {from = 3 : i64, to = 1 : i64} : tensor<1x6x6x2xf32> -> tensor<1x2x6x6xf32>
// CHECK-NEXT: return %[[OUT]]
// CHECK-NOT: tensor<4x1x3x3xf32>
func.func @block(%x: tensor<1x4x6x6xf32>) -> tensor<1x2x6x6xf32> {
  %k = tract.const dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]], [[[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]], [[[0.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]], [[[0.0, 0.0, 1.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]]]> : tensor<4x1x3x3xf32>
  %bias = tract.const dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %six = tract.const dense<6.0> : tensor<1x1x1x1xf32>
  %shift = tract.const dense<[[[[0.5]], [[1.5]], [[2.5]], [[3.5]]]]> : tensor<1x4x1x1xf32>
  %w = tract.const dense<[[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]]> : tensor<2x4xf32>
  %c = tract.conv %x, %k, %bias {group = 4 : i64, padding = #tract<padding explicit>, pads_after = array<i64: 1, 1>, pads_before = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %a = tract.add %c, %shift : (tensor<1x4x6x6xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %m = tract.min %a, %six : (tensor<1x4x6x6xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x6x6xf32>
  %e = tract.einsum %m, %w {expr = "ncxy,oc->noxy"} : (tensor<1x4x6x6xf32>, tensor<2x4xf32>) -> tensor<1x2x6x6xf32>
  return %e : tensor<1x2x6x6xf32>
}

// -----

// A dense convolution's kernel becomes k, k, C, O; a global pool reduces
// the spatial axes where they now are, and the flatten after it, which
// needs the channels first, reads a move back of the pooled 1x1x1x4.
// With dense=false, a dense convolution keeps its layout.
// CHECK-LABEL: func.func @pool_head
// CHECK: %[[IN:.*]] = tract.move_axis %{{.*}} {from = 1 : i64, to = 3 : i64}
// CHECK: %[[C:.*]] = tract.conv %[[IN]], %{{.*}} {channels_last, {{.*}}} : (tensor<1x5x5x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x5x5x4xf32>
// CHECK-NEXT: %[[R:.*]] = tract.reduce sum %[[C]] {axes = array<i64: 1, 2>} : tensor<1x5x5x4xf32> -> tensor<1x1x1x4xf32>
// CHECK-NEXT: %[[B:.*]] = tract.move_axis %[[R]] {from = 3 : i64, to = 1 : i64} : tensor<1x1x1x4xf32> -> tensor<1x4x1x1xf32>
// CHECK-NEXT: tract.reshape %[[B]]
// DEPTHWISE-LABEL: func.func @pool_head
// DEPTHWISE-NOT: move_axis
// DEPTHWISE: tract.conv %arg0
// DEPTHWISE-NOT: channels_last
// DEPTHWISE: return
func.func @pool_head(%x: tensor<1x4x5x5xf32>) -> tensor<1x4xf32> {
  %k = tract.const dense<1.0> : tensor<4x4x1x1xf32>
  %c = tract.conv %x, %k {padding = #tract<padding explicit>, pads_after = array<i64: 0, 0>, pads_before = array<i64: 0, 0>} : (tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x5x5xf32>
  %r = tract.reduce sum %c {axes = array<i64: 2, 3>} : tensor<1x4x5x5xf32> -> tensor<1x4x1x1xf32>
  %f = tract.reshape %r {at = 2 : i64, count = 2 : i64, to = #tract.shape<[]>} : tensor<1x4x1x1xf32> -> tensor<1x4xf32>
  return %f : tensor<1x4xf32>
}

// -----

// A concatenation of channels concatenates the last axis; its other input,
// the argument, is moved once and shared with the convolution. A model's
// own move of the channels last (ConvNeXt's permute before a layer norm)
// is the channels-last value itself.
// CHECK-LABEL: func.func @concat_and_permute
// CHECK: %[[IN:.*]] = tract.move_axis %arg0 {from = 1 : i64, to = 3 : i64}
// CHECK: %[[C:.*]] = tract.conv %[[IN]]
// CHECK-NEXT: %[[J:.*]] = tract.concat %[[C]], %[[IN]] {axis = 3 : i64} : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x4xf32>
// CHECK-NEXT: %[[B:.*]] = tract.move_axis %[[J]] {from = 3 : i64, to = 1 : i64}
// CHECK-NEXT: return %[[B]], %[[J]]
func.func @concat_and_permute(%x: tensor<1x2x4x4xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) {
  %k = tract.const dense<1.0> : tensor<2x1x3x3xf32>
  %c = tract.conv %x, %k {group = 2 : i64, padding = #tract<padding explicit>, pads_after = array<i64: 1, 1>, pads_before = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  %j = tract.concat %c, %x {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32>
  %t = tract.move_axis %j {from = 1 : i64, to = 3 : i64} : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>
  return %j, %t : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>
}

// -----

// An NHWC model moves its input's channels first: the convolution reads the
// input as it is.
// CHECK-LABEL: func.func @nhwc_input
// CHECK-NOT: tract.move_axis %arg0
// CHECK: %[[C:.*]] = tract.conv %arg0, %{{.*}} {channels_last
// CHECK-NEXT: %[[B:.*]] = tract.move_axis %[[C]] {from = 3 : i64, to = 1 : i64}
// CHECK-NEXT: return %[[B]]
func.func @nhwc_input(%x: tensor<1x4x4x2xf32>) -> tensor<1x2x4x4xf32> {
  %k = tract.const dense<1.0> : tensor<2x1x3x3xf32>
  %f = tract.move_axis %x {from = 3 : i64, to = 1 : i64} : tensor<1x4x4x2xf32> -> tensor<1x2x4x4xf32>
  %c = tract.conv %f, %k {group = 2 : i64, padding = #tract<padding explicit>, pads_after = array<i64: 1, 1>, pads_before = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  return %c : tensor<1x2x4x4xf32>
}

// -----

// A grouped convolution runs channels last too (not with dense=false). Its
// groups of 2 outputs would merge to fill a vector, but a splat kernel's
// bytes are not at hand: the groups stay as they are.
// CHECK-LABEL: func.func @grouped
// CHECK: %[[K:.*]] = tract.const dense<1.000000e+00> : tensor<1x1x2x4xf32>
// CHECK: tract.conv %{{.*}}, %[[K]] {channels_last, group = 2 : i64, {{.*}}} : (tensor<1x4x4x4xf32>, tensor<1x1x2x4xf32>) -> tensor<1x4x4x4xf32>
// DEPTHWISE-LABEL: func.func @grouped
// DEPTHWISE-NOT: move_axis
// DEPTHWISE-NOT: channels_last
// DEPTHWISE: return
func.func @grouped(%x: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %k = tract.const dense<1.0> : tensor<4x2x1x1xf32>
  %c = tract.conv %x, %k {group = 2 : i64, padding = #tract<padding explicit>, pads_after = array<i64: 0, 0>, pads_before = array<i64: 0, 0>} : (tensor<1x4x4x4xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x4x4xf32>
  return %c : tensor<1x4x4x4xf32>
}

// -----

// Groups of 2 outputs on vectors of 4 lanes run two by two: the kernel of
// each merged group feeds input j·2 + c to the outputs of group j only
// (zeros elsewhere). With 16 lanes all four groups merge into a dense
// convolution.
// LANES4-LABEL: func.func @grouped_merged
// LANES4: %[[K:.*]] = tract.const dense<{{\[}}[{{\[}}[1.000000e+00, 3.000000e+00, 0.000000e+00, 0.000000e+00, 9.000000e+00, 1.100000e+01, 0.000000e+00, 0.000000e+00], [2.000000e+00, 4.000000e+00, 0.000000e+00, 0.000000e+00, 1.000000e+01, 1.200000e+01, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 5.000000e+00, 7.000000e+00, 0.000000e+00, 0.000000e+00, 1.300000e+01, 1.500000e+01], [0.000000e+00, 0.000000e+00, 6.000000e+00, 8.000000e+00, 0.000000e+00, 0.000000e+00, 1.400000e+01, 1.600000e+01]]]]> : tensor<1x1x4x8xf32>
// LANES4: tract.conv %{{.*}}, %[[K]] {channels_last, group = 2 : i64, {{.*}}} : (tensor<1x2x2x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x2x2x8xf32>
// CHECK-LABEL: func.func @grouped_merged
// CHECK: tract.conv %{{.*}} {channels_last, padding {{.*}}} : (tensor<1x2x2x8xf32>, tensor<1x1x8x8xf32>) -> tensor<1x2x2x8xf32>
func.func @grouped_merged(%x: tensor<1x8x2x2xf32>) -> tensor<1x8x2x2xf32> {
  %k = tract.const dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]], [[[5.0]], [[6.0]]], [[[7.0]], [[8.0]]], [[[9.0]], [[10.0]]], [[[11.0]], [[12.0]]], [[[13.0]], [[14.0]]], [[[15.0]], [[16.0]]]]> : tensor<8x2x1x1xf32>
  %c = tract.conv %x, %k {group = 4 : i64, padding = #tract<padding explicit>, pads_after = array<i64: 0, 0>, pads_before = array<i64: 0, 0>} : (tensor<1x8x2x2xf32>, tensor<8x2x1x1xf32>) -> tensor<1x8x2x2xf32>
  return %c : tensor<1x8x2x2xf32>
}

// -----

// A max pool and an average pool after a convolution pool the spatial
// axes where they now are (their channels_last form); one with indices
// keeps the channels first.
// CHECK-LABEL: func.func @pools
// CHECK: %[[C:.*]] = tract.conv
// CHECK-NEXT: %[[B:.*]] = tract.move_axis %[[C]] {from = 3 : i64, to = 1 : i64}
// CHECK-NEXT: %[[M:.*]] = tract.max_pool %[[C]] {channels_last, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32>
// CHECK-NEXT: %[[A:.*]] = tract.sum_pool %[[M]] {channels_last, kernel_shape = array<i64: 2, 2>, normalize = true} : (tensor<1x2x2x2xf32>) -> tensor<1x1x1x2xf32>
// CHECK-NEXT: tract.move_axis %[[A]] {from = 3 : i64, to = 1 : i64}
// CHECK-NEXT: tract.max_pool %[[B]] {kernel_shape = array<i64: 2, 2>, with_index = true}
func.func @pools(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x1x1xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xi64>) {
  %k = tract.const dense<1.0> : tensor<2x1x3x3xf32>
  %c = tract.conv %x, %k {group = 2 : i64, padding = #tract<padding explicit>, pads_after = array<i64: 1, 1>, pads_before = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  %m = tract.max_pool %c {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  %a = tract.sum_pool %m {kernel_shape = array<i64: 2, 2>, normalize = true} : (tensor<1x2x2x2xf32>) -> tensor<1x2x1x1xf32>
  %i:2 = tract.max_pool %c {kernel_shape = array<i64: 2, 2>, with_index = true} : (tensor<1x2x4x4xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xi64>)
  return %a, %i#0, %i#1 : tensor<1x2x1x1xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xi64>
}

// -----

// A ConvNeXt block: after the depthwise convolution the model moves the
// channels last itself (that move disappears), normalizes them (the
// rms_norm's axis moves), and runs its MLP on pixels whose channels are
// already last (the first product keeps its letters); the second product
// took the model's move back to the channels first into its letters, and
// since the residual add needs it channels last, it and the layer scale
// after it write channels last themselves: no transpose is left but the
// model's input and output.
// CHECK-LABEL: func.func @convnext_block
// CHECK: %[[IN:.*]] = tract.move_axis %arg0 {from = 1 : i64, to = 3 : i64}
// CHECK: %[[C:.*]] = tract.conv %[[IN]]
// CHECK: %[[N:.*]] = tract.rms_norm %[[C]] {axis = 3 : i64
// CHECK: %[[E1:.*]] = tract.einsum %[[N]], %{{.*}} {expr = "ABmk,kn->ABmn"} : (tensor<1x4x4x8xf32>, tensor<8x16xf32>) -> tensor<1x4x4x16xf32>
// CHECK: %[[E2:.*]] = tract.einsum %[[E1]], %{{.*}} {expr = "ABmk,kn->ABmn"} : (tensor<1x4x4x16xf32>, tensor<16x8xf32>) -> tensor<1x4x4x8xf32>
// CHECK: %[[S:.*]] = tract.mul %[[E2]], %{{.*}} : (tensor<1x4x4x8xf32>, tensor<1x1x1x8xf32>) -> tensor<1x4x4x8xf32>
// CHECK: %[[R:.*]] = tract.add %[[S]], %[[IN]] : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
// CHECK-NEXT: %[[OUT:.*]] = tract.move_axis %[[R]] {from = 3 : i64, to = 1 : i64}
// CHECK-NEXT: return %[[OUT]]
func.func @convnext_block(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %k = tract.const dense<1.0> : tensor<8x1x3x3xf32>
  %w1 = tract.const dense<0.5> : tensor<8x16xf32>
  %w2 = tract.const dense<0.25> : tensor<16x8xf32>
  %gamma = tract.const dense<[[[[1.0]], [[2.0]], [[3.0]], [[4.0]], [[5.0]], [[6.0]], [[7.0]], [[8.0]]]]> : tensor<1x8x1x1xf32>
  %c = tract.conv %x, %k {group = 8 : i64, padding = #tract<padding explicit>, pads_after = array<i64: 1, 1>, pads_before = array<i64: 1, 1>} : (tensor<1x8x4x4xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x4x4xf32>
  %n = tract.rms_norm %c {axis = 1 : i64} : tensor<1x8x4x4xf32> -> tensor<1x8x4x4xf32>
  %e1 = tract.einsum %n, %w1 {expr = "AkBm,kn->ABmn"} : (tensor<1x8x4x4xf32>, tensor<8x16xf32>) -> tensor<1x4x4x16xf32>
  %e2 = tract.einsum %e1, %w2 {expr = "ABmk,kn->AnBm"} : (tensor<1x4x4x16xf32>, tensor<16x8xf32>) -> tensor<1x8x4x4xf32>
  %s = tract.mul %e2, %gamma : (tensor<1x8x4x4xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x4x4xf32>
  %r = tract.add %s, %x : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %r : tensor<1x8x4x4xf32>
}
