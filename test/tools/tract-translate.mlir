// RUN: tract-translate --mlir-to-llvmir %s | FileCheck %s
// RUN: tract-translate --help | FileCheck %s --check-prefix=HELP

// HELP: OVERVIEW: tract-translate: tract-mlir import, export and translation
// HELP: --mlir-to-llvmir

// CHECK: define float @scale(float %0)
// CHECK-NEXT: %[[R:.*]] = fmul float %0, 2.000000e+00
// CHECK-NEXT: ret float %[[R]]
llvm.func @scale(%x: f32) -> f32 {
  %two = llvm.mlir.constant(2.0 : f32) : f32
  %r = llvm.fmul %x, %two : f32
  llvm.return %r : f32
}
