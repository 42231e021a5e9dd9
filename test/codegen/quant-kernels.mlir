// RUN: tract-opt --tract-cpu-quant-kernels --canonicalize --cse %s | FileCheck %s
// RUN: tract-opt --tract-convert-vector-to-llvm="dot-product=vnni" %s | FileCheck %s --check-prefix=VNNI
// RUN: tract-opt --tract-convert-vector-to-llvm %s | FileCheck %s --check-prefix=PLAIN
// RUN: tract-opt --tract-convert-vector-to-llvm="dot-product=sdot" %s | FileCheck %s --check-prefix=SDOT
// RUN: tract-opt --tract-cpu-quant-kernels="signed-products=true" --canonicalize --cse %s | FileCheck %s --check-prefix=SIGNED

// Weights on the right (10 x 20 ui8 inputs by i8 weights): laid out at
// compile time as (2 groups of 16 channels, 3 quads of k, 64 bytes), the
// last group and quad padded with zeros; the input's zero point folded
// into one i32 per channel (-5 * 10 sums of ones), padded to the groups.
// Per row (3 rows: one at a time) and quad, each group's 64 bytes times
// the row's four bytes broadcast, summed four products to a lane; then
// the correction, the requantization (times 0.5, rounded half to even,
// plus 3, saturated to 0..255) and the write of 16 bytes, the last group
// masked (20 channels).
// CHECK-LABEL: func.func @right(
// CHECK-DAG:   %[[CORRECTION:.*]] = arith.constant dense<[-50, {{.*}}, -50, 0, {{.*}}, 0]> : tensor<32xi32>
// CHECK-DAG:   %[[WEIGHTS:.*]] = arith.constant dense<"0x{{.*}}"> : tensor<2x3x64xi8>
// CHECK:       scf.for %[[ROW:.*]] = %c0 to %c3 step %c1
// CHECK:         scf.for %[[Q:.*]] = %c0 to %c3 step %c1 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<16xi32>, vector<16xi32>)
// CHECK:           vector.transfer_read %[[WEIGHTS]][%c0, %[[Q]], %c0]
// CHECK:           vector.transfer_read %[[WEIGHTS]][%c1, %[[Q]], %c0]
// CHECK:           %[[K:.*]] = arith.muli %[[Q]], %c4
// CHECK:           %[[QUAD:.*]] = vector.transfer_read %{{.*}}[%[[ROW]], %[[K]]], %c0_i8 : tensor<3x10xi8>, vector<4xi8>
// CHECK:           %[[WORD:.*]] = vector.bitcast %[[QUAD]] : vector<4xi8> to vector<1xi32>
// CHECK:           vector.broadcast %{{.*}} : i32 to vector<16xi32>
// CHECK:           arith.extui %{{.*}} : vector<16x4xi8> to vector<16x4xi32>
// CHECK:           arith.extsi %{{.*}} : vector<16x4xi8> to vector<16x4xi32>
// CHECK:           vector.multi_reduction <add>, %{{.*}}, %{{.*}} [1] : vector<16x4xi32> to vector<16xi32>
// CHECK:         vector.transfer_read %[[CORRECTION]][%c0]
// CHECK:         math.roundeven
// CHECK:         arith.maximumf
// CHECK:         arith.minimumf
// CHECK:         arith.trunci %{{.*}} : vector<16xi32> to vector<16xi8>
// CHECK:         vector.transfer_write %{{.*}}[%[[ROW]], %c0] {in_bounds = [true]} : vector<16xi8>, tensor<3x20xi8>
// CHECK:         vector.transfer_write %{{.*}}[%[[ROW]], %c16] : vector<16xi8>, tensor<3x20xi8>
func.func @right(%x: tensor<3x10xui8>) -> tensor<3x20xui8> {
  %w = tract.const dense<1> : tensor<10x20xi8>
  %y = tract.quant_matmul %x, %w {input_zero = 5 : i64, multiplier = array<f32: 0.5>, output_zero = 3 : i64} : (tensor<3x10xui8>, tensor<10x20xi8>) -> tensor<3x20xui8>
  return %y : tensor<3x20xui8>
}

