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
