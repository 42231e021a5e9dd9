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
