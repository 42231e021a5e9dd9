// RUN: tract-opt --tract-lower-to-linalg --split-input-file %s | FileCheck %s
// RUN: tract-opt --tract-lower-to-llvm --split-input-file %s | FileCheck %s --check-prefix=LLVM

// Each case also goes the whole way to the LLVM dialect (LLVM prefix).

// A unit axis is an expand_shape grouping it with its neighbour; dynamic
// sizes are the symbols' values.
// CHECK-LABEL: func.func @add_axis(
// CHECK-SAME:    %[[X:.*]]: tensor<?x4xf32> {bufferization.writable = false}) -> tensor<?x1x4xf32>
// CHECK:         %[[S:.*]] = tensor.dim %[[X]], %{{.*}}
// CHECK:         tensor.expand_shape %[[X]] {{\[}}[0, 1], [2]] output_shape [%[[S]], 1, 4] : tensor<?x4xf32> into tensor<?x1x4xf32>
// LLVM-LABEL: llvm.func @add_axis(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module attributes {tract.symbols = ["S"]} {
  func.func @add_axis(%arg0: tensor<?x4xf32, #tract.dims<[S]>>) -> tensor<?x1x4xf32, #tract.dims<[S]>> {
    %0 = tract.add_axis %arg0 {axis = 1 : i64} : tensor<?x4xf32, #tract.dims<[S]>> -> tensor<?x1x4xf32, #tract.dims<[S]>>
    return %0 : tensor<?x1x4xf32, #tract.dims<[S]>>
  }
}

// -----

// CHECK-LABEL: func.func @add_axis_scalar(
// CHECK:         tensor.expand_shape %{{.*}} [] output_shape [1] : tensor<f32> into tensor<1xf32>
// LLVM-LABEL: llvm.func @add_axis_scalar(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module {
  func.func @add_axis_scalar(%arg0: tensor<f32>) -> tensor<1xf32> {
    %0 = tract.add_axis %arg0 {axis = 0 : i64} : tensor<f32> -> tensor<1xf32>
    return %0 : tensor<1xf32>
  }
}

// -----

// Unsigned elements become signless.
// CHECK-LABEL: func.func @rm_axis(
// CHECK-SAME:    %[[X:.*]]: tensor<?x4x1xi8> {bufferization.writable = false}) -> tensor<?x4xi8>
// CHECK:         tensor.collapse_shape %[[X]] {{\[}}[0], [1, 2]] : tensor<?x4x1xi8> into tensor<?x4xi8>
// LLVM-LABEL: llvm.func @rm_axis(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module attributes {tract.symbols = ["S"]} {
  func.func @rm_axis(%arg0: tensor<?x4x1xui8, #tract.dims<[S]>>) -> tensor<?x4xui8, #tract.dims<[S]>> {
    %0 = tract.rm_axis %arg0 {axis = 2 : i64} : tensor<?x4x1xui8, #tract.dims<[S]>> -> tensor<?x4xui8, #tract.dims<[S]>>
    return %0 : tensor<?x4xui8, #tract.dims<[S]>>
  }
}

// -----

// A move is a linalg.transpose: result axis i reads input axis permutation[i].
// CHECK-LABEL: func.func @move_axis(
// CHECK-SAME:    %[[X:.*]]: tensor<2x?x4xf32> {bufferization.writable = false}) -> tensor<4x2x?xf32>
// CHECK:         %[[S:.*]] = tensor.dim %[[X]], %{{.*}}
// CHECK:         %[[E:.*]] = tensor.empty(%[[S]]) : tensor<4x2x?xf32>
// CHECK:         linalg.transpose ins(%[[X]] : tensor<2x?x4xf32>) outs(%[[E]] : tensor<4x2x?xf32>) permutation = [2, 0, 1]
// LLVM-LABEL: llvm.func @move_axis(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module attributes {tract.symbols = ["S"]} {
  func.func @move_axis(%arg0: tensor<2x?x4xf32, #tract.dims<[S]>>) -> tensor<4x2x?xf32, #tract.dims<[S]>> {
    %0 = tract.move_axis %arg0 {from = 2 : i64, to = 0 : i64} : tensor<2x?x4xf32, #tract.dims<[S]>> -> tensor<4x2x?xf32, #tract.dims<[S]>>
    return %0 : tensor<4x2x?xf32, #tract.dims<[S]>>
  }
}

// -----

// A symbolic dim splits by expand_shape, with S computed from the input.
// CHECK-LABEL: func.func @reshape_split(
// CHECK-SAME:    %[[X:.*]]: tensor<1x?xf32> {bufferization.writable = false}) -> tensor<1x?x4xf32>
// CHECK:         %[[D:.*]] = tensor.dim %[[X]], %{{.*}}
// CHECK:         %[[S:.*]] = arith.floordivsi %[[D]], %{{.*}} : index
// CHECK:         tensor.expand_shape %[[X]] {{\[}}[0], [1, 2]] output_shape [1, %[[S]], 4] : tensor<1x?xf32> into tensor<1x?x4xf32>
// LLVM-LABEL: llvm.func @reshape_split(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module attributes {tract.symbols = ["S"]} {
  func.func @reshape_split(%arg0: tensor<1x?xf32, #tract.dims<[4*S]>>) -> tensor<1x?x4xf32, #tract.dims<[S]>> {
    %0 = tract.reshape %arg0 {at = 1 : i64, count = 1 : i64, to = #tract.shape<[S, 4]>} : tensor<1x?xf32, #tract.dims<[4*S]>> -> tensor<1x?x4xf32, #tract.dims<[S]>>
    return %0 : tensor<1x?x4xf32, #tract.dims<[S]>>
  }
}

// -----

// Dims that do not map one to one: the run collapses, then expands.
// CHECK-LABEL: func.func @reshape_regroup(
// CHECK-SAME:    %[[X:.*]]: tensor<?x6xi1> {bufferization.writable = false}) -> tensor<2x?xi1>
// CHECK:         %[[S:.*]] = tensor.dim %[[X]], %{{.*}}
// CHECK:         %[[S3:.*]] = arith.muli %[[S]], %{{.*}} : index
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<?x6xi1> into tensor<?xi1>
// CHECK:         tensor.expand_shape %[[C]] {{\[}}[0, 1]] output_shape [2, %[[S3]]] : tensor<?xi1> into tensor<2x?xi1>
// LLVM-LABEL: llvm.func @reshape_regroup(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module attributes {tract.symbols = ["S"]} {
  func.func @reshape_regroup(%arg0: tensor<?x6xi1, #tract.dims<[S]>>) -> tensor<2x?xi1, #tract.dims<[3*S]>> {
    %0 = tract.reshape %arg0 {at = 0 : i64, count = 2 : i64, to = #tract.shape<[2, 3*S]>} : tensor<?x6xi1, #tract.dims<[S]>> -> tensor<2x?xi1, #tract.dims<[3*S]>>
    return %0 : tensor<2x?xi1, #tract.dims<[3*S]>>
  }
}

// -----

