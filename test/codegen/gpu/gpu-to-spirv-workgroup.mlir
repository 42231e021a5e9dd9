// RUN: tract-opt --tract-gpu-to-spirv %s | FileCheck %s

// A kernel's workgroup attributions become Workgroup variables of the
// shader (the GPU patterns take none: the pass makes them workgroup
// allocations first), and gpu.barrier a control barrier on the workgroup.
// CHECK:       spirv.module @__spv__tract_kernels
// CHECK:         spirv.GlobalVariable @[[TILE:.*]] : !spirv.ptr<!spirv.struct<(!spirv.array<256 x f32>)>, Workgroup>
// CHECK-LABEL:   spirv.func @k(
// CHECK-NOT:       workgroup_attributions
// CHECK:           %[[ADDRESS:.*]] = spirv.mlir.addressof @[[TILE]]
// CHECK:           %[[SLOT:.*]] = spirv.AccessChain %[[ADDRESS]]
// CHECK:           spirv.Store "Workgroup" %[[SLOT]], %{{.*}} : f32
// CHECK-NEXT:      spirv.ControlBarrier <Workgroup>, <Workgroup>, <AcquireRelease|WorkgroupMemory>
// CHECK:           spirv.Load "Workgroup"
module attributes {gpu.container_module} {
  gpu.module @tract_kernels {
    gpu.func @k(%a: memref<?xf32>) workgroup(%t : memref<256xf32, #gpu.address_space<workgroup>>) kernel attributes {spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [256, 1, 1]>} {
      %tid = gpu.thread_id x
      %v = memref.load %a[%tid] : memref<?xf32>
      memref.store %v, %t[%tid] : memref<256xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %c0 = arith.constant 0 : index
      %w = memref.load %t[%c0] : memref<256xf32, #gpu.address_space<workgroup>>
      memref.store %w, %a[%tid] : memref<?xf32>
      gpu.return
    }
  }
}
