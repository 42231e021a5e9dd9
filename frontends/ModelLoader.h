#ifndef FRONTENDS_MODELLOADER_H
#define FRONTENDS_MODELLOADER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace mlir::tract {

/// The containers a model can come in, as tract recognizes them.
enum class ModelFormat {
  Mlir,        ///< tract-dialect IR text (`.mlir`)
  Onnx,        ///< ONNX protobuf (`.onnx`)
  NnefDir,     ///< a folder holding `graph.nnef` and `.dat` files
  NnefArchive, ///< `.nnef.tgz`, `.tgz`, `.tar.gz` or `.tar`
};

llvm::StringRef stringifyModelFormat(ModelFormat format);

/// Tells the format of the model at `path` from the file system and the
/// file name; fails with a message naming the path.
FailureOr<ModelFormat> detectModelFormat(llvm::StringRef path,
                                         std::string &error);

struct LoadOptions {
  /// Input facts (`-i 1,S,64,f32`), by input position.
  std::vector<std::string> inputFacts;
};

/// Loads the model at `path` into a module of the tract dialect. Errors are
/// reported through the context's diagnostic handler.
OwningOpRef<ModuleOp> loadModel(llvm::StringRef path, MLIRContext *context,
                                const LoadOptions &options = {});

} // namespace mlir::tract

#endif // FRONTENDS_MODELLOADER_H