// A dim split into two symbolic ones is a tensor.reshape to the sizes (an
// expand_shape with two dynamic dims in a group crashes MLIR 22's
// expand-strided-metadata); it lowers to the LLVM dialect.
// CHECK-LABEL: func.func @reshape_split_symbolic(
// CHECK-SAME:    %[[X:.*]]: tensor<1x?xf32> {bufferization.writable = false}, %[[Y:.*]]: tensor<?x?xf32> {bufferization.writable = false}) -> tensor<?x?xf32>
// CHECK:         %[[A:.*]] = tensor.dim %[[Y]], %{{.*}}
// CHECK:         %[[B:.*]] = tensor.dim %[[Y]], %{{.*}}
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<1x?xf32> into tensor<?xf32>
// CHECK:         %[[SHAPE:.*]] = tensor.from_elements %[[A]], %[[B]] : tensor<2xindex>
// CHECK:         tensor.reshape %[[C]](%[[SHAPE]]) : (tensor<?xf32>, tensor<2xindex>) -> tensor<?x?xf32>
// LLVM-LABEL: llvm.func @reshape_split_symbolic(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module attributes {tract.symbols = ["A", "B"]} {
  func.func @reshape_split_symbolic(%arg0: tensor<1x?xf32, #tract.dims<[A*B]>>, %arg1: tensor<?x?xf32, #tract.dims<[A, B]>>) -> tensor<?x?xf32, #tract.dims<[A, B]>> {
    %0 = tract.reshape %arg0 {at = 0 : i64, count = 2 : i64, to = #tract.shape<[A, B]>} : tensor<1x?xf32, #tract.dims<[A*B]>> -> tensor<?x?xf32, #tract.dims<[A, B]>>
    %1 = tract.add %0, %arg1 : (tensor<?x?xf32, #tract.dims<[A, B]>>, tensor<?x?xf32, #tract.dims<[A, B]>>) -> tensor<?x?xf32, #tract.dims<[A, B]>>
    return %1 : tensor<?x?xf32, #tract.dims<[A, B]>>
  }
}

// -----

// Removing or inserting only unit dims folds them into a neighbour.
// CHECK-LABEL: func.func @reshape_units(
// CHECK:         %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2]] : tensor<3x1x1xf32> into tensor<3xf32>
// CHECK:         tensor.expand_shape %[[C]] {{\[}}[0, 1]] output_shape [1, 3] : tensor<3xf32> into tensor<1x3xf32>
// LLVM-LABEL: llvm.func @reshape_units(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module {
  func.func @reshape_units(%arg0: tensor<3x1x1xf32>) -> tensor<1x3xf32> {
    %0 = tract.reshape %arg0 {at = 1 : i64, count = 2 : i64, to = #tract.shape<[]>} : tensor<3x1x1xf32> -> tensor<3xf32>
    %1 = tract.reshape %0 {at = 0 : i64, count = 0 : i64, to = #tract.shape<[1]>} : tensor<3xf32> -> tensor<1x3xf32>
    return %1 : tensor<1x3xf32>
  }
}

// -----

// The unit axes that grow are collapsed away and added back by
// linalg.broadcast.
// CHECK-LABEL: func.func @broadcast(
// CHECK-SAME:    %[[X:.*]]: tensor<1x3x1xf32> {bufferization.writable = false}, %[[Y:.*]]: tensor<?xf32> {bufferization.writable = false}) -> tensor<?x3x5xf32>
// CHECK:         %[[S:.*]] = tensor.dim %[[Y]], %{{.*}}
// CHECK:         %[[E:.*]] = tensor.empty(%[[S]]) : tensor<?x3x5xf32>
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2]] : tensor<1x3x1xf32> into tensor<3xf32>
// CHECK:         linalg.broadcast ins(%[[C]] : tensor<3xf32>) outs(%[[E]] : tensor<?x3x5xf32>) dimensions = [0, 2]
// LLVM-LABEL: llvm.func @broadcast(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module attributes {tract.symbols = ["S"]} {
  func.func @broadcast(%arg0: tensor<1x3x1xf32>, %arg1: tensor<?xf32, #tract.dims<[S]>>) -> tensor<?x3x5xf32, #tract.dims<[S]>> {
    %0 = tract.broadcast %arg0 {shape = #tract.shape<[S, 3, 5]>} : tensor<1x3x1xf32> -> tensor<?x3x5xf32, #tract.dims<[S]>>
    return %0 : tensor<?x3x5xf32, #tract.dims<[S]>>
  }
}

// -----

// Tiling broadcasts to (multiplier, dim) pairs that collapse.
// CHECK-LABEL: func.func @tile(
// CHECK-SAME:    %[[X:.*]]: tensor<2x?xi32> {bufferization.writable = false}) -> tensor<6x?xi32>
// CHECK:         %[[S:.*]] = tensor.dim %[[X]], %{{.*}}
// CHECK:         %[[E:.*]] = tensor.empty(%[[S]]) : tensor<3x2x?xi32>
// CHECK:         %[[B:.*]] = linalg.broadcast ins(%[[X]] : tensor<2x?xi32>) outs(%[[E]] : tensor<3x2x?xi32>) dimensions = [0]
// CHECK:         tensor.collapse_shape %[[B]] {{\[}}[0, 1], [2]] : tensor<3x2x?xi32> into tensor<6x?xi32>
// LLVM-LABEL: llvm.func @tile(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module attributes {tract.symbols = ["S"]} {
  func.func @tile(%arg0: tensor<2x?xi32, #tract.dims<[S]>>) -> tensor<6x?xi32, #tract.dims<[S]>> {
    %0 = tract.tile %arg0 {multipliers = #tract.shape<[3, 1]>} : tensor<2x?xi32, #tract.dims<[S]>> -> tensor<6x?xi32, #tract.dims<[S]>>
    return %0 : tensor<6x?xi32, #tract.dims<[S]>>
  }
}

// -----

// Slices are extract_slice with symbolic bounds.
// CHECK-LABEL: func.func @slice(
// CHECK-SAME:    %[[X:.*]]: tensor<2x?xf32> {bufferization.writable = false}) -> tensor<2x?xf32>
// CHECK:         %[[S:.*]] = tensor.dim %[[X]], %{{.*}}
// CHECK:         %[[L:.*]] = arith.addi %[[S]], %{{.*}} : index
// CHECK:         tensor.extract_slice %[[X]][0, 1] [2, %[[L]]] [1, 1] : tensor<2x?xf32> to tensor<2x?xf32>
// LLVM-LABEL: llvm.func @slice(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module attributes {tract.symbols = ["S"]} {
  func.func @slice(%arg0: tensor<2x?xf32, #tract.dims<[S]>>) -> tensor<2x?xf32, #tract.dims<[S-3]>> {
    %0 = tract.slice %arg0 {axis = 1 : i64, start = #tract.dim<1>, end = #tract.dim<S-2>} : tensor<2x?xf32, #tract.dims<[S]>> -> tensor<2x?xf32, #tract.dims<[S-3]>>
    return %0 : tensor<2x?xf32, #tract.dims<[S-3]>>
  }
}

// -----

