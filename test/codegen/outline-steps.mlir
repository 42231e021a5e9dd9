// RUN: tract-opt %s -tract-outline-steps='min-ops=6 step-ops=6' | FileCheck %s
// RUN: tract-opt %s -tract-outline-steps | FileCheck %s --check-prefix=WHOLE

// A body of three loops over bufferized tensors, cut into steps of about
// six ops: each step gets its own copy of the constants and of the
// weights' global, takes what it uses from before as arguments and returns
// what is used after. The stack buffer %s stays in the step that uses it
// (a step never returns its own stack memory). The dealloc of %b, which
// deallocation put at the end of the body, goes to the end of the last
// step that uses %b, and the step it leaves empty goes away. Under the
// default size the body is left whole, and so is a small function.

// CHECK-LABEL: func.func private @body.step0
// CHECK-SAME: (%[[A:.*]]: memref<4xf32>, %[[N:.*]]: index) -> memref<4xf32>
// CHECK-DAG: %[[W:.*]] = memref.get_global @weights
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[B:.*]] = memref.alloc()
// CHECK: scf.for %{{.*}} = %[[C0]] to %[[N]]
// CHECK: arith.addf
// CHECK: return %[[B]]
// CHECK-LABEL: func.func private @body.step1
// CHECK-SAME: (%[[B1:.*]]: memref<4xf32> {tract.dead_after}, %{{.*}}: index) -> memref<4xf32>
// CHECK: %[[S:.*]] = memref.alloca()
// CHECK: scf.for
// CHECK: memref.load %[[B1]]
// CHECK: memref.store %{{.*}}, %[[S]]
// CHECK: %[[C:.*]] = memref.alloc()
// CHECK: scf.for
// CHECK: memref.load %[[S]]
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[B1]]
// CHECK-NEXT: return %[[C]]
// CHECK-NOT: @body.step2
// CHECK-LABEL: func.func private @body(
// CHECK: %[[R0:.*]] = call @body.step0(%arg0, %arg1)
// CHECK-NEXT: %[[R1:.*]] = call @body.step1(%[[R0]], %arg1)
// CHECK-NEXT: return %[[R1]]
// CHECK-LABEL: func.func @small
// CHECK-NEXT: return

// A view of a buffer that the next step reads is made again there from the
// buffer, which the step takes once: two arguments of a step are never two
// views of one buffer.
// CHECK-LABEL: func.func private @views.step0
// CHECK-NOT: expand_shape
// CHECK: return %{{.*}} : memref<8xf32>
// CHECK-LABEL: func.func private @views.step1
// CHECK-SAME: (%[[B:.*]]: memref<8xf32> {tract.dead_after}, %{{.*}}: index) -> memref<2x4xf32>
// CHECK-NEXT: arith.constant
// CHECK-NEXT: arith.constant
// CHECK-NEXT: %[[V:.*]] = memref.expand_shape %[[B]]
// CHECK: memref.load %[[V]]
// CHECK: memref.load %[[B]]
// CHECK: memref.dealloc %[[B]]
// CHECK-LABEL: func.func private @views(
// CHECK-NOT: expand_shape
// CHECK: return

// A buffer argument whose contents the body never reads after the step
// is tract.dead_after: %b, which the next step overwrites whole (a fill)
// before it reads it, and every buffer the last step frees; not %k, which
// the last step reads again.
// CHECK-LABEL: func.func private @scratch.step1
// CHECK-SAME: (%{{.*}}: memref<4xf32> {tract.dead_after}, %{{.*}}: memref<4xf32>, %{{.*}}: index) -> memref<4xf32>
// CHECK-LABEL: func.func private @scratch.step2
// CHECK-SAME: (%[[B2:.*]]: memref<4xf32> {tract.dead_after}, %{{.*}}: memref<4xf32> {tract.dead_after}, %{{.*}}: memref<4xf32> {tract.dead_after}, %{{.*}}: index) -> memref<4xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[B2]] : memref<4xf32>)
// CHECK-LABEL: func.func private @scratch(
// CHECK: %[[S0:.*]]:2 = call @scratch.step0
// CHECK-NEXT: %[[S1:.*]] = call @scratch.step1(%[[S0]]#0, %[[S0]]#1, %arg1)
// CHECK-NEXT: call @scratch.step2(%[[S0]]#0, %[[S0]]#1, %[[S1]], %arg1)

// WHOLE-NOT: @body.step
memref.global "private" constant @weights : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

func.func private @body(%a: memref<4xf32>, %n: index) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %w = memref.get_global @weights : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = memref.load %w[%i] : memref<4xf32>
    %z = arith.addf %x, %y : f32
    memref.store %z, %b[%i] : memref<4xf32>
  }
  %s = memref.alloca() : memref<4xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %b[%i] : memref<4xf32>
    %z = arith.mulf %x, %x : f32
    memref.store %z, %s[%i] : memref<4xf32>
  }
  %c = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %s[%i] : memref<4xf32>
    %y = memref.load %w[%i] : memref<4xf32>
    %z = arith.subf %x, %y : f32
    memref.store %z, %c[%i] : memref<4xf32>
  }
  memref.dealloc %b : memref<4xf32>
  return %c : memref<4xf32>
}

