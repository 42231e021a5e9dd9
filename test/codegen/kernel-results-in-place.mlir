// RUN: tract-opt %s -tract-kernel-results-in-place | FileCheck %s

// After bufferization, a kernel function returns the buffer its caller
// passed for its output: the result goes, and the call, which keeps its
// attributes, is followed by uses of the buffer passed (cast back to the
// type the call gave). A function that is not a kernel keeps its result.

// CHECK-LABEL: func.func private @kernel
// CHECK-SAME: (%[[X:.*]]: memref<?xf32>, %[[OUT:.*]]: memref<4xf32>)
// CHECK-SAME: attributes {tract.kernel}
// CHECK: memref.copy
// CHECK: return{{$}}
func.func private @kernel(%x: memref<?xf32>, %out: memref<4xf32>) -> memref<?xf32> attributes {tract.kernel} {
  %c0 = arith.constant 0 : index
  %view = memref.subview %x[%c0] [4] [1] : memref<?xf32> to memref<4xf32, strided<[1], offset: ?>>
  memref.copy %view, %out : memref<4xf32, strided<[1], offset: ?>> to memref<4xf32>
  %cast = memref.cast %out : memref<4xf32> to memref<?xf32>
  return %cast : memref<?xf32>
}

// CHECK-LABEL: func.func private @plain
// CHECK-SAME: -> memref<4xf32>
func.func private @plain(%out: memref<4xf32>) -> memref<4xf32> {
  return %out : memref<4xf32>
}

// CHECK-LABEL: func.func @caller
// CHECK: %[[BUF:.*]] = memref.alloc() : memref<4xf32>
// CHECK: call @kernel(%{{.*}}, %[[BUF]]) {tract.kernel} : (memref<?xf32>, memref<4xf32>) -> ()
// CHECK: %[[CAST:.*]] = memref.cast %[[BUF]] : memref<4xf32> to memref<?xf32>
// CHECK: %[[SAME:.*]] = call @plain(%[[BUF]])
// CHECK: return %[[CAST]], %[[SAME]]
func.func @caller(%x: memref<?xf32>) -> (memref<?xf32>, memref<4xf32>) {
  %buf = memref.alloc() : memref<4xf32>
  %r = call @kernel(%x, %buf) {tract.kernel} : (memref<?xf32>, memref<4xf32>) -> memref<?xf32>
  %s = call @plain(%buf) : (memref<4xf32>) -> memref<4xf32>
  return %r, %s : memref<?xf32>, memref<4xf32>
}

// A kernel's output that One-Shot Bufferize copied into a buffer of the
// function's own to return it: returned as it is, without the copy. A
// copy whose source is read after it, or whose target is written after
// it, stays.
// CHECK-LABEL: func.func @returned
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}) : memref<1x?x8xf32>
// CHECK: call @kernel2(%[[OUT]])
// CHECK-NOT: linalg.copy
// CHECK: return %[[OUT]]
func.func private @kernel2(%out: memref<1x?x8xf32>) -> memref<1x?x8xf32> attributes {tract.kernel} {
  return %out : memref<1x?x8xf32>
}
func.func @returned(%n: index) -> memref<1x?x8xf32> {
  %c1 = arith.constant 1 : index
  %out = memref.alloc(%n) : memref<1x?x8xf32>
  %r = call @kernel2(%out) {tract.kernel} : (memref<1x?x8xf32>) -> memref<1x?x8xf32>
  %d = memref.dim %r, %c1 : memref<1x?x8xf32>
  %copy = memref.alloc(%d) : memref<1x?x8xf32>
  linalg.copy ins(%r : memref<1x?x8xf32>) outs(%copy : memref<1x?x8xf32>)
  return %copy : memref<1x?x8xf32>
}

// CHECK-LABEL: func.func @kept
// CHECK-COUNT-2: linalg.copy
func.func @kept(%x: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  linalg.copy ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  memref.copy %a, %x : memref<4xf32> to memref<4xf32>
  %c = memref.alloc() : memref<4xf32>
  %d = memref.alloc() : memref<4xf32>
  linalg.copy ins(%c : memref<4xf32>) outs(%d : memref<4xf32>)
  memref.copy %x, %d : memref<4xf32> to memref<4xf32>
  return %b, %d : memref<4xf32>, memref<4xf32>
}
