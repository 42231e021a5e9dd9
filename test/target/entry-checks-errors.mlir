// RUN: tract-opt --tract-entry-checks --split-input-file --verify-diagnostics %s

// The checks come from what tract-lower-to-linalg records on a public
// function: one it did not lower cannot be checked.
module {
  // expected-error @+1 {{has no 'tract.input_shapes': tract-lower-to-linalg records them}}
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// The dialect verifies the recorded facts' form.
// expected-error @+1 {{tract.input_shapes is an array of #tract.shape}}
func.func @shapes(%x: tensor<4xf32>) -> tensor<4xf32> attributes {tract.input_shapes = [4]} {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{tract.guarded_dims is an array of dictionaries}}
func.func @guards(%x: tensor<4xf32>) -> tensor<4xf32> attributes {tract.input_shapes = [#tract.shape<[4]>], tract.guarded_dims = [#tract.dim<S>]} {
  return %x : tensor<4xf32>
}

// -----

// A guard without its node.
// expected-error @+1 {{has an invalid 'tract.guarded_sizes'}}
func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> attributes {tract.input_shapes = [#tract.shape<[S]>], tract.guarded_sizes = [{bytes = #tract.dim<4*S>}]} {
  return %x : tensor<?xf32>
}
