// A recurrent layer written as a scan whose body multiplies each step's
// input by W (as ONNX Scan bodies do): h' = tanh(x_t·W + b + h·R), and the
// scanned output 2·h'. declutter-scan-run.test checks that -O gives the
// same outputs once x·W + b has left the loop.
func.func @main(%h0: tensor<1x4xf32>, %xs: tensor<6x1x3xf32>) -> (tensor<1x4xf32>, tensor<6x1x4xf32>) {
  %w = tract.const dense<[[0.5, -1.0, 0.25, 2.0], [1.5, 0.75, -0.5, -1.25], [-2.0, 0.125, 1.0, 0.5]]> : tensor<3x4xf32>
  %r = tract.const dense<[[0.25, -0.5, 0.125, 0.0], [0.5, 0.25, -0.25, 0.125], [-0.125, 0.5, 0.25, -0.5], [0.0, -0.25, 0.5, 0.25]]> : tensor<4x4xf32>
  %b = tract.const dense<[[0.1, -0.2, 0.3, -0.4]]> : tensor<1x4xf32>
  %two = tract.const dense<2.0> : tensor<1x1xf32>
  %y:2 = tract.scan %h0, %xs, %w, %r, %b attributes {num_states = 1 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>, output_axes = array<i64: 0>} {
  ^bb0(%h: tensor<1x4xf32>, %xc: tensor<1x1x3xf32>, %wi: tensor<3x4xf32>, %ri: tensor<4x4xf32>, %bi: tensor<1x4xf32>):
    %x = tract.rm_axis %xc {axis = 0 : i64} : tensor<1x1x3xf32> -> tensor<1x3xf32>
    %xw = tract.einsum %x, %wi {expr = "mk,kn->mn"} : (tensor<1x3xf32>, tensor<3x4xf32>) -> tensor<1x4xf32>
    %xb = tract.add %xw, %bi : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    %hr = tract.einsum %h, %ri {expr = "mk,kn->mn"} : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
    %s = tract.add %xb, %hr : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    %t = tract.tanh %s : tensor<1x4xf32>
    %o = tract.mul %t, %two : (tensor<1x4xf32>, tensor<1x1xf32>) -> tensor<1x4xf32>
    %oc = tract.add_axis %o {axis = 0 : i64} : tensor<1x4xf32> -> tensor<1x1x4xf32>
    tract.yield %t, %oc : tensor<1x4xf32>, tensor<1x1x4xf32>
  } : (tensor<1x4xf32>, tensor<6x1x3xf32>, tensor<3x4xf32>, tensor<4x4xf32>, tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<6x1x4xf32>)
  return %y#0, %y#1 : tensor<1x4xf32>, tensor<6x1x4xf32>
}
