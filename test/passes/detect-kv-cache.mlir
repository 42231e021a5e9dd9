// RUN: tract-opt %s --tract-detect-kv-cache | FileCheck %s
// RUN: tract-opt %s --tract-detect-kv-cache --tract-externalize-state | FileCheck %s --check-prefix=STATE
// RUN: tract-opt %s --tract-detect-kv-cache --tract-unfold-kv-cache | FileCheck %s --check-prefix=UNFOLD

// A decoder step as exported with its cache: the past keys, whose shape
// gives the positions of the new ones, concatenated with the new keys and
// returned. The past input and the present output go; the cache is a
// dyn_kv_cache named after the input, and the past's shape the values of
// its dims.
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:.*]]: tensor<1x?x8xf32, #tract.dims<[S]>> {tract.name = "x"})
// CHECK-SAME:    -> (tensor<3xi64> {tract.name = "past_shape"})
// CHECK:         %[[SHAPE:.*]] = tract.shape_value {dims = #tract.shape<[1, P, 8]>} : tensor<3xi64>
// CHECK:         %[[K:.*]] = tract.add %[[X]], %[[X]]
// CHECK:         %[[C:.*]] = tract.dyn_kv_cache %[[K]] {axis = 1 : i64, name = "past.key", past = #tract.dim<P>} : tensor<1x?x8xf32, #tract.dims<[S]>> -> tensor<1x?x8xf32, #tract.dims<[P+S]>>
// CHECK:         return %[[SHAPE]]
// Run and compiled, the cache is a state of the past's length, named after
// it, with no step counter.
// STATE-LABEL: func.func @main(
// STATE-SAME:    %{{.*}}: tensor<1x?x8xf32, #tract.dims<[S]>> {tract.name = "x"}
// STATE-SAME:    %[[PAST:.*]]: tensor<1x?x8xf32, #tract.dims<[P]>> {tract.name = "past.key", tract.state}
// STATE-SAME:    -> (tensor<3xi64> {tract.name = "past_shape"}, tensor<1x?x8xf32, #tract.dims<[P+S]>> {tract.name = "past.key", tract.state})
// STATE-NOT:     pulse_step
// STATE:         %[[ALL:.*]] = tract.concat %[[PAST]], %{{.*}} {axis = 1 : i64}
// STATE:         return %{{.*}}, %[[ALL]]
// Unfolded (tract's unfold-kv-cache), the cache is an input of its name
// again, appended to the inputs, and its concat an output NAME_concat.
// UNFOLD-LABEL: func.func @main(
// UNFOLD-SAME:    %[[X:.*]]: tensor<1x?x8xf32, #tract.dims<[S]>> {tract.name = "x"}, %[[PAST:.*]]: tensor<1x?x8xf32, #tract.dims<[P]>> {tract.name = "past.key"})
// UNFOLD-SAME:    -> (tensor<3xi64> {tract.name = "past_shape"}, tensor<1x?x8xf32, #tract.dims<[P+S]>> {tract.name = "past.key_concat"})
// UNFOLD:         %[[K:.*]] = tract.add %[[X]], %[[X]]
// UNFOLD-NEXT:    %[[ALL:.*]] = tract.concat %[[PAST]], %[[K]] {axis = 1 : i64} : (tensor<1x?x8xf32, #tract.dims<[P]>>, tensor<1x?x8xf32, #tract.dims<[S]>>) -> tensor<1x?x8xf32, #tract.dims<[P+S]>>
// UNFOLD-NEXT:    return %{{.*}}, %[[ALL]]
module attributes {tract.symbols = ["P", "S"]} {
  func.func @main(%x: tensor<1x?x8xf32, #tract.dims<[S]>> {tract.name = "x"}, %past: tensor<1x?x8xf32, #tract.dims<[P]>> {tract.name = "past.key"}) -> (tensor<3xi64> {tract.name = "past_shape"}, tensor<1x?x8xf32, #tract.dims<[P+S]>> {tract.name = "present.key"}) {
    %shape = tract.shape_of %past : tensor<1x?x8xf32, #tract.dims<[P]>> -> tensor<3xi64>
    %k = tract.add %x, %x : (tensor<1x?x8xf32, #tract.dims<[S]>>, tensor<1x?x8xf32, #tract.dims<[S]>>) -> tensor<1x?x8xf32, #tract.dims<[S]>>
    %all = tract.concat %past, %k {axis = 1 : i64} : (tensor<1x?x8xf32, #tract.dims<[P]>>, tensor<1x?x8xf32, #tract.dims<[S]>>) -> tensor<1x?x8xf32, #tract.dims<[P+S]>>
    return %shape, %all : tensor<3xi64>, tensor<1x?x8xf32, #tract.dims<[P+S]>>
  }
}
