// Mish of a constant folds to a constant.
func.func @main() -> (tensor<3xf32> {tract.name = "y"}) {
  %c = tract.const dense<[-10.0, 0.0, 1.0]> : tensor<3xf32>
  %0 = tract.mish %c : tensor<3xf32>
  return %0 : tensor<3xf32>
}
