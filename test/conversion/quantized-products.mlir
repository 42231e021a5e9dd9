// RUN: tract-opt --tract-lower-quantized-types --split-input-file %s | FileCheck %s

// A convolution between a dequantized input and a quantizing cast, with a
// kernel quantized and dequantized (how the NNEF import writes the stored
// integers of tract's quantized convolutions), runs in integers: the
// kernel's integers are what its cast makes of it, the bias counts in
// units of 0.02 * 0.5, the input is padded with its zero point and the
// result requantized by 0.02 * 0.5 / 0.1.
// CHECK-LABEL: func.func @conv(
// CHECK-SAME:    %[[X:.*]]: tensor<1x2x4x4xui8>
// CHECK-NEXT:    %[[P:.*]] = tract.pad %[[X]] {after = array<i64: 0, 0, 1, 1>, before = array<i64: 0, 0, 1, 1>, value = 128 : ui8}
// CHECK-NEXT:    %[[W:.*]] = tract.const dense<{{\[\[\[\[}}2, -2, 0], [1, 1, 1], [0, 0, 0]], {{\[\[}}4, 4, 4], [4, 4, 4], [4, 4, 127]]]]> : tensor<1x2x3x3xi8>
// CHECK-NEXT:    %[[B:.*]] = tract.const dense<30> : tensor<1xi32>
// CHECK-NEXT:    %[[Y:.*]] = tract.quant_conv %[[P]], %[[W]], %[[B]] {dilations = array<i64: 1, 1>, input_zero = 128 : i64, multiplier = array<f32: 0.099999994>, output_signed, output_zero = 3 : i64, strides = array<i64: 1, 1>} : (tensor<1x2x6x6xui8>, tensor<1x2x3x3xi8>, tensor<1xi32>) -> tensor<1x1x4x4xi8>
// CHECK-NEXT:    return %[[Y]]
func.func @conv(%q: tensor<1x2x4x4x!quant.uniform<u8:f32, 0.02:128>>) -> tensor<1x1x4x4x!quant.uniform<i8:f32, 0.1:3>> {
  %x = tract.cast %q : tensor<1x2x4x4x!quant.uniform<u8:f32, 0.02:128>> to tensor<1x2x4x4xf32>
  %w = tract.const dense<[[[[1.0, -1.0, 0.2], [0.5, 0.5, 0.5], [0.0, 0.0, 0.0]], [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0], [2.0, 2.0, 100.0]]]]> : tensor<1x2x3x3xf32>
  %wq = tract.cast %w : tensor<1x2x3x3xf32> to tensor<1x2x3x3x!quant.uniform<i8:f32, 0.5>>
  %wf = tract.cast %wq : tensor<1x2x3x3x!quant.uniform<i8:f32, 0.5>> to tensor<1x2x3x3xf32>
  %b = tract.const dense<0.3> : tensor<1xf32>
  %c = tract.conv %x, %wf, %b {padding = #tract<padding explicit>, pads_after = array<i64: 1, 1>, pads_before = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<1x2x3x3xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  %y = tract.cast %c : tensor<1x1x4x4xf32> to tensor<1x1x4x4x!quant.uniform<i8:f32, 0.1:3>>
  return %y : tensor<1x1x4x4x!quant.uniform<i8:f32, 0.1:3>>
}

// -----

