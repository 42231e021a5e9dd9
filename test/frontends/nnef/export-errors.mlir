// RUN: not tract-translate --export-nnef %s 2>&1 | FileCheck %s

// An op the exporter cannot write is one error naming the op and its node.
// CHECK: error: {{.*}}cannot export 'tract.dyn_kv_cache' (node 'cache') to NNEF: no NNEF operation or tract extension for it
func.func @main(%x: tensor<1x2x?x4xf32, #tract.dims<[S]>>) -> tensor<1x2x?x4xf32, #tract.dims<[P+S]>> {
  %0 = tract.dyn_kv_cache %x {name = "k", axis = 2 : i64, past = #tract.dim<P>} : tensor<1x2x?x4xf32, #tract.dims<[S]>> -> tensor<1x2x?x4xf32, #tract.dims<[P+S]>> loc("cache")
  return %0 : tensor<1x2x?x4xf32, #tract.dims<[P+S]>>
}
