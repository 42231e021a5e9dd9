// RUN: tract-opt --tract-cpu-contraction-kernels="lanes=4 rows=2 vectors-per-row=2 k-block=8 row-block-bytes=0" --canonicalize --cse --split-input-file %s | FileCheck %s

// A matmul: k cut in blocks of 8; columns of B eight by eight (two
// registers) with rows of A two by two, then the 3 columns left over (one
// register) with all 4 rows at once: the register budget is 4
// accumulators. The rows share one vector of B per step; the accumulators
// are loop-carried and written once per tile.
// CHECK-DAG:   #[[KEND:.*]] = affine_map<(d0) -> (20, d0 + 8)>
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:    %[[A:.*]]: memref<4x20xf32>, %[[B:.*]]: memref<20x11xf32>, %[[C:.*]]: memref<4x11xf32>)
// CHECK:         scf.for %[[K0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %[[K1:.*]] = affine.min #[[KEND]](%[[K0]])
// CHECK:           scf.for %[[M:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             %[[ACC0:.*]] = vector.transfer_read %[[C]][%[[M]], %[[C0:.*]]], %{{.*}} {in_bounds = [true]} : memref<4x11xf32>, vector<8xf32>
// CHECK:             %[[M1:.*]] = arith.addi %[[M]]
// CHECK:             %[[ACC1:.*]] = vector.transfer_read %[[C]][%[[M1]], %[[C0]]]
// CHECK:             %[[SUMS:.*]]:2 = scf.for %[[K:.*]] = %[[K0]] to %[[K1]] step %{{.*}} iter_args(%[[S0:.*]] = %[[ACC0]], %[[S1:.*]] = %[[ACC1]]) -> (vector<8xf32>, vector<8xf32>) {
// CHECK-NEXT:          %[[V:.*]] = vector.transfer_read %[[B]][%[[K]], %[[C0]]], %{{.*}} {in_bounds = [true]} : memref<20x11xf32>, vector<8xf32>
// CHECK-NEXT:          %[[X0:.*]] = memref.load %[[A]][%[[M]], %[[K]]]
// CHECK-NEXT:          %[[X0S:.*]] = vector.broadcast %[[X0]] : f32 to vector<8xf32>
// CHECK-NEXT:          %[[F0:.*]] = vector.fma %[[X0S]], %[[V]], %[[S0]] : vector<8xf32>
// CHECK-NEXT:          %[[X1:.*]] = memref.load %[[A]][%[[M1]], %[[K]]]
// CHECK-NEXT:          %[[X1S:.*]] = vector.broadcast %[[X1]] : f32 to vector<8xf32>
// CHECK-NEXT:          %[[F1:.*]] = vector.fma %[[X1S]], %[[V]], %[[S1]] : vector<8xf32>
// CHECK-NEXT:          scf.yield %[[F0]], %[[F1]]
// CHECK:             vector.transfer_write %[[SUMS]]#0, %[[C]][%[[M]], %[[C0]]] {in_bounds = [true]} : vector<8xf32>, memref<4x11xf32>
// CHECK:             vector.transfer_write %[[SUMS]]#1, %[[C]][%[[M1]], %[[C0]]]
// CHECK-COUNT-4:   vector.transfer_read %[[C]][%{{.*}}, %[[C8:.*]]], %{{.*}} : memref<4x11xf32>, vector<3xf32>
// CHECK:           scf.for {{.*}} -> (vector<3xf32>, vector<3xf32>, vector<3xf32>, vector<3xf32>)
// CHECK-COUNT-4:     vector.fma {{.*}} : vector<3xf32>
// CHECK-COUNT-4:   vector.transfer_write {{.*}} : vector<3xf32>, memref<4x11xf32>
// CHECK-NOT:     linalg.matmul
func.func @matmul(%a: memref<4x20xf32>, %b: memref<20x11xf32>, %c: memref<4x11xf32>) {
  linalg.matmul ins(%a, %b : memref<4x20xf32>, memref<20x11xf32>) outs(%c : memref<4x11xf32>)
  return
}

// -----

