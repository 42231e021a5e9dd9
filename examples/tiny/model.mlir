// A tiny streaming-style model in the tract dialect: a per-channel affine
// layer over frames of 4 features, followed by a gate, as an exporter that
// kept training-time clutter (a zero bias, a unit scale) would write it.
func.func @main(%frames: tensor<1x?x4xf32, #tract.dims<[S]>>) -> tensor<1x?x4xf32, #tract.dims<[S]>> {
  %scale = tract.const dense<[[[0.5, -1.0, 2.0, 0.25]]]> : tensor<1x1x4xf32> loc("scale")
  %shift = tract.const dense<[[[0.1, 0.2, 0.3, 0.4]]]> : tensor<1x1x4xf32> loc("shift")
  %unit = tract.const dense<1.0> : tensor<1x1x1xf32> loc("bn.weight")
  %zero = tract.const dense<0.0> : tensor<1x1x1xf32> loc("bn.bias")
  %0 = tract.mul %frames, %scale : (tensor<1x?x4xf32, #tract.dims<[S]>>, tensor<1x1x4xf32>) -> tensor<1x?x4xf32, #tract.dims<[S]>> loc("affine.mul")
  %1 = tract.add %0, %shift : (tensor<1x?x4xf32, #tract.dims<[S]>>, tensor<1x1x4xf32>) -> tensor<1x?x4xf32, #tract.dims<[S]>> loc("affine.add")
  %2 = tract.mul %1, %unit : (tensor<1x?x4xf32, #tract.dims<[S]>>, tensor<1x1x1xf32>) -> tensor<1x?x4xf32, #tract.dims<[S]>> loc("bn.mul")
  %3 = tract.add %2, %zero : (tensor<1x?x4xf32, #tract.dims<[S]>>, tensor<1x1x1xf32>) -> tensor<1x?x4xf32, #tract.dims<[S]>> loc("bn.add")
  %4 = tract.sigmoid %3 : tensor<1x?x4xf32, #tract.dims<[S]>> loc("gate")
  %5 = tract.mul %3, %4 : (tensor<1x?x4xf32, #tract.dims<[S]>>, tensor<1x?x4xf32, #tract.dims<[S]>>) -> tensor<1x?x4xf32, #tract.dims<[S]>> loc("gated")
  return %5 : tensor<1x?x4xf32, #tract.dims<[S]>>
}