// With k a multiple of 4 (8), each row's quads are read whole: an
// in-bounds load, not a masked one (which cost a 512 x 512 product a third
// of its time).
// CHECK-LABEL: func.func @right_whole(
// CHECK:       vector.transfer_read %{{.*}}[%{{.*}}, %{{.*}}], %c0_i8 {in_bounds = [true]} : tensor<2x8xi8>, vector<4xi8>
func.func @right_whole(%x: tensor<2x8xui8>) -> tensor<2x16xi32> {
  %w = tract.const dense<1> : tensor<8x16xi8>
  %y = tract.quant_matmul %x, %w : (tensor<2x8xui8>, tensor<8x16xi8>) -> tensor<2x16xi32>
  return %y : tensor<2x16xi32>
}

// Weights on the left (a convolution's 2 x 6 kernel by 6 x 70 patches):
// i32 sums, no requantization. The weights (ui8, shifted by -128 to i8
// with their zero point 130 becoming 2) are rows of k rounded up to 8;
// each tile of 64 columns of the input is packed at run time into quads,
// four rows of 16 bytes interleaved, the second quad's last two rows
// zeros; with a weight zero point, each group's sums of inputs come from
// the same four-product sums against ones (folded to a widening and a
// reduction). Then per channel the four groups, corrected by the channel's
// constant (bias - xz' * sum of w' + K * xz' * wz') and by its zero point
// times the group's sums of inputs.
// CHECK-LABEL: func.func @left(
// CHECK-DAG:   %[[CORRECTION:.*]] = arith.constant dense<[759, 723]> : tensor<2xi32>
// CHECK-DAG:   %[[WEIGHTS:.*]] = arith.constant dense<{{\[}}[-127, -126, -125, -124, -123, -122, 0, 0], [-121, -120, -119, -118, -117, -116, 0, 0]]> : tensor<2x8xi8>
// CHECK:       scf.forall (%[[T:.*]]) in (2) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<1x2x70xi32>)
// CHECK:         %[[PANEL:.*]] = tensor.empty() : tensor<2x4x64xi8>
// CHECK-COUNT-4: vector.transfer_read %{{.*}} : tensor<1x6x70xi8>, vector<16xi8>
// CHECK:         vector.interleave %{{.*}}, %{{.*}} : vector<16xi8> -> vector<32xi8>
// CHECK:         vector.interleave %{{.*}}, %{{.*}} : vector<16xi8> -> vector<32xi8>
// CHECK:         vector.interleave %{{.*}}, %{{.*}} : vector<16xi16> -> vector<32xi16>
// CHECK:         vector.transfer_write %{{.*}}, %[[PANEL]][%c0, %c0, %c0] {in_bounds = [true]} : vector<64xi8>, tensor<2x4x64xi8>
// CHECK:         vector.multi_reduction <add>
// CHECK:         vector.transfer_read %[[WEIGHTS]]{{.*}} : tensor<2x8xi8>, vector<4xi8>
// CHECK:         tensor.extract %[[CORRECTION]]
// CHECK:         arith.muli %{{.*}} : vector<16xi32>
// CHECK:         vector.transfer_write %{{.*}} : vector<16xi32>, tensor<1x2x?xi32>
func.func @left(%x: tensor<6x70xui8>) -> tensor<2x70xi32> {
  %w = tract.const dense<[[1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 12]]> : tensor<2x6xui8>
  %y = tract.quant_matmul %w, %x {input_zero = 1 : i64, weight_zero = array<i64: 130>, weights_left} : (tensor<2x6xui8>, tensor<6x70xui8>) -> tensor<2x70xi32>
  return %y : tensor<2x70xi32>
}