// CHECK-LABEL: func.func @slice_symbolic_start(
// CHECK-SAME:    %[[X:.*]]: tensor<?xf32> {bufferization.writable = false}, %[[Y:.*]]: tensor<?xf32> {bufferization.writable = false}) -> tensor<?xf32>
// CHECK:         %[[S:.*]] = tensor.dim %[[X]], %{{.*}}
// CHECK:         %[[P:.*]] = tensor.dim %[[Y]], %{{.*}}
// CHECK:         %[[MP:.*]] = arith.muli %[[P]], %{{.*}} : index
// CHECK:         %[[L:.*]] = arith.addi %[[MP]], %[[S]] : index
// CHECK:         tensor.extract_slice %[[X]][%[[P]]] [%[[L]]] [1] : tensor<?xf32> to tensor<?xf32>
// LLVM-LABEL: llvm.func @slice_symbolic_start(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module attributes {tract.symbols = ["S", "P"]} {
  func.func @slice_symbolic_start(%arg0: tensor<?xf32, #tract.dims<[S]>>, %arg1: tensor<?xf32, #tract.dims<[P]>>) -> tensor<?xf32, #tract.dims<[S-P]>> {
    %0 = tract.slice %arg0 {axis = 0 : i64, start = #tract.dim<P>, end = #tract.dim<S>} : tensor<?xf32, #tract.dims<[S]>> -> tensor<?xf32, #tract.dims<[S-P]>>
    return %0 : tensor<?xf32, #tract.dims<[S-P]>>
  }
}

// -----

// A downsample is a strided extract_slice.
// CHECK-LABEL: func.func @downsample(
// CHECK:         %[[L:.*]] = arith.floordivsi
// CHECK:         tensor.extract_slice %{{.*}}[1] [%[[L]]] [3] : tensor<?xf32> to tensor<?xf32>
// LLVM-LABEL: llvm.func @downsample(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module attributes {tract.symbols = ["S"]} {
  func.func @downsample(%arg0: tensor<?xf32, #tract.dims<[S]>>) -> tensor<?xf32, #tract.dims<[(S+1)/3]>> {
    %0 = tract.downsample %arg0 {axis = 0 : i64, stride = 3 : i64, modulo = 1 : i64} : tensor<?xf32, #tract.dims<[S]>> -> tensor<?xf32, #tract.dims<[(S+1)/3]>>
    return %0 : tensor<?xf32, #tract.dims<[(S+1)/3]>>
  }
}

// -----

// Constant padding is a tensor.pad yielding the value (200 as a signless i8).
// CHECK-LABEL: func.func @pad_constant(
// CHECK-SAME:    %[[X:.*]]: tensor<?x4xi8> {bufferization.writable = false}) -> tensor<?x7xi8>
// CHECK:         %[[V:.*]] = arith.constant -56 : i8
// CHECK:         tensor.pad %[[X]] low[1, 2] high[0, 1] {
// CHECK:           tensor.yield %[[V]] : i8
// CHECK:         } : tensor<?x4xi8> to tensor<?x7xi8>
// LLVM-LABEL: llvm.func @pad_constant(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module attributes {tract.symbols = ["S"]} {
  func.func @pad_constant(%arg0: tensor<?x4xui8, #tract.dims<[S]>>) -> tensor<?x7xui8, #tract.dims<[S+1]>> {
    %0 = tract.pad %arg0 {before = array<i64: 1, 2>, after = array<i64: 0, 1>, value = 200 : ui8} : tensor<?x4xui8, #tract.dims<[S]>> -> tensor<?x7xui8, #tract.dims<[S+1]>>
    return %0 : tensor<?x7xui8, #tract.dims<[S+1]>>
  }
}

// -----

// CHECK-LABEL: func.func @pad_zero(
// CHECK:         %[[V:.*]] = arith.constant false
// CHECK:         tensor.pad %{{.*}} low[1] high[0]
// CHECK:           tensor.yield %[[V]] : i1
// LLVM-LABEL: llvm.func @pad_zero(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module {
  func.func @pad_zero(%arg0: tensor<2xi1>) -> tensor<3xi1> {
    %0 = tract.pad %arg0 {before = array<i64: 1>, after = array<i64: 0>} : tensor<2xi1> -> tensor<3xi1>
    return %0 : tensor<3xi1>
  }
}

// -----

// Reflect padding reads the input at -i before the start and 2*last - i
// past the end, clamped into the axis.
// CHECK-LABEL: func.func @pad_reflect(
// CHECK-SAME:    %[[X:.*]]: tensor<3x4xf32> {bufferization.writable = false}) -> tensor<3x7xf32>
// CHECK:         %[[D:.*]] = arith.constant 4 : index
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<3x7xf32>)
// CHECK:           %[[ROW:.*]] = linalg.index 0 : index
// CHECK:           %[[COL:.*]] = linalg.index 1 : index
// CHECK:           %[[J:.*]] = arith.subi %[[COL]], %{{.*}} : index
// CHECK:           %[[LAST:.*]] = arith.subi %[[D]], %{{.*}} : index
// CHECK:           %[[NEG:.*]] = arith.subi %{{.*}}, %[[J]] : index
// CHECK:           %[[BEFORE:.*]] = arith.cmpi slt, %[[J]], %{{.*}} : index
// CHECK:           %[[J1:.*]] = arith.select %[[BEFORE]], %[[NEG]], %[[J]] : index
// CHECK:           %[[TWICE:.*]] = arith.addi %[[LAST]], %[[LAST]] : index
// CHECK:           %[[MIRROR:.*]] = arith.subi %[[TWICE]], %[[J1]] : index
// CHECK:           %[[AFTER:.*]] = arith.cmpi sgt, %[[J1]], %[[LAST]] : index
// CHECK:           %[[J2:.*]] = arith.select %[[AFTER]], %[[MIRROR]], %[[J1]] : index
// CHECK:           %[[J3:.*]] = arith.minsi %[[J2]], %[[LAST]] : index
// CHECK:           %[[J4:.*]] = arith.maxsi %[[J3]], %{{.*}} : index
// CHECK:           %[[V:.*]] = tensor.extract %[[X]][%[[ROW]], %[[J4]]] : tensor<3x4xf32>
// CHECK:           linalg.yield %[[V]] : f32
// LLVM-LABEL: llvm.func @pad_reflect(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module {
  func.func @pad_reflect(%arg0: tensor<3x4xf32>) -> tensor<3x7xf32> {
    %0 = tract.pad %arg0 {before = array<i64: 0, 2>, after = array<i64: 0, 1>, mode = #tract<pad_mode reflect>} : tensor<3x4xf32> -> tensor<3x7xf32>
    return %0 : tensor<3x7xf32>
  }
}

// -----

