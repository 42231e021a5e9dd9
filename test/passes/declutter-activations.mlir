// RUN: tract-opt %s -tract-declutter -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @silu
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK-NEXT: %[[Y:.*]] = tract.silu %[[X]] : tensor<2x8xf32>
// CHECK-NEXT: %[[Z:.*]] = tract.silu %[[X]] : tensor<2x8xf32>
// CHECK-NEXT: return %[[Y]], %[[Z]]
func.func @silu(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %s = tract.sigmoid %x : tensor<2x8xf32>
  %0 = tract.mul %x, %s : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = tract.mul %s, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0, %1 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// y * sigmoid(x) with y != x is not silu; nor is a product that broadcasts x.
// CHECK-LABEL: func.func @not_silu
// CHECK-NOT: tract.silu
// CHECK-COUNT-2: tract.mul
// CHECK-NOT: tract.silu
func.func @not_silu(%x: tensor<1x8xf32>, %y: tensor<1x8xf32>, %z: tensor<4x8xf32>) -> (tensor<1x8xf32>, tensor<4x8xf32>) {
  %s = tract.sigmoid %x : tensor<1x8xf32>
  %0 = tract.mul %y, %s : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %sz = tract.sigmoid %z : tensor<4x8xf32>
  %1 = tract.mul %x, %sz : (tensor<1x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<1x8xf32>, tensor<4x8xf32>
}

// -----

// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) as PyTorch exports
// it.
// CHECK-LABEL: func.func @gelu_approx
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[Y:.*]] = tract.gelu_approx %[[X]] : tensor<4xf32>
// CHECK-NEXT: return %[[Y]]
func.func @gelu_approx(%x: tensor<4xf32>) -> tensor<4xf32> {
  %half = tract.const dense<0.5> : tensor<1xf32>
  %one = tract.const dense<1.0> : tensor<1xf32>
  %three = tract.const dense<3.0> : tensor<1xf32>
  %k = tract.const dense<0.044715> : tensor<1xf32>
  %alpha = tract.const dense<0.797884583> : tensor<1xf32>
  %cube = tract.pow %x, %three : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %kc = tract.mul %k, %cube : (tensor<1xf32>, tensor<4xf32>) -> tensor<4xf32>
  %inner = tract.add %x, %kc : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %scaled = tract.mul %inner, %alpha : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %t = tract.tanh %scaled : tensor<4xf32>
  %onePlus = tract.add %t, %one : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %hx = tract.mul %x, %half : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %y = tract.mul %hx, %onePlus : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Another grouping, with x * x * x for the cube.
// CHECK-LABEL: func.func @gelu_approx_regrouped
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[Y:.*]] = tract.gelu_approx %[[X]] : tensor<4xf32>
// CHECK-NEXT: return %[[Y]]
func.func @gelu_approx_regrouped(%x: tensor<4xf32>) -> tensor<4xf32> {
  %half = tract.const dense<0.5> : tensor<1xf32>
  %one = tract.const dense<1.0> : tensor<1xf32>
  %k = tract.const dense<0.044715> : tensor<1xf32>
  %alpha = tract.const dense<0.797884583> : tensor<1xf32>
  %sq = tract.mul %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %cube = tract.mul %x, %sq : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %kc = tract.mul %cube, %k : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %inner = tract.add %kc, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %scaled = tract.mul %alpha, %inner : (tensor<1xf32>, tensor<4xf32>) -> tensor<4xf32>
  %t = tract.tanh %scaled : tensor<4xf32>
  %onePlus = tract.add %one, %t : (tensor<1xf32>, tensor<4xf32>) -> tensor<4xf32>
  %xo = tract.mul %x, %onePlus : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = tract.mul %half, %xo : (tensor<1xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// With x^2 in place of the cube: tract's fast form, which it recognizes
// too (GeluApproximate { fast_impl: true }).
// CHECK-LABEL: func.func @gelu_approx_fast
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[Y:.*]] = tract.gelu_approx %[[X]] {fast_impl = true} : tensor<4xf32>
// CHECK-NEXT: return %[[Y]]
func.func @gelu_approx_fast(%x: tensor<4xf32>) -> tensor<4xf32> {
  %half = tract.const dense<0.5> : tensor<1xf32>
  %one = tract.const dense<1.0> : tensor<1xf32>
  %two = tract.const dense<2.0> : tensor<1xf32>
  %k = tract.const dense<0.044715> : tensor<1xf32>
  %alpha = tract.const dense<0.797884583> : tensor<1xf32>
  %sq = tract.pow %x, %two : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %kc = tract.mul %k, %sq : (tensor<1xf32>, tensor<4xf32>) -> tensor<4xf32>
  %inner = tract.add %x, %kc : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %scaled = tract.mul %inner, %alpha : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %t = tract.tanh %scaled : tensor<4xf32>
  %onePlus = tract.add %t, %one : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %hx = tract.mul %x, %half : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %y = tract.mul %hx, %onePlus : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// The wrong cubic coefficient: not gelu.
// CHECK-LABEL: func.func @not_gelu
// CHECK-NOT: tract.gelu_approx
// CHECK: tract.tanh
func.func @not_gelu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %half = tract.const dense<0.5> : tensor<1xf32>
  %one = tract.const dense<1.0> : tensor<1xf32>
  %three = tract.const dense<3.0> : tensor<1xf32>
  %k = tract.const dense<0.05> : tensor<1xf32>
  %alpha = tract.const dense<0.797884583> : tensor<1xf32>
  %cube = tract.pow %x, %three : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %kc = tract.mul %k, %cube : (tensor<1xf32>, tensor<4xf32>) -> tensor<4xf32>
  %inner = tract.add %x, %kc : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %scaled = tract.mul %inner, %alpha : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %t = tract.tanh %scaled : tensor<4xf32>
  %onePlus = tract.add %t, %one : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %hx = tract.mul %x, %half : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %y = tract.mul %hx, %onePlus : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// x * rsqrt(mean_of_squares(x) + eps).
// CHECK-LABEL: func.func @rms_norm
// CHECK-SAME: (%[[X:.*]]: tensor<2x?xf32, #tract.dims<[S]>>)
// CHECK-NEXT: %[[Y:.*]] = tract.rms_norm %[[X]] {axis = 1 : i64, eps = 9.9999997473787516E-6 : f64} : tensor<2x?xf32, #tract.dims<[S]>> -> tensor<2x?xf32, #tract.dims<[S]>>
// CHECK-NEXT: return %[[Y]]
func.func @rms_norm(%x: tensor<2x?xf32, #tract.dims<[S]>>) -> tensor<2x?xf32, #tract.dims<[S]>> {
  %eps = tract.const dense<1.0e-5> : tensor<1x1xf32>
  %m = tract.reduce mean_of_squares %x {axes = array<i64: 1>} : tensor<2x?xf32, #tract.dims<[S]>> -> tensor<2x1xf32>
  %d = tract.add %m, %eps : (tensor<2x1xf32>, tensor<1x1xf32>) -> tensor<2x1xf32>
  %r = tract.rsqrt %d : tensor<2x1xf32>
  %y = tract.mul %x, %r : (tensor<2x?xf32, #tract.dims<[S]>>, tensor<2x1xf32>) -> tensor<2x?xf32, #tract.dims<[S]>>
  return %y : tensor<2x?xf32, #tract.dims<[S]>>
}

// -----

// As ONNX exports it: pow 2, ReduceMean (a sum divided by the length), add,
// sqrt, div.
// CHECK-LABEL: func.func @rms_norm_expanded
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x8xf32>)
// CHECK-NEXT: %[[Y:.*]] = tract.rms_norm %[[X]] {axis = 2 : i64, eps = 9.9999999747524271E-7 : f64} : tensor<1x3x8xf32> -> tensor<1x3x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @rms_norm_expanded(%x: tensor<1x3x8xf32>) -> tensor<1x3x8xf32> {
  %two = tract.const dense<2.0> : tensor<1x1x1xf32>
  %n = tract.const dense<8.0> : tensor<1x1x1xf32>
  %eps = tract.const dense<1.0e-6> : tensor<1x1x1xf32>
  %sq = tract.pow %x, %two : (tensor<1x3x8xf32>, tensor<1x1x1xf32>) -> tensor<1x3x8xf32>
  %s = tract.reduce sum %sq {axes = array<i64: 2>} : tensor<1x3x8xf32> -> tensor<1x3x1xf32>
  %m = tract.div %s, %n : (tensor<1x3x1xf32>, tensor<1x1x1xf32>) -> tensor<1x3x1xf32>
  %d = tract.add %eps, %m : (tensor<1x1x1xf32>, tensor<1x3x1xf32>) -> tensor<1x3x1xf32>
  %r = tract.sqrt %d : tensor<1x3x1xf32>
  %y = tract.div %x, %r : (tensor<1x3x8xf32>, tensor<1x3x1xf32>) -> tensor<1x3x8xf32>
  return %y : tensor<1x3x8xf32>
}

// -----

// As torch exports its rsqrt (Llama's RMSNorm): the mean of pow 2 as a sum
// times 1/n, then x * (1 / sqrt(...)).
// CHECK-LABEL: func.func @rms_norm_reciprocal
// CHECK-SAME: (%[[X:.*]]: tensor<1x?x8xf32, #tract.dims<[S]>>)
// CHECK-NEXT: %[[Y:.*]] = tract.rms_norm %[[X]] {axis = 2 : i64, eps = 9.9999997473787516E-6 : f64} : tensor<1x?x8xf32, #tract.dims<[S]>> -> tensor<1x?x8xf32, #tract.dims<[S]>>
// CHECK-NEXT: return %[[Y]]
func.func @rms_norm_reciprocal(%x: tensor<1x?x8xf32, #tract.dims<[S]>>) -> tensor<1x?x8xf32, #tract.dims<[S]>> {
  %two = tract.const dense<2.0> : tensor<1x1x1xf32>
  %inv = tract.const dense<0.125> : tensor<1x1x1xf32>
  %eps = tract.const dense<1.0e-5> : tensor<1x1x1xf32>
  %one = tract.const dense<1.0> : tensor<1x1x1xf32>
  %sq = tract.pow %x, %two : (tensor<1x?x8xf32, #tract.dims<[S]>>, tensor<1x1x1xf32>) -> tensor<1x?x8xf32, #tract.dims<[S]>>
  %s = tract.reduce sum %sq {axes = array<i64: 2>} : tensor<1x?x8xf32, #tract.dims<[S]>> -> tensor<1x?x1xf32, #tract.dims<[S]>>
  %m = tract.mul %s, %inv : (tensor<1x?x1xf32, #tract.dims<[S]>>, tensor<1x1x1xf32>) -> tensor<1x?x1xf32, #tract.dims<[S]>>
  %d = tract.add %m, %eps : (tensor<1x?x1xf32, #tract.dims<[S]>>, tensor<1x1x1xf32>) -> tensor<1x?x1xf32, #tract.dims<[S]>>
  %r = tract.sqrt %d : tensor<1x?x1xf32, #tract.dims<[S]>>
  %q = tract.div %one, %r : (tensor<1x1x1xf32>, tensor<1x?x1xf32, #tract.dims<[S]>>) -> tensor<1x?x1xf32, #tract.dims<[S]>>
  %y = tract.mul %x, %q : (tensor<1x?x8xf32, #tract.dims<[S]>>, tensor<1x?x1xf32, #tract.dims<[S]>>) -> tensor<1x?x8xf32, #tract.dims<[S]>>
  return %y : tensor<1x?x8xf32, #tract.dims<[S]>>
}

// -----

// Normalizing another tensor, or dividing the sum by the wrong length, is
// not an rms_norm.
// CHECK-LABEL: func.func @not_rms_norm
// CHECK-NOT: tract.rms_norm
func.func @not_rms_norm(%x: tensor<1x8xf32>, %z: tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>) {
  %eps = tract.const dense<1.0e-6> : tensor<1x1xf32>
  %n = tract.const dense<4.0> : tensor<1x1xf32>
  %m = tract.reduce mean_of_squares %x {axes = array<i64: 1>} : tensor<1x8xf32> -> tensor<1x1xf32>
  %d = tract.add %m, %eps : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %r = tract.rsqrt %d : tensor<1x1xf32>
  %0 = tract.mul %z, %r : (tensor<1x8xf32>, tensor<1x1xf32>) -> tensor<1x8xf32>
  %sq = tract.mul %x, %x : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %s = tract.reduce sum %sq {axes = array<i64: 1>} : tensor<1x8xf32> -> tensor<1x1xf32>
  %m2 = tract.div %s, %n : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %d2 = tract.add %m2, %eps : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %r2 = tract.rsqrt %d2 : tensor<1x1xf32>
  %1 = tract.mul %x, %r2 : (tensor<1x8xf32>, tensor<1x1xf32>) -> tensor<1x8xf32>
  return %0, %1 : tensor<1x8xf32>, tensor<1x8xf32>
}

// -----

// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<2x5xf32>)
// CHECK-NEXT: %[[Y:.*]] = tract.softmax %[[X]] {axes = array<i64: 1>} : tensor<2x5xf32> -> tensor<2x5xf32>
// CHECK-NEXT: %[[Z:.*]] = tract.softmax %[[X]] {axes = array<i64: 0>} : tensor<2x5xf32> -> tensor<2x5xf32>
// CHECK-NEXT: return %[[Y]], %[[Z]]
func.func @softmax(%x: tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>) {
  %max = tract.reduce max %x {axes = array<i64: 1>} : tensor<2x5xf32> -> tensor<2x1xf32>
  %c = tract.sub %x, %max : (tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x5xf32>
  %e = tract.exp %c : tensor<2x5xf32>
  %s = tract.reduce sum %e {axes = array<i64: 1>} : tensor<2x5xf32> -> tensor<2x1xf32>
  %y = tract.div %e, %s : (tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x5xf32>
  %e2 = tract.exp %x : tensor<2x5xf32>
  %s2 = tract.reduce sum %e2 {axes = array<i64: 0>} : tensor<2x5xf32> -> tensor<1x5xf32>
  %z = tract.div %e2, %s2 : (tensor<2x5xf32>, tensor<1x5xf32>) -> tensor<2x5xf32>
  return %y, %z : tensor<2x5xf32>, tensor<2x5xf32>
}

// -----

// The max over another axis than the sum: softmax of the shifted input.
// CHECK-LABEL: func.func @softmax_of_shifted
// CHECK: %[[C:.*]] = tract.sub
// CHECK-NEXT: %[[Y:.*]] = tract.softmax %[[C]] {axes = array<i64: 1>}
// CHECK-NEXT: return %[[Y]]
func.func @softmax_of_shifted(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %max = tract.reduce max %x {axes = array<i64: 0>} : tensor<2x5xf32> -> tensor<1x5xf32>
  %c = tract.sub %x, %max : (tensor<2x5xf32>, tensor<1x5xf32>) -> tensor<2x5xf32>
  %e = tract.exp %c : tensor<2x5xf32>
  %s = tract.reduce sum %e {axes = array<i64: 1>} : tensor<2x5xf32> -> tensor<2x1xf32>
  %y = tract.div %e, %s : (tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

// exp(x) divided by the sum of something else is not a softmax.
// CHECK-LABEL: func.func @not_softmax
// CHECK-NOT: tract.softmax
func.func @not_softmax(%x: tensor<2x5xf32>, %w: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %e = tract.exp %x : tensor<2x5xf32>
  %s = tract.reduce sum %w {axes = array<i64: 1>} : tensor<2x5xf32> -> tensor<2x1xf32>
  %y = tract.div %e, %s : (tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

// Layer normalization as ONNX exports it (mean, sub, pow 2, mean, add eps,
// sqrt, div, * gamma + beta): the dialect has no layer_norm op, so it
// becomes the centering, an rms_norm of the centered value, and the affine.
// CHECK-LABEL: func.func @layer_norm_expanded
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x8xf32>)
// CHECK-DAG: %[[INV:.*]] = tract.const dense<1.250000e-01> : tensor<1x1x1xf32>
// CHECK-DAG: %[[G:.*]] = tract.const dense<2.000000e+00> : tensor<1x1x8xf32>
// CHECK-DAG: %[[B:.*]] = tract.const dense<5.000000e-01> : tensor<1x1x8xf32>
// CHECK: %[[S:.*]] = tract.reduce sum %[[X]] {axes = array<i64: 2>}
// CHECK-NEXT: %[[M:.*]] = tract.mul %[[S]], %[[INV]]
// CHECK-NEXT: %[[C:.*]] = tract.sub %[[X]], %[[M]]
// CHECK-NEXT: %[[N:.*]] = tract.rms_norm %[[C]] {axis = 2 : i64, eps = 9.9999997473787516E-6 : f64}
// CHECK-NEXT: %[[Y:.*]] = tract.mul %[[N]], %[[G]]
// CHECK-NEXT: %[[Z:.*]] = tract.add %[[Y]], %[[B]]
// CHECK-NEXT: return %[[Z]]
func.func @layer_norm_expanded(%x: tensor<1x3x8xf32>) -> tensor<1x3x8xf32> {
  %two = tract.const dense<2.0> : tensor<1x1x1xf32>
  %n = tract.const dense<8.0> : tensor<1x1x1xf32>
  %eps = tract.const dense<1.0e-5> : tensor<1x1x1xf32>
  %gamma = tract.const dense<2.0> : tensor<1x1x8xf32>
  %beta = tract.const dense<0.5> : tensor<1x1x8xf32>
  %s = tract.reduce sum %x {axes = array<i64: 2>} : tensor<1x3x8xf32> -> tensor<1x3x1xf32>
  %mean = tract.div %s, %n : (tensor<1x3x1xf32>, tensor<1x1x1xf32>) -> tensor<1x3x1xf32>
  %c = tract.sub %x, %mean : (tensor<1x3x8xf32>, tensor<1x3x1xf32>) -> tensor<1x3x8xf32>
  %sq = tract.pow %c, %two : (tensor<1x3x8xf32>, tensor<1x1x1xf32>) -> tensor<1x3x8xf32>
  %vs = tract.reduce sum %sq {axes = array<i64: 2>} : tensor<1x3x8xf32> -> tensor<1x3x1xf32>
  %var = tract.div %vs, %n : (tensor<1x3x1xf32>, tensor<1x1x1xf32>) -> tensor<1x3x1xf32>
  %d = tract.add %var, %eps : (tensor<1x3x1xf32>, tensor<1x1x1xf32>) -> tensor<1x3x1xf32>
  %r = tract.sqrt %d : tensor<1x3x1xf32>
  %y = tract.div %c, %r : (tensor<1x3x8xf32>, tensor<1x3x1xf32>) -> tensor<1x3x8xf32>
  %g = tract.mul %y, %gamma : (tensor<1x3x8xf32>, tensor<1x1x8xf32>) -> tensor<1x3x8xf32>
  %z = tract.add %g, %beta : (tensor<1x3x8xf32>, tensor<1x1x8xf32>) -> tensor<1x3x8xf32>
  return %z : tensor<1x3x8xf32>
}

// -----

// The variance of x itself divided into the centered x is no normalization
// of one value: nothing is recognized.
// CHECK-LABEL: func.func @layer_norm_of_another_value_kept
// CHECK-NOT: tract.rms_norm
// CHECK: tract.sqrt
func.func @layer_norm_of_another_value_kept(%x: tensor<1x3x8xf32>) -> tensor<1x3x8xf32> {
  %n = tract.const dense<8.0> : tensor<1x1x1xf32>
  %eps = tract.const dense<1.0e-5> : tensor<1x1x1xf32>
  %s = tract.reduce sum %x {axes = array<i64: 2>} : tensor<1x3x8xf32> -> tensor<1x3x1xf32>
  %mean = tract.div %s, %n : (tensor<1x3x1xf32>, tensor<1x1x1xf32>) -> tensor<1x3x1xf32>
  %c = tract.sub %x, %mean : (tensor<1x3x8xf32>, tensor<1x3x1xf32>) -> tensor<1x3x8xf32>
  %sq = tract.mul %x, %x : (tensor<1x3x8xf32>, tensor<1x3x8xf32>) -> tensor<1x3x8xf32>
  %vs = tract.reduce sum %sq {axes = array<i64: 2>} : tensor<1x3x8xf32> -> tensor<1x3x1xf32>
  %var = tract.div %vs, %n : (tensor<1x3x1xf32>, tensor<1x1x1xf32>) -> tensor<1x3x1xf32>
  %d = tract.add %var, %eps : (tensor<1x3x1xf32>, tensor<1x1x1xf32>) -> tensor<1x3x1xf32>
  %r = tract.sqrt %d : tensor<1x3x1xf32>
  %y = tract.div %c, %r : (tensor<1x3x8xf32>, tensor<1x3x1xf32>) -> tensor<1x3x8xf32>
  return %y : tensor<1x3x8xf32>
}

// -----

// x * relu6(x + 3) / 6 as ONNX HardSwish-less exporters write it (the
// clip as max then min).
// CHECK-LABEL: func.func @hard_swish_relu6
// CHECK-SAME: (%[[X:.*]]: tensor<1x4xf32>)
// CHECK-NEXT: %[[Y:.*]] = tract.hard_swish %[[X]] : tensor<1x4xf32>
// CHECK-NEXT: return %[[Y]]
func.func @hard_swish_relu6(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %three = tract.const dense<3.0> : tensor<1x1xf32>
  %zero = tract.const dense<0.0> : tensor<1x1xf32>
  %six = tract.const dense<6.0> : tensor<1x1xf32>
  %a = tract.add %x, %three : (tensor<1x4xf32>, tensor<1x1xf32>) -> tensor<1x4xf32>
  %lo = tract.max %a, %zero : (tensor<1x4xf32>, tensor<1x1xf32>) -> tensor<1x4xf32>
  %r = tract.min %lo, %six : (tensor<1x4xf32>, tensor<1x1xf32>) -> tensor<1x4xf32>
  %m = tract.mul %x, %r : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %y = tract.div %m, %six : (tensor<1x4xf32>, tensor<1x1xf32>) -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}

// -----

// The division by 6 merged into a later scale: hard_swish times 6 times
// that scale.
// CHECK-LABEL: func.func @hard_swish_scaled
// CHECK-SAME: (%[[X:.*]]: tensor<1x4xf32>)
// CHECK-DAG: %[[K:.*]] = tract.const dense<3.000000e+00> : tensor<1x1xf32>
// CHECK: %[[H:.*]] = tract.hard_swish %[[X]] : tensor<1x4xf32>
// CHECK-NEXT: %[[Y:.*]] = tract.mul %[[H]], %[[K]]
// CHECK-NEXT: return %[[Y]]
func.func @hard_swish_scaled(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %three = tract.const dense<3.0> : tensor<1x1xf32>
  %zero = tract.const dense<0.0> : tensor<1x1xf32>
  %six = tract.const dense<6.0> : tensor<1x1xf32>
  %half = tract.const dense<0.5> : tensor<1x1xf32>
  %a = tract.add %three, %x : (tensor<1x1xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %hi = tract.min %a, %six : (tensor<1x4xf32>, tensor<1x1xf32>) -> tensor<1x4xf32>
  %r = tract.max %hi, %zero : (tensor<1x4xf32>, tensor<1x1xf32>) -> tensor<1x4xf32>
  %m = tract.mul %r, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %y = tract.mul %m, %half : (tensor<1x4xf32>, tensor<1x1xf32>) -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}

// -----

// x * hard_sigmoid(x) with alpha 1/6 and beta 1/2, as the ONNX frontend
// expands HardSigmoid.
// CHECK-LABEL: func.func @hard_swish_hard_sigmoid
// CHECK-SAME: (%[[X:.*]]: tensor<2x4xf32>)
// CHECK-NEXT: %[[Y:.*]] = tract.hard_swish %[[X]] : tensor<2x4xf32>
// CHECK-NEXT: return %[[Y]]
func.func @hard_swish_hard_sigmoid(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %alpha = tract.const dense<0.166666672> : tensor<1x1xf32>
  %beta = tract.const dense<0.5> : tensor<1x1xf32>
  %zero = tract.const dense<0.0> : tensor<1x1xf32>
  %one = tract.const dense<1.0> : tensor<1x1xf32>
  %s = tract.mul %x, %alpha : (tensor<2x4xf32>, tensor<1x1xf32>) -> tensor<2x4xf32>
  %a = tract.add %s, %beta : (tensor<2x4xf32>, tensor<1x1xf32>) -> tensor<2x4xf32>
  %lo = tract.max %a, %zero : (tensor<2x4xf32>, tensor<1x1xf32>) -> tensor<2x4xf32>
  %hs = tract.min %lo, %one : (tensor<2x4xf32>, tensor<1x1xf32>) -> tensor<2x4xf32>
  %y = tract.mul %x, %hs : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Other constants (relu6(x + 2), hard_sigmoid's default alpha 0.2), or the
// clip of another value: no hard_swish.
// CHECK-LABEL: func.func @hard_swish_lookalikes_kept
// CHECK-NOT: tract.hard_swish
// CHECK: return
func.func @hard_swish_lookalikes_kept(%x: tensor<1x4xf32>, %z: tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) {
  %two = tract.const dense<2.0> : tensor<1x1xf32>
  %three = tract.const dense<3.0> : tensor<1x1xf32>
  %zero = tract.const dense<0.0> : tensor<1x1xf32>
  %six = tract.const dense<6.0> : tensor<1x1xf32>
  %one = tract.const dense<1.0> : tensor<1x1xf32>
  %alpha = tract.const dense<0.2> : tensor<1x1xf32>
  %beta = tract.const dense<0.5> : tensor<1x1xf32>
  %a = tract.add %x, %two : (tensor<1x4xf32>, tensor<1x1xf32>) -> tensor<1x4xf32>
  %lo = tract.max %a, %zero : (tensor<1x4xf32>, tensor<1x1xf32>) -> tensor<1x4xf32>
  %r = tract.min %lo, %six : (tensor<1x4xf32>, tensor<1x1xf32>) -> tensor<1x4xf32>
  %m = tract.mul %x, %r : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %s = tract.mul %x, %alpha : (tensor<1x4xf32>, tensor<1x1xf32>) -> tensor<1x4xf32>
  %b = tract.add %s, %beta : (tensor<1x4xf32>, tensor<1x1xf32>) -> tensor<1x4xf32>
  %lo2 = tract.max %b, %zero : (tensor<1x4xf32>, tensor<1x1xf32>) -> tensor<1x4xf32>
  %hs = tract.min %lo2, %one : (tensor<1x4xf32>, tensor<1x1xf32>) -> tensor<1x4xf32>
  %n = tract.mul %x, %hs : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %c = tract.add %z, %three : (tensor<1x4xf32>, tensor<1x1xf32>) -> tensor<1x4xf32>
  %lo3 = tract.max %c, %zero : (tensor<1x4xf32>, tensor<1x1xf32>) -> tensor<1x4xf32>
  %r3 = tract.min %lo3, %six : (tensor<1x4xf32>, tensor<1x1xf32>) -> tensor<1x4xf32>
  %o = tract.mul %x, %r3 : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  return %m, %n, %o : tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>
}
