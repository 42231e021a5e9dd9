//===- Passes.h - the codegen passes ----------------------------*- C++ -*-===//
//
// From tract and linalg on tensors to vector code: the CPU's fused kernels
// that take tract ops ahead of the conversion, tensor-level preparation
// (codegen/common), CPU kernels on buffers (codegen/cpu), the vector
// dialect to LLVM.
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
namespace LLVM {
class LLVMDialect;
} // namespace LLVM
namespace math {
class MathDialect;
} // namespace math
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
