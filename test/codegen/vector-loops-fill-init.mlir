// RUN: tract-opt --tract-cpu-vector-loops="lanes=4" --canonicalize --cse -split-input-file %s | FileCheck %s

// A max pool whose output a fill sets to the lowest value just before it:
// the accumulators start from that value, and neither the fill (a pass
// over the whole output) nor a read of the output is left; the first
// maximum, with the lowest value, folds away: each output's chain starts
// from two taps.
// CHECK-LABEL: func.func @filled_max_pool(
// CHECK-SAME:    %[[X:.*]]: memref<1x6x10x4xf32>, %{{.*}}: memref<3x3xf32>, %[[Y:.*]]: memref<1x4x8x4xf32>)
// CHECK-NOT:     linalg.fill
// CHECK-NOT:     0xFF800000
// CHECK-NOT:     vector.transfer_read %[[Y]]
// CHECK:         %[[T0:.*]] = vector.transfer_read %[[X]]
// CHECK:         %[[T1:.*]] = vector.transfer_read %[[X]]
// CHECK:         arith.maximumf %[[T0]], %[[T1]] : vector<4xf32>
// CHECK-NOT:     vector.transfer_read %[[Y]]
// CHECK-COUNT-4: vector.transfer_write %{{.*}}, %[[Y]]
func.func @filled_max_pool(%x: memref<1x6x10x4xf32>, %w: memref<3x3xf32>, %y: memref<1x4x8x4xf32>) {
  %lowest = arith.constant 0xFF800000 : f32
  linalg.fill ins(%lowest : f32) outs(%y : memref<1x4x8x4xf32>)
  linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x6x10x4xf32>, memref<3x3xf32>) outs(%y : memref<1x4x8x4xf32>)
  return
}

// -----

// The fill is of another buffer, or an op reads the output in between:
// the pool reads its output as before, and the fill stays (as a loop).
// CHECK-LABEL: func.func @fill_apart(
// CHECK-SAME:    %[[X:.*]]: memref<1x6x10x4xf32>, %{{.*}}: memref<3x3xf32>, %[[Y:.*]]: memref<1x4x8x4xf32>, %[[Z:.*]]: memref<1x4x8x4xf32>)
// CHECK:         vector.transfer_write %{{.*}}, %[[Y]]
// CHECK:         vector.transfer_write %{{.*}}, %[[Z]]
// CHECK:         vector.transfer_read %[[Y]]
// CHECK:         arith.maximumf
func.func @fill_apart(%x: memref<1x6x10x4xf32>, %w: memref<3x3xf32>, %y: memref<1x4x8x4xf32>, %z: memref<1x4x8x4xf32>) {
  %lowest = arith.constant 0xFF800000 : f32
  linalg.fill ins(%lowest : f32) outs(%y : memref<1x4x8x4xf32>)
  linalg.copy ins(%y : memref<1x4x8x4xf32>) outs(%z : memref<1x4x8x4xf32>)
  linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x6x10x4xf32>, memref<3x3xf32>) outs(%y : memref<1x4x8x4xf32>)
  return
}
