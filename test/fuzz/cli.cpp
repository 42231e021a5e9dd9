//===- cli.cpp - fuzz tract's command-line parser -------------------------===//
//
// Any bytes, split at NUL and newline into arguments: an invocation or a
// one-line error, never a crash.
//
//===----------------------------------------------------------------------===//

#include "tools/tract/CommandLine.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>

using namespace mlir::tract;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::SmallVector<llvm::StringRef> args;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i)
    if (i == text.size() || text[i] == '\0' || text[i] == '\n') {
      args.push_back(text.slice(start, i));
      start = i + 1;
    }
  if (auto invocation = cli::parse(args))
    (void)invocation->subcommand;
  else
    llvm::consumeError(invocation.takeError());
  return 0;
}
