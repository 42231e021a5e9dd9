// RUN: tract-opt %s -tract-free-early --split-input-file | FileCheck %s

// Deallocation freed every buffer at the end of the body. Each dealloc
// moves to just after the last op that uses its buffer or a view of it:
// %a after the copy that reads its collapsed view, %b after the loop whose
// body reads it, %unused right after it is made. %out is returned and has
// no dealloc.

// CHECK-LABEL: func.func @chain
// CHECK: %[[A:.*]] = memref.alloc() : memref<4x4xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[A]]
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[A]]
// CHECK: %[[B:.*]] = memref.alloc() : memref<16xf32>
// CHECK: memref.copy %[[FLAT]], %[[B]]
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK: %[[UNUSED:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: memref.dealloc %[[UNUSED]]
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<16xf32>
// CHECK: scf.for
// CHECK: memref.load %[[B]]
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: return %[[OUT]]
func.func @chain(%x: f32) -> memref<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %a = memref.alloc() : memref<4x4xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<4x4xf32>)
  %flat = memref.collapse_shape %a [[0, 1]] : memref<4x4xf32> into memref<16xf32>
  %b = memref.alloc() : memref<16xf32>
  memref.copy %flat, %b : memref<16xf32> to memref<16xf32>
  %unused = memref.alloc() : memref<8xf32>
  %out = memref.alloc() : memref<16xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %b[%i] : memref<16xf32>
    memref.store %v, %out[%i] : memref<16xf32>
  }
  memref.dealloc %a : memref<4x4xf32>
  memref.dealloc %b : memref<16xf32>
  memref.dealloc %unused : memref<8xf32>
  return %out : memref<16xf32>
}

// -----

// A buffer whose uses cannot all be followed keeps its dealloc where it
// was: passed to a call, or its address taken as an integer. %c, freed
// before them, stays right after its fill.

func.func private @consume(memref<16xf32>)

// CHECK-LABEL: func.func @escapes
// CHECK: %[[A:.*]] = memref.alloc()
// CHECK: call @consume(%[[A]])
// CHECK: %[[B:.*]] = memref.alloc()
// CHECK: memref.extract_aligned_pointer_as_index %[[B]]
// CHECK: %[[C:.*]] = memref.alloc()
// CHECK: linalg.fill
// CHECK-NEXT: memref.dealloc %[[C]]
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: return
func.func @escapes(%x: f32) -> index {
  %a = memref.alloc() : memref<16xf32>
  call @consume(%a) : (memref<16xf32>) -> ()
  %b = memref.alloc() : memref<16xf32>
  %p = memref.extract_aligned_pointer_as_index %b : memref<16xf32> -> index
  %c = memref.alloc() : memref<16xf32>
  linalg.fill ins(%x : f32) outs(%c : memref<16xf32>)
  memref.dealloc %c : memref<16xf32>
  memref.dealloc %a : memref<16xf32>
  memref.dealloc %b : memref<16xf32>
  return %p : index
}

// -----

// A step frees a buffer an earlier step handed it: after its last use
// there too.

// CHECK-LABEL: func.func private @step
// CHECK-SAME: (%[[IN:.*]]: memref<16xf32>
// CHECK: memref.copy %[[IN]], %[[OUT:.*]] :
// CHECK-NEXT: memref.dealloc %[[IN]]
// CHECK: %[[C:.*]] = memref.alloc()
// CHECK: linalg.fill
// CHECK-NEXT: memref.dealloc %[[C]]
// CHECK-NEXT: return %[[OUT]]
func.func private @step(%in: memref<16xf32>, %x: f32) -> memref<16xf32> {
  %out = memref.alloc() : memref<16xf32>
  memref.copy %in, %out : memref<16xf32> to memref<16xf32>
  %c = memref.alloc() : memref<16xf32>
  linalg.fill ins(%x : f32) outs(%c : memref<16xf32>)
  memref.dealloc %c : memref<16xf32>
  memref.dealloc %in : memref<16xf32>
  return %out : memref<16xf32>
}

// -----

// A kernel's call (tract.kernel) only reads and writes the buffers it is
// given: its input is freed right after it. Another call keeps its
// buffer's dealloc where it was.

func.func private @kernel(memref<16xf32>, memref<16xf32>) attributes {tract.kernel}
func.func private @other(memref<16xf32>)

// CHECK-LABEL: func.func @calls
// CHECK: %[[IN:.*]] = memref.alloc()
// CHECK: %[[OUT:.*]] = memref.alloc()
// CHECK: call @kernel(%[[IN]], %[[OUT]]) {tract.kernel}
// CHECK-NEXT: memref.dealloc %[[IN]]
// CHECK: %[[KEPT:.*]] = memref.alloc()
// CHECK: call @other(%[[KEPT]])
// CHECK: linalg.fill
// CHECK-NEXT: memref.dealloc %[[KEPT]]
// CHECK-NEXT: return %[[OUT]]
func.func @calls(%x: f32) -> memref<16xf32> {
  %in = memref.alloc() : memref<16xf32>
  linalg.fill ins(%x : f32) outs(%in : memref<16xf32>)
  %out = memref.alloc() : memref<16xf32>
  call @kernel(%in, %out) {tract.kernel} : (memref<16xf32>, memref<16xf32>) -> ()
  %kept = memref.alloc() : memref<16xf32>
  call @other(%kept) : (memref<16xf32>) -> ()
  linalg.fill ins(%x : f32) outs(%out : memref<16xf32>)
  memref.dealloc %in : memref<16xf32>
  memref.dealloc %kept : memref<16xf32>
  return %out : memref<16xf32>
}
