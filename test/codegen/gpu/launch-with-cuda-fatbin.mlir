// REQUIRES: cuda-toolkit
// RUN: tract-opt --pass-pipeline='builtin.module(tract-gpu-kernels-from-linalg,canonicalize,nvvm-attach-target{chip=sm_90},gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm,reconcile-unrealized-casts),gpu-module-to-binary{format=isa},tract-gpu-launch-with-runtime{api=cuda cuda-toolkit=%cuda_toolkit})' %s | FileCheck %s

// With a CUDA toolkit, the PTX of each module becomes a fatbin (0xBA55ED50,
// little-endian, then its images: the cubin for the PTX's chip, sm_90, and
// the PTX), aligned as the toolkit's compilers align them; the launch is
// the same.
// CHECK-DAG:   llvm.mlir.global internal constant @tract_kernels.fatbin("P\EDU\BA{{.*}}\00") {addr_space = 0 : i32, alignment = 16 : i64}
// CHECK-DAG:   llvm.func @tract_cuda_record(!llvm.ptr, i64, !llvm.ptr, i32, i32, i32, i32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-NOT:   tract_kernels.ptx
// CHECK-LABEL: func.func @scale(
// CHECK:         %[[IMAGE:.*]] = llvm.mlir.addressof @tract_kernels.fatbin
// CHECK:         llvm.call @tract_cuda_record(%[[IMAGE]],
func.func @scale(%x: memref<?xf32>, %y: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  }
  return
}
