// RUN: tract-opt --tract-cpu-fork-if --split-input-file %s | FileCheck %s

// A worksharing loop over a chunk count computed before the region (one
// when the op is too small to share at run time): the region forks only
// for two iterations or more.
// CHECK-LABEL: func.func @computed_count(
// CHECK-SAME:    %[[COUNT:[^:]*]]: index
// CHECK:         %[[SECOND:c1_.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[SEVERAL:.*]] = arith.cmpi sgt, %[[COUNT]], %[[SECOND]] : index
// CHECK-NEXT:    omp.parallel if(%[[SEVERAL]])
func.func @computed_count(%count: index, %out: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x = arith.constant 1.0 : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%count) step (%c1) {
        memref.store %x, %out[%i] : memref<2xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

// A constant trip count was judged at compile time: the region stays as
// it is.
// CHECK-LABEL: func.func @constant_count(
// CHECK:         omp.parallel {
func.func @constant_count(%out: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %x = arith.constant 1.0 : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c2) step (%c1) {
        memref.store %x, %out[%i] : memref<2xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}
