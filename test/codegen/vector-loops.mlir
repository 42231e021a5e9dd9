// RUN: tract-opt --tract-cpu-vector-loops="lanes=4" --canonicalize --cse --split-input-file %s | FileCheck %s

// A per-channel bias on (c, w): channels are a loop, w is cut into tiles of
// 16 and a rest of 3; the bias is one scalar broadcast to every lane.
// CHECK-LABEL: func.func @channel_bias(
// CHECK-SAME:    %[[X:.*]]: memref<2x19xf32>, %[[B:.*]]: memref<2xf32>, %[[Y:.*]]: memref<2x19xf32>)
// CHECK:         scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %[[V:.*]] = vector.transfer_read %[[X]][%[[C]], %[[C0:.*]]], %{{.*}} {in_bounds = [true]} : memref<2x19xf32>, vector<16xf32>
// CHECK:           %[[S:.*]] = memref.load %[[B]][%[[C]]]
// CHECK:           %[[SPLAT:.*]] = vector.broadcast %[[S]] : f32 to vector<16xf32>
// CHECK:           %[[SUM:.*]] = arith.addf %[[V]], %[[SPLAT]] : vector<16xf32>
// CHECK:           vector.transfer_write %[[SUM]], %[[Y]][%[[C]], %[[C0]]] {in_bounds = [true]} : vector<16xf32>, memref<2x19xf32>
// CHECK:           vector.transfer_read %[[X]][%[[C]], %{{.*}}], %{{.*}} : memref<2x19xf32>, vector<3xf32>
// CHECK:           arith.addf {{.*}} : vector<3xf32>
// CHECK-NOT:     linalg.generic
#id = affine_map<(c, w) -> (c, w)>
#ch = affine_map<(c, w) -> (c)>
func.func @channel_bias(%x: memref<2x19xf32>, %b: memref<2xf32>, %y: memref<2x19xf32>) {
  linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel"]}
    ins(%x, %b : memref<2x19xf32>, memref<2xf32>) outs(%y : memref<2x19xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A 2×2 max pool with stride 2: the output rows (the window's outer dim)
// go four at a time, each with its accumulator, the four taps unrolled
// around them (no loop is left); each tap keeps every other one of 7 input
// columns, read as two whole vectors (columns 0-3 and 3-6) merged by a
// shuffle.
// CHECK-LABEL: func.func @max_pool(
// CHECK-NOT:     scf.for
// CHECK-COUNT-4: vector.transfer_read %{{.*}} : memref<1x1x4x4xf32>, vector<4xf32>
// CHECK:         %[[LOW:.*]] = vector.transfer_read %{{.*}} : memref<1x1x8x8xf32>, vector<4xf32>
// CHECK-NEXT:    %[[HIGH:.*]] = vector.transfer_read %{{.*}} : memref<1x1x8x8xf32>, vector<4xf32>
// CHECK-NEXT:    %[[X:.*]] = vector.shuffle %[[LOW]], %[[HIGH]] [0, 2, 5, 7]
// CHECK-NEXT:    arith.maximumf %{{.*}}, %[[X]] : vector<4xf32>
// CHECK-NOT:     scf.for
// CHECK-COUNT-4: vector.transfer_write
func.func @max_pool(%x: memref<1x1x8x8xf32>, %w: memref<2x2xf32>, %y: memref<1x1x4x4xf32>) {
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %w : memref<1x1x8x8xf32>, memref<2x2xf32>) outs(%y : memref<1x1x4x4xf32>)
  return
}

// -----

// Stride 3: the 10 columns spanned are three whole vectors (columns 0-3,
// 4-7 and 6-9, the last ending where the span ends); each shuffle keeps the
// lanes placed so far and takes those of the next vector.
// CHECK-LABEL: func.func @max_pool_stride3(
// CHECK:         %[[A:.*]] = vector.transfer_read %{{.*}} : memref<1x1x12x12xf32>, vector<4xf32>
// CHECK:         %[[B:.*]] = vector.transfer_read %{{.*}} : memref<1x1x12x12xf32>, vector<4xf32>
// CHECK:         %[[AB:.*]] = vector.shuffle %[[A]], %[[B]] [0, 3, 6, 3]
// CHECK:         %[[C:.*]] = vector.transfer_read %{{.*}} : memref<1x1x12x12xf32>, vector<4xf32>
// CHECK:         %[[X:.*]] = vector.shuffle %[[AB]], %[[C]] [0, 1, 4, 7]
// CHECK:         arith.maximumf %{{.*}}, %[[X]] : vector<4xf32>
func.func @max_pool_stride3(%x: memref<1x1x12x12xf32>, %w: memref<3x3xf32>, %y: memref<1x1x4x4xf32>) {
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<3> : tensor<2xi64>}
    ins(%x, %w : memref<1x1x12x12xf32>, memref<3x3xf32>) outs(%y : memref<1x1x4x4xf32>)
  return
}

// -----

// A fill takes a scalar operand: every lane gets it. 8 is less than a tile
// of 16: two tiles of one register each.
// CHECK-LABEL: func.func @fill(
// CHECK-SAME:    %[[V:.*]]: f32, %[[Y:.*]]: memref<8xf32>)
// CHECK:         %[[SPLAT:.*]] = vector.broadcast %[[V]] : f32 to vector<4xf32>
// CHECK:         vector.transfer_write %[[SPLAT]], %[[Y]][%{{.*}}] {in_bounds = [true]} : vector<4xf32>, memref<8xf32>
// CHECK:         vector.transfer_write %[[SPLAT]], %[[Y]][%{{.*}}] {in_bounds = [true]} : vector<4xf32>, memref<8xf32>
func.func @fill(%v: f32, %y: memref<8xf32>) {
  linalg.fill ins(%v : f32) outs(%y : memref<8xf32>)
  return
}

// -----

// The index of the vector dim is the tile's first index plus a step vector.
// CHECK-LABEL: func.func @iota(
// CHECK:         %[[STEP:.*]] = vector.step : vector<4xindex>
// CHECK:         arith.index_cast %[[STEP]] : vector<4xindex> to vector<4xi64>
#one = affine_map<(d0) -> (d0)>
func.func @iota(%y: memref<4xi64>) {
  linalg.generic {indexing_maps = [#one], iterator_types = ["parallel"]} outs(%y : memref<4xi64>) {
  ^bb0(%o: i64):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i64
    linalg.yield %c : i64
  }
  return
}

// -----

// Copying into the interior of a padded buffer: a linalg.copy, tiled.
// CHECK-LABEL: func.func @pad_interior(
// CHECK:         %[[VIEW:.*]] = memref.subview
// CHECK:         scf.for
// CHECK:           %[[R:.*]] = vector.transfer_read %{{.*}} : memref<3x5xf32>, vector<4xf32>
// CHECK:           vector.transfer_write %[[R]], %[[VIEW]]
// CHECK:           %[[R1:.*]] = vector.transfer_read %{{.*}} : memref<3x5xf32>, vector<1xf32>
// CHECK:           vector.transfer_write %[[R1]], %[[VIEW]]
// CHECK-NOT:     memref.copy
func.func @pad_interior(%x: memref<3x5xf32>, %padded: memref<5x7xf32>) {
  %view = memref.subview %padded[1, 1] [3, 5] [1, 1] : memref<5x7xf32> to memref<3x5xf32, strided<[7, 1], offset: 8>>
  memref.copy %x, %view : memref<3x5xf32> to memref<3x5xf32, strided<[7, 1], offset: 8>>
  return
}

// -----

// A sum over the last axis puts that axis on the lanes: an accumulator of
// 16 lanes (4 registers) over the full tiles, the rest of 4 reduced on its
// own, then one horizontal sum with the output's first value.
// CHECK-LABEL: func.func @row_sums(
// CHECK-SAME:    %[[X:.*]]: memref<3x20xf32>, %[[S:.*]]: memref<3xf32>)
// CHECK-DAG:     %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %[[FIRST:.*]] = memref.load %[[S]][%[[I]]]
// CHECK:           %[[ROW:.*]] = vector.transfer_read %[[X]][%[[I]], %{{.*}}], %{{.*}} {in_bounds = [true]} : memref<3x20xf32>, vector<16xf32>
// CHECK:           %[[ACC:.*]] = arith.addf %[[ROW]], %[[ZEROS]] : vector<16xf32>
// CHECK:           %[[TAIL:.*]] = vector.transfer_read %[[X]][%[[I]], %{{.*}}], %{{.*}} {in_bounds = [true]} : memref<3x20xf32>, vector<4xf32>
// CHECK:           %[[TAILSUM:.*]] = vector.reduction <add>, %{{.*}} fastmath<reassoc> : vector<4xf32> into f32
// CHECK:           %[[SUM:.*]] = vector.reduction <add>, %[[ACC]], %[[FIRST]] fastmath<reassoc> : vector<16xf32> into f32
// CHECK:           %[[TOTAL:.*]] = arith.addf %[[SUM]], %{{.*}} : f32
// CHECK:           memref.store %[[TOTAL]], %[[S]][%[[I]]]
func.func @row_sums(%x: memref<3x20xf32>, %s: memref<3xf32>) {
  linalg.reduce ins(%x : memref<3x20xf32>) outs(%s : memref<3xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  return
}

// -----

// A max over a short last axis: one accumulator as wide as the axis (its
// first max, with -inf, folds away).
// CHECK-LABEL: func.func @row_max(
// CHECK:         %[[FIRST:.*]] = memref.load
// CHECK-NEXT:    %[[ROW:.*]] = vector.transfer_read {{.*}} : memref<2x8xf32>, vector<8xf32>
// CHECK-NEXT:    %[[MAX:.*]] = vector.reduction <maximumf>, %[[ROW]], %[[FIRST]] fastmath<reassoc> : vector<8xf32> into f32
// CHECK-NEXT:    memref.store %[[MAX]]
func.func @row_max(%x: memref<2x8xf32>, %m: memref<2xf32>) {
  linalg.reduce ins(%x : memref<2x8xf32>) outs(%m : memref<2xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    }
  return
}

// -----

// Left for the loop lowering: booleans (bytes in memory, bits in a vector).
// CHECK-LABEL: func.func @left_alone(
// CHECK:         linalg.generic
func.func @left_alone(%c: memref<4xi1>, %d: memref<4xi1>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
    ins(%c : memref<4xi1>) outs(%d : memref<4xi1>) {
  ^bb0(%a: i1, %o: i1):
    %t = arith.constant true
    %n = arith.xori %a, %t : i1
    linalg.yield %n : i1
  }
  return
}

// -----

// A load whose indices are data (a resize along the last axis, its cells
// from a table): a gather per tile. The indices the lanes share (the row)
// are the gather's origin, the others 32-bit offsets from it.
// CHECK-LABEL: func.func @gather_cells(
// CHECK-SAME:    %[[X:.*]]: memref<8x64xf32>, %[[CELLS:.*]]: memref<256xi32>,
// CHECK:         scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           scf.for %[[COL:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             %[[OFFSETS:.*]] = vector.transfer_read %[[CELLS]][%[[COL]]]
// CHECK:             %[[G:.*]] = vector.gather %[[X]][%[[ROW]], %{{.*}}] [%[[OFFSETS]]], %{{.*}}, %{{.*}} : memref<8x64xf32>, vector<16xi32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK:             vector.transfer_write %[[G]], %{{.*}}[%[[ROW]], %[[COL]]]
func.func @gather_cells(%x: memref<8x64xf32>, %cells: memref<256xi32>, %y: memref<8x256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%cells : memref<256xi32>) outs(%y : memref<8x256xf32>) {
  ^bb0(%cell: i32, %o: f32):
    %row = linalg.index 0 : index
    %col = arith.index_cast %cell : i32 to index
    %v = memref.load %x[%row, %col] : memref<8x64xf32>
    linalg.yield %v : f32
  }
  return
}

// -----

// The same load at an index every lane shares (a row picked by the table
// of another axis) and consecutive columns: a vector load.
// CHECK-LABEL: func.func @gather_rows(
// CHECK-SAME:    %[[X:.*]]: memref<8x64xf32>, %[[CELLS:.*]]: memref<16xi32>,
// CHECK:         scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %[[CELL:.*]] = memref.load %[[CELLS]][%[[ROW]]] : memref<16xi32>
// CHECK:           %[[R:.*]] = arith.index_cast %[[CELL]] : i32 to index
// CHECK:           %[[V:.*]] = vector.load %[[X]][%[[R]], %{{.*}}] : memref<8x64xf32>, vector<16xf32>
// CHECK-NOT:       vector.gather
func.func @gather_rows(%x: memref<8x64xf32>, %cells: memref<16xi32>, %y: memref<16x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%cells : memref<16xi32>) outs(%y : memref<16x64xf32>) {
  ^bb0(%cell: i32, %o: f32):
    %col = linalg.index 1 : index
    %row = arith.index_cast %cell : i32 to index
    %v = memref.load %x[%row, %col] : memref<8x64xf32>
    linalg.yield %v : f32
  }
  return
}
