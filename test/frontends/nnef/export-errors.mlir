// RUN: not tract-translate --export-nnef %s 2>&1 | FileCheck %s

// An op the exporter cannot write is one error naming the op and its node.
// CHECK: error: {{.*}}cannot export 'tract.one_hot' (node 'encode') to NNEF: no NNEF operation or tract extension for it
func.func @main(%i: tensor<4xi64>) -> tensor<4x10xf32> {
  %0 = tract.one_hot %i {axis = 1 : i64, dim = 10 : i64, off = 0.0 : f32, on = 1.0 : f32} : tensor<4xi64> -> tensor<4x10xf32> loc("encode")
  return %0 : tensor<4x10xf32>
}
