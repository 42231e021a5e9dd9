// RUN: tract-opt --tract-gpu-kernels-from-linalg --canonicalize --tract-gpu-to-spirv='capabilities=Int8,StorageBuffer8BitAccess' %s | FileCheck %s
// RUN: not tract-opt --tract-gpu-kernels-from-linalg --tract-gpu-to-spirv='capabilities=Warp' %s 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// The kernels of the gpu.module, as a spirv.module of Vulkan compute
// shaders for SPIR-V 1.3 with Shader and the capabilities given (and their
// extensions); the gpu.module stays for the launches. The arguments are
// storage buffers at set 0, binding i; math.exp is GLSL's Exp.
// CHECK:       gpu.module @tract_kernels
// CHECK:       spirv.module @__spv__tract_kernels Logical GLSL450
// CHECK-SAME:    #spirv.vce<v1.3, [Shader, Int8, StorageBuffer8BitAccess], [SPV_KHR_storage_buffer_storage_class, SPV_KHR_8bit_storage]>, api=Vulkan
// CHECK:         spirv.func @kernel_0(
// CHECK-SAME:      !spirv.ptr<!spirv.struct<(!spirv.rtarray<f32, stride=4> [0])>, StorageBuffer> {spirv.interface_var_abi = #spirv.interface_var_abi<(0, 0)>}
// CHECK-SAME:      !spirv.ptr<!spirv.struct<(!spirv.rtarray<i8, stride=1> [0])>, StorageBuffer> {spirv.interface_var_abi = #spirv.interface_var_abi<(0, 1)>}
// CHECK-SAME:      !spirv.ptr<!spirv.struct<(!spirv.rtarray<i32, stride=4> [0])>, StorageBuffer> {spirv.interface_var_abi = #spirv.interface_var_abi<(0, 2)>}
// CHECK-SAME:      spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [64, 1, 1]>
// CHECK:           spirv.GL.Exp %{{.*}} : f32
// CHECK:           spirv.FOrdGreaterThan
// UNKNOWN: unknown SPIR-V capability 'Warp'

// Booleans are bytes, as on the CPU.
func.func @exp_positive(%x: memref<?xf32>, %y: memref<?xi1>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<?xf32>) outs(%y : memref<?xi1>) {
  ^bb0(%a: f32, %b: i1):
    %e = math.exp %a : f32
    %one = arith.constant 1.0 : f32
    %c = arith.cmpf ogt, %e, %one : f32
    linalg.yield %c : i1
  }
  return
}