// The four-product sums become AVX-512 VNNI's vpdpbusd when the target has
// it (so do the sums of four unsigned bytes, against ones), and a
// widening multiply whose quads are added lane to lane from four strided
// shuffles otherwise.
// VNNI-LABEL: func.func @dot(
// VNNI:       llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// VNNI-LABEL: func.func @sum(
// VNNI:       %[[ONES:.*]] = arith.constant dense<1> : vector<64xi8>
// VNNI:       llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{.*}}, %{{.*}}, %[[ONES]])
// PLAIN-LABEL: func.func @dot(
// PLAIN-NOT:   vpdpbusd
// PLAIN:       llvm.shufflevector %{{.*}} [0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60] : vector<64xi32>
// PLAIN:       arith.addi %{{.*}} : vector<16xi32>
// PLAIN:       llvm.shufflevector %{{.*}} [3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47, 51, 55, 59, 63] : vector<64xi32>
func.func @dot(%acc: vector<16xi32>, %u: vector<64xi8>, %s: vector<64xi8>) -> vector<16xi32> {
  %a = vector.shape_cast %u : vector<64xi8> to vector<16x4xi8>
  %b = vector.shape_cast %s : vector<64xi8> to vector<16x4xi8>
  %aw = arith.extui %a : vector<16x4xi8> to vector<16x4xi32>
  %bw = arith.extsi %b : vector<16x4xi8> to vector<16x4xi32>
  %p = arith.muli %aw, %bw : vector<16x4xi32>
  %r = vector.multi_reduction <add>, %p, %acc [1] : vector<16x4xi32> to vector<16xi32>
  return %r : vector<16xi32>
}

func.func @sum(%acc: vector<16xi32>, %u: vector<64xi8>) -> vector<16xi32> {
  %a = vector.shape_cast %u : vector<64xi8> to vector<16x4xi8>
  %aw = arith.extui %a : vector<16x4xi8> to vector<16x4xi32>
  %r = vector.multi_reduction <add>, %aw, %acc [1] : vector<16x4xi32> to vector<16xi32>
  return %r : vector<16xi32>
}

