// RUN: tract-opt --tract-lower-to-linalg --split-input-file %s | FileCheck %s

// What the entry checks need and lowering erases, recorded on each public
// function (tract-entry-checks reads them): the tract shapes of its
// inputs; the dims of intermediate results that nothing proves
// non-negative, and the sizes in bytes of those that could be larger than
// every input, each with its node.
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    tract.guarded_dims = [{dim = #tract.dim<S-2>, node = "tail"}]
// CHECK-SAME:    tract.guarded_sizes = [{bytes = #tract.dim<4*S*S>, node = "outer", type = "S,S of f32"}]
// CHECK-SAME:    tract.input_shapes = [#tract.shape<[S]>, #tract.shape<[]>]
module attributes {tract.symbols = ["S"]} {
  func.func @main(%x: tensor<?xf32, #tract.dims<[S]>>, %n: i64)
      -> (tensor<?xf32, #tract.dims<[S-2]>>, tensor<?x?xf32, #tract.dims<[S,S]>>) {
    %0 = tract.slice %x {axis = 0 : i64, start = #tract.dim<2>, end = #tract.dim<S>} : tensor<?xf32, #tract.dims<[S]>> -> tensor<?xf32, #tract.dims<[S-2]>> loc("tail")
    %1 = tract.add_axis %x {axis = 1 : i64} : tensor<?xf32, #tract.dims<[S]>> -> tensor<?x1xf32, #tract.dims<[S]>>
    %2 = tract.add_axis %x {axis = 0 : i64} : tensor<?xf32, #tract.dims<[S]>> -> tensor<1x?xf32, #tract.dims<[S]>>
    %3 = tract.mul %1, %2 : (tensor<?x1xf32, #tract.dims<[S]>>, tensor<1x?xf32, #tract.dims<[S]>>) -> tensor<?x?xf32, #tract.dims<[S,S]>> loc("outer")
    return %0, %3 : tensor<?xf32, #tract.dims<[S-2]>>, tensor<?x?xf32, #tract.dims<[S,S]>>
  }
}

// -----

// Under an assertion that proves it, a dim needs no check; a private
// function has no entry of its own, so nothing is recorded on it.
// CHECK-LABEL: func.func private @helper(
// CHECK-NOT:     tract.input_shapes
// CHECK-LABEL: func.func @main(
// CHECK-NOT:     tract.guarded_dims
// CHECK-SAME:    tract.input_shapes = [#tract.shape<[S]>]
module attributes {tract.symbols = ["S"], tract.assertions = ["S >= 2"]} {
  func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  func.func @main(%x: tensor<?xf32, #tract.dims<[S]>>) -> tensor<?xf32, #tract.dims<[S-2]>> {
    %0 = tract.slice %x {axis = 0 : i64, start = #tract.dim<2>, end = #tract.dim<S>} : tensor<?xf32, #tract.dims<[S]>> -> tensor<?xf32, #tract.dims<[S-2]>> loc("tail")
    return %0 : tensor<?xf32, #tract.dims<[S-2]>>
  }
}