// Edge padding clamps the coordinate into the axis.
// CHECK-LABEL: func.func @pad_edge(
// CHECK-SAME:    %[[X:.*]]: tensor<?xf32> {bufferization.writable = false}) -> tensor<?xf32>
// CHECK:         %[[S:.*]] = tensor.dim %[[X]], %{{.*}}
// CHECK:         %[[N:.*]] = arith.addi %[[S]], %{{.*}} : index
// CHECK:         %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?xf32>
// CHECK:         linalg.generic {{.*}} outs(%[[E]] : tensor<?xf32>)
// CHECK:           %[[I:.*]] = linalg.index 0 : index
// CHECK:           %[[J:.*]] = arith.subi %[[I]], %{{.*}} : index
// CHECK:           %[[LAST:.*]] = arith.subi %[[S]], %{{.*}} : index
// CHECK:           %[[J1:.*]] = arith.minsi %[[J]], %[[LAST]] : index
// CHECK:           %[[J2:.*]] = arith.maxsi %[[J1]], %{{.*}} : index
// CHECK:           tensor.extract %[[X]][%[[J2]]] : tensor<?xf32>
// LLVM-LABEL: llvm.func @pad_edge(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module attributes {tract.symbols = ["S"]} {
  func.func @pad_edge(%arg0: tensor<?xf32, #tract.dims<[S]>>) -> tensor<?xf32, #tract.dims<[S+3]>> {
    %0 = tract.pad %arg0 {before = array<i64: 1>, after = array<i64: 2>, mode = #tract<pad_mode edge>} : tensor<?xf32, #tract.dims<[S]>> -> tensor<?xf32, #tract.dims<[S+3]>>
    return %0 : tensor<?xf32, #tract.dims<[S+3]>>
  }
}

// -----

// CHECK-LABEL: func.func @concat(
// CHECK-SAME:    %[[X:.*]]: tensor<?x4xf32> {bufferization.writable = false}, %[[Y:.*]]: tensor<2x4xf32> {bufferization.writable = false}) -> tensor<?x4xf32>
// CHECK:         tensor.concat dim(0) %[[X]], %[[Y]], %[[X]] : (tensor<?x4xf32>, tensor<2x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
// LLVM-LABEL: llvm.func @concat(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module attributes {tract.symbols = ["S"]} {
  func.func @concat(%arg0: tensor<?x4xf32, #tract.dims<[S]>>, %arg1: tensor<2x4xf32>) -> tensor<?x4xf32, #tract.dims<[2*S+2]>> {
    %0 = tract.concat %arg0, %arg1, %arg0 {axis = 0 : i64} : (tensor<?x4xf32, #tract.dims<[S]>>, tensor<2x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>) -> tensor<?x4xf32, #tract.dims<[2*S+2]>>
    return %0 : tensor<?x4xf32, #tract.dims<[2*S+2]>>
  }
}

// -----

// A gather reads the indices through its indexing map and the input with
// tensor.extract, at an index wrapped once and clamped into the axis.
// CHECK-DAG:   #[[IDX:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @gather(
// CHECK-SAME:    %[[X:.*]]: tensor<5x?xf32> {bufferization.writable = false}, %[[I:.*]]: tensor<2x3xi64> {bufferization.writable = false}) -> tensor<5x2x3xf32>
// CHECK:         %[[S:.*]] = tensor.dim %[[X]], %{{.*}}
// CHECK:         linalg.generic {indexing_maps = [#[[IDX]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[I]] : tensor<2x3xi64>)
// CHECK:         ^bb0(%[[IN:.*]]: i64, %{{.*}}: f32):
// CHECK:           %[[K:.*]] = arith.index_cast %[[IN]] : i64 to index
// CHECK:           %[[NEG:.*]] = arith.cmpi slt, %[[K]], %[[C0:.*]] : index
// CHECK:           %[[WRAP:.*]] = arith.addi %[[K]], %[[S]] : index
// CHECK:           %[[K1:.*]] = arith.select %[[NEG]], %[[WRAP]], %[[K]] : index
// CHECK:           %[[LAST:.*]] = arith.subi %[[S]], %{{.*}} : index
// CHECK:           %[[K2:.*]] = arith.minsi %[[K1]], %[[LAST]] : index
// CHECK:           %[[K3:.*]] = arith.maxsi %[[K2]], %[[C0]] : index
// CHECK:           %[[ROW:.*]] = linalg.index 0 : index
// CHECK:           %[[V:.*]] = tensor.extract %[[X]][%[[ROW]], %[[K3]]] : tensor<5x?xf32>
// CHECK:           linalg.yield %[[V]] : f32
// LLVM-LABEL: llvm.func @gather(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module attributes {tract.symbols = ["S"]} {
  func.func @gather(%arg0: tensor<5x?xf32, #tract.dims<[S]>>, %arg1: tensor<2x3xi64>) -> tensor<5x2x3xf32> {
    %0 = tract.gather %arg0, %arg1 {axis = 1 : i64} : (tensor<5x?xf32, #tract.dims<[S]>>, tensor<2x3xi64>) -> tensor<5x2x3xf32>
    return %0 : tensor<5x2x3xf32>
  }
}

// -----

// Unsigned indices are zero-extended; a scalar index reads through a
// constant map.
// CHECK-DAG:   #[[SCALAR:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @gather_scalar_unsigned(
// CHECK:         linalg.generic {indexing_maps = [#[[SCALAR]], #{{.*}}], {{.*}} ins(%{{.*}} : tensor<i32>)
// CHECK:           arith.index_castui %{{.*}} : i32 to index
// CHECK:           %[[COL:.*]] = linalg.index 0 : index
// CHECK:           tensor.extract %{{.*}}[%{{.*}}, %[[COL]]] : tensor<5x4xf32>
// LLVM-LABEL: llvm.func @gather_scalar_unsigned(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module {
  func.func @gather_scalar_unsigned(%arg0: tensor<5x4xf32>, %arg1: tensor<ui32>) -> tensor<4xf32> {
    %0 = tract.gather %arg0, %arg1 {axis = 0 : i64} : (tensor<5x4xf32>, tensor<ui32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// CHECK-LABEL: func.func @gather_elements(
// CHECK-SAME:    %[[X:.*]]: tensor<3x4xf32> {bufferization.writable = false}, %[[I:.*]]: tensor<3x2xi32> {bufferization.writable = false}) -> tensor<3x2xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[I]] : tensor<3x2xi32>) outs(%{{.*}} : tensor<3x2xf32>)
// CHECK:           %[[ROW:.*]] = linalg.index 0 : index
// CHECK:           arith.index_cast %{{.*}} : i32 to index
// CHECK:           %[[K:.*]] = arith.maxsi
// CHECK:           tensor.extract %[[X]][%[[ROW]], %[[K]]] : tensor<3x4xf32>
// LLVM-LABEL: llvm.func @gather_elements(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module {
  func.func @gather_elements(%arg0: tensor<3x4xf32>, %arg1: tensor<3x2xi32>) -> tensor<3x2xf32> {
    %0 = tract.gather_elements %arg0, %arg1 {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi32>) -> tensor<3x2xf32>
    return %0 : tensor<3x2xf32>
  }
}

// -----

// gather_nd reads each index of a row with tensor.extract; the batch axis
// and the tail address the input directly.
// CHECK-LABEL: func.func @gather_nd(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3x4x5xf32> {bufferization.writable = false}, %[[I:.*]]: tensor<2x6x2xi64> {bufferization.writable = false}) -> tensor<2x6x5xf32>
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<2x6x5xf32>)
// CHECK:           %[[B:.*]] = linalg.index 0 : index
// CHECK:           %[[R:.*]] = linalg.index 1 : index
// CHECK:           tensor.extract %[[I]][%[[B]], %[[R]], %{{.*}}] : tensor<2x6x2xi64>
// CHECK:           %[[K0:.*]] = arith.maxsi
// CHECK:           tensor.extract %[[I]][%[[B]], %[[R]], %{{.*}}] : tensor<2x6x2xi64>
// CHECK:           %[[K1:.*]] = arith.maxsi
// CHECK:           %[[T:.*]] = linalg.index 2 : index
// CHECK:           tensor.extract %[[X]][%[[B]], %[[K0]], %[[K1]], %[[T]]] : tensor<2x3x4x5xf32>
// LLVM-LABEL: llvm.func @gather_nd(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module {
  func.func @gather_nd(%arg0: tensor<2x3x4x5xf32>, %arg1: tensor<2x6x2xi64>) -> tensor<2x6x5xf32> {
    %0 = tract.gather_nd %arg0, %arg1 {batch_dims = 1 : i64} : (tensor<2x3x4x5xf32>, tensor<2x6x2xi64>) -> tensor<2x6x5xf32>
    return %0 : tensor<2x6x5xf32>
  }
}

