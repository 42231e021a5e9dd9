// RUN: rm -rf %t && tract-opt --pass-pipeline='builtin.module(tract-gpu-kernels-from-linalg,canonicalize,tract-gpu-to-spirv,spirv.module(spirv-lower-abi-attrs,spirv-update-vce),tract-gpu-launch-with-runtime{spirv-dir=%t msl-dir=%t/msl})' %s | FileCheck %s
// RUN: spirv-val --target-env vulkan1.1 %t/tract_kernels.spv
// RUN: FileCheck %s --check-prefix=MSL < %t/msl/kernel_0.metal

// For Metal, the kernel as MSL from SPIRV-Cross: binding i is buffer i.
// MSL:      kernel void kernel_0(device {{.*}} kernel_0_arg_0 {{\[\[}}buffer(0){{\]\]}}, device {{.*}} kernel_0_arg_1 {{\[\[}}buffer(1){{\]\]}}, device {{.*}} kernel_0_arg_2 {{\[\[}}buffer(2){{\]\]}}, device {{.*}} kernel_0_arg_3 {{\[\[}}buffer(3){{\]\]}}
// MSL:      kernel_0_arg_2._m0[{{.*}}] = kernel_0_arg_0._m0[{{.*}}] * kernel_0_arg_1._m0[{{.*}}];

// The SPIR-V module becomes constant words (0x07230203 is SPIR-V's magic
// number), and each launch a call of the runtime with three arrays on the
// caller's stack: the buffers' pointers, their sizes in bytes, and their
// uses. %x is read (1), the weights are constant and read (5), %y is
// written and so also read (3: what the kernel does not write comes back
// as it was), the parameters read (1). A failed launch fails the run with
// the runtime's reason.
// CHECK-DAG:   llvm.mlir.global internal constant @tract_kernels.kernel_0.failed("the GPU kernel kernel_0 failed: %s\00")
// CHECK-DAG:   llvm.func @tract_fail(!llvm.ptr, ...) -> i32
// CHECK-DAG:   llvm.func @tract_last_error() -> !llvm.ptr
// CHECK-DAG:   llvm.mlir.global internal constant @tract_kernels.kernel_0.name("kernel_0\00")
// CHECK-DAG:   llvm.func @tract_gpu_record(!llvm.ptr, i64, !llvm.ptr, i32, i32, i32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-DAG:   llvm.func @tract_gpu_sync() -> i32
// CHECK-DAG:   llvm.mlir.global internal constant @tract_gpu.failed("the GPU kernels failed: %s\00")
// CHECK-DAG:   llvm.mlir.global internal constant @tract_kernels.spirv(dense<"0x03022307{{[0-9A-F]+}}"> : tensor<{{[0-9]+}}xi32>) {{.*}} : !llvm.array<{{[0-9]+}} x i32>
// CHECK-NOT:   gpu.module
// CHECK-NOT:   spirv.module
// CHECK-LABEL: func.func @scale(
// CHECK:         %[[POINTERS:.*]] = llvm.alloca %{{.*}} x !llvm.ptr
// CHECK:         %[[SIZES:.*]] = llvm.alloca %{{.*}} x i64
// CHECK:         %[[FLAGS:.*]] = llvm.alloca %{{.*}} x i32
// CHECK:         scf.if
// CHECK:           %[[X:.*]] = memref.extract_aligned_pointer_as_index
// CHECK:           %[[XBYTES:.*]] = arith.muli %{{.*}}, %{{.*}} : i64
// CHECK:           %[[XSLOT:.*]] = llvm.getelementptr %[[POINTERS]][0]
// CHECK:           %[[XSIZE:.*]] = llvm.getelementptr %[[SIZES]][0]
// CHECK-NEXT:      llvm.store %[[XBYTES]], %[[XSIZE]] : i64, !llvm.ptr
// CHECK-NEXT:      %[[READ:.*]] = arith.constant 1 : i32
// CHECK-NEXT:      %[[XFLAG:.*]] = llvm.getelementptr %[[FLAGS]][0]
// CHECK-NEXT:      llvm.store %[[READ]], %[[XFLAG]] : i32, !llvm.ptr
// CHECK:           %[[CONSTANT:.*]] = arith.constant 5 : i32
// CHECK-NEXT:      %[[WFLAG:.*]] = llvm.getelementptr %[[FLAGS]][1]
// CHECK-NEXT:      llvm.store %[[CONSTANT]], %[[WFLAG]] : i32, !llvm.ptr
// CHECK:           %[[WRITTEN:.*]] = arith.constant 2 : i32
// CHECK-NEXT:      %[[YFLAG:.*]] = llvm.getelementptr %[[FLAGS]][2]
// CHECK-NEXT:      llvm.store %[[WRITTEN]], %[[YFLAG]] : i32, !llvm.ptr
// CHECK:           %[[PFLAG:.*]] = llvm.getelementptr %[[FLAGS]][3]
// CHECK:           %[[STATUS:.*]] = llvm.call @tract_gpu_record(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[POINTERS]], %[[SIZES]], %[[FLAGS]])
// CHECK:           %[[FAILED:.*]] = arith.cmpi ne, %[[STATUS]], %{{.*}} : i32
// CHECK-NEXT:      scf.if %[[FAILED]] {
// CHECK-NEXT:        %[[WHY:.*]] = llvm.call @tract_last_error()
// CHECK-NEXT:        %[[MESSAGE:.*]] = llvm.mlir.addressof @tract_kernels.kernel_0.failed
// CHECK-NEXT:        llvm.call @tract_fail(%[[MESSAGE]], %[[WHY]])
// The launch joins the open batch, which runs before the function returns.
// CHECK:         %[[SYNCED:.*]] = llvm.call @tract_gpu_sync() : () -> i32
// CHECK:         %[[SYNCFAILED:.*]] = arith.cmpi ne, %[[SYNCED]], %{{.*}} : i32
// CHECK-NEXT:    scf.if %[[SYNCFAILED]] {
// CHECK-NEXT:      %[[WHY:.*]] = llvm.call @tract_last_error()
// CHECK-NEXT:      %[[MESSAGE:.*]] = llvm.mlir.addressof @tract_gpu.failed
// CHECK-NEXT:      llvm.call @tract_fail(%[[MESSAGE]], %[[WHY]])
// CHECK:         return
// CHECK-NOT:   gpu.launch_func
memref.global "private" constant @weights : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