// Depthwise (a group per channel), strided, without padding or bias.
// CHECK-LABEL: func.func @depthwise(
// CHECK-SAME:    %[[X:.*]]: tensor<1x3x5x5xi8>
// CHECK-NEXT:    %[[W:.*]] = tract.const dense<1> : tensor<3x3x3xui8>
// CHECK-NEXT:    %[[Y:.*]] = tract.quant_depthwise %[[X]], %[[W]] {dilations = array<i64: 1, 1>, input_zero = -4 : i64, multiplier = array<f32: 2.500000e-01>, strides = array<i64: 2, 2>, weight_zero = array<i64: 10>} : (tensor<1x3x5x5xi8>, tensor<3x3x3xui8>) -> tensor<1x3x2x2xui8>
func.func @depthwise(%q: tensor<1x3x5x5x!quant.uniform<i8:f32, 0.5:-4>>) -> tensor<1x3x2x2x!quant.uniform<u8:f32, 1.0>> {
  %x = tract.cast %q : tensor<1x3x5x5x!quant.uniform<i8:f32, 0.5:-4>> to tensor<1x3x5x5xf32>
  %w = tract.const dense<-4.5> : tensor<3x1x3x3xf32>
  %wq = tract.cast %w : tensor<3x1x3x3xf32> to tensor<3x1x3x3x!quant.uniform<u8:f32, 0.5:10>>
  %wf = tract.cast %wq : tensor<3x1x3x3x!quant.uniform<u8:f32, 0.5:10>> to tensor<3x1x3x3xf32>
  %c = tract.conv %x, %wf {group = 3 : i64, strides = array<i64: 2, 2>} : (tensor<1x3x5x5xf32>, tensor<3x1x3x3xf32>) -> tensor<1x3x2x2xf32>
  %y = tract.cast %c : tensor<1x3x2x2xf32> to tensor<1x3x2x2x!quant.uniform<u8:f32, 1.0>>
  return %y : tensor<1x3x2x2x!quant.uniform<u8:f32, 1.0>>
}

// -----

// `linear`: x by the transposed weights, plus a bias along the outputs.
// CHECK-LABEL: func.func @linear(
// CHECK-SAME:    %[[X:.*]]: tensor<5x3xui8>
// CHECK-NEXT:    %[[W:.*]] = tract.const dense<{{\[\[}}1, 4], [2, 5], [3, 6]]> : tensor<3x2xi8>
// CHECK-NEXT:    %[[B:.*]] = tract.const dense<[10, -20]> : tensor<2xi32>
// CHECK-NEXT:    %[[Y:.*]] = tract.quant_matmul %[[X]], %[[W]], %[[B]] {multiplier = array<f32: 0.0500000045>} : (tensor<5x3xui8>, tensor<3x2xi8>, tensor<2xi32>) -> tensor<5x2xui8>
func.func @linear(%q: tensor<5x3x!quant.uniform<u8:f32, 0.1>>) -> tensor<5x2x!quant.uniform<u8:f32, 0.2>> {
  %x = tract.cast %q : tensor<5x3x!quant.uniform<u8:f32, 0.1>> to tensor<5x3xf32>
  %w = tract.const dense<[[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]]> : tensor<2x3xf32>
  %wq = tract.cast %w : tensor<2x3xf32> to tensor<2x3x!quant.uniform<i8:f32, 0.1>>
  %wf = tract.cast %wq : tensor<2x3x!quant.uniform<i8:f32, 0.1>> to tensor<2x3xf32>
  %m = tract.einsum %x, %wf {expr = "mk,nk->mn"} : (tensor<5x3xf32>, tensor<2x3xf32>) -> tensor<5x2xf32>
  %b = tract.const dense<[[0.1, -0.2]]> : tensor<1x2xf32>
  %s = tract.add %m, %b : (tensor<5x2xf32>, tensor<1x2xf32>) -> tensor<5x2xf32>
  %y = tract.cast %s : tensor<5x2xf32> to tensor<5x2x!quant.uniform<u8:f32, 0.2>>
  return %y : tensor<5x2x!quant.uniform<u8:f32, 0.2>>
}

// -----

