//===- tdim.cpp - fuzz the TDim and relation parsers ----------------------===//
//
// Any text: parsing never crashes; what parses prints to text that reads
// back, printing is then a fixpoint, and evaluation has no undefined
// behaviour.
//
//===----------------------------------------------------------------------===//

#include "dialects/tdim/TDim.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>

using namespace mlir::tract;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  std::string error;
  if (std::optional<TDim> dim = TDim::parse(text, &error)) {
    // What prints reads back, and from then on printing is a fixpoint
    // (the first reading may still regroup nested divisions).
    std::string printed = dim->toString();
    std::optional<TDim> again = TDim::parse(printed);
    std::optional<TDim> third =
        again ? TDim::parse(again->toString()) : std::nullopt;
    if (!again || !third || third->toString() != again->toString()) {
      llvm::errs() << "'" << text << "' prints as '" << printed
                   << "', which reads back as '"
                   << (again ? again->toString() : "nothing") << "'\n";
      std::abort();
    }
    std::set<std::string> symbols;
    dim->collectSymbols(symbols);
    SymbolValues values;
    int64_t next = 0;
    for (const std::string &symbol : symbols)
      values[symbol] = next++ % 5;
    (void)dim->eval(values);
  }
  (void)DimRelation::parse(text, &error);
  return 0;
}
