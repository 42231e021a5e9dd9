// RUN: not tract-translate --export-nnef %s 2>&1 | FileCheck %s

// An op the exporter cannot write is one error naming the op and its node.
// CHECK: error: {{.*}}cannot export 'tract.stream_slice' (node 'window') to NNEF: no NNEF operation or tract extension for it
func.func @main(%x: tensor<8x4xf32>) -> tensor<2x4xf32> {
  %0 = tract.stream_slice %x {axis = 0 : i64, start = 0 : i64, pulse = 2 : i64} : tensor<8x4xf32> -> tensor<2x4xf32> loc("window")
  return %0 : tensor<2x4xf32>
}