func.func @small(%a: memref<4xf32>) -> memref<4xf32> {
  return %a : memref<4xf32>
}

func.func private @views(%a: memref<8xf32>, %n: index) -> memref<2x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = memref.alloc() : memref<8xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<8xf32>
    %z = arith.addf %x, %x : f32
    memref.store %z, %b[%i] : memref<8xf32>
  }
  %v = memref.expand_shape %b [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
  %c = memref.alloc() : memref<2x4xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %v[%c0, %i] : memref<2x4xf32>
    %y = memref.load %b[%i] : memref<8xf32>
    %z = arith.mulf %x, %y : f32
    memref.store %z, %c[%c0, %i] : memref<2x4xf32>
  }
  memref.dealloc %b : memref<8xf32>
  return %c : memref<2x4xf32>
}

func.func private @scratch(%a: memref<4xf32>, %n: index) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %b = memref.alloc() : memref<4xf32>
  %k = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<4xf32>
    %z = arith.addf %x, %x : f32
    memref.store %z, %b[%i] : memref<4xf32>
    memref.store %x, %k[%i] : memref<4xf32>
  }
  %c = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %b[%i] : memref<4xf32>
    %y = memref.load %k[%i] : memref<4xf32>
    %z = arith.mulf %x, %y : f32
    memref.store %z, %c[%i] : memref<4xf32>
  }
  linalg.fill ins(%zero : f32) outs(%b : memref<4xf32>)
  %d = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %b[%i] : memref<4xf32>
    %y = memref.load %k[%i] : memref<4xf32>
    %w = memref.load %c[%i] : memref<4xf32>
    %z = arith.addf %x, %y : f32
    %v = arith.addf %z, %w : f32
    memref.store %v, %d[%i] : memref<4xf32>
  }
  memref.dealloc %b : memref<4xf32>
  memref.dealloc %k : memref<4xf32>
  memref.dealloc %c : memref<4xf32>
  return %d : memref<4xf32>
}

// A buffer that a step gives back only for a later step to overwrite whole
// before reading it (bufferization reusing it) dies in that step: the
// result is tract.dead_after, so that the kernels of the step may fuse an
// epilogue into the product that writes it. Not %c, which the next step
// reads.
// CHECK-LABEL: func.func private @handover.step0
// CHECK-SAME: -> (memref<4xf32> {tract.dead_after}, memref<4xf32>)
// CHECK-LABEL: func.func private @handover.step1
// CHECK: linalg.fill
func.func private @handover(%a: memref<4xf32>, %n: index) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %b = memref.alloc() : memref<4xf32>
  %c = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<4xf32>
    %z = arith.addf %x, %x : f32
    memref.store %z, %b[%i] : memref<4xf32>
    memref.store %x, %c[%i] : memref<4xf32>
  }
  linalg.fill ins(%zero : f32) outs(%b : memref<4xf32>)
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %b[%i] : memref<4xf32>
    %y = memref.load %c[%i] : memref<4xf32>
    %z = arith.addf %x, %y : f32
    memref.store %z, %c[%i] : memref<4xf32>
  }
  memref.dealloc %b : memref<4xf32>
  return %c : memref<4xf32>
}

// A run does not end between a product and the op that next reads its
// result, even with other ops between them (the borders of the padded
// buffer the epilogue writes): the kernels fuse an epilogue only within a
// step. The cut comes after the epilogue.
// CHECK-LABEL: func.func private @epilogue.step0
// CHECK: linalg.matmul
// CHECK: linalg.fill
// CHECK: linalg.generic
// CHECK: return
// CHECK-LABEL: func.func private @epilogue(
#mn = affine_map<(m, n) -> (m, n)>
func.func private @epilogue(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %n: index) -> memref<6x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<4x4xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<4x4xf32>)
  linalg.matmul ins(%a, %b : memref<4x4xf32>, memref<4x4xf32>) outs(%acc : memref<4x4xf32>)
  %padded = memref.alloc() : memref<6x4xf32>
  %top = memref.subview %padded[0, 0] [1, 4] [1, 1] : memref<6x4xf32> to memref<1x4xf32, strided<[4, 1]>>
  linalg.fill ins(%zero : f32) outs(%top : memref<1x4xf32, strided<[4, 1]>>)
  %bottom = memref.subview %padded[5, 0] [1, 4] [1, 1] : memref<6x4xf32> to memref<1x4xf32, strided<[4, 1], offset: 20>>
  linalg.fill ins(%zero : f32) outs(%bottom : memref<1x4xf32, strided<[4, 1], offset: 20>>)
  %inner = memref.subview %padded[1, 0] [4, 4] [1, 1] : memref<6x4xf32> to memref<4x4xf32, strided<[4, 1], offset: 4>>
  linalg.generic {indexing_maps = [#mn, #mn], iterator_types = ["parallel", "parallel"]}
    ins(%acc : memref<4x4xf32>) outs(%inner : memref<4x4xf32, strided<[4, 1], offset: 4>>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %padded[%i, %c0] : memref<6x4xf32>
    %z = arith.addf %x, %x : f32
    memref.store %z, %padded[%i, %c1] : memref<6x4xf32>
  }
  memref.dealloc %acc : memref<4x4xf32>
  return %padded : memref<6x4xf32>
}
