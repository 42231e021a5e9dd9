//===- nnef_text.cpp - fuzz the NNEF text parser --------------------------===//
//
// Any bytes as graph.nnef (and as a fragment list): a syntax tree or an
// error at a position inside the text, never a crash.
//
//===----------------------------------------------------------------------===//

#include "frontends/nnef/NnefParser.h"

#include <cstdint>
#include <cstdlib>

using namespace mlir::tract::nnef;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  for (bool requireGraph : {true, false}) {
    std::string error;
    SourcePos pos;
    if (!parseDocument(text, error, pos, requireGraph) && error.empty())
      std::abort();
  }
  return 0;
}
