// RUN: tract-opt %s -tract-block-quant -split-input-file | FileCheck %s

// Rows by a constant k x n matrix (ONNX's MatMul): the weights become n x
// k/32 blocks of 18 bytes. Every weight is 0.5, so each block is the scale
// 0.5 / -8 = -0.0625 (f16 0xAC00, little-endian) and 32 codes of 0.
// CHECK-LABEL: func.func @kn
// CHECK-NEXT: %[[W:.*]] = tract.const dense<"0x00AC0000000000000000000000000000000000AC0000000000000000000000000000000000AC{{.*}}"> : tensor<128x4x18xi8>
// CHECK-NEXT: %[[Y:.*]] = tract.block_quant_matmul %arg0, %[[W]] {q8_inputs} : (tensor<1x?x128xf32, #tract.dims<[S]>>, tensor<128x4x18xi8>) -> tensor<1x?x128xf32, #tract.dims<[S]>>
// CHECK-NEXT: return %[[Y]]
func.func @kn(%x: tensor<1x?x128xf32, #tract.dims<[S]>>) -> tensor<1x?x128xf32, #tract.dims<[S]>> {
  %w = tract.const dense<0.5> : tensor<128x128xf32>
  %y = tract.einsum %x, %w {expr = "amk,kn->amn"} : (tensor<1x?x128xf32, #tract.dims<[S]>>, tensor<128x128xf32>) -> tensor<1x?x128xf32, #tract.dims<[S]>>
  return %y : tensor<1x?x128xf32, #tract.dims<[S]>>
}

// -----

// Weights n x k (a Linear's), with a broadcast axis of 1, on either side.
// CHECK-LABEL: func.func @nk
// CHECK: tract.block_quant_matmul %arg0, %{{.*}} {q8_inputs} : (tensor<?x256xf32, #tract.dims<[S]>>, tensor<64x8x18xi8>) -> tensor<?x64xf32, #tract.dims<[S]>>
// CHECK-NOT: tract.einsum
func.func @nk(%x: tensor<?x256xf32, #tract.dims<[S]>>) -> tensor<?x64xf32, #tract.dims<[S]>> {
  %w = tract.const dense<-1.0> : tensor<1x64x256xf32>
  %y = tract.einsum %w, %x {expr = "ank,mk->mn"} : (tensor<1x64x256xf32>, tensor<?x256xf32, #tract.dims<[S]>>) -> tensor<?x64xf32, #tract.dims<[S]>>
  return %y : tensor<?x64xf32, #tract.dims<[S]>>
}

// -----

// The output head, named so by its weights or by the product: its weights
// as f16 (n x k), the rows kept exact (no q8_inputs), even when the weights
// are named for the embedding table they are tied to.
// CHECK-LABEL: func.func @head
// CHECK: %[[W:.*]] = tract.const dense<5.000000e-01> : tensor<128x128xf16>
// CHECK-NEXT: tract.block_quant_matmul %arg0, %[[W]] : (tensor<4x128xf32>, tensor<128x128xf16>) -> tensor<4x128xf32>
// CHECK: tract.const dense<5.000000e-01> : tensor<128x128xf16>
// CHECK-NEXT: tract.block_quant_matmul %arg0, %{{.*}} : (tensor<4x128xf32>, tensor<128x128xf16>) -> tensor<4x128xf32>
func.func @head(%x: tensor<4x128xf32>) -> (tensor<4x128xf32>, tensor<4x128xf32>) {
  %head = tract.const dense<0.5> : tensor<128x128xf32> loc("lm_head.weight")
  %a = tract.einsum %x, %head {expr = "mk,kn->mn"} : (tensor<4x128xf32>, tensor<128x128xf32>) -> tensor<4x128xf32>
  %tied = tract.const dense<0.5> : tensor<128x128xf32> loc("model.embed_tokens.weight")
  %b = tract.einsum %x, %tied {expr = "mk,kn->mn"} : (tensor<4x128xf32>, tensor<128x128xf32>) -> tensor<4x128xf32> loc("/lm_head/MatMul")
  return %a, %b : tensor<4x128xf32>, tensor<4x128xf32>
}

// -----

// What stays f32: an embedding (by the weights' name or the product's),
// fewer than 2^14 weights, k not in blocks of 32, n not in groups of 16,
// k not the rows' last axis, a weight that is not finite.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: tract.block_quant_matmul
func.func @kept(%x: tensor<4x128xf32>, %z: tensor<4x144xf32>, %t: tensor<128x4xf32>) -> (tensor<4x128xf32>, tensor<4x128xf32>, tensor<4x64xf32>, tensor<4x128xf32>, tensor<4x136xf32>, tensor<4x128xf32>, tensor<4x128xf32>) {
  %head = tract.const dense<0.5> : tensor<128x128xf32> loc("model.embed_tokens.weight")
  %a = tract.einsum %x, %head {expr = "mk,kn->mn"} : (tensor<4x128xf32>, tensor<128x128xf32>) -> tensor<4x128xf32>
  %w = tract.const dense<0.5> : tensor<128x128xf32>
  %b = tract.einsum %x, %w {expr = "mk,kn->mn"} : (tensor<4x128xf32>, tensor<128x128xf32>) -> tensor<4x128xf32> loc("model/Embedding/MatMul")
  %small = tract.const dense<0.5> : tensor<128x64xf32>
  %c = tract.einsum %x, %small {expr = "mk,kn->mn"} : (tensor<4x128xf32>, tensor<128x64xf32>) -> tensor<4x64xf32>
  %odd = tract.const dense<0.5> : tensor<144x128xf32>
  %d = tract.einsum %z, %odd {expr = "mk,kn->mn"} : (tensor<4x144xf32>, tensor<144x128xf32>) -> tensor<4x128xf32>
  %wide = tract.const dense<0.5> : tensor<128x136xf32>
  %e = tract.einsum %x, %wide {expr = "mk,kn->mn"} : (tensor<4x128xf32>, tensor<128x136xf32>) -> tensor<4x136xf32>
  %f = tract.einsum %t, %w {expr = "km,kn->mn"} : (tensor<128x4xf32>, tensor<128x128xf32>) -> tensor<4x128xf32>
  %inf = tract.const dense<0x7F800000> : tensor<128x128xf32>
  %g = tract.einsum %x, %inf {expr = "mk,kn->mn"} : (tensor<4x128xf32>, tensor<128x128xf32>) -> tensor<4x128xf32>
  return %a, %b, %c, %d, %e, %f, %g : tensor<4x128xf32>, tensor<4x128xf32>, tensor<4x64xf32>, tensor<4x128xf32>, tensor<4x136xf32>, tensor<4x128xf32>, tensor<4x128xf32>
}
