//===- onnx.cpp - fuzz the ONNX model loader ------------------------------===//
//
// Any bytes as a .onnx file: a verified tract module or an error naming
// what is wrong, never a crash, a hang or an allocation out of proportion
// to the input. External data is looked for in a folder that does not
// exist, so a model cannot make the fuzzer read files.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/OnnxImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A context per input: what one model interns does not pile up.
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  (void)mlir::tract::onnx::importOnnxBytes(
      bytes, "/nonexistent-fuzz-folder/model.onnx", &context);
  return 0;
}
