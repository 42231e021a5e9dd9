// RUN: tract-opt --tract-lower-to-linalg --split-input-file --verify-diagnostics %s | FileCheck %s

// Symbols bind from the inputs' dims; a size-1 axis broadcasts through its
// indexing map; results are copied into fresh tensors.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[BC:.*]] = affine_map<(d0, d1, d2) -> (d0, 0, d2)>
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:.*]]: tensor<1x?x4xf32> {bufferization.writable = false}, %[[Y:.*]]: tensor<1x1x4xf32> {bufferization.writable = false}) -> tensor<1x?x4xf32>
// CHECK-SAME:    attributes {tract.input_names = ["", ""], tract.input_shapes = [#tract.shape<[1, S, 4]>, #tract.shape<[1, 1, 4]>], tract.output_names = [""]}
// CHECK:         %[[C1:.*]] = arith.constant 1 : index
// CHECK:         %[[S:.*]] = tensor.dim %[[X]], %[[C1]]
// CHECK:         %[[E:.*]] = tensor.empty(%[[S]]) : tensor<1x?x4xf32>
// CHECK:         %[[ADD:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[BC]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[Y]] : tensor<1x?x4xf32>, tensor<1x1x4xf32>) outs(%[[E]] : tensor<1x?x4xf32>)
// CHECK:           arith.addf
// CHECK:         %[[V:.*]] = builtin.unrealized_conversion_cast %{{.*}} : tensor<1x?x4xf32, #tract.dims<[S]>> to tensor<1x?x4xf32>
// CHECK:         %[[D:.*]] = tensor.dim %[[V]], %{{.*}}
// CHECK:         %[[R:.*]] = tensor.empty(%[[D]]) : tensor<1x?x4xf32>
// CHECK:         %[[COPY:.*]] = linalg.copy ins(%[[V]] : tensor<1x?x4xf32>) outs(%[[R]] : tensor<1x?x4xf32>)
// CHECK:         return %[[COPY]]
module attributes {tract.symbols = ["S"]} {
  func.func @main(%arg0: tensor<1x?x4xf32, #tract.dims<[S]>>, %arg1: tensor<1x1x4xf32>) -> tensor<1x?x4xf32, #tract.dims<[S]>> {
    %0 = tract.add %arg0, %arg1 : (tensor<1x?x4xf32, #tract.dims<[S]>>, tensor<1x1x4xf32>) -> tensor<1x?x4xf32, #tract.dims<[S]>>
    return %0 : tensor<1x?x4xf32, #tract.dims<[S]>>
  }
}

// -----

// A dim `2*S+1` binds S by solving for it; dims of results are computed.
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:.*]]: tensor<?xf32> {bufferization.writable = false}) -> tensor<?xf32>
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK:         %[[D:.*]] = tensor.dim %[[X]], %[[C0]]
// CHECK:         %[[C1:.*]] = arith.constant 1 : index
// CHECK:         %[[M:.*]] = arith.subi %[[D]], %[[C1]]
// CHECK:         %[[C2:.*]] = arith.constant 2 : index
// CHECK:         %[[S:.*]] = arith.floordivsi %[[M]], %[[C2]]
// CHECK:         %[[S2:.*]] = arith.muli %[[S]], %{{.*}} : index
// CHECK:         %[[N:.*]] = arith.addi %[[S2]], %{{.*}} : index
// CHECK:         tensor.empty(%[[N]]) : tensor<?xf32>
module attributes {tract.symbols = ["S"]} {
  func.func @main(%arg0: tensor<?xf32, #tract.dims<[2*S+1]>>) -> tensor<?xf32, #tract.dims<[2*S+1]>> {
    %0 = tract.exp %arg0 : tensor<?xf32, #tract.dims<[2*S+1]>>
    return %0 : tensor<?xf32, #tract.dims<[2*S+1]>>
  }
}

// -----

// Unsigned integers become signless, with unsigned semantics in the body;
// integer division is guarded against zero.
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    tensor<4xi8> {bufferization.writable = false}, %{{.*}}: tensor<4xi8> {bufferization.writable = false}) -> tensor<4xi8>
// CHECK:         linalg.generic
// CHECK:           arith.cmpi eq
// CHECK:           arith.select
// CHECK:           arith.divui
// CHECK:         linalg.generic
// CHECK:           arith.cmpi ult
module {
  func.func @main(%arg0: tensor<4xui8>, %arg1: tensor<4xui8>) -> tensor<4xui8> {
    %0 = tract.div %arg0, %arg1 : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
    %1 = tract.lt %0, %arg1 : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
    %2 = tract.select %1, %0, %arg1 : (tensor<4xi1>, tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
    return %2 : tensor<4xui8>
  }
}

// -----

// Casts follow the source's signedness.
// CHECK-LABEL: func.func @main(
// CHECK:         arith.extui %{{.*}} : i8 to i32
// CHECK:         arith.uitofp %{{.*}} : i32 to f32
// CHECK:         arith.cmpf une
module {
  func.func @main(%arg0: tensor<3xui8>) -> tensor<3xi1> {
    %0 = tract.cast %arg0 : tensor<3xui8> to tensor<3xui32>
    %1 = tract.cast %0 : tensor<3xui32> to tensor<3xf32>
    %2 = tract.cast %1 : tensor<3xf32> to tensor<3xi1>
    return %2 : tensor<3xi1>
  }
}

// -----

// A symbol no input dim determines is an error.
module attributes {tract.symbols = ["B"]} {
  // expected-error @below {{symbol B is not determined by the dims of the inputs; give its value with --set B=N}}
  func.func @main(%x: tensor<1x3xf32>) -> tensor<?x3xf32, #tract.dims<[B]>> {
    %0 = tract.broadcast %x {shape = #tract.shape<[B, 3]>} : tensor<1x3xf32> -> tensor<?x3xf32, #tract.dims<[B]>>
    return %0 : tensor<?x3xf32, #tract.dims<[B]>>
  }
}
