// RUN: tract-opt %s -tract-declutter -split-input-file | FileCheck %s

// Rotary embedding as Llama exports it: x * cos + rotate_half(x) * sin,
// rotate_half(x) = concat(-x[4:], x[:4]) on the last axis.
// CHECK-LABEL: func.func @apply_rope
// CHECK-NEXT: %[[Y:.*]] = tract.apply_rope %arg0, %arg1, %arg2 : (tensor<1x2x?x8xf32, #tract.dims<[S]>>, tensor<1x1x?x8xf32, #tract.dims<[S]>>, tensor<1x1x?x8xf32, #tract.dims<[S]>>) -> tensor<1x2x?x8xf32, #tract.dims<[S]>>
// CHECK-NEXT: return %[[Y]]
func.func @apply_rope(%x: tensor<1x2x?x8xf32, #tract.dims<[S]>>, %cos: tensor<1x1x?x8xf32, #tract.dims<[S]>>, %sin: tensor<1x1x?x8xf32, #tract.dims<[S]>>) -> tensor<1x2x?x8xf32, #tract.dims<[S]>> {
  %c = tract.mul %x, %cos : (tensor<1x2x?x8xf32, #tract.dims<[S]>>, tensor<1x1x?x8xf32, #tract.dims<[S]>>) -> tensor<1x2x?x8xf32, #tract.dims<[S]>>
  %hi = tract.slice %x {axis = 3 : i64, start = #tract.dim<4>, end = #tract.dim<8>} : tensor<1x2x?x8xf32, #tract.dims<[S]>> -> tensor<1x2x?x4xf32, #tract.dims<[S]>>
  %n = tract.neg %hi : tensor<1x2x?x4xf32, #tract.dims<[S]>>
  %lo = tract.slice %x {axis = 3 : i64, start = #tract.dim<0>, end = #tract.dim<4>} : tensor<1x2x?x8xf32, #tract.dims<[S]>> -> tensor<1x2x?x4xf32, #tract.dims<[S]>>
  %r = tract.concat %n, %lo {axis = 3 : i64} : (tensor<1x2x?x4xf32, #tract.dims<[S]>>, tensor<1x2x?x4xf32, #tract.dims<[S]>>) -> tensor<1x2x?x8xf32, #tract.dims<[S]>>
  %s = tract.mul %sin, %r : (tensor<1x1x?x8xf32, #tract.dims<[S]>>, tensor<1x2x?x8xf32, #tract.dims<[S]>>) -> tensor<1x2x?x8xf32, #tract.dims<[S]>>
  %y = tract.add %s, %c : (tensor<1x2x?x8xf32, #tract.dims<[S]>>, tensor<1x2x?x8xf32, #tract.dims<[S]>>) -> tensor<1x2x?x8xf32, #tract.dims<[S]>>
  return %y : tensor<1x2x?x8xf32, #tract.dims<[S]>>
}

// -----

// Halves that are not the input's halves (x[3:], x[:3] of 8): no rope.
// CHECK-LABEL: func.func @not_a_rope
// CHECK-NOT: tract.apply_rope
func.func @not_a_rope(%x: tensor<2x8xf32>, %cos: tensor<2x8xf32>, %sin: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %c = tract.mul %x, %cos : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %hi = tract.slice %x {axis = 1 : i64, start = #tract.dim<3>, end = #tract.dim<8>} : tensor<2x8xf32> -> tensor<2x5xf32>
  %n = tract.neg %hi : tensor<2x5xf32>
  %lo = tract.slice %x {axis = 1 : i64, start = #tract.dim<0>, end = #tract.dim<3>} : tensor<2x8xf32> -> tensor<2x3xf32>
  %r = tract.concat %n, %lo {axis = 1 : i64} : (tensor<2x5xf32>, tensor<2x3xf32>) -> tensor<2x8xf32>
  %s = tract.mul %r, %sin : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %y = tract.add %c, %s : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// Grouped-query attention as HuggingFace exports it: keys and values
// repeated from 2 to 4 heads (repeat_kv), q . k^T, a scale, an additive
// mask, a softmax over the keys and the product with the values written
// (batch, queries, heads, d). It is sdpa over the unrepeated keys and
// values, then the move of the heads after the queries.
// CHECK-LABEL: func.func @grouped_attention
// CHECK-NEXT: %[[A:.*]] = tract.sdpa %arg0, %arg1, %arg2, %arg3 {scale = 0.35355338454246521 : f64} : (tensor<1x4x?x8xf32, #tract.dims<[S]>>, tensor<1x2x?x8xf32, #tract.dims<[T]>>, tensor<1x2x?x8xf32, #tract.dims<[T]>>, tensor<1x1x?x?xf32, #tract.dims<[S, T]>>) -> tensor<1x4x?x8xf32, #tract.dims<[S]>>
// CHECK-NEXT: %[[O:.*]] = tract.move_axis %[[A]] {from = 2 : i64, to = 1 : i64} : tensor<1x4x?x8xf32, #tract.dims<[S]>> -> tensor<1x?x4x8xf32, #tract.dims<[S]>>
// CHECK-NEXT: return %[[O]]
func.func @grouped_attention(%q: tensor<1x4x?x8xf32, #tract.dims<[S]>>, %k: tensor<1x2x?x8xf32, #tract.dims<[T]>>, %v: tensor<1x2x?x8xf32, #tract.dims<[T]>>, %mask: tensor<1x1x?x?xf32, #tract.dims<[S, T]>>) -> tensor<1x?x4x8xf32, #tract.dims<[S]>> {
  %ka = tract.add_axis %k {axis = 2 : i64} : tensor<1x2x?x8xf32, #tract.dims<[T]>> -> tensor<1x2x1x?x8xf32, #tract.dims<[T]>>
  %kb = tract.broadcast %ka {shape = #tract.shape<[1, 2, 2, T, 8]>} : tensor<1x2x1x?x8xf32, #tract.dims<[T]>> -> tensor<1x2x2x?x8xf32, #tract.dims<[T]>>
  %kr = tract.reshape %kb {at = 1 : i64, count = 2 : i64, to = #tract.shape<[4]>} : tensor<1x2x2x?x8xf32, #tract.dims<[T]>> -> tensor<1x4x?x8xf32, #tract.dims<[T]>>
  %va = tract.add_axis %v {axis = 2 : i64} : tensor<1x2x?x8xf32, #tract.dims<[T]>> -> tensor<1x2x1x?x8xf32, #tract.dims<[T]>>
  %vb = tract.broadcast %va {shape = #tract.shape<[1, 2, 2, T, 8]>} : tensor<1x2x1x?x8xf32, #tract.dims<[T]>> -> tensor<1x2x2x?x8xf32, #tract.dims<[T]>>
  %vr = tract.reshape %vb {at = 1 : i64, count = 2 : i64, to = #tract.shape<[4]>} : tensor<1x2x2x?x8xf32, #tract.dims<[T]>> -> tensor<1x4x?x8xf32, #tract.dims<[T]>>
  %s = tract.einsum %q, %kr {expr = "ABmk,ABnk->ABmn"} : (tensor<1x4x?x8xf32, #tract.dims<[S]>>, tensor<1x4x?x8xf32, #tract.dims<[T]>>) -> tensor<1x4x?x?xf32, #tract.dims<[S, T]>>
  %scale = tract.const dense<0.353553385> : tensor<1x1x1x1xf32>
  %m = tract.mul %s, %scale : (tensor<1x4x?x?xf32, #tract.dims<[S, T]>>, tensor<1x1x1x1xf32>) -> tensor<1x4x?x?xf32, #tract.dims<[S, T]>>
  %a = tract.add %m, %mask : (tensor<1x4x?x?xf32, #tract.dims<[S, T]>>, tensor<1x1x?x?xf32, #tract.dims<[S, T]>>) -> tensor<1x4x?x?xf32, #tract.dims<[S, T]>>
  %p = tract.softmax %a {axes = array<i64: 3>} : tensor<1x4x?x?xf32, #tract.dims<[S, T]>> -> tensor<1x4x?x?xf32, #tract.dims<[S, T]>>
  %o = tract.einsum %p, %vr {expr = "ABmk,ABkn->AmBn"} : (tensor<1x4x?x?xf32, #tract.dims<[S, T]>>, tensor<1x4x?x8xf32, #tract.dims<[T]>>) -> tensor<1x?x4x8xf32, #tract.dims<[S]>>
  return %o : tensor<1x?x4x8xf32, #tract.dims<[S]>>
}

// -----

// Attention without scale or mask, in the einsums' own order: sdpa with a
// scale of 1 and nothing to move.
// CHECK-LABEL: func.func @plain_attention
// CHECK-NEXT: %[[A:.*]] = tract.sdpa %arg0, %arg1, %arg2 {scale = 1.000000e+00 : f64}
// CHECK-NEXT: return %[[A]]
func.func @plain_attention(%q: tensor<2x5x8xf32>, %k: tensor<2x7x8xf32>, %v: tensor<2x7x3xf32>) -> tensor<2x5x3xf32> {
  %s = tract.einsum %q, %k {expr = "bqd,bkd->bqk"} : (tensor<2x5x8xf32>, tensor<2x7x8xf32>) -> tensor<2x5x7xf32>
  %p = tract.softmax %s {axes = array<i64: 2>} : tensor<2x5x7xf32> -> tensor<2x5x7xf32>
  %o = tract.einsum %p, %v {expr = "bqk,bkd->bqd"} : (tensor<2x5x7xf32>, tensor<2x7x3xf32>) -> tensor<2x5x3xf32>
  return %o : tensor<2x5x3xf32>
}

// -----

// The scores read elsewhere too (returned): the attention stays expanded.
// CHECK-LABEL: func.func @scores_used_twice
// CHECK-NOT: tract.sdpa
func.func @scores_used_twice(%q: tensor<2x5x8xf32>, %k: tensor<2x7x8xf32>, %v: tensor<2x7x3xf32>) -> (tensor<2x5x3xf32>, tensor<2x5x7xf32>) {
  %s = tract.einsum %q, %k {expr = "bqd,bkd->bqk"} : (tensor<2x5x8xf32>, tensor<2x7x8xf32>) -> tensor<2x5x7xf32>
  %p = tract.softmax %s {axes = array<i64: 2>} : tensor<2x5x7xf32> -> tensor<2x5x7xf32>
  %o = tract.einsum %p, %v {expr = "bqk,bkd->bqd"} : (tensor<2x5x7xf32>, tensor<2x7x3xf32>) -> tensor<2x5x3xf32>
  return %o, %s : tensor<2x5x3xf32>, tensor<2x5x7xf32>
}