// A convolution with stride 2: output channels are the rows, output columns
// the vector; each step keeps every other one of 7 input columns (two
// whole-vector loads, of columns 0-3 and 3-6, merged by a shuffle), and one kernel value per output channel. Batch and output rows are
// outer loops; input channels and the kernel window are the reduction loops.
// CHECK-LABEL: func.func @conv_stride2(
// CHECK-SAME:    %[[X:.*]]: memref<1x3x9x9xf32>, %[[W:.*]]: memref<2x3x3x3xf32>, %[[O:.*]]: memref<1x2x4x4xf32>)
// CHECK:         scf.for %[[OH:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           vector.transfer_read %[[O]][%{{.*}}, %{{.*}}, %[[OH]], %{{.*}}], %{{.*}} {in_bounds = [true]} : memref<1x2x4x4xf32>, vector<4xf32>
// CHECK:           scf.for %[[CI:[a-z0-9]+]] = {{.*}} -> (vector<4xf32>, vector<4xf32>) {
// CHECK:             scf.for %[[KH:[a-z0-9]+]] = {{.*}} -> (vector<4xf32>, vector<4xf32>) {
// CHECK:               scf.for %[[KW:[a-z0-9]+]] = {{.*}} -> (vector<4xf32>, vector<4xf32>) {
// CHECK:                 %[[LOW:.*]] = vector.transfer_read %[[X]][%{{.*}}, %[[CI]], %{{.*}}, %[[KW]]], %{{.*}} {in_bounds = [true]} : memref<1x3x9x9xf32>, vector<4xf32>
// CHECK:                 %[[AT:.*]] = affine.apply #{{.*}}(%[[KW]])
// CHECK:                 %[[HIGH:.*]] = vector.transfer_read %[[X]][%{{.*}}, %[[CI]], %{{.*}}, %[[AT]]], %{{.*}} {in_bounds = [true]} : memref<1x3x9x9xf32>, vector<4xf32>
// CHECK:                 %[[V:.*]] = vector.shuffle %[[LOW]], %[[HIGH]] [0, 2, 5, 7] : vector<4xf32>, vector<4xf32>
// CHECK:                 memref.load %[[W]][%{{.*}}, %[[CI]], %[[KH]], %[[KW]]]
// CHECK:                 vector.fma %{{.*}}, %[[V]], %{{.*}} : vector<4xf32>
// CHECK:                 memref.load %[[W]]
// CHECK:                 vector.fma %{{.*}}, %[[V]], %{{.*}} : vector<4xf32>
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
func.func @conv_stride2(%x: memref<1x3x9x9xf32>, %w: memref<2x3x3x3xf32>, %o: memref<1x2x4x4xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %w : memref<1x3x9x9xf32>, memref<2x3x3x3xf32>) outs(%o : memref<1x2x4x4xf32>)
  return
}

// -----

// A stride of 5 reads its 4 columns through a strided view.
// CHECK-LABEL: func.func @conv1d_stride5(
// CHECK:         %[[VIEW:.*]] = memref.subview %{{.*}}[0, %{{.*}}, %{{.*}}] [1, 1, 4] [1, 1, 5] : memref<1x2x20xf32> to memref<4xf32, strided<[5], offset: ?>>
// CHECK:         vector.transfer_read %[[VIEW]][%{{.*}}], %{{.*}} {in_bounds = [true]} : memref<4xf32, strided<[5], offset: ?>>, vector<4xf32>
func.func @conv1d_stride5(%x: memref<1x2x20xf32>, %w: memref<3x2x3xf32>, %o: memref<1x3x4xf32>) {
  linalg.conv_1d_ncw_fcw {dilations = dense<1> : tensor<1xi64>, strides = dense<5> : tensor<1xi64>}
    ins(%x, %w : memref<1x2x20xf32>, memref<3x2x3xf32>) outs(%o : memref<1x3x4xf32>)
  return
}

// -----

// A depthwise convolution: the channel is both the row of the kernel scalar
// and the plane of the input vector, so each row reads its own vector; rows
// of this kind are half as many (here one).
// CHECK-LABEL: func.func @depthwise(
// CHECK-SAME:    %[[X:.*]]: memref<1x4x6x10xf32>, %[[W:.*]]: memref<4x3x3xf32>, %[[O:.*]]: memref<1x4x4x8xf32>)
// CHECK:         scf.for %[[OH:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           scf.for %[[C:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             vector.transfer_read %[[O]][%{{.*}}, %[[C]], %[[OH]], %{{.*}}]
// CHECK:           scf.for {{.*}} -> (vector<8xf32>) {
// CHECK:             scf.for {{.*}} -> (vector<8xf32>) {
// CHECK-NEXT:          %[[IH:.*]] = affine.apply
// CHECK-NEXT:          %[[V:.*]] = vector.transfer_read %[[X]][%{{.*}}, %[[C]], %[[IH]], %{{.*}}], %{{.*}} {in_bounds = [true]} : memref<1x4x6x10xf32>, vector<8xf32>
// CHECK-NEXT:          %[[S:.*]] = memref.load %[[W]][%[[C]], %{{.*}}, %{{.*}}]
// CHECK-NEXT:          %[[SPLAT:.*]] = vector.broadcast %[[S]]
// CHECK-NEXT:          vector.fma %[[SPLAT]], %[[V]], %{{.*}} : vector<8xf32>
// CHECK-NOT:     linalg.depthwise_conv_2d_nchw_chw
func.func @depthwise(%x: memref<1x4x6x10xf32>, %w: memref<4x3x3xf32>, %o: memref<1x4x4x8xf32>) {
  linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x4x6x10xf32>, memref<4x3x3xf32>) outs(%o : memref<1x4x4x8xf32>)
  return
}

