// RUN: tract-opt %s -split-input-file --tract-pulsify="symbol=S pulse=6" -verify-diagnostics

// The strides multiply: a pulse of 6 frames gives 3 frames after the first
// stride of 2, which the second cannot divide; the input pulse must be a
// multiple of 4.
module attributes {tract.symbols = ["S"]} {
  func.func @main(%x: tensor<1x1x?xf32, #tract.dims<[S]>>) -> tensor<1x1x?xf32, #tract.dims<[S/4]>> {
    %0 = tract.max_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 2>} : (tensor<1x1x?xf32, #tract.dims<[S]>>) -> tensor<1x1x?xf32, #tract.dims<[S/2]>>
    // expected-error @+1 {{'tract.max_pool' op cannot be pulsified: the pulse 6 is not a multiple of 4, which the stride 2 of this op requires}}
    %1 = tract.max_pool %0 {kernel_shape = array<i64: 2>, strides = array<i64: 2>} : (tensor<1x1x?xf32, #tract.dims<[S/2]>>) -> tensor<1x1x?xf32, #tract.dims<[S/4]>>
    return %1 : tensor<1x1x?xf32, #tract.dims<[S/4]>>
  }
}

// -----

module attributes {tract.symbols = ["S"]} {
  func.func @main(%x: tensor<?x3xf32, #tract.dims<[S]>>) -> tensor<1x3xf32> {
    // expected-error @+1 {{'tract.reduce' op cannot be pulsified: it reduces over the streaming axis}}
    %0 = tract.reduce sum %x {axes = array<i64: 0>} : tensor<?x3xf32, #tract.dims<[S]>> -> tensor<1x3xf32>
    return %0 : tensor<1x3xf32>
  }
}

// -----

module attributes {tract.symbols = ["S"]} {
  func.func @main(%x: tensor<?x3xf32, #tract.dims<[S]>>) -> tensor<?x3xf32, #tract.dims<[S]>> {
    %w = tract.const dense<1.0> : tensor<3x3xf32>
    // expected-error @+1 {{'tract.einsum' op cannot be pulsified: it sums over the streaming axis 's'}}
    %0 = tract.einsum %x, %x {expr = "sk,sn->kn"} : (tensor<?x3xf32, #tract.dims<[S]>>, tensor<?x3xf32, #tract.dims<[S]>>) -> tensor<3x3xf32>
    %1 = tract.einsum %x, %0 {expr = "sk,kn->sn"} : (tensor<?x3xf32, #tract.dims<[S]>>, tensor<3x3xf32>) -> tensor<?x3xf32, #tract.dims<[S]>>
    return %1 : tensor<?x3xf32, #tract.dims<[S]>>
  }
}

// -----

// A reverse recurrence needs the end of the stream first.
module attributes {tract.symbols = ["S"]} {
  func.func @main(%x: tensor<?x2xf32, #tract.dims<[S]>>) -> tensor<?x2xf32, #tract.dims<[S]>> {
    %h0 = tract.const dense<0.0> : tensor<1x2xf32>
    // expected-error @+1 {{'tract.scan' op cannot be pulsified: it runs backwards over the stream}}
    %1:2 = tract.scan %h0, %x attributes {num_states = 1 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: -1>, output_axes = array<i64: 0>} {
    ^bb0(%h: tensor<1x2xf32>, %c: tensor<1x2xf32>):
      %n = tract.add %h, %c : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
      tract.yield %n, %n : tensor<1x2xf32>, tensor<1x2xf32>
    } : (tensor<1x2xf32>, tensor<?x2xf32, #tract.dims<[S]>>) -> (tensor<1x2xf32>, tensor<?x2xf32, #tract.dims<[S]>>)
    return %1#1 : tensor<?x2xf32, #tract.dims<[S]>>
  }
}

// -----

// The final state of a scan over the whole stream is only known at its end.
module attributes {tract.symbols = ["S"]} {
  func.func @main(%x: tensor<?x2xf32, #tract.dims<[S]>>) -> tensor<1x2xf32> {
    %h0 = tract.const dense<0.0> : tensor<1x2xf32>
    // expected-error @+1 {{'tract.scan' op cannot be pulsified: its final state depends on the whole stream}}
    %1:2 = tract.scan %h0, %x attributes {num_states = 1 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>, output_axes = array<i64: 0>} {
    ^bb0(%h: tensor<1x2xf32>, %c: tensor<1x2xf32>):
      %n = tract.add %h, %c : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
      tract.yield %n, %n : tensor<1x2xf32>, tensor<1x2xf32>
    } : (tensor<1x2xf32>, tensor<?x2xf32, #tract.dims<[S]>>) -> (tensor<1x2xf32>, tensor<?x2xf32, #tract.dims<[S]>>)
    return %1#0 : tensor<1x2xf32>
  }
}

// -----

module attributes {tract.symbols = ["S"]} {
  func.func @main(%x: tensor<?x2xf32, #tract.dims<[S]>>) -> tensor<?x2xf32, #tract.dims<[2*S]>> {
    // expected-error @+1 {{'tract.concat' op cannot be pulsified: it concatenates along the streaming axis}}
    %0 = tract.concat %x, %x {axis = 0 : i64} : (tensor<?x2xf32, #tract.dims<[S]>>, tensor<?x2xf32, #tract.dims<[S]>>) -> tensor<?x2xf32, #tract.dims<[2*S]>>
    return %0 : tensor<?x2xf32, #tract.dims<[2*S]>>
  }
}

// -----

// expected-error @+2 {{input 0 has the shape 2*S,3; a streamed input must have S itself on exactly one axis}}
module attributes {tract.symbols = ["S"]} {
  func.func @main(%x: tensor<?x3xf32, #tract.dims<[2*S]>>) -> tensor<?x3xf32, #tract.dims<[2*S]>> {
    return %x : tensor<?x3xf32, #tract.dims<[2*S]>>
  }
}

// -----

module attributes {tract.symbols = ["S"]} {
  func.func @main(%x: tensor<?x3xf32, #tract.dims<[S]>>) -> tensor<2xi64> {
    // expected-error @+1 {{'tract.shape_of' op cannot be pulsified: no pulsifier for tract.shape_of on a streamed operand}}
    %0 = tract.shape_of %x : tensor<?x3xf32, #tract.dims<[S]>> -> tensor<2xi64>
    return %0 : tensor<2xi64>
  }
}

// -----

// A scan body that reads the whole stream from outside cannot run on pulses.
module attributes {tract.symbols = ["S"]} {
  func.func @main(%x: tensor<?x2xf32, #tract.dims<[S]>>) -> tensor<?x2xf32, #tract.dims<[S]>> {
    %h0 = tract.const dense<0.0> : tensor<1x2xf32>
    // expected-error @+1 {{'tract.scan' op cannot be pulsified: its body reads a whole stream from outside}}
    %1:2 = tract.scan %h0, %x attributes {num_states = 1 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>, output_axes = array<i64: 0>} {
    ^bb0(%h: tensor<1x2xf32>, %c: tensor<1x2xf32>):
      %s = tract.reduce sum %x {axes = array<i64: 0>} : tensor<?x2xf32, #tract.dims<[S]>> -> tensor<1x2xf32>
      %n = tract.add %h, %s : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
      tract.yield %n, %n : tensor<1x2xf32>, tensor<1x2xf32>
    } : (tensor<1x2xf32>, tensor<?x2xf32, #tract.dims<[S]>>) -> (tensor<1x2xf32>, tensor<?x2xf32, #tract.dims<[S]>>)
    return %1#1 : tensor<?x2xf32, #tract.dims<[S]>>
  }
}

// -----

module attributes {tract.symbols = ["S"]} {
  func.func @main(%x: tensor<?x3xf32, #tract.dims<[S]>>) -> (tensor<?x3xf32, #tract.dims<[S]>> {tract.name = "y"}, tensor<1x3xf32> {tract.name = "bias"}) {
    %c = tract.const dense<1.0> : tensor<1x3xf32>
    // expected-error @+1 {{output 'bias' does not stream over S: it does not keep the frames of the streaming axis (a streaming model's outputs must)}}
    return %x, %c : tensor<?x3xf32, #tract.dims<[S]>>, tensor<1x3xf32>
  }
}
