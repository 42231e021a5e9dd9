// RUN: tract-opt --tract-lower-to-linalg --tract-entry-checks --cse --split-input-file %s | FileCheck %s
// RUN: tract-opt --tract-lower-to-llvm --split-input-file %s | FileCheck %s --check-prefix=LLVM

// With entry checks (from the shapes and guards tract-lower-to-linalg
// records), a public function's code moves to a private, internal
// `<name>.body`; the public function takes every dim dynamic, reads them
// all, binds the symbols as the body does, and evaluates the checks in
// order. Only the first failing check reports (ok before it, not after):
// it calls the runtime's tract_set_error with its message and the values.
// The checks compute in i64, whatever the width of index.
// The body runs if every check holds; otherwise empty results come back
// with status 1.

// A symbol read twice: S binds from a's axis 0, within the ceiling on a dim
// (2^31, under which most dim arithmetic cannot overflow), b's axis 0 must
// equal it; a's static axis 1 is checked too (the caller passes any size).
// CHECK:       llvm.func @tract_set_error(!llvm.ptr, ...) -> i32
// CHECK-LABEL: func.func private @symbol_twice.body(
// CHECK-SAME:    %{{.*}}: tensor<?x4xf32> {bufferization.writable = false}, %{{.*}}: tensor<?xf32> {bufferization.writable = false}) -> tensor<?x4xf32>
// CHECK-SAME:    attributes {llvm.linkage = #llvm.linkage<internal>}
// CHECK:         math.exp
// CHECK:       llvm.mlir.global internal constant @symbol_twice.check0("input 'a' gives S = %lld (axis 0), over the limit of 2^31 on a dim\00")
// CHECK:       llvm.mlir.global internal constant @symbol_twice.check1("input 'a' is %lld,%lld, the model expects S,4 (axis 1 should be 4)\00")
// CHECK:       llvm.mlir.global internal constant @symbol_twice.check2("input 'b' is %lld, the model expects S (axis 0 should be S = %lld)\00")
// CHECK-LABEL: func.func @symbol_twice(
// CHECK-SAME:    %[[A:.*]]: tensor<?x?xf32> {bufferization.writable = false}, %[[B:.*]]: tensor<?xf32> {bufferization.writable = false}) -> (tensor<?x?xf32>, i32)
// CHECK-SAME:    attributes {tract.input_names = ["a", "b"], tract.output_names = ["y"]}
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[SI:.*]] = tensor.dim %[[A]], %[[C0]] : tensor<?x?xf32>
// CHECK-NEXT:    %[[S:.*]] = arith.index_cast %[[SI]] : index to i64
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[A1I:.*]] = tensor.dim %[[A]], %[[C1]] : tensor<?x?xf32>
// CHECK-NEXT:    %[[A1:.*]] = arith.index_cast %[[A1I]] : index to i64
// CHECK-NEXT:    %[[B0I:.*]] = tensor.dim %[[B]], %[[C0]] : tensor<?xf32>
// CHECK-NEXT:    %[[B0:.*]] = arith.index_cast %[[B0I]] : index to i64
// CHECK-NEXT:    %[[CEILING:.*]] = arith.constant 2147483648 : i64
// CHECK-NEXT:    %[[OKS:.*]] = arith.cmpi sle, %[[S]], %[[CEILING]] : i64
// CHECK-NEXT:    %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT:    %[[FAILS:.*]] = arith.xori %[[OKS]], %[[TRUE]] : i1
// CHECK-NEXT:    scf.if %[[FAILS]] {
// CHECK-NEXT:      %[[MSGS:.*]] = llvm.mlir.addressof @symbol_twice.check0 : !llvm.ptr
// CHECK-NEXT:      llvm.call @tract_set_error(%[[MSGS]], %[[S]]) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, i64) -> i32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[C4:.*]] = arith.constant 4 : i64
// CHECK-NEXT:    %[[HOLDS0:.*]] = arith.cmpi eq, %[[A1]], %[[C4]] : i64
// CHECK-NEXT:    %[[OK0:.*]] = arith.andi %[[OKS]], %[[HOLDS0]] : i1
// CHECK-NEXT:    %[[FAIL0:.*]] = arith.xori %[[OKS]], %[[OK0]] : i1
// CHECK-NEXT:    scf.if %[[FAIL0]] {
// CHECK-NEXT:      %[[MSG0:.*]] = llvm.mlir.addressof @symbol_twice.check1 : !llvm.ptr
// CHECK-NEXT:      llvm.call @tract_set_error(%[[MSG0]], %[[S]], %[[A1]]) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, i64, i64) -> i32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[HOLDS1:.*]] = arith.cmpi eq, %[[B0]], %[[S]] : i64
// CHECK-NEXT:    %[[OK1:.*]] = arith.andi %[[OK0]], %[[HOLDS1]] : i1
// CHECK-NEXT:    %[[FAIL1:.*]] = arith.xori %[[OK0]], %[[OK1]] : i1
// CHECK-NEXT:    scf.if %[[FAIL1]] {
// CHECK-NEXT:      %[[MSG1:.*]] = llvm.mlir.addressof @symbol_twice.check2 : !llvm.ptr
// CHECK-NEXT:      llvm.call @tract_set_error(%[[MSG1]], %[[B0]], %[[S]])
// CHECK-NEXT:    }
// CHECK-NEXT:    cf.cond_br %[[OK1]], ^[[CALL:bb[0-9]+]], ^[[FAIL:bb[0-9]+]]
// CHECK-NEXT:  ^[[CALL]]:
// CHECK-NEXT:    %[[CAST:.*]] = tensor.cast %[[A]] : tensor<?x?xf32> to tensor<?x4xf32>
// CHECK-NEXT:    %[[Y:.*]] = call @symbol_twice.body(%[[CAST]], %[[B]]) : (tensor<?x4xf32>, tensor<?xf32>) -> tensor<?x4xf32>
// CHECK-NEXT:    %[[YCAST:.*]] = tensor.cast %[[Y]] : tensor<?x4xf32> to tensor<?x?xf32>
// CHECK-NEXT:    %[[OK:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    return %[[YCAST]], %[[OK]] : tensor<?x?xf32>, i32
// CHECK-NEXT:  ^[[FAIL]]:
// CHECK-NEXT:    %[[EMPTY:.*]] = tensor.empty(%[[C0]], %[[C0]]) : tensor<?x?xf32>
// CHECK-NEXT:    %[[ERROR:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    return %[[EMPTY]], %[[ERROR]] : tensor<?x?xf32>, i32
// The whole path: the status is the last member of the result struct.
// LLVM:       llvm.func @tract_set_error(!llvm.ptr, ...) -> i32
// LLVM:       llvm.func internal @symbol_twice.body(
// LLVM-LABEL: llvm.func @symbol_twice(
// LLVM-SAME:    -> !llvm.struct<(struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, i32)>
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized|memrefCopy}}
module attributes {tract.symbols = ["S"]} {
  func.func @symbol_twice(%arg0: tensor<?x4xf32, #tract.dims<[S]>> {tract.name = "a"}, %arg1: tensor<?xf32, #tract.dims<[S]>> {tract.name = "b"}) -> (tensor<?x4xf32, #tract.dims<[S]>> {tract.name = "y"}) {
    %0 = tract.exp %arg0 : tensor<?x4xf32, #tract.dims<[S]>>
    return %0 : tensor<?x4xf32, #tract.dims<[S]>>
  }
}

