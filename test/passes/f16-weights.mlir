// RUN: tract-opt %s -tract-block-quant=format=f16 -split-input-file | FileCheck %s
// RUN: not tract-opt %s -tract-block-quant=format=q8 -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// Rows by a constant k x n matrix: the weights become n x k halves (0.5 is
// 0x3800), whatever k is (no blocks).
// CHECK-LABEL: func.func @kn
// CHECK-NEXT: %[[W:.*]] = tract.const dense<5.000000e-01> : tensor<144x120xf16>
// CHECK-NEXT: %[[Y:.*]] = tract.block_quant_matmul %arg0, %[[W]] : (tensor<?x120xf32, #tract.dims<[S]>>, tensor<144x120xf16>) -> tensor<?x144xf32, #tract.dims<[S]>>
// CHECK-NEXT: return %[[Y]]
// BAD: error: tract-block-quant: unknown format 'q8' (q4_0 or f16)
func.func @kn(%x: tensor<?x120xf32, #tract.dims<[S]>>) -> tensor<?x144xf32, #tract.dims<[S]>> {
  %w = tract.const dense<0.5> : tensor<120x144xf32>
  %y = tract.einsum %x, %w {expr = "mk,kn->mn"} : (tensor<?x120xf32, #tract.dims<[S]>>, tensor<120x144xf32>) -> tensor<?x144xf32, #tract.dims<[S]>>
  return %y : tensor<?x144xf32, #tract.dims<[S]>>
}

// -----

// Weights stored as f16 and cast to f32 (too large to fold) are taken as
// they are: the cast goes, the constant is transposed to n x k.
// CHECK-LABEL: func.func @stored
// CHECK-NEXT: %[[W:.*]] = tract.const dense<-2.500000e-01> : tensor<160x128xf16>
// CHECK-NEXT: %[[Y:.*]] = tract.block_quant_matmul %arg0, %[[W]] : (tensor<4x128xf32>, tensor<160x128xf16>) -> tensor<4x160xf32>
// CHECK-NEXT: return %[[Y]]
func.func @stored(%x: tensor<4x128xf32>) -> tensor<4x160xf32> {
  %h = tract.const dense<-0.25> : tensor<128x160xf16>
  %w = tract.cast %h : tensor<128x160xf16> to tensor<128x160xf32>
  %y = tract.einsum %x, %w {expr = "mk,kn->mn"} : (tensor<4x128xf32>, tensor<128x160xf32>) -> tensor<4x160xf32>
  return %y : tensor<4x160xf32>
}

// -----

// What stays f32: an output head, a weight beyond f16's range (65504),
// fewer than 2^14 weights.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: tract.block_quant_matmul
func.func @kept(%x: tensor<4x128xf32>) -> (tensor<4x128xf32>, tensor<4x128xf32>, tensor<4x64xf32>) {
  %head = tract.const dense<0.5> : tensor<128x128xf32> loc("lm_head.weight")
  %a = tract.einsum %x, %head {expr = "mk,kn->mn"} : (tensor<4x128xf32>, tensor<128x128xf32>) -> tensor<4x128xf32>
  %big = tract.const dense<70000.0> : tensor<128x128xf32>
  %b = tract.einsum %x, %big {expr = "mk,kn->mn"} : (tensor<4x128xf32>, tensor<128x128xf32>) -> tensor<4x128xf32>
  %small = tract.const dense<0.5> : tensor<128x64xf32>
  %c = tract.einsum %x, %small {expr = "mk,kn->mn"} : (tensor<4x128xf32>, tensor<128x64xf32>) -> tensor<4x64xf32>
  return %a, %b, %c : tensor<4x128xf32>, tensor<4x128xf32>, tensor<4x64xf32>
}
