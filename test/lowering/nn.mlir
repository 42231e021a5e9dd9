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
