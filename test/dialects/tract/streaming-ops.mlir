// RUN: tract-opt %s | FileCheck %s
// Round trip: the printed form parses back to the same IR, in both the
// custom and the generic syntax.
// RUN: tract-opt %s | tract-opt | FileCheck %s
// RUN: tract-opt %s --mlir-print-op-generic | tract-opt | FileCheck %s

// Pulse and transformer operators.

// CHECK-LABEL: func.func @pulse
// CHECK: tract.delay %{{[a-zA-Z0-9_#]+}} {axis = 1 : i64, delay = 3 : i64, overlap = 2 : i64} : tensor<1x8x64xf32> -> tensor<1x10x64xf32>
// CHECK: tract.pulse_pad %{{[a-zA-Z0-9_#]+}} {after = #tract.dim<2>, axis = 1 : i64, before = 2 : i64, begin_input = 0 : i64, end_input = #tract.dim<S>, mode = #tract<pad_mode edge>} : tensor<1x8x64xf32> -> tensor<1x8x64xf32>
// CHECK: tract.pulse_mask %{{[a-zA-Z0-9_#]+}} {axis = 1 : i64, begin = 0 : i64, end = #tract.dim<S>, value = 0.000000e+00 : f32} : tensor<1x8x64xf32> -> tensor<1x8x64xf32>
func.func @pulse(%x: tensor<1x8x64xf32>) {
  %0 = tract.delay %x {axis = 1 : i64, delay = 3 : i64, overlap = 2 : i64} : tensor<1x8x64xf32> -> tensor<1x10x64xf32>
  %1 = tract.pulse_pad %x {axis = 1 : i64, before = 2 : i64, after = #tract.dim<2>, begin_input = 0 : i64, end_input = #tract.dim<S>, mode = #tract<pad_mode edge>} : tensor<1x8x64xf32> -> tensor<1x8x64xf32>
  %2 = tract.pulse_mask %x {axis = 1 : i64, begin = 0 : i64, end = #tract.dim<S>, value = 0.0 : f32} : tensor<1x8x64xf32> -> tensor<1x8x64xf32>
  return
}

// CHECK-LABEL: func.func @transformer
// CHECK: tract.sdpa %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} {causal = true, scale = 1.250000e-01 : f64} : (tensor<1x8x?x64xf16, #tract.dims<[S]>>, tensor<1x2x?x64xf16, #tract.dims<[P+S]>>, tensor<1x2x?x32xf16, #tract.dims<[P+S]>>) -> tensor<1x8x?x32xf16, #tract.dims<[S]>>
// CHECK: tract.sdpa %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<1x8x?x64xf16, #tract.dims<[S]>>, tensor<1x2x?x64xf16, #tract.dims<[P+S]>>, tensor<1x2x?x32xf16, #tract.dims<[P+S]>>, tensor<?x?xf16, #tract.dims<[S, P+S]>>) -> tensor<1x8x?x32xf16, #tract.dims<[S]>>
// CHECK: tract.apply_rope %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<1x8x?x64xf16, #tract.dims<[S]>>, tensor<1x1x?x64xf16, #tract.dims<[S]>>, tensor<1x1x?x64xf16, #tract.dims<[S]>>) -> tensor<1x8x?x64xf16, #tract.dims<[S]>>
// CHECK: tract.dyn_kv_cache %{{[a-zA-Z0-9_#]+}} {axis = 2 : i64, name = "layer0.k", past = #tract.dim<P>} : tensor<1x2x?x64xf16, #tract.dims<[S]>> -> tensor<1x2x?x64xf16, #tract.dims<[P+S]>>
func.func @transformer(%q: tensor<1x8x?x64xf16, #tract.dims<[S]>>, %k: tensor<1x2x?x64xf16, #tract.dims<[S+P]>>, %v: tensor<1x2x?x32xf16, #tract.dims<[S+P]>>, %cos: tensor<1x1x?x64xf16, #tract.dims<[S]>>, %sin: tensor<1x1x?x64xf16, #tract.dims<[S]>>, %kin: tensor<1x2x?x64xf16, #tract.dims<[S]>>, %m: tensor<?x?xf16, #tract.dims<[S, S+P]>>) {
  %0 = tract.sdpa %q, %k, %v {causal = true, scale = 0.125 : f64} : (tensor<1x8x?x64xf16, #tract.dims<[S]>>, tensor<1x2x?x64xf16, #tract.dims<[S+P]>>, tensor<1x2x?x32xf16, #tract.dims<[S+P]>>) -> tensor<1x8x?x32xf16, #tract.dims<[S]>>
  %1 = tract.sdpa %q, %k, %v, %m : (tensor<1x8x?x64xf16, #tract.dims<[S]>>, tensor<1x2x?x64xf16, #tract.dims<[S+P]>>, tensor<1x2x?x32xf16, #tract.dims<[S+P]>>, tensor<?x?xf16, #tract.dims<[S, S+P]>>) -> tensor<1x8x?x32xf16, #tract.dims<[S]>>
  %2 = tract.apply_rope %q, %cos, %sin : (tensor<1x8x?x64xf16, #tract.dims<[S]>>, tensor<1x1x?x64xf16, #tract.dims<[S]>>, tensor<1x1x?x64xf16, #tract.dims<[S]>>) -> tensor<1x8x?x64xf16, #tract.dims<[S]>>
  %3 = tract.dyn_kv_cache %kin {name = "layer0.k", axis = 2 : i64, past = #tract.dim<P>} : tensor<1x2x?x64xf16, #tract.dims<[S]>> -> tensor<1x2x?x64xf16, #tract.dims<[S+P]>>
  return
}

