//===- ModelSignature.h - a model's inputs and outputs ----------*- C++ -*-===//
//
// What the host side of a compiled model needs to know of its entry
// function: names, runtime dtypes and symbolic shapes, read from the tract
// types before lowering erases them. The JIT and the ahead-of-time compiler
// both describe models this way.
//
//===----------------------------------------------------------------------===//

#ifndef TARGET_MODELSIGNATURE_H
#define TARGET_MODELSIGNATURE_H

#include "dialects/tdim/TDim.h"
#include "runtime/tract_runtime.h"

#include "mlir/IR/Types.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir {
class ModuleOp;
namespace func {
class FuncOp;
} // namespace func

namespace tract {

/// One input or output of a model, as the tract dialect types it.
struct TensorSignature {
  std::string name;
  tract_dtype dtype;
  std::vector<TDim> shape;
  /// A streaming model's state (`tract.state`) or symbol input
  /// (`tract.symbol`), else data.
  tract_io_role role = TRACT_IO_DATA;

  /// The shape in tract's notation: `1,S,64`.
  std::string shapeString() const;
};

/// The tract dtype of an MLIR element type; false if it has none.
bool getRuntimeDtype(Type elementType, tract_dtype &dtype);

/// The inputs and outputs of `func` (tract-typed, not lowered yet), named by
/// their `tract.name` attributes, or "input_N" / "output_N" as `tract dump`
/// calls them.
struct ModelSignature {
  std::vector<TensorSignature> inputs;
  std::vector<TensorSignature> outputs;
  /// For a pulsified model (its `pulse.*` properties): the frames per call
  /// and the delay of each data output, in its frames.
  int64_t pulse = 0;
  std::vector<int64_t> outputDelays;
};
llvm::Expected<ModelSignature> describeFunction(func::FuncOp func);

/// The signature of the `main` function of `module`, which goes to `*main`
/// when given; an error when there is none.
llvm::Expected<ModelSignature> describeMain(ModuleOp module,
                                            func::FuncOp *main = nullptr);

} // namespace tract
} // namespace mlir

#endif // TARGET_MODELSIGNATURE_H
