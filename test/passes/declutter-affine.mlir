// RUN: tract-opt %s -tract-declutter -split-input-file | FileCheck %s

// A batch norm as the ONNX importer writes it, x * a + b with per-channel
// constants, folds into the convolution's kernel and bias.
// CHECK-LABEL: func.func @batch_norm_into_conv
// CHECK-SAME: (%[[X:.*]]: tensor<1x1x4x4xf32>)
// CHECK-DAG: %[[K:.*]] = tract.const dense<{{\[}}[{{\[}}[2.000000e+00, 1.000000e+00]]], [{{\[}}[-3.000000e+00, 2.000000e+00]]]]> : tensor<2x1x1x2xf32>
// CHECK-DAG: %[[B:.*]] = tract.const dense<[2.500000e+00, -7.000000e+00]> : tensor<2xf32>
// CHECK: %[[C:.*]] = tract.conv %[[X]], %[[K]], %[[B]] {padding = #tract<padding explicit>, pads_after = array<i64: 0, 0>, pads_before = array<i64: 0, 0>} : (tensor<1x1x4x4xf32>, tensor<2x1x1x2xf32>, tensor<2xf32>) -> tensor<1x2x4x3xf32>
// CHECK-NEXT: return %[[C]]
func.func @batch_norm_into_conv(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x3xf32> {
  %k = tract.const dense<[[[[1.0, 0.5]]], [[[1.5, -1.0]]]]> : tensor<2x1x1x2xf32>
  %bias = tract.const dense<[1.0, 2.0]> : tensor<2xf32>
  %a = tract.const dense<[2.0, -2.0]> : tensor<2xf32>
  %b = tract.const dense<[0.5, -3.0]> : tensor<2xf32>
  %a0 = tract.add_axis %a {axis = 0 : i64} : tensor<2xf32> -> tensor<1x2xf32>
  %a1 = tract.add_axis %a0 {axis = 2 : i64} : tensor<1x2xf32> -> tensor<1x2x1xf32>
  %a2 = tract.add_axis %a1 {axis = 3 : i64} : tensor<1x2x1xf32> -> tensor<1x2x1x1xf32>
  %b0 = tract.add_axis %b {axis = 0 : i64} : tensor<2xf32> -> tensor<1x2xf32>
  %b1 = tract.add_axis %b0 {axis = 2 : i64} : tensor<1x2xf32> -> tensor<1x2x1xf32>
  %b2 = tract.add_axis %b1 {axis = 3 : i64} : tensor<1x2x1xf32> -> tensor<1x2x1x1xf32>
  %c = tract.conv %x, %k, %bias {padding = #tract<padding explicit>, pads_before = array<i64: 0, 0>, pads_after = array<i64: 0, 0>} : (tensor<1x1x4x4xf32>, tensor<2x1x1x2xf32>, tensor<2xf32>) -> tensor<1x2x4x3xf32>
  %m = tract.mul %c, %a2 : (tensor<1x2x4x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x3xf32>
  %y = tract.add %b2, %m : (tensor<1x2x1x1xf32>, tensor<1x2x4x3xf32>) -> tensor<1x2x4x3xf32>
  return %y : tensor<1x2x4x3xf32>
}

// -----

// Without a bias, a scale keeps none; a shift creates one.
// CHECK-LABEL: func.func @scale_and_shift_without_bias
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x5xf32>)
// CHECK-DAG: %[[K:.*]] = tract.const dense<3.000000e+00> : tensor<1x2x2xf32>
// CHECK-DAG: %[[B:.*]] = tract.const dense<1.000000e+00> : tensor<1xf32>
// CHECK: %[[C:.*]] = tract.conv %[[X]], %[[K]], %[[B]] : (tensor<1x2x5xf32>, tensor<1x2x2xf32>, tensor<1xf32>) -> tensor<1x1x4xf32>
// CHECK-NEXT: return %[[C]]
func.func @scale_and_shift_without_bias(%x: tensor<1x2x5xf32>) -> tensor<1x1x4xf32> {
  %k = tract.const dense<1.0> : tensor<1x2x2xf32>
  %s = tract.const dense<3.0> : tensor<1x1x1xf32>
  %t = tract.const dense<1.0> : tensor<1x1x1xf32>
  %c = tract.conv %x, %k : (tensor<1x2x5xf32>, tensor<1x2x2xf32>) -> tensor<1x1x4xf32>
  %m = tract.mul %s, %c : (tensor<1x1x1xf32>, tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
  %y = tract.add %m, %t : (tensor<1x1x4xf32>, tensor<1x1x1xf32>) -> tensor<1x1x4xf32>
  return %y : tensor<1x1x4xf32>
}

// -----

// A scale that varies along a spatial axis is not per-channel.
// CHECK-LABEL: func.func @spatial_scale_is_kept
// CHECK: tract.conv
// CHECK: tract.mul
func.func @spatial_scale_is_kept(%x: tensor<1x2x5xf32>) -> tensor<1x1x4xf32> {
  %k = tract.const dense<1.0> : tensor<1x2x2xf32>
  %s = tract.const dense<[[[1.0, 2.0, 3.0, 4.0]]]> : tensor<1x1x4xf32>
  %c = tract.conv %x, %k : (tensor<1x2x5xf32>, tensor<1x2x2xf32>) -> tensor<1x1x4xf32>
  %m = tract.mul %c, %s : (tensor<1x1x4xf32>, tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
  return %m : tensor<1x1x4xf32>
}

// -----

// The conv's result is used elsewhere: scaling its kernel would change it.
// CHECK-LABEL: func.func @shared_conv_is_kept
// CHECK: %[[C:.*]] = tract.conv
// CHECK: %[[M:.*]] = tract.mul %[[C]]
// CHECK: return %[[C]], %[[M]]
func.func @shared_conv_is_kept(%x: tensor<1x2x5xf32>) -> (tensor<1x1x4xf32>, tensor<1x1x4xf32>) {
  %k = tract.const dense<1.0> : tensor<1x2x2xf32>
  %s = tract.const dense<3.0> : tensor<1x1x1xf32>
  %c = tract.conv %x, %k : (tensor<1x2x5xf32>, tensor<1x2x2xf32>) -> tensor<1x1x4xf32>
  %m = tract.mul %c, %s : (tensor<1x1x4xf32>, tensor<1x1x1xf32>) -> tensor<1x1x4xf32>
  return %c, %m : tensor<1x1x4xf32>, tensor<1x1x4xf32>
}

// -----

// A kernel computed at run time cannot absorb the scale.
// CHECK-LABEL: func.func @dynamic_kernel_is_kept
// CHECK: tract.conv
// CHECK: tract.mul
func.func @dynamic_kernel_is_kept(%x: tensor<1x2x5xf32>, %k: tensor<1x2x2xf32>) -> tensor<1x1x4xf32> {
  %s = tract.const dense<3.0> : tensor<1x1x1xf32>
  %c = tract.conv %x, %k : (tensor<1x2x5xf32>, tensor<1x2x2xf32>) -> tensor<1x1x4xf32>
  %m = tract.mul %c, %s : (tensor<1x1x4xf32>, tensor<1x1x1xf32>) -> tensor<1x1x4xf32>
  return %m : tensor<1x1x4xf32>
}

// -----

// A 1x1 convolution is a contraction over the channels, plus its bias.
// CHECK-LABEL: func.func @pointwise_conv_to_einsum
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x?x?xf32, #tract.dims<[H, W]>>, %[[K:.*]]: tensor<4x3x1x1xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[K1:.*]] = tract.rm_axis %[[K]] {axis = 2 : i64} : tensor<4x3x1x1xf32> -> tensor<4x3x1xf32>
// CHECK-NEXT: %[[K2:.*]] = tract.rm_axis %[[K1]] {axis = 2 : i64} : tensor<4x3x1xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[E:.*]] = tract.einsum %[[X]], %[[K2]] {expr = "ncxy,oc->noxy"} : (tensor<1x3x?x?xf32, #tract.dims<[H, W]>>, tensor<4x3xf32>) -> tensor<1x4x?x?xf32, #tract.dims<[H, W]>>
// CHECK-NEXT: %[[B1:.*]] = tract.reshape %[[B]] {at = 0 : i64, count = 1 : i64, to = #tract.shape<[1, 4, 1, 1]>} : tensor<4xf32> -> tensor<1x4x1x1xf32>
// CHECK-NEXT: %[[Y:.*]] = tract.add %[[E]], %[[B1]] : (tensor<1x4x?x?xf32, #tract.dims<[H, W]>>, tensor<1x4x1x1xf32>) -> tensor<1x4x?x?xf32, #tract.dims<[H, W]>>
// CHECK-NEXT: return %[[Y]]
func.func @pointwise_conv_to_einsum(%x: tensor<1x3x?x?xf32, #tract.dims<[H, W]>>, %k: tensor<4x3x1x1xf32>, %b: tensor<4xf32>) -> tensor<1x4x?x?xf32, #tract.dims<[H, W]>> {
  %c = tract.conv %x, %k, %b : (tensor<1x3x?x?xf32, #tract.dims<[H, W]>>, tensor<4x3x1x1xf32>, tensor<4xf32>) -> tensor<1x4x?x?xf32, #tract.dims<[H, W]>>
  return %c : tensor<1x4x?x?xf32, #tract.dims<[H, W]>>
}

// -----

// Strided, padded and grouped 1x1 convolutions stay convolutions.
// CHECK-LABEL: func.func @pointwise_conv_variants_are_kept
// CHECK-COUNT-3: tract.conv
// CHECK-NOT: tract.einsum
func.func @pointwise_conv_variants_are_kept(%x: tensor<1x4x6xf32>, %k: tensor<4x4x1xf32>, %g: tensor<4x2x1xf32>) -> (tensor<1x4x3xf32>, tensor<1x4x8xf32>, tensor<1x4x6xf32>) {
  %0 = tract.conv %x, %k {strides = array<i64: 2>} : (tensor<1x4x6xf32>, tensor<4x4x1xf32>) -> tensor<1x4x3xf32>
  %1 = tract.conv %x, %k {padding = #tract<padding explicit>, pads_before = array<i64: 1>, pads_after = array<i64: 1>} : (tensor<1x4x6xf32>, tensor<4x4x1xf32>) -> tensor<1x4x8xf32>
  %2 = tract.conv %x, %g {group = 2 : i64} : (tensor<1x4x6xf32>, tensor<4x2x1xf32>) -> tensor<1x4x6xf32>
  return %0, %1, %2 : tensor<1x4x3xf32>, tensor<1x4x8xf32>, tensor<1x4x6xf32>
}

// -----

// A segmentation head's atrous convolution: dilation 24 on a 16x16 map.
// Only the centre tap ever reads the input (the others read padding for
// every output), so the kernel shrinks to it, the padding goes, and the
// 1x1 convolution left is an einsum.
// CHECK-LABEL: func.func @atrous_conv_reads_one_tap
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x16x16xf32>)
// CHECK-DAG: %[[K:.*]] = tract.const dense<{{\[}}[4.000000e+00, 1.300000e+01], [2.200000e+01, 3.100000e+01]]> : tensor<2x2xf32>
// CHECK: %[[E:.*]] = tract.einsum %[[X]], %[[K]] {expr = "ncxy,oc->noxy"}
// CHECK-NOT: tract.conv
func.func @atrous_conv_reads_one_tap(%x: tensor<1x2x16x16xf32>) -> tensor<1x2x16x16xf32> {
  %k = tract.const dense<[[[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]], [[9.0, 10.0, 11.0], [12.0, 13.0, 14.0], [15.0, 16.0, 17.0]]], [[[18.0, 19.0, 20.0], [21.0, 22.0, 23.0], [24.0, 25.0, 26.0]], [[27.0, 28.0, 29.0], [30.0, 31.0, 32.0], [33.0, 34.0, 35.0]]]]> : tensor<2x2x3x3xf32>
  %c = tract.conv %x, %k {dilations = array<i64: 24, 24>, padding = #tract<padding explicit>, pads_before = array<i64: 24, 24>, pads_after = array<i64: 24, 24>} : (tensor<1x2x16x16xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x16x16xf32>
  return %c : tensor<1x2x16x16xf32>
}

// -----

// Only the first tap reads padding alone: the two others stay, with the
// padding it covered gone. With `same_upper` padding, whose pads are known
// from the shapes, only the centre tap of dilation 8 on 5 positions reads.
// CHECK-LABEL: func.func @first_tap_reads_padding_only
// CHECK-SAME: (%[[X:.*]]: tensor<1x1x5xf32>, %[[Y:.*]]: tensor<1x1x5xf32>)
// CHECK-DAG: %[[K:.*]] = tract.const dense<{{\[}}[{{\[}}2.000000e+00, 3.000000e+00]]]> : tensor<1x1x2xf32>
// CHECK: tract.conv %[[X]], %[[K]] {dilations = array<i64: 4>, padding = #tract<padding explicit>, pads_after = array<i64: 0>, pads_before = array<i64: 0>} : (tensor<1x1x5xf32>, tensor<1x1x2xf32>) -> tensor<1x1x1xf32>
// CHECK: tract.einsum %[[Y]], %{{.*}} {expr = "ncx,oc->nox"}
func.func @first_tap_reads_padding_only(%x: tensor<1x1x5xf32>, %y: tensor<1x1x5xf32>) -> (tensor<1x1x1xf32>, tensor<1x1x5xf32>) {
  %k = tract.const dense<[[[1.0, 2.0, 3.0]]]> : tensor<1x1x3xf32>
  %c = tract.conv %x, %k {dilations = array<i64: 4>, padding = #tract<padding explicit>, pads_before = array<i64: 4>, pads_after = array<i64: 0>} : (tensor<1x1x5xf32>, tensor<1x1x3xf32>) -> tensor<1x1x1xf32>
  %d = tract.conv %y, %k {dilations = array<i64: 8>, padding = #tract<padding same_upper>} : (tensor<1x1x5xf32>, tensor<1x1x3xf32>) -> tensor<1x1x5xf32>
  return %c, %d : tensor<1x1x1xf32>, tensor<1x1x5xf32>
}

// -----

// Every tap of a 3x3 convolution padded by 1 reads the input; and a tap
// that reads padding alone but whose neighbours would need the input
// cropped (padding 8, dilation 10: the second tap starts inside) stays.
// CHECK-LABEL: func.func @taps_that_read_stay
// CHECK: tract.conv {{.*}} : (tensor<1x1x6x6xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x6x6xf32>
// CHECK: tract.conv {{.*}} : (tensor<1x1x5xf32>, tensor<1x1x2xf32>) -> tensor<1x1x3xf32>
func.func @taps_that_read_stay(%x: tensor<1x1x6x6xf32>, %y: tensor<1x1x5xf32>) -> (tensor<1x1x6x6xf32>, tensor<1x1x3xf32>) {
  %k = tract.const dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]> : tensor<1x1x3x3xf32>
  %c = tract.conv %x, %k {padding = #tract<padding explicit>, pads_before = array<i64: 1, 1>, pads_after = array<i64: 1, 1>} : (tensor<1x1x6x6xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x6x6xf32>
  %k2 = tract.const dense<[[[1.0, 2.0]]]> : tensor<1x1x2xf32>
  %d = tract.conv %y, %k2 {dilations = array<i64: 10>, padding = #tract<padding explicit>, pads_before = array<i64: 8>, pads_after = array<i64: 0>} : (tensor<1x1x5xf32>, tensor<1x1x2xf32>) -> tensor<1x1x3xf32>
  return %c, %d : tensor<1x1x6x6xf32>, tensor<1x1x3xf32>
}
