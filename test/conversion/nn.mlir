// RUN: tract-opt --tract-lower-to-linalg --split-input-file --verify-diagnostics %s | FileCheck %s
// RUN: tract-opt --tract-lower-to-llvm --split-input-file --verify-diagnostics %s | FileCheck %s --check-prefix=LLVM

// Each successful case also goes the whole way to the LLVM dialect.

// An einsum that is exactly a matrix product is linalg.matmul, accumulating
// into zeros.
// CHECK-LABEL: func.func @matmul(
// LLVM-LABEL: llvm.func @matmul(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK-SAME:    %[[A:.*]]: tensor<2x3xf32> {bufferization.writable = false}, %[[B:.*]]: tensor<3x4xf32> {bufferization.writable = false})
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
// CHECK-SAME:    %[[A:.*]]: tensor<?x2x3xf16> {bufferization.writable = false}, %[[B:.*]]: tensor<?x3x4xf16> {bufferization.writable = false})
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

// Attention's q . k^T: the keys hold the output's last axis (n) ahead of
// the summed one (k), which the kernels would gather lane by lane; computed
// keys are transposed first (n last), and the product reads them so. A
// block argument is left as it is (it may be a loop body's weight).
// CHECK-DAG: #[[Q:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[K:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[S:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @keys_transposed(
// CHECK-SAME:    %[[QV:[^:]*]]: tensor<2x?x8xf32> {{.*}}, %[[KV:[^:]*]]: tensor<2x?x8xf32>
// CHECK:         %[[NEG:.*]] = linalg.generic {{.*}} ins(%[[KV]] : tensor<2x?x8xf32>)
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[NEG]] : tensor<2x?x8xf32>) outs(%{{.*}} : tensor<2x8x?xf32>) permutation = [0, 2, 1]
// CHECK:         linalg.batch_matmul ins(%[[QV]], %[[T]] : tensor<2x?x8xf32>, tensor<2x8x?xf32>)
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.generic {indexing_maps = [#[[Q]], #[[K]], #[[S]]], {{.*}} ins(%[[QV]], %[[KV]] : tensor<2x?x8xf32>, tensor<2x?x8xf32>)
module {
  func.func @keys_transposed(%q: tensor<2x?x8xf32, #tract.dims<[S]>>, %k: tensor<2x?x8xf32, #tract.dims<[T]>>) -> (tensor<2x?x?xf32, #tract.dims<[S, T]>>, tensor<2x?x?xf32, #tract.dims<[S, T]>>) {
    %n = tract.neg %k : tensor<2x?x8xf32, #tract.dims<[T]>>
    %0 = tract.einsum %q, %n {expr = "bmk,bnk->bmn"} : (tensor<2x?x8xf32, #tract.dims<[S]>>, tensor<2x?x8xf32, #tract.dims<[T]>>) -> tensor<2x?x?xf32, #tract.dims<[S, T]>>
    %1 = tract.einsum %q, %k {expr = "bmk,bnk->bmn"} : (tensor<2x?x8xf32, #tract.dims<[S]>>, tensor<2x?x8xf32, #tract.dims<[T]>>) -> tensor<2x?x?xf32, #tract.dims<[S, T]>>
    return %0, %1 : tensor<2x?x?xf32, #tract.dims<[S, T]>>, tensor<2x?x?xf32, #tract.dims<[S, T]>>
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
// CHECK-SAME:    %[[X:.*]]: tensor<1x2x6x5xf32> {bufferization.writable = false}, %[[K:.*]]: tensor<3x2x3x2xf32> {bufferization.writable = false}, %[[B:.*]]: tensor<3xf32> {bufferization.writable = false})
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
// CHECK-SAME:    %[[X:.*]]: tensor<1x2x?xf32> {bufferization.writable = false}, %[[K:.*]]: tensor<3x2x4xf32> {bufferization.writable = false}, %[[B:.*]]: tensor<3xf32> {bufferization.writable = false})
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
// CHECK-SAME:    %[[X:.*]]: tensor<1x4x6x6xf32> {bufferization.writable = false}, %[[K:.*]]: tensor<4x1x3x3xf32> {bufferization.writable = false})
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

// Channels last (tract-channels-last): the spatial axes 1 and 2 are padded,
// the bias broadcast along the last axis, and the kernel k, k, 1, C of a
// depthwise convolution collapses to k, k, C.
// CHECK-LABEL: func.func @depthwise_channels_last(
// CHECK-SAME:    %[[X:.*]]: tensor<1x6x6x4xf32> {bufferization.writable = false}, %[[K:.*]]: tensor<3x3x1x4xf32> {bufferization.writable = false}, %[[B:.*]]: tensor<4xf32> {bufferization.writable = false})
// CHECK:         %[[P:.*]] = tensor.pad %[[X]] low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK:         %[[I:.*]] = linalg.broadcast ins(%[[B]] : tensor<4xf32>) outs(%{{.*}} : tensor<1x3x3x4xf32>) dimensions = [0, 1, 2]
// CHECK:         %[[KC:.*]] = tensor.collapse_shape %[[K]] {{\[}}[0], [1], [2, 3]] : tensor<3x3x1x4xf32> into tensor<3x3x4xf32>
// CHECK:         linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[P]], %[[KC]] : tensor<1x8x8x4xf32>, tensor<3x3x4xf32>) outs(%[[I]] : tensor<1x3x3x4xf32>)
// LLVM-LABEL: llvm.func @depthwise_channels_last(
module {
  func.func @depthwise_channels_last(%x: tensor<1x6x6x4xf32>, %k: tensor<3x3x1x4xf32>, %b: tensor<4xf32>) -> tensor<1x3x3x4xf32> {
    %0 = tract.conv %x, %k, %b {channels_last, group = 4 : i64, strides = array<i64: 2, 2>, padding = #tract<padding explicit>, pads_before = array<i64: 1, 1>, pads_after = array<i64: 1, 1>} : (tensor<1x6x6x4xf32>, tensor<3x3x1x4xf32>, tensor<4xf32>) -> tensor<1x3x3x4xf32>
    return %0 : tensor<1x3x3x4xf32>
  }
}

// -----

// A dense channels-last convolution is linalg's NHWC by HWCF one: the
// kernel k, k, C, O is already HWCF.
// CHECK-LABEL: func.func @dense_channels_last(
// CHECK:         %[[F:.*]] = linalg.fill
// CHECK:         linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%{{.*}}, %{{.*}} : tensor<1x5x5x3xf32>, tensor<3x3x3x2xf32>) outs(%[[F]] : tensor<1x3x3x2xf32>)
// LLVM-LABEL: llvm.func @dense_channels_last(
module {
  func.func @dense_channels_last(%x: tensor<1x5x5x3xf32>, %k: tensor<3x3x3x2xf32>) -> tensor<1x3x3x2xf32> {
    %0 = tract.conv %x, %k {channels_last} : (tensor<1x5x5x3xf32>, tensor<3x3x3x2xf32>) -> tensor<1x3x3x2xf32>
    return %0 : tensor<1x3x3x2xf32>
  }
}

// -----

// A grouped channels-last convolution: the channels of the input, kernel
// and output split as (group, per group), and one linalg.generic over
// (n, g, y, x, o, ky, kx, c): the groups outermost after the batch, the
// output channels of a group the innermost parallel dim, the input
// channels the innermost reduction.
// CHECK-DAG:     #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d2 * 2 + d5, d3 + d6 * 2, d1, d7)>
// CHECK-DAG:     #[[KER:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d6, d7, d1, d4)>
// CHECK-DAG:     #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d2, d3, d1, d4)>
// CHECK-LABEL: func.func @grouped_channels_last(
// CHECK:         %[[X:.*]] = tensor.expand_shape %arg0 {{\[}}[0], [1], [2], [3, 4]] output_shape [1, 6, 6, 2, 4]
// CHECK:         %[[K:.*]] = tensor.expand_shape %arg1 {{\[}}[0], [1], [2], [3, 4]] output_shape [3, 3, 4, 2, 4]
// CHECK:         %[[O:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2], [3, 4]] output_shape [1, 2, 2, 2, 4]
// CHECK:         %[[G:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[KER]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[X]], %[[K]] : tensor<1x6x6x2x4xf32>, tensor<3x3x4x2x4xf32>) outs(%[[O]] : tensor<1x2x2x2x4xf32>)
// CHECK:         tensor.collapse_shape %[[G]] {{\[}}[0], [1], [2], [3, 4]] : tensor<1x2x2x2x4xf32> into tensor<1x2x2x8xf32>
// LLVM-LABEL: llvm.func @grouped_channels_last(
module {
  func.func @grouped_channels_last(%x: tensor<1x6x6x8xf32>, %k: tensor<3x3x4x8xf32>) -> tensor<1x2x2x8xf32> {
    %0 = tract.conv %x, %k {channels_last, group = 2 : i64, strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>} : (tensor<1x6x6x8xf32>, tensor<3x3x4x8xf32>) -> tensor<1x2x2x8xf32>
    return %0 : tensor<1x2x2x8xf32>
  }
}

// -----

// Channels-last pools: the spatial axes 1 and 2 padded (a max pool with the
// lowest value), linalg's NHWC pools, and an average's divisor counted
// along axes 1 and 2.
// CHECK-LABEL: func.func @pools_channels_last(
// CHECK:         tensor.pad %{{.*}} low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK:         linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%{{.*}}, %{{.*}} : tensor<1x6x6x3xf32>, tensor<3x3xf32>) outs(%{{.*}} : tensor<1x2x2x3xf32>)
// CHECK:         linalg.pooling_nhwc_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%{{.*}}, %{{.*}} : tensor<1x6x6x3xf32>, tensor<3x3xf32>) outs(%{{.*}} : tensor<1x4x4x3xf32>)
// CHECK:         linalg.index 1 : index
// CHECK:         linalg.index 2 : index
// CHECK:         arith.divf
// LLVM-LABEL: llvm.func @pools_channels_last(
module {
  func.func @pools_channels_last(%x: tensor<1x4x4x3xf32>) -> (tensor<1x2x2x3xf32>, tensor<1x4x4x3xf32>) {
    %0 = tract.max_pool %x {channels_last, kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = #tract<padding explicit>, pads_before = array<i64: 1, 1>, pads_after = array<i64: 1, 1>} : (tensor<1x4x4x3xf32>) -> tensor<1x2x2x3xf32>
    %1 = tract.sum_pool %x {channels_last, kernel_shape = array<i64: 3, 3>, normalize = true, padding = #tract<padding same_upper>} : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
    return %0, %1 : tensor<1x2x2x3xf32>, tensor<1x4x4x3xf32>
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
// CHECK-SAME:    %[[X:.*]]: tensor<1x4x6x5xf32> {bufferization.writable = false}, %[[K:.*]]: tensor<6x2x3x2xf32> {bufferization.writable = false}, %[[B:.*]]: tensor<1x6x1x1xf32> {bufferization.writable = false})
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
// CHECK-SAME:    %[[X:.*]]: tensor<1x4x3x3xf32> {bufferization.writable = false}, %[[K:.*]]: tensor<4x3x2x2xf32> {bufferization.writable = false}, %[[B:.*]]: tensor<6xf32> {bufferization.writable = false})
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

// -----

// A reduction is a linalg.reduce that drops the axes, and a
// tensor.expand_shape that puts them back as size 1.
// CHECK-LABEL: func.func @reduce_sum(
// LLVM-LABEL: llvm.func @reduce_sum(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK-SAME:    %[[X:.*]]: tensor<2x?x3xf32> {bufferization.writable = false})
// CHECK:         %[[S:.*]] = tensor.dim %[[X]], %c1
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[E:.*]] = tensor.empty(%[[S]]) : tensor<?xf32>
// CHECK:         %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<?xf32>)
// CHECK:         %[[R:.*]] = linalg.reduce { arith.addf } ins(%[[X]] : tensor<2x?x3xf32>) outs(%[[F]] : tensor<?xf32>) dimensions = [0, 2]
// CHECK:         tensor.expand_shape %[[R]] {{\[}}[0, 1, 2]] output_shape [1, %[[S]], 1] : tensor<?xf32> into tensor<1x?x1xf32>
module attributes {tract.symbols = ["S"]} {
  func.func @reduce_sum(%x: tensor<2x?x3xf32, #tract.dims<[S]>>) -> tensor<1x?x1xf32, #tract.dims<[S]>> {
    %0 = tract.reduce sum %x {axes = array<i64: 0, 2>} : tensor<2x?x3xf32, #tract.dims<[S]>> -> tensor<1x?x1xf32, #tract.dims<[S]>>
    return %0 : tensor<1x?x1xf32, #tract.dims<[S]>>
  }
}

// -----

// Float min and max propagate NaN from the infinities they start at;
// integers compare by their tract signedness; all and any are and/or.
// CHECK-LABEL: func.func @reducers(
// LLVM-LABEL: llvm.func @reducers(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK:         %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK:         linalg.fill ins(%[[INF]] : f32)
// CHECK:         linalg.reduce { arith.minimumf }
// CHECK:         %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         linalg.fill ins(%[[NINF]] : f32)
// CHECK:         linalg.reduce { arith.maximumf }
// CHECK:         %[[UMIN:.*]] = arith.constant 0 : i8
// CHECK:         linalg.fill ins(%[[UMIN]] : i8)
// CHECK:         linalg.reduce { arith.maxui }
// CHECK:         %[[SMAX:.*]] = arith.constant 127 : i8
// CHECK:         linalg.fill ins(%[[SMAX]] : i8)
// CHECK:         linalg.reduce { arith.minsi }
// CHECK:         %[[ONE:.*]] = arith.constant 1 : i32
// CHECK:         linalg.fill ins(%[[ONE]] : i32)
// CHECK:         linalg.reduce { arith.muli {{.*}}}
// CHECK:         %[[TRUE:.*]] = arith.constant true
// CHECK:         linalg.fill ins(%[[TRUE]] : i1)
// CHECK:         linalg.reduce { arith.andi }
// CHECK:         %[[FALSE:.*]] = arith.constant false
// CHECK:         linalg.fill ins(%[[FALSE]] : i1)
// CHECK:         linalg.reduce { arith.ori }
module {
  func.func @reducers(%f: tensor<3x4xf32>, %u: tensor<3x4xui8>, %s: tensor<3x4xi8>, %i: tensor<3x4xi32>, %b: tensor<3x4xi1>) -> (tensor<3x1xf32>, tensor<1x4xf32>, tensor<3x1xui8>, tensor<3x1xi8>, tensor<3x1xi32>, tensor<3x1xi1>, tensor<3x1xi1>) {
    %0 = tract.reduce min %f {axes = array<i64: 1>} : tensor<3x4xf32> -> tensor<3x1xf32>
    %1 = tract.reduce max %f {axes = array<i64: 0>} : tensor<3x4xf32> -> tensor<1x4xf32>
    %2 = tract.reduce max %u {axes = array<i64: 1>} : tensor<3x4xui8> -> tensor<3x1xui8>
    %3 = tract.reduce min %s {axes = array<i64: 1>} : tensor<3x4xi8> -> tensor<3x1xi8>
    %4 = tract.reduce prod %i {axes = array<i64: 1>} : tensor<3x4xi32> -> tensor<3x1xi32>
    %5 = tract.reduce all %b {axes = array<i64: 1>} : tensor<3x4xi1> -> tensor<3x1xi1>
    %6 = tract.reduce any %b {axes = array<i64: 1>} : tensor<3x4xi1> -> tensor<3x1xi1>
    return %0, %1, %2, %3, %4, %5, %6 : tensor<3x1xf32>, tensor<1x4xf32>, tensor<3x1xui8>, tensor<3x1xi8>, tensor<3x1xi32>, tensor<3x1xi1>, tensor<3x1xi1>
  }
}

// -----

// mean_of_squares sums x * x and divides by the number of reduced
// elements.
// CHECK-LABEL: func.func @mean_of_squares(
// LLVM-LABEL: llvm.func @mean_of_squares(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK:         %[[R:.*]] = linalg.reduce ins(%{{.*}} : tensor<3x4xf32>) outs(%{{.*}} : tensor<f32>) dimensions = [0, 1]
// CHECK:           %[[SQ:.*]] = arith.mulf %in, %in : f32
// CHECK:           arith.addf %init, %[[SQ]] : f32
// CHECK:         %[[N:.*]] = arith.constant 1.200000e+01 : f32
// CHECK:         %[[M:.*]] = linalg.generic {{.*}} ins(%[[R]] : tensor<f32>)
// CHECK:           arith.divf %in, %[[N]] : f32
// CHECK:         tensor.expand_shape %[[M]] [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
module {
  func.func @mean_of_squares(%x: tensor<3x4xf32>) -> tensor<1x1xf32> {
    %0 = tract.reduce mean_of_squares %x {axes = array<i64: 0, 1>} : tensor<3x4xf32> -> tensor<1x1xf32>
    return %0 : tensor<1x1xf32>
  }
}

// -----

// argmax starts from the first element and its index 0, and moves on to an
// element that beats it strictly (or, for the last, that it does not beat),
// comparing unsigned integers unsigned.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @argmax_last(
// LLVM-LABEL: llvm.func @argmax_last(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK-SAME:    %[[X:.*]]: tensor<3x4xi8> {bufferization.writable = false})
// CHECK:         %[[FIRST:.*]] = tensor.extract_slice %[[X]][0, 0] [3, 1] [1, 1] : tensor<3x4xi8> to tensor<3xi8>
// CHECK:         %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : i64) outs(%{{.*}} : tensor<3xi64>)
// CHECK:         %[[R:.*]]:2 = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<3x4xi8>) outs(%[[FIRST]], %[[ZERO]] : tensor<3xi8>, tensor<3xi64>)
// CHECK:         ^bb0(%[[IN:.*]]: i8, %[[BEST:.*]]: i8, %[[POS:.*]]: i64):
// CHECK:           %[[BEATEN:.*]] = arith.cmpi ugt, %[[BEST]], %[[IN]] : i8
// CHECK:           %[[TAKE:.*]] = arith.xori %[[BEATEN]], %true : i1
// CHECK:           %[[I:.*]] = linalg.index 1 : index
// CHECK:           %[[I64:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK:           %[[V:.*]] = arith.select %[[TAKE]], %[[IN]], %[[BEST]] : i8
// CHECK:           %[[P:.*]] = arith.select %[[TAKE]], %[[I64]], %[[POS]] : i64
// CHECK:           linalg.yield %[[V]], %[[P]] : i8, i64
// CHECK:         tensor.expand_shape %[[R]]#1 {{\[}}[0, 1]] output_shape [3, 1] : tensor<3xi64> into tensor<3x1xi64>
module {
  func.func @argmax_last(%x: tensor<3x4xui8>) -> tensor<3x1xi64> {
    %0 = tract.reduce argmax %x {axes = array<i64: 1>, last = true} : tensor<3x4xui8> -> tensor<3x1xi64>
    return %0 : tensor<3x1xi64>
  }
}

// -----

// argmin of floats: an ordered comparison, so NaN never moves it.
// CHECK-LABEL: func.func @argmin(
// LLVM-LABEL: llvm.func @argmin(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK:         tensor.extract_slice %{{.*}}[0, 0] [1, 4] [1, 1] : tensor<3x4xf32> to tensor<4xf32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK:           %[[TAKE:.*]] = arith.cmpf olt, %in, %out : f32
// CHECK:           linalg.index 0 : index
// CHECK:         tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [1, 4] : tensor<4xi64> into tensor<1x4xi64>
module {
  func.func @argmin(%x: tensor<3x4xf32>) -> tensor<1x4xi64> {
    %0 = tract.reduce argmin %x {axes = array<i64: 0>} : tensor<3x4xf32> -> tensor<1x4xi64>
    return %0 : tensor<1x4xi64>
  }
}

// -----

// Softmax subtracts the maximum over its axes before exponentiating; the
// reduced tensors are read back through maps that skip the axes.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[RED:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @softmax(
// LLVM-LABEL: llvm.func @softmax(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK-SAME:    %[[X:.*]]: tensor<2x?x3xf32> {bufferization.writable = false})
// CHECK:         %[[MAX:.*]] = linalg.reduce { arith.maximumf } ins(%[[X]] : tensor<2x?x3xf32>) outs(%{{.*}} : tensor<?xf32>) dimensions = [0, 2]
// CHECK:         %[[EXP:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[RED]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[MAX]] : tensor<2x?x3xf32>, tensor<?xf32>)
// CHECK:           %[[D:.*]] = arith.subf %in, %in_{{.*}} : f32
// CHECK:           math.exp %[[D]] : f32
// CHECK:         %[[SUM:.*]] = linalg.reduce { arith.addf } ins(%[[EXP]] : tensor<2x?x3xf32>) outs(%{{.*}} : tensor<?xf32>) dimensions = [0, 2]
// CHECK:         linalg.generic {indexing_maps = [#[[ID]], #[[RED]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[EXP]], %[[SUM]] : tensor<2x?x3xf32>, tensor<?xf32>)
// CHECK:           arith.divf
module attributes {tract.symbols = ["S"]} {
  func.func @softmax(%x: tensor<2x?x3xf32, #tract.dims<[S]>>) -> tensor<2x?x3xf32, #tract.dims<[S]>> {
    %0 = tract.softmax %x {axes = array<i64: 0, 2>} : tensor<2x?x3xf32, #tract.dims<[S]>> -> tensor<2x?x3xf32, #tract.dims<[S]>>
    return %0 : tensor<2x?x3xf32, #tract.dims<[S]>>
  }
}

// -----

// Log-softmax sums exp(x - max) in one reduction and gives
// (x - max) - log(sum).
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @log_softmax(
// LLVM-LABEL: llvm.func @log_softmax(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK-SAME:    %[[X:.*]]: tensor<2x5xf32> {bufferization.writable = false})
// CHECK:         %[[MAX:.*]] = linalg.reduce { arith.maximumf } ins(%[[X]] : tensor<2x5xf32>) outs(%{{.*}} : tensor<2xf32>) dimensions = [1]
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[MAX]] : tensor<2x5xf32>, tensor<2xf32>)
// CHECK:           math.exp
// CHECK:           arith.addf
// CHECK:         linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[MAX]], %[[SUM]] : tensor<2x5xf32>, tensor<2xf32>, tensor<2xf32>)
// CHECK:           %[[SHIFTED:.*]] = arith.subf %in, %in_{{.*}} : f32
// CHECK:           %[[LOG:.*]] = math.log %in_{{.*}} : f32
// CHECK:           arith.subf %[[SHIFTED]], %[[LOG]] : f32
module {
  func.func @log_softmax(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
    %0 = tract.log_softmax %x {axes = array<i64: 1>} : tensor<2x5xf32> -> tensor<2x5xf32>
    return %0 : tensor<2x5xf32>
  }
}

// -----

// rms_norm: x / sqrt(sum(x * x) / n + eps), n read from the symbol.
// CHECK-LABEL: func.func @rms_norm(
// LLVM-LABEL: llvm.func @rms_norm(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK-SAME:    %[[X:.*]]: tensor<2x?xf16> {bufferization.writable = false})
// CHECK:         %[[S:.*]] = tensor.dim %[[X]], %c1
// CHECK:         %[[SQ:.*]] = linalg.reduce ins(%[[X]] : tensor<2x?xf16>) outs(%{{.*}} : tensor<2xf16>) dimensions = [1]
// CHECK:         %[[N64:.*]] = arith.index_castui %[[S]] : index to i64
// CHECK:         %[[N:.*]] = arith.uitofp %[[N64]] : i64 to f16
// CHECK:         %[[EPS:.*]] = arith.constant 1.001360e-05 : f16
// CHECK:         %[[RMS:.*]] = linalg.generic {{.*}} ins(%[[SQ]] : tensor<2xf16>)
// CHECK:           %[[MEAN:.*]] = arith.divf %in, %[[N]] : f16
// CHECK:           %[[SUM:.*]] = arith.addf %[[MEAN]], %[[EPS]] : f16
// CHECK:           math.sqrt %[[SUM]] : f16
// CHECK:         linalg.generic {{.*}} ins(%[[X]], %[[RMS]] : tensor<2x?xf16>, tensor<2xf16>)
// CHECK:           arith.divf %in, %in_{{.*}} : f16
module attributes {tract.symbols = ["S"]} {
  func.func @rms_norm(%x: tensor<2x?xf16, #tract.dims<[S]>>) -> tensor<2x?xf16, #tract.dims<[S]>> {
    %0 = tract.rms_norm %x {axis = 1 : i64, eps = 1.0e-5 : f64} : tensor<2x?xf16, #tract.dims<[S]>> -> tensor<2x?xf16, #tract.dims<[S]>>
    return %0 : tensor<2x?xf16, #tract.dims<[S]>>
  }
}

// -----

// Max pools pad with -inf, which never wins, and are linalg.pooling_nchw_max
// (which takes NaN as the maximum) for floats and signed integers; an empty
// tensor of the kernel's shape gives the window.
// CHECK-LABEL: func.func @max_pool(
// LLVM-LABEL: llvm.func @max_pool(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK-SAME:    %[[X:.*]]: tensor<1x2x5x5xf32> {bufferization.writable = false})
// CHECK:         %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[P:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:           tensor.yield %[[NINF]] : f32
// CHECK:         %[[F:.*]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.*}} : tensor<1x2x3x3xf32>)
// CHECK:         %[[W:.*]] = tensor.empty() : tensor<3x3xf32>
// CHECK:         linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[P]], %[[W]] : tensor<1x2x7x7xf32>, tensor<3x3xf32>) outs(%[[F]] : tensor<1x2x3x3xf32>)
module {
  func.func @max_pool(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> {
    %0 = tract.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = #tract<padding explicit>, pads_before = array<i64: 1, 1>, pads_after = array<i64: 1, 1>} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
    return %0 : tensor<1x2x3x3xf32>
  }
}

// -----

// Ceil mode over a symbolic axis pads the end as far as the last window
// reads: max(0, 2 * ((S + 1) / 2) - S).
// CHECK-LABEL: func.func @max_pool_ceil(
// LLVM-LABEL: llvm.func @max_pool_ceil(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK-SAME:    %[[X:.*]]: tensor<1x2x?xf32> {bufferization.writable = false})
// CHECK:         %[[HIGH:.*]] = arith.maxsi %{{.*}}, %{{.*}} : index
// CHECK:         %[[P:.*]] = tensor.pad %[[X]] low[0, 0, 0] high[0, 0, %[[HIGH]]]
// CHECK:         linalg.pooling_ncw_max {dilations = dense<1> : tensor<1xi64>, strides = dense<2> : tensor<1xi64>} ins(%[[P]], %{{.*}} : tensor<1x2x?xf32>, tensor<2xf32>) outs(%{{.*}} : tensor<1x2x?xf32>)
module attributes {tract.symbols = ["S"]} {
  func.func @max_pool_ceil(%x: tensor<1x2x?xf32, #tract.dims<[S]>>) -> tensor<1x2x?xf32, #tract.dims<[(S+1)/2]>> {
    %0 = tract.max_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 2>, padding = #tract<padding explicit>, pads_before = array<i64: 0>, pads_after = array<i64: 0>, ceil_mode = true} : (tensor<1x2x?xf32, #tract.dims<[S]>>) -> tensor<1x2x?xf32, #tract.dims<[(S+1)/2]>>
    return %0 : tensor<1x2x?xf32, #tract.dims<[(S+1)/2]>>
  }
}

// -----

// Unsigned integers pad with 0 and compare unsigned in a linalg.generic.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 + d3)>
// CHECK-DAG: #[[WIN:.*]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @max_pool_unsigned(
// LLVM-LABEL: llvm.func @max_pool_unsigned(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i8
// CHECK:         tensor.pad
// CHECK:           tensor.yield %[[ZERO]] : i8
// CHECK:         linalg.generic {indexing_maps = [#[[IN]], #[[WIN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<1x2x7xi8>, tensor<2xi8>) outs(%{{.*}} : tensor<1x2x6xi8>)
// CHECK:           arith.maxui %out, %in : i8
module {
  func.func @max_pool_unsigned(%x: tensor<1x2x5xui8>) -> tensor<1x2x6xui8> {
    %0 = tract.max_pool %x {kernel_shape = array<i64: 2>, padding = #tract<padding explicit>, pads_before = array<i64: 1>, pads_after = array<i64: 1>} : (tensor<1x2x5xui8>) -> tensor<1x2x6xui8>
    return %0 : tensor<1x2x6xui8>
  }
}

// -----

// With indices: one linalg.generic carries the maximum and the flat index
// of the input cell it comes from; padding cells never count, the first
// maximum (or NaN) wins.
// CHECK-LABEL: func.func @max_pool_index(
// LLVM-LABEL: llvm.func @max_pool_index(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK:         %[[NONE:.*]] = linalg.fill ins(%{{.*}} : i64) outs(%{{.*}} : tensor<1x1x4xi64>)
// CHECK:         %[[R:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<1x1x6xf32>, tensor<3xf32>) outs(%{{.*}}, %[[NONE]] : tensor<1x1x4xf32>, tensor<1x1x4xi64>)
// CHECK:         ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32, %[[BEST:.*]]: f32, %[[BESTI:.*]]: i64):
// CHECK:           %[[Y:.*]] = linalg.index 2 : index
// CHECK:           %[[K:.*]] = linalg.index 3 : index
// CHECK:           %[[POS:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK:           arith.cmpi sge, %[[POS]]
// CHECK:           arith.cmpi slt, %[[POS]]
// CHECK:           %[[FIRST:.*]] = arith.cmpi eq, %[[BESTI]], %{{.*}} : i64
// CHECK:           %[[GT:.*]] = arith.cmpf ogt, %[[IN]], %[[BEST]] : f32
// CHECK:           %[[NAN:.*]] = arith.cmpf uno, %[[IN]], %[[IN]] : f32
// CHECK:           %[[NUM:.*]] = arith.cmpf ord, %[[BEST]], %[[BEST]] : f32
// CHECK:           %[[NANWINS:.*]] = arith.andi %[[NAN]], %[[NUM]] : i1
// CHECK:           %[[BETTER:.*]] = arith.ori %[[GT]], %[[NANWINS]] : i1
// CHECK:           %[[EITHER:.*]] = arith.ori %[[FIRST]], %[[BETTER]] : i1
// CHECK:           %[[TAKE:.*]] = arith.andi %{{.*}}, %[[EITHER]] : i1
// CHECK:           %[[V:.*]] = arith.select %[[TAKE]], %[[IN]], %[[BEST]] : f32
// CHECK:           %[[I:.*]] = arith.select %[[TAKE]], %{{.*}}, %[[BESTI]] : i64
// CHECK:           linalg.yield %[[V]], %[[I]] : f32, i64
module {
  func.func @max_pool_index(%x: tensor<1x1x4xf32>) -> (tensor<1x1x4xf32>, tensor<1x1x4xi64>) {
    %0, %1 = tract.max_pool %x {kernel_shape = array<i64: 3>, padding = #tract<padding explicit>, pads_before = array<i64: 1>, pads_after = array<i64: 1>, with_index = true} : (tensor<1x1x4xf32>) -> (tensor<1x1x4xf32>, tensor<1x1x4xi64>)
    return %0, %1 : tensor<1x1x4xf32>, tensor<1x1x4xi64>
  }
}

// -----

// Average pooling counting the padding divides by the kernel volume.
// CHECK-LABEL: func.func @avg_pool_include(
// LLVM-LABEL: llvm.func @avg_pool_include(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK:         %[[S:.*]] = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%{{.*}}, %{{.*}} : tensor<1x1x6x6xf32>, tensor<3x3xf32>) outs(%{{.*}} : tensor<1x1x4x4xf32>)
// CHECK:         %[[NINE:.*]] = arith.constant 9.000000e+00 : f32
// CHECK:         linalg.generic {{.*}} ins(%[[S]] : tensor<1x1x4x4xf32>)
// CHECK-NOT:       linalg.index
// CHECK:           arith.divf %in, %[[NINE]] : f32
module {
  func.func @avg_pool_include(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
    %0 = tract.sum_pool %x {kernel_shape = array<i64: 3, 3>, padding = #tract<padding explicit>, pads_before = array<i64: 1, 1>, pads_after = array<i64: 1, 1>, normalize = true, count_include_pad = true} : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
    return %0 : tensor<1x1x4x4xf32>
  }
}

// -----

// Without the padding, each window counts its cells over the input: per
// padded axis, the kernel offsets k with start <= y * s + k < end; axes
// without padding count their whole kernel.
// CHECK-LABEL: func.func @avg_pool_exclude(
// LLVM-LABEL: llvm.func @avg_pool_exclude(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK:         %[[S:.*]] = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
// CHECK:         %[[THREE:.*]] = arith.constant 3.000000e+00 : f32
// CHECK:         linalg.generic {{.*}} ins(%[[S]] : tensor<1x1x3x2xf32>)
// CHECK:           %[[Y:.*]] = linalg.index 2 : index
// CHECK:           %[[FIRST:.*]] = arith.muli %[[Y]], %{{.*}} : index
// CHECK:           arith.ceildivsi
// CHECK:           arith.ceildivsi
// CHECK:           %[[CELLS:.*]] = arith.maxsi %{{.*}}, %{{.*}} : index
// CHECK:           %[[N:.*]] = arith.uitofp %{{.*}} : i64 to f32
// CHECK:           %[[D:.*]] = arith.mulf %[[N]], %[[THREE]] : f32
// CHECK:           arith.divf %in, %[[D]] : f32
module {
  func.func @avg_pool_exclude(%x: tensor<1x1x5x5xf32>) -> tensor<1x1x3x2xf32> {
    %0 = tract.sum_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = #tract<padding explicit>, pads_before = array<i64: 1, 0>, pads_after = array<i64: 1, 0>, normalize = true} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x2xf32>
    return %0 : tensor<1x1x3x2xf32>
  }
}

// -----

// A 3-D sum pool is a linalg.generic adding up the window.
// CHECK-LABEL: func.func @sum_pool_3d(
// LLVM-LABEL: llvm.func @sum_pool_3d(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<1x1x3x3x3xi32>, tensor<2x2x2xi32>) outs(%{{.*}} : tensor<1x1x2x2x2xi32>)
// CHECK:           arith.addi %out, %in : i32
module {
  func.func @sum_pool_3d(%x: tensor<1x1x3x3x3xi32>) -> tensor<1x1x2x2x2xi32> {
    %0 = tract.sum_pool %x {kernel_shape = array<i64: 2, 2, 2>} : (tensor<1x1x3x3x3xi32>) -> tensor<1x1x2x2x2xi32>
    return %0 : tensor<1x1x2x2x2xi32>
  }
}

// -----

// Nearest resize gathers one input cell per output cell: asymmetric
// coordinates y / (2S / S), round_prefer_ceil as floor(x + 0.5), the index
// clamped to the input; unchanged axes read the output index.
// CHECK-LABEL: func.func @resize_nearest(
// LLVM-LABEL: llvm.func @resize_nearest(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK-SAME:    %[[X:.*]]: tensor<1x?xf32> {bufferization.writable = false})
// CHECK:         %[[S:.*]] = tensor.dim %[[X]], %c1
// CHECK:         %[[LAST:.*]] = arith.subi %[[S]], %{{.*}} : index
// CHECK:         %[[SCALE:.*]] = arith.divf %{{.*}}, %{{.*}} : f64
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<1x?xf32>)
// CHECK:           %[[I0:.*]] = linalg.index 0 : index
// CHECK:           %[[I1:.*]] = linalg.index 1 : index
// CHECK:           %[[Y:.*]] = arith.sitofp %{{.*}} : i64 to f64
// CHECK:           %[[C:.*]] = arith.divf %[[Y]], %[[SCALE]] : f64
// CHECK:           %[[H:.*]] = arith.addf %[[C]], %{{.*}} : f64
// CHECK:           %[[R:.*]] = math.floor %[[H]] : f64
// CHECK:           %[[LOW:.*]] = arith.maxsi %{{.*}}, %{{.*}} : index
// CHECK:           %[[IN:.*]] = arith.minsi %[[LOW]], %[[LAST]] : index
// CHECK:           %[[V:.*]] = tensor.extract %[[X]][%[[I0]], %[[IN]]] : tensor<1x?xf32>
// CHECK:           linalg.yield %[[V]] : f32
module attributes {tract.symbols = ["S"]} {
  func.func @resize_nearest(%x: tensor<1x?xf32, #tract.dims<[S]>>) -> tensor<1x?xf32, #tract.dims<[2*S]>> {
    %0 = tract.resize %x {sizes = #tract.shape<[1, 2*S]>, coord_transform = #tract<coord_transform asymmetric>, nearest_mode = #tract<nearest_mode round_prefer_ceil>} : tensor<1x?xf32, #tract.dims<[S]>> -> tensor<1x?xf32, #tract.dims<[2*S]>>
    return %0 : tensor<1x?xf32, #tract.dims<[2*S]>>
  }
}

// -----

// A linear resize whose shapes are known reads its cells and weights from
// tables computed at compile time (half-pixel: output 0 reads -0.25, the
// cells 0 and 0 clamped, weighed 0.25 and 0.75), and sums in f32 before
// rounding back to the element type.
// CHECK-LABEL: func.func @resize_linear(
// LLVM-LABEL: llvm.func @resize_linear(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK-SAME:    %[[X:.*]]: tensor<1x1x2x3xf16> {bufferization.writable = false})
// CHECK-DAG:     %[[C0:.*]] = arith.constant dense<[0, 0, 0, 1]> : tensor<4xi32>
// CHECK-DAG:     %[[W0:.*]] = arith.constant dense<[2.500000e-01, 7.500000e-01, 2.500000e-01, 7.500000e-01]> : tensor<4xf32>
// CHECK-DAG:     %[[C1:.*]] = arith.constant dense<[0, 1, 1, 1]> : tensor<4xi32>
// CHECK-DAG:     %[[W1:.*]] = arith.constant dense<[7.500000e-01, 2.500000e-01, 7.500000e-01, 2.500000e-01]> : tensor<4xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[C0]], %[[W0]], %[[C1]], %[[W1]] : {{.*}}) outs(%{{.*}} : tensor<1x1x4x3xf16>)
// CHECK-NEXT:    ^bb0(%[[CELL0:.*]]: i32, %[[WEIGHT0:.*]]: f32, %[[CELL1:.*]]: i32, %[[WEIGHT1:.*]]: f32, %{{.*}}: f16):
// CHECK:           %[[I0:.*]] = arith.index_cast %[[CELL0]] : i32 to index
// CHECK:           %[[I1:.*]] = arith.index_cast %[[CELL1]] : i32 to index
// CHECK:           %[[A:.*]] = tensor.extract %[[X]][%{{.*}}, %{{.*}}, %[[I0]], %{{.*}}]
// CHECK:           %[[AW:.*]] = arith.extf %[[A]] : f16 to f32
// CHECK:           %[[TA:.*]] = arith.mulf %[[AW]], %[[WEIGHT0]] : f32
// CHECK:           %[[B:.*]] = tensor.extract %[[X]][%{{.*}}, %{{.*}}, %[[I1]], %{{.*}}]
// CHECK:           %[[BW:.*]] = arith.extf %[[B]] : f16 to f32
// CHECK:           %[[TB:.*]] = arith.mulf %[[BW]], %[[WEIGHT1]] : f32
// CHECK:           %[[SUM:.*]] = arith.addf %[[TA]], %[[TB]] : f32
// CHECK:           %[[R:.*]] = arith.truncf %[[SUM]] : f32 to f16
// CHECK:           linalg.yield %[[R]] : f16
module {
  func.func @resize_linear(%x: tensor<1x1x2x3xf16>) -> tensor<1x1x4x3xf16> {
    %0 = tract.resize %x {sizes = #tract.shape<[1, 1, 4, 3]>, interpolator = #tract<interpolator linear>} : tensor<1x1x2x3xf16> -> tensor<1x1x4x3xf16>
    return %0 : tensor<1x1x4x3xf16>
  }
}

// -----

// Cubic resize over two axes is separable: 4 cells along one axis, then 4
// along the other. The last axis goes first here (its gathers on the
// 3 x 6 intermediate, the rows of the second pass on the 5 x 6 output).
// CHECK-LABEL: func.func @resize_cubic(
// LLVM-LABEL: llvm.func @resize_cubic(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK-SAME:    %[[X:.*]]: tensor<1x1x3x3xf32>
// CHECK:         %[[W:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x3x6xf32>)
// CHECK-COUNT-4:   tensor.extract %[[X]]
// CHECK-NOT:       tensor.extract
// CHECK:           linalg.yield
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x5x6xf32>)
// CHECK-COUNT-4:   tensor.extract %[[W]]
// CHECK-NOT:       tensor.extract
// CHECK:           linalg.yield
module {
  func.func @resize_cubic(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x5x6xf32> {
    %0 = tract.resize %x {sizes = #tract.shape<[1, 1, 5, 6]>, interpolator = #tract<interpolator cubic>, coord_transform = #tract<coord_transform align_corners>} : tensor<1x1x3x3xf32> -> tensor<1x1x5x6xf32>
    return %0 : tensor<1x1x5x6xf32>
  }
}

// -----

// align_corners with a given scale stretches to the unrounded length s * in
// (2.4 here, not the output's 2), as ONNX does: output 1 reads 3 / 1.4 =
// 2.142857, between cells 2 and 3 (it would read cell 3 alone at 2).
// CHECK-LABEL: func.func @resize_align_corners_scaled(
// LLVM-LABEL: llvm.func @resize_align_corners_scaled(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK-DAG:     arith.constant dense<[0, 2]> : tensor<2xi32>
// CHECK-DAG:     arith.constant dense<[1.000000e+00, 0.857142865]> : tensor<2xf32>
// CHECK-DAG:     arith.constant dense<[1, 3]> : tensor<2xi32>
// CHECK-DAG:     arith.constant dense<[0.000000e+00, 0.142857149]> : tensor<2xf32>
// CHECK:         linalg.generic
module {
  func.func @resize_align_corners_scaled(%x: tensor<1x4xf32>) -> tensor<1x2xf32> {
    %0 = tract.resize %x {sizes = #tract.shape<[1, 2]>, interpolator = #tract<interpolator linear>, coord_transform = #tract<coord_transform align_corners>, scales = array<f64: 1.0, 0.6>} : tensor<1x4xf32> -> tensor<1x2xf32>
    return %0 : tensor<1x2xf32>
  }
}

// -----

// tf_crop_and_resize samples the roi box and gives the extrapolation value
// where a coordinate leaves the input; with exclude_outside, cells outside
// the input weigh 0 and the weights are renormalized.
// CHECK-LABEL: func.func @resize_crop(
// LLVM-LABEL: llvm.func @resize_crop(
// LLVM-NOT: {{linalg\.|tensor\.|memref\.|unrealized}}
// CHECK:         %[[EXTRA:.*]] = arith.constant 1.000000e+01 : f32
// CHECK:         linalg.generic
// CHECK:           %[[BELOW:.*]] = arith.cmpf olt, %[[XIN:.*]], %{{.*}} : f64
// CHECK:           %[[ABOVE:.*]] = arith.cmpf ogt, %[[XIN]], %{{.*}} : f64
// CHECK:           %[[OUT:.*]] = arith.ori %[[BELOW]], %[[ABOVE]] : i1
// CHECK:           %[[W:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f64
// CHECK:           %[[TOTAL:.*]] = arith.addf %{{.*}}, %{{.*}} : f64
// CHECK:           arith.divf %{{.*}}, %[[TOTAL]] : f64
// CHECK:           %[[V:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK:           %[[R:.*]] = arith.select %{{.*}}, %[[EXTRA]], %[[V]] : f32
// CHECK:           linalg.yield %[[R]] : f32
module {
  func.func @resize_crop(%x: tensor<1x4xf32>) -> tensor<1x3xf32> {
    %0 = tract.resize %x {sizes = #tract.shape<[1, 3]>, interpolator = #tract<interpolator linear>, coord_transform = #tract<coord_transform tf_crop_and_resize>, roi = array<f64: 0.0, -0.2, 1.0, 1.3>, extrapolation_value = 10.0 : f64, exclude_outside = true} : tensor<1x4xf32> -> tensor<1x3xf32>
    return %0 : tensor<1x3xf32>
  }
}

// -----

// Element i of a random tensor is SplitMix64 of seed * golden + i, its
// top 53 bits a uniform in [0, 1); normal draws take two (Box-Muller).
// CHECK-LABEL: func.func @random_normal(
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3xf32>)
// CHECK:           %[[I:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK:           %[[K:.*]] = arith.addi %[[I]], %{{.*}} : i64
// CHECK:           arith.shrui
// CHECK:           arith.uitofp %{{.*}} : i64 to f64
// CHECK:           math.log
// CHECK:           math.sqrt
// CHECK:           math.cos
// CHECK:           arith.truncf %{{.*}} : f64 to f32
// LLVM-LABEL: llvm.func @random_normal(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module {
  func.func @random_normal(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = tract.random %x {distribution = #tract<random_distribution normal>, a = 1.0 : f64, b = 2.0 : f64, seed = 7 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }
}
