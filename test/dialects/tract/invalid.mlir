// RUN: tract-opt %s -split-input-file -verify-diagnostics

func.func @rank_mismatch(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{operands must have equal ranks, got 2 and 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tract.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @no_broadcast(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+2 {{dims 3 and 4 on axis 1 do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tract.mul %a, %b : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @wrong_result_shape(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<1x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tract.sub %a, %b : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
  return
}

// -----

func.func @mixed_element_types(%a: tensor<2xf32>, %b: tensor<2xf16>) {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = tract.add %a, %b : (tensor<2xf32>, tensor<2xf16>) -> tensor<2xf32>
  return
}

// -----

func.func @float_only(%a: tensor<2xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of floats with symbolic dims}}
  %0 = tract.exp %a : tensor<2xi32>
  return
}

// -----

func.func @const_type_mismatch() {
  // expected-error @+1 {{'tract.const' op failed to verify that all of {value, output} have same type}}
  %0 = "tract.const"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<3xf32>
  return
}

// -----

func.func @dynamic_dim_without_expression(%a: tensor<?xf32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of floats with symbolic dims}}
  %0 = tract.exp %a : tensor<?xf32>
  return
}

// -----

// expected-error @+1 {{dim 4 is constant: make it a static dim of the type}}
func.func @constant_symbolic_dim(%a: tensor<?xf32, #tract.dims<[S-S+4]>>) {
  return
}

// -----

// expected-error @+1 {{expected a positive divisor}}
func.func @bad_divisor(%a: tensor<?xf32, #tract.dims<[S/0]>>) {
  return
}

// -----

// S against 3 broadcasts to 3 (S must be 1 or 3), not to S.
func.func @symbolic_result_mismatch(%a: tensor<?xf32, #tract.dims<[S]>>, %b: tensor<3xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<3xf32>' are incompatible with return type(s) of operation 'tensor<?xf32, #tract.dims<[S]>>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tract.add %a, %b : (tensor<?xf32, #tract.dims<[S]>>, tensor<3xf32>) -> tensor<?xf32, #tract.dims<[S]>>
  return
}
