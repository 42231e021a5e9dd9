// RUN: not tract-translate --export-nnef %s 2>&1 | FileCheck %s

// An op the exporter cannot write is one error naming the op and its node.
// CHECK: error: {{.*}}cannot export 'tract.apply_rope' (node 'rope') to NNEF: no NNEF operation or tract extension for it
func.func @main(%x: tensor<2x4xf32>, %cos: tensor<2x4xf32>, %sin: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = tract.apply_rope %x, %cos, %sin : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32> loc("rope")
  return %0 : tensor<2x4xf32>
}
