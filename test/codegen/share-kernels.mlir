// RUN: tract-opt %s -tract-share-kernels -split-input-file | FileCheck %s

// Two layers' loops, the same but for the weights and buffers they take:
// one kernel, called twice with each one's buffers; the constants (bounds,
// the scale) are the kernel's own.
// CHECK-LABEL: func.func private @tract_kernel_0
// CHECK-SAME:    (%[[W:.*]]: memref<16xf32>, %[[X:.*]]: memref<16xf32>, %[[Y:.*]]: memref<16xf32>)
// CHECK-DAG:     arith.constant 0 : index
// CHECK-DAG:     arith.constant 16 : index
// CHECK-DAG:     arith.constant 2.000000e+00 : f32
// CHECK:         scf.for
// CHECK:           memref.load %[[W]]
// CHECK:           memref.load %[[X]]
// CHECK:           memref.store %{{.*}}, %[[Y]]
// CHECK:         return
// CHECK-LABEL: func.func @layers
// CHECK:         %[[W0:.*]] = memref.get_global @w0
// CHECK:         %[[W1:.*]] = memref.get_global @w1
// CHECK:         %[[H:.*]] = memref.alloc
// CHECK:         call @tract_kernel_0(%[[W0]], %[[IN:.*]], %[[H]])
// CHECK:         %[[OUT:.*]] = memref.alloc
// CHECK:         call @tract_kernel_0(%[[W1]], %[[H]], %[[OUT]])
// CHECK-NOT:     scf.for
// CHECK:         return %[[OUT]]
memref.global "private" constant @w0 : memref<16xf32> = dense<1.0>
memref.global "private" constant @w1 : memref<16xf32> = dense<3.0>
func.func @layers(%in: memref<16xf32>) -> memref<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %two = arith.constant 2.0 : f32
  %w0 = memref.get_global @w0 : memref<16xf32>
  %w1 = memref.get_global @w1 : memref<16xf32>
  %h = memref.alloc() : memref<16xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    %w = memref.load %w0[%i] : memref<16xf32>
    %x = memref.load %in[%i] : memref<16xf32>
    %p = arith.mulf %w, %x : f32
    %s = arith.mulf %p, %two : f32
    %t = arith.addf %s, %x : f32
    memref.store %t, %h[%i] : memref<16xf32>
  }
  %out = memref.alloc() : memref<16xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    %w = memref.load %w1[%i] : memref<16xf32>
    %x = memref.load %h[%i] : memref<16xf32>
    %p = arith.mulf %w, %x : f32
    %s = arith.mulf %p, %two : f32
    %t = arith.addf %s, %x : f32
    memref.store %t, %out[%i] : memref<16xf32>
  }
  return %out : memref<16xf32>
}

// -----

// Not one kernel: another constant (the scale), and a loop that reads and
// writes one buffer where the other reads one and writes another. Each
// kind has one copy, and stays where it is.
// CHECK-LABEL: func.func @differ
// CHECK-NOT:     call
// CHECK-COUNT-3: scf.for
// CHECK-NOT:     func.func private
func.func @differ(%a: memref<16xf32>, %b: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %a[%i] : memref<16xf32>
    %p = arith.mulf %x, %two : f32
    %q = arith.mulf %p, %x : f32
    %r = arith.addf %q, %x : f32
    memref.store %r, %b[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %a[%i] : memref<16xf32>
    %p = arith.mulf %x, %three : f32
    %q = arith.mulf %p, %x : f32
    %r = arith.addf %q, %x : f32
    memref.store %r, %b[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %a[%i] : memref<16xf32>
    %p = arith.mulf %x, %two : f32
    %q = arith.mulf %p, %x : f32
    %r = arith.addf %q, %x : f32
    memref.store %r, %a[%i] : memref<16xf32>
  }
  return
}

// -----

// Below min-ops (8, nested ops included): a short loop stays inline.
// CHECK-LABEL: func.func @short
// CHECK-COUNT-2: scf.for
// CHECK-NOT:     call
func.func @short(%a: memref<16xf32>, %b: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %a[%i] : memref<16xf32>
    memref.store %x, %b[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %b[%i] : memref<16xf32>
    memref.store %x, %a[%i] : memref<16xf32>
  }
  return
}

// -----

// Two steps (as tract-outline-steps makes them) that differ only in the
// weights they read: the first takes them as arguments, the second is
// gone, and each call passes its own.
// CHECK-LABEL: func.func private @step0
// CHECK-SAME:    (%{{.*}}: memref<4xf32>, %[[W:.*]]: memref<4xf32>) -> memref<4xf32>
// CHECK-NOT:     memref.get_global
// CHECK:         memref.load %[[W]]
// CHECK-NOT:   func.func private @step1
// CHECK-LABEL: func.func @steps
// CHECK:         %[[W0:.*]] = memref.get_global @v0
// CHECK:         %[[H:.*]] = call @step0(%{{.*}}, %[[W0]])
// CHECK:         %[[W1:.*]] = memref.get_global @v1
// CHECK:         call @step0(%[[H]], %[[W1]])
memref.global "private" constant @v0 : memref<4xf32> = dense<1.0>
memref.global "private" constant @v1 : memref<4xf32> = dense<2.0>
func.func private @step0(%x: memref<4xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %w = memref.get_global @v0 : memref<4xf32>
  %y = memref.alloc() : memref<4xf32>
  %a = memref.load %w[%c0] : memref<4xf32>
  memref.store %a, %y[%c0] : memref<4xf32>
  return %y : memref<4xf32>
}
func.func private @step1(%x: memref<4xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %w = memref.get_global @v1 : memref<4xf32>
  %y = memref.alloc() : memref<4xf32>
  %a = memref.load %w[%c0] : memref<4xf32>
  memref.store %a, %y[%c0] : memref<4xf32>
  return %y : memref<4xf32>
}
func.func @steps(%x: memref<4xf32>) -> memref<4xf32> {
  %h = call @step0(%x) : (memref<4xf32>) -> memref<4xf32>
  %y = call @step1(%h) : (memref<4xf32>) -> memref<4xf32>
  return %y : memref<4xf32>
}
