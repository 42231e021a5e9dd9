//===- Passes.h - the passes of the entry ABI -------------------*- C++ -*-===//
//
// What a compiled model is to its caller and to the runtime: the checks in
// front of each entry (tract-entry-checks), buffers from the runtime's pool
// (tract-use-runtime-buffers), the calls of a per-op profile
// (tract-instrument-profile).
//
//===----------------------------------------------------------------------===//

#ifndef TARGET_PASSES_H
#define TARGET_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace arith {
class ArithDialect;
} // namespace arith
namespace cf {
class ControlFlowDialect;
} // namespace cf
namespace func {
class FuncDialect;
} // namespace func
namespace LLVM {
class LLVMDialect;
} // namespace LLVM
namespace scf {
class SCFDialect;
} // namespace scf
namespace tensor {
class TensorDialect;
} // namespace tensor
} // namespace mlir

namespace mlir::tract {

/// The runtime functions tract-instrument-profile calls around each op.
inline constexpr llvm::StringLiteral kProfileEnterName = "tract_profile_enter";
inline constexpr llvm::StringLiteral kProfileExitName = "tract_profile_exit";

#define GEN_PASS_DECL
#include "target/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "target/Passes.h.inc"

} // namespace mlir::tract

#endif // TARGET_PASSES_H
