// RUN: tract-opt --tract-gpu-kernels-from-linalg --canonicalize %s | FileCheck %s

// An element-wise op: one invocation per element. The host flattens each
// operand to its base buffer over its span, and passes in one i32 table the
// number of invocations, the loop bounds, then each operand's offset and
// strides (here S*4; S, 4; 0, 4, 1; 0, 4, 1); the launch is skipped when
// there is nothing to do.
// CHECK-LABEL: func.func @exp(
// CHECK-SAME:    %[[X:.*]]: memref<?x4xf32>, %[[Y:.*]]: memref<?x4xf32>)
// CHECK-DAG:     %[[C0I:.*]] = arith.constant 0 : i32
// CHECK-DAG:     %[[C1I:.*]] = arith.constant 1 : i32
// CHECK-DAG:     %[[C4I:.*]] = arith.constant 4 : i32
// CHECK:         %[[TABLE:.*]] = memref.alloca() {tract_gpu_parameters} : memref<9xi32>
// CHECK:         %[[N:.*]] = memref.dim %[[X]], %{{.*}} : memref<?x4xf32>
// CHECK:         %[[COUNT:.*]] = arith.muli %[[N]], %{{.*}} : index
// CHECK:         memref.extract_strided_metadata %[[X]]
// CHECK:         %[[XFLAT:.*]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [%{{.*}}], strides: [1] : memref<?x4xf32> to memref<?xf32>
// CHECK:         memref.extract_strided_metadata %[[Y]]
// CHECK:         %[[YFLAT:.*]] = memref.reinterpret_cast %[[Y]] to offset: [0], sizes: [%{{.*}}], strides: [1] : memref<?x4xf32> to memref<?xf32>
// CHECK:         %[[COUNT32:.*]] = arith.index_cast %[[COUNT]] : index to i32
// CHECK-NEXT:    memref.store %[[COUNT32]], %[[TABLE]][%{{.*}}] : memref<9xi32>
// CHECK-NEXT:    %[[N32:.*]] = arith.index_cast %[[N]] : index to i32
// CHECK-NEXT:    memref.store %[[N32]], %[[TABLE]][%{{.*}}] : memref<9xi32>
// CHECK-NEXT:    memref.store %[[C4I]], %[[TABLE]][%{{.*}}] : memref<9xi32>
// CHECK-NEXT:    memref.store %[[C0I]], %[[TABLE]][%{{.*}}] : memref<9xi32>
// CHECK-NEXT:    memref.store %[[C4I]], %[[TABLE]][%{{.*}}] : memref<9xi32>
// CHECK-NEXT:    memref.store %[[C1I]], %[[TABLE]][%{{.*}}] : memref<9xi32>
// CHECK-NEXT:    memref.store %[[C0I]], %[[TABLE]][%{{.*}}] : memref<9xi32>
// CHECK-NEXT:    memref.store %[[C4I]], %[[TABLE]][%{{.*}}] : memref<9xi32>
// CHECK-NEXT:    memref.store %[[C1I]], %[[TABLE]][%{{.*}}] : memref<9xi32>
// CHECK-NEXT:    %[[PARAMS:.*]] = memref.cast %[[TABLE]] : memref<9xi32> to memref<?xi32>
// CHECK-NEXT:    %[[GROUPS:.*]] = arith.ceildivui %[[COUNT]], %{{.*}} : index
// CHECK-NEXT:    %[[CAPPED:.*]] = arith.minui %[[GROUPS]], %{{.*}} : index
// CHECK-NEXT:    %[[GX:.*]] = arith.maxui %[[CAPPED]], %{{.*}} : index
// CHECK-NEXT:    %[[GY:.*]] = arith.ceildivui %[[GROUPS]], %[[GX]] : index
// CHECK-NEXT:    %[[SOME:.*]] = arith.cmpi ne, %[[COUNT]], %{{.*}} : index
// CHECK-NEXT:    scf.if %[[SOME]] {
// CHECK-NEXT:      gpu.launch_func @tract_kernels::@kernel_0 blocks in (%[[GX]], %[[GY]], %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) args(%[[XFLAT]] : memref<?xf32>, %[[YFLAT]] : memref<?xf32>, %[[PARAMS]] : memref<?xi32>)