func.func @scale(%x: memref<?x4xf32>, %y: memref<?x4xf32>) {
  %w = memref.get_global @weights : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %w : memref<?x4xf32>, memref<4xf32>) outs(%y : memref<?x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  }
  return
}

// Launches with only their preparation between them (index arithmetic,
// parameter stores, an allocation) make one batch, which runs before the
// first host op that touches memory: here the load, not the allocation of
// %r. After it nothing is open: the deallocations and the return need no
// sync. (A copy between buffers would not end the batch: it becomes a
// kernel too.)
// CHECK-LABEL: func.func @batch(
// CHECK:         memref.alloc() : memref<8xf32>
// CHECK:         llvm.call @tract_gpu_record(
// CHECK-NOT:     llvm.call @tract_gpu_sync
// CHECK:         llvm.call @tract_gpu_record(
// CHECK-NOT:     llvm.call @tract_gpu_sync
// CHECK:         memref.alloc() : memref<8xf32>
// CHECK-NOT:     llvm.call @tract_gpu_sync
// CHECK:         llvm.call @tract_gpu_record(
// CHECK:         llvm.call @tract_gpu_sync()
// CHECK:         memref.load
// CHECK-NOT:     llvm.call @tract_gpu_sync
// CHECK:         return
func.func @batch(%x: memref<8xf32>, %y: memref<8xf32>, %z: memref<8xf32>) {
  %tmp = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<8xf32>) outs(%tmp : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%tmp : memref<8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  %r = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<8xf32>) outs(%r : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  %c0 = arith.constant 0 : index
  %first = memref.load %r[%c0] : memref<8xf32>
  memref.store %first, %z[%c0] : memref<8xf32>
  memref.dealloc %r : memref<8xf32>
  memref.dealloc %tmp : memref<8xf32>
  return
}

// Freeing a buffer the open batch only reads needs nothing: it was copied.
// Freeing one it writes tells the runtime first that those bytes are dead
// (tract_gpu_discard on the buffer's address and its bytes: 4 times its
// 8 elements), so that the sync copies nothing back into freed memory; the
// batch stays open.
// CHECK-LABEL: func.func @free(
// CHECK:         llvm.call @tract_gpu_record(
// CHECK-NOT:     llvm.call @tract_gpu_sync
// CHECK:         memref.dealloc %[[IN:.*]] : memref<8xf32>
// CHECK-NEXT:    %[[FOUR:.*]] = arith.constant 4 : i64
// CHECK:         %[[N:.*]] = memref.dim %[[OUT:.*]], %{{.*}} : memref<8xf32>
// CHECK:         %[[N64:.*]] = arith.index_cast %[[N]] : index to i64
// CHECK-NEXT:    %[[BYTES:.*]] = arith.muli %[[FOUR]], %[[N64]] : i64
// CHECK-NEXT:    %[[ADDRESS:.*]] = memref.extract_aligned_pointer_as_index %[[OUT]] : memref<8xf32> -> index
// CHECK-NEXT:    %[[ADDRESS64:.*]] = arith.index_cast %[[ADDRESS]] : index to i64
// CHECK-NEXT:    %[[POINTER:.*]] = llvm.inttoptr %[[ADDRESS64]] : i64 to !llvm.ptr
// CHECK-NEXT:    llvm.call @tract_gpu_discard(%[[POINTER]], %[[BYTES]]) : (!llvm.ptr, i64) -> ()
// CHECK-NEXT:    memref.dealloc %[[OUT]] : memref<8xf32>
// CHECK-NEXT:    %[[S:.*]] = llvm.call @tract_gpu_sync()
func.func @free(%in: memref<8xf32>, %out: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%in : memref<8xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  memref.dealloc %in : memref<8xf32>
  memref.dealloc %out : memref<8xf32>
  return
}
