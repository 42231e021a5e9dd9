// RUN: tract-opt --tract-lower-to-linalg --split-input-file --verify-diagnostics %s | FileCheck %s
// RUN: tract-opt --tract-lower-to-llvm --split-input-file --verify-diagnostics %s | FileCheck %s --check-prefix=LLVM

// Each case also goes the whole way to the LLVM dialect (LLVM prefix).

// A scan is an scf.for over the scanned length: the state is carried, the
// input is read one row at a time and each output row lands at its
// iteration's offset in a tensor sized from S. The body's ops are lowered in
// place.
// CHECK-LABEL: func.func @scan(
// CHECK-SAME:    %[[H0:[^:]*]]: tensor<1x4xf32> {bufferization.writable = false}, %[[XS:[^:]*]]: tensor<?x4xf32> {bufferization.writable = false}, %[[W:[^:]*]]: tensor<4x4xf32>
// CHECK:         %[[S:.*]] = tensor.dim %[[XS]], %{{.*}}
// CHECK:         %[[YS0:.*]] = tensor.empty(%[[S]]) : tensor<?x4xf32>
// CHECK:         %[[LOOP:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %[[S]] step %{{.*}} iter_args(%[[H:.*]] = %[[H0]], %[[YS:.*]] = %[[YS0]]) -> (tensor<1x4xf32>, tensor<?x4xf32>) {
// CHECK:           %[[X:.*]] = tensor.extract_slice %[[XS]][%[[I]], 0] [1, 4] [1, 1] : tensor<?x4xf32> to tensor<1x4xf32>
// CHECK:           %[[P:.*]] = linalg.generic {{.*}} ins(%[[H]], %[[W]] : tensor<1x4xf32>, tensor<4x4xf32>)
// CHECK:           %[[N:.*]] = linalg.generic {{.*}} ins(%[[P]], %[[X]] : tensor<1x4xf32>, tensor<1x4xf32>)
// CHECK:           %[[NEXT:.*]] = tensor.insert_slice %[[N]] into %[[YS]][%[[I]], 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<?x4xf32>
// CHECK:           scf.yield %[[N]], %[[NEXT]] : tensor<1x4xf32>, tensor<?x4xf32>
// CHECK:         }
// CHECK:         linalg.copy ins(%[[LOOP]]#0 : tensor<1x4xf32>)
// CHECK-NOT:     {{= tract\.}}
// LLVM-LABEL: llvm.func @scan(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module attributes {tract.symbols = ["S"]} {
  func.func @scan(%h0: tensor<1x4xf32>, %xs: tensor<?x4xf32, #tract.dims<[S]>>, %w: tensor<4x4xf32>) -> (tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>) {
    %h, %ys = tract.scan %h0, %xs, %w attributes {num_states = 1 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>, output_axes = array<i64: 0>} {
    ^bb0(%a: tensor<1x4xf32>, %x: tensor<1x4xf32>, %m: tensor<4x4xf32>):
      %p = tract.einsum %a, %m {expr = "bh,gh->bg"} : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
      %n = tract.add %p, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
      tract.yield %n, %n : tensor<1x4xf32>, tensor<1x4xf32>
    } : (tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>, tensor<4x4xf32>) -> (tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>)
    return %h, %ys : tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>
  }
}

// -----

// A body that captures a value computed outside (declutter makes full
// inputs captures) reads it as it is, although the product would rather
// have it transposed: the transpose would run at every iteration.
// CHECK-LABEL: func.func @scan_captured_weight(
// CHECK:         %[[WN:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<4x4xf32>)
// CHECK:         scf.for
// CHECK-NOT:       linalg.transpose
// CHECK:           linalg.generic {{.*}} ins(%{{.*}}, %[[WN]] : tensor<1x4xf32>, tensor<4x4xf32>)
// LLVM-LABEL: llvm.func @scan_captured_weight(
module attributes {tract.symbols = ["S"]} {
  func.func @scan_captured_weight(%h0: tensor<1x4xf32>, %xs: tensor<?x4xf32, #tract.dims<[S]>>, %w: tensor<4x4xf32>) -> (tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>) {
    %wn = tract.neg %w : tensor<4x4xf32>
    %h, %ys = tract.scan %h0, %xs attributes {num_states = 1 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>, output_axes = array<i64: 0>} {
    ^bb0(%a: tensor<1x4xf32>, %x: tensor<1x4xf32>):
      %p = tract.einsum %a, %wn {expr = "bh,gh->bg"} : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
      %n = tract.add %p, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
      tract.yield %n, %n : tensor<1x4xf32>, tensor<1x4xf32>
    } : (tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>) -> (tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>)
    return %h, %ys : tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>
  }
}