// -----

// A dyn_slice whose length only it determines computes it,
// clamp(end, start, dim) - start, and binds the symbol for the ops after it;
// the function's result copy reads that size from the value.
// CHECK-LABEL: func.func @dyn_slice(
// CHECK-SAME:    %[[X:.*]]: tensor<?x4xf32> {bufferization.writable = false}, %[[B:.*]]: tensor<i64> {bufferization.writable = false}, %[[E:.*]]: tensor<i64> {bufferization.writable = false}) -> tensor<?x4xf32>
// CHECK:         %[[S:.*]] = tensor.dim %[[X]], %{{.*}}
// CHECK:         %[[B0:.*]] = tensor.extract %[[B]][] : tensor<i64>
// CHECK:         %[[B1:.*]] = arith.index_cast %[[B0]] : i64 to index
// CHECK:         %[[B2:.*]] = arith.minsi %[[B1]], %[[S]] : index
// CHECK:         %[[START:.*]] = arith.maxsi %[[B2]], %{{.*}} : index
// CHECK:         %[[E0:.*]] = tensor.extract %[[E]][] : tensor<i64>
// CHECK:         %[[E1:.*]] = arith.index_cast %[[E0]] : i64 to index
// CHECK:         %[[E2:.*]] = arith.minsi %[[E1]], %[[S]] : index
// CHECK:         %[[END:.*]] = arith.maxsi %[[E2]], %[[START]] : index
// CHECK:         %[[LEN:.*]] = arith.subi %[[END]], %[[START]] : index
// CHECK:         %[[SLICE:.*]] = tensor.extract_slice %[[X]][%[[START]], 0] [%[[LEN]], 4] [1, 1] : tensor<?x4xf32> to tensor<?x4xf32>
// CHECK:         tensor.empty(%[[LEN]]) : tensor<?x4xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[SLICE]] : tensor<?x4xf32>)
// CHECK:           math.exp
// CHECK:         %[[D:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x4xf32>
// CHECK:         tensor.empty(%[[D]]) : tensor<?x4xf32>
// LLVM-LABEL: llvm.func @dyn_slice(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module attributes {tract.symbols = ["S", "slice_1"]} {
  func.func @dyn_slice(%arg0: tensor<?x4xf32, #tract.dims<[S]>>, %arg1: tensor<i64>, %arg2: tensor<i64>) -> tensor<?x4xf32, #tract.dims<[slice_1]>> {
    %0 = tract.dyn_slice %arg0, %arg1, %arg2 {axis = 0 : i64, len = #tract.dim<slice_1>} : (tensor<?x4xf32, #tract.dims<[S]>>, tensor<i64>, tensor<i64>) -> tensor<?x4xf32, #tract.dims<[slice_1]>>
    %1 = tract.exp %0 : tensor<?x4xf32, #tract.dims<[slice_1]>>
    return %1 : tensor<?x4xf32, #tract.dims<[slice_1]>>
  }
}

// -----

// With a length the inputs determine, the start is also kept low enough for
// the slice to end within the axis.
// CHECK-LABEL: func.func @dyn_slice_bound(
// CHECK-SAME:    %[[X:.*]]: tensor<?xf32> {bufferization.writable = false}, %[[Y:.*]]: tensor<?xf32> {bufferization.writable = false}, %[[B:.*]]: tensor<1xi32> {bufferization.writable = false}, %{{.*}}: tensor<1xi32> {bufferization.writable = false}) -> tensor<?xf32>
// CHECK:         %[[S:.*]] = tensor.dim %[[X]], %{{.*}}
// CHECK:         %[[T:.*]] = tensor.dim %[[Y]], %{{.*}}
// CHECK:         tensor.extract %[[B]][%{{.*}}] : tensor<1xi32>
// CHECK:         %[[B1:.*]] = arith.maxsi
// CHECK:         %[[ROOM:.*]] = arith.subi %[[S]], %[[T]] : index
// CHECK:         %[[B2:.*]] = arith.minsi %[[B1]], %[[ROOM]] : index
// CHECK:         %[[START:.*]] = arith.maxsi %[[B2]], %{{.*}} : index
// CHECK:         tensor.extract_slice %[[X]][%[[START]]] [%[[T]]] [1] : tensor<?xf32> to tensor<?xf32>
// LLVM-LABEL: llvm.func @dyn_slice_bound(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module attributes {tract.symbols = ["S", "T"]} {
  func.func @dyn_slice_bound(%arg0: tensor<?xf32, #tract.dims<[S]>>, %arg1: tensor<?xf32, #tract.dims<[T]>>, %s: tensor<1xi32>, %e: tensor<1xi32>) -> tensor<?xf32, #tract.dims<[T]>> {
    %0 = tract.dyn_slice %arg0, %s, %e {axis = 0 : i64, len = #tract.dim<T>} : (tensor<?xf32, #tract.dims<[S]>>, tensor<1xi32>, tensor<1xi32>) -> tensor<?xf32, #tract.dims<[T]>>
    return %0 : tensor<?xf32, #tract.dims<[T]>>
  }
}

// -----

// Scatters are a loop nest over the updates that carries the result;
// reductions read the element they land on.
// CHECK-LABEL: func.func @scatter_elements(
// CHECK-SAME:    %[[D:.*]]: tensor<3x4xf32> {bufferization.writable = false}, %[[I:.*]]: tensor<2x4xi64> {bufferization.writable = false}, %[[U:.*]]: tensor<2x4xf32> {bufferization.writable = false}) -> tensor<3x4xf32>
// CHECK:         scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC0:.*]] = %[[D]]) -> (tensor<3x4xf32>) {
// CHECK:           scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ACC0]]) -> (tensor<3x4xf32>) {
// CHECK:             tensor.extract %[[I]][%[[R]], %[[C]]] : tensor<2x4xi64>
// CHECK:             %[[K:.*]] = arith.maxsi
// CHECK:             %[[NEW:.*]] = tensor.extract %[[U]][%[[R]], %[[C]]] : tensor<2x4xf32>
// CHECK:             %[[OLD:.*]] = tensor.extract %[[ACC]][%[[K]], %[[C]]] : tensor<3x4xf32>
// CHECK:             %[[SUM:.*]] = arith.addf %[[OLD]], %[[NEW]] : f32
// CHECK:             %[[INS:.*]] = tensor.insert %[[SUM]] into %[[ACC]][%[[K]], %[[C]]] : tensor<3x4xf32>
// CHECK:             scf.yield %[[INS]] : tensor<3x4xf32>
// LLVM-LABEL: llvm.func @scatter_elements(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module {
  func.func @scatter_elements(%arg0: tensor<3x4xf32>, %arg1: tensor<2x4xi64>, %arg2: tensor<2x4xf32>) -> tensor<3x4xf32> {
    %0 = tract.scatter_elements %arg0, %arg1, %arg2 {axis = 0 : i64, reduction = #tract<scatter_reduction add>} : (tensor<3x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<3x4xf32>
    return %0 : tensor<3x4xf32>
  }
}

