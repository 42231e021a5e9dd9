// RUN: tract-opt %s -split-input-file -verify-diagnostics --mlir-very-unsafe-disable-verifier-on-parsing -tract-infer-shapes | FileCheck %s

// The inputs were edited (S became N) and the types downstream are stale:
// they follow the inputs again, and so does the function type.
// CHECK-LABEL: func.func @propagate
// CHECK-SAME: (%[[X:.*]]: tensor<2x?xf32, #tract.dims<[N]>>, %[[Y:.*]]: tensor<2x1xf32>) -> tensor<2x?xf16, #tract.dims<[2*N]>>
// CHECK-NEXT: %[[A:.*]] = tract.add %[[X]], %[[Y]] : (tensor<2x?xf32, #tract.dims<[N]>>, tensor<2x1xf32>) -> tensor<2x?xf32, #tract.dims<[N]>>
// CHECK-NEXT: %[[C:.*]] = tract.concat %[[A]], %[[X]] {axis = 1 : i64} : (tensor<2x?xf32, #tract.dims<[N]>>, tensor<2x?xf32, #tract.dims<[N]>>) -> tensor<2x?xf32, #tract.dims<[2*N]>>
// CHECK-NEXT: %[[H:.*]] = tract.cast %[[C]] : tensor<2x?xf32, #tract.dims<[2*N]>> to tensor<2x?xf16, #tract.dims<[2*N]>>
// CHECK-NEXT: return %[[H]] : tensor<2x?xf16, #tract.dims<[2*N]>>
module attributes {tract.symbols = ["S", "N"]} {
  func.func @propagate(%x: tensor<2x?xf32, #tract.dims<[N]>>, %y: tensor<2x1xf32>) -> tensor<2x?xf16, #tract.dims<[2*S]>> {
    %0 = tract.add %x, %y : (tensor<2x?xf32, #tract.dims<[N]>>, tensor<2x1xf32>) -> tensor<2x?xf32, #tract.dims<[S]>>
    %1 = tract.concat %0, %x {axis = 1 : i64} : (tensor<2x?xf32, #tract.dims<[S]>>, tensor<2x?xf32, #tract.dims<[N]>>) -> tensor<2x?xf32, #tract.dims<[2*S]>>
    %2 = tract.cast %1 : tensor<2x?xf32, #tract.dims<[2*S]>> to tensor<2x?xf16, #tract.dims<[2*S]>>
    return %2 : tensor<2x?xf16, #tract.dims<[2*S]>>
  }
}

// -----

// The state became 2x4: the body's arguments and values, then the scan's
// results (final state, outputs stacked over S iterations) follow.
// CHECK-LABEL: func.func @scan
// CHECK-SAME: -> (tensor<2x4xf32>, tensor<?x4xf32, #tract.dims<[2*S]>>)
// CHECK: tract.scan
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<2x4xf32>, %{{.*}}: tensor<1x4xf32>, %{{.*}}: tensor<4x4xf32>):
// CHECK-NEXT: tract.einsum {{.*}} : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: tract.add {{.*}} : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: tract.yield {{.*}} : tensor<2x4xf32>, tensor<2x4xf32>
// CHECK-NEXT: } : (tensor<2x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>, tensor<4x4xf32>) -> (tensor<2x4xf32>, tensor<?x4xf32, #tract.dims<[2*S]>>)
module attributes {tract.symbols = ["S"]} {
  func.func @scan(%h0: tensor<2x4xf32>, %xs: tensor<?x4xf32, #tract.dims<[S]>>, %w: tensor<4x4xf32>) -> (tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>) {
    %h, %ys = tract.scan %h0, %xs, %w attributes {num_states = 1 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>, output_axes = array<i64: 0>} {
    ^bb0(%a: tensor<1x4xf32>, %x: tensor<1x4xf32>, %m: tensor<4x4xf32>):
      %p = tract.einsum %a, %m {expr = "bh,gh->bg"} : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
      %n = tract.add %p, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
      tract.yield %n, %n : tensor<1x4xf32>, tensor<1x4xf32>
    } : (tensor<2x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>, tensor<4x4xf32>) -> (tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>)
    return %h, %ys : tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>
  }
}

// -----

// CHECK-LABEL: func.func @if
// CHECK-SAME: -> tensor<?xf32, #tract.dims<[S]>>
// CHECK: tract.if %{{.*}} : tensor<i1> -> tensor<?xf32, #tract.dims<[S]>> {
// CHECK: tract.neg %{{.*}} : tensor<?xf32, #tract.dims<[S]>>
module attributes {tract.symbols = ["S"]} {
  func.func @if(%c: tensor<i1>, %a: tensor<?xf32, #tract.dims<[S]>>, %b: tensor<?xf32, #tract.dims<[S]>>) -> tensor<3xf32> {
    %0 = tract.if %c : tensor<i1> -> tensor<3xf32> {
      tract.yield %a : tensor<?xf32, #tract.dims<[S]>>
    } else {
      %n = tract.neg %b : tensor<?xf32, #tract.dims<[S]>>
      tract.yield %n : tensor<?xf32, #tract.dims<[S]>>
    }
    return %0 : tensor<3xf32>
  }
}

// -----

// Already consistent types are left as they are.
// CHECK-LABEL: func.func @unchanged
// CHECK-NEXT: tract.slice %{{.*}} {axis = 0 : i64, end = #tract.dim<S-1>, start = #tract.dim<1>} : tensor<?xf32, #tract.dims<[S]>> -> tensor<?xf32, #tract.dims<[S-2]>>
module attributes {tract.symbols = ["S"]} {
  func.func @unchanged(%x: tensor<?xf32, #tract.dims<[S]>>) -> tensor<?xf32, #tract.dims<[S-2]>> {
    %0 = tract.slice %x {axis = 0 : i64, start = #tract.dim<1>, end = #tract.dim<S-1>} : tensor<?xf32, #tract.dims<[S]>> -> tensor<?xf32, #tract.dims<[S-2]>>
    return %0 : tensor<?xf32, #tract.dims<[S-2]>>
  }
}

// -----

// A dim that must be both S and S+1.
module attributes {tract.symbols = ["S"]} {
  func.func @contradiction(%x: tensor<?x2xf32, #tract.dims<[S]>>, %y: tensor<?x3xf32, #tract.dims<[S+1]>>) -> tensor<?x5xf32, #tract.dims<[S]>> {
    // expected-error @+1 {{input 1 has dim S+1 on axis 0, expected S}}
    %0 = tract.concat %x, %y {axis = 1 : i64} : (tensor<?x2xf32, #tract.dims<[S]>>, tensor<?x3xf32, #tract.dims<[S+1]>>) -> tensor<?x5xf32, #tract.dims<[S]>>
    return %0 : tensor<?x5xf32, #tract.dims<[S]>>
  }
}

// -----

// A state must keep its shape across iterations.
func.func @growing_state(%h0: tensor<1x4xf32>, %xs: tensor<3x4xf32>) -> tensor<1x4xf32> {
  // expected-error @+1 {{'tract.scan' op state 0 starts as 'tensor<1x4xf32>' but the body yields 'tensor<1x8xf32>'}}
  %h = tract.scan %h0, %xs attributes {num_states = 1 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>, output_axes = array<i64>} {
  ^bb0(%a: tensor<1x4xf32>, %x: tensor<1x4xf32>):
    %n = tract.concat %a, %x {axis = 1 : i64} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    tract.yield %n : tensor<1x4xf32>
  } : (tensor<1x4xf32>, tensor<3x4xf32>) -> tensor<1x4xf32>
  return %h : tensor<1x4xf32>
}

// -----

func.func @if_regions_disagree(%c: tensor<i1>, %a: tensor<3xf32>, %b: tensor<4xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'tract.if' op result 0 is 'tensor<3xf32>' in the then region but 'tensor<4xf32>' in the else region}}
  %0 = tract.if %c : tensor<i1> -> tensor<3xf32> {
    tract.yield %a : tensor<3xf32>
  } else {
    tract.yield %b : tensor<4xf32>
  }
  return %0 : tensor<3xf32>
}
