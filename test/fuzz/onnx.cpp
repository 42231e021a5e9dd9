//===- onnx.cpp - fuzz the ONNX model loader ------------------------------===//
//
// Any bytes as a .onnx file: a verified tract module or an error naming
// what is wrong, never a crash, a hang or an allocation out of proportion
// to the input. External data is looked for in a folder that does not
// exist, so a model cannot make the fuzzer read files.
//
//===----------------------------------------------------------------------===//

#include "test/fuzz/FuzzContext.h"

#include "frontends/onnx/OnnxImporter.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  (void)mlir::tract::onnx::importOnnxBytes(
      bytes, "/nonexistent-fuzz-folder/model.onnx",
      &tract_fuzz::contextForNextInput());
  return 0;
}
