// RUN: rm -rf %t && tract-opt --pass-pipeline='builtin.module(tract-gpu-kernels-from-linalg,canonicalize,tract-gpu-to-spirv,spirv.module(spirv-lower-abi-attrs,spirv-update-vce),tract-gpu-launch-with-runtime{api=metal msl-dir=%t})' %s | FileCheck %s
// RUN: FileCheck %s --check-prefix=MSL < %t/kernel_0.metal

// For Metal, each kernel becomes its MSL source (SPIRV-Cross's, from the
// kernel's SPIR-V), a NUL-terminated string the runtime compiles; the
// launch names the kernel function there and gives the block size after
// the grid, as for CUDA. No SPIR-V stays in the host's constants.
// CHECK-DAG:   llvm.mlir.global internal constant @tract_kernels.kernel_0.metal("#include <metal_stdlib>{{.*}}kernel void kernel_0({{.*}}\00")
// CHECK-DAG:   llvm.mlir.global internal constant @tract_kernels.kernel_0.name("kernel_0\00")
// CHECK-DAG:   llvm.func @tract_metal_launch(!llvm.ptr, i64, !llvm.ptr, i32, i32, i32, i32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-NOT:   spirv
// CHECK-NOT:   gpu.module
// CHECK-LABEL: func.func @scale(
// CHECK:         %[[CODE:.*]] = llvm.mlir.addressof @tract_kernels.kernel_0.metal
// CHECK:         %[[SIZE:.*]] = arith.constant {{[0-9]+}} : i64
// CHECK:         %[[NAME:.*]] = llvm.mlir.addressof @tract_kernels.kernel_0.name
// CHECK:         %[[BLOCK:.*]] = arith.index_cast %c64 : index to i32
// CHECK:         llvm.call @tract_metal_launch(%[[CODE]], %[[SIZE]], %[[NAME]], %{{.*}}, %{{.*}}, %{{.*}}, %[[BLOCK]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK-NOT:   gpu.launch_func

// MSL:      kernel void kernel_0(device {{.*}} kernel_0_arg_0 {{\[\[}}buffer(0){{\]\]}}
// MSL:      kernel_0_arg_1._m0[{{.*}}] = kernel_0_arg_0._m0[{{.*}}] * kernel_0_arg_0._m0[{{.*}}];
func.func @scale(%x: memref<?xf32>, %y: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  }
  return
}
