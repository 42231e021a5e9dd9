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
  // expected-error @+1 {{requires the same element type for all operands}}
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

// -----

func.func @rm_axis_not_unit(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{axis 0 has dim 2, not 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tract.rm_axis %a {axis = 0 : i64} : tensor<2x3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @axis_out_of_range(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{from 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tract.move_axis %a {from = 2 : i64, to = 0 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @reshape_volume(%a: tensor<?x6xf32, #tract.dims<[S]>>) {
  // expected-error @+2 {{cannot reshape S,6 (volume 6*S) to S,4 (volume 4*S)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tract.reshape %a {at = 0 : i64, count = 2 : i64, to = #tract.shape<[S, 4]>} : tensor<?x6xf32, #tract.dims<[S]>> -> tensor<?x4xf32, #tract.dims<[S]>>
  return
}

// -----

func.func @concat_mismatch(%a: tensor<2x?xf32, #tract.dims<[S]>>, %b: tensor<2x?xf32, #tract.dims<[P]>>) {
  // expected-error @+2 {{input 1 has dim P on axis 1, expected S}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tract.concat %a, %b {axis = 0 : i64} : (tensor<2x?xf32, #tract.dims<[S]>>, tensor<2x?xf32, #tract.dims<[P]>>) -> tensor<4x?xf32, #tract.dims<[S]>>
  return
}

// -----

func.func @broadcast_to_smaller(%a: tensor<3x4xf32>) {
  // expected-error @+2 {{cannot broadcast dim 3 to 2 on axis 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tract.broadcast %a {shape = #tract.shape<[2, 4]>} : tensor<3x4xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @slice_past_end(%a: tensor<4xf32>) {
  // expected-error @+2 {{slice end 6 is past the dim 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tract.slice %a {axis = 0 : i64, start = #tract.dim<2>, end = #tract.dim<6>} : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @pad_lengths(%a: tensor<4x4xf32>) {
  // expected-error @+2 {{expected 2 pads before and after, got 1 and 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tract.pad %a {before = array<i64: 1>, after = array<i64: 1, 1>} : tensor<4x4xf32> -> tensor<6x5xf32>
  return
}

// -----

func.func @pad_value_type(%a: tensor<4xf32>) {
  // expected-error @+1 {{pad value of type 'i32' does not match the element type 'f32'}}
  %0 = tract.pad %a {before = array<i64: 1>, after = array<i64: 1>, value = 1 : i32} : tensor<4xf32> -> tensor<6xf32>
  return
}

// -----

func.func @conv_channels(%x: tensor<1x3x?xf32, #tract.dims<[S]>>, %k: tensor<8x4x3xf32>) {
  // expected-error @+2 {{input has 3 channels, kernel expects 4 (4 x group 1)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tract.conv %x, %k : (tensor<1x3x?xf32, #tract.dims<[S]>>, tensor<8x4x3xf32>) -> tensor<1x8x?xf32, #tract.dims<[S-2]>>
  return
}

// -----

func.func @conv_symbolic_kernel(%x: tensor<1x3x?xf32, #tract.dims<[S]>>, %k: tensor<8x3x?xf32, #tract.dims<[K]>>) {
  // expected-error @+2 {{kernel spatial dims must be positive constants, got K}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tract.conv %x, %k : (tensor<1x3x?xf32, #tract.dims<[S]>>, tensor<8x3x?xf32, #tract.dims<[K]>>) -> tensor<1x8x?xf32, #tract.dims<[S]>>
  return
}

// -----

func.func @conv_strides(%x: tensor<1x3x8x8xf32>, %k: tensor<8x3x3x3xf32>) {
  // expected-error @+2 {{expected 2 strides, got 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tract.conv %x, %k {strides = array<i64: 2>} : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x3x3xf32>
  return
}

// -----

func.func @einsum_arity(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{expression 'mk,kn->mn' names 2 inputs, got 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tract.einsum %a {expr = "mk,kn->mn"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @einsum_dims(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+2 {{axis 'k' has dims 3 and 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tract.einsum %a, %b {expr = "mk,kn->mn"} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @einsum_output(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{output axis 'z' appears in no input}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tract.einsum %a {expr = "mk->z"} : (tensor<2x3xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @reduce_axes(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{axes must be strictly increasing}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tract.reduce sum %a {axes = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<1x1xf32>
  return
}

// -----

func.func @reduce_any_float(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{all and any reduce booleans, and only they do}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tract.reduce any %a {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2x1xf32>
  return
}

// -----

func.func @gather_nd_symbolic_depth(%a: tensor<4x4xf32>, %i: tensor<2x?xi64, #tract.dims<[N]>>) {
  // expected-error @+2 {{the last indices dim N must be a constant in 1..2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tract.gather_nd %a, %i : (tensor<4x4xf32>, tensor<2x?xi64, #tract.dims<[N]>>) -> tensor<2xf32>
  return
}

// -----

func.func @select_types(%c: tensor<3xi1>, %a: tensor<3xf32>, %b: tensor<3xf16>) {
  // expected-error @+2 {{both values must have the same element type}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tract.select %c, %a, %b : (tensor<3xi1>, tensor<3xf32>, tensor<3xf16>) -> tensor<3xf32>
  return
}

// -----

func.func @cast_shape(%a: tensor<3xf32>) {
  // expected-error @+1 {{changes the shape from 3 to 4}}
  %0 = tract.cast %a : tensor<3xf32> to tensor<4xi32>
  return
}

// -----

func.func @sdpa_heads(%q: tensor<1x3x5x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x8xf32>) {
  // expected-error @+2 {{query heads 3 must be a multiple of key/value heads 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tract.sdpa %q, %k, %v : (tensor<1x3x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) -> tensor<1x3x5x8xf32>
  return
}

// -----

func.func @scan_chunk_type(%xs: tensor<?x4xf32, #tract.dims<[S]>>) {
  // expected-error @+1 {{body argument 0 has type 'tensor<2x4xf32>', expected 'tensor<1x4xf32>'}}
  %0 = tract.scan %xs attributes {num_states = 0 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>, output_axes = array<i64: 0>} {
  ^bb0(%x: tensor<2x4xf32>):
    tract.yield %x : tensor<2x4xf32>
  } : (tensor<?x4xf32, #tract.dims<[S]>>) -> tensor<?x4xf32, #tract.dims<[S]>>
  return
}

// -----

func.func @scan_iterations(%a: tensor<?x4xf32, #tract.dims<[S]>>, %b: tensor<?x4xf32, #tract.dims<[P]>>) {
  // expected-error @+1 {{scanned inputs disagree on the iteration count: S and P}}
  tract.scan %a, %b attributes {num_states = 0 : i64, scan_axes = array<i64: 0, 0>, scan_chunks = array<i64: 1, 1>, output_axes = array<i64>} {
  ^bb0(%x: tensor<1x4xf32>, %y: tensor<1x4xf32>):
    tract.yield
  } : (tensor<?x4xf32, #tract.dims<[S]>>, tensor<?x4xf32, #tract.dims<[P]>>) -> ()
  return
}

// -----

func.func @scan_state(%h: tensor<1x4xf32>, %xs: tensor<?x4xf32, #tract.dims<[S]>>) {
  // expected-error @+1 {{state 0 is yielded as 'tensor<1x4xf16>' but starts as 'tensor<1x4xf32>'}}
  %0 = tract.scan %h, %xs attributes {num_states = 1 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>, output_axes = array<i64>} {
  ^bb0(%s: tensor<1x4xf32>, %x: tensor<1x4xf32>):
    %c = tract.cast %s : tensor<1x4xf32> to tensor<1x4xf16>
    tract.yield %c : tensor<1x4xf16>
  } : (tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>) -> tensor<1x4xf32>
  return
}

// -----

func.func @if_yield(%c: tensor<i1>, %a: tensor<3xf32>) {
  // expected-error @+1 {{the else region yields 0 values of types}}
  %0 = tract.if %c : tensor<i1> -> tensor<3xf32> {
    tract.yield %a : tensor<3xf32>
  } else {
    tract.yield
  }
  return
}

// -----

func.func @if_condition(%c: tensor<2xi1>, %a: tensor<3xf32>) {
  // expected-error @+1 {{condition must have one element}}
  %0 = tract.if %c : tensor<2xi1> -> tensor<3xf32> {
    tract.yield %a : tensor<3xf32>
  } else {
    tract.yield %a : tensor<3xf32>
  }
  return
}

// -----

// expected-error @+1 {{expected a positive constant divisor at column 3 in 'S/P'}}
func.func @bad_quoted_dim(%a: tensor<?xf32, #tract.dims<["S/P"]>>) {
  return
}

// -----

// expected-error @+1 {{invalid symbol name 'a.b'}}
func.func @bad_symbol(%a: tensor<?xf32, #tract.dims<[a.b]>>) {
  return
}

// -----

// expected-error @+1 {{symbol 'P' is used in a shape but not declared in tract.symbols}}
module attributes {tract.symbols = ["S"]} {
  func.func @f(%a: tensor<?xf32, #tract.dims<[S+P]>>) {
    return
  }
}

// -----

// expected-error @+1 {{invalid assertion: expected a relation (>=, >, <=, <, ==) in 'S'}}
module attributes {tract.assertions = ["S"]} {
}

// -----

// expected-error @+1 {{invalid scenario assertion: expected a dim at column 1 in ''}}
module attributes {tract.scenarios = {tg = ["S == "]}} {
}

// -----

// expected-error @+1 {{'2S' is not a valid symbol name}}
module attributes {tract.symbols = ["2S"]} {
}

// -----

// expected-error @+1 {{tract.symbols belongs on the module}}
func.func @misplaced() attributes {tract.symbols = ["S"]} {
  return
}

// -----

func.func @resize_scales(%x: tensor<2x8xf32>) {
  // expected-error @+2 {{expected 2 scales, got 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tract.resize %x {sizes = #tract.shape<[2, 4]>, scales = array<f64: 0.5>} : tensor<2x8xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @resize_roi(%x: tensor<2x8xf32>) {
  // expected-error @+2 {{tf_crop_and_resize expects 4 roi values, got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tract.resize %x {sizes = #tract.shape<[2, 4]>, coord_transform = #tract<coord_transform tf_crop_and_resize>} : tensor<2x8xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @resize_scale_values(%x: tensor<2x8xf32>, %s: tensor<1xf32>) {
  // expected-error @+2 {{scale_values must be one scale per axis (2), in place of scales}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tract.resize %x scales %s : tensor<1xf32> {sizes = #tract.shape<[2, 4]>} : tensor<2x8xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @resize_roi_values(%x: tensor<2x8xf32>, %r: tensor<4xf32>) {
  // expected-error @+2 {{roi_values must be 4 values of tf_crop_and_resize, in place of roi}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tract.resize %x roi %r : tensor<4xf32> {sizes = #tract.shape<[2, 4]>} : tensor<2x8xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @bind_dims_count(%v: tensor<3xi64>) {
  // expected-error @+1 {{binds 2 dims from values of shape [3]; it needs a 1-D tensor of 2 elements}}
  tract.bind_dims %v {dims = #tract.shape<[a, b]>} : tensor<3xi64>
  return
}
