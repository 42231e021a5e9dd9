// RUN: tract-opt --tract-lower-to-llvm %s | FileCheck %s

// The whole path ends in the LLVM dialect: buffers come from the runtime's
// pool (kept between runs; a dense result becomes the caller's tensor
// without a copy), the
// dynamic size comes from the input's descriptor, and nothing of the tract,
// linalg, tensor or memref dialects is left. The model's code is an internal
// function; `main` checks the input, calls it and adds a status to the
// results. The exponential is a polynomial on vectors (its floor and FMAs),
// not a call.
// CHECK:     llvm.func @tract_buffer_aligned_alloc(i64, i64) -> !llvm.ptr
// CHECK:     llvm.func @tract_set_error(!llvm.ptr, ...) -> i32
// CHECK:     llvm.func internal @main.body(
// CHECK-SAME:  -> !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK:       llvm.call @tract_buffer_aligned_alloc(
// CHECK:       llvm.intr.floor{{.*}}vector<4xf32>
// CHECK:       llvm.intr.fma{{.*}}vector<4xf32>
// CHECK:     llvm.mlir.global internal constant @main.check0("input 'input_0' gives S = %lld (axis 0), over the limit of 2^31 on a dim\00")
// CHECK:     llvm.mlir.global internal constant @main.check1("input 'input_0' is %lld,%lld, the model expects S,4 (axis 1 should be 4)\00")
// CHECK:     llvm.func @main(
// CHECK-SAME:  -> !llvm.struct<(struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, i32)>
// CHECK:       llvm.call @tract_set_error
// CHECK:       llvm.call @main.body
// CHECK-NOT: {{tract\.|linalg\.|tensor\.|memref\.|unrealized|_mlir_memref_to_llvm|@aligned_alloc|@free\(}}
module attributes {tract.symbols = ["S"]} {
  func.func @main(%arg0: tensor<?x4xf32, #tract.dims<[S]>>) -> tensor<?x4xf32, #tract.dims<[S]>> {
    %0 = tract.exp %arg0 : tensor<?x4xf32, #tract.dims<[S]>>
    %1 = tract.mul %0, %arg0 : (tensor<?x4xf32, #tract.dims<[S]>>, tensor<?x4xf32, #tract.dims<[S]>>) -> tensor<?x4xf32, #tract.dims<[S]>>
    return %1 : tensor<?x4xf32, #tract.dims<[S]>>
  }
}
