// RUN: tract-opt --tract-cpu-contraction-kernels="lanes=4 rows=2 vectors-per-row=2 k-block=64 row-block-bytes=96" --canonicalize --cse --split-input-file %s | FileCheck %s

// The rows of A that every column tile reads (10 rows of 6 f32, 240 bytes)
// exceed the budget of 96 bytes: the row tiles go in blocks of 4 rows
// (96 / 24, in whole tiles of 2), each block walking all the column tiles
// of 8 before the next; the blocks end at the rows' end.
// CHECK: #[[END:.*]] = affine_map<(d0) -> (10, d0 + 4)>
// CHECK-LABEL: func.func @row_blocks(
// CHECK:         scf.for %[[R:.*]] = %c0 to %c10 step %c4 {
// CHECK:           %[[BLOCK_END:.*]] = affine.min #[[END]](%[[R]])
// CHECK:           scf.for %[[N:.*]] = %c0 to %c16 step %c8 {
// CHECK:             %[[TILES_END:.*]] = affine.apply #{{.*}}(%[[R]], %[[BLOCK_END]])
// CHECK:             scf.for %[[T:.*]] = %[[R]] to %[[TILES_END]] step %c2 {
// CHECK:               scf.for %{{.*}} = %c0 to %c6 step %c1 iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>)
// CHECK-COUNT-2:         vector.fma {{.*}} : vector<8xf32>
// CHECK:             scf.for %{{.*}} = %[[TILES_END]] to %[[BLOCK_END]] step %c1 {
// CHECK:               scf.for %{{.*}} = %c0 to %c6 step %c1 iter_args({{.*}}) -> (vector<8xf32>)
// CHECK-NOT:     scf.for
func.func @row_blocks(%a: memref<10x6xf32>, %b: memref<6x16xf32>, %c: memref<10x16xf32>) {
  linalg.matmul ins(%a, %b : memref<10x6xf32>, memref<6x16xf32>) outs(%c : memref<10x16xf32>)
  return
}

// -----

// Rows that fit the budget (4 rows of 6 f32): no blocks.
// CHECK-LABEL: func.func @few_rows(
// CHECK-NOT:     affine.min
// CHECK:         scf.for %{{.*}} = %c0 to %c16 step %c8 {
func.func @few_rows(%a: memref<4x6xf32>, %b: memref<6x16xf32>, %c: memref<4x16xf32>) {
  linalg.matmul ins(%a, %b : memref<4x6xf32>, memref<6x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// Two reduction dims (a convolution's window): no blocks, however large
// the rows (10 rows of 2 x 3 f32).
// CHECK-LABEL: func.func @two_reductions(
// CHECK-NOT:     affine.min
// CHECK:         scf.for %{{.*}} = %c0 to %c16 step %c8 {
#a = affine_map<(m, n, k, l) -> (m, k, l)>
#b = affine_map<(m, n, k, l) -> (k, l, n)>
#c = affine_map<(m, n, k, l) -> (m, n)>
func.func @two_reductions(%a: memref<10x2x3xf32>, %b: memref<2x3x16xf32>, %c: memref<10x16xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
    ins(%a, %b : memref<10x2x3xf32>, memref<2x3x16xf32>) outs(%c : memref<10x16xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  return
}
