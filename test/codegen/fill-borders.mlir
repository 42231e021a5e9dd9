// RUN: tract-opt --tract-fill-borders --split-input-file %s | FileCheck %s

// A padded activation, channels last: the fill of the whole 1x4x5x3 buffer
// becomes fills of its first and last rows and of the first and last
// column of the rows between, since the op after it overwrites the
// interior without reading it.
// CHECK-LABEL: func.func @padded
// CHECK: %[[P:.*]] = memref.alloc() : memref<1x4x5x3xf32>
// CHECK-NEXT: %[[TOP:.*]] = memref.subview %[[P]][0, 0, 0, 0] [1, 1, 5, 3] [1, 1, 1, 1]
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[TOP]]
// CHECK-NEXT: %[[BOTTOM:.*]] = memref.subview %[[P]][0, 3, 0, 0] [1, 1, 5, 3] [1, 1, 1, 1]
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[BOTTOM]]
// CHECK-NEXT: %[[LEFT:.*]] = memref.subview %[[P]][0, 1, 0, 0] [1, 2, 1, 3] [1, 1, 1, 1]
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[LEFT]]
// CHECK-NEXT: %[[RIGHT:.*]] = memref.subview %[[P]][0, 1, 4, 0] [1, 2, 1, 3] [1, 1, 1, 1]
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[RIGHT]]
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
func.func @padded(%x: memref<1x2x3x3xf32>) -> memref<1x4x5x3xf32> {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() : memref<1x4x5x3xf32>
  linalg.fill ins(%zero : f32) outs(%p : memref<1x4x5x3xf32>)
  %interior = memref.subview %p[0, 1, 1, 0] [1, 2, 3, 3] [1, 1, 1, 1] : memref<1x4x5x3xf32> to memref<1x2x3x3xf32, strided<[60, 15, 3, 1], offset: 18>>
  linalg.generic {indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>, affine_map<(n, h, w, c) -> (n, h, w, c)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
    ins(%x : memref<1x2x3x3xf32>) outs(%interior : memref<1x2x3x3xf32, strided<[60, 15, 3, 1], offset: 18>>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  }
  return %p : memref<1x4x5x3xf32>
}

// -----

// The input of a model padded: a linalg.map yields the padding value and a
// copy writes the interior; a channels-first pad of the last two axes.
// CHECK-LABEL: func.func @copied
// CHECK-NOT: linalg.map
// CHECK-COUNT-4: linalg.fill
// CHECK-NOT: linalg.fill
// CHECK: memref.copy
func.func @copied(%x: memref<1x2x3x3xf32>) -> memref<1x2x5x5xf32> {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() : memref<1x2x5x5xf32>
  linalg.map outs(%p : memref<1x2x5x5xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %interior = memref.subview %p[0, 0, 1, 1] [1, 2, 3, 3] [1, 1, 1, 1] : memref<1x2x5x5xf32> to memref<1x2x3x3xf32, strided<[50, 25, 5, 1], offset: 6>>
  memref.copy %x, %interior : memref<1x2x3x3xf32> to memref<1x2x3x3xf32, strided<[50, 25, 5, 1], offset: 6>>
  return %p : memref<1x2x5x5xf32>
}

// -----

// The interior is read before it is written (an accumulation): the whole
// buffer stays filled.
// CHECK-LABEL: func.func @read_first
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<1x4x5x3xf32>)
func.func @read_first(%x: memref<1x2x3x3xf32>) -> memref<1x4x5x3xf32> {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() : memref<1x4x5x3xf32>
  linalg.fill ins(%zero : f32) outs(%p : memref<1x4x5x3xf32>)
  %interior = memref.subview %p[0, 1, 1, 0] [1, 2, 3, 3] [1, 1, 1, 1] : memref<1x4x5x3xf32> to memref<1x2x3x3xf32, strided<[60, 15, 3, 1], offset: 18>>
  linalg.generic {indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>, affine_map<(n, h, w, c) -> (n, h, w, c)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
    ins(%x : memref<1x2x3x3xf32>) outs(%interior : memref<1x2x3x3xf32, strided<[60, 15, 3, 1], offset: 18>>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  }
  return %p : memref<1x4x5x3xf32>
}
