// RUN: not tract-translate --export-nnef %s 2>&1 | FileCheck %s

// An op the exporter cannot write is one error naming the op and its node.
// CHECK: error: {{.*}}cannot export 'tract.range' (node 'positions') to NNEF: no NNEF operation or tract extension for it
func.func @main(%start: tensor<i64>, %end: tensor<i64>, %step: tensor<i64>) -> tensor<3xi64> {
  %0 = tract.range %start, %end, %step {len = #tract.dim<3>} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<3xi64> loc("positions")
  return %0 : tensor<3xi64>
}
