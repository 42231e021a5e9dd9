// RUN: tract-opt %s -tract-declutter -split-input-file | FileCheck %s

// The body is decluttered like the rest: x * 1 goes, the constant full
// input is captured.
// CHECK-LABEL: func.func @body_is_decluttered
// CHECK: tract.scan %{{.*}}, %{{.*}} attributes
// CHECK-NEXT: ^bb0(%[[H:.*]]: tensor<1x4xf32>, %[[X:.*]]: tensor<1x4xf32>):
// CHECK-NEXT: %[[N:.*]] = tract.add %[[H]], %[[X]]
// CHECK-NEXT: tract.yield %[[N]], %[[N]]
// CHECK-NEXT: } : (tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>) ->
func.func @body_is_decluttered(%h0: tensor<1x4xf32>, %xs: tensor<?x4xf32, #tract.dims<[S]>>) -> (tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>) {
  %one = tract.const dense<1.0> : tensor<1x1xf32>
  %r:2 = tract.scan %h0, %xs, %one attributes {num_states = 1 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>, output_axes = array<i64: 0>} {
  ^bb0(%h: tensor<1x4xf32>, %x: tensor<1x4xf32>, %c: tensor<1x1xf32>):
    %m = tract.mul %x, %c : (tensor<1x4xf32>, tensor<1x1xf32>) -> tensor<1x4xf32>
    %n = tract.add %h, %m : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    tract.yield %n, %n : tensor<1x4xf32>, tensor<1x4xf32>
  } : (tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>, tensor<1x1xf32>) -> (tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>)
  return %r#0, %r#1 : tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>
}

// -----

// A non-constant full input is captured as well.
// CHECK-LABEL: func.func @full_input_captured
// CHECK-SAME: (%[[H0:.*]]: tensor<1x4xf32>, %[[XS:.*]]: tensor<?x4xf32, #tract.dims<[S]>>, %[[W:.*]]: tensor<1x4xf32>)
// CHECK: tract.scan %[[H0]], %[[XS]] attributes
// CHECK-NEXT: ^bb0(%[[H:.*]]: tensor<1x4xf32>, %[[X:.*]]: tensor<1x4xf32>):
// CHECK-NEXT: tract.mul %[[H]], %[[W]]
func.func @full_input_captured(%h0: tensor<1x4xf32>, %xs: tensor<?x4xf32, #tract.dims<[S]>>, %w: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %r = tract.scan %h0, %xs, %w attributes {num_states = 1 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>, output_axes = array<i64>} {
  ^bb0(%h: tensor<1x4xf32>, %x: tensor<1x4xf32>, %v: tensor<1x4xf32>):
    %m = tract.mul %h, %v : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    %n = tract.add %m, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    tract.yield %n : tensor<1x4xf32>
  } : (tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>, tensor<1x4xf32>) -> tensor<1x4xf32>
  return %r : tensor<1x4xf32>
}

// -----

