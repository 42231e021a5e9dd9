#include "frontends/ModelLoader.h"

#include "dialects/tract/TractDialect.h"
#include "frontends/nnef/NnefImporter.h"
#include "frontends/onnx/OnnxImporter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::tract;

llvm::StringRef mlir::tract::stringifyModelFormat(ModelFormat format) {
  switch (format) {
  case ModelFormat::Mlir:
    return "MLIR";
  case ModelFormat::Onnx:
    return "ONNX";
  case ModelFormat::NnefDir:
    return "NNEF folder";
  case ModelFormat::NnefArchive:
    return "NNEF archive";
  }
  llvm_unreachable("unknown model format");
}

FailureOr<ModelFormat> mlir::tract::detectModelFormat(llvm::StringRef path,
                                                      std::string &error) {
  if (llvm::sys::fs::is_directory(path)) {
    llvm::SmallString<256> graph(path);
    llvm::sys::path::append(graph, "graph.nnef");
    if (llvm::sys::fs::exists(graph))
      return ModelFormat::NnefDir;
    error = ("'" + path + "' is a folder without a graph.nnef").str();
    return failure();
  }
  if (!llvm::sys::fs::exists(path)) {
    error = ("model '" + path + "' does not exist").str();
    return failure();
  }
  if (path.ends_with(".mlir"))
    return ModelFormat::Mlir;
  if (path.ends_with(".onnx"))
    return ModelFormat::Onnx;
  if (path.ends_with(".tgz") || path.ends_with(".tar.gz") ||
      path.ends_with(".tar"))
    return ModelFormat::NnefArchive;
  error = ("cannot tell the format of '" + path +
           "': expected a .onnx or .mlir file, an NNEF folder, or a .tgz, "
           ".tar.gz or .tar NNEF archive")
              .str();
  return failure();
}

OwningOpRef<ModuleOp> mlir::tract::loadModel(llvm::StringRef path,
                                             MLIRContext *context,
                                             const LoadOptions &options) {
  context->loadDialect<TractDialect, func::FuncDialect>();
  Location location = FileLineColLoc::get(context, path, 0, 0);
  std::string error;
  FailureOr<ModelFormat> format = detectModelFormat(path, error);
  if (failed(format)) {
    emitError(location) << error;
    return nullptr;
  }
  if (*format == ModelFormat::Onnx) {
    onnx::ImportOptions importOptions;
    importOptions.inputFacts = options.inputFacts;
    return onnx::importOnnxFile(path, context, importOptions);
  }
  if (!options.inputFacts.empty()) {
    emitError(location) << "input facts (-i) apply to ONNX models; "
                        << stringifyModelFormat(*format)
                        << " models declare their input shapes";
    return nullptr;
  }
  if (*format == ModelFormat::Mlir)
    return parseSourceFile<ModuleOp>(path, context);
  return nnef::importNnef(path, context);
}
