// RUN: tract-opt --tract-lower-to-llvm %s | FileCheck %s

// The whole path ends in the LLVM dialect: buffers are malloc'ed, the
// dynamic size comes from the input's descriptor, and nothing of the tract,
// linalg, tensor or memref dialects is left.
// CHECK:     llvm.func @malloc(i64) -> !llvm.ptr
// CHECK:     llvm.func @main(
// CHECK-SAME:  -> !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK:       llvm.intr.exp
// CHECK-NOT: {{tract\.|linalg\.|tensor\.|memref\.|unrealized}}
module attributes {tract.symbols = ["S"]} {
  func.func @main(%arg0: tensor<?x4xf32, #tract.dims<[S]>>) -> tensor<?x4xf32, #tract.dims<[S]>> {
    %0 = tract.exp %arg0 : tensor<?x4xf32, #tract.dims<[S]>>
    %1 = tract.mul %0, %arg0 : (tensor<?x4xf32, #tract.dims<[S]>>, tensor<?x4xf32, #tract.dims<[S]>>) -> tensor<?x4xf32, #tract.dims<[S]>>
    return %1 : tensor<?x4xf32, #tract.dims<[S]>>
  }
}
