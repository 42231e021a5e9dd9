//===- Jit.h - compile a tract model in process and run it ------*- C++ -*-===//
//
// `tract run` and `tract bench` compile the model's `main` through the
// tract-lower-to-llvm pipeline and MLIR's ExecutionEngine, then call it on
// runtime tensors. Inputs are checked against the model's symbolic
// signature (ranks, element types, dims, assertions) before the call, so a
// wrong input is an error message, never undefined behaviour.
//
//===----------------------------------------------------------------------===//

#ifndef LOWERING_JIT_H
#define LOWERING_JIT_H

#include "dialects/tdim/TDim.h"
#include "lowering/ModelSignature.h"
#include "runtime/tract_runtime.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace mlir::tract {

class CompiledModel {
public:
  ~CompiledModel();

  /// Lowers `module` (tract dialect, consumed) and JIT-compiles it with
  /// LLVM at `optLevel`. Errors go to the context's diagnostic handler and
  /// are summarized in the returned error.
  static llvm::Expected<std::unique_ptr<CompiledModel>>
  compile(ModuleOp module, unsigned optLevel = 3);

  llvm::ArrayRef<TensorSignature> getInputs() const { return inputs; }
  llvm::ArrayRef<TensorSignature> getOutputs() const { return outputs; }

  /// The symbols' values for these inputs, or an error naming the input,
  /// the axis and the expected expression, or the violated assertion.
  llvm::Expected<SymbolValues>
  bindSymbols(llvm::ArrayRef<const tract_tensor *> args) const;

  /// Runs the model. Outputs are new tensors owned by the caller
  /// (tract_tensor_free).
  llvm::Expected<std::vector<tract_tensor *>>
  run(llvm::ArrayRef<const tract_tensor *> args) const;

private:
  CompiledModel() = default;
  std::unique_ptr<ExecutionEngine> engine;
  std::vector<TensorSignature> inputs;
  std::vector<TensorSignature> outputs;
  SymbolScope scope;
};

} // namespace mlir::tract

#endif // LOWERING_JIT_H
