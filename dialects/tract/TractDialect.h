#ifndef DIALECTS_TRACT_TRACTDIALECT_H
#define DIALECTS_TRACT_TRACTDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/tract/TractDialect.h.inc"

#include "dialects/tdim/TDim.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tract {

/// Names of the module attributes that carry the symbol table.
constexpr llvm::StringLiteral kSymbolsAttrName = "tract.symbols";
constexpr llvm::StringLiteral kAssertionsAttrName = "tract.assertions";
constexpr llvm::StringLiteral kScenariosAttrName = "tract.scenarios";
constexpr llvm::StringLiteral kPropertiesAttrName = "tract.properties";

/// The assertions and scenarios of `module`, for proofs about its shapes.
/// Fails (with an error on the module) if one does not parse.
FailureOr<SymbolScope> getSymbolScope(ModuleOp module);

} // namespace mlir::tract

#endif // DIALECTS_TRACT_TRACTDIALECT_H