// -----

// A dim that is an expression of a bound symbol; the message gives its
// expected value.
// CHECK:       llvm.mlir.global internal constant @offset.check1("input 'b' is %lld, the model expects S+1 (axis 0 should be S+1 = %lld)\00")
// CHECK-LABEL: func.func @offset(
// CHECK-SAME:    %[[A:.*]]: tensor<?xf32> {bufferization.writable = false}, %[[B:.*]]: tensor<?xf32> {bufferization.writable = false}) -> (tensor<?xf32>, i32)
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[SI:.*]] = tensor.dim %[[A]], %[[C0]] : tensor<?xf32>
// CHECK-NEXT:    %[[S:.*]] = arith.index_cast %[[SI]] : index to i64
// CHECK-NEXT:    %[[B0I:.*]] = tensor.dim %[[B]], %[[C0]] : tensor<?xf32>
// CHECK-NEXT:    %[[B0:.*]] = arith.index_cast %[[B0I]] : index to i64
// CHECK-NEXT:    %[[CEILING:.*]] = arith.constant 2147483648 : i64
// CHECK-NEXT:    %[[OKS:.*]] = arith.cmpi sle, %[[S]], %[[CEILING]] : i64
// CHECK:         scf.if
// CHECK:         %[[C1:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    %[[EXPECTED:.*]] = arith.addi %[[S]], %[[C1]] : i64
// CHECK-NEXT:    %[[HOLDS:.*]] = arith.cmpi eq, %[[B0]], %[[EXPECTED]] : i64
// CHECK-NEXT:    %[[OK:.*]] = arith.andi %[[OKS]], %[[HOLDS]] : i1
// CHECK-NEXT:    %[[FAIL:.*]] = arith.xori %[[OKS]], %[[OK]] : i1
// CHECK-NEXT:    scf.if %[[FAIL]] {
// CHECK-NEXT:      %[[MSG:.*]] = llvm.mlir.addressof @offset.check1 : !llvm.ptr
// CHECK-NEXT:      llvm.call @tract_set_error(%[[MSG]], %[[B0]], %[[EXPECTED]])
// CHECK-NEXT:    }
// CHECK-NEXT:    cf.cond_br %[[OK]]
// LLVM-LABEL: llvm.func @offset(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized|memrefCopy}}
module attributes {tract.symbols = ["S"]} {
  func.func @offset(%arg0: tensor<?xf32, #tract.dims<[S]>> {tract.name = "a"}, %arg1: tensor<?xf32, #tract.dims<[S+1]>> {tract.name = "b"}) -> tensor<?xf32, #tract.dims<[S+1]>> {
    return %arg1 : tensor<?xf32, #tract.dims<[S+1]>>
  }
}

