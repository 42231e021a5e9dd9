// RUN: tract-opt %s | FileCheck %s
// Round trip: what is printed parses back to the same text.
// RUN: tract-opt %s | tract-opt | FileCheck %s

// CHECK-LABEL: func.func @constants
func.func @constants() -> (tensor<2x2xf32>, tensor<3xi64>, tensor<ui8>) {
  // CHECK: tract.const dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
  %0 = tract.const dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  // CHECK: tract.const dense<[1, 2, 3]> : tensor<3xi64>
  %1 = tract.const dense<[1, 2, 3]> : tensor<3xi64>
  // CHECK: tract.const dense<7> : tensor<ui8>
  %2 = tract.const dense<7> : tensor<ui8>
  return %0, %1, %2 : tensor<2x2xf32>, tensor<3xi64>, tensor<ui8>
}

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<1x?x64xf32>, %i: tensor<4xi32>) -> tensor<1x?x64xf32> {
  // CHECK: %[[A:.*]] = tract.abs %{{.*}} : tensor<1x?x64xf32>
  %a = tract.abs %x : tensor<1x?x64xf32>
  // CHECK: tract.neg %[[A]] : tensor<1x?x64xf32>
  %b = tract.neg %a : tensor<1x?x64xf32>
  // CHECK: tract.square
  %c = tract.square %b : tensor<1x?x64xf32>
  // CHECK: tract.exp
  %d = tract.exp %c : tensor<1x?x64xf32>
  // CHECK: tract.ln
  %e = tract.ln %d : tensor<1x?x64xf32>
  // CHECK: tract.sqrt
  %f = tract.sqrt %e : tensor<1x?x64xf32>
  // CHECK: tract.rsqrt
  %g = tract.rsqrt %f : tensor<1x?x64xf32>
  // CHECK: tract.recip
  %h = tract.recip %g : tensor<1x?x64xf32>
  // CHECK: tract.tanh
  %j = tract.tanh %h : tensor<1x?x64xf32>
  // CHECK: tract.sigmoid
  %k = tract.sigmoid %j : tensor<1x?x64xf32>
  // CHECK: tract.abs %{{.*}} : tensor<4xi32>
  %l = tract.abs %i : tensor<4xi32>
  return %k : tensor<1x?x64xf32>
}

// CHECK-LABEL: func.func @binary
func.func @binary(%x: tensor<1x?x64xf32>, %bias: tensor<1x1x64xf32>, %s: tensor<1x1x1xf32>) -> tensor<1x?x64xf32> {
  // CHECK: tract.add %{{.*}}, %{{.*}} : (tensor<1x?x64xf32>, tensor<1x1x64xf32>) -> tensor<1x?x64xf32>
  %0 = tract.add %x, %bias : (tensor<1x?x64xf32>, tensor<1x1x64xf32>) -> tensor<1x?x64xf32>
  // CHECK: tract.sub {{.*}} -> tensor<1x?x64xf32>
  %1 = tract.sub %0, %s : (tensor<1x?x64xf32>, tensor<1x1x1xf32>) -> tensor<1x?x64xf32>
  // CHECK: tract.mul {{.*}} -> tensor<1x?x64xf32>
  %2 = tract.mul %s, %1 : (tensor<1x1x1xf32>, tensor<1x?x64xf32>) -> tensor<1x?x64xf32>
  // CHECK: tract.div
  %3 = tract.div %2, %bias : (tensor<1x?x64xf32>, tensor<1x1x64xf32>) -> tensor<1x?x64xf32>
  // CHECK: tract.min
  %4 = tract.min %3, %x : (tensor<1x?x64xf32>, tensor<1x?x64xf32>) -> tensor<1x?x64xf32>
  // CHECK: tract.max
  %5 = tract.max %4, %x : (tensor<1x?x64xf32>, tensor<1x?x64xf32>) -> tensor<1x?x64xf32>
  // CHECK: tract.pow
  %6 = tract.pow %5, %s : (tensor<1x?x64xf32>, tensor<1x1x1xf32>) -> tensor<1x?x64xf32>
  return %6 : tensor<1x?x64xf32>
}

// A dynamic dim facing a static one other than 1 takes the static size.
// CHECK-LABEL: func.func @broadcast_dynamic
func.func @broadcast_dynamic(%a: tensor<?x8xi64>, %b: tensor<4x?xi64>) -> tensor<4x8xi64> {
  // CHECK: tract.add {{.*}} -> tensor<4x8xi64>
  %0 = tract.add %a, %b : (tensor<?x8xi64>, tensor<4x?xi64>) -> tensor<4x8xi64>
  return %0 : tensor<4x8xi64>
}
