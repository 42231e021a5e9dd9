// y[t] = x[t-1] + x[t] + x[t+1] over a stream of S frames (zero padded).
module attributes {tract.symbols = ["S"]} {
  func.func @main(%x: tensor<1x1x?xf32, #tract.dims<[S]>> {tract.name = "x"}) -> (tensor<1x1x?xf32, #tract.dims<[S]>> {tract.name = "y"}) {
    %k = tract.const dense<1.0> : tensor<1x1x3xf32>
    %0 = tract.conv %x, %k {padding = #tract<padding explicit>, pads_before = array<i64: 1>, pads_after = array<i64: 1>} : (tensor<1x1x?xf32, #tract.dims<[S]>>, tensor<1x1x3xf32>) -> tensor<1x1x?xf32, #tract.dims<[S]>>
    return %0 : tensor<1x1x?xf32, #tract.dims<[S]>>
  }
}
