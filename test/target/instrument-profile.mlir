// RUN: tract-opt --tract-instrument-profile --split-input-file %s | FileCheck %s
// RUN: tract-opt --tract-instrument-profile --tract-lower-to-llvm --split-input-file %s | FileCheck %s --check-prefix=LLVM

// Each op of main is bracketed by the runtime's enter/exit calls, with its
// position in the body as slot; the runtime functions are declared once.
// CHECK-LABEL: module {
// CHECK-DAG:     func.func private @tract_profile_exit(i64)
// CHECK-DAG:     func.func private @tract_profile_enter(i64)
// CHECK-LABEL:   func.func @main(
// CHECK-NEXT:      %[[S0:.*]] = arith.constant 0 : i64
// CHECK-NEXT:      call @tract_profile_enter(%[[S0]]) : (i64) -> ()
// CHECK-NEXT:      %[[ONE:.*]] = tract.const
// CHECK-NEXT:      call @tract_profile_exit(%[[S0]]) : (i64) -> ()
// CHECK-NEXT:      %[[S1:.*]] = arith.constant 1 : i64
// CHECK-NEXT:      call @tract_profile_enter(%[[S1]]) : (i64) -> ()
// CHECK-NEXT:      %[[E:.*]] = tract.exp
// CHECK-NEXT:      call @tract_profile_exit(%[[S1]]) : (i64) -> ()
// CHECK-NEXT:      %[[S2:.*]] = arith.constant 2 : i64
// CHECK-NEXT:      call @tract_profile_enter(%[[S2]]) : (i64) -> ()
// CHECK-NEXT:      %[[M:.*]] = tract.einsum %[[E]], %{{.*}}
// CHECK-NEXT:      call @tract_profile_exit(%[[S2]]) : (i64) -> ()
// CHECK-NEXT:      %[[S3:.*]] = arith.constant 3 : i64
// CHECK-NEXT:      call @tract_profile_enter(%[[S3]]) : (i64) -> ()
// CHECK-NEXT:      %[[A:.*]] = tract.add %[[M]], %[[ONE]]
// CHECK-NEXT:      call @tract_profile_exit(%[[S3]]) : (i64) -> ()
// CHECK-NEXT:      return %[[A]]

// Through bufferization and the LLVM lowering (where the model's body moves
// behind the entry checks), each op's computation stays between its calls:
// the exponential in slot 1 (a polynomial on vectors: its floor and FMAs),
// the matrix product's register-tile FMAs in slot 2, the addition in
// slot 3.
// LLVM-LABEL: llvm.func internal @main.body(
// LLVM-DAG:     %[[S0:.*]] = llvm.mlir.constant(0 : i64) : i64
// LLVM-DAG:     %[[S1:.*]] = llvm.mlir.constant(1 : i64) : i64
// LLVM-DAG:     %[[S2:.*]] = llvm.mlir.constant(2 : i64) : i64
// LLVM-DAG:     %[[S3:.*]] = llvm.mlir.constant(3 : i64) : i64
// LLVM:         llvm.call @tract_profile_enter(%[[S0]])
// LLVM-NEXT:    llvm.call @tract_profile_exit(%[[S0]])
// LLVM-NEXT:    llvm.call @tract_profile_enter(%[[S1]])
// LLVM-NOT:     llvm.call @tract_profile
// LLVM:         llvm.intr.floor
// LLVM:         llvm.intr.fma
// LLVM-NOT:     llvm.call @tract_profile
// LLVM:         llvm.call @tract_profile_exit(%[[S1]])
// LLVM-NEXT:    llvm.call @tract_profile_enter(%[[S2]])
// LLVM-NOT:     llvm.call @tract_profile
// LLVM:         llvm.intr.fmuladd
// LLVM-NOT:     llvm.call @tract_profile
// LLVM:         llvm.call @tract_profile_exit(%[[S2]])
// LLVM-NEXT:    llvm.call @tract_profile_enter(%[[S3]])
// LLVM-NOT:     llvm.call @tract_profile
// LLVM:         llvm.fadd
// LLVM-NOT:     llvm.call @tract_profile
// LLVM:         llvm.call @tract_profile_exit(%[[S3]])
// LLVM-NOT:     llvm.call @tract_profile
// LLVM:         llvm.return
func.func @main(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %one = tract.const dense<1.0> : tensor<1x1xf32>
  %e = tract.exp %x : tensor<2x3xf32>
  %m = tract.einsum %e, %w {expr = "mk,kn->mn"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %a = tract.add %m, %one : (tensor<2x4xf32>, tensor<1x1xf32>) -> tensor<2x4xf32>
  return %a : tensor<2x4xf32>
}

// -----

// A scan is one op: its body is not instrumented, and its whole loop runs
// between the calls of its slot.
// CHECK-LABEL:   func.func @main(
// CHECK:           %[[S1:.*]] = arith.constant 1 : i64
// CHECK-NEXT:      call @tract_profile_enter(%[[S1]]) : (i64) -> ()
// CHECK-NEXT:      %[[H:.*]] = tract.scan
// CHECK-NOT:       call
// CHECK:           tract.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      call @tract_profile_exit(%[[S1]]) : (i64) -> ()
// CHECK-NEXT:      %[[S2:.*]] = arith.constant 2 : i64
// CHECK-NEXT:      call @tract_profile_enter(%[[S2]]) : (i64) -> ()
// CHECK-NEXT:      tract.tanh %[[H]]
// CHECK-NEXT:      call @tract_profile_exit(%[[S2]]) : (i64) -> ()

// LLVM-LABEL: llvm.func internal @main.body(
// LLVM-DAG:     %[[S1:.*]] = llvm.mlir.constant(1 : i64) : i64
// LLVM-DAG:     %[[S2:.*]] = llvm.mlir.constant(2 : i64) : i64
// LLVM:         llvm.call @tract_profile_enter(%[[S1]])
// LLVM-NOT:     llvm.call @tract_profile
// LLVM:         ^bb[[HEAD:[0-9]+]](%{{.*}}):  // 2 preds
// LLVM-NOT:     llvm.call @tract_profile
// LLVM:         llvm.fadd
// LLVM-NOT:     llvm.call @tract_profile
// LLVM:         llvm.br ^bb[[HEAD]](
// LLVM-NOT:     llvm.call @tract_profile
// LLVM:         llvm.call @tract_profile_exit(%[[S1]])
// LLVM-NEXT:    llvm.call @tract_profile_enter(%[[S2]])
// LLVM-NOT:     llvm.call @tract_profile
// LLVM:         llvm.intr.fabs
// LLVM:         llvm.intr.fma
// LLVM-NOT:     llvm.call @tract_profile
// LLVM:         llvm.call @tract_profile_exit(%[[S2]])
module attributes {tract.symbols = ["S"]} {
  func.func @main(%xs: tensor<?x4xf32, #tract.dims<[S]>>) -> tensor<1x4xf32> {
    %h0 = tract.const dense<0.0> : tensor<1x4xf32>
    %h = tract.scan %h0, %xs attributes {num_states = 1 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>, output_axes = array<i64>} {
    ^bb0(%a: tensor<1x4xf32>, %x: tensor<1x4xf32>):
      %n = tract.add %a, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
      tract.yield %n : tensor<1x4xf32>
    } : (tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>) -> tensor<1x4xf32>
    %y = tract.tanh %h : tensor<1x4xf32>
    return %y : tensor<1x4xf32>
  }
}
