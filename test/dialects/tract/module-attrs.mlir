// RUN: tract-opt %s -split-input-file | FileCheck %s
// RUN: tract-opt %s -split-input-file | tract-opt -split-input-file | FileCheck %s

// The symbol table, assertions, scenarios and properties round-trip.
// CHECK: module attributes {tract.assertions = ["S >= 1", "S+P < 4096"], tract.properties = {name = "vad", version = 5 : i64}, tract.scenarios = {pp = ["P == 0"], tg = ["S == 1"]}, tract.symbols = ["S", "P"]}
module attributes {tract.symbols = ["S", "P"], tract.assertions = ["S >= 1", "S+P < 4096"], tract.scenarios = {tg = ["S == 1"], pp = ["P == 0"]}, tract.properties = {name = "vad", version = 5 : i64}} {
  func.func @main(%k: tensor<1x?x64xf32, #tract.dims<[S+P]>>) -> tensor<1x?x64xf32, #tract.dims<[S+P]>> {
    return %k : tensor<1x?x64xf32, #tract.dims<[S+P]>>
  }
}
