// RUN: tract-opt %s -tract-declutter -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @neutral_elements
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @neutral_elements(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %zero = tract.const dense<0.0> : tensor<1x1xf32>
  %one = tract.const dense<1.0> : tensor<1x1xf32>
  %0 = tract.add %x, %zero : (tensor<2x3xf32>, tensor<1x1xf32>) -> tensor<2x3xf32>
  %1 = tract.mul %one, %0 : (tensor<1x1xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = tract.sub %1, %zero : (tensor<2x3xf32>, tensor<1x1xf32>) -> tensor<2x3xf32>
  return %2 : tensor<2x3xf32>
}

// -----

// Adding zero to a smaller tensor broadcasts it: the add must stay.
// CHECK-LABEL: func.func @broadcasting_zero_is_kept
// CHECK: tract.add {{.*}} -> tensor<4x3xf32>
func.func @broadcasting_zero_is_kept(%x: tensor<1x3xf32>) -> tensor<4x3xf32> {
  %zero = tract.const dense<0.0> : tensor<4x1xf32>
  %0 = tract.add %x, %zero : (tensor<1x3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @double_negation
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @double_negation(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = tract.neg %x : tensor<8xf32>
  %1 = tract.neg %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// CHECK-LABEL: func.func @constant_folding
// CHECK-DAG: %[[C:.*]] = tract.const dense<[-1.500000e+01, -1.800000e+01]> : tensor<2xf32>
// CHECK-DAG: %[[I:.*]] = tract.const dense<[13, -11]> : tensor<2xi32>
// CHECK-NOT: tract.add
// CHECK-NOT: tract.sub
// CHECK-NOT: tract.mul
// CHECK-NOT: tract.neg
// CHECK: return %[[C]], %[[I]]
func.func @constant_folding() -> (tensor<2xf32>, tensor<2xi32>) {
  %a = tract.const dense<[1.0, 2.0]> : tensor<2xf32>
  %b = tract.const dense<[4.0, 4.0]> : tensor<2xf32>
  %sum = tract.add %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %prod = tract.mul %sum, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %diff = tract.sub %prod, %sum : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %neg = tract.neg %diff : tensor<2xf32>
  %i = tract.const dense<[3, -7]> : tensor<2xi32>
  %j = tract.const dense<[-10, 4]> : tensor<2xi32>
  %k = tract.sub %i, %j : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  %l = tract.neg %k : tensor<2xi32>
  %m = tract.neg %l : tensor<2xi32>
  %n = tract.sub %m, %j : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  %o = tract.add %n, %j : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return %neg, %o : tensor<2xf32>, tensor<2xi32>
}

// -----

// Booleans have no arithmetic neutral element.
// CHECK-LABEL: func.func @booleans_untouched
// CHECK: tract.add
func.func @booleans_untouched(%x: tensor<3xi1>) -> tensor<3xi1> {
  %f = tract.const dense<false> : tensor<3xi1>
  %0 = tract.add %x, %f : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}
