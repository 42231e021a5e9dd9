// RUN: tract-opt --tract-bind-symbols --split-input-file --verify-diagnostics %s | FileCheck %s
// RUN: tract-opt --tract-bind-symbols --tract-lower-to-linalg --split-input-file --verify-diagnostics %s | FileCheck %s --check-prefix=LOWERED

// A dim that is a symbol binds it; `2*P+1` binds P once S is bound.
// CHECK-LABEL: func.func @inputs(
// CHECK-SAME:    %[[X:.*]]: tensor<?x4xf32, #tract.dims<[S]>>, %[[Y:.*]]: tensor<?xf32, #tract.dims<[2*P+1]>>)
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[S:.*]] = tensor.dim %[[X]], %[[C0]]
// CHECK-NEXT:    tract.bind_symbol "S" = %[[S]]
// CHECK-NEXT:    %[[C0B:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[D:.*]] = tensor.dim %[[Y]], %[[C0B]]
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[D1:.*]] = arith.subi %[[D]], %[[C1]] : index
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[P:.*]] = arith.floordivsi %[[D1]], %[[C2]] : index
// CHECK-NEXT:    tract.bind_symbol "P" = %[[P]]
// CHECK-NEXT:    tract.add_axis
// The lowering sizes from the bindings, then erases them.
// LOWERED-LABEL: func.func @inputs(
// LOWERED-NOT:   tract.bind_symbol
// LOWERED:       tensor.expand_shape
// LOWERED-NOT:   tract.bind_symbol
// LOWERED:       return
module attributes {tract.symbols = ["S", "P"]} {
  func.func @inputs(%arg0: tensor<?x4xf32, #tract.dims<[S]>>, %arg1: tensor<?xf32, #tract.dims<[2*P+1]>>) -> tensor<?x1x4xf32, #tract.dims<[S]>> {
    %0 = tract.add_axis %arg0 {axis = 1 : i64} : tensor<?x4xf32, #tract.dims<[S]>> -> tensor<?x1x4xf32, #tract.dims<[S]>>
    return %0 : tensor<?x1x4xf32, #tract.dims<[S]>>
  }
}

// -----

// Bound once: binding again (as tract-lower-to-linalg does for a function
// it finds unbound) adds nothing.
// CHECK-LABEL: func.func @bound(
// CHECK:         tract.bind_symbol "S"
// CHECK-NOT:     tract.bind_symbol
// CHECK:         return
module attributes {tract.symbols = ["S"]} {
  func.func @bound(%arg0: tensor<?xf32, #tract.dims<[S]>>) -> tensor<?xf32, #tract.dims<[S]>> {
    %c0 = arith.constant 0 : index
    %dim = tensor.dim %arg0, %c0 : tensor<?xf32, #tract.dims<[S]>>
    tract.bind_symbol "S" = %dim
    return %arg0 : tensor<?xf32, #tract.dims<[S]>>
  }
}

// -----

// A symbol that only a result's type uses is an error naming it.
module attributes {tract.symbols = ["N"]} {
  // expected-error @+1 {{symbol N is not determined by the dims of the inputs; give its value with --set N=N}}
  func.func @unbound(%arg0: tensor<1xf32>) -> tensor<?xf32, #tract.dims<[N]>> {
    %0 = tract.broadcast %arg0 {shape = #tract.shape<[N]>} : tensor<1xf32> -> tensor<?xf32, #tract.dims<[N]>>
    return %0 : tensor<?xf32, #tract.dims<[N]>>
  }
}