// -----

// A negative chunk reads the input from its end; chunks of 2 step by 2 and
// the outputs stack on axis 1.
// CHECK-LABEL: func.func @scan_reverse_chunks(
// CHECK-SAME:    %[[XS:.*]]: tensor<6x3xi32>
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK:         %[[LAST:.*]] = arith.subi %[[C3]], %[[C1]] : index
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %[[C3]] step %[[C1]] iter_args(%[[YS:.*]] = %{{.*}}) -> (tensor<3x6xi32>) {
// CHECK:           %[[STEP:.*]] = arith.subi %[[LAST]], %[[I]] : index
// CHECK:           %[[FROM:.*]] = arith.muli %[[STEP]], %{{.*}} : index
// CHECK:           %[[X:.*]] = tensor.extract_slice %[[XS]][%[[FROM]], 0] [2, 3] [1, 1] : tensor<6x3xi32> to tensor<2x3xi32>
// CHECK:           %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<2x3xi32>)
// CHECK:           %[[TO:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK:           tensor.insert_slice %[[T]] into %[[YS]][0, %[[TO]]] [3, 2] [1, 1] : tensor<3x2xi32> into tensor<3x6xi32>
// LLVM-LABEL: llvm.func @scan_reverse_chunks(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module {
  func.func @scan_reverse_chunks(%xs: tensor<6x3xi32>) -> tensor<3x6xi32> {
    %ys = tract.scan %xs attributes {num_states = 0 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: -2>, output_axes = array<i64: 1>} {
    ^bb0(%x: tensor<2x3xi32>):
      %t = tract.move_axis %x {from = 0 : i64, to = 1 : i64} : tensor<2x3xi32> -> tensor<3x2xi32>
      tract.yield %t : tensor<3x2xi32>
    } : (tensor<6x3xi32>) -> tensor<3x6xi32>
    return %ys : tensor<3x6xi32>
  }
}

// -----

// A state that the body passes through unchanged.
// CHECK-LABEL: func.func @scan_identity_state(
// CHECK-SAME:    %[[S0:[^:]*]]: tensor<2xf32>
// CHECK:         scf.for %{{.*}} iter_args(%[[S:.*]] = %[[S0]]) -> (tensor<2xf32>) {
// CHECK:           scf.yield %[[S]] : tensor<2xf32>
// LLVM-LABEL: llvm.func @scan_identity_state(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module {
  func.func @scan_identity_state(%s: tensor<2xf32>, %xs: tensor<3x2xf32>) -> tensor<2xf32> {
    %r = tract.scan %s, %xs attributes {num_states = 1 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>, output_axes = array<i64>} {
    ^bb0(%a: tensor<2xf32>, %x: tensor<1x2xf32>):
      tract.yield %a : tensor<2xf32>
    } : (tensor<2xf32>, tensor<3x2xf32>) -> tensor<2xf32>
    return %r : tensor<2xf32>
  }
}

// -----

// An if reads its condition's only element; each region yields plain values,
// including values defined above.
// CHECK-LABEL: func.func @if(
// CHECK-SAME:    %[[C:[^:]*]]: tensor<1xi1> {bufferization.writable = false}, %[[X:[^:]*]]: tensor<?xf32>
// CHECK:         %[[COND:.*]] = tensor.extract %[[C]][%{{.*}}] : tensor<1xi1>
// CHECK:         scf.if %[[COND]] -> (tensor<?xf32>) {
// CHECK:           %[[N:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<?xf32>)
// CHECK:             arith.negf
// CHECK:           %[[N1:.*]] = builtin.unrealized_conversion_cast %[[N]] : tensor<?xf32> to tensor<?xf32, #tract.dims<[S]>>
// CHECK:           %[[N2:.*]] = builtin.unrealized_conversion_cast %[[N1]] : tensor<?xf32, #tract.dims<[S]>> to tensor<?xf32>
// CHECK:           scf.yield %[[N2]] : tensor<?xf32>
// CHECK:         } else {
// CHECK:           %[[X1:.*]] = builtin.unrealized_conversion_cast %{{.*}} : tensor<?xf32, #tract.dims<[S]>> to tensor<?xf32>
// CHECK:           scf.yield %[[X1]] : tensor<?xf32>
// CHECK:         }
// LLVM-LABEL: llvm.func @if(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module attributes {tract.symbols = ["S"]} {
  func.func @if(%c: tensor<1xi1>, %x: tensor<?xf32, #tract.dims<[S]>>) -> tensor<?xf32, #tract.dims<[S]>> {
    %r = tract.if %c : tensor<1xi1> -> tensor<?xf32, #tract.dims<[S]>> {
      %n = tract.neg %x : tensor<?xf32, #tract.dims<[S]>>
      tract.yield %n : tensor<?xf32, #tract.dims<[S]>>
    } else {
      tract.yield %x : tensor<?xf32, #tract.dims<[S]>>
    }
    return %r : tensor<?xf32, #tract.dims<[S]>>
  }
}