// -----

// Unsigned indices are zero-extended; max of signed integers is maxsi.
// CHECK-LABEL: func.func @scatter_max_unsigned(
// CHECK:         arith.index_castui %{{.*}} : i8 to index
// CHECK:         arith.maxsi %{{.*}}, %{{.*}} : i32
// LLVM-LABEL: llvm.func @scatter_max_unsigned(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module {
  func.func @scatter_max_unsigned(%arg0: tensor<4xi32>, %arg1: tensor<3xui8>, %arg2: tensor<3xi32>) -> tensor<4xi32> {
    %0 = tract.scatter_elements %arg0, %arg1, %arg2 {axis = 0 : i64, reduction = #tract<scatter_reduction max>} : (tensor<4xi32>, tensor<3xui8>, tensor<3xi32>) -> tensor<4xi32>
    return %0 : tensor<4xi32>
  }
}

// -----

// CHECK-LABEL: func.func @scatter_nd(
// CHECK-SAME:    %[[D:.*]]: tensor<4x3xf32> {bufferization.writable = false}, %[[I:.*]]: tensor<2x1xi64> {bufferization.writable = false}, %[[U:.*]]: tensor<2x3xf32> {bufferization.writable = false}) -> tensor<4x3xf32>
// CHECK:         scf.for %[[R:.*]] = {{.*}} iter_args(%[[ACC0:.*]] = %[[D]])
// CHECK:           scf.for %[[C:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %[[ACC0]])
// CHECK:             tensor.extract %[[I]][%[[R]], %{{.*}}] : tensor<2x1xi64>
// CHECK:             %[[K:.*]] = arith.maxsi
// CHECK:             %[[NEW:.*]] = tensor.extract %[[U]][%[[R]], %[[C]]] : tensor<2x3xf32>
// CHECK:             tensor.insert %[[NEW]] into %[[ACC]][%[[K]], %[[C]]] : tensor<4x3xf32>
// LLVM-LABEL: llvm.func @scatter_nd(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module {
  func.func @scatter_nd(%arg0: tensor<4x3xf32>, %arg1: tensor<2x1xi64>, %arg2: tensor<2x3xf32>) -> tensor<4x3xf32> {
    %0 = tract.scatter_nd %arg0, %arg1, %arg2 : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<4x3xf32>
    return %0 : tensor<4x3xf32>
  }
}

// -----

// one_hot compares the (wrapped) index with the position on the new axis.
// CHECK-DAG:   #[[DROP:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @one_hot(
// CHECK:         %[[ON:.*]] = arith.constant 1 : i8
// CHECK:         %[[OFF:.*]] = arith.constant 0 : i8
// CHECK:         %[[DEPTH:.*]] = arith.constant 4 : index
// CHECK:         linalg.generic {indexing_maps = [#[[DROP]], #{{.*}}], {{.*}} ins(%{{.*}} : tensor<3xi64>) outs(%{{.*}} : tensor<3x4xi8>)
// CHECK:           %[[K:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:           %[[NEG:.*]] = arith.cmpi slt, %[[K]], %{{.*}} : index
// CHECK:           %[[WRAP:.*]] = arith.addi %[[K]], %[[DEPTH]] : index
// CHECK:           %[[K1:.*]] = arith.select %[[NEG]], %[[WRAP]], %[[K]] : index
// CHECK:           %[[POS:.*]] = linalg.index 1 : index
// CHECK:           %[[HOT:.*]] = arith.cmpi eq, %[[K1]], %[[POS]] : index
// CHECK:           arith.select %[[HOT]], %[[ON]], %[[OFF]] : i8
// LLVM-LABEL: llvm.func @one_hot(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module {
  func.func @one_hot(%arg0: tensor<3xi64>) -> tensor<3x4xui8> {
    %0 = tract.one_hot %arg0 {axis = 1 : i64, dim = 4 : i64, off = 0 : ui8, on = 1 : ui8} : tensor<3xi64> -> tensor<3x4xui8>
    return %0 : tensor<3x4xui8>
  }
}

// -----

// CHECK-LABEL: func.func @trilu(
// CHECK-SAME:    %[[X:.*]]: tensor<3x4xf32> {bufferization.writable = false}, %[[K:.*]]: tensor<i64> {bufferization.writable = false}) -> tensor<3x4xf32>
// CHECK:         %[[K0:.*]] = tensor.extract %[[K]][] : tensor<i64>
// CHECK:         %[[K1:.*]] = arith.index_cast %[[K0]] : i64 to index
// CHECK:         linalg.generic {{.*}} ins(%[[X]] : tensor<3x4xf32>)
// CHECK:         ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[ROW:.*]] = linalg.index 0 : index
// CHECK:           %[[COL:.*]] = linalg.index 1 : index
// CHECK:           %[[DIAG:.*]] = arith.addi %[[ROW]], %[[K1]] : index
// CHECK:           %[[KEEP:.*]] = arith.cmpi sle, %[[COL]], %[[DIAG]] : index
// CHECK:           %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:           arith.select %[[KEEP]], %[[IN]], %[[ZERO]] : f32
// LLVM-LABEL: llvm.func @trilu(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module {
  func.func @trilu(%arg0: tensor<3x4xf32>, %arg1: tensor<i64>) -> tensor<3x4xf32> {
    %0 = tract.trilu %arg0, %arg1 {upper = false} : (tensor<3x4xf32>, tensor<i64>) -> tensor<3x4xf32>
    return %0 : tensor<3x4xf32>
  }
}

// -----

// An integer range of a length only it determines computes
// max(ceil((end - start) / step), 0) in i64 (0 for a zero step).
// CHECK-LABEL: func.func @range_int(
// CHECK:         %[[START:.*]] = tensor.extract %{{.*}}[] : tensor<i32>
// CHECK:         %[[END:.*]] = tensor.extract %{{.*}}[] : tensor<i32>
// CHECK:         %[[STEP:.*]] = tensor.extract %{{.*}}[] : tensor<i32>
// CHECK:         %[[SPAN:.*]] = arith.subi
// CHECK:         %[[N:.*]] = arith.ceildivsi %[[SPAN]], %{{.*}} : i64
// CHECK:         arith.maxsi %[[N]], %{{.*}} : i64
// CHECK:         %[[LEN:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:         %[[E:.*]] = tensor.empty(%[[LEN]]) : tensor<?xi32>
// CHECK:         linalg.generic {{.*}} outs(%[[E]] : tensor<?xi32>)
// CHECK:           %[[I:.*]] = linalg.index 0 : index
// CHECK:           %[[I32:.*]] = arith.index_cast %[[I]] : index to i32
// CHECK:           %[[OFF:.*]] = arith.muli %[[I32]], %[[STEP]] : i32
// CHECK:           arith.addi %[[START]], %[[OFF]] : i32
// LLVM-LABEL: llvm.func @range_int(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module attributes {tract.symbols = ["range_1"]} {
  func.func @range_int(%arg0: tensor<i32>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> tensor<?xi32, #tract.dims<[range_1]>> {
    %0 = tract.range %arg0, %arg1, %arg2 {len = #tract.dim<range_1>} : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<?xi32, #tract.dims<[range_1]>>
    return %0 : tensor<?xi32, #tract.dims<[range_1]>>
  }
}

