// RUN: tract-opt --tract-cpu-pack-weights="lanes=16" --split-input-file %s | FileCheck %s
// RUN: tract-opt --tract-cpu-pack-weights="lanes=16 panel=16" --split-input-file %s | FileCheck %s --check-prefix=PANEL
// RUN: tract-opt --tract-cpu-pack-weights="lanes=16 panel=16 own-memory-bytes=0" --split-input-file %s | FileCheck %s --check-prefix=OWN

// A Linear layer, x · Wᵀ: the lanes walk the 32 outputs, which the weight
// holds on its first axis. The weight is transposed to (in, out) and the
// map follows, so that the kernels load 32 contiguous weights per step.
// CHECK-LABEL: func.func @linear(
// CHECK:         %[[W:.*]] = arith.constant dense<{{\[}}[0.000000e+00, 2.000000e+00, 4.000000e+00], [1.000000e+00, 3.000000e+00, 5.000000e+00]]> : tensor<2x3xf32>
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[WT:.*]], #{{.*}}]
// CHECK-SAME:      ins(%{{.*}}, %[[W]] : tensor<4x2xf32>, tensor<2x3xf32>)
// From own-memory-bytes, the packed weights are a resource blob of their
// own: its alignment (64), then 0, 2, 4, 1, 3, 5 as f32.
// OWN-LABEL: func.func @linear(
// OWN:         %[[W:.*]] = arith.constant dense_resource<tract_packed_weights> : tensor<2x3xf32>
// OWN:         ins(%{{.*}}, %[[W]] : tensor<4x2xf32>, tensor<2x3xf32>)
// OWN:       tract_packed_weights: "0x400000000000000000000040000080400000803F000040400000A040"
#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#y = affine_map<(m, n, k) -> (m, n)>
func.func @linear(%x: tensor<4x2xf32>, %init: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %w = arith.constant dense<[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]> : tensor<3x2xf32>
  %r = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
    ins(%x, %w : tensor<4x2xf32>, tensor<3x2xf32>) outs(%init : tensor<4x3xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// -----

// A 3×3 convolution over a 2×2 map with 64 input and 32 output channels:
// 2 columns would use 2 of 16 lanes, the 32 output channels fill them, over
// a reduction of 576. The kernel (f, c, kh, kw) becomes (c, kh, kw, f).
// CHECK-DAG:   #[[K:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d1)>
// CHECK-LABEL: func.func @small_map(
// CHECK:         %[[P:.*]] = arith.constant dense<1.000000e+00> : tensor<64x3x3x32xf32>
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[K]], #{{.*}}]
// CHECK-SAME:      ins(%{{.*}}, %[[P]] : tensor<1x64x4x4xf32>, tensor<64x3x3x32xf32>)
func.func @small_map(%x: tensor<1x64x4x4xf32>, %init: tensor<1x32x2x2xf32>) -> tensor<1x32x2x2xf32> {
  %k = arith.constant dense<1.0> : tensor<32x64x3x3xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %k : tensor<1x64x4x4xf32>, tensor<32x64x3x3xf32>) outs(%init : tensor<1x32x2x2xf32>) -> tensor<1x32x2x2xf32>
  return %r : tensor<1x32x2x2xf32>
}

// -----

// A wide map keeps its columns on the lanes: nothing to pack.
// CHECK-LABEL: func.func @wide_map(
// CHECK:         linalg.conv_2d_nchw_fchw
func.func @wide_map(%x: tensor<1x64x34x34xf32>, %init: tensor<1x32x32x32xf32>) -> tensor<1x32x32x32xf32> {
  %k = arith.constant dense<1.0> : tensor<32x64x3x3xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %k : tensor<1x64x34x34xf32>, tensor<32x64x3x3xf32>) outs(%init : tensor<1x32x32x32xf32>) -> tensor<1x32x32x32xf32>
  return %r : tensor<1x32x32x32xf32>
}

// -----