// -----

// A static input: both dims are checked, and the body gets a static tensor.
// A `%` in a name is escaped for the printf format.
// CHECK:       llvm.mlir.global internal constant @static_dims.check0("input 'x%%' is %lld,%lld, the model expects 2,3 (axis 0 should be 2)\00")
// CHECK:       llvm.mlir.global internal constant @static_dims.check1("input 'x%%' is %lld,%lld, the model expects 2,3 (axis 1 should be 3)\00")
// CHECK-LABEL: func.func @static_dims(
// CHECK-SAME:    %[[X:.*]]: tensor<?x?xf32> {bufferization.writable = false}) -> (tensor<?x?xf32>, i32)
// CHECK:         %[[X0I:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x?xf32>
// CHECK-NEXT:    %[[X0:.*]] = arith.index_cast %[[X0I]] : index to i64
// CHECK:         %[[X1I:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x?xf32>
// CHECK-NEXT:    %[[X1:.*]] = arith.index_cast %[[X1I]] : index to i64
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : i64
// CHECK-NEXT:    %[[OK0:.*]] = arith.cmpi eq, %[[X0]], %[[C2]] : i64
// CHECK:         scf.if
// CHECK:         %[[C3:.*]] = arith.constant 3 : i64
// CHECK-NEXT:    %[[HOLDS1:.*]] = arith.cmpi eq, %[[X1]], %[[C3]] : i64
// CHECK-NEXT:    %[[OK1:.*]] = arith.andi %[[OK0]], %[[HOLDS1]] : i1
// CHECK:         cf.cond_br %[[OK1]]
// CHECK:         %[[CAST:.*]] = tensor.cast %[[X]] : tensor<?x?xf32> to tensor<2x3xf32>
// CHECK-NEXT:    call @static_dims.body(%[[CAST]]) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// LLVM-LABEL: llvm.func @static_dims(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized|memrefCopy}}
module {
  func.func @static_dims(%arg0: tensor<2x3xf32> {tract.name = "x%"}) -> tensor<2x3xf32> {
    return %arg0 : tensor<2x3xf32>
  }
}

