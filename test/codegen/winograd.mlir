// RUN: tract-opt --tract-cpu-winograd="min-tiles=1 min-channels=1" -split-input-file %s | FileCheck %s

// A 3×3 convolution of stride 1 on a 5×6 output (3×3 blocks of 2×2, one
// row cut off) by a kernel of ones, from a bias. The input is padded by a
// row to whole blocks; V = Bᵀ d B is one op over (n, block row, block
// column, point, c) that reads the block's 4×4 patch (16 shifted views,
// the first and last checked) times the point's coefficients; the products
// are one contraction over (block, point, f, c) by the kernel's transform
// (G 1 Gᵀ: the outer product of G's row sums 1, 1.5, 0.5, 1), blocks
// first; the output transform starts from the bias and reads the 16
// points of its block.
// CHECK-DAG:     #[[PATCH0:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 * 2, d2 * 2, d4)>
// CHECK-DAG:     #[[PATCH15:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 * 2 + 3, d2 * 2 + 3, d4)>
// CHECK-DAG:     #[[POINT15:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d3, 15)>
// CHECK-DAG:     #[[V:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG:     #[[U:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3, d2)>
// CHECK-DAG:     #[[M:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG:     #[[BIAS:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d5)>
// CHECK-DAG:     #[[M15:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d3, 15, d5)>
// CHECK-DAG:     #[[AT15:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d2, d4, 15)>
// CHECK-LABEL: func.func @conv3x3(
// CHECK-SAME:    %[[X:.*]]: tensor<1x7x8x1xf32>, %[[B:.*]]: tensor<1xf32>)
// CHECK:         %[[P:.*]] = tensor.pad %[[X]] low[0, 0, 0, 0] high[0, 1, 0, 0]
// CHECK:         } : tensor<1x7x8x1xf32> to tensor<1x8x8x1xf32>
// CHECK:         %[[BT:.*]] = arith.constant dense<"0x0000803F00000000000080BF
// CHECK:         %[[VT:.*]] = linalg.generic {indexing_maps = [#[[PATCH0]], {{.*}}, #[[PATCH15]], {{.*}}, #[[POINT15]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[P]], {{.*}}, %[[BT]] : {{.*}}) outs(%{{.*}} : tensor<1x3x3x16x1xf32>)
// CHECK-COUNT-16: arith.mulf
// CHECK:         %[[VC:.*]] = tensor.collapse_shape %[[VT]] {{\[\[}}0, 1, 2], [3], [4]] : tensor<1x3x3x16x1xf32> into tensor<9x16x1xf32>
// CHECK:         %[[UT:.*]] = arith.constant dense<{{\[\[\[}}1.000000e+00]], {{\[\[}}1.500000e+00]], {{\[\[}}5.000000e-01]], {{\[\[}}1.000000e+00]], {{\[\[}}1.500000e+00]], {{\[\[}}2.250000e+00]], {{\[\[}}7.500000e-01]], {{\[\[}}1.500000e+00]], {{\[\[}}5.000000e-01]], {{\[\[}}7.500000e-01]], {{\[\[}}2.500000e-01]], {{\[\[}}5.000000e-01]], {{\[\[}}1.000000e+00]], {{\[\[}}1.500000e+00]], {{\[\[}}5.000000e-01]], {{\[\[}}1.000000e+00]]]> : tensor<16x1x1xf32>
// CHECK:         %[[ZEROS:.*]] = linalg.fill
// CHECK:         %[[MT:.*]] = linalg.generic {indexing_maps = [#[[V]], #[[U]], #[[M]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[VC]], %[[UT]] : tensor<9x16x1xf32>, tensor<16x1x1xf32>) outs(%[[ZEROS]] : tensor<9x16x1xf32>)
// CHECK:         %[[ME:.*]] = tensor.expand_shape %[[MT]] {{\[\[}}0, 1, 2], [3], [4]] output_shape [1, 3, 3, 16, 1]
// CHECK:         %[[AT:.*]] = arith.constant dense<{{\[\[\[}}1.000000e+00, 1.000000e+00, 1.000000e+00, 0.000000e+00,
// CHECK:         %[[Y:.*]] = linalg.generic {indexing_maps = [#[[BIAS]], {{.*}}, #[[M15]], {{.*}}, #[[AT15]], #{{.*}}], {{.*}} ins(%[[B]], %[[ME]], {{.*}}, %[[AT]] : {{.*}}) outs(%{{.*}} : tensor<1x3x2x3x2x1xf32>)
// CHECK-COUNT-16: arith.mulf
// CHECK:         %[[SUM:.*]] = arith.addf %in, %{{.*}} : f32
// CHECK-NEXT:    linalg.yield %[[SUM]]
// CHECK:         %[[YC:.*]] = tensor.collapse_shape %[[Y]] {{\[\[}}0], [1, 2], [3, 4], [5]] : tensor<1x3x2x3x2x1xf32> into tensor<1x6x6x1xf32>
// CHECK:         %[[YS:.*]] = tensor.extract_slice %[[YC]][0, 0, 0, 0] [1, 5, 6, 1] [1, 1, 1, 1]
// CHECK-NOT:     linalg.conv_2d_nhwc_hwcf
// CHECK:         return %[[YS]]
func.func @conv3x3(%x: tensor<1x7x8x1xf32>, %bias: tensor<1xf32>) -> tensor<1x5x6x1xf32> {
  %w = arith.constant dense<1.0> : tensor<3x3x1x1xf32>
  %e = tensor.empty() : tensor<1x5x6x1xf32>
  %b = linalg.broadcast ins(%bias : tensor<1xf32>) outs(%e : tensor<1x5x6x1xf32>) dimensions = [0, 1, 2]
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : tensor<1x7x8x1xf32>, tensor<3x3x1x1xf32>) outs(%b : tensor<1x5x6x1xf32>) -> tensor<1x5x6x1xf32>
  return %y : tensor<1x5x6x1xf32>
}

// -----

// Stride 2, a kernel that is not a constant, or an output that starts
// from another op's result: the convolution stays.
// CHECK-LABEL: func.func @kept(
// CHECK-COUNT-3: linalg.conv_2d_nhwc_hwcf
// CHECK-NOT:     tensor.pad
func.func @kept(%x: tensor<1x9x9x2xf32>, %k: tensor<3x3x2x2xf32>, %init: tensor<1x7x7x2xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x7x7x2xf32>, tensor<1x7x7x2xf32>) {
  %w = arith.constant dense<1.0> : tensor<3x3x2x2xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<1x4x4x2xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %s2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %w : tensor<1x9x9x2xf32>, tensor<3x3x2x2xf32>) outs(%f2 : tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %e = tensor.empty() : tensor<1x7x7x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x7x7x2xf32>) -> tensor<1x7x7x2xf32>
  %a = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %k : tensor<1x9x9x2xf32>, tensor<3x3x2x2xf32>) outs(%f : tensor<1x7x7x2xf32>) -> tensor<1x7x7x2xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : tensor<1x9x9x2xf32>, tensor<3x3x2x2xf32>) outs(%init : tensor<1x7x7x2xf32>) -> tensor<1x7x7x2xf32>
  return %s2, %a, %c : tensor<1x4x4x2xf32>, tensor<1x7x7x2xf32>, tensor<1x7x7x2xf32>
}
