// RUN: tract-opt %s -tract-declutter -split-input-file | FileCheck %s

// A transpose (0, 2, 3, 1) and its inverse (0, 3, 1, 2) cancel.
// CHECK-LABEL: func.func @transpose_and_inverse
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x3x4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @transpose_and_inverse(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  %0 = tract.move_axis %x {from = 1 : i64, to = 3 : i64} : tensor<1x2x3x4xf32> -> tensor<1x3x4x2xf32>
  %1 = tract.move_axis %0 {from = 3 : i64, to = 1 : i64} : tensor<1x3x4x2xf32> -> tensor<1x2x3x4xf32>
  return %1 : tensor<1x2x3x4xf32>
}

// -----

// A permutation written as three moves needs only one.
// CHECK-LABEL: func.func @chain_to_fewest_moves
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[M:.*]] = tract.move_axis %[[X]] {from = 0 : i64, to = 2 : i64} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
// CHECK-NEXT: return %[[M]]
func.func @chain_to_fewest_moves(%x: tensor<2x3x4xf32>) -> tensor<3x4x2xf32> {
  %0 = tract.move_axis %x {from = 0 : i64, to = 1 : i64} : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %1 = tract.move_axis %0 {from = 2 : i64, to = 0 : i64} : tensor<3x2x4xf32> -> tensor<4x3x2xf32>
  %2 = tract.move_axis %1 {from = 0 : i64, to = 1 : i64} : tensor<4x3x2xf32> -> tensor<3x4x2xf32>
  return %2 : tensor<3x4x2xf32>
}

// -----

// Two moves that are already the fewest stay.
// CHECK-LABEL: func.func @minimal_chain_is_kept
// CHECK-COUNT-2: tract.move_axis
func.func @minimal_chain_is_kept(%x: tensor<2x3x4x5xf32>) -> tensor<3x2x5x4xf32> {
  %0 = tract.move_axis %x {from = 0 : i64, to = 1 : i64} : tensor<2x3x4x5xf32> -> tensor<3x2x4x5xf32>
  %1 = tract.move_axis %0 {from = 2 : i64, to = 3 : i64} : tensor<3x2x4x5xf32> -> tensor<3x2x5x4xf32>
  return %1 : tensor<3x2x5x4xf32>
}

// -----

// The move travels down through element-wise ops (a constant operand is
// moved the other way) and meets its inverse.
// CHECK-LABEL: func.func @push_through_elementwise
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x3xf32>)
// CHECK-NEXT: %[[C:.*]] = tract.const dense<{{\[}}[{{\[}}1.000000e+00], [2.000000e+00]]]> : tensor<1x2x1xf32>
// CHECK-NEXT: %[[A:.*]] = tract.add %[[X]], %[[C]] : (tensor<1x2x3xf32>, tensor<1x2x1xf32>) -> tensor<1x2x3xf32>
// CHECK-NEXT: %[[T:.*]] = tract.tanh %[[A]] : tensor<1x2x3xf32>
// CHECK-NEXT: return %[[T]]
func.func @push_through_elementwise(%x: tensor<1x2x3xf32>) -> tensor<1x2x3xf32> {
  %c = tract.const dense<[[[1.0, 2.0]]]> : tensor<1x1x2xf32>
  %0 = tract.move_axis %x {from = 1 : i64, to = 2 : i64} : tensor<1x2x3xf32> -> tensor<1x3x2xf32>
  %1 = tract.add %0, %c : (tensor<1x3x2xf32>, tensor<1x1x2xf32>) -> tensor<1x3x2xf32>
  %2 = tract.tanh %1 : tensor<1x3x2xf32>
  %3 = tract.move_axis %2 {from = 2 : i64, to = 1 : i64} : tensor<1x3x2xf32> -> tensor<1x2x3xf32>
  return %3 : tensor<1x2x3xf32>
}

// -----

// Two operands moved alike: the binary op runs before the move.
// CHECK-LABEL: func.func @push_through_binary
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[M:.*]] = tract.mul %[[X]], %[[Y]] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[T:.*]] = tract.move_axis %[[M]] {from = 0 : i64, to = 1 : i64} : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK-NEXT: return %[[T]]
func.func @push_through_binary(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = tract.move_axis %x {from = 0 : i64, to = 1 : i64} : tensor<2x3xf32> -> tensor<3x2xf32>
  %1 = tract.move_axis %y {from = 0 : i64, to = 1 : i64} : tensor<2x3xf32> -> tensor<3x2xf32>
  %2 = tract.mul %0, %1 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %2 : tensor<3x2xf32>
}

