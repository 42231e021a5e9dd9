// RUN: tract-opt %s -tract-approximate-math | FileCheck %s

// f32 vectors of exp, tanh, log and erf become polynomials on the vector
// registers; scalars and f64 are left to libm.
// CHECK-LABEL: func.func @vectors
// CHECK-NOT: math.erf
// CHECK-NOT: math.tanh
// CHECK: return
func.func @vectors(%x: vector<16xf32>) -> (vector<16xf32>, vector<16xf32>) {
  %e = math.erf %x : vector<16xf32>
  %t = math.tanh %x : vector<16xf32>
  return %e, %t : vector<16xf32>, vector<16xf32>
}

// CHECK-LABEL: func.func @left_to_libm
// CHECK: math.erf %{{.*}} : f32
// CHECK: math.erf %{{.*}} : vector<4xf64>
func.func @left_to_libm(%x: f32, %y: vector<4xf64>) -> (f32, vector<4xf64>) {
  %e = math.erf %x : f32
  %f = math.erf %y : vector<4xf64>
  return %e, %f : f32, vector<4xf64>
}
