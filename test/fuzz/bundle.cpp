//===- bundle.cpp - fuzz the tensor readers of the CLI --------------------===//
//
// Any bytes as an .npy, an .npz and an ONNX TensorProto: a tensor whose
// data matches its shape, or an error, never a crash or an allocation out
// of proportion to the input.
//
//===----------------------------------------------------------------------===//

#include "lib/Bundle.h"

#include <cstdint>

using namespace mlir::tract::lib;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  if (auto tensor = decodeNpy(bytes, "x", "'fuzz.npy'"))
    (void)encodeNpy(*tensor);
  else
    llvm::consumeError(tensor.takeError());
  if (auto tensors = decodeNpz(bytes, "'fuzz.npz'"))
    (void)tensors->size();
  else
    llvm::consumeError(tensors.takeError());
  if (auto tensor = decodeTensorProto(bytes, "'fuzz.pb'"))
    (void)tensor->getName();
  else
    llvm::consumeError(tensor.takeError());
  return 0;
}
