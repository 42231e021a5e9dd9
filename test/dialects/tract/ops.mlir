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
func.func @unary(%x: tensor<1x?x64xf32, #tract.dims<[S]>>, %i: tensor<4xi32>) -> tensor<1x?x64xf32, #tract.dims<[S]>> {
  // CHECK: %[[A:.*]] = tract.abs %{{.*}} : tensor<1x?x64xf32, #tract.dims<[S]>>
  %a = tract.abs %x : tensor<1x?x64xf32, #tract.dims<[S]>>
  // CHECK: tract.neg %[[A]] : tensor<1x?x64xf32, #tract.dims<[S]>>
  %b = tract.neg %a : tensor<1x?x64xf32, #tract.dims<[S]>>
  // CHECK: tract.square
  %c = tract.square %b : tensor<1x?x64xf32, #tract.dims<[S]>>
  // CHECK: tract.exp
  %d = tract.exp %c : tensor<1x?x64xf32, #tract.dims<[S]>>
  // CHECK: tract.ln
  %e = tract.ln %d : tensor<1x?x64xf32, #tract.dims<[S]>>
  // CHECK: tract.sqrt
  %f = tract.sqrt %e : tensor<1x?x64xf32, #tract.dims<[S]>>
  // CHECK: tract.rsqrt
  %g = tract.rsqrt %f : tensor<1x?x64xf32, #tract.dims<[S]>>
  // CHECK: tract.recip
  %h = tract.recip %g : tensor<1x?x64xf32, #tract.dims<[S]>>
  // CHECK: tract.tanh
  %j = tract.tanh %h : tensor<1x?x64xf32, #tract.dims<[S]>>
  // CHECK: tract.sigmoid
  %k = tract.sigmoid %j : tensor<1x?x64xf32, #tract.dims<[S]>>
  // CHECK: tract.abs %{{.*}} : tensor<4xi32>
  %l = tract.abs %i : tensor<4xi32>
  return %k : tensor<1x?x64xf32, #tract.dims<[S]>>
}

// CHECK-LABEL: func.func @binary
func.func @binary(%x: tensor<1x?x64xf32, #tract.dims<[S]>>, %bias: tensor<1x1x64xf32>, %s: tensor<1x1x1xf32>) -> tensor<1x?x64xf32, #tract.dims<[S]>> {
  // CHECK: tract.add %{{.*}}, %{{.*}} : (tensor<1x?x64xf32, #tract.dims<[S]>>, tensor<1x1x64xf32>) -> tensor<1x?x64xf32, #tract.dims<[S]>>
  %0 = tract.add %x, %bias : (tensor<1x?x64xf32, #tract.dims<[S]>>, tensor<1x1x64xf32>) -> tensor<1x?x64xf32, #tract.dims<[S]>>
  // CHECK: tract.sub {{.*}} -> tensor<1x?x64xf32, #tract.dims<[S]>>
  %1 = tract.sub %0, %s : (tensor<1x?x64xf32, #tract.dims<[S]>>, tensor<1x1x1xf32>) -> tensor<1x?x64xf32, #tract.dims<[S]>>
  // CHECK: tract.mul {{.*}} -> tensor<1x?x64xf32, #tract.dims<[S]>>
  %2 = tract.mul %s, %1 : (tensor<1x1x1xf32>, tensor<1x?x64xf32, #tract.dims<[S]>>) -> tensor<1x?x64xf32, #tract.dims<[S]>>
  // CHECK: tract.div
  %3 = tract.div %2, %bias : (tensor<1x?x64xf32, #tract.dims<[S]>>, tensor<1x1x64xf32>) -> tensor<1x?x64xf32, #tract.dims<[S]>>
  // CHECK: tract.min
  %4 = tract.min %3, %x : (tensor<1x?x64xf32, #tract.dims<[S]>>, tensor<1x?x64xf32, #tract.dims<[S]>>) -> tensor<1x?x64xf32, #tract.dims<[S]>>
  // CHECK: tract.max
  %5 = tract.max %4, %x : (tensor<1x?x64xf32, #tract.dims<[S]>>, tensor<1x?x64xf32, #tract.dims<[S]>>) -> tensor<1x?x64xf32, #tract.dims<[S]>>
  // CHECK: tract.pow
  %6 = tract.pow %5, %s : (tensor<1x?x64xf32, #tract.dims<[S]>>, tensor<1x1x1xf32>) -> tensor<1x?x64xf32, #tract.dims<[S]>>
  return %6 : tensor<1x?x64xf32, #tract.dims<[S]>>
}

// A symbolic dim facing a static one other than 1 takes the static size.
// CHECK-LABEL: func.func @broadcast_dynamic
func.func @broadcast_dynamic(%a: tensor<?x8xi64, #tract.dims<[N]>>, %b: tensor<4x?xi64, #tract.dims<[M]>>) -> tensor<4x8xi64> {
  // CHECK: tract.add {{.*}} -> tensor<4x8xi64>
  %0 = tract.add %a, %b : (tensor<?x8xi64, #tract.dims<[N]>>, tensor<4x?xi64, #tract.dims<[M]>>) -> tensor<4x8xi64>
  return %0 : tensor<4x8xi64>
}

// Symbolic dims are canonical: the printed form is the simplified one.
// CHECK-LABEL: func.func @symbolic_dims
// CHECK-SAME: tensor<1x1x?xf32, #tract.dims<[(S+1)/4]>>
// CHECK-SAME: tensor<?xf32, #tract.dims<["P#S"]>>
// CHECK-SAME: tensor<?x?xf32, #tract.dims<[min(S,8), P+2*S]>>
func.func @symbolic_dims(%a: tensor<1x1x?xf32, #tract.dims<[(S-3)/4+1]>>, %b: tensor<?xf32, #tract.dims<["S#P"]>>, %c: tensor<?x?xf32, #tract.dims<[min(8, S), S+P+S]>>) {
  return
}

// Broadcasting symbolic dims: S against 1 is S, P against S is P#S.
// CHECK-LABEL: func.func @broadcast_symbolic
// CHECK: tract.mul {{.*}} -> tensor<?x?xf32, #tract.dims<[S, "P#S"]>>
func.func @broadcast_symbolic(%a: tensor<?x?xf32, #tract.dims<[S, S]>>, %b: tensor<1x?xf32, #tract.dims<[P]>>) -> tensor<?x?xf32, #tract.dims<[S, "S#P"]>> {
  %0 = tract.mul %a, %b : (tensor<?x?xf32, #tract.dims<[S, S]>>, tensor<1x?xf32, #tract.dims<[P]>>) -> tensor<?x?xf32, #tract.dims<[S, "S#P"]>>
  return %0 : tensor<?x?xf32, #tract.dims<[S, "S#P"]>>
}