// A product: the reduction over k runs in the invocation, from the
// output's value.
// CHECK-LABEL: func.func @matmul(
// CHECK:         gpu.launch_func @tract_kernels::@kernel_1

// What a kernel cannot do stays on the host: an element type the device
// lacks (f64 is not among the default types).
// CHECK-LABEL: func.func @host_f64(
// CHECK:         linalg.generic
// CHECK-NOT:     gpu.launch_func

// A product large enough for tiles (M is S, depth 40, 24 columns): a
// workgroup of 64 invocations per 16 x 16 tile of the output, columns
// along x (2 tiles), rows along y (S/16, rounded up).
// CHECK-LABEL: func.func @tiled(
// CHECK-SAME:    %[[A:.*]]: memref<?x40xf32>
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[C64:.*]] = arith.constant 64 : index
// CHECK:         %[[M:.*]] = memref.dim %[[A]], %{{.*}} : memref<?x40xf32>
// CHECK:         %[[ROWS:.*]] = arith.ceildivui %[[M]], %{{.*}} : index
// CHECK:         gpu.launch_func @tract_kernels::@kernel_2 blocks in (%[[C2]], %[[ROWS]], %{{.*}}) threads in (%[[C64]], %{{.*}}, %{{.*}})

// What each launch tells the runtime of its buffers (buffer_uses: 1 read,
// 2 written, 4 constant). An output whose whole span the kernel writes,
// reading none of it first, is written only: nothing is copied to the
// device for it. One the kernel reads first (a sum into it) or writes in
// part (a view inside a larger buffer) is read and written. All shapes
// static, the parameter table is a constant, which the runtime uploads
// once, as it does the weights.
// CHECK-LABEL: func.func @uses(
// CHECK:         memref.get_global @__tract_kernel_parameters_{{[0-9]+}} : memref<{{[0-9]+}}xi32>
// CHECK:         gpu.launch_func @tract_kernels::@kernel_3 {{.*}} {buffer_uses = array<i32: 1, 2, 5>}
// CHECK:         memref.get_global @__tract_kernel_parameters_{{[0-9]+}} : memref<{{[0-9]+}}xi32>
// CHECK:         gpu.launch_func @tract_kernels::@kernel_4 {{.*}} {buffer_uses = array<i32: 1, 3, 5>}
// CHECK:         gpu.launch_func @tract_kernels::@kernel_5 {{.*}} {buffer_uses = array<i32: 1, 3, 5>}
// CHECK-NOT:     memref.alloca

// A copy between buffers (here into the interior of a padded one) is an
// element-wise op like the others, so a kernel; the padded buffer's view
// spans the whole buffer (its 100 elements), as every view of it does, so
// that the runtime sees one buffer whichever part a launch reaches.
// CHECK-LABEL: func.func @copy(
// CHECK-NOT:     memref.copy
// CHECK:         memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [100], strides: [1] : memref<8x8xf32, strided<[10, 1], offset: 11>> to memref<100xf32, strided<[1]>>
// CHECK:         gpu.launch_func @tract_kernels::@kernel_6 {{.*}} {buffer_uses = array<i32: 1, 3, 5>}
// CHECK-NOT:     memref.copy

// An output that is the first part of a larger buffer spans that buffer
// (32 elements), more than the kernel writes: it is read and written, so
// that the rest comes back as it was.
// CHECK-LABEL: func.func @part(
// CHECK:         memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [32], strides: [1] : memref<32xf32> to memref<32xf32, strided<[1]>>
// CHECK:         gpu.launch_func @tract_kernels::@kernel_7 {{.*}} {buffer_uses = array<i32: 1, 3, 5>}