// An output nobody reads goes with the ops that computed it; so does a
// scanned input then unread, and a state (c) only that output needed.
// CHECK-LABEL: func.func @dead_output_input_and_state
// CHECK-SAME: (%[[H0:.*]]: tensor<1x4xf32>, %[[C0:.*]]: tensor<1x4xf32>, %[[XS:.*]]: tensor<?x4xf32, #tract.dims<[S]>>, %[[YS:.*]]: tensor<?x4xf32, #tract.dims<[S]>>)
// CHECK: %[[R:.*]] = tract.scan %[[H0]], %[[XS]] attributes {num_states = 1 : i64, output_axes = array<i64>, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>}
// CHECK-NEXT: ^bb0(%[[H:.*]]: tensor<1x4xf32>, %[[X:.*]]: tensor<1x4xf32>):
// CHECK-NEXT: %[[N:.*]] = tract.add %[[H]], %[[X]]
// CHECK-NEXT: tract.yield %[[N]] : tensor<1x4xf32>
// CHECK-NEXT: } : (tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>) -> tensor<1x4xf32>
// CHECK-NEXT: return %[[R]]
func.func @dead_output_input_and_state(%h0: tensor<1x4xf32>, %c0: tensor<1x4xf32>, %xs: tensor<?x4xf32, #tract.dims<[S]>>, %ys: tensor<?x4xf32, #tract.dims<[S]>>) -> tensor<1x4xf32> {
  %r:3 = tract.scan %h0, %c0, %xs, %ys attributes {num_states = 2 : i64, scan_axes = array<i64: 0, 0>, scan_chunks = array<i64: 1, 1>, output_axes = array<i64: 0>} {
  ^bb0(%h: tensor<1x4xf32>, %c: tensor<1x4xf32>, %x: tensor<1x4xf32>, %y: tensor<1x4xf32>):
    %n = tract.add %h, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    %d = tract.mul %c, %y : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    %e = tract.sub %d, %n : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    tract.yield %n, %d, %e : tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>
  } : (tensor<1x4xf32>, tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>, tensor<?x4xf32, #tract.dims<[S]>>) -> (tensor<1x4xf32>, tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>)
  return %r#0 : tensor<1x4xf32>
}

// -----

// A state read by the body stays even when its final value is not read;
// the last scanned input stays even unread: it gives the iteration count.
// CHECK-LABEL: func.func @read_state_and_last_input_kept
// CHECK: tract.scan %{{.*}}, %{{.*}}, %{{.*}} attributes {num_states = 2 : i64, output_axes = array<i64>, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>}
// CHECK-NEXT: ^bb0(%[[H:.*]]: tensor<1x4xf32>, %[[C:.*]]: tensor<1x4xf32>, %{{.*}}: tensor<1x4xf32>):
// CHECK-NEXT: %[[N:.*]] = tract.add %[[H]], %[[C]]
// CHECK-NEXT: %[[D:.*]] = tract.mul %[[C]], %[[C]]
// CHECK-NEXT: tract.yield %[[N]], %[[D]]
func.func @read_state_and_last_input_kept(%h0: tensor<1x4xf32>, %c0: tensor<1x4xf32>, %xs: tensor<?x4xf32, #tract.dims<[S]>>) -> tensor<1x4xf32> {
  %r:2 = tract.scan %h0, %c0, %xs attributes {num_states = 2 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>, output_axes = array<i64>} {
  ^bb0(%h: tensor<1x4xf32>, %c: tensor<1x4xf32>, %x: tensor<1x4xf32>):
    %n = tract.add %h, %c : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    %d = tract.mul %c, %c : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    tract.yield %n, %d : tensor<1x4xf32>, tensor<1x4xf32>
  } : (tensor<1x4xf32>, tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>) -> (tensor<1x4xf32>, tensor<1x4xf32>)
  return %r#0 : tensor<1x4xf32>
}

// -----

// A state the body yields unchanged is its initial value; the product of
// the chunk by it, now invariant, then leaves the loop.
// CHECK-LABEL: func.func @pass_through_state
// CHECK-SAME: (%[[H0:.*]]: tensor<1x4xf32>, %[[K0:.*]]: tensor<1x4xf32>, %[[XS:.*]]: tensor<?x4xf32, #tract.dims<[S]>>)
// CHECK-NEXT: %[[XK:.*]] = tract.mul %[[XS]], %[[K0]]
// CHECK-NEXT: %[[R:.*]] = tract.scan %[[H0]], %[[XK]] attributes {num_states = 1 : i64
// CHECK-NEXT: ^bb0(%[[H:.*]]: tensor<1x4xf32>, %[[X:.*]]: tensor<1x4xf32>):
// CHECK-NEXT: %[[N:.*]] = tract.add %[[H]], %[[X]]
// CHECK-NEXT: tract.yield %[[N]]
// CHECK: return %[[R]], %[[K0]]
func.func @pass_through_state(%h0: tensor<1x4xf32>, %k0: tensor<1x4xf32>, %xs: tensor<?x4xf32, #tract.dims<[S]>>) -> (tensor<1x4xf32>, tensor<1x4xf32>) {
  %r:2 = tract.scan %h0, %k0, %xs attributes {num_states = 2 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>, output_axes = array<i64>} {
  ^bb0(%h: tensor<1x4xf32>, %k: tensor<1x4xf32>, %x: tensor<1x4xf32>):
    %m = tract.mul %x, %k : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    %n = tract.add %h, %m : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    tract.yield %n, %k : tensor<1x4xf32>, tensor<1x4xf32>
  } : (tensor<1x4xf32>, tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>) -> (tensor<1x4xf32>, tensor<1x4xf32>)
  return %r#0, %r#1 : tensor<1x4xf32>, tensor<1x4xf32>
}

// -----

// A scan over a single chunk runs once: its body is inlined.
// CHECK-LABEL: func.func @single_iteration_inlined
// CHECK-SAME: (%[[H0:.*]]: tensor<1x4xf32>, %[[XS:.*]]: tensor<1x4xf32>)
// CHECK-NOT: tract.scan
// CHECK: %[[N:.*]] = tract.add %[[H0]], %[[XS]]
// CHECK-NEXT: %[[M:.*]] = tract.mul %[[N]], %[[N]]
// CHECK-NEXT: return %[[N]], %[[M]]
func.func @single_iteration_inlined(%h0: tensor<1x4xf32>, %xs: tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>) {
  %r:2 = tract.scan %h0, %xs attributes {num_states = 1 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: -1>, output_axes = array<i64: 0>} {
  ^bb0(%h: tensor<1x4xf32>, %x: tensor<1x4xf32>):
    %n = tract.add %h, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    %m = tract.mul %n, %n : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    tract.yield %n, %m : tensor<1x4xf32>, tensor<1x4xf32>
  } : (tensor<1x4xf32>, tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>)
  return %r#0, %r#1 : tensor<1x4xf32>, tensor<1x4xf32>
}

// -----

// Two iterations: the scan stays.
// CHECK-LABEL: func.func @two_iterations_kept
// CHECK: tract.scan
func.func @two_iterations_kept(%h0: tensor<1x4xf32>, %xs: tensor<2x4xf32>) -> tensor<1x4xf32> {
  %r = tract.scan %h0, %xs attributes {num_states = 1 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>, output_axes = array<i64>} {
  ^bb0(%h: tensor<1x4xf32>, %x: tensor<1x4xf32>):
    %n = tract.add %h, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    tract.yield %n : tensor<1x4xf32>
  } : (tensor<1x4xf32>, tensor<2x4xf32>) -> tensor<1x4xf32>
  return %r : tensor<1x4xf32>
}

// -----

// The input half of a recurrent matmul, x_t·Wᵀ + b, leaves the loop: one
// einsum over the whole sequence (the scanned axis a new letter) and the
// bias add, scanned instead of x; the recurrent half h·Rᵀ stays.
// CHECK-LABEL: func.func @recurrent_input_projection_hoisted
// CHECK-SAME: (%[[H0:.*]]: tensor<1x8xf32>, %[[XS:.*]]: tensor<?x1x3xf32, #tract.dims<[S]>>)
// CHECK-DAG: %[[B:.*]] = tract.const dense<{{.*}}> : tensor<1x1x8xf32>
// CHECK-DAG: %[[W:.*]] = tract.const dense<5.000000e-01> : tensor<8x3xf32>
// CHECK-DAG: %[[R:.*]] = tract.const dense<2.500000e-01> : tensor<8x8xf32>
// CHECK: %[[P:.*]] = tract.einsum %[[XS]], %[[W]] {expr = "abi,gi->abg"} : (tensor<?x1x3xf32, #tract.dims<[S]>>, tensor<8x3xf32>) -> tensor<?x1x8xf32, #tract.dims<[S]>>
// CHECK-NEXT: %[[PB:.*]] = tract.add %[[P]], %[[B]] : (tensor<?x1x8xf32, #tract.dims<[S]>>, tensor<1x1x8xf32>) -> tensor<?x1x8xf32, #tract.dims<[S]>>
// CHECK-NEXT: %[[Y:.*]]:2 = tract.scan %[[H0]], %[[PB]] attributes {num_states = 1 : i64, output_axes = array<i64: 0>, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>}
// CHECK-NEXT: ^bb0(%[[H:.*]]: tensor<1x8xf32>, %[[XP:.*]]: tensor<1x1x8xf32>):
// CHECK-NEXT: %[[HR:.*]] = tract.einsum %[[H]], %[[R]] {expr = "bh,gh->bg"}
// CHECK-NEXT: %[[X:.*]] = tract.rm_axis %[[XP]] {axis = 0 : i64}
// CHECK-NEXT: %[[S:.*]] = tract.add %[[X]], %[[HR]]
// CHECK-NEXT: %[[T:.*]] = tract.tanh %[[S]]
// CHECK-NEXT: %[[O:.*]] = tract.add_axis %[[T]] {axis = 0 : i64}
// CHECK-NEXT: tract.yield %[[T]], %[[O]]
func.func @recurrent_input_projection_hoisted(%h0: tensor<1x8xf32>, %xs: tensor<?x1x3xf32, #tract.dims<[S]>>) -> (tensor<1x8xf32>, tensor<?x1x8xf32, #tract.dims<[S]>>) {
  %w = tract.const dense<0.5> : tensor<8x3xf32>
  %r = tract.const dense<0.25> : tensor<8x8xf32>
  %b = tract.const dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]]> : tensor<1x8xf32>
  %y:2 = tract.scan %h0, %xs, %w, %r, %b attributes {num_states = 1 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>, output_axes = array<i64: 0>} {
  ^bb0(%h: tensor<1x8xf32>, %xc: tensor<1x1x3xf32>, %wi: tensor<8x3xf32>, %ri: tensor<8x8xf32>, %bi: tensor<1x8xf32>):
    %x = tract.rm_axis %xc {axis = 0 : i64} : tensor<1x1x3xf32> -> tensor<1x3xf32>
    %xw = tract.einsum %x, %wi {expr = "bi,gi->bg"} : (tensor<1x3xf32>, tensor<8x3xf32>) -> tensor<1x8xf32>
    %hr = tract.einsum %h, %ri {expr = "bh,gh->bg"} : (tensor<1x8xf32>, tensor<8x8xf32>) -> tensor<1x8xf32>
    %xb = tract.add %xw, %bi : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
    %s = tract.add %xb, %hr : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
    %t = tract.tanh %s : tensor<1x8xf32>
    %o = tract.add_axis %t {axis = 0 : i64} : tensor<1x8xf32> -> tensor<1x1x8xf32>
    tract.yield %t, %o : tensor<1x8xf32>, tensor<1x1x8xf32>
  } : (tensor<1x8xf32>, tensor<?x1x3xf32, #tract.dims<[S]>>, tensor<8x3xf32>, tensor<8x8xf32>, tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<?x1x8xf32, #tract.dims<[S]>>)
  return %y#0, %y#1 : tensor<1x8xf32>, tensor<?x1x8xf32, #tract.dims<[S]>>
}

