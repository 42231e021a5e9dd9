// RUN: tract-opt --tract-fuse-pads --split-input-file %s | FileCheck %s

// The activation before a padded convolution computes into the interior of
// the padded tensor, which is filled with the padding value first.
// CHECK-LABEL: func.func @relu_then_pad(
// CHECK:         %[[EMPTY:.*]] = tensor.empty() : tensor<1x2x6x6xf32>
// CHECK:         %[[FILLED:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[EMPTY]] : tensor<1x2x6x6xf32>)
// CHECK:         %[[INTERIOR:.*]] = tensor.extract_slice %[[FILLED]][0, 0, 1, 1] [1, 2, 4, 4] [1, 1, 1, 1]
// CHECK:         %[[RELU:.*]] = linalg.generic {{.*}} outs(%[[INTERIOR]] : tensor<1x2x4x4xf32>)
// CHECK:           arith.maximumf
// CHECK:         tensor.insert_slice %[[RELU]] into %[[FILLED]][0, 0, 1, 1] [1, 2, 4, 4] [1, 1, 1, 1]
// CHECK-NOT:     tensor.pad
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @relu_then_pad(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x4x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
    ins(%x : tensor<1x2x4x4xf32>) outs(%e : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x4xf32>
  %p = tensor.pad %r low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x2x4x4xf32> to tensor<1x2x6x6xf32>
  return %p : tensor<1x2x6x6xf32>
}

// -----

// The activation also read unpadded (a residual block's sum: the next
// block's padded convolution and its residual add both read it) is
// computed once, into the interior; the other reader takes the interior of
// the padded tensor.
// CHECK-LABEL: func.func @relu_read_twice(
// CHECK:         %[[FILLED:.*]] = linalg.fill
// CHECK:         %[[INTERIOR:.*]] = tensor.extract_slice %[[FILLED]][0, 0, 1, 1] [1, 2, 4, 4] [1, 1, 1, 1]
// CHECK:         %[[RELU:.*]] = linalg.generic {{.*}} outs(%[[INTERIOR]] : tensor<1x2x4x4xf32>)
// CHECK:         %[[PADDED:.*]] = tensor.insert_slice %[[RELU]] into %[[FILLED]][0, 0, 1, 1] [1, 2, 4, 4] [1, 1, 1, 1]
// CHECK:         %[[READ:.*]] = tensor.extract_slice %[[PADDED]][0, 0, 1, 1] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[PADDED]], %[[READ]]
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @relu_read_twice(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x6x6xf32>, tensor<1x2x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x4x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
    ins(%x : tensor<1x2x4x4xf32>) outs(%e : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x4xf32>
  %p = tensor.pad %r low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x2x4x4xf32> to tensor<1x2x6x6xf32>
  return %p, %r : tensor<1x2x6x6xf32>, tensor<1x2x4x4xf32>
}
