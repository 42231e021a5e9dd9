// RUN: tract-opt %s -tract-conv-regions="min-work=0 min-saved=0" -split-input-file | FileCheck %s
// RUN: tract-opt %s -tract-conv-regions="min-work=0 max-weights=2" -split-input-file | FileCheck %s --check-prefix=WEIGHTS
// RUN: tract-opt %s -tract-conv-regions -split-input-file | FileCheck %s --check-prefix=SMALL

// An atrous 3x3 of dilation 12 on a 16x16 map: along each axis, the outputs
// 0-3 read taps 1-2 (tap 0 reads rows -12 to -9), 4-11 tap 1 alone, 12-15
// taps 0-1. Nine regions, none padded: the corners are 2x2 convolutions
// over the whole map, the centre a 1x1 convolution of its 8x8 interior.
// The regions compute a quarter of the products. A convolution that saves
// fewer than min-work multiply-adds stays whole.
// CHECK-LABEL: func.func @atrous
// CHECK-SAME: (%[[X:.*]]: tensor<1x16x16x8xf32>, %[[K:.*]]: tensor<3x3x8x4xf32>)
// CHECK:      %[[K0:.*]] = tract.slice %[[K]] {axis = 0 : i64, end = #tract.dim<3>, start = #tract.dim<1>} : tensor<3x3x8x4xf32> -> tensor<2x3x8x4xf32>
// CHECK-NEXT: %[[K00:.*]] = tract.slice %[[K0]] {axis = 1 : i64, end = #tract.dim<3>, start = #tract.dim<1>} : tensor<2x3x8x4xf32> -> tensor<2x2x8x4xf32>
// CHECK-NEXT: %[[R00:.*]] = tract.conv %[[X]], %[[K00]] {channels_last, dilations = array<i64: 12, 12>, padding = #tract<padding explicit>, pads_after = array<i64: 0, 0>, pads_before = array<i64: 0, 0>} : (tensor<1x16x16x8xf32>, tensor<2x2x8x4xf32>) -> tensor<1x4x4x4xf32>
// CHECK:      %[[R01:.*]] = tract.conv {{.*}} -> tensor<1x4x8x4xf32>
// CHECK:      %[[R02:.*]] = tract.conv {{.*}} -> tensor<1x4x4x4xf32>
// CHECK:      %[[TOP:.*]] = tract.concat %[[R00]], %[[R01]], %[[R02]] {axis = 2 : i64} : {{.*}} -> tensor<1x4x16x4xf32>
// CHECK:      %[[IH:.*]] = tract.slice %[[X]] {axis = 1 : i64, end = #tract.dim<12>, start = #tract.dim<4>} : tensor<1x16x16x8xf32> -> tensor<1x8x16x8xf32>
// CHECK:      tract.conv %[[IH]], %{{.*}} -> tensor<1x8x4x4xf32>
// CHECK:      %[[IN11:.*]] = tract.slice %[[IH]] {axis = 2 : i64, end = #tract.dim<12>, start = #tract.dim<4>} : tensor<1x8x16x8xf32> -> tensor<1x8x8x8xf32>
// CHECK:      %[[R11:.*]] = tract.conv %[[IN11]], %{{.*}} : (tensor<1x8x8x8xf32>, tensor<1x1x8x4xf32>) -> tensor<1x8x8x4xf32>
// CHECK:      %[[MIDDLE:.*]] = tract.concat {{.*}} {axis = 2 : i64} : {{.*}} -> tensor<1x8x16x4xf32>
// CHECK:      %[[BOTTOM:.*]] = tract.concat {{.*}} {axis = 2 : i64} : {{.*}} -> tensor<1x4x16x4xf32>
// CHECK:      %[[ALL:.*]] = tract.concat %[[TOP]], %[[MIDDLE]], %[[BOTTOM]] {axis = 1 : i64} : {{.*}} -> tensor<1x16x16x4xf32>
// CHECK:      return %[[ALL]]
// Its nine kernels hold 25 taps of 9: with at most twice the weights, it
// stays whole.
// WEIGHTS-LABEL: func.func @atrous
// WEIGHTS-COUNT-1: tract.conv
// WEIGHTS-NOT: tract.concat
// SMALL-LABEL: func.func @atrous
// SMALL-COUNT-1: tract.conv
// SMALL-NOT: tract.concat
func.func @atrous(%x: tensor<1x16x16x8xf32>, %k: tensor<3x3x8x4xf32>) -> tensor<1x16x16x4xf32> {
  %c = tract.conv %x, %k {channels_last, dilations = array<i64: 12, 12>, padding = #tract<padding explicit>, pads_after = array<i64: 12, 12>, pads_before = array<i64: 12, 12>} : (tensor<1x16x16x8xf32>, tensor<3x3x8x4xf32>) -> tensor<1x16x16x4xf32>
  return %c : tensor<1x16x16x4xf32>
}

// -----

// Channels first, one axis cut, bands merged: a 1-D 5-tap convolution of
// dilation 2 on 12 positions has five bands (outputs 0-1 read taps 2-4,
// 2-3 taps 1-4, 4-7 all five, 8-9 taps 0-3, 10-11 taps 0-2). With at most
// three, merged where the fewest products are added: outputs 0-3 over taps
// 1-4 (outputs 0 and 1 with two positions of padding), 4-9 over all five
// (two positions of padding after), 10-11 over taps 0-2 on the last six
// positions. The bias goes to every region. They save 13% of the products:
// by default, the convolution stays whole.
// CHECK-LABEL: func.func @merged
// CHECK: tract.conv %{{.*}}, %{{.*}}, %{{.*}} {dilations = array<i64: 2>, padding = #tract<padding explicit>, pads_after = array<i64: 0>, pads_before = array<i64: 2>} : (tensor<1x4x8xf32>, tensor<4x4x4xf32>, tensor<4xf32>) -> tensor<1x4x4xf32>
// CHECK: tract.conv %{{.*}}, %{{.*}}, %{{.*}} {dilations = array<i64: 2>, padding = #tract<padding explicit>, pads_after = array<i64: 2>, pads_before = array<i64: 0>} : (tensor<1x4x12xf32>, tensor<4x4x5xf32>, tensor<4xf32>) -> tensor<1x4x6xf32>
// CHECK: tract.conv %{{.*}}, %{{.*}}, %{{.*}} {dilations = array<i64: 2>, padding = #tract<padding explicit>, pads_after = array<i64: 0>, pads_before = array<i64: 0>} : (tensor<1x4x6xf32>, tensor<4x4x3xf32>, tensor<4xf32>) -> tensor<1x4x2xf32>
// CHECK: tract.concat {{.*}} {axis = 2 : i64} : {{.*}} -> tensor<1x4x12xf32>
// SMALL-LABEL: func.func @merged
// SMALL-COUNT-1: tract.conv
// SMALL-NOT: tract.concat
func.func @merged(%x: tensor<1x4x12xf32>, %k: tensor<4x4x5xf32>, %b: tensor<4xf32>) -> tensor<1x4x12xf32> {
  %c = tract.conv %x, %k, %b {dilations = array<i64: 2>, padding = #tract<padding explicit>, pads_after = array<i64: 4>, pads_before = array<i64: 4>} : (tensor<1x4x12xf32>, tensor<4x4x5xf32>, tensor<4xf32>) -> tensor<1x4x12xf32>
  return %c : tensor<1x4x12xf32>
}

// -----

// Only the axes whose bands save enough are cut (at the default share, a
// quarter): on a 2x16 map, the two rows read taps 1-2 and 0-1 (a third of
// the products are with padding), while the columns lose 2 products of 48
// and stay whole, padded as before. Two regions, their kernels 2x3: 4/3 of
// the kernel's weights.
// WEIGHTS-LABEL: func.func @one_axis
// WEIGHTS:      %[[TOP:.*]] = tract.conv %{{.*}}, %{{.*}} {channels_last, padding = #tract<padding explicit>, pads_after = array<i64: 0, 1>, pads_before = array<i64: 0, 1>} : (tensor<1x2x16x8xf32>, tensor<2x3x8x4xf32>) -> tensor<1x1x16x4xf32>
// WEIGHTS:      %[[BOTTOM:.*]] = tract.conv %{{.*}}, %{{.*}} {channels_last, padding = #tract<padding explicit>, pads_after = array<i64: 0, 1>, pads_before = array<i64: 0, 1>} : (tensor<1x2x16x8xf32>, tensor<2x3x8x4xf32>) -> tensor<1x1x16x4xf32>
// WEIGHTS:      tract.concat %[[TOP]], %[[BOTTOM]] {axis = 1 : i64}
// SMALL-LABEL: func.func @one_axis
// SMALL-COUNT-1: tract.conv
// SMALL-NOT: tract.concat
func.func @one_axis(%x: tensor<1x2x16x8xf32>, %k: tensor<3x3x8x4xf32>) -> tensor<1x2x16x4xf32> {
  %c = tract.conv %x, %k {channels_last, padding = #tract<padding explicit>, pads_after = array<i64: 1, 1>, pads_before = array<i64: 1, 1>} : (tensor<1x2x16x8xf32>, tensor<3x3x8x4xf32>) -> tensor<1x2x16x4xf32>
  return %c : tensor<1x2x16x4xf32>
}

// -----

// A padded max pool becomes one valid pool per region, over the taps its
// outputs read inside the input (padding never wins a maximum): 7 rows,
// 3x3 windows of stride 2 padded by one, give a first output row reading
// rows 0-1 through taps 1-2, two reading rows 1-5 through all three and a
// last reading rows 5-6; the 6 columns, a first column through taps 1-2
// and two through all. Every band is kept, whatever the options: no region
// reads a padded copy of the input.
// SMALL-LABEL: func.func @max_pool
// SMALL:      %[[TOP:.*]] = tract.slice %arg0 {axis = 1 : i64, end = #tract.dim<2>, start = #tract.dim<0>}
// SMALL:      %[[CORNER:.*]] = tract.slice %[[TOP]] {axis = 2 : i64, end = #tract.dim<2>, start = #tract.dim<0>}
// SMALL:      tract.max_pool %[[CORNER]] {channels_last, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x2x8xf32>) -> tensor<1x1x1x8xf32>
// SMALL:      tract.max_pool %{{.*}} {channels_last, kernel_shape = array<i64: 2, 3>, strides = array<i64: 2, 2>} : (tensor<1x2x5x8xf32>) -> tensor<1x1x2x8xf32>
// SMALL:      tract.concat %{{.*}}, %{{.*}} {axis = 2 : i64} : (tensor<1x1x1x8xf32>, tensor<1x1x2x8xf32>) -> tensor<1x1x3x8xf32>
// SMALL:      %[[MIDDLE:.*]] = tract.slice %arg0 {axis = 1 : i64, end = #tract.dim<6>, start = #tract.dim<1>}
// SMALL:      tract.max_pool %{{.*}} {channels_last, kernel_shape = array<i64: 3, 2>, strides = array<i64: 2, 2>} : (tensor<1x5x2x8xf32>) -> tensor<1x2x1x8xf32>
// SMALL:      %[[INTERIOR:.*]] = tract.slice %[[MIDDLE]] {axis = 2 : i64, end = #tract.dim<6>, start = #tract.dim<1>}
// SMALL:      tract.max_pool %[[INTERIOR]] {channels_last, kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x5x5x8xf32>) -> tensor<1x2x2x8xf32>
// SMALL:      tract.slice %arg0 {axis = 1 : i64, end = #tract.dim<7>, start = #tract.dim<5>}
// SMALL:      tract.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<1x1x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x1x3x8xf32>) -> tensor<1x4x3x8xf32>
// SMALL-NOT:  padding
func.func @max_pool(%x: tensor<1x7x6x8xf32>) -> tensor<1x4x3x8xf32> {
  %y = tract.max_pool %x {channels_last, kernel_shape = array<i64: 3, 3>, padding = #tract<padding explicit>, pads_after = array<i64: 1, 1>, pads_before = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x7x6x8xf32>) -> tensor<1x4x3x8xf32>
  return %y : tensor<1x4x3x8xf32>
}