// -----

// Chunks of two read with their scanned axis: the einsum and the unary op
// of the chunk run on the whole input, their scanned axis where the chunk's
// lands (the einsum's output letter, the sigmoid's axis 1).
// CHECK-LABEL: func.func @chunk_ops_hoisted
// CHECK-SAME: (%[[H0:.*]]: tensor<3xf32>, %[[XS:.*]]: tensor<4x3xf32>, %[[ZS:.*]]: tensor<5x4xf32>)
// CHECK-DAG: %[[W:.*]] = tract.const dense<5.000000e-01> : tensor<3x3xf32>
// CHECK-DAG: %[[P:.*]] = tract.einsum %[[XS]], %[[W]] {expr = "si,gi->gs"} : (tensor<4x3xf32>, tensor<3x3xf32>) -> tensor<3x4xf32>
// CHECK-DAG: %[[Z:.*]] = tract.sigmoid %[[ZS]] : tensor<5x4xf32>
// CHECK: tract.scan %[[H0]], %[[P]], %[[Z]] attributes {num_states = 1 : i64, output_axes = array<i64>, scan_axes = array<i64: 1, 1>, scan_chunks = array<i64: 2, 2>}
// CHECK-NEXT: ^bb0(%[[H:.*]]: tensor<3xf32>, %[[C:.*]]: tensor<3x2xf32>, %[[D:.*]]: tensor<5x2xf32>):
// CHECK-NEXT: %[[E:.*]] = tract.einsum %[[C]], %[[D]]
func.func @chunk_ops_hoisted(%h0: tensor<3xf32>, %xs: tensor<4x3xf32>, %zs: tensor<5x4xf32>) -> tensor<3xf32> {
  %w = tract.const dense<0.5> : tensor<3x3xf32>
  %r = tract.scan %h0, %xs, %zs attributes {num_states = 1 : i64, scan_axes = array<i64: 0, 1>, scan_chunks = array<i64: 2, 2>, output_axes = array<i64>} {
  ^bb0(%h: tensor<3xf32>, %x: tensor<2x3xf32>, %z: tensor<5x2xf32>):
    %p = tract.einsum %x, %w {expr = "si,gi->gs"} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<3x2xf32>
    %q = tract.sigmoid %z : tensor<5x2xf32>
    %e = tract.einsum %p, %q {expr = "gs,ks->g"} : (tensor<3x2xf32>, tensor<5x2xf32>) -> tensor<3xf32>
    %n = tract.add %h, %e : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    tract.yield %n : tensor<3xf32>
  } : (tensor<3xf32>, tensor<4x3xf32>, tensor<5x4xf32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// An einsum of the chunk by a state, or one summing over the scanned axis,
// or a slice along it, or an add of a constant that varies along it, stays
// in the loop.
// CHECK-LABEL: func.func @chunk_ops_kept
// CHECK: tract.scan %{{[^,]*}}, %{{[^ ]*}} attributes
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tract.add
// CHECK-NEXT: tract.einsum {{.*}} {expr = "bi,bi->b"}
// CHECK-NEXT: tract.einsum {{.*}} {expr = "si,gi->g"}
// CHECK-NEXT: tract.add_axis
// CHECK-NEXT: tract.slice
// CHECK-NEXT: tract.add
// CHECK-NEXT: tract.yield
func.func @chunk_ops_kept(%h0: tensor<2x3xf32>, %xs: tensor<4x3xf32>) -> (tensor<2x3xf32>, tensor<4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<4x3xf32>) {
  %w = tract.const dense<0.5> : tensor<4x3xf32>
  %k = tract.const dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %y:5 = tract.scan %h0, %xs attributes {num_states = 1 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 2>, output_axes = array<i64: 0, 0, 0, 0>} {
  ^bb0(%h: tensor<2x3xf32>, %x: tensor<2x3xf32>):
    %hn = tract.add %h, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %a = tract.einsum %x, %h {expr = "bi,bi->b"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2xf32>
    %b = tract.einsum %x, %w {expr = "si,gi->g"} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<4xf32>
    %bb = tract.add_axis %b {axis = 0 : i64} : tensor<4xf32> -> tensor<1x4xf32>
    %c = tract.slice %x {axis = 0 : i64, start = #tract.dim<1>, end = #tract.dim<2>} : tensor<2x3xf32> -> tensor<1x3xf32>
    %d = tract.add %x, %k : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    tract.yield %hn, %a, %bb, %c, %d : tensor<2x3xf32>, tensor<2xf32>, tensor<1x4xf32>, tensor<1x3xf32>, tensor<2x3xf32>
  } : (tensor<2x3xf32>, tensor<4x3xf32>) -> (tensor<2x3xf32>, tensor<4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<4x3xf32>)
  return %y#0, %y#1, %y#2, %y#3, %y#4 : tensor<2x3xf32>, tensor<4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<4x3xf32>
}

// -----

// A pulsified scan keeps the iterations it skips (pulse.skip) when its full
// input is captured, and is not inlined though it runs once per pulse: the
// one iteration may be one it skips.
// CHECK-LABEL: func.func @pulsified_scan_keeps_skip
// CHECK: tract.scan %{{.*}}, %{{.*}} attributes {{{.*}}pulse.skip = 3 : i64
func.func @pulsified_scan_keeps_skip(%h0: tensor<1x4xf32>, %xs: tensor<1x4xf32>, %w: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %r = tract.scan %h0, %xs, %w attributes {num_states = 1 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>, output_axes = array<i64>, pulse.skip = 3 : i64} {
  ^bb0(%h: tensor<1x4xf32>, %x: tensor<1x4xf32>, %v: tensor<1x4xf32>):
    %m = tract.mul %h, %v : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    %n = tract.add %m, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    tract.yield %n : tensor<1x4xf32>
  } : (tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  return %r : tensor<1x4xf32>
}

// -----

// A loop over positions 0..S that gathers the frame of a sequence of S
// frames at each (keeping its axis) scans the sequence; the positions go.
// CHECK-LABEL: func.func @gathered_frames_scanned
// CHECK-SAME: (%[[H0:[a-z0-9]+]]: tensor<1x4xf32>, %[[XS:[a-z0-9]+]]: tensor<?x4xf32, #tract.dims<[S]>>,
// CHECK-NOT: tract.range
// CHECK: tract.scan %[[H0]], %[[XS]] attributes
// CHECK-NEXT: ^bb0(%[[H:.*]]: tensor<1x4xf32>, %[[X:.*]]: tensor<1x4xf32>):
// CHECK-NEXT: %[[N:.*]] = tract.add %[[H]], %[[X]]
// CHECK-NEXT: tract.yield %[[N]], %[[N]]
func.func @gathered_frames_scanned(%h0: tensor<1x4xf32>, %xs: tensor<?x4xf32, #tract.dims<[S]>>, %end: tensor<i64>) -> tensor<?x4xf32, #tract.dims<[S]>> {
  %zero = tract.const dense<0> : tensor<i64>
  %one = tract.const dense<1> : tensor<i64>
  %positions = tract.range %zero, %end, %one {len = #tract.dim<S>} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64, #tract.dims<[S]>>
  %r:2 = tract.scan %h0, %positions attributes {num_states = 1 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>, output_axes = array<i64: 0>} {
  ^bb0(%h: tensor<1x4xf32>, %i: tensor<1xi64>):
    %x = tract.gather %xs, %i {axis = 0 : i64} : (tensor<?x4xf32, #tract.dims<[S]>>, tensor<1xi64>) -> tensor<1x4xf32>
    %n = tract.add %h, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    tract.yield %n, %n : tensor<1x4xf32>, tensor<1x4xf32>
  } : (tensor<1x4xf32>, tensor<?xi64, #tract.dims<[S]>>) -> (tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>)
  return %r#1 : tensor<?x4xf32, #tract.dims<[S]>>
}

// -----

// Positions from 1 are not the frames' own: the gather stays.
// CHECK-LABEL: func.func @shifted_positions_kept
// CHECK: tract.range
// CHECK: tract.gather
func.func @shifted_positions_kept(%h0: tensor<1x4xf32>, %xs: tensor<?x4xf32, #tract.dims<[S]>>, %end: tensor<i64>) -> tensor<?x4xf32, #tract.dims<[S]>> {
  %one = tract.const dense<1> : tensor<i64>
  %positions = tract.range %one, %end, %one {len = #tract.dim<S>} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64, #tract.dims<[S]>>
  %r:2 = tract.scan %h0, %positions attributes {num_states = 1 : i64, scan_axes = array<i64: 0>, scan_chunks = array<i64: 1>, output_axes = array<i64: 0>} {
  ^bb0(%h: tensor<1x4xf32>, %i: tensor<1xi64>):
    %x = tract.gather %xs, %i {axis = 0 : i64} : (tensor<?x4xf32, #tract.dims<[S]>>, tensor<1xi64>) -> tensor<1x4xf32>
    %n = tract.add %h, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    tract.yield %n, %n : tensor<1x4xf32>, tensor<1x4xf32>
  } : (tensor<1x4xf32>, tensor<?xi64, #tract.dims<[S]>>) -> (tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>)
  return %r#1 : tensor<?x4xf32, #tract.dims<[S]>>
}
