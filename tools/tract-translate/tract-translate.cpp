// tract-translate: converts between tract-dialect IR and the formats around
// it. Model importers and the NNEF exporter register here as they land;
// --mlir-to-llvmir turns lowered (LLVM-dialect) IR into LLVM IR.
#include "dialects/tract/TractDialect.h"
#include "frontends/nnef/NnefExporter.h"
#include "frontends/nnef/NnefImporter.h"
#include "frontends/onnx/OnnxImporter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

/// The dialects of a tract model, which importers make and the exporter
/// reads.
static void registerTractDialects(DialectRegistry &registry) {
  registry
      .insert<tract::TractDialect, quant::QuantDialect, func::FuncDialect>();
}

/// Registers the importer `name`, which reads the file the translation
/// driver opened.
static void registerImport(
    StringRef name, StringRef description,
    std::function<OwningOpRef<Operation *>(StringRef path, MLIRContext *)>
        import) {
  TranslateToMLIRRegistration registration(
      name, description,
      [import](llvm::SourceMgr &sourceMgr,
               MLIRContext *context) -> OwningOpRef<Operation *> {
        StringRef path = sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())
                             ->getBufferIdentifier();
        return import(path, context);
      },
      registerTractDialects);
}

static void registerMlirToLlvmIr() {
  TranslateFromMLIRRegistration registration(
      "mlir-to-llvmir", "Translate LLVM-dialect IR to LLVM IR",
      [](Operation *op, llvm::raw_ostream &output) -> LogicalResult {
        llvm::LLVMContext llvmContext;
        std::unique_ptr<llvm::Module> module =
            translateModuleToLLVMIR(op, llvmContext);
        if (!module)
          return op->emitError("could not translate to LLVM IR");
        module->print(output, nullptr);
        return success();
      },
      [](DialectRegistry &registry) {
        registry.insert<LLVM::LLVMDialect>();
        registerBuiltinDialectTranslation(registry);
        registerLLVMDialectTranslation(registry);
      });
}

static llvm::cl::list<std::string> inputFacts(
    "input-fact",
    llvm::cl::desc("Input fact for --import-onnx in tract's -i syntax: "
                   "1,S,64,f32 by position, NAME:SPEC by name; values "
                   "(sr:i64=16000) or a tensor file (@input_1.pb) make the "
                   "input a constant"));

static void registerImportOnnx() {
  registerImport("import-onnx", "Import an ONNX model into the tract dialect",
                 [](StringRef path, MLIRContext *context) {
                   tract::onnx::ImportOptions options;
                   options.inputFacts.assign(inputFacts.begin(),
                                             inputFacts.end());
                   return tract::onnx::importOnnxFile(path, context, options);
                 });
}

static void registerImportNnef() {
  registerImport(
      "import-nnef",
      "Import an NNEF model (FOLDER/graph.nnef, or a .tgz, .tar.gz or .tar "
      "archive) into the tract dialect",
      [](StringRef path, MLIRContext *context) {
        // The translation driver opens a file: a folder model is named by
        // its graph.nnef.
        if (llvm::sys::path::filename(path) == "graph.nnef") {
          StringRef folder = llvm::sys::path::parent_path(path);
          return tract::nnef::importNnef(folder.empty() ? "." : folder,
                                         context);
        }
        return tract::nnef::importNnef(path, context);
      });
}

static llvm::cl::opt<std::string> nnefOutput(
    "nnef-output",
    llvm::cl::desc("For --export-nnef: write the model (graph.nnef and the "
                   ".dat files) to this folder, or archive if it ends in "
                   ".nnef.tgz, .tgz, .tar.gz or .tar, instead of printing "
                   "graph.nnef"));

static void registerExportNnef() {
  TranslateFromMLIRRegistration registration(
      "export-nnef",
      "Export a tract-dialect module as NNEF (graph.nnef on the output, or "
      "the whole model to --nnef-output)",
      [](Operation *op, llvm::raw_ostream &output) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("NNEF export expects a module");
        if (!nnefOutput.empty())
          return tract::nnef::exportNnefTo(module, nnefOutput);
        tract::nnef::ModelFiles files;
        if (failed(tract::nnef::exportNnef(module, files)))
          return failure();
        output << files.files["graph.nnef"];
        return success();
      },
      registerTractDialects);
}

int main(int argc, char **argv) {
  // `--list-onnx-ops` prints the (op, since-version) pairs the ONNX importer
  // registers, one per line, for the supported-operator table.
  if (argc == 2 && StringRef(argv[1]) == "--list-onnx-ops") {
    for (const auto &[op, version] : tract::onnx::listSupportedOnnxOps())
      llvm::outs() << op << " " << version << "\n";
    return 0;
  }
  if (argc == 2 && StringRef(argv[1]) == "--list-nnef-ops") {
    for (const std::string &op : tract::nnef::listSupportedNnefOps())
      llvm::outs() << op << "\n";
    return 0;
  }
  registerImportOnnx();
  registerImportNnef();
  registerExportNnef();
  registerMlirToLlvmIr();
  llvm::cl::AddExtraVersionPrinter(
      [](llvm::raw_ostream &os) { os << "tract-mlir " TRACT_VERSION "\n"; });
  return failed(mlirTranslateMain(
      argc, argv,
      "tract-translate: tract-mlir import, export and translation"));
}
