// RUN: tract-opt --tract-cpu-contraction-kernels="lanes=16 rows=6 vectors-per-row=2 k-block=256 threads=2" --tract-cpu-vector-loops="lanes=16 threads=2" --tract-cpu-parallel-loops="threads=2" --canonicalize --cse --split-input-file %s | FileCheck %s
// RUN: tract-opt --tract-cpu-contraction-kernels="lanes=16 rows=6 vectors-per-row=2 k-block=256" --tract-cpu-vector-loops="lanes=16" --tract-cpu-parallel-loops --canonicalize --cse --split-input-file %s | FileCheck %s --check-prefix=SERIAL

// Made for one thread, nothing is parallel.
// SERIAL-NOT: scf.parallel

// A 256³ matmul on two threads: no outer dim; 8 column tiles of 32, or 42
// row tiles of 6 and 4 rows left over, about as fast: the rows go first,
// as the output's outer axis (a thread keeps the same block of rows from
// op to op). The whole nest runs once per thread (one fork and join per
// op), each thread on its run of the row tiles, ceil(c * 42 / 2) to
// ceil((c + 1) * 42 / 2), inside every column tile; the last chunk also
// takes the 4 rows left over.
// CHECK-LABEL: func.func @matmul(
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[C6:.*]] = arith.constant 6 : index
// CHECK-DAG:     %[[C42:.*]] = arith.constant 42 : index
// CHECK:         scf.parallel (%[[CHUNK:.*]]) = (%{{.*}}) to (%[[C2]]) step (%{{.*}}) {
// CHECK-NEXT:      scf.for %[[COL:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             arith.muli %[[CHUNK]], %[[C42]]
// CHECK:             %[[BEGIN:.*]] = arith.divui
// CHECK:             %[[END:.*]] = arith.divui
// CHECK:             %[[LB:.*]] = arith.muli %[[BEGIN]], %[[C6]]
// CHECK:             %[[UB:.*]] = arith.muli %[[END]], %[[C6]]
// CHECK:             scf.for %[[ROW:.*]] = %[[LB]] to %[[UB]] step %[[C6]] {
// CHECK:               scf.for {{.*}} -> (vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>)
// CHECK:             %[[LAST:.*]] = arith.cmpi eq, %[[CHUNK]], %{{.*}} : index
// CHECK-NEXT:        scf.if %[[LAST]] {
// CHECK:               scf.for {{.*}} -> (vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>)
// CHECK:           scf.reduce
// CHECK-NOT:     scf.parallel
func.func @matmul(%a: memref<256x256xf32>, %b: memref<256x256xf32>, %c: memref<256x256xf32>) {
  linalg.matmul ins(%a, %b : memref<256x256xf32>, memref<256x256xf32>) outs(%c : memref<256x256xf32>)
  return
}

// -----

// Too small to pay a fork and a join: serial.
// CHECK-LABEL: func.func @small(
// CHECK-NOT:     scf.parallel
func.func @small(%a: memref<8x16xf32>, %b: memref<16x16xf32>, %c: memref<8x16xf32>) {
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x16xf32>) outs(%c : memref<8x16xf32>)
  return
}

// -----

// A convolution: the output rows, an outer dim of 32, are shared out, 16
// to each thread.
// CHECK-LABEL: func.func @conv(
// CHECK:         scf.parallel (%[[CHUNK:.*]]) = (%{{.*}}) to (%[[C2:.*]]) step (%{{.*}}) {
// CHECK:           %[[BEGIN:.*]] = arith.divui
// CHECK:           %[[END:.*]] = arith.divui
// CHECK:           scf.for %[[OH:.*]] = %[[BEGIN]] to %[[END]] step %{{.*}} {
// CHECK-NOT:     scf.parallel
// CHECK:         return
func.func @conv(%x: memref<1x16x34x34xf32>, %w: memref<16x16x3x3xf32>, %o: memref<1x16x32x32xf32>) {
  linalg.conv_2d_nchw_fchw ins(%x, %w : memref<1x16x34x34xf32>, memref<16x16x3x3xf32>) outs(%o : memref<1x16x32x32xf32>)
  return
}

