// RUN: tract-opt %s -tract-declutter -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @integer_mul_by_zero
// CHECK-NEXT: %[[Z:.*]] = tract.const dense<0> : tensor<2x3xi32>
// CHECK-NEXT: return %[[Z]]
func.func @integer_mul_by_zero(%x: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %zero = tract.const dense<0> : tensor<1x1xi32>
  %0 = tract.mul %zero, %x : (tensor<1x1xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// A symbolic result shape: the zero is broadcast to it.
// CHECK-LABEL: func.func @integer_mul_by_zero_symbolic
// CHECK-NEXT: %[[Z:.*]] = tract.const dense<0> : tensor<1x1xi64>
// CHECK-NEXT: %[[B:.*]] = tract.broadcast %[[Z]] {shape = #tract.shape<[S, 3]>} : tensor<1x1xi64> -> tensor<?x3xi64, #tract.dims<[S]>>
// CHECK-NEXT: return %[[B]]
func.func @integer_mul_by_zero_symbolic(%x: tensor<?x3xi64, #tract.dims<[S]>>) -> tensor<?x3xi64, #tract.dims<[S]>> {
  %zero = tract.const dense<0> : tensor<1x1xi64>
  %0 = tract.mul %x, %zero : (tensor<?x3xi64, #tract.dims<[S]>>, tensor<1x1xi64>) -> tensor<?x3xi64, #tract.dims<[S]>>
  return %0 : tensor<?x3xi64, #tract.dims<[S]>>
}

// -----

// Floats keep x * 0: NaN * 0 and Inf * 0 are NaN, -1 * 0 is -0.
// CHECK-LABEL: func.func @float_mul_by_zero_is_kept
// CHECK: tract.mul
func.func @float_mul_by_zero_is_kept(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = tract.const dense<0.0> : tensor<4xf32>
  %0 = tract.mul %x, %zero : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Booleans are not integers here (mul is a logical and).
// CHECK-LABEL: func.func @bool_mul_by_false_is_kept
// CHECK: tract.mul
func.func @bool_mul_by_false_is_kept(%x: tensor<4xi1>) -> tensor<4xi1> {
  %f = tract.const dense<false> : tensor<4xi1>
  %0 = tract.mul %x, %f : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @div_by_constant
// CHECK-SAME: (%[[X:.*]]: tensor<2x4xf32>)
// CHECK-NEXT: %[[R:.*]] = tract.const dense<{{\[}}[2.500000e-01], [-2.000000e+00]]> : tensor<2x1xf32>
// CHECK-NEXT: %[[M:.*]] = tract.mul %[[X]], %[[R]] : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: return %[[M]]
func.func @div_by_constant(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %c = tract.const dense<[[4.0], [-0.5]]> : tensor<2x1xf32>
  %0 = tract.div %x, %c : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func.func @div_by_splat
// CHECK-NEXT: tract.const dense<3.332520e-01> : tensor<1xf16>
func.func @div_by_splat(%x: tensor<8xf16>) -> tensor<8xf16> {
  %c = tract.const dense<3.0> : tensor<1xf16>
  %0 = tract.div %x, %c : (tensor<8xf16>, tensor<1xf16>) -> tensor<8xf16>
  return %0 : tensor<8xf16>
}

// -----

// A model's input divided by a constant and rounded to integers next
// (QuantizeLinear's x / scale) stays a division: x * (1 / scale) is one
// ulp off for some x, and on a half step (0.5 / 0.0392157 here, a pixel of
// an image scaled by 1/255 quantized with a scale of 10/255) that ulp
// moves the rounded value. Inside the graph the product is kept.
// CHECK-LABEL: func.func @rounded_input_div_is_kept
// CHECK: %[[Q:.*]] = tract.div %arg0
// CHECK: tract.round_even %[[Q]]
// CHECK: %[[P:.*]] = tract.mul
// CHECK: tract.round_even %[[P]]
func.func @rounded_input_div_is_kept(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %c = tract.const dense<0.0392156877> : tensor<1xf32>
  %0 = tract.div %x, %c : (tensor<8xf32>, tensor<1xf32>) -> tensor<8xf32>
  %1 = tract.round_even %0 : tensor<8xf32>
  %2 = tract.exp %x : tensor<8xf32>
  %3 = tract.div %2, %c : (tensor<8xf32>, tensor<1xf32>) -> tensor<8xf32>
  %4 = tract.round_even %3 : tensor<8xf32>
  return %1, %4 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Integer division truncates: never a multiplication.
// CHECK-LABEL: func.func @integer_div_is_kept
// CHECK: tract.div
// CHECK-NOT: tract.mul
func.func @integer_div_is_kept(%x: tensor<8xi32>) -> tensor<8xi32> {
  %c = tract.const dense<3> : tensor<1xi32>
  %0 = tract.div %x, %c : (tensor<8xi32>, tensor<1xi32>) -> tensor<8xi32>
  return %0 : tensor<8xi32>
}

// -----

// A constant divided by a variable stays a division.
// CHECK-LABEL: func.func @div_of_constant_is_kept
// CHECK: tract.div
func.func @div_of_constant_is_kept(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c = tract.const dense<3.0> : tensor<8xf32>
  %0 = tract.div %c, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Casts and reshapes to the same type, and moves of an axis to itself, are
// inference no-ops.
// CHECK-LABEL: func.func @inference_noops
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @inference_noops(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tract.cast %x : tensor<2x3xf32> to tensor<2x3xf32>
  %1 = tract.reshape %0 {at = 0 : i64, count = 2 : i64, to = #tract.shape<[2, 3]>} : tensor<2x3xf32> -> tensor<2x3xf32>
  %2 = tract.move_axis %1 {from = 1 : i64, to = 1 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %2 : tensor<2x3xf32>
}

// -----

// Two scalings and two shifts in a row become one of each.
// CHECK-LABEL: func.func @combine_constants
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x3xf32>)
// CHECK-DAG: %[[S:.*]] = tract.const dense<{{\[}}[{{\[}}6.000000e+00], [-6.000000e+00]]]> : tensor<1x2x1xf32>
// CHECK-DAG: %[[T:.*]] = tract.const dense<5.000000e-01> : tensor<1x1x1xf32>
// CHECK: %[[M:.*]] = tract.mul %[[X]], %[[S]] : (tensor<1x2x3xf32>, tensor<1x2x1xf32>) -> tensor<1x2x3xf32>
// CHECK-NEXT: %[[A:.*]] = tract.add %[[M]], %[[T]] : (tensor<1x2x3xf32>, tensor<1x1x1xf32>) -> tensor<1x2x3xf32>
// CHECK-NEXT: return %[[A]]
func.func @combine_constants(%x: tensor<1x2x3xf32>) -> tensor<1x2x3xf32> {
  %two = tract.const dense<2.0> : tensor<1x1x1xf32>
  %s = tract.const dense<[[[3.0], [-3.0]]]> : tensor<1x2x1xf32>
  %one = tract.const dense<1.0> : tensor<1x1x1xf32>
  %half = tract.const dense<-0.5> : tensor<1x1x1xf32>
  %0 = tract.mul %two, %x : (tensor<1x1x1xf32>, tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  %1 = tract.mul %0, %s : (tensor<1x2x3xf32>, tensor<1x2x1xf32>) -> tensor<1x2x3xf32>
  %2 = tract.add %1, %one : (tensor<1x2x3xf32>, tensor<1x1x1xf32>) -> tensor<1x2x3xf32>
  %3 = tract.add %half, %2 : (tensor<1x1x1xf32>, tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  return %3 : tensor<1x2x3xf32>
}

// -----

// The inner product has another user: both stay.
// CHECK-LABEL: func.func @shared_inner_product_is_kept
// CHECK-COUNT-2: tract.mul %
func.func @shared_inner_product_is_kept(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %two = tract.const dense<2.0> : tensor<1xf32>
  %three = tract.const dense<3.0> : tensor<1xf32>
  %0 = tract.mul %x, %two : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %1 = tract.mul %0, %three : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// A broadcast into an element-wise op that broadcasts anyway is dropped
// (tract's declutter does the same); one that sizes the result stays.
// CHECK-LABEL: func.func @implicit_broadcast
// CHECK-NEXT: %[[WIDE:.*]] = tract.broadcast %arg0 {shape = #tract.shape<[2, 4, 3]>}
// CHECK-NEXT: %[[SUM:.*]] = tract.add %arg0, %arg1 : (tensor<2x1x3xf32>, tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
// CHECK-NEXT: %[[SEL:.*]] = tract.select %arg2, %arg0, %arg0 : (tensor<2x4x1xi1>, tensor<2x1x3xf32>, tensor<2x1x3xf32>) -> tensor<2x4x3xf32>
// CHECK-NEXT: %[[KEPT:.*]] = tract.mul %[[WIDE]], %arg0
// CHECK-NEXT: return %[[SUM]], %[[SEL]], %[[KEPT]]
func.func @implicit_broadcast(%x: tensor<2x1x3xf32>, %y: tensor<2x4x3xf32>, %c: tensor<2x4x1xi1>) -> (tensor<2x4x3xf32>, tensor<2x4x3xf32>, tensor<2x4x3xf32>) {
  %b = tract.broadcast %x {shape = #tract.shape<[2, 4, 3]>} : tensor<2x1x3xf32> -> tensor<2x4x3xf32>
  %0 = tract.add %b, %y : (tensor<2x4x3xf32>, tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  %1 = tract.select %c, %b, %x : (tensor<2x4x1xi1>, tensor<2x4x3xf32>, tensor<2x1x3xf32>) -> tensor<2x4x3xf32>
  %2 = tract.mul %b, %x : (tensor<2x4x3xf32>, tensor<2x1x3xf32>) -> tensor<2x4x3xf32>
  return %0, %1, %2 : tensor<2x4x3xf32>, tensor<2x4x3xf32>, tensor<2x4x3xf32>
}
