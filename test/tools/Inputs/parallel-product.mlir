// Large enough for the kernels to share out on threads: a matrix product
// whose sizes no register tile divides (so remainder tiles follow the
// parallel loop), a bias and a tanh over its rows.
func.func @main(%x: tensor<200x260xf32>, %w: tensor<260x330xf32>) -> tensor<200x330xf32> {
  %b = tract.const dense<0.125> : tensor<1x330xf32> loc("bias")
  %p = tract.einsum %x, %w {expr = "ik,kj->ij"} : (tensor<200x260xf32>, tensor<260x330xf32>) -> tensor<200x330xf32> loc("product")
  %s = tract.add %p, %b : (tensor<200x330xf32>, tensor<1x330xf32>) -> tensor<200x330xf32> loc("biased")
  %t = tract.tanh %s : tensor<200x330xf32> loc("squashed")
  return %t : tensor<200x330xf32>
}
