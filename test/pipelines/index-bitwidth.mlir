// RUN: tract-opt --tract-lower-to-llvm='index-bitwidth=32' %s | FileCheck %s

// On a 32-bit target (armv7, wasm32) index is as wide as a pointer, all the
// way: the memref descriptors are C's {void *, void *, intptr_t,
// intptr_t[rank], intptr_t[rank]} and the runtime's allocator takes size_t
// (runtime/tract_runtime.h). Only the entry checks compute in i64, from the
// dims sign-extended: their ranges and overflow checks are int64's.
// CHECK:       llvm.func @tract_buffer_aligned_alloc(i32, i32) -> !llvm.ptr
// CHECK-LABEL: llvm.func internal @main.body(
// CHECK-SAME:    %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32)
// CHECK-SAME:    -> !llvm.struct<(ptr, ptr, i32, array<2 x i32>, array<2 x i32>)>
// CHECK-NOT:     {{: i64$|i64 to|to i64|\(i64|i64\)|x i64}}
// CHECK:         llvm.call @tract_buffer_aligned_alloc(%{{.*}}, %{{.*}}) : (i32, i32) -> !llvm.ptr
// CHECK-NOT:     {{: i64$|i64 to|to i64|\(i64|i64\)|x i64}}
// CHECK-LABEL: llvm.func @main(
// CHECK-SAME:    -> !llvm.struct<(struct<(ptr, ptr, i32, array<2 x i32>, array<2 x i32>)>, i32)>
// CHECK:         %[[S:.*]] = llvm.sext %{{.*}} : i32 to i64
// CHECK:         llvm.icmp "sle" %[[S]], %{{.*}} : i64
// CHECK:         llvm.call @tract_set_error(%{{.*}}, %[[S]]) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, i64) -> i32
module attributes {dlti.dl_spec = #dlti.dl_spec<index = 32 : i64>, tract.symbols = ["S"]} {
  func.func @main(%x: tensor<?x4xf32, #tract.dims<[S]>> {tract.name = "x"}) -> tensor<4x?xf32, #tract.dims<[S]>> {
    %0 = tract.exp %x : tensor<?x4xf32, #tract.dims<[S]>>
    %1 = tract.move_axis %0 {from = 1 : i64, to = 0 : i64} : tensor<?x4xf32, #tract.dims<[S]>> -> tensor<4x?xf32, #tract.dims<[S]>>
    return %1 : tensor<4x?xf32, #tract.dims<[S]>>
  }
}
