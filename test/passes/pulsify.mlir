// RUN: tract-opt %s -split-input-file --tract-pulsify="symbol=S pulse=4" | FileCheck %s

// Element-wise ops keep the pulse; properties record the delays.
module attributes {tract.symbols = ["S"]} {
  func.func @main(%x: tensor<1x?x3xf32, #tract.dims<[S]>>) -> tensor<1x?x3xf32, #tract.dims<[S]>> {
    %c = tract.const dense<1.0> : tensor<1x1x3xf32>
    %0 = tract.tanh %x : tensor<1x?x3xf32, #tract.dims<[S]>>
    %1 = tract.add %0, %c : (tensor<1x?x3xf32, #tract.dims<[S]>>, tensor<1x1x3xf32>) -> tensor<1x?x3xf32, #tract.dims<[S]>>
    return %1 : tensor<1x?x3xf32, #tract.dims<[S]>>
  }
}

// CHECK-LABEL: module attributes {tract.properties = {pulse.delay = [0], pulse.input_axes = [1], pulse.output_axes = [1], pulse.output_lengths = ["S"], pulse.pulse = 4 : i64, pulse.symbol = "S"}, tract.symbols = ["S"]} {
// CHECK-NEXT: func.func @main(%arg0: tensor<1x4x3xf32>) -> tensor<1x4x3xf32> {
// CHECK-NEXT: %0 = tract.const dense<1.000000e+00> : tensor<1x1x3xf32>
// CHECK-NEXT: %1 = tract.tanh %arg0 : tensor<1x4x3xf32>
// CHECK-NEXT: %2 = tract.add %1, %0 : (tensor<1x4x3xf32>, tensor<1x1x3xf32>) -> tensor<1x4x3xf32>
// CHECK-NEXT: return %2 : tensor<1x4x3xf32>

// -----

// A convolution with stride 2 and padding over the stream: the padding
// becomes a pulse_pad after one frame of delay, the kernel's reach an
// overlap of 2 frames.
module attributes {tract.symbols = ["S"]} {
  func.func @main(%x: tensor<1x2x?xf32, #tract.dims<[S]>>) -> tensor<1x3x?xf32, #tract.dims<[(S+1)/2]>> {
    %k = tract.const dense<1.0> : tensor<3x2x3xf32>
    %0 = tract.conv %x, %k {strides = array<i64: 2>, padding = #tract<padding explicit>, pads_before = array<i64: 1>, pads_after = array<i64: 1>} : (tensor<1x2x?xf32, #tract.dims<[S]>>, tensor<3x2x3xf32>) -> tensor<1x3x?xf32, #tract.dims<[(S+1)/2]>>
    return %0 : tensor<1x3x?xf32, #tract.dims<[(S+1)/2]>>
  }
}

// CHECK-LABEL: module attributes {tract.properties = {pulse.delay = [1], pulse.input_axes = [2], pulse.output_axes = [2], pulse.output_lengths = ["(S+1)/2"], pulse.pulse = 4 : i64, pulse.symbol = "S"}, tract.symbols = ["S"]} {
// CHECK-NEXT: func.func @main(%arg0: tensor<1x2x4xf32>) -> tensor<1x3x2xf32> {
// CHECK-NEXT: %0 = tract.const dense<1.000000e+00> : tensor<3x2x3xf32>
// CHECK-NEXT: %1 = tract.delay %arg0 {axis = 2 : i64, delay = 1 : i64} : tensor<1x2x4xf32> -> tensor<1x2x4xf32>
// CHECK-NEXT: %2 = tract.pulse_pad %1 {after = #tract.dim<1>, axis = 2 : i64, before = 1 : i64, begin_input = 1 : i64, end_input = #tract.dim<S+1>, value = 0.000000e+00 : f32} : tensor<1x2x4xf32> -> tensor<1x2x4xf32>
// CHECK-NEXT: %3 = tract.delay %2 {axis = 2 : i64, delay = 0 : i64, overlap = 2 : i64} : tensor<1x2x4xf32> -> tensor<1x2x6xf32>
// CHECK-NEXT: %4 = tract.conv %3, %0 {strides = array<i64: 2>} : (tensor<1x2x6xf32>, tensor<3x2x3xf32>) -> tensor<1x3x2xf32>
// CHECK-NEXT: return %4 : tensor<1x3x2xf32>

// -----

// A dilated convolution without padding: overlap (k-1)*d = 4, delay 4.
module attributes {tract.symbols = ["S"]} {
  func.func @main(%x: tensor<1x1x?xf32, #tract.dims<[S]>>) -> tensor<1x1x?xf32, #tract.dims<[S-4]>> {
    %k = tract.const dense<1.0> : tensor<1x1x3xf32>
    %0 = tract.conv %x, %k {dilations = array<i64: 2>} : (tensor<1x1x?xf32, #tract.dims<[S]>>, tensor<1x1x3xf32>) -> tensor<1x1x?xf32, #tract.dims<[S-4]>>
    return %0 : tensor<1x1x?xf32, #tract.dims<[S-4]>>
  }
}

// CHECK-LABEL: module attributes {tract.properties = {pulse.delay = [4], pulse.input_axes = [2], pulse.output_axes = [2], pulse.output_lengths = ["S-4"], pulse.pulse = 4 : i64, pulse.symbol = "S"}, tract.symbols = ["S"]} {
// CHECK-NEXT: func.func @main(%arg0: tensor<1x1x4xf32>) -> tensor<1x1x4xf32> {
// CHECK-NEXT: %0 = tract.const dense<1.000000e+00> : tensor<1x1x3xf32>
// CHECK-NEXT: %1 = tract.delay %arg0 {axis = 2 : i64, delay = 0 : i64, overlap = 4 : i64} : tensor<1x1x4xf32> -> tensor<1x1x8xf32>
// CHECK-NEXT: %2 = tract.conv %1, %0 {dilations = array<i64: 2>} : (tensor<1x1x8xf32>, tensor<1x1x3xf32>) -> tensor<1x1x4xf32>
// CHECK-NEXT: return %2 : tensor<1x1x4xf32>

// -----

// Max pooling pads with minus infinity; a stride 2 after an odd delay
// needs one more frame of delay (the skew) to start on a window boundary.
module attributes {tract.symbols = ["S"]} {
  func.func @main(%x: tensor<1x1x?xf32, #tract.dims<[S]>>) -> tensor<1x1x?xf32, #tract.dims<[(S-2)/2+1]>> {
    %k = tract.const dense<1.0> : tensor<1x1x2xf32>
    %0 = tract.conv %x, %k : (tensor<1x1x?xf32, #tract.dims<[S]>>, tensor<1x1x2xf32>) -> tensor<1x1x?xf32, #tract.dims<[S-1]>>
    %1 = tract.max_pool %0 {kernel_shape = array<i64: 2>, strides = array<i64: 2>, padding = #tract<padding explicit>, pads_before = array<i64: 0>, pads_after = array<i64: 1>} : (tensor<1x1x?xf32, #tract.dims<[S-1]>>) -> tensor<1x1x?xf32, #tract.dims<[(S-2)/2+1]>>
    return %1 : tensor<1x1x?xf32, #tract.dims<[(S-2)/2+1]>>
  }
}

// CHECK-LABEL: module attributes {tract.properties = {pulse.delay = [1], pulse.input_axes = [2], pulse.output_axes = [2], pulse.output_lengths = ["S/2"], pulse.pulse = 4 : i64, pulse.symbol = "S"}, tract.symbols = ["S"]} {
// CHECK-NEXT: func.func @main(%arg0: tensor<1x1x4xf32>) -> tensor<1x1x2xf32> {
// CHECK-NEXT: %0 = tract.const dense<1.000000e+00> : tensor<1x1x2xf32>
// CHECK-NEXT: %1 = tract.delay %arg0 {axis = 2 : i64, delay = 0 : i64, overlap = 1 : i64} : tensor<1x1x4xf32> -> tensor<1x1x5xf32>
// CHECK-NEXT: %2 = tract.conv %1, %0 : (tensor<1x1x5xf32>, tensor<1x1x2xf32>) -> tensor<1x1x4xf32>
// CHECK-NEXT: %3 = tract.pulse_pad %2 {after = #tract.dim<1>, axis = 2 : i64, before = 0 : i64, begin_input = 1 : i64, end_input = #tract.dim<S>, value = 0xFF800000 : f32} : tensor<1x1x4xf32> -> tensor<1x1x4xf32>
// CHECK-NEXT: %4 = tract.delay %3 {axis = 2 : i64, delay = 0 : i64, overlap = 1 : i64} : tensor<1x1x4xf32> -> tensor<1x1x5xf32>
// CHECK-NEXT: %output = tract.max_pool %4 {kernel_shape = array<i64: 2>, strides = array<i64: 2>} : (tensor<1x1x5xf32>) -> tensor<1x1x2xf32>
// CHECK-NEXT: return %output : tensor<1x1x2xf32>

// -----

// Operands with different delays are realigned; a slice of the stream
// only shifts its delay.
module attributes {tract.symbols = ["S"]} {
  func.func @main(%x: tensor<1x1x?xf32, #tract.dims<[S]>>) -> tensor<1x1x?xf32, #tract.dims<[S-2]>> {
    %k = tract.const dense<1.0> : tensor<1x1x3xf32>
    %0 = tract.conv %x, %k : (tensor<1x1x?xf32, #tract.dims<[S]>>, tensor<1x1x3xf32>) -> tensor<1x1x?xf32, #tract.dims<[S-2]>>
    %1 = tract.slice %x {axis = 2 : i64, start = #tract.dim<1>, end = #tract.dim<S-1>} : tensor<1x1x?xf32, #tract.dims<[S]>> -> tensor<1x1x?xf32, #tract.dims<[S-2]>>
    %2 = tract.sub %0, %1 : (tensor<1x1x?xf32, #tract.dims<[S-2]>>, tensor<1x1x?xf32, #tract.dims<[S-2]>>) -> tensor<1x1x?xf32, #tract.dims<[S-2]>>
    return %2 : tensor<1x1x?xf32, #tract.dims<[S-2]>>
  }
}

// CHECK-LABEL: module attributes {tract.properties = {pulse.delay = [2], pulse.input_axes = [2], pulse.output_axes = [2], pulse.output_lengths = ["S-2"], pulse.pulse = 4 : i64, pulse.symbol = "S"}, tract.symbols = ["S"]} {
// CHECK-NEXT: func.func @main(%arg0: tensor<1x1x4xf32>) -> tensor<1x1x4xf32> {
// CHECK-NEXT: %0 = tract.const dense<1.000000e+00> : tensor<1x1x3xf32>
// CHECK-NEXT: %1 = tract.delay %arg0 {axis = 2 : i64, delay = 0 : i64, overlap = 2 : i64} : tensor<1x1x4xf32> -> tensor<1x1x6xf32>
// CHECK-NEXT: %2 = tract.conv %1, %0 : (tensor<1x1x6xf32>, tensor<1x1x3xf32>) -> tensor<1x1x4xf32>
// CHECK-NEXT: %3 = tract.delay %arg0 {axis = 2 : i64, delay = 1 : i64} : tensor<1x1x4xf32> -> tensor<1x1x4xf32>
// CHECK-NEXT: %4 = tract.sub %2, %3 : (tensor<1x1x4xf32>, tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
// CHECK-NEXT: return %4 : tensor<1x1x4xf32>

// -----

// A pad of the stream becomes a pulse_pad; other axes keep their pad.
module attributes {tract.symbols = ["S"]} {
  func.func @main(%x: tensor<?x2xf32, #tract.dims<[S]>>) -> tensor<?x4xf32, #tract.dims<[S+3]>> {
    %0 = tract.pad %x {before = array<i64: 2, 1>, after = array<i64: 1, 1>, value = 5.0 : f32} : tensor<?x2xf32, #tract.dims<[S]>> -> tensor<?x4xf32, #tract.dims<[S+3]>>
    return %0 : tensor<?x4xf32, #tract.dims<[S+3]>>
  }
}

// CHECK-LABEL: module attributes {tract.properties = {pulse.delay = [0], pulse.input_axes = [0], pulse.output_axes = [0], pulse.output_lengths = ["S+3"], pulse.pulse = 4 : i64, pulse.symbol = "S"}, tract.symbols = ["S"]} {
// CHECK-NEXT: func.func @main(%arg0: tensor<4x2xf32>) -> tensor<4x4xf32> {
// CHECK-NEXT: %0 = tract.delay %arg0 {axis = 0 : i64, delay = 2 : i64} : tensor<4x2xf32> -> tensor<4x2xf32>
// CHECK-NEXT: %1 = tract.pulse_pad %0 {after = #tract.dim<1>, axis = 0 : i64, before = 2 : i64, begin_input = 2 : i64, end_input = #tract.dim<S+2>, value = 5.000000e+00 : f32} : tensor<4x2xf32> -> tensor<4x2xf32>
// CHECK-NEXT: %2 = tract.pad %1 {after = array<i64: 0, 1>, before = array<i64: 0, 1>, value = 5.000000e+00 : f32} : tensor<4x2xf32> -> tensor<4x4xf32>
// CHECK-NEXT: return %2 : tensor<4x4xf32>

// -----

// Einsum and move_axis follow the streaming axis; so does concat on
// another axis.
module attributes {tract.symbols = ["S"]} {
  func.func @main(%x: tensor<?x3xf32, #tract.dims<[S]>>) -> tensor<5x?xf32, #tract.dims<[S]>> {
    %w = tract.const dense<1.0> : tensor<3x2xf32>
    %0 = tract.einsum %x, %w {expr = "sk,kn->sn"} : (tensor<?x3xf32, #tract.dims<[S]>>, tensor<3x2xf32>) -> tensor<?x2xf32, #tract.dims<[S]>>
    %1 = tract.concat %x, %0 {axis = 1 : i64} : (tensor<?x3xf32, #tract.dims<[S]>>, tensor<?x2xf32, #tract.dims<[S]>>) -> tensor<?x5xf32, #tract.dims<[S]>>
    %2 = tract.move_axis %1 {from = 0 : i64, to = 1 : i64} : tensor<?x5xf32, #tract.dims<[S]>> -> tensor<5x?xf32, #tract.dims<[S]>>
    return %2 : tensor<5x?xf32, #tract.dims<[S]>>
  }
}

// CHECK-LABEL: module attributes {tract.properties = {pulse.delay = [0], pulse.input_axes = [0], pulse.output_axes = [1], pulse.output_lengths = ["S"], pulse.pulse = 4 : i64, pulse.symbol = "S"}, tract.symbols = ["S"]} {
// CHECK-NEXT: func.func @main(%arg0: tensor<4x3xf32>) -> tensor<5x4xf32> {
// CHECK-NEXT: %0 = tract.const dense<1.000000e+00> : tensor<3x2xf32>
// CHECK-NEXT: %1 = tract.einsum %arg0, %0 {expr = "sk,kn->sn"} : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: %2 = tract.concat %arg0, %1 {axis = 1 : i64} : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<4x5xf32>
// CHECK-NEXT: %3 = tract.move_axis %2 {from = 0 : i64, to = 1 : i64} : tensor<4x5xf32> -> tensor<5x4xf32>
// CHECK-NEXT: return %3 : tensor<5x4xf32>

// -----

// A scan over the stream carries its state across pulses and skips the
// frames before its input's delay.
module attributes {tract.symbols = ["S"]} {
  func.func @main(%x: tensor<?x2xf32, #tract.dims<[S]>>) -> tensor<?x2xf32, #tract.dims<[S-1]>> {
    %h0 = tract.const dense<0.0> : tensor<1x2xf32>
    %0 = tract.slice %x {axis = 0 : i64, start = #tract.dim<1>, end = #tract.dim<S>} : tensor<?x2xf32, #tract.dims<[S]>> -> tensor<?x2xf32, #tract.dims<[S-1]>>
    %1:2 = tract.scan %h0, %0 attributes {num_states = 1 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>, output_axes = array<i64: 0>} {
    ^bb0(%h: tensor<1x2xf32>, %c: tensor<1x2xf32>):
      %n = tract.add %h, %c : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
      tract.yield %n, %n : tensor<1x2xf32>, tensor<1x2xf32>
    } : (tensor<1x2xf32>, tensor<?x2xf32, #tract.dims<[S-1]>>) -> (tensor<1x2xf32>, tensor<?x2xf32, #tract.dims<[S-1]>>)
    return %1#1 : tensor<?x2xf32, #tract.dims<[S-1]>>
  }
}

// CHECK-LABEL: module attributes {tract.properties = {pulse.delay = [1], pulse.input_axes = [0], pulse.output_axes = [0], pulse.output_lengths = ["S-1"], pulse.pulse = 4 : i64, pulse.symbol = "S"}, tract.symbols = ["S"]} {
// CHECK-NEXT: func.func @main(%arg0: tensor<4x2xf32>) -> tensor<4x2xf32> {
// CHECK-NEXT: %0 = tract.const dense<0.000000e+00> : tensor<1x2xf32>
// CHECK-NEXT: %1:2 = tract.scan %0, %arg0 attributes {num_states = 1 : i64, output_axes = array<i64: 0>, pulse.skip = 1 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>} {
// CHECK-NEXT: ^bb0(%arg1: tensor<1x2xf32>, %arg2: tensor<1x2xf32>):
// CHECK-NEXT: %2 = tract.add %arg1, %arg2 : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
// CHECK-NEXT: tract.yield %2, %2 : tensor<1x2xf32>, tensor<1x2xf32>
// CHECK-NEXT: } : (tensor<1x2xf32>, tensor<4x2xf32>) -> (tensor<1x2xf32>, tensor<4x2xf32>)
// CHECK-NEXT: return %1#1 : tensor<4x2xf32>

// -----

// Downsampling keeps the frames of a stride boundary: after a delay of 1,
// modulo 0 needs one more frame of delay.
module attributes {tract.symbols = ["S"]} {
  func.func @main(%x: tensor<?x2xf32, #tract.dims<[S]>>) -> tensor<?x2xf32, #tract.dims<[(S-1)/2]>> {
    %0 = tract.slice %x {axis = 0 : i64, start = #tract.dim<1>, end = #tract.dim<S>} : tensor<?x2xf32, #tract.dims<[S]>> -> tensor<?x2xf32, #tract.dims<[S-1]>>
    %1 = tract.downsample %0 {axis = 0 : i64, stride = 2 : i64, modulo = 1 : i64} : tensor<?x2xf32, #tract.dims<[S-1]>> -> tensor<?x2xf32, #tract.dims<[(S-1)/2]>>
    return %1 : tensor<?x2xf32, #tract.dims<[(S-1)/2]>>
  }
}

// CHECK-LABEL: module attributes {tract.properties = {pulse.delay = [1], pulse.input_axes = [0], pulse.output_axes = [0], pulse.output_lengths = ["(S-1)/2"], pulse.pulse = 4 : i64, pulse.symbol = "S"}, tract.symbols = ["S"]} {
// CHECK-NEXT: func.func @main(%arg0: tensor<4x2xf32>) -> tensor<2x2xf32> {
// CHECK-NEXT: %0 = tract.downsample %arg0 {axis = 0 : i64, stride = 2 : i64} : tensor<4x2xf32> -> tensor<2x2xf32>
// CHECK-NEXT: return %0 : tensor<2x2xf32>

// -----

// A constant broadcast over the stream length streams too.
module attributes {tract.symbols = ["S"]} {
  func.func @main(%x: tensor<?x3xf32, #tract.dims<[S]>>) -> tensor<?x3xf32, #tract.dims<[S]>> {
    %z = tract.const dense<2.0> : tensor<1x3xf32>
    %0 = tract.broadcast %z {shape = #tract.shape<[S, 3]>} : tensor<1x3xf32> -> tensor<?x3xf32, #tract.dims<[S]>>
    %1 = tract.mul %x, %0 : (tensor<?x3xf32, #tract.dims<[S]>>, tensor<?x3xf32, #tract.dims<[S]>>) -> tensor<?x3xf32, #tract.dims<[S]>>
    return %1 : tensor<?x3xf32, #tract.dims<[S]>>
  }
}

// CHECK-LABEL: module attributes {tract.properties = {pulse.delay = [0], pulse.input_axes = [0], pulse.output_axes = [0], pulse.output_lengths = ["S"], pulse.pulse = 4 : i64, pulse.symbol = "S"}, tract.symbols = ["S"]} {
// CHECK-NEXT: func.func @main(%arg0: tensor<4x3xf32>) -> tensor<4x3xf32> {
// CHECK-NEXT: %0 = tract.const dense<2.000000e+00> : tensor<1x3xf32>
// CHECK-NEXT: %1 = tract.broadcast %0 {shape = #tract.shape<[4, 3]>} : tensor<1x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %2 = tract.mul %arg0, %1 : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: return %2 : tensor<4x3xf32>

// -----

// A transposed convolution with stride 2 is a convolution of the input
// upsampled with zeros, by the flipped and transposed kernel.
module attributes {tract.symbols = ["S"]} {
  func.func @main(%x: tensor<1x1x?xf32, #tract.dims<[S]>>) -> tensor<1x2x?xf32, #tract.dims<[2*S+1]>> {
    %k = tract.const dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]> : tensor<1x2x3xf32>
    %0 = tract.deconv %x, %k {strides = array<i64: 2>} : (tensor<1x1x?xf32, #tract.dims<[S]>>, tensor<1x2x3xf32>) -> tensor<1x2x?xf32, #tract.dims<[2*S+1]>>
    return %0 : tensor<1x2x?xf32, #tract.dims<[2*S+1]>>
  }
}

// CHECK-LABEL: module attributes {tract.properties = {pulse.delay = [2], pulse.input_axes = [2], pulse.output_axes = [2], pulse.output_lengths = ["2*S+1"], pulse.pulse = 4 : i64, pulse.symbol = "S"}, tract.symbols = ["S"]} {
// CHECK-NEXT: func.func @main(%arg0: tensor<1x1x4xf32>) -> tensor<1x2x8xf32> {
// CHECK-NEXT: %0 = tract.add_axis %arg0 {axis = 3 : i64} : tensor<1x1x4xf32> -> tensor<1x1x4x1xf32>
// CHECK-NEXT: %1 = tract.pad %0 {after = array<i64: 0, 0, 0, 1>, before = array<i64: 0, 0, 0, 0>, value = 0.000000e+00 : f32} : tensor<1x1x4x1xf32> -> tensor<1x1x4x2xf32>
// CHECK-NEXT: %2 = tract.reshape %1 {at = 2 : i64, count = 2 : i64, to = #tract.shape<[8]>} : tensor<1x1x4x2xf32> -> tensor<1x1x8xf32>
// CHECK-NEXT: %3 = tract.const dense<{{\[\[}}[3.000000e+00, 2.000000e+00, 1.000000e+00{{\]\]}}, {{\[\[}}6.000000e+00, 5.000000e+00, 4.000000e+00{{\]\]}}]> : tensor<2x1x3xf32>
// CHECK-NEXT: %4 = tract.delay %2 {axis = 2 : i64, delay = 2 : i64} : tensor<1x1x8xf32> -> tensor<1x1x8xf32>
// CHECK-NEXT: %5 = tract.pulse_pad %4 {after = #tract.dim<2>, axis = 2 : i64, before = 2 : i64, begin_input = 2 : i64, end_input = #tract.dim<2*S+1>, value = 0.000000e+00 : f32} : tensor<1x1x8xf32> -> tensor<1x1x8xf32>
// CHECK-NEXT: %6 = tract.delay %5 {axis = 2 : i64, delay = 0 : i64, overlap = 2 : i64} : tensor<1x1x8xf32> -> tensor<1x1x10xf32>
// CHECK-NEXT: %7 = tract.conv %6, %3 : (tensor<1x1x10xf32>, tensor<2x1x3xf32>) -> tensor<1x2x8xf32>
// CHECK-NEXT: return %7 : tensor<1x2x8xf32>