// -----

// A float range counts in f64; its elements are start + i * step in the
// element type.
// CHECK-LABEL: func.func @range_float(
// CHECK:         %[[START:.*]] = tensor.extract %{{.*}}[] : tensor<f16>
// CHECK:         tensor.extract %{{.*}}[] : tensor<f16>
// CHECK:         %[[STEP:.*]] = tensor.extract %{{.*}}[] : tensor<f16>
// CHECK:         arith.divf %{{.*}}, %{{.*}} : f64
// CHECK:         math.ceil %{{.*}} : f64
// CHECK:         arith.fptosi %{{.*}} : f64 to i64
// CHECK:         linalg.generic
// CHECK:           %[[I:.*]] = linalg.index 0 : index
// CHECK:           %[[I64:.*]] = arith.index_castui %[[I]] : index to i64
// CHECK:           %[[IF:.*]] = arith.uitofp %[[I64]] : i64 to f16
// CHECK:           %[[OFF:.*]] = arith.mulf %[[IF]], %[[STEP]] : f16
// CHECK:           arith.addf %[[START]], %[[OFF]] : f16
// LLVM-LABEL: llvm.func @range_float(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module attributes {tract.symbols = ["r"]} {
  func.func @range_float(%arg0: tensor<f16>, %arg1: tensor<f16>, %arg2: tensor<f16>) -> tensor<?xf16, #tract.dims<[r]>> {
    %0 = tract.range %arg0, %arg1, %arg2 {len = #tract.dim<r>} : (tensor<f16>, tensor<f16>, tensor<f16>) -> tensor<?xf16, #tract.dims<[r]>>
    return %0 : tensor<?xf16, #tract.dims<[r]>>
  }
}

// -----

// A length the inputs determine is used as it is.
// CHECK-LABEL: func.func @range_symbolic(
// CHECK-SAME:    %[[X:.*]]: tensor<?xf32>
// CHECK:         %[[S:.*]] = tensor.dim %[[X]], %{{.*}}
// CHECK-NOT:     arith.ceildivsi
// CHECK:         tensor.empty(%[[S]]) : tensor<?xi64>
// LLVM-LABEL: llvm.func @range_symbolic(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module attributes {tract.symbols = ["S"]} {
  func.func @range_symbolic(%arg0: tensor<?xf32, #tract.dims<[S]>>, %arg1: tensor<i64>) -> tensor<?xi64, #tract.dims<[S]>> {
    %c0 = tract.const dense<0> : tensor<i64>
    %c1 = tract.const dense<1> : tensor<i64>
    %0 = tract.range %c0, %arg1, %c1 {len = #tract.dim<S>} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64, #tract.dims<[S]>>
    return %0 : tensor<?xi64, #tract.dims<[S]>>
  }
}

// -----

// CHECK-LABEL: func.func @shape_of(
// CHECK-SAME:    %[[X:.*]]: tensor<?x4xf32> {bufferization.writable = false}) -> tensor<2xi64>
// CHECK:         %[[S:.*]] = tensor.dim %[[X]], %{{.*}}
// CHECK:         %[[S64:.*]] = arith.index_cast %[[S]] : index to i64
// CHECK:         %[[F:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK:         tensor.from_elements %[[S64]], %[[F]] : tensor<2xi64>
// LLVM-LABEL: llvm.func @shape_of(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module attributes {tract.symbols = ["S"]} {
  func.func @shape_of(%arg0: tensor<?x4xf32, #tract.dims<[S]>>) -> tensor<2xi64> {
    %0 = tract.shape_of %arg0 : tensor<?x4xf32, #tract.dims<[S]>> -> tensor<2xi64>
    return %0 : tensor<2xi64>
  }
}

// -----

// top-k selects, for each rank j < k, the best element after the previous
// pick (NaN above all numbers, ties to the lowest index); k comes from its
// operand, clamped into the axis, and binds the result's symbol.
// CHECK-LABEL: func.func @topk(
// CHECK-SAME:    %[[X:.*]]: tensor<3x?xf32> {bufferization.writable = false}, %[[K:.*]]: tensor<1xi64> {bufferization.writable = false}) -> (tensor<3x?xf32>, tensor<3x?xi64>)
// CHECK:         %[[N:.*]] = tensor.dim %[[X]], %{{.*}}
// CHECK:         tensor.extract %[[K]][%{{.*}}] : tensor<1xi64>
// CHECK:         %[[K1:.*]] = arith.minsi %{{.*}}, %[[N]] : index
// CHECK:         %[[KK:.*]] = arith.maxsi %[[K1]], %{{.*}} : index
// CHECK:         %[[V:.*]] = tensor.empty(%[[KK]]) : tensor<3x?xf32>
// CHECK:         %[[IX:.*]] = tensor.empty(%[[KK]]) : tensor<3x?xi64>
// CHECK:         scf.for %[[ROW:.*]] = {{.*}} iter_args(%{{.*}} = %[[V]], %{{.*}} = %[[IX]])
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to %[[KK]] step %{{.*}} iter_args(%[[PREV:.*]] = %{{.*}}, %[[PREVI:.*]] = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (f32, index, tensor<3x?xf32>, tensor<3x?xi64>)
// CHECK:             scf.for %[[I:.*]] = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[BEST:.*]] = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (f32, index, i1)
// CHECK:               %[[E:.*]] = tensor.extract %[[X]][%[[ROW]], %[[I]]] : tensor<3x?xf32>
// CHECK:               arith.cmpf ogt, %[[PREV]], %[[E]] : f32
// CHECK:               arith.cmpi sgt, %[[I]], %[[PREVI]] : index
// CHECK:               arith.cmpf ogt, %[[E]], %[[BEST]] : f32
// CHECK:               scf.yield
// CHECK:             tensor.insert %{{.*}} into %{{.*}}[%[[ROW]], %[[J]]] : tensor<3x?xf32>
// CHECK:             arith.index_cast %{{.*}} : index to i64
// CHECK:             tensor.insert %{{.*}} into %{{.*}}[%[[ROW]], %[[J]]] : tensor<3x?xi64>
// LLVM-LABEL: llvm.func @topk(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module attributes {tract.symbols = ["S", "k_1"]} {
  func.func @topk(%arg0: tensor<3x?xf32, #tract.dims<[S]>>, %arg1: tensor<1xi64>) -> (tensor<3x?xf32, #tract.dims<[k_1]>>, tensor<3x?xi64, #tract.dims<[k_1]>>) {
    %0:2 = tract.topk %arg0, %arg1 {axis = 1 : i64, largest = true, len = #tract.dim<k_1>} : (tensor<3x?xf32, #tract.dims<[S]>>, tensor<1xi64>) -> (tensor<3x?xf32, #tract.dims<[k_1]>>, tensor<3x?xi64, #tract.dims<[k_1]>>)
    return %0#0, %0#1 : tensor<3x?xf32, #tract.dims<[k_1]>>, tensor<3x?xi64, #tract.dims<[k_1]>>
  }
}

// -----

// Smallest first, unsigned comparisons; a constant k is the loop bound.
// CHECK-LABEL: func.func @topk_smallest_unsigned(
// CHECK:         %[[N:.*]] = arith.constant 4 : index
// CHECK:         %[[KK:.*]] = arith.constant 2 : index
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[KK]]
// CHECK:           scf.for %{{.*}} = %{{.*}} to %[[N]]
// CHECK:             %[[E:.*]] = tensor.extract
// CHECK:             arith.cmpi ugt, %[[E]], %{{.*}} : i8
// LLVM-LABEL: llvm.func @topk_smallest_unsigned(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module {
  func.func @topk_smallest_unsigned(%arg0: tensor<2x4xui8>, %arg1: tensor<i64>) -> (tensor<2x2xui8>, tensor<2x2xi64>) {
    %0:2 = tract.topk %arg0, %arg1 {axis = 1 : i64, largest = false, len = #tract.dim<2>} : (tensor<2x4xui8>, tensor<i64>) -> (tensor<2x2xui8>, tensor<2x2xi64>)
    return %0#0, %0#1 : tensor<2x2xui8>, tensor<2x2xi64>
  }
}

