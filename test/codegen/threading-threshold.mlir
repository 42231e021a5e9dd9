// RUN: tract-opt --tract-cpu-contraction-kernels="lanes=16 rows=6 vectors-per-row=2 k-block=256 threads=2" --tract-cpu-vector-loops="lanes=16 threads=2" --canonicalize --cse --split-input-file %s | FileCheck %s --check-prefix=MODEL
// RUN: tract-opt --tract-cpu-contraction-kernels="lanes=16 rows=6 vectors-per-row=2 k-block=256 threads=2 threading-threshold=0" --tract-cpu-vector-loops="lanes=16 threads=2 threading-threshold=0" --canonicalize --cse --split-input-file %s | FileCheck %s --check-prefix=ZERO
// RUN: tract-opt --tract-cpu-contraction-kernels="lanes=16 rows=6 vectors-per-row=2 k-block=256 threads=2 threading-threshold=1e9" --tract-cpu-vector-loops="lanes=16 threads=2 threading-threshold=1e9" --canonicalize --cse --split-input-file %s | FileCheck %s --check-prefix=HIGH

// tract's --threading-threshold overrides the cost model. A 64x16x64
// product (131 kflop) is below what a fork and a join are worth: serial
// by default, shared at threshold 0; the 256³ one (33.6 Mflop) is shared
// by default, serial at a threshold of 1 Gflop.
// MODEL-LABEL: func.func @small(
// MODEL-NOT:     scf.parallel
// MODEL-LABEL: func.func @large(
// MODEL:         scf.parallel
// ZERO-LABEL:  func.func @small(
// ZERO:          scf.parallel
// ZERO-LABEL:  func.func @large(
// ZERO:          scf.parallel
// HIGH-NOT:      scf.parallel
func.func @small(%a: memref<64x16xf32>, %b: memref<16x64xf32>, %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x16xf32>, memref<16x64xf32>) outs(%c : memref<64x64xf32>)
  return
}
func.func @large(%a: memref<256x256xf32>, %b: memref<256x256xf32>, %c: memref<256x256xf32>) {
  linalg.matmul ins(%a, %b : memref<256x256xf32>, memref<256x256xf32>) outs(%c : memref<256x256xf32>)
  return
}

// -----

// A map of 1000 elements: 15 full tiles of 64 lanes, shared at threshold
// 0 only.
// MODEL-LABEL: func.func @map(
// MODEL-NOT:     scf.parallel
// ZERO-LABEL:  func.func @map(
// ZERO:          scf.parallel
// HIGH-LABEL:  func.func @map(
// HIGH-NOT:      scf.parallel
func.func @map(%x: memref<1x1000xf32>, %y: memref<1x1000xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<1x1000xf32>) outs(%y : memref<1x1000xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// A map of 8 elements has no loop of two tiles to share, even at 0.
// ZERO-LABEL:  func.func @tiny(
// ZERO-NOT:      scf.parallel
func.func @tiny(%x: memref<8xf32>, %y: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// A map whose rows are known only at run time (a decoding step's tokens):
// the choice takes them as many and shares the column tiles, but the
// chunks are two only when the rows at run time make the break-even:
// 180 kflop at 2 + 16 x 2 flops an element (memoryBoundWork), 6 rows of
// 1000. Below, the one chunk's parallel region runs on the calling thread
// (tract-cpu-fork-if).
// MODEL-LABEL: func.func @dynamic_map(
// MODEL-DAG:     %[[C1:.*]] = arith.constant 1 : index
// MODEL-DAG:     %[[C2:.*]] = arith.constant 2 : index
// MODEL-DAG:     %[[C6:.*]] = arith.constant 6 : index
// MODEL:         %[[ROWS:.*]] = memref.dim %{{.*}}, %c0
// MODEL-NEXT:    %[[WORTH:.*]] = arith.cmpi uge, %[[ROWS]], %[[C6]] : index
// MODEL-NEXT:    %[[COUNT:.*]] = arith.select %[[WORTH]], %[[C2]], %[[C1]] : index
// MODEL-NEXT:    scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[COUNT]]) step (%[[C1]])
// At threshold 0 every op with a loop to share forks, whatever its size.
// ZERO-LABEL:  func.func @dynamic_map(
// ZERO-NOT:      arith.select
// ZERO:          scf.parallel
func.func @dynamic_map(%x: memref<?x1000xf32>, %y: memref<?x1000xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<?x1000xf32>) outs(%y : memref<?x1000xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %in : f32
    linalg.yield %0 : f32
  }
  return
}
