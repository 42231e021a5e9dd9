// Products for the GPU's tiled kernels: a batch of matrix products whose
// rows (S, given at run time), depth (40) and columns (24) no 16-wide tile
// divides, and a product whose depth (64) the tiles divide.
func.func @main(%x: tensor<3x?x40xf32, #tract.dims<[S]>>, %w: tensor<3x40x24xf32>, %v: tensor<24x64xf32>, %u: tensor<64x32xf32>) -> (tensor<3x?x24xf32, #tract.dims<[S]>>, tensor<24x32xf32>) {
  %p = tract.einsum %x, %w {expr = "bik,bkj->bij"} : (tensor<3x?x40xf32, #tract.dims<[S]>>, tensor<3x40x24xf32>) -> tensor<3x?x24xf32, #tract.dims<[S]>> loc("batched")
  %q = tract.einsum %v, %u {expr = "ik,kj->ij"} : (tensor<24x64xf32>, tensor<64x32xf32>) -> tensor<24x32xf32> loc("product")
  return %p, %q : tensor<3x?x24xf32, #tract.dims<[S]>>, tensor<24x32xf32>
}
