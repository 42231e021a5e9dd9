// RUN: tract-opt %s | FileCheck %s
// Round trip: the printed form parses back to the same IR, in both the
// custom and the generic syntax.
// RUN: tract-opt %s | tract-opt | FileCheck %s
// RUN: tract-opt %s --mlir-print-op-generic | tract-opt | FileCheck %s

// Scan and if: regions are verified against operands and results.

// CHECK-LABEL: func.func @scan
// CHECK: tract.scan %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} attributes {num_states = 1 : i64, output_axes = array<i64: 0>, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>} {
// CHECK: tract.einsum %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} {expr = "bk,kn->bn"} : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
// CHECK: tract.add %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK: tract.tanh %{{[a-zA-Z0-9_#]+}} : tensor<1x4xf32>
// CHECK: tract.yield %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : tensor<1x4xf32>, tensor<1x4xf32>
// CHECK: } : (tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>, tensor<4x4xf32>) -> (tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>)
// CHECK: return %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>
func.func @scan(%h0: tensor<1x4xf32>, %xs: tensor<?x4xf32, #tract.dims<[S]>>, %w: tensor<4x4xf32>) -> (tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>) {
  %h, %ys = tract.scan %h0, %xs, %w attributes {num_states = 1 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>, output_axes = array<i64: 0>} {
  ^bb0(%state: tensor<1x4xf32>, %x: tensor<1x4xf32>, %weights: tensor<4x4xf32>):
    %0 = tract.einsum %state, %weights {expr = "bk,kn->bn"} : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
    %1 = tract.add %0, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    %2 = tract.tanh %1 : tensor<1x4xf32>
    tract.yield %2, %2 : tensor<1x4xf32>, tensor<1x4xf32>
  } : (tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>, tensor<4x4xf32>) -> (tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>)
  return %h, %ys : tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>
}

// CHECK-LABEL: func.func @reverse_chunks
// CHECK: tract.scan %{{[a-zA-Z0-9_#]+}} attributes {num_states = 0 : i64, output_axes = array<i64: 0>, scan_axes = array<i64: 0>, scan_chunks = array<i64: -2>} {
// CHECK: tract.yield %{{[a-zA-Z0-9_#]+}} : tensor<2x4xf32>
// CHECK: } : (tensor<?x4xf32, #tract.dims<[S]>>) -> tensor<?x4xf32, #tract.dims<[2*((S+1)/2)]>>
// CHECK: return %{{[a-zA-Z0-9_#]+}} : tensor<?x4xf32, #tract.dims<[2*((S+1)/2)]>>
func.func @reverse_chunks(%xs: tensor<?x4xf32, #tract.dims<[S]>>) -> tensor<?x4xf32, #tract.dims<[2*((S+1)/2)]>> {
  %ys = tract.scan %xs attributes {num_states = 0 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: -2>, output_axes = array<i64: 0>} {
  ^bb0(%x: tensor<2x4xf32>):
    tract.yield %x : tensor<2x4xf32>
  } : (tensor<?x4xf32, #tract.dims<[S]>>) -> tensor<?x4xf32, #tract.dims<[2*((S+1)/2)]>>
  return %ys : tensor<?x4xf32, #tract.dims<[2*((S+1)/2)]>>
}

// CHECK-LABEL: func.func @if
// CHECK: tract.if %{{[a-zA-Z0-9_#]+}} : tensor<i1> -> tensor<3xf32> {
// CHECK: tract.yield %{{[a-zA-Z0-9_#]+}} : tensor<3xf32>
// CHECK: tract.neg %{{[a-zA-Z0-9_#]+}} : tensor<3xf32>
// CHECK: tract.yield %{{[a-zA-Z0-9_#]+}} : tensor<3xf32>
func.func @if(%c: tensor<i1>, %a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = tract.if %c : tensor<i1> -> tensor<3xf32> {
    tract.yield %a : tensor<3xf32>
  } else {
    %n = tract.neg %b : tensor<3xf32>
    tract.yield %n : tensor<3xf32>
  }
  return %0 : tensor<3xf32>
}