// A recurrent cell's gate weight is a slice of one constant: the slice is
// folded into a constant of its own, then packed like any weight.
// CHECK-LABEL: func.func @sliced_gate(
// CHECK-NOT:     tensor.extract_slice
// CHECK:         %[[W:.*]] = arith.constant dense<{{\[}}[0.000000e+00, 2.000000e+00], [1.000000e+00, 3.000000e+00]]> : tensor<2x2xf32>
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.*}}, %[[W]] : tensor<1x2xf32>, tensor<2x2xf32>)
#h = affine_map<(b, g, k) -> (b, k)>
#gw = affine_map<(b, g, k) -> (g, k)>
#o = affine_map<(b, g, k) -> (b, g)>
func.func @sliced_gate(%h: tensor<1x2xf32>, %init: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %all = arith.constant dense<[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]]> : tensor<4x2xf32>
  %gate = tensor.extract_slice %all[0, 0] [2, 2] [1, 1] : tensor<4x2xf32> to tensor<2x2xf32>
  %r = linalg.generic {indexing_maps = [#h, #gw, #o], iterator_types = ["parallel", "parallel", "reduction"]}
    ins(%h, %gate : tensor<1x2xf32>, tensor<2x2xf32>) outs(%init : tensor<1x2xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x2xf32>
  return %r : tensor<1x2xf32>
}

// -----

// With panels of 16 columns: the (k, n) = (2, 32) weights of x · W, already
// n-last, become two panels (2, 2, 16), columns 0-15 then 16-31 of every
// row, read at (n floordiv 16, k, n mod 16).
// PANEL-DAG:   #[[P:.*]] = affine_map<(d0, d1, d2) -> (d1 floordiv 16, d2, d1 mod 16)>
// PANEL-LABEL: func.func @panels(
// PANEL:         %[[W:.*]] = arith.constant dense<{{\[\[\[}}0.000000e+00, 1.000000e+00, {{.*}}, 1.500000e+01], [3.200000e+01, {{.*}}]], {{\[\[}}1.600000e+01, {{.*}}, 3.100000e+01], [4.800000e+01, {{.*}}, 6.300000e+01]]]> : tensor<2x2x16xf32>
// PANEL:         linalg.generic {indexing_maps = [#{{.*}}, #[[P]], #{{.*}}]
// PANEL-SAME:      ins(%{{.*}}, %[[W]] : tensor<?x2xf32>, tensor<2x2x16xf32>)
// Without the option, the weights stay as they are.
// CHECK-LABEL: func.func @panels(
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x2xf32>, tensor<2x32xf32>)
func.func @panels(%x: tensor<?x2xf32>, %init: tensor<?x32xf32>) -> tensor<?x32xf32> {
  %w = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0], [32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0]]> : tensor<2x32xf32>
  %r = linalg.matmul ins(%x, %w : tensor<?x2xf32>, tensor<2x32xf32>) outs(%init : tensor<?x32xf32>) -> tensor<?x32xf32>
  return %r : tensor<?x32xf32>
}

// -----

// Columns that do not fill the last panel (a classifier's 1000 outputs):
// the (k, n) = (2, 20) weights become two panels of 16, the second one's
// last 12 columns zeros.
// PANEL-LABEL: func.func @padded_panel(
// PANEL:         %[[W:.*]] = arith.constant dense<{{\[\[\[}}0.000000e+00, {{.*}}, 1.500000e+01], [2.000000e+01, {{.*}}, 3.500000e+01]], {{\[\[}}1.600000e+01, 1.700000e+01, 1.800000e+01, 1.900000e+01, 0.000000e+00, {{.*}}, 0.000000e+00], [3.600000e+01, 3.700000e+01, 3.800000e+01, 3.900000e+01, 0.000000e+00, {{.*}}]]]> : tensor<2x2x16xf32>
// PANEL:         linalg.generic
// PANEL-SAME:      ins(%{{.*}}, %[[W]] : tensor<?x2xf32>, tensor<2x2x16xf32>) outs(%{{.*}} : tensor<?x20xf32>)
// The same in a blob: rows 0-15 and 20-35, then 16-19 and 36-39 with
// twelve zeros after each.
// OWN-LABEL: func.func @padded_panel(
// OWN:         arith.constant dense_resource<tract_packed_weights> : tensor<2x2x16xf32>
// OWN:       tract_packed_weights: "0x40000000000000000000803F0000004000004040000080400000A0400000C0400000E04000000041000010410000204100003041000040410000504100006041000070410000A0410000A8410000B0410000B8410000C0410000C8410000D0410000D8410000E0410000E8410000F0410000F84100000042000004420000084200000C420000804100008841000090410000984100000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001042000014420000184200001C42000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
func.func @padded_panel(%x: tensor<?x2xf32>, %init: tensor<?x20xf32>) -> tensor<?x20xf32> {
  %w = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0], [20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0]]> : tensor<2x20xf32>
  %r = linalg.matmul ins(%x, %w : tensor<?x2xf32>, tensor<2x20xf32>) outs(%init : tensor<?x20xf32>) -> tensor<?x20xf32>
  return %r : tensor<?x20xf32>
}

// -----

// A channels-last convolution's kernel (kh, kw, c, f), f the lane dim, in
// panels of 16 output channels: (f / 16, kh, kw, c, 16), so that a tile
// reads one contiguous run over all its taps and channels instead of a
// row of f every step.
// PANEL-DAG:   #[[K:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3 floordiv 16, d4, d5, d6, d3 mod 16)>
// PANEL-LABEL: func.func @kernel_panels(
// PANEL:         %[[W:.*]] = arith.constant dense<{{.*}}> : tensor<2x1x1x2x16xf32>
// PANEL:         linalg.generic {indexing_maps = [#{{.*}}, #[[K]], #{{.*}}]
// PANEL-SAME:      ins(%{{.*}}, %[[W]] : tensor<1x2x2x2xf32>, tensor<2x1x1x2x16xf32>)
// CHECK-LABEL: func.func @kernel_panels(
// CHECK:         linalg.conv_2d_nhwc_hwcf
func.func @kernel_panels(%x: tensor<1x2x2x2xf32>, %init: tensor<1x2x2x32xf32>) -> tensor<1x2x2x32xf32> {
  %w = arith.constant dense<1.0> : tensor<1x1x2x32xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x2x2xf32>, tensor<1x1x2x32xf32>) outs(%init : tensor<1x2x2x32xf32>) -> tensor<1x2x2x32xf32>
  return %r : tensor<1x2x2x32xf32>
}
