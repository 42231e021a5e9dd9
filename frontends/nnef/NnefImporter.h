//===- NnefImporter.h - NNEF to the tract dialect ---------------*- C++ -*-===//
//
// The public entry points of the NNEF frontend: a model folder or archive
// (`graph.nnef` plus `.dat` files) becomes a module holding one
// `func.func @main` of tract ops, with tract's extensions (symbols,
// assertions, scenarios, properties) as module attributes.
//
//===----------------------------------------------------------------------===//

#ifndef FRONTENDS_NNEF_NNEFIMPORTER_H
#define FRONTENDS_NNEF_NNEFIMPORTER_H

#include "frontends/nnef/NnefFiles.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace mlir::tract::nnef {

/// Imports the NNEF model at `path`: a folder holding `graph.nnef`, or a tar
/// archive (`.nnef.tgz`, `.tgz`, `.tar.gz`, `.tar`). Errors go to the
/// context's diagnostic handler, at the file and line where there is one.
OwningOpRef<ModuleOp> importNnef(llvm::StringRef path, MLIRContext *context);

/// Imports a model whose files are already in memory.
OwningOpRef<ModuleOp> importNnefFiles(const ModelFiles &files,
                                      MLIRContext *context);

/// The operations the importer translates, in name order.
std::vector<std::string> listSupportedNnefOps();

} // namespace mlir::tract::nnef

#endif // FRONTENDS_NNEF_NNEFIMPORTER_H
