// tract-opt: runs the project's passes and pipelines on tract-dialect IR, for
// pass development and lit tests.
#include "dialects/tract/TractDialect.h"
#include "pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  mlir::tract::registerTractPassesAndPipelines();
  // The upstream passes that tract pipelines use, and that tests combine
  // with ours.
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();

  mlir::DialectRegistry registry;
  registry.insert<mlir::tract::TractDialect, mlir::quant::QuantDialect,
                  mlir::func::FuncDialect>();
  mlir::tract::registerLoweringDialects(registry);

  llvm::cl::AddExtraVersionPrinter(
      [](llvm::raw_ostream &os) { os << "tract-mlir " TRACT_VERSION "\n"; });
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "tract-opt: the tract-mlir pass driver\n", registry));
}
