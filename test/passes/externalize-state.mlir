// RUN: tract-opt %s -split-input-file --tract-externalize-state | FileCheck %s

// A delay keeps its last frames; a pulse_pad selects by the positions of
// the frames, with the stream length as an input.
module attributes {tract.symbols = ["S"]} {
  func.func @main(%x: tensor<2x4xf32> {tract.name = "x"}) -> (tensor<2x6xf32> {tract.name = "y"}) {
    %0 = tract.delay %x {axis = 1 : i64, delay = 1 : i64} : tensor<2x4xf32> -> tensor<2x4xf32>
    %1 = tract.pulse_pad %0 {after = #tract.dim<1>, axis = 1 : i64, before = 1 : i64, begin_input = 1 : i64, end_input = #tract.dim<S/2+1>, value = 7.0 : f32} : tensor<2x4xf32> -> tensor<2x4xf32>
    %2 = tract.delay %1 {axis = 1 : i64, delay = 0 : i64, overlap = 2 : i64} : tensor<2x4xf32> -> tensor<2x6xf32>
    return %2 : tensor<2x6xf32>
  }
}

// CHECK-LABEL: module attributes {tract.symbols = ["S"]} {
// CHECK-NEXT: func.func @main(%arg0: tensor<2x4xf32> {tract.name = "x"}, %arg1: tensor<i64> {tract.name = "S", tract.symbol = "S"}, %arg2: tensor<i64> {tract.name = "pulse_step", tract.state}, %arg3: tensor<2x1xf32> {tract.name = "delay_0", tract.state}, %arg4: tensor<2x2xf32> {tract.name = "delay_1", tract.state}) -> (tensor<2x6xf32> {tract.name = "y"}, tensor<i64> {tract.name = "pulse_step", tract.state}, tensor<2x1xf32> {tract.name = "delay_0", tract.state}, tensor<2x2xf32> {tract.name = "delay_1", tract.state}) {
// CHECK-NEXT: %0 = tract.const dense<1> : tensor<i64>
// CHECK-NEXT: %1 = tract.add %arg2, %0 : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK-NEXT: %2 = tract.concat %arg3, %arg0 {axis = 1 : i64} : (tensor<2x1xf32>, tensor<2x4xf32>) -> tensor<2x5xf32>
// CHECK-NEXT: %3 = tract.slice %2 {axis = 1 : i64, end = #tract.dim<4>, start = #tract.dim<0>} : tensor<2x5xf32> -> tensor<2x4xf32>
// CHECK-NEXT: %4 = tract.slice %2 {axis = 1 : i64, end = #tract.dim<5>, start = #tract.dim<4>} : tensor<2x5xf32> -> tensor<2x1xf32>
// CHECK-NEXT: %5 = tract.const dense<{{\[\[}}0, 1, 2, 3{{\]\]}}> : tensor<1x4xi64>
// CHECK-NEXT: %6 = tract.add_axis %arg2 {axis = 0 : i64} : tensor<i64> -> tensor<1xi64>
// CHECK-NEXT: %7 = tract.add_axis %6 {axis = 0 : i64} : tensor<1xi64> -> tensor<1x1xi64>
// CHECK-NEXT: %8 = tract.const dense<4> : tensor<1x1xi64>
// CHECK-NEXT: %9 = tract.mul %7, %8 : (tensor<1x1xi64>, tensor<1x1xi64>) -> tensor<1x1xi64>
// CHECK-NEXT: %10 = tract.add %9, %5 : (tensor<1x1xi64>, tensor<1x4xi64>) -> tensor<1x4xi64>
// CHECK-NEXT: %11 = tract.const dense<2> : tensor<i64>
// CHECK-NEXT: %12 = tract.div %arg1, %11 : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK-NEXT: %13 = tract.rem %arg1, %11 : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK-NEXT: %14 = tract.const dense<0> : tensor<i64>
// CHECK-NEXT: %15 = tract.lt %13, %14 : (tensor<i64>, tensor<i64>) -> tensor<i1>
// CHECK-NEXT: %16 = tract.cast %15 : tensor<i1> to tensor<i64>
// CHECK-NEXT: %17 = tract.sub %12, %16 : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK-NEXT: %18 = tract.const dense<1> : tensor<i64>
// CHECK-NEXT: %19 = tract.add %17, %18 : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK-NEXT: %20 = tract.const dense<1> : tensor<1x1xi64>
// CHECK-NEXT: %21 = tract.ge %10, %20 : (tensor<1x4xi64>, tensor<1x1xi64>) -> tensor<1x4xi1>
// CHECK-NEXT: %22 = tract.add_axis %19 {axis = 0 : i64} : tensor<i64> -> tensor<1xi64>
// CHECK-NEXT: %23 = tract.add_axis %22 {axis = 0 : i64} : tensor<1xi64> -> tensor<1x1xi64>
// CHECK-NEXT: %24 = tract.lt %10, %23 : (tensor<1x4xi64>, tensor<1x1xi64>) -> tensor<1x4xi1>
// CHECK-NEXT: %25 = tract.and %21, %24 : (tensor<1x4xi1>, tensor<1x4xi1>) -> tensor<1x4xi1>
// CHECK-NEXT: %26 = tract.const dense<7.000000e+00> : tensor<1x1xf32>
// CHECK-NEXT: %27 = tract.select %25, %3, %26 : (tensor<1x4xi1>, tensor<2x4xf32>, tensor<1x1xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %28 = tract.concat %arg4, %27 {axis = 1 : i64} : (tensor<2x2xf32>, tensor<2x4xf32>) -> tensor<2x6xf32>
// CHECK-NEXT: %29 = tract.slice %28 {axis = 1 : i64, end = #tract.dim<6>, start = #tract.dim<0>} : tensor<2x6xf32> -> tensor<2x6xf32>
// CHECK-NEXT: %30 = tract.slice %28 {axis = 1 : i64, end = #tract.dim<6>, start = #tract.dim<4>} : tensor<2x6xf32> -> tensor<2x2xf32>
// CHECK-NEXT: return %29, %1, %4, %30 : tensor<2x6xf32>, tensor<i64>, tensor<2x1xf32>, tensor<2x2xf32>

// -----

// A scan carried across pulses: its initial state on the first call, the
// previous call's after; the frames before the skip keep the state.
module attributes {tract.symbols = ["S"]} {
  func.func @main(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
    %h0 = tract.const dense<1.0> : tensor<1x2xf32>
    %1:2 = tract.scan %h0, %x attributes {num_states = 1 : i64, output_axes = array<i64: 0>, pulse.skip = 1 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>} {
    ^bb0(%h: tensor<1x2xf32>, %c: tensor<1x2xf32>):
      %n = tract.add %h, %c : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
      tract.yield %n, %n : tensor<1x2xf32>, tensor<1x2xf32>
    } : (tensor<1x2xf32>, tensor<4x2xf32>) -> (tensor<1x2xf32>, tensor<4x2xf32>)
    return %1#1 : tensor<4x2xf32>
  }
}

// CHECK-LABEL: module attributes {tract.symbols = ["S"]} {
// CHECK-NEXT: func.func @main(%arg0: tensor<4x2xf32>, %arg1: tensor<i64> {tract.name = "pulse_step", tract.state}, %arg2: tensor<1x2xf32> {tract.name = "scan_0", tract.state}) -> (tensor<4x2xf32>, tensor<i64> {tract.name = "pulse_step", tract.state}, tensor<1x2xf32> {tract.name = "scan_0", tract.state}) {
// CHECK-NEXT: %0 = tract.const dense<1> : tensor<i64>
// CHECK-NEXT: %1 = tract.add %arg1, %0 : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK-NEXT: %2 = tract.const dense<1.000000e+00> : tensor<1x2xf32>
// CHECK-NEXT: %3 = tract.const dense<0> : tensor<i64>
// CHECK-NEXT: %4 = tract.eq %arg1, %3 : (tensor<i64>, tensor<i64>) -> tensor<i1>
// CHECK-NEXT: %5 = tract.add_axis %4 {axis = 0 : i64} : tensor<i1> -> tensor<1xi1>
// CHECK-NEXT: %6 = tract.add_axis %5 {axis = 0 : i64} : tensor<1xi1> -> tensor<1x1xi1>
// CHECK-NEXT: %7 = tract.select %6, %2, %arg2 : (tensor<1x1xi1>, tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
// CHECK-NEXT: %8 = tract.const dense<[0, 1, 2, 3]> : tensor<4xi64>
// CHECK-NEXT: %9 = tract.add_axis %arg1 {axis = 0 : i64} : tensor<i64> -> tensor<1xi64>
// CHECK-NEXT: %10 = tract.const dense<4> : tensor<1xi64>
// CHECK-NEXT: %11 = tract.mul %9, %10 : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
// CHECK-NEXT: %12 = tract.add %11, %8 : (tensor<1xi64>, tensor<4xi64>) -> tensor<4xi64>
// CHECK-NEXT: %13:2 = tract.scan %7, %arg0, %12 attributes {num_states = 1 : i64, output_axes = array<i64: 0>, scan_axes = array<i64: 0, 0>, scan_chunks = array<i64: 1, 1>} {
// CHECK-NEXT: ^bb0(%arg3: tensor<1x2xf32>, %arg4: tensor<1x2xf32>, %arg5: tensor<1xi64>):
// CHECK-NEXT: %14 = tract.add %arg3, %arg4 : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
// CHECK-NEXT: %15 = tract.const dense<1> : tensor<1xi64>
// CHECK-NEXT: %16 = tract.ge %arg5, %15 : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi1>
// CHECK-NEXT: %17 = tract.add_axis %16 {axis = 0 : i64} : tensor<1xi1> -> tensor<1x1xi1>
// CHECK-NEXT: %18 = tract.select %17, %14, %arg3 : (tensor<1x1xi1>, tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
// CHECK-NEXT: tract.yield %18, %14 : tensor<1x2xf32>, tensor<1x2xf32>
// CHECK-NEXT: } : (tensor<1x2xf32>, tensor<4x2xf32>, tensor<4xi64>) -> (tensor<1x2xf32>, tensor<4x2xf32>)
// CHECK-NEXT: return %13#1, %1, %13#0 : tensor<4x2xf32>, tensor<i64>, tensor<1x2xf32>

// -----

// Without state, nothing changes.
module {
  func.func @main(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
    return %x : tensor<4x2xf32>
  }
}

// CHECK-LABEL: module {
// CHECK-NEXT: func.func @main(%arg0: tensor<4x2xf32>) -> tensor<4x2xf32> {
// CHECK-NEXT: return %arg0 : tensor<4x2xf32>
