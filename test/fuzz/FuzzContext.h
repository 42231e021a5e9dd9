//===- FuzzContext.h - an MLIR context shared by a few inputs ---*- C++ -*-===//
//
// Creating a context and loading tract's dialects costs more than importing
// most fuzz inputs (two thirds of the ONNX target's time under ASan), so a
// context serves kInputsPerContext inputs before a fresh one replaces it:
// what the inputs intern (attributes, types) stays bounded, a DFT matrix of
// 64 MiB included. The importers do not depend on what a context already
// holds, so an input behaves the same alone (as a crash is replayed).
//
//===----------------------------------------------------------------------===//

#ifndef TEST_FUZZ_FUZZCONTEXT_H
#define TEST_FUZZ_FUZZCONTEXT_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <memory>

namespace tract_fuzz {

inline constexpr unsigned kInputsPerContext = 16;

/// The context for the next input, with diagnostics silenced.
inline mlir::MLIRContext &contextForNextInput() {
  static std::unique_ptr<mlir::MLIRContext> context;
  static unsigned served = 0;
  if (!context || served == kInputsPerContext) {
    context.reset(); // the old one goes first: never two at once
    context = std::make_unique<mlir::MLIRContext>(
        mlir::MLIRContext::Threading::DISABLED);
    context->getDiagEngine().registerHandler(
        [](mlir::Diagnostic &) { return mlir::success(); });
    served = 0;
  }
  ++served;
  return *context;
}

} // namespace tract_fuzz

#endif // TEST_FUZZ_FUZZCONTEXT_H