// -----

// A chunk that may not divide its symbolic length would leave a partial last
// chunk the body has no type for: refused.
module attributes {tract.symbols = ["S"]} {
  func.func @scan_partial_chunk(%xs: tensor<?xf32, #tract.dims<[S]>>) -> tensor<f32> {
    %z = tract.const dense<0.0> : tensor<f32>
    // expected-error @+2 {{cannot lower a scan whose chunk of 2 does not provably divide the scanned length S of input 1}}
    // expected-error @+1 {{failed to legalize operation 'tract.scan'}}
    %r = tract.scan %z, %xs attributes {num_states = 1 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 2>, output_axes = array<i64>} {
    ^bb0(%a: tensor<f32>, %x: tensor<2xf32>):
      tract.yield %a : tensor<f32>
    } : (tensor<f32>, tensor<?xf32, #tract.dims<[S]>>) -> tensor<f32>
    return %r : tensor<f32>
  }
}

// -----

// A branch that relies on an assertion runs only when it holds; otherwise
// tract_fail reports it and the results are empty tensors of their sizes.
// CHECK-LABEL: func.func @if_assertions(
// CHECK-SAME:    %[[C:[^:]*]]: tensor<1xi1> {bufferization.writable = false}, %[[X:[^:]*]]: tensor<?xf32>
// CHECK:         %[[S:.*]] = tensor.dim %[[X]]
// CHECK:         %[[COND:.*]] = tensor.extract %[[C]]
// CHECK:         %[[HOLDS:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK:         %[[SV:.*]] = arith.index_cast %[[S]] : index to i64
// CHECK:         %[[OK:.*]] = arith.select %[[COND]], %[[HOLDS]], %{{.*}} : i1
// CHECK:         %[[R:.*]] = scf.if %[[OK]] -> (tensor<1xf32>) {
// CHECK:           %[[IN:.*]] = scf.if %[[COND]] -> (tensor<1xf32>) {
// CHECK:             tensor.extract_slice %[[X]][0] [1] [1]
// CHECK:           scf.yield %[[IN]] : tensor<1xf32>
// CHECK:         } else {
// CHECK:           scf.if %[[COND]] {
// CHECK:             %[[MSG:.*]] = llvm.mlir.addressof @tract.check0 : !llvm.ptr
// CHECK:             llvm.call @tract_fail(%[[MSG]], %[[SV]])
// CHECK:           %[[EMPTY:.*]] = tensor.empty() : tensor<1xf32>
// CHECK:           scf.yield %[[EMPTY]] : tensor<1xf32>
// LLVM-LABEL: llvm.func @if_assertions(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized}}
module attributes {tract.symbols = ["S"]} {
  func.func @if_assertions(%c: tensor<1xi1>, %x: tensor<?xf32, #tract.dims<[S]>>) -> tensor<1xf32> {
    %r = tract.if %c : tensor<1xi1> -> tensor<1xf32> {
      %s = tract.slice %x {axis = 0 : i64, start = #tract.dim<0>, end = #tract.dim<1>} : tensor<?xf32, #tract.dims<[S]>> -> tensor<1xf32>
      tract.yield %s : tensor<1xf32>
    } else {
      %z = tract.const dense<0.0> : tensor<1xf32>
      tract.yield %z : tensor<1xf32>
    } {then_assertions = ["S == 1"]}
    return %r : tensor<1xf32>
  }
}
