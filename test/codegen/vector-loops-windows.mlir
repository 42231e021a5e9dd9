// RUN: tract-opt --tract-cpu-vector-loops="lanes=4" --canonicalize --cse %s | FileCheck %s
// RUN: tract-opt --tract-cpu-vector-loops="lanes=4" --canonicalize --cse %s | grep -c "vector.transfer_read %arg0" | FileCheck %s --check-prefix=READS
// RUN: tract-opt --tract-cpu-vector-loops="lanes=4" --canonicalize --cse %s | grep -c "arith.maximumf" | FileCheck %s --check-prefix=MAXES

// A 3×3 max pool with stride 1, channels last: the outputs along w go four
// at a time, each with its own accumulator, and the nine taps are unrolled
// around them, so that four chains of maxima interleave. Neighbouring
// windows read their common taps at the same indices: 6 columns of 3 rows,
// 18 reads for 4 outputs instead of 36, and 36 maxima.
// CHECK-LABEL: func.func @max_pool_nhwc(
// CHECK-SAME:    %[[X:.*]]: memref<1x6x10x4xf32>, %{{.*}}: memref<3x3xf32>, %[[Y:.*]]: memref<1x4x8x4xf32>)
// CHECK:         scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           scf.for %[[W:.*]] = %{{.*}} to %{{.*}} step %[[FOUR:.*]] {
// CHECK-COUNT-4:     vector.transfer_read %[[Y]]
// CHECK:             vector.transfer_read %[[X]]
// CHECK:             arith.maximumf
// CHECK-COUNT-4:     vector.transfer_write %{{.*}}, %[[Y]]
// READS: 18
// MAXES: 36
func.func @max_pool_nhwc(%x: memref<1x6x10x4xf32>, %w: memref<3x3xf32>, %y: memref<1x4x8x4xf32>) {
  linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x6x10x4xf32>, memref<3x3xf32>) outs(%y : memref<1x4x8x4xf32>)
  return
}