// In the kernel, the parameters the host knows only at run time (the
// number of invocations, S) are read once, at its start; the others (the
// bound 4, the offsets and strides of the static layouts) are constants,
// for the device's compiler to fold.
// CHECK:       gpu.module @tract_kernels
// CHECK-LABEL: gpu.func @kernel_0(
// CHECK-SAME:    %[[A:.*]]: memref<?xf32>, %[[B:.*]]: memref<?xf32>, %[[P:.*]]: memref<?xi32>) kernel
// CHECK-SAME:    spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [64, 1, 1]>
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK:         %[[COUNT32:.*]] = memref.load %[[P]][%[[C0]]] : memref<?xi32>
// CHECK-NEXT:    %[[COUNT:.*]] = arith.index_cast %[[COUNT32]] : i32 to index
// CHECK-NEXT:    %[[S32:.*]] = memref.load %[[P]][%[[C1]]] : memref<?xi32>
// CHECK-NEXT:    %[[S:.*]] = arith.index_cast %[[S32]] : i32 to index
// CHECK-NOT:     memref.load %[[P]]
// CHECK:         %[[BY:.*]] = gpu.block_id y
// CHECK:         %[[GDX:.*]] = gpu.grid_dim x
// CHECK:         %[[BX:.*]] = gpu.block_id x
// CHECK:         %[[TID:.*]] = gpu.thread_id x
// CHECK:         %[[ID:.*]] = arith.addi %{{.*}}, %[[TID]] : index
// CHECK:         %[[IN:.*]] = arith.cmpi ult, %[[ID]], %[[COUNT]] : index
// CHECK:         scf.if %[[IN]] {
// CHECK:           %[[J:.*]] = arith.remui %[[ID]], %[[C4]] : index
// CHECK:           %[[ROWS:.*]] = arith.divui %[[ID]], %[[C4]] : index
// CHECK:           %[[I:.*]] = arith.remui %[[ROWS]], %[[S]] : index
// CHECK:           %[[ROW:.*]] = arith.muli %[[I]], %[[C4]] : index
// CHECK:           %[[AT:.*]] = arith.addi %[[ROW]], %[[J]] : index
// CHECK:           %[[V:.*]] = memref.load %[[A]][%[[AT]]] : memref<?xf32>
// CHECK:           %[[E:.*]] = math.exp %[[V]] : f32
// CHECK:           memref.store %[[E]], %[[B]][%{{.*}}] : memref<?xf32>
// CHECK:         }
// CHECK:         gpu.return
// The product's shapes are static: no parameter is read, the reduction
// runs to the constant 5.
// CHECK-LABEL: gpu.func @kernel_1(
// CHECK-SAME:    %[[A:.*]]: memref<?xf32>, %[[B:.*]]: memref<?xf32>, %[[C:.*]]: memref<?xf32>, %[[P:.*]]: memref<?xi32>) kernel
// CHECK-DAG:     %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG:     %[[C21:.*]] = arith.constant 21 : index
// CHECK-NOT:     memref.load %[[P]]
// CHECK:         arith.cmpi ult, %{{.*}}, %[[C21]] : index
// CHECK:         %[[INIT:.*]] = memref.load %[[C]][%{{.*}}] : memref<?xf32>
// CHECK:         %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %[[C5]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32) {
// CHECK:           %[[L:.*]] = memref.load %[[A]]
// CHECK:           %[[R:.*]] = memref.load %[[B]]
// CHECK:           %[[M:.*]] = arith.mulf %[[L]], %[[R]] : f32
// CHECK:           %[[ADD:.*]] = arith.addf %[[ACC]], %[[M]] : f32
// CHECK:           scf.yield %[[ADD]] : f32
// CHECK:         memref.store %[[SUM]], %[[C]][%{{.*}}] : memref<?xf32>

