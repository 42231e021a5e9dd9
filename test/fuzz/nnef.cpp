//===- nnef.cpp - fuzz the NNEF model loader ------------------------------===//
//
// Any bytes as an NNEF archive (`.tar`, `.tgz`): the container is read in
// memory (entry paths, entry count and expansion checked), `graph.nnef` is
// parsed, the `.dat` and `.quant` files decoded and the model imported and
// verified; or an error names what is wrong, never a crash, a hang or an
// allocation out of proportion to the input.
//
//===----------------------------------------------------------------------===//

#include "test/fuzz/FuzzContext.h"

#include "frontends/nnef/NnefFiles.h"
#include "frontends/nnef/NnefImporter.h"

#include <cstdint>
#include <cstdlib>

using namespace mlir::tract::nnef;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  ModelFiles files;
  std::string error;
  if (!readModelArchiveBytes(bytes, "fuzz.nnef.tgz", files, error)) {
    if (error.empty())
      std::abort();
    return 0;
  }
  (void)importNnefFiles(files, &tract_fuzz::contextForNextInput());
  return 0;
}