// Depthwise, stride 2 along both axes: an scf.forall over (images,
// channels); per channel the nine taps (w - weight_zero, f32) and the
// correction (bias - x_zero * their sum) broadcast; blocks of 4 output rows
// (then single rows), each input row they read loaded once per tap column
// (32 bytes, every other one kept, widened to f32) and multiply-added into
// the rows it feeds; then requantized and written 16 at a time (masked: 3
// columns).
// CHECK-LABEL: func.func @depthwise(
// CHECK-DAG:   arith.constant dense<{{\[}}{{.*}}]> : tensor<2x9xf32>
// CHECK:       scf.forall (%[[C:.*]]) in (2) shared_outs
// CHECK-COUNT-9: tensor.extract %{{.*}}[%[[C]], %{{.*}}] : tensor<2x9xf32>
// CHECK:         tensor.extract %{{.*}}[%[[C]]] : tensor<2xf32>
// CHECK:         scf.for %[[ROW:.*]] = %c0 to %c3 step %c1
// CHECK:           %[[Y:.*]] = arith.muli %[[ROW]], %c2 : index
// CHECK:           vector.transfer_read %{{.*}}[%c0, %[[C]], %[[Y]], %c0], %c0_i8 : tensor<1x2x7x7xi8>, vector<32xi8>
// CHECK:           vector.shuffle %{{.*}}, %{{.*}} [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30] : vector<32xi8>, vector<32xi8>
// CHECK:           arith.extui %{{.*}} : vector<16xi8> to vector<16xi32>
// CHECK:           vector.fma
// CHECK:           math.roundeven
// CHECK:           vector.transfer_write %{{.*}}[%c0, %c0, %[[ROW]], %c0] : vector<16xi8>, tensor<1x1x3x3xi8>
func.func @depthwise(%x: tensor<1x2x7x7xui8>) -> tensor<1x2x3x3xui8> {
  %w = tract.const dense<[[[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[-1, -2, -3], [-4, -5, -6], [-7, -8, -9]]]> : tensor<2x3x3xi8>
  %y = tract.quant_depthwise %x, %w {dilations = array<i64: 1, 1>, input_zero = 3 : i64, multiplier = array<f32: 0.1, 0.2>, output_zero = 7 : i64, strides = array<i64: 2, 2>} : (tensor<1x2x7x7xui8>, tensor<2x3x3xi8>) -> tensor<1x2x3x3xui8>
  return %y : tensor<1x2x3x3xui8>
}

// Signed by signed bytes: four of AArch64's sdot, each on a quarter.
// SDOT-LABEL: func.func @signed_dot(
// SDOT-COUNT-4: llvm.call_intrinsic "llvm.aarch64.neon.sdot.v4i32.v16i8"(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<4xi32>, vector<16xi8>, vector<16xi8>) -> vector<4xi32>
// VNNI-LABEL: func.func @signed_dot(
// VNNI-NOT:   vpdpbusd
func.func @signed_dot(%acc: vector<16xi32>, %u: vector<64xi8>, %s: vector<64xi8>) -> vector<16xi32> {
  %a = vector.shape_cast %u : vector<64xi8> to vector<16x4xi8>
  %b = vector.shape_cast %s : vector<64xi8> to vector<16x4xi8>
  %aw = arith.extsi %a : vector<16x4xi8> to vector<16x4xi32>
  %bw = arith.extsi %b : vector<16x4xi8> to vector<16x4xi32>
  %p = arith.muli %aw, %bw : vector<16x4xi32>
  %r = vector.multi_reduction <add>, %p, %acc [1] : vector<16x4xi32> to vector<16xi32>
  return %r : vector<16xi32>
}

// With signed products, unsigned inputs are flipped to signed bytes (xor
// 0x80) and their zero point moved by -128: the correction of @right is
// -(5 - 128) * 10 = 1230 per channel, and the inputs widen as signed.
// SIGNED-LABEL: func.func @right(
// SIGNED:       arith.constant dense<[1230, {{.*}}, 1230, 0, {{.*}}, 0]> : tensor<32xi32>
// SIGNED:       arith.xori %{{.*}} : vector<4xi8>
// SIGNED:       arith.extsi %{{.*}} : vector<16x4xi8> to vector<16x4xi32>
// SIGNED:       arith.extsi %{{.*}} : vector<16x4xi8> to vector<16x4xi32>

// A channels-last convolution (5 x 6 pixels of 4 ui8 channels, a 3x3
// kernel of i8, strides 1 and 2) is the product with the weights on the
// right whose rows are the 3 x 2 output pixels: k runs over (ky, kx, c),
// and each kernel row's 3 x 4 bytes are contiguous in the input seen as
// (B, H, W * C), so the outer loop is over ky (3) and the inner over its
// 3 quads. A tile of 6 pixels reads its broadcast quads at rows ky + oy and
// at byte 4q + 8ox (the column stride 2 times 4 channels); the correction
// is -5 * 36 per channel.
// CHECK-LABEL: func.func @conv_last(
// CHECK-DAG:   %[[CORRECTION:.*]] = arith.constant dense<[-180, {{.*}}, -180, 0, {{.*}}, 0]> : tensor<16xi32>
// CHECK-DAG:   %[[WEIGHTS:.*]] = arith.constant dense<"0x{{.*}}"> : tensor<1x9x64xi8>
// CHECK:       %[[OUT:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2], [3]] : tensor<1x3x2x8xi8> into tensor<6x8xi8>
// CHECK:       %[[ROWS:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : tensor<1x5x6x4xi8> into tensor<1x5x24xi8>
// CHECK:       scf.for %[[KY:.*]] = %c0 to %c3 step %c1 iter_args({{.*}}) -> (vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>)
// CHECK:         %[[Y1:.*]] = arith.addi %[[KY]], %c1
// CHECK:         %[[Y2:.*]] = arith.addi %[[KY]], %c2
// CHECK:         %[[FIRST:.*]] = arith.muli %[[KY]], %c3
// CHECK:         scf.for %[[Q:.*]] = %c0 to %c3 step %c1
// CHECK:           %[[QUAD:.*]] = arith.addi %[[FIRST]], %[[Q]]
// CHECK:           vector.transfer_read %[[WEIGHTS]][%c0, %[[QUAD]], %c0]
// CHECK:           %[[C:.*]] = arith.muli %[[Q]], %c4
// CHECK:           vector.transfer_read %[[ROWS]][%c0, %[[KY]], %[[C]]], %c0_i8 {in_bounds = [true]} : tensor<1x5x24xi8>, vector<4xi8>
// CHECK:           %[[C8:.*]] = arith.addi %[[C]], %c8
// CHECK:           vector.transfer_read %[[ROWS]][%c0, %[[KY]], %[[C8]]], %c0_i8 {in_bounds = [true]} : tensor<1x5x24xi8>, vector<4xi8>
// CHECK:           vector.transfer_read %[[ROWS]][%c0, %[[Y1]], %[[C]]]
// CHECK:           vector.transfer_read %[[ROWS]][%c0, %[[Y1]], %[[C8]]]
// CHECK:           vector.transfer_read %[[ROWS]][%c0, %[[Y2]], %[[C]]]
// CHECK:           vector.transfer_read %[[ROWS]][%c0, %[[Y2]], %[[C8]]]
// CHECK:       vector.transfer_read %[[CORRECTION]][%c0]
// CHECK:       math.roundeven
// CHECK:       vector.transfer_write %{{.*}}, %[[OUT]][%c0, %c0] : vector<16xi8>, tensor<6x8xi8>
// CHECK:       tensor.expand_shape %{{.*}} {{\[}}[0, 1, 2], [3]] output_shape [1, 3, 2, 8] : tensor<6x8xi8> into tensor<1x3x2x8xi8>
func.func @conv_last(%x: tensor<1x5x6x4xui8>) -> tensor<1x3x2x8xui8> {
  %w = tract.const dense<1> : tensor<3x3x4x8xi8>
  %y = tract.quant_conv %x, %w {channels_last, dilations = array<i64: 1, 1>, strides = array<i64: 1, 2>, input_zero = 5 : i64, multiplier = array<f32: 0.5>, output_zero = 3 : i64} : (tensor<1x5x6x4xui8>, tensor<3x3x4x8xi8>) -> tensor<1x3x2x8xui8>
  return %y : tensor<1x3x2x8xui8>
}

// Dilated across the columns, the taps are not contiguous: one loop over
// the 9 taps, each a quad of the 4 channels at (2 ky, 2 kx * 4). i8
// inputs are flipped to unsigned; ui8 weights with a zero point (2, 126 -
// 128 shifted) take each pixel's sums of inputs, from the same products
// against ones: correction -128 * 36 * -127 + 36 * 128 * -126 = 4608.
// CHECK-LABEL: func.func @conv_dilated(
// CHECK-DAG:   %[[CORRECTION:.*]] = arith.constant dense<4608> : tensor<16xi32>
// CHECK-DAG:   %[[ZEROS:.*]] = arith.constant dense<-126> : tensor<16xi32>
// CHECK:       scf.for %[[TAP:.*]] = %c0 to %c9 step %c1
// CHECK:         %[[KY:.*]] = arith.divui %[[TAP]], %c3
// CHECK:         %[[Y:.*]] = arith.muli %[[KY]], %c2
// CHECK:         %[[KX:.*]] = arith.remui %[[TAP]], %c3
// CHECK:         %[[X:.*]] = arith.muli %[[KX]], %c8
// CHECK:         %[[QUAD:.*]] = vector.transfer_read %{{.*}}[%c0, %[[Y]], %[[X]]], %c-128_i8 {in_bounds = [true]} : tensor<1x5x20xi8>, vector<4xi8>
// CHECK:         arith.xori %[[QUAD]]
// CHECK:         vector.multi_reduction <add>
// CHECK:         vector.multi_reduction <add>
// CHECK:       vector.transfer_read %[[CORRECTION]][%c0]
// CHECK:       vector.transfer_read %[[ZEROS]][%c0]
// CHECK:       arith.subi
func.func @conv_dilated(%x: tensor<1x5x5x4xi8>) -> tensor<1x1x1x16xi32> {
  %w = tract.const dense<1> : tensor<3x3x4x16xui8>
  %y = tract.quant_conv %x, %w {channels_last, dilations = array<i64: 2, 2>, strides = array<i64: 1, 1>, weight_zero = array<i64: 2>} : (tensor<1x5x5x4xi8>, tensor<3x3x4x16xui8>) -> tensor<1x1x1x16xi32>
  return %y : tensor<1x1x1x16xi32>
}

// Channels first (tract-channels-last did not run, or left a 1x1 one so),
// the convolution is the patches of its input, a slice per tap
// concatenated, by its kernel on the left (the input's tiles packed into
// 5 quads of the 18 k).
// CHECK-LABEL: func.func @conv_first(
// CHECK-COUNT-9: tract.add_axis
// CHECK:       tract.concat {{.*}} {axis = 2 : i64}
// CHECK:       tract.reshape %{{.*}} {at = 3 : i64, count = 2 : i64, to = #tract.shape<[4]>} : tensor<1x2x9x2x2xui8> -> tensor<1x2x9x4xui8>
// CHECK:       tract.reshape %{{.*}} {at = 1 : i64, count = 2 : i64, to = #tract.shape<[18]>} : tensor<1x2x9x4xui8> -> tensor<1x18x4xui8>
// CHECK:       tensor.empty() : tensor<5x4x64xi8>
// CHECK:       tract.reshape %{{.*}} {at = 2 : i64, count = 1 : i64, to = #tract.shape<[2, 2]>} : tensor<1x3x4xi32> -> tensor<1x3x2x2xi32>
func.func @conv_first(%x: tensor<1x2x4x4xui8>) -> tensor<1x3x2x2xi32> {
  %w = tract.const dense<1> : tensor<3x2x3x3xi8>
  %y = tract.quant_conv %x, %w {dilations = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xui8>, tensor<3x2x3x3xi8>) -> tensor<1x3x2x2xi32>
  return %y : tensor<1x3x2x2xi32>
}

// A depthwise convolution channels last: f32 lanes along the 16 channels,
// one iteration of the scf.forall per output row (the batch and the
// channel groups, one each, fold away), 8 output pixels at a time whose
// 3x3 taps read each of the 10 input pixels of a kernel row once: 30
// loads for 72 multiply-adds. The taps are a (9, 16) table, the correction
// -3 * 2 * 9 per channel.
// CHECK-LABEL: func.func @depthwise_last(
// CHECK-DAG:   %[[TAPS:.*]] = arith.constant dense<2.000000e+00> : tensor<9x16xf32>
// CHECK-DAG:   %[[CORRECTION:.*]] = arith.constant dense<-5.400000e+01> : tensor<16xf32>
// CHECK:       scf.forall (%[[OY:.*]]) in (2)
// CHECK:         tensor.extract_slice %{{.*}}[0, %[[OY]], 0, 0] [1, 1, 8, 16] [1, 1, 1, 1]
// CHECK-COUNT-9: vector.transfer_read %[[TAPS]]
// CHECK:         %[[ACC:.*]] = vector.transfer_read %[[CORRECTION]]
// CHECK:         %[[FIRST:.*]] = vector.transfer_read %[[INPUT:.*]][%c0, %[[OY]], %c0, %c0], %c0_i8 {in_bounds = [true]} : tensor<1x4x10x16xi8>, vector<16xi8>
// CHECK:         %[[WIDE:.*]] = arith.extui %[[FIRST]] : vector<16xi8> to vector<16xi32>
// CHECK:         %[[F:.*]] = arith.sitofp %[[WIDE]] : vector<16xi32> to vector<16xf32>
// CHECK:         vector.fma %[[F]], %{{.*}}, %[[ACC]] : vector<16xf32>
// CHECK-COUNT-29: vector.transfer_read %[[INPUT]]
// CHECK-NOT:     vector.transfer_read %[[INPUT]]
// CHECK:         math.roundeven
// CHECK:         vector.transfer_write %{{.*}}[%c0, %c0, %c0, %c0] {in_bounds = [true]} : vector<16xi8>, tensor<1x1x8x16xi8>
func.func @depthwise_last(%x: tensor<1x4x10x16xui8>) -> tensor<1x2x8x16xui8> {
  %w = tract.const dense<2> : tensor<16x3x3xi8>
  %y = tract.quant_depthwise %x, %w {channels_last, dilations = array<i64: 1, 1>, strides = array<i64: 1, 1>, input_zero = 3 : i64, multiplier = array<f32: 0.25>, output_zero = 1 : i64} : (tensor<1x4x10x16xui8>, tensor<16x3x3xi8>) -> tensor<1x2x8x16xui8>
  return %y : tensor<1x2x8x16xui8>
}
