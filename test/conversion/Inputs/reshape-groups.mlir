module attributes {tract.symbols = ["S", "T"]} {
  func.func @main(%x: tensor<?x2x?x2xf32, #tract.dims<[S, T]>> {tract.name = "x"}) -> (tensor<?x2x?x2xf32, #tract.dims<[S, T]>> {tract.name = "y"}) {
    %0 = tract.reshape %x {at = 0 : i64, count = 4 : i64, to = #tract.shape<[2*S, 2*T]>} : tensor<?x2x?x2xf32, #tract.dims<[S, T]>> -> tensor<?x?xf32, #tract.dims<[2*S, 2*T]>>
    %1 = tract.reshape %0 {at = 0 : i64, count = 2 : i64, to = #tract.shape<[S, 2, T, 2]>} : tensor<?x?xf32, #tract.dims<[2*S, 2*T]>> -> tensor<?x2x?x2xf32, #tract.dims<[S, T]>>
    return %1 : tensor<?x2x?x2xf32, #tract.dims<[S, T]>>
  }
}
