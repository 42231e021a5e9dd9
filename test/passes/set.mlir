// RUN: tract-opt %s -split-input-file -verify-diagnostics '--tract-set=S=3 T=2*U+1' | FileCheck %s
// RUN: tract-opt %s -split-input-file -verify-diagnostics '--pass-pipeline=builtin.module(tract-set{values=S=3,T=2*U+1})' | FileCheck %s
// RUN: not tract-opt %s -split-input-file '--tract-set=S=-1' 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not tract-opt %s -split-input-file '--tract-set=S' 2>&1 | FileCheck %s --check-prefix=MALFORMED
// RUN: not tract-opt %s -split-input-file '--tract-set=S=3,S=4' 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not tract-opt %s -split-input-file '--tract-set=S=3/T' 2>&1 | FileCheck %s --check-prefix=UNPARSED

// NEGATIVE: error: tract-set: S is a dimension and cannot be -1
// MALFORMED: error: tract-set expects NAME=EXPR, got 'S'
// TWICE: error: tract-set: S is set twice
// UNPARSED: error: tract-set: cannot parse the value of S: expected a positive constant divisor at column 3 in '3/T'

// Set symbols become constants: types turn static, dim and shape attributes
// follow, the shape arithmetic folds, the assertions that now hold go.
// CHECK-LABEL: module attributes
// CHECK-SAME: tract.assertions = ["P+3 < 4096"]
// CHECK-SAME: tract.symbols = ["P"]
// CHECK: func.func @static(%[[X:.*]]: tensor<1x3x8xf32>, %[[Y:.*]]: tensor<1x?x8xf32, #tract.dims<[P]>>) -> (tensor<1x?x8xf32, #tract.dims<[P+4]>>, tensor<3xi64>)
// CHECK-NEXT: %[[SHAPE:.*]] = tract.const dense<[1, 3, 8]> : tensor<3xi64>
// CHECK-NEXT: %[[SLICE:.*]] = tract.slice %[[X]] {axis = 1 : i64, end = #tract.dim<2>, start = #tract.dim<1>} : tensor<1x3x8xf32> -> tensor<1x1x8xf32>
// CHECK-NEXT: %[[CAT:.*]] = tract.concat %[[X]], %[[SLICE]], %[[Y]] {axis = 1 : i64} : (tensor<1x3x8xf32>, tensor<1x1x8xf32>, tensor<1x?x8xf32, #tract.dims<[P]>>) -> tensor<1x?x8xf32, #tract.dims<[P+4]>>
// CHECK-NEXT: return %[[CAT]], %[[SHAPE]]
module attributes {tract.symbols = ["S", "P", "T"], tract.assertions = ["S >= 1", "S+P < 4096"]} {
  func.func @static(%x: tensor<1x?x8xf32, #tract.dims<[S]>>, %y: tensor<1x?x8xf32, #tract.dims<[P]>>) -> (tensor<1x?x8xf32, #tract.dims<[P+2*S-2]>>, tensor<3xi64>) {
    %0 = tract.slice %x {axis = 1 : i64, start = #tract.dim<1>, end = #tract.dim<S-1>} : tensor<1x?x8xf32, #tract.dims<[S]>> -> tensor<1x?x8xf32, #tract.dims<[S-2]>>
    %1 = tract.concat %x, %0, %y {axis = 1 : i64} : (tensor<1x?x8xf32, #tract.dims<[S]>>, tensor<1x?x8xf32, #tract.dims<[S-2]>>, tensor<1x?x8xf32, #tract.dims<[P]>>) -> tensor<1x?x8xf32, #tract.dims<[P+2*S-2]>>
    %2 = tract.shape_of %x : tensor<1x?x8xf32, #tract.dims<[S]>> -> tensor<3xi64>
    return %1, %2 : tensor<1x?x8xf32, #tract.dims<[P+2*S-2]>>, tensor<3xi64>
  }
}

// -----

// An expression brings its symbols in; set symbols are replaced all at once.
// CHECK-LABEL: module attributes
// CHECK-SAME: tract.scenarios = {big = ["2*U+1 >= 17"]}
// CHECK-SAME: tract.symbols = ["U"]
// CHECK: func.func @expression(%{{.*}}: tensor<?x4xf32, #tract.dims<[2*U+1]>>) -> tensor<?x4xf32, #tract.dims<[2*U+1]>>
// CHECK-NEXT: tract.reshape %{{.*}} {at = 0 : i64, count = 2 : i64, to = #tract.shape<[8*U+4]>} : tensor<?x4xf32, #tract.dims<[2*U+1]>> -> tensor<?xf32, #tract.dims<[8*U+4]>>
// CHECK-NEXT: tract.reshape %{{.*}} {at = 0 : i64, count = 1 : i64, to = #tract.shape<[2*U+1, 4]>} : tensor<?xf32, #tract.dims<[8*U+4]>> -> tensor<?x4xf32, #tract.dims<[2*U+1]>>
module attributes {tract.symbols = ["S", "T"], tract.assertions = ["T >= 1"], tract.scenarios = {big = ["T >= 17"]}} {
  func.func @expression(%x: tensor<?x4xf32, #tract.dims<[T]>>) -> tensor<?x4xf32, #tract.dims<[T]>> {
    %0 = tract.reshape %x {at = 0 : i64, count = 2 : i64, to = #tract.shape<[4*T]>} : tensor<?x4xf32, #tract.dims<[T]>> -> tensor<?xf32, #tract.dims<[4*T]>>
    %1 = tract.reshape %0 {at = 0 : i64, count = 1 : i64, to = #tract.shape<[T, 4]>} : tensor<?xf32, #tract.dims<[4*T]>> -> tensor<?x4xf32, #tract.dims<[T]>>
    return %1 : tensor<?x4xf32, #tract.dims<[T]>>
  }
}

// -----

// A symbolic broadcast is decided once a side is known.
// CHECK-LABEL: module attributes {tract.symbols = ["P"]}
// CHECK: func.func @broadcast(%{{.*}}: tensor<3xf32>, %{{.*}}: tensor<?xf32, #tract.dims<[P]>>) -> tensor<3xf32>
// CHECK-NEXT: tract.add %{{.*}}, %{{.*}} : (tensor<3xf32>, tensor<?xf32, #tract.dims<[P]>>) -> tensor<3xf32>
module attributes {tract.symbols = ["S", "P", "T"]} {
  func.func @broadcast(%x: tensor<?xf32, #tract.dims<[S]>>, %y: tensor<?xf32, #tract.dims<[P]>>) -> tensor<?xf32, #tract.dims<["P#S"]>> {
    %0 = tract.add %x, %y : (tensor<?xf32, #tract.dims<[S]>>, tensor<?xf32, #tract.dims<[P]>>) -> tensor<?xf32, #tract.dims<["P#S"]>>
    return %0 : tensor<?xf32, #tract.dims<["P#S"]>>
  }
}

// -----

// A scenario that cannot happen any more is dropped.
// CHECK-LABEL: module attributes
// CHECK-SAME: tract.scenarios = {pp = []}, tract.symbols = []
// CHECK: func.func @scenarios(%{{.*}}: tensor<3xf32>) -> tensor<3xf32>
// expected-warning @+1 {{scenario 'tg' cannot happen with S=3, T=2*U+1 (S == 1): it is dropped}}
module attributes {tract.symbols = ["S", "T"], tract.scenarios = {tg = ["S == 1"], pp = ["S >= 2"]}} {
  func.func @scenarios(%x: tensor<?xf32, #tract.dims<[S]>>) -> tensor<?xf32, #tract.dims<[S]>> {
    return %x : tensor<?xf32, #tract.dims<[S]>>
  }
}

// -----

// A model without the symbol: nothing to set, which is an error.
// expected-error @+1 {{tract-set: the model has no symbol 'S'}}
module attributes {tract.symbols = ["P", "T"]} {
  func.func @unknown(%x: tensor<?xf32, #tract.dims<[P]>>) -> tensor<?xf32, #tract.dims<[P]>> {
    return %x : tensor<?xf32, #tract.dims<[P]>>
  }
}

// -----

// expected-error @+1 {{the model's assertion S >= 4 does not hold with S=3, T=2*U+1 (it becomes 3 >= 4)}}
module attributes {tract.symbols = ["S", "T"], tract.assertions = ["S >= 4"]} {
  func.func @violated(%x: tensor<?xf32, #tract.dims<[S]>>) -> tensor<?xf32, #tract.dims<[S]>> {
    return %x : tensor<?xf32, #tract.dims<[S]>>
  }
}

// -----

// Symbols are non-negative, so P+3 < 2 is false whatever P is.
// expected-error @+1 {{the model's assertion S+P < 2 does not hold with S=3, T=2*U+1 (it becomes P+3 < 2)}}
module attributes {tract.symbols = ["S", "P", "T"], tract.assertions = ["S+P < 2"]} {
  func.func @refuted(%x: tensor<?xf32, #tract.dims<[P]>>) -> tensor<?xf32, #tract.dims<[P]>> {
    return %x : tensor<?xf32, #tract.dims<[P]>>
  }
}

// -----

// Setting S decides a broadcast that cannot hold: the op says so.
module attributes {tract.symbols = ["S", "T"]} {
  func.func @contradiction(%x: tensor<?xf32, #tract.dims<[S]>>, %y: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{dims 3 and 4 on axis 0 do not broadcast}}
    %0 = tract.add %x, %y : (tensor<?xf32, #tract.dims<[S]>>, tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
