// RUN: tract-opt --tract-cpu-contraction-kernels="lanes=16 rows=2 vectors-per-row=2 k-block=64 row-block-bytes=0 prefetch-bytes=4096" --canonicalize --cse --split-input-file %s | FileCheck %s

// Weights of 6 KB, at or above prefetch-bytes: each step of a column tile
// (32 columns, two cache lines) prefetches into L2 the two lines that the
// next column tile reads at that step; the last tile, the last full one's
// again (an address inside the weights).
// CHECK:       #[[NEXT:.*]] = affine_map<(d0) -> (64, d0 + 32)>
// CHECK-LABEL: func.func @streamed(
// CHECK-SAME:    %[[A:.*]]: memref<4x16xf32>, %[[B:.*]]: memref<16x96xf32>, %[[C:.*]]: memref<4x96xf32>)
// CHECK-DAG:     %[[C16:.*]] = arith.constant 16 : index
// CHECK:         scf.for %[[COL:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             %[[N:.*]] = affine.min #[[NEXT]](%[[COL]])
// CHECK:             scf.for %[[K:[a-z0-9]+]] = {{.*}} -> (vector<32xf32>, vector<32xf32>) {
// CHECK-NEXT:          memref.prefetch %[[B]][%[[K]], %[[N]]], read, locality<2>, data : memref<16x96xf32>
// CHECK-NEXT:          %[[N2:.*]] = arith.addi %[[N]], %[[C16]] : index
// CHECK-NEXT:          memref.prefetch %[[B]][%[[K]], %[[N2]]], read, locality<2>, data : memref<16x96xf32>
// CHECK-NEXT:          vector.transfer_read %[[B]][%[[K]], %[[COL]]]
// CHECK-COUNT-2:       vector.fma
// CHECK-NOT:           memref.prefetch
// CHECK:               scf.yield
func.func @streamed(%a: memref<4x16xf32>, %b: memref<16x96xf32>, %c: memref<4x96xf32>) {
  linalg.matmul ins(%a, %b : memref<4x16xf32>, memref<16x96xf32>) outs(%c : memref<4x96xf32>)
  return
}

// -----

// Weights of 2 KB stay in cache: no prefetch.
// CHECK-LABEL: func.func @cached(
// CHECK-NOT:     memref.prefetch
// CHECK:         return
func.func @cached(%a: memref<4x16xf32>, %b: memref<16x32xf32>, %c: memref<4x32xf32>) {
  linalg.matmul ins(%a, %b : memref<4x16xf32>, memref<16x32xf32>) outs(%c : memref<4x32xf32>)
  return
}
