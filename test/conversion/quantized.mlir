// RUN: tract-opt --tract-lower-to-linalg --split-input-file --verify-diagnostics %s | FileCheck %s

// Quantized values travel as their integers: a cast between two types of
// one scale moves the zero point in i32 and saturates to the result's
// integers (u8 with zero point 0 to i8 with zero point -128: q - 128).
// CHECK-LABEL: func.func @requantize(
// CHECK-SAME:    %{{.*}}: tensor<4xi8> {{.*}}) -> tensor<4xi8>
// CHECK:         arith.extui %{{.*}} : i8 to i32
// CHECK:         arith.constant dense<-128> : tensor<1xi32>
// CHECK:         arith.addi
// CHECK:         arith.constant dense<-128> : tensor<1xi32>
// CHECK:         arith.maxsi
// CHECK:         arith.constant dense<127> : tensor<1xi32>
// CHECK:         arith.minsi
// CHECK:         arith.trunci %{{.*}} : i32 to i8
func.func @requantize(%q: tensor<4x!quant.uniform<u8:f32, 0.5>>) -> tensor<4x!quant.uniform<i8:f32, 0.5:-128>> {
  %0 = tract.cast %q : tensor<4x!quant.uniform<u8:f32, 0.5>> to tensor<4x!quant.uniform<i8:f32, 0.5:-128>>
  return %0 : tensor<4x!quant.uniform<i8:f32, 0.5:-128>>
}

// -----

// Only casts and the arithmetic of TractElementwiseOps.td compute on
// quantized values; the importers dequantize the operands of the others.
func.func @negate(%q: tensor<4x!quant.uniform<i8:f32, 0.5>>) -> tensor<4x!quant.uniform<i8:f32, 0.5>> {
  // expected-error @+1 {{computes on quantized tensors, which only casts and add, sub, mul, div, min and max do in tract-mlir; dequantize its operands (cast them to f32) first}}
  %0 = tract.neg %q : tensor<4x!quant.uniform<i8:f32, 0.5>>
  return %0 : tensor<4x!quant.uniform<i8:f32, 0.5>>
}
