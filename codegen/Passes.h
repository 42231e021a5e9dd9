//===- Passes.h - the codegen passes ----------------------------*- C++ -*-===//
//
// From linalg on tensors to vector code: tensor-level preparation
// (codegen/common), CPU kernels on buffers (codegen/cpu), vector lowering.
//
//===----------------------------------------------------------------------===//

#ifndef CODEGEN_PASSES_H
#define CODEGEN_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace affine {
class AffineDialect;
} // namespace affine
namespace arith {
class ArithDialect;
} // namespace arith
namespace func {
class FuncOp;
} // namespace func
namespace linalg {
class LinalgDialect;
} // namespace linalg
namespace memref {
class MemRefDialect;
} // namespace memref
namespace scf {
class SCFDialect;
} // namespace scf
namespace tensor {
class TensorDialect;
} // namespace tensor
namespace vector {
class VectorDialect;
} // namespace vector
} // namespace mlir

namespace mlir::tract {

#define GEN_PASS_DECL
#include "codegen/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "codegen/Passes.h.inc"

} // namespace mlir::tract

#endif // CODEGEN_PASSES_H