// -----

// A vector loop: its outer dim is shared out, the vector tiles run inside.
// CHECK-LABEL: func.func @relu(
// CHECK:         scf.parallel (%[[CHUNK:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK:           %[[BEGIN:.*]] = arith.divui
// CHECK:           %[[END:.*]] = arith.divui
// CHECK-NEXT:      scf.for %[[I:.*]] = %[[BEGIN]] to %[[END]] step %{{.*}} {
// CHECK-NEXT:        scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:          vector.transfer_read %{{.*}}[%[[I]], %[[J]]]{{.*}} vector<64xf32>
func.func @relu(%x: memref<64x1024xf32>, %y: memref<64x1024xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<64x1024xf32>) outs(%y : memref<64x1024xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Three long rows: runs of the 625 full vector tiles share better than 3
// rows; the 10 columns left over go with the last chunk.
// CHECK-LABEL: func.func @wide(
// CHECK:         scf.parallel (%[[CHUNK:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NEXT:      scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:               vector<64xf32>
// CHECK:             %[[LAST:.*]] = arith.cmpi eq, %[[CHUNK]], %{{.*}} : index
// CHECK-NEXT:        scf.if %[[LAST]] {
// CHECK-NEXT:          vector.transfer_read %{{.*}}[%[[I]], %{{.*}}]{{.*}} vector<10xf32>
func.func @wide(%x: memref<3x40010xf32>, %y: memref<3x40010xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<3x40010xf32>) outs(%y : memref<3x40010xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A sum along the last axis puts it on the lanes; its rows are shared out.
// CHECK-LABEL: func.func @rowsum(
// CHECK:         scf.parallel (%[[CHUNK:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK:           scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        memref.load %{{.*}}[%[[R]]]
// CHECK-NEXT:        scf.for {{.*}} -> (vector<64xf32>)
// CHECK:             vector.reduction <add>
func.func @rowsum(%x: memref<96x4096xf32>, %y: memref<96xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<96x4096xf32>) outs(%y : memref<96xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A gather whose index is data, of rows: the vector loops read each row as
// vectors (the row is the same on every lane, the columns consecutive),
// and share out the rows when they are many.
// CHECK-LABEL: func.func @gather(
// CHECK:         scf.parallel (%[[CHUNK:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK:           scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:          %[[ID:.*]] = memref.load %{{.*}}[%[[I]]] : memref<256xindex>
// CHECK:               %[[ROW:.*]] = vector.load %{{.*}}[%[[ID]], %{{.*}}] : memref<1000x512xf32>, vector<64xf32>
// CHECK-NEXT:          vector.transfer_write %[[ROW]], %{{.*}}[%[[I]], %[[J]]]
func.func @gather(%table: memref<1000x512xf32>, %ids: memref<256xindex>, %out: memref<256x512xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ids : memref<256xindex>) outs(%out : memref<256x512xf32>) {
  ^bb0(%id: index, %o: f32):
    %j = linalg.index 1 : index
    %v = memref.load %table[%id, %j] : memref<1000x512xf32>
    linalg.yield %v : f32
  }
  return
}

// -----

// A small one runs on one thread.
// CHECK-LABEL: func.func @small_gather(
// CHECK-NOT:     scf.parallel
// CHECK:         scf.for
// CHECK:           vector.load %{{.*}} : memref<10x8xf32>, vector<8xf32>
func.func @small_gather(%table: memref<10x8xf32>, %ids: memref<4xindex>, %out: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ids : memref<4xindex>) outs(%out : memref<4x8xf32>) {
  ^bb0(%id: index, %o: f32):
    %j = linalg.index 1 : index
    %v = memref.load %table[%id, %j] : memref<10x8xf32>
    linalg.yield %v : f32
  }
  return
}
