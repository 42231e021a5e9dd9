// RUN: tract-opt %s -tract-outline-steps='min-ops=6 step-ops=6' | FileCheck %s
// RUN: tract-opt %s -tract-outline-steps | FileCheck %s --check-prefix=WHOLE

// A body of three loops over bufferized tensors, cut into steps of about
// six ops: each step gets its own copy of the constants and of the
// weights' global, takes what it uses from before as arguments and returns
// what is used after. The stack buffer %s stays in the step that uses it
// (a step never returns its own stack memory). Under the default size the
// body is left whole, and so is a small function.

// CHECK-LABEL: func.func private @body.step0
// CHECK-SAME: (%[[A:.*]]: memref<4xf32>, %[[N:.*]]: index) -> memref<4xf32>
// CHECK-DAG: %[[W:.*]] = memref.get_global @weights
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[B:.*]] = memref.alloc()
// CHECK: scf.for %{{.*}} = %[[C0]] to %[[N]]
// CHECK: arith.addf
// CHECK: return %[[B]]
// CHECK-LABEL: func.func private @body.step1
// CHECK-SAME: (%[[B1:.*]]: memref<4xf32>, %{{.*}}: index) -> memref<4xf32>
// CHECK: %[[S:.*]] = memref.alloca()
// CHECK: scf.for
// CHECK: memref.load %[[B1]]
// CHECK: memref.store %{{.*}}, %[[S]]
// CHECK: %[[C:.*]] = memref.alloc()
// CHECK: scf.for
// CHECK: memref.load %[[S]]
// CHECK: return %[[C]]
// CHECK-LABEL: func.func private @body.step2
// CHECK-NEXT: memref.dealloc
// CHECK-LABEL: func.func private @body(
// CHECK: %[[R0:.*]] = call @body.step0(%arg0, %arg1)
// CHECK-NEXT: %[[R1:.*]] = call @body.step1(%[[R0]], %arg1)
// CHECK-NEXT: call @body.step2(%[[R0]])
// CHECK-NEXT: return %[[R1]]
// CHECK-LABEL: func.func @small
// CHECK-NEXT: return

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
