// A small streaming model over S frames of 3 channels, for the symbolic
// costs of `tract dump --cost`: a convolution, a matrix product, a
// reduction, a softmax, a slice and a recurrent scan over the frames.
module attributes {tract.symbols = ["S"]} {
  func.func @main(%x: tensor<1x3x?xf32, #tract.dims<[S]>> {tract.name = "frames"}) -> (tensor<1x4x1xf32>, tensor<1x4xf32>) {
    %k = tract.const dense<0.5> : tensor<8x3x3xf32> loc("conv.weight")
    %b = tract.const dense<0.1> : tensor<8xf32> loc("conv.bias")
    %c = tract.conv %x, %k, %b : (tensor<1x3x?xf32, #tract.dims<[S]>>, tensor<8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x?xf32, #tract.dims<[S-2]>> loc("conv")
    %w = tract.const dense<0.25> : tensor<4x8xf32> loc("proj.weight")
    %e = tract.einsum %w, %c {expr = "oc,bcs->bos"} : (tensor<4x8xf32>, tensor<1x8x?xf32, #tract.dims<[S-2]>>) -> tensor<1x4x?xf32, #tract.dims<[S-2]>> loc("proj")
    %r = tract.reduce sum %e {axes = array<i64: 2>} : tensor<1x4x?xf32, #tract.dims<[S-2]>> -> tensor<1x4x1xf32> loc("pool")
    %sm = tract.softmax %e {axes = array<i64: 1>} : tensor<1x4x?xf32, #tract.dims<[S-2]>> -> tensor<1x4x?xf32, #tract.dims<[S-2]>> loc("probs")
    %sl = tract.slice %sm {axis = 2 : i64, start = #tract.dim<1>, end = #tract.dim<S-2>} : tensor<1x4x?xf32, #tract.dims<[S-2]>> -> tensor<1x4x?xf32, #tract.dims<[S-3]>> loc("trim")
    %t = tract.move_axis %sl {from = 2 : i64, to = 0 : i64} : tensor<1x4x?xf32, #tract.dims<[S-3]>> -> tensor<?x1x4xf32, #tract.dims<[S-3]>> loc("frames_first")
    %xs = tract.rm_axis %t {axis = 1 : i64} : tensor<?x1x4xf32, #tract.dims<[S-3]>> -> tensor<?x4xf32, #tract.dims<[S-3]>> loc("squeeze")
    %h0 = tract.const dense<0.0> : tensor<1x4xf32> loc("h0")
    %m = tract.const dense<0.125> : tensor<4x4xf32> loc("rnn.weight")
    %h = tract.scan %h0, %xs, %m attributes {num_states = 1 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>, output_axes = array<i64>} {
    ^bb0(%a: tensor<1x4xf32>, %xi: tensor<1x4xf32>, %mm: tensor<4x4xf32>):
      %p = tract.einsum %a, %mm {expr = "bh,gh->bg"} : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
      %n = tract.add %p, %xi : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
      %y = tract.tanh %n : tensor<1x4xf32>
      tract.yield %y : tensor<1x4xf32>
    } : (tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S-3]>>, tensor<4x4xf32>) -> tensor<1x4xf32> loc("rnn")
    return %r, %h : tensor<1x4x1xf32>, tensor<1x4xf32>
  }
}
