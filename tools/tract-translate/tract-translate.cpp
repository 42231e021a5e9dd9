// tract-translate: converts between tract-dialect IR and the formats around
// it. Model importers and the NNEF exporter register here as they land;
// --mlir-to-llvmir turns lowered (LLVM-dialect) IR into LLVM IR.
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

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

int main(int argc, char **argv) {
  registerMlirToLlvmIr();
  llvm::cl::AddExtraVersionPrinter(
      [](llvm::raw_ostream &os) { os << "tract-mlir " TRACT_VERSION "\n"; });
  return failed(mlirTranslateMain(
      argc, argv,
      "tract-translate: tract-mlir import, export and translation"));
}