// -----

// A symbol read from `2*P+1`: the dim must have that form with P >= 0 (an
// even size, or 0, would give a wrong or negative P).
// CHECK:       llvm.mlir.global internal constant @linear_source.check0("input 'input_0' gives P = %lld (axis 0), over the limit of 2^31 on a dim\00")
// CHECK:       llvm.mlir.global internal constant @linear_source.check1("input 'input_0' is %lld, the model expects 2*P+1 (axis 0 should be 2*P+1 for some P >= 0)\00")
// CHECK-LABEL: func.func @linear_source(
// CHECK-SAME:    %[[X:.*]]: tensor<?xf32> {bufferization.writable = false}) -> (tensor<?xf32>, i32)
// CHECK:         %[[C0I:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[DI:.*]] = tensor.dim %[[X]], %[[C0I]] : tensor<?xf32>
// CHECK-NEXT:    %[[D:.*]] = arith.index_cast %[[DI]] : index to i64
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    %[[D1:.*]] = arith.subi %[[D]], %[[C1]] : i64
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : i64
// CHECK-NEXT:    %[[P:.*]] = arith.floordivsi %[[D1]], %[[C2]] : i64
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[CEILING:.*]] = arith.constant 2147483648 : i64
// CHECK-NEXT:    %[[OKP:.*]] = arith.cmpi sle, %[[P]], %[[CEILING]] : i64
// CHECK:         scf.if
// CHECK:         %[[NONNEG:.*]] = arith.cmpi sge, %[[P]], %[[C0]] : i64
// CHECK-NEXT:    %[[TWICE:.*]] = arith.muli %[[P]], %[[C2]] : i64
// CHECK-NEXT:    %[[EXPECTED:.*]] = arith.addi %[[TWICE]], %[[C1]] : i64
// CHECK-NEXT:    %[[EQ:.*]] = arith.cmpi eq, %[[D]], %[[EXPECTED]] : i64
// CHECK-NEXT:    %[[HOLDS:.*]] = arith.andi %[[EQ]], %[[NONNEG]] : i1
// CHECK-NEXT:    %[[OK:.*]] = arith.andi %[[OKP]], %[[HOLDS]] : i1
// CHECK:         scf.if
// CHECK:         cf.cond_br %[[OK]]
// LLVM-LABEL: llvm.func @linear_source(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized|memrefCopy}}
module attributes {tract.symbols = ["P"]} {
  func.func @linear_source(%arg0: tensor<?xf32, #tract.dims<[2*P+1]>>) -> tensor<?xf32, #tract.dims<[2*P+1]>> {
    return %arg0 : tensor<?xf32, #tract.dims<[2*P+1]>>
  }
}

// -----

