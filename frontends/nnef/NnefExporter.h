//===- NnefExporter.h - the tract dialect to NNEF ---------------*- C++ -*-===//
//
// The inverse of the NNEF frontend: a module holding one `func.func @main`
// of tract ops becomes `graph.nnef` plus one `.dat` file per constant. Plain
// NNEF operations are written where the specification has them, tract's
// `tract_*` extensions otherwise, with the names the importer reads, so that
// importing the export gives back the same IR.
//
//===----------------------------------------------------------------------===//

#ifndef FRONTENDS_NNEF_NNEFEXPORTER_H
#define FRONTENDS_NNEF_NNEFEXPORTER_H

#include "frontends/nnef/NnefFiles.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tract::nnef {

/// How the NNEF text is written.
struct ExportOptions {
  /// tract's `tract_core` registry (tract's `--nnef-tract-core`, on unless
  /// `--no-nnef-tract-core`): without it only the NNEF specification's
  /// operations are written, and an op that needs a `tract_core_*` form is
  /// an error.
  bool tractCore = true;
};

/// The `tract_nnef_ser_version` property written into every model.
llvm::StringRef serializerVersion();

/// Writes `module` as NNEF files (`graph.nnef`, `<label>.dat`), in the
/// layout tract writes. An op that has no NNEF form is reported at the op,
/// naming it and its node.
LogicalResult exportNnef(ModuleOp module, ModelFiles &files,
                         const ExportOptions &options = {});

/// Exports `module` to `path`: a `.nnef.tgz`, `.tgz`, `.tar.gz` or `.tar`
/// archive, or else a folder.
LogicalResult exportNnefTo(ModuleOp module, llvm::StringRef path,
                           const ExportOptions &options = {});

/// Whether `path` names an archive rather than a folder.
bool isNnefArchivePath(llvm::StringRef path);

} // namespace mlir::tract::nnef

#endif // FRONTENDS_NNEF_NNEFEXPORTER_H
