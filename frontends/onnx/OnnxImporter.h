//===- OnnxImporter.h - ONNX protobuf to the tract dialect ------*- C++ -*-===//
//
// The public entry points of the ONNX frontend: a model file (or its bytes)
// becomes a module holding one `func.func @main` of tract ops.
//
//===----------------------------------------------------------------------===//

#ifndef FRONTENDS_ONNX_ONNXIMPORTER_H
#define FRONTENDS_ONNX_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace mlir::tract::onnx {

struct ImportOptions {
  /// Input facts in tract's `-i` syntax: `1,S,64,f32`, `B,3,224,224,f32` or
  /// just a shape (`1,S,64`), by input position; `NAME:SPEC` names the
  /// input. They override what the model declares. A fact with values
  /// (`sr:i64=16000`, `2,i64=3,4`) or a tensor file (`@input_1.pb`, whose
  /// own name selects the input) makes that input a constant of the model.
  std::vector<std::string> inputFacts;
};

/// Imports the ONNX model at `path`. External tensor data is read relative
/// to the model's folder. Errors go to the context's diagnostic handler, one
/// line each, naming the node, its op and its opset.
OwningOpRef<ModuleOp> importOnnxFile(llvm::StringRef path, MLIRContext *context,
                                     const ImportOptions &options = {});

/// The same from the bytes of a model file (what the fuzzer feeds); `path`
/// names the model in diagnostics and locates its external data.
OwningOpRef<ModuleOp> importOnnxBytes(llvm::StringRef bytes,
                                      llvm::StringRef path,
                                      MLIRContext *context,
                                      const ImportOptions &options = {});

/// The operators the importer translates, as `(op, since_version)` pairs in
/// name order; for the supported-operator table.
std::vector<std::pair<std::string, int>> listSupportedOnnxOps();

} // namespace mlir::tract::onnx

#endif // FRONTENDS_ONNX_ONNXIMPORTER_H