// -----

// Columns known only at run time: full tiles of 8 up to the last multiple
// of 8, then one column at a time.
// CHECK-LABEL: func.func @dynamic_columns(
// CHECK:         %[[N:.*]] = memref.dim %{{.*}}, %{{.*}} : memref<3x?xf32>
// CHECK:         %[[END:.*]] = affine.apply #{{.*}}()[%[[N]]]
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[END]] step %{{.*}} {
// CHECK:           vector.fma {{.*}} : vector<8xf32>
// CHECK:         scf.for %{{.*}} = %[[END]] to %[[N]] step %{{.*}} {
// CHECK:           vector.fma {{.*}} : vector<1xf32>
func.func @dynamic_columns(%a: memref<2x3xf32>, %b: memref<3x?xf32>, %c: memref<2x?xf32>) {
  linalg.matmul ins(%a, %b : memref<2x3xf32>, memref<3x?xf32>) outs(%c : memref<2x?xf32>)
  return
}

// -----

// Not a multiply-accumulate: left for the loop lowering.
// CHECK-LABEL: func.func @max_reduction(
// CHECK:         linalg.generic
// CHECK-NOT:     vector.fma
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @max_reduction(%x: memref<4x8xf32>, %y: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
    ins(%x : memref<4x8xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %out : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A convolution between its bias broadcast and its activation: the bias
// starts each tile's accumulators (one scalar per output channel), the
// activation runs on them before the one write, into the activation's
// buffer; the convolution's own buffer is never written, and the bias and
// activation ops are gone.
// CHECK-LABEL: func.func @bias_conv_relu(
// CHECK-SAME:    %[[X:.*]]: memref<1x2x4x10xf32>, %[[W:.*]]: memref<3x2x3x3xf32>, %[[B:.*]]: memref<3xf32>, %[[Y:.*]]: memref<1x3x2x8xf32>)
// CHECK:         %[[BIAS:.*]] = memref.load %[[B]][%{{.*}}] : memref<3xf32>
// CHECK:         %[[INIT:.*]] = vector.broadcast %[[BIAS]] : f32 to vector<8xf32>
// CHECK:         %[[SUM:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[INIT]]
// CHECK:         %[[RELU:.*]] = arith.maximumf %[[SUM]]#0, %{{.*}} : vector<8xf32>
// CHECK:         vector.transfer_write %[[RELU]], %[[Y]]
// CHECK-NOT:     linalg.
// CHECK:         return
#bias = affine_map<(n, f, h, w) -> (f)>
#all = affine_map<(n, f, h, w) -> (n, f, h, w)>
func.func @bias_conv_relu(%x: memref<1x2x4x10xf32>, %w: memref<3x2x3x3xf32>, %b: memref<3xf32>, %y: memref<1x3x2x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<1x3x2x8xf32>
  linalg.generic {indexing_maps = [#bias, #all], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
    ins(%b : memref<3xf32>) outs(%acc : memref<1x3x2x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x2x4x10xf32>, memref<3x2x3x3xf32>) outs(%acc : memref<1x3x2x8xf32>)
  linalg.generic {indexing_maps = [#all, #all], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
    ins(%acc : memref<1x3x2x8xf32>) outs(%y : memref<1x3x2x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  memref.dealloc %acc : memref<1x3x2x8xf32>
  return
}

// -----

// A matmul between its bias broadcast and its activation, with k (20) cut
// in blocks of 8: the partial sums of a block go through the product's own
// buffer; the first block starts from the bias, the last runs the
// activation and writes its buffer, the others write the partial sums.
// CHECK-LABEL: func.func @blocked_bias_matmul_relu(
// CHECK-SAME:    %[[A:.*]]: memref<4x20xf32>, %[[B:.*]]: memref<20x8xf32>, %[[BIAS:.*]]: memref<8xf32>, %[[Y:.*]]: memref<4x8xf32>)
// CHECK:         %[[ACC:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK:         scf.for %[[K0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %[[K1:.*]] = affine.min #{{.*}}(%[[K0]])
// CHECK:           %[[FIRST:.*]] = arith.cmpi eq, %[[K0]], %{{.*}} : index
// CHECK:           %[[LAST:.*]] = arith.cmpi eq, %[[K1]], %{{.*}} : index
// CHECK:           %[[INIT:.*]]:2 = scf.if %[[FIRST]]
// CHECK:             vector.transfer_read %[[BIAS]]
// CHECK:           } else {
// CHECK:             vector.transfer_read %[[ACC]]
// CHECK:           %[[SUM:.*]]:2 = scf.for %{{.*}} = %[[K0]] to %[[K1]] {{.*}} iter_args(%{{.*}} = %[[INIT]]#0, %{{.*}} = %[[INIT]]#1)
// CHECK:           scf.if %[[LAST]] {
// CHECK:             %[[RELU:.*]] = arith.maximumf %[[SUM]]#0, %{{.*}} : vector<8xf32>
// CHECK:             vector.transfer_write %[[RELU]], %[[Y]]
// CHECK:           } else {
// CHECK:             vector.transfer_write %[[SUM]]#0, %[[ACC]]
// CHECK-NOT:     linalg.
// CHECK:         return
#row = affine_map<(m, n) -> (n)>
#mn = affine_map<(m, n) -> (m, n)>
func.func @blocked_bias_matmul_relu(%a: memref<4x20xf32>, %b: memref<20x8xf32>, %bias: memref<8xf32>, %y: memref<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#row, #mn], iterator_types = ["parallel", "parallel"]}
    ins(%bias : memref<8xf32>) outs(%acc : memref<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  linalg.matmul ins(%a, %b : memref<4x20xf32>, memref<20x8xf32>) outs(%acc : memref<4x8xf32>)
  linalg.generic {indexing_maps = [#mn, #mn], iterator_types = ["parallel", "parallel"]}
    ins(%acc : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  memref.dealloc %acc : memref<4x8xf32>
  return
}

// -----

// The product's buffer is read again after the activation: the activation
// stays a separate op and the product is stored.
// CHECK-LABEL: func.func @product_read_twice(
// CHECK:         vector.transfer_write %{{.*}}, %[[ACC:[a-z_0-9]+]][
// CHECK:         linalg.generic
// CHECK:         memref.load %[[ACC]]
#a2 = affine_map<(m, n) -> (m, n)>
func.func @product_read_twice(%a: memref<2x3xf32>, %b: memref<3x8xf32>, %y: memref<2x8xf32>) -> f32 {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %acc = memref.alloc() : memref<2x8xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<2x8xf32>)
  linalg.matmul ins(%a, %b : memref<2x3xf32>, memref<3x8xf32>) outs(%acc : memref<2x8xf32>)
  linalg.generic {indexing_maps = [#a2, #a2], iterator_types = ["parallel", "parallel"]}
    ins(%acc : memref<2x8xf32>) outs(%y : memref<2x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  %first = memref.load %acc[%c0, %c0] : memref<2x8xf32>
  return %first : f32
}

// -----

// The activation writes in place of the product's input: written tile by
// tile while the product still reads that input, it would corrupt it. It
// stays a separate op.
// CHECK-LABEL: func.func @epilogue_in_place_of_input(
// CHECK:         scf.for
// CHECK:         linalg.generic
#i2 = affine_map<(m, n) -> (m, n)>
func.func @epilogue_in_place_of_input(%a: memref<8x8xf32>, %b: memref<8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<8x8xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<8x8xf32>)
  linalg.matmul ins(%a, %b : memref<8x8xf32>, memref<8x8xf32>) outs(%acc : memref<8x8xf32>)
  linalg.generic {indexing_maps = [#i2, #i2], iterator_types = ["parallel", "parallel"]}
    ins(%acc : memref<8x8xf32>) outs(%b : memref<8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  memref.dealloc %acc : memref<8x8xf32>
  return
}

// -----

// An activation bufferized in place, into the product's own buffer: the
// zeros before the product are the accumulators' first value, the relu
// runs on each tile, and each element is written once, as relu(product).
// CHECK-LABEL: func.func @in_place_relu(
// CHECK-DAG:     %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<8xf32>
// CHECK:         %[[C:.*]] = memref.alloc() : memref<4x16xf32>
// CHECK-NOT:     linalg.fill
// CHECK:         %[[SUMS:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[ZEROS]], %{{.*}} = %[[ZEROS]])
// CHECK:         %[[R0:.*]] = arith.maximumf %[[SUMS]]#0, %[[ZEROS]] : vector<8xf32>
// CHECK-NEXT:    vector.transfer_write %[[R0]], %[[C]]
// CHECK:         %[[R1:.*]] = arith.maximumf %[[SUMS]]#1, %[[ZEROS]] : vector<8xf32>
// CHECK-NEXT:    vector.transfer_write %[[R1]], %[[C]]
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[C]]
func.func @in_place_relu(%a: memref<4x8xf32>, %b: memref<8x16xf32>) -> memref<4x16xf32> {
  %c = memref.alloc() : memref<4x16xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%c : memref<4x16xf32>) outs(%c : memref<4x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.maximumf %x, %zero : f32
    linalg.yield %m : f32
  }
  return %c : memref<4x16xf32>
}

// -----

// A 1x1 convolution on rows of 10 merged into 30 columns, whose bias and
// relu write into the interior of a padded image (rows 12 apart): the
// epilogue runs on the product's tiles, split back into rows. A tile of
// 8 lanes that stays in its row is one store; one that reaches the next
// row is two masked stores, the second shifted back by a row's width. The
// product's own buffer is never written.
// CHECK-LABEL: func.func @epilogue_into_padded_rows(
// CHECK-SAME:    %[[X:[^:]*]]: memref<2x30xf32>, %[[W:[^:]*]]: memref<4x2xf32>, %[[BIAS:[^:]*]]: memref<4xf32>)
// CHECK-DAG:     %[[IOTA:.*]] = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : vector<8xi32>
// CHECK-DAG:     %[[TEN:.*]] = arith.constant dense<10> : vector<8xi32>
// CHECK-DAG:     %[[TWENTY:.*]] = arith.constant dense<20> : vector<8xi32>
// CHECK:         %[[PADDED:.*]] = memref.alloc() : memref<4x5x12xf32>
// CHECK:         %[[INTERIOR:.*]] = memref.subview %[[PADDED]][0, 1, 1] [4, 3, 10] [1, 1, 1]
// CHECK:         scf.for %[[P:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %[[ROW:.*]] = arith.divui %[[P]], %{{.*}} : index
// CHECK:           %[[COL:.*]] = arith.remui %[[P]], %{{.*}} : index
// CHECK:           %[[OUT:.*]] = arith.maximumf
// CHECK:           scf.if %{{.*}} {
// CHECK-NEXT:        vector.transfer_write %[[OUT]], %[[INTERIOR]][%{{.*}}, %[[ROW]], %[[COL]]] {in_bounds = [true]}
// CHECK-NEXT:      } else {
// CHECK:             %[[LANES:.*]] = arith.addi %{{.*}}, %[[IOTA]] : vector<8xi32>
// CHECK:             %[[FIRST:.*]] = arith.cmpi slt, %[[LANES]], %[[TEN]]
// CHECK:             vector.maskedstore %[[INTERIOR]][%{{.*}}, %[[ROW]], %[[COL]]], %[[FIRST]], %[[OUT]]
// CHECK:             %[[BEFORE:.*]] = arith.cmpi slt, %[[LANES]], %[[TWENTY]]
// CHECK:             %[[AFTER:.*]] = arith.cmpi sge, %[[LANES]], %[[TEN]]
// CHECK:             %[[SECOND:.*]] = arith.andi %[[BEFORE]], %[[AFTER]]
// CHECK:             %[[NEXT:.*]] = arith.addi %[[ROW]], %{{.*}} : index
// CHECK:             %[[BACK:.*]] = arith.subi %[[COL]], %{{.*}} : index
// CHECK:             vector.maskedstore %[[INTERIOR]][%{{.*}}, %[[NEXT]], %[[BACK]]], %[[SECOND]], %[[OUT]]
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     memref.collapse_shape
// CHECK:         return %[[PADDED]]
#in = affine_map<(c, p, k) -> (k, p)>
#wt = affine_map<(c, p, k) -> (c, k)>
#out = affine_map<(c, p, k) -> (c, p)>
#id3 = affine_map<(c, h, w) -> (c, h, w)>
#per_channel = affine_map<(c, h, w) -> (c)>
func.func @epilogue_into_padded_rows(%x: memref<2x30xf32>, %w: memref<4x2xf32>, %bias: memref<4xf32>) -> memref<4x5x12xf32> {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<4x3x10xf32>
  %flat = memref.collapse_shape %acc [[0], [1, 2]] : memref<4x3x10xf32> into memref<4x30xf32>
  linalg.fill ins(%zero : f32) outs(%flat : memref<4x30xf32>)
  linalg.generic {indexing_maps = [#in, #wt, #out], iterator_types = ["parallel", "parallel", "reduction"]}
    ins(%x, %w : memref<2x30xf32>, memref<4x2xf32>) outs(%flat : memref<4x30xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  %padded = memref.alloc() : memref<4x5x12xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<4x5x12xf32>)
  %interior = memref.subview %padded[0, 1, 1] [4, 3, 10] [1, 1, 1] : memref<4x5x12xf32> to memref<4x3x10xf32, strided<[60, 12, 1], offset: 13>>
  linalg.generic {indexing_maps = [#id3, #per_channel, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
    ins(%acc, %bias : memref<4x3x10xf32>, memref<4xf32>) outs(%interior : memref<4x3x10xf32, strided<[60, 12, 1], offset: 13>>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %r = arith.addf %v, %b : f32
    %q = arith.maximumf %r, %zero : f32
    linalg.yield %q : f32
  }
  memref.dealloc %acc : memref<4x3x10xf32>
  return %padded : memref<4x5x12xf32>
}

// -----

// A matrix-vector product: the one row fills no row tile of 2, so it goes
// after the row tiles, in column tiles as wide as the register budget
// (4 accumulators of 4 lanes: 16 columns), then the usual 8 for what the
// wide tiles leave of the full column tiles (40 = 2 x 16 + 8).
// CHECK-LABEL: func.func @one_row(
// CHECK-NOT:     vector<8xf32>
// CHECK:         scf.for %{{.*}} -> (vector<16xf32>)
// CHECK:           vector.fma {{.*}} : vector<16xf32>
// CHECK:         vector.transfer_write {{.*}} : vector<16xf32>, memref<1x40xf32>
// CHECK:         scf.for %{{.*}} -> (vector<8xf32>)
// CHECK:           vector.fma {{.*}} : vector<8xf32>
// CHECK:         vector.transfer_write {{.*}} : vector<8xf32>, memref<1x40xf32>
func.func @one_row(%a: memref<1x3xf32>, %b: memref<3x40xf32>, %c: memref<1x40xf32>) {
  linalg.matmul ins(%a, %b : memref<1x3xf32>, memref<3x40xf32>) outs(%c : memref<1x40xf32>)
  return
}

// -----

// Rows known only at run time: row tiles of 2 over the column tiles of 8,
// then the rows left, one by one, over column tiles of 16.
// CHECK-LABEL: func.func @dynamic_rows(
// CHECK:         %[[M:.*]] = memref.dim %{{.*}}, %{{.*}} : memref<?x3xf32>
// CHECK:         scf.for
// CHECK:           %[[FULL:.*]] = affine.apply #{{.*}}()[%[[M]]]
// CHECK:           scf.for %{{.*}} = %{{.*}} to %[[FULL]] step %{{.*}} {
// CHECK:             scf.for %{{.*}} -> (vector<8xf32>, vector<8xf32>)
// CHECK:         %[[REST:.*]] = affine.apply #{{.*}}()[%[[M]]]
// CHECK:         scf.for %{{.*}} = %[[REST]] to %[[M]] step %{{.*}} {
// CHECK:           scf.for %{{.*}} -> (vector<16xf32>)
// CHECK:           scf.for %{{.*}} -> (vector<8xf32>)
func.func @dynamic_rows(%a: memref<?x3xf32>, %b: memref<3x40xf32>, %c: memref<?x40xf32>) {
  linalg.matmul ins(%a, %b : memref<?x3xf32>, memref<3x40xf32>) outs(%c : memref<?x40xf32>)
  return
}

// -----

// Weights in panels of 8 columns (tract-cpu-pack-weights), read at
// (n floordiv 8, k, n mod 8): the one row goes in column tiles no wider
// than a panel (8, not the 16 of the register budget), each reading its
// panel's row k in one contiguous vector.
// CHECK-LABEL: func.func @panels(
// CHECK-NOT:     vector<16xf32>
// CHECK:         scf.for %[[N:.*]] = %c0 to %c32 step %c8
// CHECK:           scf.for %[[K:.*]] = %c0 to %c3 step %c1 iter_args(%{{.*}}) -> (vector<8xf32>)
// CHECK:             %[[P:.*]] = affine.apply #{{.*}}(%[[N]])
// CHECK:             %[[O:.*]] = affine.apply #{{.*}}(%[[N]])
// CHECK:             vector.transfer_read %{{.*}}[%[[P]], %[[K]], %[[O]]]{{.*}} : memref<4x3x8xf32>, vector<8xf32>
// CHECK:             vector.fma {{.*}} : vector<8xf32>
// CHECK:           vector.transfer_write {{.*}} : vector<8xf32>, memref<1x32xf32>
#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n floordiv 8, k, n mod 8)>
#y = affine_map<(m, n, k) -> (m, n)>
func.func @panels(%a: memref<1x3xf32>, %b: memref<4x3x8xf32>, %c: memref<1x32xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
    ins(%a, %b : memref<1x3xf32>, memref<4x3x8xf32>) outs(%c : memref<1x32xf32>) {
  ^bb0(%x: f32, %w: f32, %o: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A depthwise convolution with the channels last: both operands walk the
// channels, the vector dim. The tile is two pixels of a row (the rows) by
// the 8 channels; the weights of a tap are one vector that both pixels
// share (no broadcast). The kernel's rows are a loop, its 3 taps per row
// unrolled, so that pixels reading the same input pixel at different taps
// read the same index, which CSE then shares.
// CHECK-LABEL: func.func @depthwise_channels_last(
// CHECK-SAME:    %[[X:.*]]: memref<1x4x6x8xf32>, %[[W:.*]]: memref<3x3x8xf32>, %[[O:.*]]: memref<1x2x4x8xf32>)
// CHECK:         scf.for %[[OH:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           scf.for %[[OW:.*]] = %{{.*}} to %{{.*}} step %c2 {
// CHECK:             scf.for %[[KH:.*]] = %c0 to %c3 step %c1 iter_args
// CHECK-NOT:           vector.broadcast
// CHECK-NEXT:          %[[W0:.*]] = vector.transfer_read %[[W]][%[[KH]], %c0, %c0]{{.*}} : memref<3x3x8xf32>, vector<8xf32>
// CHECK-NEXT:          %[[IH:.*]] = affine.apply
// CHECK-NEXT:          %[[X0:.*]] = vector.transfer_read %[[X]][%c0, %[[IH]], %[[OW]], %c0]{{.*}} : memref<1x4x6x8xf32>, vector<8xf32>
// CHECK-NEXT:          vector.fma %[[X0]], %[[W0]], %{{.*}} : vector<8xf32>
// CHECK-COUNT-5:       vector.fma {{.*}} : vector<8xf32>
// CHECK-NEXT:          scf.yield
// CHECK-COUNT-2:     vector.transfer_write {{.*}} : vector<8xf32>, memref<1x2x4x8xf32>
// CHECK-NOT:     linalg.depthwise_conv_2d_nhwc_hwc
func.func @depthwise_channels_last(%x: memref<1x4x6x8xf32>, %w: memref<3x3x8xf32>, %o: memref<1x2x4x8xf32>) {
  linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x4x6x8xf32>, memref<3x3x8xf32>) outs(%o : memref<1x2x4x8xf32>)
  return
}

// -----

// A 1x1 convolution with the channels last is a product of pixels by
// channels: the bias and activation after it read it through an
// expand_shape back to pixels and write into the interior of the next
// convolution's padded input. They run on the product's tiles: each row of
// a tile is a pixel, whose indices the row splits into (divui/remui), and
// the product's own buffer is never written.
// CHECK-LABEL: func.func @pixels_into_padded(
// CHECK-SAME:    %[[X:.*]]: memref<6x4xf32>, %[[W:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<8xf32>, %[[P:.*]]: memref<1x4x5x8xf32>)
// CHECK:         %[[IN:.*]] = memref.subview %[[P]][0, 1, 1, 0] [1, 2, 3, 8] [1, 1, 1, 1]
// CHECK:         arith.divui
// CHECK:         arith.remui
// CHECK:         arith.maximumf {{.*}} : vector<8xf32>
// CHECK:         vector.transfer_write {{.*}}, %[[IN]][%{{.*}}, %{{.*}}, %{{.*}}, %c0] {in_bounds = [true]} : vector<8xf32>, memref<1x2x3x8xf32, strided<[160, 40, 8, 1], offset: 48>>
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     memref.alloc
func.func @pixels_into_padded(%x: memref<6x4xf32>, %w: memref<4x8xf32>, %b: memref<8xf32>, %p: memref<1x4x5x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<6x8xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<6x8xf32>)
  linalg.matmul ins(%x, %w : memref<6x4xf32>, memref<4x8xf32>) outs(%y : memref<6x8xf32>)
  %pixels = memref.expand_shape %y [[0, 1, 2], [3]] output_shape [1, 2, 3, 8] : memref<6x8xf32> into memref<1x2x3x8xf32>
  %interior = memref.subview %p[0, 1, 1, 0] [1, 2, 3, 8] [1, 1, 1, 1] : memref<1x4x5x8xf32> to memref<1x2x3x8xf32, strided<[160, 40, 8, 1], offset: 48>>
  linalg.generic {indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>, affine_map<(n, h, w, c) -> (c)>, affine_map<(n, h, w, c) -> (n, h, w, c)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
    ins(%pixels, %b : memref<1x2x3x8xf32>, memref<8xf32>) outs(%interior : memref<1x2x3x8xf32, strided<[160, 40, 8, 1], offset: 48>>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  memref.dealloc %y : memref<6x8xf32>
  return
}

// -----

// The product's buffer is returned, but only for the caller to overwrite
// (a step's result that is tract.dead_after): the activation still fuses.
// CHECK-LABEL: func.func private @returned_for_reuse(
// CHECK-SAME:    %{{.*}}: memref<4x4xf32>, %{{.*}}: memref<4x8xf32>, %[[Y:.*]]: memref<4x8xf32>)
// CHECK:         %[[RELU:.*]] = arith.maximumf %{{.*}} : vector<8xf32>
// CHECK:         vector.transfer_write %[[RELU]], %[[Y]]
// CHECK-NOT:     linalg.generic
// CHECK:         return
#mn = affine_map<(m, n) -> (m, n)>
func.func private @returned_for_reuse(%a: memref<4x4xf32>, %b: memref<4x8xf32>, %y: memref<4x8xf32>) -> (memref<4x8xf32> {tract.dead_after}) {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<4x8xf32>)
  linalg.matmul ins(%a, %b : memref<4x4xf32>, memref<4x8xf32>) outs(%acc : memref<4x8xf32>)
  linalg.generic {indexing_maps = [#mn, #mn], iterator_types = ["parallel", "parallel"]}
    ins(%acc : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  return %acc : memref<4x8xf32>
}

// -----

// The product's buffer is next filled whole through a collapsed view (the
// next product reusing it): its contents are dead after the activation,
// which fuses.
// CHECK-LABEL: func.func @refilled_through_view(
// CHECK-SAME:    %{{.*}}: memref<4x4xf32>, %{{.*}}: memref<4x8xf32>, %[[Y:.*]]: memref<4x8xf32>, %[[Z:.*]]: memref<32xf32>)
// CHECK:         %[[RELU:.*]] = arith.maximumf %{{.*}} : vector<8xf32>
// CHECK:         vector.transfer_write %[[RELU]], %[[Y]]
// CHECK:         %[[VIEW:.*]] = memref.collapse_shape
// CHECK-NEXT:    linalg.fill ins(%{{.*}} : f32) outs(%[[VIEW]] : memref<32xf32>)
#mn = affine_map<(m, n) -> (m, n)>
#i = affine_map<(i) -> (i)>
func.func @refilled_through_view(%a: memref<4x4xf32>, %b: memref<4x8xf32>, %y: memref<4x8xf32>, %z: memref<32xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %acc = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<4x8xf32>)
  linalg.matmul ins(%a, %b : memref<4x4xf32>, memref<4x8xf32>) outs(%acc : memref<4x8xf32>)
  linalg.generic {indexing_maps = [#mn, #mn], iterator_types = ["parallel", "parallel"]}
    ins(%acc : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  %flat = memref.collapse_shape %acc [[0, 1]] : memref<4x8xf32> into memref<32xf32>
  linalg.fill ins(%one : f32) outs(%flat : memref<32xf32>)
  linalg.generic {indexing_maps = [#i, #i], iterator_types = ["parallel"]}
    ins(%flat : memref<32xf32>) outs(%z : memref<32xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  memref.dealloc %acc : memref<4x8xf32>
  return
}
