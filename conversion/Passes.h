//===- Passes.h - the conversion of tract ops -------------------*- C++ -*-===//
//
// tract → linalg, tensor, arith, math and scf on tensors, with no knowledge
// of a target or of the runtime: the symbols bound at each function's entry
// (tract-bind-symbols), then the conversion of every op family
// (tract-lower-to-linalg).
//
//===----------------------------------------------------------------------===//

#ifndef CONVERSION_PASSES_H
#define CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace arith {
class ArithDialect;
} // namespace arith
namespace bufferization {
class BufferizationDialect;
} // namespace bufferization
namespace cf {
class ControlFlowDialect;
} // namespace cf
namespace linalg {
class LinalgDialect;
} // namespace linalg
namespace LLVM {
class LLVMDialect;
} // namespace LLVM
namespace math {
class MathDialect;
} // namespace math
namespace scf {
class SCFDialect;
} // namespace scf
namespace tensor {
class TensorDialect;
} // namespace tensor
} // namespace mlir

namespace mlir::tract {

#define GEN_PASS_DECL
#include "conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "conversion/Passes.h.inc"

} // namespace mlir::tract

#endif // CONVERSION_PASSES_H