// -----

// An empty slice is an empty tensor: the verifiers reject any static offset
// into an empty axis.
// CHECK-LABEL: func.func @slice_empty(
// CHECK-NOT:     tensor.extract_slice
// CHECK:         tensor.empty() : tensor<20x0x5xf32>
// LLVM-LABEL: llvm.func @slice_empty(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module {
  func.func @slice_empty(%arg0: tensor<20x10x5xf32>) -> tensor<20x0x5xf32> {
    %0 = tract.slice %arg0 {axis = 1 : i64, end = #tract.dim<10>, start = #tract.dim<10>} : tensor<20x10x5xf32> -> tensor<20x0x5xf32>
    return %0 : tensor<20x0x5xf32>
  }
}

// -----

// Inputs empty along the axis are left out of a concat.
// CHECK-LABEL: func.func @concat_empty(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3xf32> {bufferization.writable = false}, %{{.*}}: tensor<2x0xf32> {bufferization.writable = false}) -> tensor<2x3xf32>
// CHECK-NOT:     tensor.concat
// CHECK:         linalg.copy ins(%[[X]] : tensor<2x3xf32>)
// LLVM-LABEL: llvm.func @concat_empty(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module {
  func.func @concat_empty(%arg0: tensor<2x3xf32>, %arg1: tensor<2x0xf32>) -> tensor<2x3xf32> {
    %0 = tract.concat %arg1, %arg0, %arg1 {axis = 1 : i64} : (tensor<2x0xf32>, tensor<2x3xf32>, tensor<2x0xf32>) -> tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }
}

// -----

// Padding an empty tensor is all border.
// CHECK-LABEL: func.func @pad_empty(
// CHECK:         %[[V:.*]] = arith.constant 7.000000e+00 : f32
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK:         linalg.fill ins(%[[V]] : f32) outs(%[[E]] : tensor<2x3xf32>)
// LLVM-LABEL: llvm.func @pad_empty(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module {
  func.func @pad_empty(%arg0: tensor<0x1xf32>) -> tensor<2x3xf32> {
    %0 = tract.pad %arg0 {before = array<i64: 1, 1>, after = array<i64: 1, 1>, value = 7.0 : f32} : tensor<0x1xf32> -> tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }
}

// -----

// A shape that only run-time values decide: tract.bind_dims binds a and b
// to the elements of the shape tensor, and the ops after it size their
// results from those values. The values must be dims (>= 0) satisfying the
// model's assertions over them (6 == a*b); otherwise tract_fail reports
// them and a and b become 0, so that nothing reads out of bounds.
// CHECK-LABEL: func.func @bind_dims_reshape(
// CHECK-SAME:    %[[X:.*]]: tensor<6xf32> {bufferization.writable = false}, %[[SHAPE:.*]]: tensor<2xi64> {bufferization.writable = false}) -> tensor<?x?xf32>
// CHECK:         %[[E0:.*]] = tensor.extract %[[SHAPE]][%{{.*}}] : tensor<2xi64>
// CHECK:         %[[A:.*]] = arith.index_cast %[[E0]] : i64 to index
// CHECK:         %[[E1:.*]] = tensor.extract %[[SHAPE]][%{{.*}}] : tensor<2xi64>
// CHECK:         %[[B:.*]] = arith.index_cast %[[E1]] : i64 to index
// CHECK:         %[[DIMS_OK:.*]] = arith.andi
// CHECK:         %[[AB:.*]] = arith.muli %[[A]], %[[B]] : index
// CHECK:         %[[HALF:.*]] = arith.andi
// CHECK:         %[[OK:.*]] = arith.andi %[[HALF]], %{{.*}} : i1
// CHECK:         %[[FAILED:.*]] = arith.xori %[[OK]], %{{.*}} : i1
// CHECK:         scf.if %[[FAILED]] {
// CHECK:           llvm.call @tract_fail(
// CHECK:         %[[SA:.*]] = arith.select %[[OK]], %[[A]], %{{.*}} : index
// CHECK:         %[[SB:.*]] = arith.select %[[OK]], %[[B]], %{{.*}} : index
// CHECK:         %[[SAB:.*]] = arith.muli %[[SA]], %[[SB]] : index
// CHECK:         %[[S:.*]] = tensor.extract_slice %[[X]][0] {{\[}}%[[SAB]]] [1] : tensor<6xf32> to tensor<?xf32>
// CHECK:         %[[DIMS:.*]] = tensor.from_elements %[[SA]], %[[SB]] : tensor<2xindex>
// CHECK:         tensor.reshape %[[S]](%[[DIMS]]) : (tensor<?xf32>, tensor<2xindex>) -> tensor<?x?xf32>
// LLVM-LABEL: llvm.func @bind_dims_reshape(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module attributes {tract.symbols = ["a", "b"], tract.assertions = ["6 == a*b"]} {
  func.func @bind_dims_reshape(%arg0: tensor<6xf32>, %arg1: tensor<2xi64>) -> tensor<?x?xf32, #tract.dims<[a, b]>> {
    tract.bind_dims %arg1 {dims = #tract.shape<[a, b]>} : tensor<2xi64>
    %0 = tract.slice %arg0 {axis = 0 : i64, start = #tract.dim<0>, end = #tract.dim<a*b>} : tensor<6xf32> -> tensor<?xf32, #tract.dims<[a*b]>>
    %1 = tract.reshape %0 {at = 0 : i64, count = 1 : i64, to = #tract.shape<[a, b]>} : tensor<?xf32, #tract.dims<[a*b]>> -> tensor<?x?xf32, #tract.dims<[a, b]>>
    return %1 : tensor<?x?xf32, #tract.dims<[a, b]>>
  }
}
