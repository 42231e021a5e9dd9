// Convolutions with kernel taps that only ever read padding: an atrous 3x3
// of dilation 8 on an 8x8 map (its centre tap alone reads), a 1-D one whose
// first tap reads padding alone, and a `same_upper` one of dilation 8 on 5
// positions. declutter drops those taps (declutter-conv-taps.test).
func.func @main(%x: tensor<1x2x8x8xf32>, %y: tensor<1x1x5xf32>) -> (tensor<1x2x8x8xf32>, tensor<1x1x1xf32>, tensor<1x1x5xf32>) {
  %k = tract.const dense<[[[[0.5, 1.0, -2.0], [3.0, 0.25, 5.0], [6.0, -7.0, 8.0]], [[9.0, 1.5, 11.0], [-1.0, 0.75, 14.0], [15.0, 16.0, 17.0]]], [[[18.0, 19.0, -2.0], [21.0, -1.25, 23.0], [24.0, 25.0, 26.0]], [[27.0, 28.0, 29.0], [30.0, 2.0, 32.0], [33.0, 34.0, 35.0]]]]> : tensor<2x2x3x3xf32>
  %b = tract.const dense<[0.5, -1.0]> : tensor<2xf32>
  %c = tract.conv %x, %k, %b {dilations = array<i64: 8, 8>, padding = #tract<padding explicit>, pads_before = array<i64: 8, 8>, pads_after = array<i64: 8, 8>} : (tensor<1x2x8x8xf32>, tensor<2x2x3x3xf32>, tensor<2xf32>) -> tensor<1x2x8x8xf32>
  %k1 = tract.const dense<[[[1.0, 2.0, 3.0]]]> : tensor<1x1x3xf32>
  %d = tract.conv %y, %k1 {dilations = array<i64: 4>, padding = #tract<padding explicit>, pads_before = array<i64: 4>, pads_after = array<i64: 0>} : (tensor<1x1x5xf32>, tensor<1x1x3xf32>) -> tensor<1x1x1xf32>
  %e = tract.conv %y, %k1 {dilations = array<i64: 8>, padding = #tract<padding same_upper>} : (tensor<1x1x5xf32>, tensor<1x1x3xf32>) -> tensor<1x1x5xf32>
  return %c, %d, %e : tensor<1x2x8x8xf32>, tensor<1x1x1xf32>, tensor<1x1x5xf32>
}