// A product whose result is used in float stays in float (its operands
// dequantized as before).
// CHECK-LABEL: func.func @float_result(
// CHECK-NOT:     tract.quant_matmul
// CHECK:         tract.einsum
func.func @float_result(%q: tensor<5x3x!quant.uniform<u8:f32, 0.1>>) -> tensor<5x2xf32> {
  %x = tract.cast %q : tensor<5x3x!quant.uniform<u8:f32, 0.1>> to tensor<5x3xf32>
  %w = tract.const dense<[[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]]> : tensor<2x3xf32>
  %wq = tract.cast %w : tensor<2x3xf32> to tensor<2x3x!quant.uniform<i8:f32, 0.1>>
  %wf = tract.cast %wq : tensor<2x3x!quant.uniform<i8:f32, 0.1>> to tensor<2x3xf32>
  %m = tract.einsum %x, %wf {expr = "mk,nk->mn"} : (tensor<5x3xf32>, tensor<2x3xf32>) -> tensor<5x2xf32>
  return %m : tensor<5x2xf32>
}

// -----

// Between a dequantization and a quantization to the same type, a relu (a
// maximum with a constant, quantized as the cast would: 0.0 is the zero
// point), a max pool and a reshape run on the integers; an op quantizing
// to another type does not.
// CHECK-LABEL: func.func @passthrough(
// CHECK-SAME:    %[[X:.*]]: tensor<1x2x4x4xui8>
// CHECK:         %[[Z:.*]] = tract.const dense<10> : tensor<1x1x1x1xui8>
// CHECK-NEXT:    %[[R:.*]] = tract.max %[[X]], %[[Z]] : (tensor<1x2x4x4xui8>, tensor<1x1x1x1xui8>) -> tensor<1x2x4x4xui8>
// CHECK-NEXT:    %[[P:.*]] = tract.max_pool %[[R]] {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xui8>) -> tensor<1x2x2x2xui8>
// CHECK-NEXT:    %[[F:.*]] = tract.reshape %[[P]] {{.*}} : tensor<1x2x2x2xui8> -> tensor<1x8xui8>
// CHECK:         tract.sqrt
func.func @passthrough(%q: tensor<1x2x4x4x!quant.uniform<u8:f32, 0.5:10>>) -> (tensor<1x8x!quant.uniform<u8:f32, 0.5:10>>, tensor<1x2x4x4x!quant.uniform<u8:f32, 0.5:10>>) {
  %x = tract.cast %q : tensor<1x2x4x4x!quant.uniform<u8:f32, 0.5:10>> to tensor<1x2x4x4xf32>
  %zero = tract.const dense<0.0> : tensor<1x1x1x1xf32>
  %r = tract.max %x, %zero : (tensor<1x2x4x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %rq = tract.cast %r : tensor<1x2x4x4xf32> to tensor<1x2x4x4x!quant.uniform<u8:f32, 0.5:10>>
  %rf = tract.cast %rq : tensor<1x2x4x4x!quant.uniform<u8:f32, 0.5:10>> to tensor<1x2x4x4xf32>
  %p = tract.max_pool %rf {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  %pq = tract.cast %p : tensor<1x2x2x2xf32> to tensor<1x2x2x2x!quant.uniform<u8:f32, 0.5:10>>
  %pf = tract.cast %pq : tensor<1x2x2x2x!quant.uniform<u8:f32, 0.5:10>> to tensor<1x2x2x2xf32>
  %f = tract.reshape %pf {at = 0 : i64, count = 4 : i64, to = #tract.shape<[1, 8]>} : tensor<1x2x2x2xf32> -> tensor<1x8xf32>
  %fq = tract.cast %f : tensor<1x8xf32> to tensor<1x8x!quant.uniform<u8:f32, 0.5:10>>
  %s = tract.sqrt %x : tensor<1x2x4x4xf32>
  %sq = tract.cast %s : tensor<1x2x4x4xf32> to tensor<1x2x4x4x!quant.uniform<u8:f32, 0.5:10>>
  return %fq, %sq : tensor<1x8x!quant.uniform<u8:f32, 0.5:10>>, tensor<1x2x4x4x!quant.uniform<u8:f32, 0.5:10>>
}