// -----

// A move with another user, or a non-constant operand moved differently,
// stays where it is.
// CHECK-LABEL: func.func @blocked_moves
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<3x2xf32>)
// CHECK-NEXT: %[[M:.*]] = tract.move_axis %[[X]] {from = 0 : i64, to = 1 : i64}
// CHECK-NEXT: %[[N:.*]] = tract.neg %[[M]]
// CHECK-NEXT: %[[A:.*]] = tract.add %[[M]], %[[Y]]
// CHECK-NEXT: return %[[N]], %[[A]]
func.func @blocked_moves(%x: tensor<2x3xf32>, %y: tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>) {
  %0 = tract.move_axis %x {from = 0 : i64, to = 1 : i64} : tensor<2x3xf32> -> tensor<3x2xf32>
  %1 = tract.neg %0 : tensor<3x2xf32>
  %2 = tract.add %0, %y : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %1, %2 : tensor<3x2xf32>, tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func.func @unit_axis_pairs
// CHECK-SAME: (%[[X:.*]]: tensor<1x4xf32>)
// CHECK-NEXT: return %[[X]], %[[X]]
func.func @unit_axis_pairs(%x: tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>) {
  %0 = tract.add_axis %x {axis = 1 : i64} : tensor<1x4xf32> -> tensor<1x1x4xf32>
  %1 = tract.rm_axis %0 {axis = 1 : i64} : tensor<1x1x4xf32> -> tensor<1x4xf32>
  %2 = tract.rm_axis %x {axis = 0 : i64} : tensor<1x4xf32> -> tensor<4xf32>
  %3 = tract.add_axis %2 {axis = 0 : i64} : tensor<4xf32> -> tensor<1x4xf32>
  return %1, %3 : tensor<1x4xf32>, tensor<1x4xf32>
}

// -----

// Removing another unit axis than the one added is a real change.
// CHECK-LABEL: func.func @unit_axis_different
// CHECK-NEXT: tract.add_axis
// CHECK-NEXT: tract.rm_axis
func.func @unit_axis_different(%x: tensor<1x4xf32>) -> tensor<4x1xf32> {
  %0 = tract.add_axis %x {axis = 2 : i64} : tensor<1x4xf32> -> tensor<1x4x1xf32>
  %1 = tract.rm_axis %0 {axis = 0 : i64} : tensor<1x4x1xf32> -> tensor<4x1xf32>
  return %1 : tensor<4x1xf32>
}

// -----

// A moved einsum operand reads the axes where they are: the letters move.
// CHECK-LABEL: func.func @move_into_einsum_input
// CHECK-SAME: (%[[X:.*]]: tensor<1x5x3xf32>, %[[W:.*]]: tensor<5x7xf32>)
// CHECK-NEXT: %[[E:.*]] = tract.einsum %[[X]], %[[W]] {expr = "Akm,kn->Amn"} : (tensor<1x5x3xf32>, tensor<5x7xf32>) -> tensor<1x3x7xf32>
// CHECK-NEXT: return %[[E]]
func.func @move_into_einsum_input(%x: tensor<1x5x3xf32>, %w: tensor<5x7xf32>) -> tensor<1x3x7xf32> {
  %0 = tract.move_axis %x {from = 1 : i64, to = 2 : i64} : tensor<1x5x3xf32> -> tensor<1x3x5xf32>
  %1 = tract.einsum %0, %w {expr = "Amk,kn->Amn"} : (tensor<1x3x5xf32>, tensor<5x7xf32>) -> tensor<1x3x7xf32>
  return %1 : tensor<1x3x7xf32>
}

// -----

// A move of the einsum's result becomes its output letters.
// CHECK-LABEL: func.func @move_into_einsum_output
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[W:.*]]: tensor<3x4xf32>)
// CHECK-NEXT: %[[E:.*]] = tract.einsum %[[X]], %[[W]] {expr = "mk,kn->nm"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: return %[[E]]
func.func @move_into_einsum_output(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> tensor<4x2xf32> {
  %0 = tract.einsum %x, %w {expr = "mk,kn->mn"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = tract.move_axis %0 {from = 0 : i64, to = 1 : i64} : tensor<2x4xf32> -> tensor<4x2xf32>
  return %1 : tensor<4x2xf32>
}

// -----

// The einsum's result has another user: the move stays.
// CHECK-LABEL: func.func @shared_einsum_keeps_move
// CHECK: tract.einsum %{{.*}} {expr = "mk,kn->mn"}
// CHECK-NEXT: tract.move_axis
func.func @shared_einsum_keeps_move(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> (tensor<2x4xf32>, tensor<4x2xf32>) {
  %0 = tract.einsum %x, %w {expr = "mk,kn->mn"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = tract.move_axis %0 {from = 0 : i64, to = 1 : i64} : tensor<2x4xf32> -> tensor<4x2xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<4x2xf32>
}

// -----

// A transpose to channels-last after a 1x1 convolution's einsum and its
// bias travels up through the add (the bias moves too) into the einsum's
// output letters.
// CHECK-LABEL: func.func @move_pulled_up_into_einsum
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x3x3xf32>)
// CHECK-DAG: %[[B:.*]] = tract.const dense<{{\[\[\[\[}}1.000000e+00, 2.000000e+00]]]]> : tensor<1x1x1x2xf32>
// CHECK-DAG: %[[W:.*]] = tract.const dense<5.000000e-01> : tensor<2x4xf32>
// CHECK: %[[E:.*]] = tract.einsum %[[X]], %[[W]] {expr = "ncxy,oc->nxyo"} : (tensor<1x4x3x3xf32>, tensor<2x4xf32>) -> tensor<1x3x3x2xf32>
// CHECK-NEXT: %[[A:.*]] = tract.add %[[E]], %[[B]]
// CHECK-NEXT: %[[S:.*]] = tract.sigmoid %[[A]]
// CHECK-NEXT: return %[[S]]
func.func @move_pulled_up_into_einsum(%x: tensor<1x4x3x3xf32>) -> tensor<1x3x3x2xf32> {
  %w = tract.const dense<0.5> : tensor<2x4xf32>
  %b = tract.const dense<[[[[1.0]], [[2.0]]]]> : tensor<1x2x1x1xf32>
  %e = tract.einsum %x, %w {expr = "ncxy,oc->noxy"} : (tensor<1x4x3x3xf32>, tensor<2x4xf32>) -> tensor<1x2x3x3xf32>
  %a = tract.add %e, %b : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %s = tract.sigmoid %a : tensor<1x2x3x3xf32>
  %m = tract.move_axis %s {from = 1 : i64, to = 3 : i64} : tensor<1x2x3x3xf32> -> tensor<1x3x3x2xf32>
  return %m : tensor<1x3x3x2xf32>
}

// -----

// The einsum's result is read twice: the move stays below the add.
// CHECK-LABEL: func.func @move_not_pulled_into_shared_einsum
// CHECK: tract.einsum {{.*}} {expr = "ncxy,oc->noxy"}
// CHECK: tract.add
// CHECK-NEXT: tract.move_axis
func.func @move_not_pulled_into_shared_einsum(%x: tensor<1x4x3x3xf32>) -> (tensor<1x3x3x2xf32>, tensor<1x2x3x3xf32>) {
  %w = tract.const dense<0.5> : tensor<2x4xf32>
  %b = tract.const dense<[[[[1.0]], [[2.0]]]]> : tensor<1x2x1x1xf32>
  %e = tract.einsum %x, %w {expr = "ncxy,oc->noxy"} : (tensor<1x4x3x3xf32>, tensor<2x4xf32>) -> tensor<1x2x3x3xf32>
  %a = tract.add %e, %b : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %m = tract.move_axis %a {from = 1 : i64, to = 3 : i64} : tensor<1x2x3x3xf32> -> tensor<1x3x3x2xf32>
  return %m, %e : tensor<1x3x3x2xf32>, tensor<1x2x3x3xf32>
}

// -----

// Attention heads: the (2, 0, 3, 1, 4) transpose of a fused q, k, v
// projection goes down through the slices, the axis removal, the scaling
// and the softmax into the einsums' letters.
// CHECK-LABEL: func.func @attention_transpose_absorbed
// CHECK-NOT: tract.move_axis
// CHECK: tract.einsum {{.*}} {expr = "bqhd,bkhd->bhqk"}
// CHECK-NEXT: tract.softmax {{.*}} {axes = array<i64: 3>}
// CHECK-NEXT: tract.einsum {{.*}} {expr = "bhqk,bkhd->bhqd"}
// CHECK-NEXT: return
func.func @attention_transpose_absorbed(%x: tensor<1x5x3x2x4xf32>) -> tensor<1x2x5x4xf32> {
  %scale = tract.const dense<0.5> : tensor<1x1x1x1xf32>
  %m0 = tract.move_axis %x {from = 0 : i64, to = 2 : i64} : tensor<1x5x3x2x4xf32> -> tensor<5x3x1x2x4xf32>
  %m1 = tract.move_axis %m0 {from = 0 : i64, to = 3 : i64} : tensor<5x3x1x2x4xf32> -> tensor<3x1x2x5x4xf32>
  %qs = tract.slice %m1 {axis = 0 : i64, start = #tract.dim<0>, end = #tract.dim<1>} : tensor<3x1x2x5x4xf32> -> tensor<1x1x2x5x4xf32>
  %ks = tract.slice %m1 {axis = 0 : i64, start = #tract.dim<1>, end = #tract.dim<2>} : tensor<3x1x2x5x4xf32> -> tensor<1x1x2x5x4xf32>
  %vs = tract.slice %m1 {axis = 0 : i64, start = #tract.dim<2>, end = #tract.dim<3>} : tensor<3x1x2x5x4xf32> -> tensor<1x1x2x5x4xf32>
  %q = tract.rm_axis %qs {axis = 0 : i64} : tensor<1x1x2x5x4xf32> -> tensor<1x2x5x4xf32>
  %k = tract.rm_axis %ks {axis = 0 : i64} : tensor<1x1x2x5x4xf32> -> tensor<1x2x5x4xf32>
  %v = tract.rm_axis %vs {axis = 0 : i64} : tensor<1x1x2x5x4xf32> -> tensor<1x2x5x4xf32>
  %qk = tract.mul %q, %scale : (tensor<1x2x5x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x2x5x4xf32>
  %s = tract.einsum %qk, %k {expr = "bhqd,bhkd->bhqk"} : (tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x5x5xf32>
  %p = tract.softmax %s {axes = array<i64: 3>} : tensor<1x2x5x5xf32> -> tensor<1x2x5x5xf32>
  %o = tract.einsum %p, %v {expr = "bhqk,bhkd->bhqd"} : (tensor<1x2x5x5xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x5x4xf32>
  return %o : tensor<1x2x5x4xf32>
}

// -----

// A move read by a slice and something else stays.
// CHECK-LABEL: func.func @move_read_by_other_than_slices_kept
// CHECK: %[[M:.*]] = tract.move_axis
// CHECK-NEXT: tract.slice %[[M]]
func.func @move_read_by_other_than_slices_kept(%x: tensor<2x3xf32>) -> (tensor<1x2xf32>, tensor<3x2xf32>) {
  %m = tract.move_axis %x {from = 0 : i64, to = 1 : i64} : tensor<2x3xf32> -> tensor<3x2xf32>
  %s = tract.slice %m {axis = 0 : i64, start = #tract.dim<0>, end = #tract.dim<1>} : tensor<3x2xf32> -> tensor<1x2xf32>
  return %s, %m : tensor<1x2xf32>, tensor<3x2xf32>
}

// -----

// Removing the moved axis needs no move; removing another one keeps the
// rest of the permutation.
// CHECK-LABEL: func.func @move_through_rm_axis
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x4xf32>, %[[Y:.*]]: tensor<2x1x4xf32>)
// CHECK-NEXT: %[[A:.*]] = tract.rm_axis %[[X]] {axis = 0 : i64} : tensor<1x3x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT: %[[B:.*]] = tract.rm_axis %[[Y]] {axis = 1 : i64} : tensor<2x1x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT: %[[C:.*]] = tract.move_axis %[[B]] {from = 0 : i64, to = 1 : i64} : tensor<2x4xf32> -> tensor<4x2xf32>
// CHECK-NEXT: return %[[A]], %[[C]]
func.func @move_through_rm_axis(%x: tensor<1x3x4xf32>, %y: tensor<2x1x4xf32>) -> (tensor<3x4xf32>, tensor<4x2xf32>) {
  %m = tract.move_axis %x {from = 0 : i64, to = 2 : i64} : tensor<1x3x4xf32> -> tensor<3x4x1xf32>
  %a = tract.rm_axis %m {axis = 2 : i64} : tensor<3x4x1xf32> -> tensor<3x4xf32>
  %n = tract.move_axis %y {from = 0 : i64, to = 2 : i64} : tensor<2x1x4xf32> -> tensor<1x4x2xf32>
  %b = tract.rm_axis %n {axis = 0 : i64} : tensor<1x4x2xf32> -> tensor<4x2xf32>
  return %a, %b : tensor<3x4xf32>, tensor<4x2xf32>
}

// -----

// Reductions and normalizations run on the axes the move came from.
// CHECK-LABEL: func.func @move_through_reductions
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.*]] = tract.reduce sum %[[X]] {axes = array<i64: 0, 1>} : tensor<2x3x4xf32> -> tensor<1x1x4xf32>
// CHECK-NEXT: %[[A:.*]] = tract.move_axis %[[R]] {from = 0 : i64, to = 2 : i64} : tensor<1x1x4xf32> -> tensor<1x4x1xf32>
// CHECK-NEXT: %[[N:.*]] = tract.rms_norm %[[X]] {axis = 0 : i64}
// CHECK-NEXT: %[[S:.*]] = tract.softmax %[[N]] {axes = array<i64: 1>}
// CHECK-NEXT: %[[B:.*]] = tract.move_axis %[[S]] {from = 0 : i64, to = 2 : i64} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @move_through_reductions(%x: tensor<2x3x4xf32>) -> (tensor<1x4x1xf32>, tensor<3x4x2xf32>) {
  %m = tract.move_axis %x {from = 0 : i64, to = 2 : i64} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %r = tract.reduce sum %m {axes = array<i64: 0, 2>} : tensor<3x4x2xf32> -> tensor<1x4x1xf32>
  %n = tract.move_axis %x {from = 0 : i64, to = 2 : i64} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %a = tract.rms_norm %n {axis = 2 : i64} : tensor<3x4x2xf32> -> tensor<3x4x2xf32>
  %s = tract.softmax %a {axes = array<i64: 0>} : tensor<3x4x2xf32> -> tensor<3x4x2xf32>
  return %r, %s : tensor<1x4x1xf32>, tensor<3x4x2xf32>
}

// -----

// A slice of a slice on the same axis is one slice; on another axis both
// stay.
// CHECK-LABEL: func.func @slice_of_slice
// CHECK-SAME: (%[[X:.*]]: tensor<10x4xf32>)
// CHECK-NEXT: %[[B:.*]] = tract.slice %[[X]] {axis = 0 : i64, end = #tract.dim<8>, start = #tract.dim<2>}
// CHECK-NEXT: %[[A:.*]] = tract.slice %[[X]] {axis = 0 : i64, end = #tract.dim<6>, start = #tract.dim<3>} : tensor<10x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT: %[[C:.*]] = tract.slice %[[B]] {axis = 1 : i64, end = #tract.dim<3>, start = #tract.dim<1>}
// CHECK-NEXT: return %[[A]], %[[C]]
func.func @slice_of_slice(%x: tensor<10x4xf32>) -> (tensor<3x4xf32>, tensor<6x2xf32>) {
  %a = tract.slice %x {axis = 0 : i64, start = #tract.dim<2>, end = #tract.dim<8>} : tensor<10x4xf32> -> tensor<6x4xf32>
  %b = tract.slice %a {axis = 0 : i64, start = #tract.dim<1>, end = #tract.dim<4>} : tensor<6x4xf32> -> tensor<3x4xf32>
  %c = tract.slice %a {axis = 1 : i64, start = #tract.dim<1>, end = #tract.dim<3>} : tensor<6x4xf32> -> tensor<6x2xf32>
  return %b, %c : tensor<3x4xf32>, tensor<6x2xf32>
}

// -----

// Slices of a concat that fall within one input read that input; one
// across two inputs stays.
// CHECK-LABEL: func.func @slice_of_concat
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<2x4xf32>)
// CHECK-NEXT: %[[C:.*]] = tract.concat %[[X]], %[[Y]]
// CHECK-NEXT: %[[S:.*]] = tract.slice %[[Y]] {axis = 1 : i64, end = #tract.dim<3>, start = #tract.dim<1>} : tensor<2x4xf32> -> tensor<2x2xf32>
// CHECK-NEXT: %[[T:.*]] = tract.slice %[[C]] {axis = 1 : i64, end = #tract.dim<5>, start = #tract.dim<2>}
// CHECK-NEXT: return %[[X]], %[[S]], %[[T]]
func.func @slice_of_concat(%x: tensor<2x3xf32>, %y: tensor<2x4xf32>) -> (tensor<2x3xf32>, tensor<2x2xf32>, tensor<2x3xf32>) {
  %c = tract.concat %x, %y {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<2x7xf32>
  %a = tract.slice %c {axis = 1 : i64, start = #tract.dim<0>, end = #tract.dim<3>} : tensor<2x7xf32> -> tensor<2x3xf32>
  %b = tract.slice %c {axis = 1 : i64, start = #tract.dim<4>, end = #tract.dim<6>} : tensor<2x7xf32> -> tensor<2x2xf32>
  %t = tract.slice %c {axis = 1 : i64, start = #tract.dim<2>, end = #tract.dim<5>} : tensor<2x7xf32> -> tensor<2x3xf32>
  return %a, %b, %t : tensor<2x3xf32>, tensor<2x2xf32>, tensor<2x3xf32>
}

// -----

// Two reshapes become one over the axes that change.
// CHECK-LABEL: func.func @reshape_of_reshape
// CHECK-SAME: (%[[X:.*]]: tensor<2x12x5xf32>)
// CHECK-NEXT: %[[R:.*]] = tract.reshape %[[X]] {at = 1 : i64, count = 1 : i64, to = #tract.shape<[2, 2, 3]>} : tensor<2x12x5xf32> -> tensor<2x2x2x3x5xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_of_reshape(%x: tensor<2x12x5xf32>) -> tensor<2x2x2x3x5xf32> {
  %a = tract.reshape %x {at = 1 : i64, count = 1 : i64, to = #tract.shape<[4, 3]>} : tensor<2x12x5xf32> -> tensor<2x4x3x5xf32>
  %b = tract.reshape %a {at = 1 : i64, count = 1 : i64, to = #tract.shape<[2, 2]>} : tensor<2x4x3x5xf32> -> tensor<2x2x2x3x5xf32>
  return %b : tensor<2x2x2x3x5xf32>
}

// -----

// A reshape that removes or inserts one axis of 1 is rm_axis or add_axis;
// one that splits an axis stays.
// CHECK-LABEL: func.func @reshape_as_axis_op
// CHECK-SAME: (%[[X:.*]]: tensor<2x1x?xf32, #tract.dims<[S]>>, %[[Y:.*]]: tensor<6xf32>)
// CHECK-NEXT: %[[A:.*]] = tract.rm_axis %[[X]] {axis = 1 : i64} : tensor<2x1x?xf32, #tract.dims<[S]>> -> tensor<2x?xf32, #tract.dims<[S]>>
// CHECK-NEXT: %[[B:.*]] = tract.add_axis %[[Y]] {axis = 1 : i64} : tensor<6xf32> -> tensor<6x1xf32>
// CHECK-NEXT: %[[C:.*]] = tract.reshape %[[Y]] {at = 0 : i64, count = 1 : i64, to = #tract.shape<[2, 3]>}
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]]
func.func @reshape_as_axis_op(%x: tensor<2x1x?xf32, #tract.dims<[S]>>, %y: tensor<6xf32>) -> (tensor<2x?xf32, #tract.dims<[S]>>, tensor<6x1xf32>, tensor<2x3xf32>) {
  %a = tract.reshape %x {at = 1 : i64, count = 1 : i64, to = #tract.shape<[]>} : tensor<2x1x?xf32, #tract.dims<[S]>> -> tensor<2x?xf32, #tract.dims<[S]>>
  %b = tract.reshape %y {at = 1 : i64, count = 0 : i64, to = #tract.shape<[1]>} : tensor<6xf32> -> tensor<6x1xf32>
  %c = tract.reshape %y {at = 0 : i64, count = 1 : i64, to = #tract.shape<[2, 3]>} : tensor<6xf32> -> tensor<2x3xf32>
  return %a, %b, %c : tensor<2x?xf32, #tract.dims<[S]>>, tensor<6x1xf32>, tensor<2x3xf32>
}

// -----

// An axis added after a move goes in before it, next to the axis that
// precedes it in the result.
// CHECK-LABEL: func.func @move_through_add_axis
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[A:.*]] = tract.add_axis %[[X]] {axis = 2 : i64} : tensor<2x3x4xf32> -> tensor<2x3x1x4xf32>
// CHECK-NEXT: %[[M:.*]] = tract.move_axis %[[A]] {from = 0 : i64, to = 3 : i64} : tensor<2x3x1x4xf32> -> tensor<3x1x4x2xf32>
// CHECK-NEXT: return %[[M]]
func.func @move_through_add_axis(%x: tensor<2x3x4xf32>) -> tensor<3x1x4x2xf32> {
  %m = tract.move_axis %x {from = 0 : i64, to = 2 : i64} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %a = tract.add_axis %m {axis = 1 : i64} : tensor<3x4x2xf32> -> tensor<3x1x4x2xf32>
  return %a : tensor<3x1x4x2xf32>
}

// -----

// A transformer block in sequence layout behind a transpose that its
// layer norm and its residual add both read: the move splits per reader,
// travels through the norm, the projection and the residual add (the
// projection's einsum takes the inverse move), and vanishes into the last
// einsum.
// CHECK-LABEL: func.func @shared_move_split_and_absorbed
// CHECK-NOT: tract.move_axis
// CHECK: tract.rms_norm {{.*}} {axis = 1 : i64
// CHECK: tract.einsum {{.*}} {expr = "Akm,kn->Anm"}
// CHECK: tract.einsum {{.*}} {expr = "Akm,kn->Amn"}
// CHECK-NOT: tract.move_axis
// CHECK: return
func.func @shared_move_split_and_absorbed(%x: tensor<1x8x5xf32>) -> tensor<1x5x3xf32> {
  %w = tract.const dense<0.5> : tensor<8x8xf32>
  %v = tract.const dense<0.25> : tensor<8x3xf32>
  %g = tract.const dense<2.0> : tensor<1x1x8xf32>
  %m = tract.move_axis %x {from = 1 : i64, to = 2 : i64} : tensor<1x8x5xf32> -> tensor<1x5x8xf32>
  %n = tract.rms_norm %m {axis = 2 : i64} : tensor<1x5x8xf32> -> tensor<1x5x8xf32>
  %s = tract.mul %n, %g : (tensor<1x5x8xf32>, tensor<1x1x8xf32>) -> tensor<1x5x8xf32>
  %p = tract.einsum %s, %w {expr = "Amk,kn->Amn"} : (tensor<1x5x8xf32>, tensor<8x8xf32>) -> tensor<1x5x8xf32>
  %r = tract.add %m, %p : (tensor<1x5x8xf32>, tensor<1x5x8xf32>) -> tensor<1x5x8xf32>
  %o = tract.einsum %r, %v {expr = "Amk,kn->Amn"} : (tensor<1x5x8xf32>, tensor<8x3xf32>) -> tensor<1x5x3xf32>
  return %o : tensor<1x5x3xf32>
}

// -----

// A move that the function returns as well stays whole.
// CHECK-LABEL: func.func @shared_move_returned_kept
// CHECK-COUNT-1: tract.move_axis
// CHECK-NOT: tract.move_axis
func.func @shared_move_returned_kept(%x: tensor<1x8x5xf32>) -> (tensor<1x5x8xf32>, tensor<1x5x8xf32>) {
  %m = tract.move_axis %x {from = 1 : i64, to = 2 : i64} : tensor<1x8x5xf32> -> tensor<1x5x8xf32>
  %n = tract.rms_norm %m {axis = 2 : i64} : tensor<1x5x8xf32> -> tensor<1x5x8xf32>
  return %m, %n : tensor<1x5x8xf32>, tensor<1x5x8xf32>
}

// -----

// A scatter_nd at constant indices writing rows 1 to 3 of axis 1, whole
// along the others, is the data around the block and the updates,
// concatenated (negative indices count from the end).
// CHECK-LABEL: func.func @scatter_nd_block
// CHECK-SAME: (%[[D:.*]]: tensor<2x5x3xf32>, %[[U:.*]]: tensor<2x3x3xf32>)
// CHECK-DAG:  %[[HEAD:.*]] = tract.slice %[[D]] {axis = 1 : i64, end = #tract.dim<1>, start = #tract.dim<0>}
// CHECK-DAG:  %[[TAIL:.*]] = tract.slice %[[D]] {axis = 1 : i64, end = #tract.dim<5>, start = #tract.dim<4>}
// CHECK:      %[[R:.*]] = tract.concat %[[HEAD]], %[[U]], %[[TAIL]] {axis = 1 : i64}
// CHECK-NEXT: return %[[R]]
func.func @scatter_nd_block(%data: tensor<2x5x3xf32>, %updates: tensor<2x3x3xf32>) -> tensor<2x5x3xf32> {
  %indices = tract.const dense<[
    [[[0, 1, 0], [0, 1, 1], [0, 1, 2]], [[0, 2, 0], [0, 2, 1], [0, 2, 2]], [[0, 3, 0], [0, 3, 1], [0, -2, 2]]],
    [[[1, 1, 0], [1, 1, 1], [1, 1, 2]], [[1, 2, 0], [1, 2, 1], [1, 2, 2]], [[1, 3, 0], [1, 3, 1], [1, 3, 2]]]]> : tensor<2x3x3x3xi64>
  %0 = tract.scatter_nd %data, %indices, %updates : (tensor<2x5x3xf32>, tensor<2x3x3x3xi64>, tensor<2x3x3xf32>) -> tensor<2x5x3xf32>
  return %0 : tensor<2x5x3xf32>
}

// -----

// Rows out of order are not one block: the scatter stays.
// CHECK-LABEL: func.func @scatter_nd_shuffled
// CHECK: tract.scatter_nd
func.func @scatter_nd_shuffled(%data: tensor<4x2xf32>, %updates: tensor<2x2xf32>) -> tensor<4x2xf32> {
  %indices = tract.const dense<[[[2, 0], [2, 1]], [[1, 0], [1, 1]]]> : tensor<2x2x2xi64>
  %0 = tract.scatter_nd %data, %indices, %updates : (tensor<4x2xf32>, tensor<2x2x2xi64>, tensor<2x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// An unsqueeze/squeeze pair around a softmax (as an exporter writes it) goes
// away; the softmax axis is renumbered.
// CHECK-LABEL: func.func @axis_around_softmax
// CHECK-SAME: (%[[X:.*]]: tensor<2x1x3xf32>)
// CHECK-NEXT: %[[S:.*]] = tract.softmax %[[X]] {axes = array<i64: 2>} : tensor<2x1x3xf32> -> tensor<2x1x3xf32>
// CHECK-NEXT: return %[[S]]
func.func @axis_around_softmax(%x: tensor<2x1x3xf32>) -> tensor<2x1x3xf32> {
  %0 = tract.add_axis %x {axis = 1 : i64} : tensor<2x1x3xf32> -> tensor<2x1x1x3xf32>
  %1 = tract.softmax %0 {axes = array<i64: 3>} : tensor<2x1x1x3xf32> -> tensor<2x1x1x3xf32>
  %2 = tract.rm_axis %1 {axis = 1 : i64} : tensor<2x1x1x3xf32> -> tensor<2x1x3xf32>
  return %2 : tensor<2x1x3xf32>
}

// -----

// A softmax over the added axis itself keeps it.
// CHECK-LABEL: func.func @softmax_over_added_axis
// CHECK: tract.add_axis
// CHECK: tract.softmax
// CHECK: tract.rm_axis
func.func @softmax_over_added_axis(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tract.add_axis %x {axis = 1 : i64} : tensor<2x3xf32> -> tensor<2x1x3xf32>
  %1 = tract.softmax %0 {axes = array<i64: 1>} : tensor<2x1x3xf32> -> tensor<2x1x3xf32>
  %2 = tract.rm_axis %1 {axis = 1 : i64} : tensor<2x1x3xf32> -> tensor<2x3xf32>
  return %2 : tensor<2x3xf32>
}