// Assertions are `expr >= 0` constraints over the bound symbols, with
// TDim's floor division; one over a symbol no input binds (T) is left to
// the code that computes it.
// CHECK:       llvm.mlir.global internal constant @assertions.check0("input 's' gives S = %lld (axis 0), over the limit of 2^31 on a dim\00")
// CHECK:       llvm.mlir.global internal constant @assertions.check1("input 'p' gives P = %lld (axis 0), over the limit of 2^31 on a dim\00")
// CHECK:       llvm.mlir.global internal constant @assertions.check2("the inputs violate the model's assertion S >= 1 (S=%lld)\00")
// CHECK:       llvm.mlir.global internal constant @assertions.check3("the inputs violate the model's assertion (S+1)/2 + P <= 8 (P=%lld, S=%lld)\00")
// CHECK-NOT:   llvm.mlir.global
// CHECK-LABEL: func.func @assertions(
// CHECK-SAME:    %[[SIN:.*]]: tensor<?xf32> {bufferization.writable = false}, %[[PIN:.*]]: tensor<?xf32> {bufferization.writable = false}) -> (tensor<?xf32>, i32)
// CHECK:         %[[C0I:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[SI:.*]] = tensor.dim %[[SIN]], %[[C0I]] : tensor<?xf32>
// CHECK-NEXT:    %[[S:.*]] = arith.index_cast %[[SI]] : index to i64
// CHECK-NEXT:    %[[PI:.*]] = tensor.dim %[[PIN]], %[[C0I]] : tensor<?xf32>
// CHECK-NEXT:    %[[P:.*]] = arith.index_cast %[[PI]] : index to i64
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : i64
// CHECK:         %[[OKS:.*]] = arith.cmpi sle, %[[S]], %{{.*}} : i64
// CHECK:         %[[OKP:.*]] = arith.cmpi sle, %[[P]], %{{.*}} : i64
// CHECK-NEXT:    %[[OKC:.*]] = arith.andi %[[OKS]], %[[OKP]] : i1
// CHECK:         scf.if
// CHECK:         %[[CM1:.*]] = arith.constant -1 : i64
// CHECK-NEXT:    %[[SM1:.*]] = arith.addi %[[S]], %[[CM1]] : i64
// CHECK-NEXT:    %[[HOLDS0:.*]] = arith.cmpi sge, %[[SM1]], %[[C0]] : i64
// CHECK-NEXT:    %[[OK0:.*]] = arith.andi %[[OKC]], %[[HOLDS0]] : i1
// CHECK-NEXT:    %[[FAIL0:.*]] = arith.xori %[[OKC]], %[[OK0]] : i1
// CHECK-NEXT:    scf.if %[[FAIL0]] {
// CHECK-NEXT:      %[[MSG0:.*]] = llvm.mlir.addressof @assertions.check2 : !llvm.ptr
// CHECK-NEXT:      llvm.call @tract_set_error(%[[MSG0]], %[[S]]) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, i64) -> i32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[MP:.*]] = arith.muli %[[P]], %[[CM1]] : i64
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    %[[SP1:.*]] = arith.addi %[[S]], %[[C1]] : i64
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : i64
// CHECK-NEXT:    %[[HALF:.*]] = arith.floordivsi %[[SP1]], %[[C2]] : i64
// CHECK-NEXT:    %[[MHALF:.*]] = arith.muli %[[HALF]], %[[CM1]] : i64
// CHECK-NEXT:    %[[SUM:.*]] = arith.addi %[[MP]], %[[MHALF]] : i64
// CHECK-NEXT:    %[[C8:.*]] = arith.constant 8 : i64
// CHECK-NEXT:    %[[SLACK:.*]] = arith.addi %[[SUM]], %[[C8]] : i64
// CHECK-NEXT:    %[[HOLDS1:.*]] = arith.cmpi sge, %[[SLACK]], %[[C0]] : i64
// CHECK-NEXT:    %[[OK1:.*]] = arith.andi %[[OK0]], %[[HOLDS1]] : i1
// CHECK-NEXT:    %[[FAIL1:.*]] = arith.xori %[[OK0]], %[[OK1]] : i1
// CHECK-NEXT:    scf.if %[[FAIL1]] {
// CHECK-NEXT:      %[[MSG1:.*]] = llvm.mlir.addressof @assertions.check3 : !llvm.ptr
// CHECK-NEXT:      llvm.call @tract_set_error(%[[MSG1]], %[[P]], %[[S]])
// CHECK-NEXT:    }
// CHECK-NEXT:    cf.cond_br %[[OK1]]
// LLVM-LABEL: llvm.func @assertions(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized|memrefCopy}}
module attributes {tract.symbols = ["S", "P", "T"], tract.assertions = ["S >= 1", "(S+1)/2 + P <= 8", "T < 4"]} {
  func.func @assertions(%arg0: tensor<?xf32, #tract.dims<[S]>> {tract.name = "s"}, %arg1: tensor<?xf32, #tract.dims<[P]>> {tract.name = "p"}) -> tensor<?xf32, #tract.dims<[S]>> {
    return %arg0 : tensor<?xf32, #tract.dims<[S]>>
  }
}

