// RUN: tract-opt --tract-cpu-vector-loops="lanes=4" --canonicalize --cse %s | FileCheck %s

// A transpose goes in blocks of 4 × 4: four rows of the input along its
// last axis, two rounds of interleaving row i with row i + 2 (the low
// halves, then the high halves), four rows of the output. Of the 6 rows
// along d0, the 2 left go as before, a strided read each.
// CHECK-LABEL: func.func @transpose(
// CHECK-SAME:    %[[X:.*]]: memref<8x6xf32>, %[[Y:.*]]: memref<6x8xf32>)
// CHECK:         scf.for %[[V:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %[[R0:.*]] = vector.transfer_read %[[X]][%[[V]], %{{.*}}], %{{.*}} {in_bounds = [true]} : memref<8x6xf32>, vector<4xf32>
// CHECK:           vector.transfer_read %[[X]]
// CHECK:           %[[R2:.*]] = vector.transfer_read %[[X]]
// CHECK:           vector.transfer_read %[[X]]
// CHECK:           vector.shuffle %[[R0]], %[[R2]] [0, 4, 1, 5] : vector<4xf32>, vector<4xf32>
// CHECK:           vector.shuffle %[[R0]], %[[R2]] [2, 6, 3, 7] : vector<4xf32>, vector<4xf32>
// CHECK-COUNT-6:   vector.shuffle
// CHECK-COUNT-4:   vector.transfer_write %{{.*}}, %[[Y]][%{{.*}}, %[[V]]] {in_bounds = [true]} : vector<4xf32>, memref<6x8xf32>
// CHECK:         }
// CHECK:         vector.transfer_read %[[X]]{{.*}}permutation_map
func.func @transpose(%x: memref<8x6xf32>, %y: memref<6x8xf32>) {
  linalg.transpose ins(%x : memref<8x6xf32>) outs(%y : memref<6x8xf32>) permutation = [1, 0]
  return
}
