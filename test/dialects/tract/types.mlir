// RUN: tract-opt %s | FileCheck %s
// RUN: tract-opt %s | tract-opt | FileCheck %s

// Constants and symbolic shapes in tensor types.

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

// CHECK-LABEL: func.func @broadcast_dynamic
func.func @broadcast_dynamic(%a: tensor<?x8xi64, #tract.dims<[N]>>, %b: tensor<4x?xi64, #tract.dims<[M]>>) -> tensor<4x8xi64> {
  // CHECK: tract.add {{.*}} -> tensor<4x8xi64>
  %0 = tract.add %a, %b : (tensor<?x8xi64, #tract.dims<[N]>>, tensor<4x?xi64, #tract.dims<[M]>>) -> tensor<4x8xi64>
  return %0 : tensor<4x8xi64>
}

// CHECK-LABEL: func.func @symbolic_dims
// CHECK-SAME: tensor<1x1x?xf32, #tract.dims<[(S+1)/4]>>
// CHECK-SAME: tensor<?xf32, #tract.dims<["P#S"]>>
// CHECK-SAME: tensor<?x?xf32, #tract.dims<[min(S,8), P+2*S]>>
func.func @symbolic_dims(%a: tensor<1x1x?xf32, #tract.dims<[(S-3)/4+1]>>, %b: tensor<?xf32, #tract.dims<["S#P"]>>, %c: tensor<?x?xf32, #tract.dims<[min(8, S), S+P+S]>>) {
  return
}

// CHECK-LABEL: func.func @broadcast_symbolic
// CHECK: tract.mul {{.*}} -> tensor<?x?xf32, #tract.dims<[S, "P#S"]>>
func.func @broadcast_symbolic(%a: tensor<?x?xf32, #tract.dims<[S, S]>>, %b: tensor<1x?xf32, #tract.dims<[P]>>) -> tensor<?x?xf32, #tract.dims<[S, "S#P"]>> {
  %0 = tract.mul %a, %b : (tensor<?x?xf32, #tract.dims<[S, S]>>, tensor<1x?xf32, #tract.dims<[P]>>) -> tensor<?x?xf32, #tract.dims<[S, "S#P"]>>
  return %0 : tensor<?x?xf32, #tract.dims<[S, "S#P"]>>
}
