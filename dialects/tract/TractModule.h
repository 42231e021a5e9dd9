//===- TractModule.h - what a tract module declares -------------*- C++ -*-===//
//
// The module-level facts of a tract model (its symbols) and the last step
// every frontend takes, in one place for the importers, the passes and the
// tools.
//
//===----------------------------------------------------------------------===//

#ifndef DIALECTS_TRACT_TRACTMODULE_H
#define DIALECTS_TRACT_TRACTMODULE_H

#include "mlir/IR/BuiltinOps.h"

#include <set>
#include <string>

namespace mlir::tract {

/// The symbols `module`'s shapes (result and block-argument types), dim
/// attributes, assertions and scenarios mention.
std::set<std::string> collectUsedSymbols(ModuleOp module);

/// The symbols of `module`: its `tract.symbols` if it declares them, else
/// those it uses.
std::set<std::string> collectModuleSymbols(ModuleOp module);

/// What an importer does last, once the model's ops, assertions and
/// scenarios are in `module`: erases the tract ops nothing uses (the
/// literals folded into attributes, shape arithmetic resolved at import),
/// innermost first until none is left, then declares in `tract.symbols`
/// every symbol the module uses and those of `declared` (what the file
/// declares, used or not).
void finishImport(ModuleOp module, const std::set<std::string> &declared);

} // namespace mlir::tract

#endif // DIALECTS_TRACT_TRACTMODULE_H
