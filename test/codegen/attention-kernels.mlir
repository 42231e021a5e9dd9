// RUN: tract-opt --tract-cpu-attention-kernels --tract-lower-to-linalg --canonicalize --cse %s | FileCheck %s
// RUN: tract-opt --tract-cpu-attention-kernels="register-file=64" --tract-lower-to-linalg --canonicalize --cse %s | FileCheck %s --check-prefix=SMALL
// RUN: tract-opt --tract-cpu-attention-kernels %s | FileCheck %s --check-prefix=KERNEL

// Causal grouped-query attention in one loop nest: the keys transposed
// into a zero-filled tensor whose last dim is rounded up to blocks of 16
// (every read of keys is a whole vector), then an scf.forall over batches
// and query heads (the batch of 1 folds away) writing each head's slice:
// blocks of 6 query rows (a register file of 512 f32) and then single
// rows; per block, the rows' accumulators zeroed in the slice, then blocks
// of 16 keys up to the last one the block's last row sees (r + rows + t -
// s), each a loop over d of outer products of the query rows and a vector
// of keys, the running maxima folded with vector exponentials and the
// running sums kept lane by lane; the weights go through a (6, 16) tensor
// and the weighted values are added to the accumulators in the slice (d_v
// of 8: one chunk narrower than 16); the rows divided by their sums at the
// end.
// CHECK-LABEL: func.func @causal(
// CHECK:       %[[PADDED:.*]] = arith.muli %{{.*}}, %c16 : index
// CHECK:       %[[EMPTY:.*]] = tensor.empty(%[[PADDED]]) : tensor<1x2x8x?xf32>
// CHECK:       %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[EMPTY]] : tensor<1x2x8x?xf32>)
// CHECK:       %[[KEYS:.*]] = tensor.extract_slice %[[ZEROS]][0, 0, 0, 0] [1, 2, 8, %[[T:.*]]] [1, 1, 1, 1]
// CHECK:       %[[TRANSPOSED:.*]] = linalg.transpose ins(%{{.*}} : tensor<1x2x?x8xf32>) outs(%[[KEYS]] : tensor<1x2x8x?xf32>) permutation = [0, 1, 3, 2]
// CHECK:       %[[KT:.*]] = tensor.insert_slice %[[TRANSPOSED]] into %[[ZEROS]][0, 0, 0, 0] [1, 2, 8, %[[T]]] [1, 1, 1, 1]
// CHECK:       scf.forall (%[[H:.*]]) in (4) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<1x4x?x8xf32>)
// CHECK:         %[[SLICE:.*]] = tensor.extract_slice %[[OUT]][0, %[[H]], 0, 0] [1, 1, %{{.*}}, 8] [1, 1, 1, 1]
// CHECK:         %[[KH:.*]] = arith.divui %[[H]], %c2
// CHECK:         %[[WEIGHTS:.*]] = tensor.empty() : tensor<6x16xf32>
// CHECK:         %[[ROWS:.*]] = scf.for %[[R:.*]] = %c0 to %{{.*}} step %c6 iter_args(%{{.*}} = %[[SLICE]])
// CHECK-COUNT-6:   vector.transfer_write %{{.*}} : vector<8xf32>, tensor<1x1x?x8xf32>
// CHECK:           %[[END:.*]] = arith.minsi
// CHECK:           scf.for %[[C:.*]] = %c0 to %[[END]] step %c16 iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, tensor<6x16xf32>, tensor<1x1x?x8xf32>)
// CHECK:             scf.for %[[D:.*]] = %c0 to %c8 step %c1 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK:               vector.transfer_read %[[KT]][%c0, %[[KH]], %[[D]], %[[C]]], %{{.*}} {in_bounds = [true]}
// CHECK-COUNT-6:       vector.fma {{.*}} : vector<16xf32>
// CHECK:             vector.reduction <maxnumf>, %{{.*}} fastmath<nnan> : vector<16xf32> into f32
// CHECK:             math.exp {{.*}} : vector<16xf32>
// CHECK:             math.exp {{.*}} : vector<6xf32>
// CHECK-COUNT-6:     vector.fma {{.*}} : vector<16xf32>
// CHECK-COUNT-6:     vector.transfer_write {{.*}} : vector<16xf32>, tensor<6x16xf32>
// CHECK-COUNT-6:     vector.transfer_read {{.*}} : tensor<1x1x?x8xf32>, vector<8xf32>
// CHECK:             tensor.extract %{{.*}}[%c0, %c0] : tensor<6x16xf32>
// CHECK:             vector.fma {{.*}} : vector<8xf32>
// CHECK-COUNT-6:     vector.transfer_write {{.*}} : vector<8xf32>, tensor<1x1x?x8xf32>
// CHECK:             scf.yield
// CHECK:           vector.reduction <add>
// CHECK:           arith.divf {{.*}} : vector<8xf32>
// CHECK:         %[[LAST:.*]] = scf.for %{{.*}} = {{.*}} step %c1 iter_args(%{{.*}} = %[[ROWS]])
// CHECK:         scf.forall.in_parallel
// CHECK-NEXT:      tensor.parallel_insert_slice %[[LAST]] into %[[OUT]][0, %[[H]], 0, 0] [1, 1, %{{.*}}, 8] [1, 1, 1, 1]
// CHECK-NOT:   linalg.softmax
// With a register file of 64 f32 (16 registers of 4), blocks of 2 rows.
// SMALL-LABEL: func.func @causal(
// SMALL:         tensor.empty() : tensor<2x16xf32>
// SMALL:         scf.for %{{.*}} = %c0 to %{{.*}} step %c2
func.func @causal(%q: tensor<1x4x?x8xf32, #tract.dims<[S]>>, %k: tensor<1x2x?x8xf32, #tract.dims<[T]>>, %v: tensor<1x2x?x8xf32, #tract.dims<[T]>>) -> tensor<1x4x?x8xf32, #tract.dims<[S]>> {
  %0 = tract.sdpa %q, %k, %v {causal = true} : (tensor<1x4x?x8xf32, #tract.dims<[S]>>, tensor<1x2x?x8xf32, #tract.dims<[T]>>, tensor<1x2x?x8xf32, #tract.dims<[T]>>) -> tensor<1x4x?x8xf32, #tract.dims<[S]>>
  return %0 : tensor<1x4x?x8xf32, #tract.dims<[S]>>
}

// A head of 40 values: the weighted values go in a loop over the chunks
// of 16 (two), each reading a chunk of every row's accumulator, then the
// chunk of 8 left.
// CHECK-LABEL: func.func @chunks(
// CHECK:         scf.for %{{.*}} = %c0 to %c32 step %c16 iter_args(%{{.*}}) -> (tensor<1x1x?x40xf32>)
// CHECK-COUNT-6:   vector.transfer_read {{.*}} : tensor<1x1x?x40xf32>, vector<16xf32>
// CHECK:           vector.transfer_read {{.*}} : tensor<1x2x?x40xf32>, vector<16xf32>
// CHECK-COUNT-6:   vector.transfer_write {{.*}} : vector<16xf32>, tensor<1x1x?x40xf32>
// CHECK:         vector.transfer_read {{.*}}[%c0, %c0, %{{.*}}, %c32]{{.*}} : tensor<1x1x?x40xf32>, vector<8xf32>
func.func @chunks(%q: tensor<1x4x?x40xf32, #tract.dims<[S]>>, %k: tensor<1x2x?x40xf32, #tract.dims<[T]>>, %v: tensor<1x2x?x40xf32, #tract.dims<[T]>>) -> tensor<1x4x?x40xf32, #tract.dims<[S]>> {
  %0 = tract.sdpa %q, %k, %v : (tensor<1x4x?x40xf32, #tract.dims<[S]>>, tensor<1x2x?x40xf32, #tract.dims<[T]>>, tensor<1x2x?x40xf32, #tract.dims<[T]>>) -> tensor<1x4x?x40xf32, #tract.dims<[S]>>
  return %0 : tensor<1x4x?x40xf32, #tract.dims<[S]>>
}

// The kernel takes f32 attention only, before the conversion: an f16 one
// stays a tract.sdpa, which the conversion decomposes into einsums and a
// softmax.
// KERNEL-LABEL: func.func @causal(
// KERNEL-NOT:     tract.sdpa
// KERNEL:         scf.forall
// KERNEL-LABEL: func.func @half(
// KERNEL:         tract.sdpa
// CHECK-LABEL: func.func @half(
// CHECK-NOT:     scf.forall
// CHECK:         linalg.generic
func.func @half(%q: tensor<1x2x?x8xf16, #tract.dims<[S]>>, %k: tensor<1x2x?x8xf16, #tract.dims<[T]>>, %v: tensor<1x2x?x8xf16, #tract.dims<[T]>>) -> tensor<1x2x?x8xf16, #tract.dims<[S]>> {
  %0 = tract.sdpa %q, %k, %v : (tensor<1x2x?x8xf16, #tract.dims<[S]>>, tensor<1x2x?x8xf16, #tract.dims<[T]>>, tensor<1x2x?x8xf16, #tract.dims<[T]>>) -> tensor<1x2x?x8xf16, #tract.dims<[S]>>
  return %0 : tensor<1x2x?x8xf16, #tract.dims<[S]>>
}
