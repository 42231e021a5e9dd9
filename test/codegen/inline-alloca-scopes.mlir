// RUN: tract-opt --tract-cpu-inline-alloca-scopes --split-input-file %s | FileCheck %s

// The scope convert-scf-to-openmp wraps around a loop body that allocates
// nothing on the stack is inlined, its result included.
// CHECK-LABEL: func.func @no_alloca(
// CHECK-NOT:     memref.alloca_scope
// CHECK:         %[[SUM:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    memref.store %[[SUM]]
// CHECK-NEXT:    return %[[SUM]]
func.func @no_alloca(%x: f32, %out: memref<f32>) -> f32 {
  %r = memref.alloca_scope -> (f32) {
    %s = arith.addf %x, %x : f32
    memref.alloca_scope.return %s : f32
  }
  memref.store %r, %out[] : memref<f32>
  return %r : f32
}

// -----

// A scope that allocates keeps its allocation scoped; a scope nested in it
// that does not is inlined.
// CHECK-LABEL: func.func @alloca(
// CHECK:         memref.alloca_scope {
// CHECK-NEXT:      memref.alloca() : memref<4xf32>
// CHECK-NOT:       memref.alloca_scope
// CHECK:           arith.mulf
// CHECK:         }
func.func @alloca(%x: f32) {
  memref.alloca_scope {
    %a = memref.alloca() : memref<4xf32>
    %c0 = arith.constant 0 : index
    memref.alloca_scope {
      %m = arith.mulf %x, %x : f32
      memref.store %m, %a[%c0] : memref<4xf32>
    }
  }
  return
}
