// RUN: tract-opt --tract-lower-to-linalg --split-input-file --verify-diagnostics %s | FileCheck %s
// RUN: tract-opt --tract-lower-to-llvm --split-input-file --verify-diagnostics %s | FileCheck %s --check-prefix=LLVM

// Each successful case also goes the whole way to the LLVM dialect.

// An einsum that is exactly a matrix product is linalg.matmul, accumulating
// into zeros.
// CHECK-LABEL: func.func @matmul(
// LLVM-LABEL: llvm.func @matmul(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK-SAME:    %[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<3x4xf32>)
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK:         %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<2x4xf32>)
// CHECK:         linalg.matmul ins(%[[A]], %[[B]] : tensor<2x3xf32>, tensor<3x4xf32>) outs(%[[F]] : tensor<2x4xf32>)
module {
  func.func @matmul(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
    %0 = tract.einsum %a, %b {expr = "mk,kn->mn"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    return %0 : tensor<2x4xf32>
  }
}

// -----

// Batched, with a symbolic batch: linalg.batch_matmul; f16 accumulates in
// f16, as the folder does.
// CHECK-LABEL: func.func @batch_matmul(
// LLVM-LABEL: llvm.func @batch_matmul(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK-SAME:    %[[A:.*]]: tensor<?x2x3xf16>, %[[B:.*]]: tensor<?x3x4xf16>)
// CHECK:         %[[S:.*]] = tensor.dim %[[A]], %c0
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f16
// CHECK:         %[[E:.*]] = tensor.empty(%[[S]]) : tensor<?x2x4xf16>
// CHECK:         %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f16) outs(%[[E]] : tensor<?x2x4xf16>)
// CHECK:         linalg.batch_matmul ins(%[[A]], %[[B]] : tensor<?x2x3xf16>, tensor<?x3x4xf16>) outs(%[[F]] : tensor<?x2x4xf16>)
module attributes {tract.symbols = ["S"]} {
  func.func @batch_matmul(%a: tensor<?x2x3xf16, #tract.dims<[S]>>, %b: tensor<?x3x4xf16, #tract.dims<[S]>>) -> tensor<?x2x4xf16, #tract.dims<[S]>> {
    %0 = tract.einsum %a, %b {expr = "bmk,bkn->bmn"} : (tensor<?x2x3xf16, #tract.dims<[S]>>, tensor<?x3x4xf16, #tract.dims<[S]>>) -> tensor<?x2x4xf16, #tract.dims<[S]>>
    return %0 : tensor<?x2x4xf16, #tract.dims<[S]>>
  }
}

// -----

// A size-1 axis broadcasts by reading index 0: a linalg.generic with one
// loop per letter, the summed ones last.
// CHECK-DAG: #[[LHS:.*]] = affine_map<(d0, d1, d2, d3) -> (0, d1, d3)>
// CHECK-DAG: #[[RHS:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @broadcast(
// LLVM-LABEL: llvm.func @broadcast(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK:         linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<1x2x3xf32>, tensor<5x3x4xf32>) outs(%{{.*}} : tensor<5x2x4xf32>)
// CHECK:           %[[P:.*]] = arith.mulf %in, %in_0 : f32
// CHECK:           %[[S:.*]] = arith.addf %out, %[[P]] : f32
// CHECK:           linalg.yield %[[S]] : f32
module {
  func.func @broadcast(%a: tensor<1x2x3xf32>, %b: tensor<5x3x4xf32>) -> tensor<5x2x4xf32> {
    %0 = tract.einsum %a, %b {expr = "bmk,bkn->bmn"} : (tensor<1x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
    return %0 : tensor<5x2x4xf32>
  }
}

// -----

// A repeated letter reads a diagonal; the implicit output keeps the letters
// seen once (none for a trace); integers wrap in their own type.
// CHECK-DAG: #[[DIAG:.*]] = affine_map<(d0) -> (d0, d0)>
// CHECK-DAG: #[[VEC:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0) -> ()>
// CHECK-DAG: #[[T:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @letters(
// LLVM-LABEL: llvm.func @letters(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK:         linalg.generic {indexing_maps = [#[[DIAG]], #[[VEC]]], iterator_types = ["parallel"]} ins(%{{.*}} : tensor<3x3xi32>) outs(%{{.*}} : tensor<3xi32>)
// CHECK:           arith.addi %out, %in : i32
// CHECK:         linalg.generic {indexing_maps = [#[[DIAG]], #[[SCALAR]]], iterator_types = ["reduction"]} ins(%{{.*}} : tensor<3x3xi32>) outs(%{{.*}} : tensor<i32>)
// CHECK:         linalg.generic {indexing_maps = [#[[T]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%{{.*}} : tensor<3x3xi32>) outs(%{{.*}} : tensor<3x3xi32>)
module {
  func.func @letters(%m: tensor<3x3xi32>) -> (tensor<3xi32>, tensor<i32>, tensor<3x3xi32>) {
    %0 = tract.einsum %m {expr = "ii->i"} : (tensor<3x3xi32>) -> tensor<3xi32>
    %1 = tract.einsum %m {expr = "ii"} : (tensor<3x3xi32>) -> tensor<i32>
    %2 = tract.einsum %m {expr = "ij->ji"} : (tensor<3x3xi32>) -> tensor<3x3xi32>
    return %0, %1, %2 : tensor<3xi32>, tensor<i32>, tensor<3x3xi32>
  }
}

// -----

// Three operands: the product of all of them is summed.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-LABEL: func.func @three(
// LLVM-LABEL: llvm.func @three(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK:         linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]], #[[OUT]]], iterator_types = ["parallel", "reduction", "reduction"]} ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2x3xi8>, tensor<3xi8>, tensor<3x2xi8>) outs(%{{.*}} : tensor<2xi8>)
// CHECK:           %[[AB:.*]] = arith.muli %in, %in_0 : i8
// CHECK:           %[[ABC:.*]] = arith.muli %[[AB]], %in_1 : i8
// CHECK:           arith.addi %out, %[[ABC]] : i8
module {
  func.func @three(%a: tensor<2x3xui8>, %b: tensor<3xui8>, %c: tensor<3x2xui8>) -> tensor<2xui8> {
    %0 = tract.einsum %a, %b, %c {expr = "ij,j,jk->k"} : (tensor<2x3xui8>, tensor<3xui8>, tensor<3x2xui8>) -> tensor<2xui8>
    return %0 : tensor<2xui8>
  }
}

// -----

module {
  func.func @booleans(%a: tensor<2x3xi1>, %b: tensor<3x2xi1>) -> tensor<2x2xi1> {
    // expected-error @+2 {{cannot lower einsum of 'i1'}}
    // expected-error @+1 {{failed to legalize operation 'tract.einsum'}}
    %0 = tract.einsum %a, %b {expr = "mk,kn->mn"} : (tensor<2x3xi1>, tensor<3x2xi1>) -> tensor<2x2xi1>
    return %0 : tensor<2x2xi1>
  }
}

// -----

module attributes {tract.symbols = ["S", "T"]} {
  func.func @runtime_broadcast(%a: tensor<?x3xf32, #tract.dims<[S]>>, %b: tensor<?x3xf32, #tract.dims<[T]>>) -> tensor<?xf32, #tract.dims<["S#T"]>> {
    // expected-error @+2 {{cannot lower einsum 'ik,ik->i': axis 'i' of dim S broadcasts to S#T only at run time}}
    // expected-error @+1 {{failed to legalize operation 'tract.einsum'}}
    %0 = tract.einsum %a, %b {expr = "ik,ik->i"} : (tensor<?x3xf32, #tract.dims<[S]>>, tensor<?x3xf32, #tract.dims<[T]>>) -> tensor<?xf32, #tract.dims<["S#T"]>>
    return %0 : tensor<?xf32, #tract.dims<["S#T"]>>
  }
}

// -----

// A convolution pads its input with zeros, starts from the bias broadcast
// over the output and is linalg.conv_2d_nchw_fchw when it has one group.
// CHECK-LABEL: func.func @conv2d(
// LLVM-LABEL: llvm.func @conv2d(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK-SAME:    %[[X:.*]]: tensor<1x2x6x5xf32>, %[[K:.*]]: tensor<3x2x3x2xf32>, %[[B:.*]]: tensor<3xf32>)
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[P:.*]] = tensor.pad %[[X]] low[0, 0, 1, 0] high[0, 0, 2, 1]
// CHECK:           tensor.yield %[[ZERO]] : f32
// CHECK:         } : tensor<1x2x6x5xf32> to tensor<1x2x9x6xf32>
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<1x3x4x4xf32>
// CHECK:         %[[INIT:.*]] = linalg.broadcast ins(%[[B]] : tensor<3xf32>) outs(%[[E]] : tensor<1x3x4x4xf32>) dimensions = [0, 2, 3]
// CHECK:         linalg.conv_2d_nchw_fchw {dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<[2, 1]> : tensor<2xi64>} ins(%[[P]], %[[K]] : tensor<1x2x9x6xf32>, tensor<3x2x3x2xf32>) outs(%[[INIT]] : tensor<1x3x4x4xf32>)
module {
  func.func @conv2d(%x: tensor<1x2x6x5xf32>, %k: tensor<3x2x3x2xf32>, %b: tensor<3xf32>) -> tensor<1x3x4x4xf32> {
    %0 = tract.conv %x, %k, %b {strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>, padding = #tract<padding explicit>, pads_before = array<i64: 1, 0>, pads_after = array<i64: 2, 1>} : (tensor<1x2x6x5xf32>, tensor<3x2x3x2xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
    return %0 : tensor<1x3x4x4xf32>
  }
}

// -----

// Same padding over a symbolic axis computes its pads from the symbol: the
// total is max(0, (ceil(S/2) - 1) * 2 + 4 - S), half of it (rounded down)
// before for same_upper.
// CHECK-LABEL: func.func @conv1d_same(
// LLVM-LABEL: llvm.func @conv1d_same(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK-SAME:    %[[X:.*]]: tensor<1x2x?xf32>, %[[K:.*]]: tensor<3x2x4xf32>, %[[B:.*]]: tensor<3xf32>)
// CHECK:         %[[S:.*]] = tensor.dim %[[X]], %c2
// CHECK:         %[[TOTAL:.*]] = arith.maxsi %{{.*}}, %{{.*}} : index
// CHECK:         %[[LOW:.*]] = arith.floordivsi %[[TOTAL]], %{{.*}} : index
// CHECK:         %[[P:.*]] = tensor.pad %[[X]] low[0, 0, %[[LOW]]] high[0, 0, %{{.*}}]
// CHECK:         } : tensor<1x2x?xf32> to tensor<1x2x?xf32>
// CHECK:         %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<1x3x?xf32>
// CHECK:         %[[INIT:.*]] = linalg.broadcast ins(%[[B]] : tensor<3xf32>) outs(%[[E]] : tensor<1x3x?xf32>) dimensions = [0, 2]
// CHECK:         linalg.conv_1d_ncw_fcw {dilations = dense<1> : tensor<1xi64>, strides = dense<2> : tensor<1xi64>} ins(%[[P]], %[[K]] : tensor<1x2x?xf32>, tensor<3x2x4xf32>) outs(%[[INIT]] : tensor<1x3x?xf32>)
module attributes {tract.symbols = ["S"]} {
  func.func @conv1d_same(%x: tensor<1x2x?xf32, #tract.dims<[S]>>, %k: tensor<3x2x4xf32>, %b: tensor<3xf32>) -> tensor<1x3x?xf32, #tract.dims<[(S+1)/2]>> {
    %0 = tract.conv %x, %k, %b {strides = array<i64: 2>, padding = #tract<padding same_upper>} : (tensor<1x2x?xf32, #tract.dims<[S]>>, tensor<3x2x4xf32>, tensor<3xf32>) -> tensor<1x3x?xf32, #tract.dims<[(S+1)/2]>>
    return %0 : tensor<1x3x?xf32, #tract.dims<[(S+1)/2]>>
  }
}

// -----

// Valid 3-D integer convolution: no padding, zeros to start from.
// CHECK-LABEL: func.func @conv3d(
// LLVM-LABEL: llvm.func @conv3d(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK-NOT:     tensor.pad
// CHECK:         %[[F:.*]] = linalg.fill ins(%{{.*}} : i32) outs(%{{.*}} : tensor<1x2x3x3x2xi32>)
// CHECK:         linalg.conv_3d_ncdhw_fcdhw {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>} ins(%{{.*}}, %{{.*}} : tensor<1x2x4x5x3xi32>, tensor<2x2x2x3x2xi32>) outs(%[[F]] : tensor<1x2x3x3x2xi32>)
module {
  func.func @conv3d(%x: tensor<1x2x4x5x3xi32>, %k: tensor<2x2x2x3x2xi32>) -> tensor<1x2x3x3x2xi32> {
    %0 = tract.conv %x, %k : (tensor<1x2x4x5x3xi32>, tensor<2x2x2x3x2xi32>) -> tensor<1x2x3x3x2xi32>
    return %0 : tensor<1x2x3x3x2xi32>
  }
}

// -----

// One group per channel and one output channel per group: the kernel
// (C, 1, k…) becomes (C, k…) for linalg.depthwise_conv_2d_nchw_chw.
// CHECK-LABEL: func.func @depthwise(
// LLVM-LABEL: llvm.func @depthwise(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK-SAME:    %[[X:.*]]: tensor<1x4x6x6xf32>, %[[K:.*]]: tensor<4x1x3x3xf32>)
// CHECK:         %[[P:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:         %[[F:.*]] = linalg.fill
// CHECK:         %[[KC:.*]] = tensor.collapse_shape %[[K]] {{\[}}[0, 1], [2], [3]] : tensor<4x1x3x3xf32> into tensor<4x3x3xf32>
// CHECK:         linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%[[P]], %[[KC]] : tensor<1x4x8x8xf32>, tensor<4x3x3xf32>) outs(%[[F]] : tensor<1x4x6x6xf32>)
module {
  func.func @depthwise(%x: tensor<1x4x6x6xf32>, %k: tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32> {
    %0 = tract.conv %x, %k {group = 4 : i64, padding = #tract<padding explicit>, pads_before = array<i64: 1, 1>, pads_after = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
    return %0 : tensor<1x4x6x6xf32>
  }
}

// -----

// Other groupings split the channels: input (N, G, C/G, x…), kernel
// (G, O/G, C/G, k…) and output (N, G, O/G, y…) in one linalg.generic; a
// bias of any shape with O elements is flattened first.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d3 * 2 + d6, d4 + d7 * 2)>
// CHECK-DAG: #[[KER:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @grouped(
// LLVM-LABEL: llvm.func @grouped(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK-SAME:    %[[X:.*]]: tensor<1x4x6x5xf32>, %[[K:.*]]: tensor<6x2x3x2xf32>, %[[B:.*]]: tensor<1x6x1x1xf32>)
// CHECK:         %[[BC:.*]] = tensor.collapse_shape %[[B]] {{\[}}[0, 1, 2, 3]] : tensor<1x6x1x1xf32> into tensor<6xf32>
// CHECK:         %[[INIT:.*]] = linalg.broadcast ins(%[[BC]] : tensor<6xf32>)
// CHECK:         %[[XG:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 6, 5] : tensor<1x4x6x5xf32> into tensor<1x2x2x6x5xf32>
// CHECK:         %[[KG:.*]] = tensor.expand_shape %[[K]] {{\[}}[0, 1], [2], [3], [4]] output_shape [2, 3, 2, 3, 2] : tensor<6x2x3x2xf32> into tensor<2x3x2x3x2xf32>
// CHECK:         %[[IG:.*]] = tensor.expand_shape %[[INIT]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 3, 2, 3] : tensor<1x6x2x3xf32> into tensor<1x2x3x2x3xf32>
// CHECK:         %[[G:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[KER]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[XG]], %[[KG]] : tensor<1x2x2x6x5xf32>, tensor<2x3x2x3x2xf32>) outs(%[[IG]] : tensor<1x2x3x2x3xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         tensor.collapse_shape %[[G]] {{\[}}[0], [1, 2], [3], [4]] : tensor<1x2x3x2x3xf32> into tensor<1x6x2x3xf32>
module {
  func.func @grouped(%x: tensor<1x4x6x5xf32>, %k: tensor<6x2x3x2xf32>, %b: tensor<1x6x1x1xf32>) -> tensor<1x6x2x3xf32> {
    %0 = tract.conv %x, %k, %b {group = 2 : i64, strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>} : (tensor<1x4x6x5xf32>, tensor<6x2x3x2xf32>, tensor<1x6x1x1xf32>) -> tensor<1x6x2x3xf32>
    return %0 : tensor<1x6x2x3xf32>
  }
}

// -----

// A transposed convolution spreads its input `stride` apart in zeros (room
// for the windows that start before it included), flips the kernel and
// convolves per group. Here axis 2 starts one cell into the full result
// (pads_before) and ends one past it (adjustments).
// CHECK-DAG: #[[FLIP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, -d3 + 1, -d4 + 1)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d3 + d6, d4 + d7)>
// CHECK-DAG: #[[KER:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d5, d2, d6, d7)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @deconv(
// LLVM-LABEL: llvm.func @deconv(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK-SAME:    %[[X:.*]]: tensor<1x4x3x3xf32>, %[[K:.*]]: tensor<4x3x2x2xf32>, %[[B:.*]]: tensor<6xf32>)
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x4x7x5xf32>)
// CHECK:         %[[SPREAD:.*]] = tensor.insert_slice %[[X]] into %[[Z]][0, 0, 0, 1] [1, 4, 3, 3] [1, 1, 2, 1] : tensor<1x4x3x3xf32> into tensor<1x4x7x5xf32>
// CHECK:         %[[XG:.*]] = tensor.expand_shape %[[SPREAD]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 7, 5]
// CHECK:         %[[KG:.*]] = tensor.expand_shape %[[K]] {{\[}}[0, 1], [2], [3], [4]] output_shape [2, 2, 3, 2, 2]
// CHECK:         %[[KF:.*]] = linalg.generic {indexing_maps = [#[[FLIP]], #[[ID]]], {{.*}}} ins(%[[KG]] : tensor<2x2x3x2x2xf32>)
// CHECK:         %[[INIT:.*]] = linalg.broadcast ins(%[[B]] : tensor<6xf32>)
// CHECK:         %[[IG:.*]] = tensor.expand_shape %[[INIT]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 3, 6, 4]
// CHECK:         %[[G:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[KER]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[XG]], %[[KF]] : tensor<1x2x2x7x5xf32>, tensor<2x2x3x2x2xf32>) outs(%[[IG]] : tensor<1x2x3x6x4xf32>)
// CHECK:         tensor.collapse_shape %[[G]] {{\[}}[0], [1, 2], [3], [4]] : tensor<1x2x3x6x4xf32> into tensor<1x6x6x4xf32>
module {
  func.func @deconv(%x: tensor<1x4x3x3xf32>, %k: tensor<4x3x2x2xf32>, %b: tensor<6xf32>) -> tensor<1x6x6x4xf32> {
    %0 = tract.deconv %x, %k, %b {group = 2 : i64, strides = array<i64: 2, 1>, padding = #tract<padding explicit>, pads_before = array<i64: 1, 0>, pads_after = array<i64: 0, 0>, adjustments = array<i64: 1, 0>} : (tensor<1x4x3x3xf32>, tensor<4x3x2x2xf32>, tensor<6xf32>) -> tensor<1x6x6x4xf32>
    return %0 : tensor<1x6x6x4xf32>
  }
}

// -----

// Same padding on a symbolic axis: the spread size is computed from S.
// CHECK-LABEL: func.func @deconv_same(
// LLVM-LABEL: llvm.func @deconv_same(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK:         %[[S:.*]] = tensor.dim %{{.*}}, %c2
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x1x?xf32>)
// CHECK:         tensor.insert_slice %{{.*}} into %[[Z]][0, 0, 2] [1, 1, %[[S]]] [1, 1, 2] : tensor<1x1x?xf32> into tensor<1x1x?xf32>
// CHECK:         linalg.generic
module attributes {tract.symbols = ["S"]} {
  func.func @deconv_same(%x: tensor<1x1x?xf32, #tract.dims<[S]>>, %k: tensor<1x2x3xf32>) -> tensor<1x2x?xf32, #tract.dims<[2*S]>> {
    %0 = tract.deconv %x, %k {strides = array<i64: 2>, padding = #tract<padding same_upper>} : (tensor<1x1x?xf32, #tract.dims<[S]>>, tensor<1x2x3xf32>) -> tensor<1x2x?xf32, #tract.dims<[2*S]>>
    return %0 : tensor<1x2x?xf32, #tract.dims<[2*S]>>
  }
}

// -----

module {
  func.func @conv_booleans(%x: tensor<1x1x3xi1>, %k: tensor<1x1x2xi1>) -> tensor<1x1x2xi1> {
    // expected-error @+2 {{cannot lower a convolution of booleans}}
    // expected-error @+1 {{failed to legalize operation 'tract.conv'}}
    %0 = tract.conv %x, %k : (tensor<1x1x3xi1>, tensor<1x1x2xi1>) -> tensor<1x1x2xi1>
    return %0 : tensor<1x1x2xi1>
  }
}
