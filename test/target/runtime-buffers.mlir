// RUN: tract-opt --tract-use-runtime-buffers --split-input-file --verify-diagnostics %s | FileCheck %s

// The memref lowering's generic allocation calls go to the runtime's pool.
// CHECK-LABEL: llvm.func @tract_buffer_aligned_alloc(i64, i64) -> !llvm.ptr
// CHECK:       llvm.func @tract_buffer_free(!llvm.ptr)
// CHECK:       llvm.func @body(%[[N:.*]]: i64)
// CHECK:         %[[P:.*]] = llvm.call @tract_buffer_aligned_alloc(%{{.*}}, %[[N]])
// CHECK:         llvm.call @tract_buffer_free(%[[P]])
// CHECK-NOT:   _mlir_memref_to_llvm
llvm.func @_mlir_memref_to_llvm_aligned_alloc(i64, i64) -> !llvm.ptr
llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)
llvm.func @body(%n: i64) {
  %a = llvm.mlir.constant(64 : index) : i64
  %p = llvm.call @_mlir_memref_to_llvm_aligned_alloc(%a, %n) : (i64, i64) -> !llvm.ptr
  llvm.call @_mlir_memref_to_llvm_free(%p) : (!llvm.ptr) -> ()
  llvm.return
}

// -----

// An unaligned allocation would not fit the pool's tensors.
// expected-error @+1 {{memref allocations must be aligned to use the runtime's buffers}}
llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