// The tiled kernel: two 16 x 16 tiles in workgroup memory, 64
// invocations, each 4 rows of one column of the output tile. Each step
// along k, every invocation copies 4 elements of each input there (zero
// past the edges), the workgroup waits, each invocation reduces its 4 rows
// of the first tile with its column of the second (16 deep, less at the
// last step: 40 is no multiple of 16), each element of the column read
// once for the 4, and the workgroup waits again before the next tiles.
// Invocations past the output's edges load and wait too, but store
// nothing.
// CHECK-LABEL: gpu.func @kernel_2(
// CHECK-SAME:    %[[A:.*]]: memref<?xf32>, %[[B:.*]]: memref<?xf32>, %[[C:.*]]: memref<?xf32>, %[[P:.*]]: memref<?xi32>)
// CHECK-SAME:    workgroup(%[[AT:.*]] : memref<256xf32, #gpu.address_space<workgroup>>, %[[BT:.*]] : memref<256xf32, #gpu.address_space<workgroup>>) kernel
// CHECK-SAME:    workgroup_size = [64, 1, 1]
// CHECK:         %[[T:.*]] = gpu.thread_id x
// CHECK:         %[[COL:.*]] = arith.remui %[[T]], %[[C16:.*]] : index
// CHECK:         %[[GROUP:.*]] = arith.divui %[[T]], %[[C16]] : index
// CHECK-COUNT-4: scf.if %{{.*}} -> (f32) {
// CHECK:         %[[SUMS:.*]]:4 = scf.for %[[K0:.*]] = %{{.*}} to %[[C40:.*]] step %[[C16]] iter_args({{.*}}) -> (f32, f32, f32, f32) {
// CHECK-COUNT-4:   memref.store %{{.*}}, %[[AT]][%{{.*}}] : memref<256xf32, #gpu.address_space<workgroup>>
// CHECK-NOT:       memref.store %{{.*}}, %[[AT]]
// CHECK:           gpu.barrier
// CHECK-NEXT:      %[[LEFT:.*]] = arith.subi %[[C40]], %[[K0]] : index
// CHECK-NEXT:      %[[DEPTH:.*]] = arith.minui %[[LEFT]], %[[C16]] : index
// CHECK-NEXT:      %[[PART:.*]]:4 = scf.for %{{.*}} = %{{.*}} to %[[DEPTH]] step %{{.*}} iter_args(%[[IN0:.*]] = %{{.*}}, %[[IN1:.*]] = %{{.*}}, %[[IN2:.*]] = %{{.*}}, %[[IN3:.*]] = %{{.*}}) -> (f32, f32, f32, f32) {
// CHECK:             %[[Y:.*]] = memref.load %[[BT]]
// CHECK:             %[[X0:.*]] = memref.load %[[AT]]
// CHECK-NEXT:        %[[XY0:.*]] = arith.mulf %[[X0]], %[[Y]] : f32
// CHECK-NEXT:        arith.addf %[[IN0]], %[[XY0]] : f32
// CHECK-COUNT-3:     arith.mulf %{{.*}}, %[[Y]] : f32
// CHECK:           gpu.barrier
// CHECK-NEXT:      scf.yield %[[PART]]#0, %[[PART]]#1, %[[PART]]#2, %[[PART]]#3
// CHECK-COUNT-4: memref.store %[[SUMS]]#{{[0-3]}}, %[[C]]
func.func @exp(%x: memref<?x4xf32>, %y: memref<?x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<?x4xf32>) outs(%y : memref<?x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  return
}

func.func @matmul(%a: memref<3x5xf32>, %b: memref<5x7xf32>, %c: memref<3x7xf32>) {
  linalg.matmul ins(%a, %b : memref<3x5xf32>, memref<5x7xf32>) outs(%c : memref<3x7xf32>)
  return
}

func.func @host_f64(%x: memref<4xf64>, %y: memref<4xf64>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<4xf64>) outs(%y : memref<4xf64>) {
  ^bb0(%a: f64, %b: f64):
    %e = math.exp %a : f64
    linalg.yield %e : f64
  }
  return
}

func.func @tiled(%a: memref<?x40xf32>, %b: memref<40x24xf32>, %c: memref<?x24xf32>) {
  linalg.matmul ins(%a, %b : memref<?x40xf32>, memref<40x24xf32>) outs(%c : memref<?x24xf32>)
  return
}

func.func @uses(%x: memref<8x16xf32>, %y: memref<8x16xf32>, %s: memref<8xf32>, %big: memref<8x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<8x16xf32>) outs(%y : memref<8x16xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x16xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sum = arith.addf %a, %acc : f32
    linalg.yield %sum : f32
  }
  %v = memref.subview %big[0, 0] [8, 16] [1, 1] : memref<8x32xf32> to memref<8x16xf32, strided<[32, 1]>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<8x16xf32>) outs(%v : memref<8x16xf32, strided<[32, 1]>>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  return
}

func.func @copy(%x: memref<8x8xf32>, %padded: memref<10x10xf32>) {
  %interior = memref.subview %padded[1, 1] [8, 8] [1, 1] : memref<10x10xf32> to memref<8x8xf32, strided<[10, 1], offset: 11>>
  memref.copy %x, %interior : memref<8x8xf32> to memref<8x8xf32, strided<[10, 1], offset: 11>>
  return
}

func.func @part(%x: memref<16xf32>, %big: memref<32xf32>) {
  %part = memref.reinterpret_cast %big to offset: [0], sizes: [16], strides: [1] : memref<32xf32> to memref<16xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<16xf32>) outs(%part : memref<16xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  return
}