// -----

// Nothing to check: the body runs, status 0.
// CHECK-NOT:   tract_set_error
// CHECK-LABEL: func.func @no_inputs() -> (tensor<?xf32>, i32)
// CHECK-NEXT:    %[[Y:.*]] = call @no_inputs.body() : () -> tensor<2xf32>
// CHECK-NEXT:    %[[CAST:.*]] = tensor.cast %[[Y]] : tensor<2xf32> to tensor<?xf32>
// CHECK-NEXT:    %[[OK:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    return %[[CAST]], %[[OK]] : tensor<?xf32>, i32
// LLVM-LABEL: llvm.func @no_inputs(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized|memrefCopy}}
module {
  func.func @no_inputs() -> tensor<2xf32> {
    %0 = tract.const dense<1.0> : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}

// -----

// A body that checks an If branch's assertions calls tract_fail; the entry
// returns what tract_take_failure says as its status.
// CHECK-LABEL: func.func @body_checks(
// CHECK:         %[[Y:.*]] = call @body_checks.body(
// CHECK:         %[[STATUS:.*]] = llvm.call @tract_take_failure() : () -> i32
// CHECK-NEXT:    return %{{.*}}, %[[STATUS]] : tensor<?xf32>, i32
// LLVM-LABEL: llvm.func @body_checks(
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized|memrefCopy}}
module attributes {tract.symbols = ["S"]} {
  func.func @body_checks(%c: tensor<1xi1>, %x: tensor<?xf32, #tract.dims<[S]>>) -> tensor<1xf32> {
    %r = tract.if %c : tensor<1xi1> -> tensor<1xf32> {
      %s = tract.slice %x {axis = 0 : i64, start = #tract.dim<0>, end = #tract.dim<1>} : tensor<?xf32, #tract.dims<[S]>> -> tensor<1xf32>
      tract.yield %s : tensor<1xf32>
    } else {
      %z = tract.const dense<0.0> : tensor<1xf32>
      tract.yield %z : tensor<1xf32>
    } {else_assertions = ["S >= 2"]}
    return %r : tensor<1xf32>
  }
}

// -----

// With scenarios, the inputs must fit one of them (the assertions of each
// hold): a disjunction, checked after the model's assertions.
// CHECK:       llvm.mlir.global internal constant @scenarios.check1("the inputs fit none of the model's scenarios pp (S >= 2, S <= 512), tg (S == 1) (S=%lld)\00")
// CHECK-LABEL: func.func @scenarios(
// CHECK:         %[[SI:.*]] = tensor.dim
// CHECK-NEXT:    %[[S:.*]] = arith.index_cast %[[SI]] : index to i64
// CHECK:         %[[OKS:.*]] = arith.cmpi sle, %[[S]], %{{.*}} : i64
// CHECK:         scf.if
// CHECK:         %[[CM2:.*]] = arith.constant -2 : i64
// CHECK-NEXT:    %[[SM2:.*]] = arith.addi %[[S]], %[[CM2]] : i64
// CHECK-NEXT:    %[[GE2:.*]] = arith.cmpi sge, %[[SM2]], %{{.*}} : i64
// CHECK:         %[[LE512:.*]] = arith.cmpi sge, %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:    %[[PP:.*]] = arith.andi %[[GE2]], %[[LE512]] : i1
// CHECK:         %[[TG:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK-NEXT:    %[[ONE:.*]] = arith.ori %[[PP]], %[[TG]] : i1
// CHECK-NEXT:    %[[OK:.*]] = arith.andi %[[OKS]], %[[ONE]] : i1
// CHECK:         llvm.mlir.addressof @scenarios.check1
// CHECK:         cf.cond_br %[[OK]]
module attributes {tract.symbols = ["S"], tract.scenarios = {tg = ["S == 1"], pp = ["S >= 2", "S <= 512"]}} {
  func.func @scenarios(%x: tensor<?xf32, #tract.dims<[S]>> {tract.name = "x"}) -> tensor<?xf32, #tract.dims<[S]>> {
    return %x : tensor<?xf32, #tract.dims<[S]>>
  }
}

// -----

// A result that could be larger than every input ('outer', S,S from inputs
// of S) has its size checked against the runtime's tract_memory_limit;
// 'small' is no larger than input a, so it is not. 4*S*S could wrap for S
// under the ceiling: it is computed with 128-bit products, and a wrap is
// its own message, before the size's.
// CHECK:       llvm.mlir.global internal constant @sizes.check4("the size of 'outer''s result overflows 64-bit integers (S=%lld)\00")
// CHECK:       llvm.mlir.global internal constant @sizes.check5("'outer' would have a result of 4*S*S = %lld bytes (S,S of f32), more than the %lld a tensor may take here (S=%lld)\00")
// CHECK-NOT:   llvm.mlir.global
// CHECK-LABEL: func.func @sizes(
// CHECK:         %[[SI:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x?xf32>
// CHECK-NEXT:    %[[S:.*]] = arith.index_cast %[[SI]] : index to i64
// CHECK:         llvm.mlir.addressof @sizes.check3
// CHECK:         }
// CHECK-NEXT:    %[[LOW:.*]], %[[HIGH:.*]] = arith.mulsi_extended %[[S]], %[[S]] : i64
// CHECK-NEXT:    %[[C63:.*]] = arith.constant 63 : i64
// CHECK-NEXT:    %[[SIGN:.*]] = arith.shrsi %[[LOW]], %[[C63]] : i64
// CHECK-NEXT:    %[[WRAP0:.*]] = arith.cmpi ne, %[[HIGH]], %[[SIGN]] : i64
// CHECK:         %[[LOW1:.*]], %[[HIGH1:.*]] = arith.mulsi_extended
// CHECK-NEXT:    %[[SIGN1:.*]] = arith.shrsi %[[LOW1]], %[[C63]] : i64
// CHECK-NEXT:    %[[WRAP1:.*]] = arith.cmpi ne, %[[HIGH1]], %[[SIGN1]] : i64
// CHECK-NEXT:    %[[WRAP:.*]] = arith.ori %[[WRAP0]], %[[WRAP1]] : i1
// CHECK-NEXT:    %[[NOWRAP:.*]] = arith.xori %[[WRAP]], %{{.*}} : i1
// CHECK:         llvm.mlir.addressof @sizes.check4
// CHECK:         %[[LIMIT:.*]] = llvm.call @tract_memory_limit() : () -> i64
// CHECK-NEXT:    %[[FITS:.*]] = arith.cmpi sle, %[[LOW1]], %[[LIMIT]] : i64
// CHECK:         llvm.mlir.addressof @sizes.check5
// CHECK:         cf.cond_br
// LLVM-LABEL: llvm.func @sizes(
// LLVM:         llvm.call @tract_memory_limit()
// LLVM-NOT: {{= tract\.|linalg\.|tensor\.|memref\.|scf\.|unrealized|memrefCopy}}
module attributes {tract.symbols = ["S"]} {
  func.func @sizes(%a: tensor<?x1xf32, #tract.dims<[S]>> {tract.name = "a"}, %b: tensor<1x?xf32, #tract.dims<[S]>> {tract.name = "b"}) -> tensor<?x?xf32, #tract.dims<[S,S]>> {
    %0 = tract.exp %a : tensor<?x1xf32, #tract.dims<[S]>> loc("small")
    %1 = tract.add %0, %b : (tensor<?x1xf32, #tract.dims<[S]>>, tensor<1x?xf32, #tract.dims<[S]>>) -> tensor<?x?xf32, #tract.dims<[S,S]>> loc("outer")
    return %1 : tensor<?x?xf32, #tract.dims<[S,S]>>
  }
}
