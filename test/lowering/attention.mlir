// RUN: tract-opt --tract-lower-to-linalg --canonicalize --cse %s | FileCheck %s

// Causal grouped-query attention in one loop nest: the keys transposed,
// then an scf.forall over batches and query heads (the batch of 1 folds
// away) writing each head's slice: blocks of 4 query rows and then single
// rows; per block, blocks of 16 keys up to the last one the block's last
// row sees (r + rows + t - s), each a loop over d of outer products of
// the query rows and a vector of keys, the running maximum and sum folded
// with vector exponentials, and the weighted values added to the rows'
// accumulators; the rows divided by their sums at the end.
// CHECK-LABEL: func.func @causal(
// CHECK:       %[[KT:.*]] = linalg.transpose ins(%{{.*}} : tensor<1x2x?x8xf32>) outs(%{{.*}} : tensor<1x2x8x?xf32>) permutation = [0, 1, 3, 2]
// CHECK:       scf.forall (%[[H:.*]]) in (4) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<1x4x?x8xf32>)
// CHECK:         %[[SLICE:.*]] = tensor.extract_slice %[[OUT]][0, %[[H]], 0, 0] [1, 1, %{{.*}}, 8] [1, 1, 1, 1]
// CHECK:         %[[KH:.*]] = arith.divui %[[H]], %c2
// CHECK:         %[[ROWS:.*]] = scf.for %[[R:.*]] = %c0 to %{{.*}} step %c4 iter_args(%{{.*}} = %[[SLICE]])
// CHECK:           %[[END:.*]] = arith.minsi
// CHECK:           scf.for %[[C:.*]] = %c0 to %[[END]] step %c16 iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK:             scf.for %[[D:.*]] = %c0 to %c8 step %c1 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK:               vector.transfer_read %[[KT]][%c0, %[[KH]], %[[D]], %[[C]]]
// CHECK-COUNT-4:       vector.fma {{.*}} : vector<16xf32>
// CHECK:             vector.step : vector<16xindex>
// CHECK:             math.exp {{.*}} : vector<16xf32>
// CHECK:             vector.reduction <add>
// CHECK:           vector.transfer_write {{.*}} : vector<8xf32>, tensor<1x1x?x8xf32>
// CHECK:         %[[LAST:.*]] = scf.for %{{.*}} = {{.*}} step %c1 iter_args(%{{.*}} = %[[ROWS]])
// CHECK:         scf.forall.in_parallel
// CHECK-NEXT:      tensor.parallel_insert_slice %[[LAST]] into %[[OUT]][0, %[[H]], 0, 0] [1, 1, %{{.*}}, 8] [1, 1, 1, 1]
// CHECK-NOT:   linalg.softmax
func.func @causal(%q: tensor<1x4x?x8xf32, #tract.dims<[S]>>, %k: tensor<1x2x?x8xf32, #tract.dims<[T]>>, %v: tensor<1x2x?x8xf32, #tract.dims<[T]>>) -> tensor<1x4x?x8xf32, #tract.dims<[S]>> {
  %0 = tract.sdpa %q, %k, %v {causal = true} : (tensor<1x4x?x8xf32, #tract.dims<[S]>>, tensor<1x2x?x8xf32, #tract.dims<[T]>>, tensor<1x2x?x8xf32, #tract.dims<[T]>>) -> tensor<1x4x?x8xf32, #tract.dims<[S]>>
  return %0 : tensor<1x4x?x8xf32, #tract.dims<[S]>>
}
