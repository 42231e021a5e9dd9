// tract: the user command line, compatible with tract's own.
#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractShapes.h"
#include "frontends/ModelLoader.h"
#include "passes/Passes.h"
#include "tools/tract/CommandLine.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tract;

namespace {

int fail(const llvm::Twine &message) {
  llvm::errs() << "tract: error: " << message << "\n";
  return 1;
}

/// tract's spelling of an element type: F32, I64, U8, Bool.
std::string dtypeName(Type type) {
  if (type.isInteger(1))
    return "Bool";
  if (auto integer = dyn_cast<IntegerType>(type))
    return (integer.isUnsigned() ? "U" : "I") +
           std::to_string(integer.getWidth());
  if (type.isBF16())
    return "BF16";
  if (auto floating = dyn_cast<FloatType>(type))
    return "F" + std::to_string(floating.getWidth());
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

/// A value's fact as tract prints it: `1,S,64,F32`.
std::string factString(Type type) {
  if (!isTractTensorType(type))
    return dtypeName(type);
  Shape shape = getShape(type);
  std::string text = shapeToString(shape);
  return text + (shape.empty() ? "" : ",") +
         dtypeName(cast<RankedTensorType>(type).getElementType());
}

std::string nodeName(Location location) {
  if (auto name = dyn_cast<NameLoc>(location))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(location))
    for (Location inner : fused.getLocations())
      if (auto name = dyn_cast<NameLoc>(inner))
        return name.getName().str();
  return "";
}

/// The model's entry point: `main` if present, else the first function.
func::FuncOp entryFunction(ModuleOp module) {
  if (auto main = module.lookupSymbol<func::FuncOp>("main"))
    return main;
  auto functions = module.getOps<func::FuncOp>();
  return functions.empty() ? func::FuncOp() : *functions.begin();
}

int dump(ModuleOp module, const cli::Invocation &invocation) {
  if (invocation.quiet)
    return 0;
  if (invocation.dumpMlir) {
    module.print(llvm::outs());
    llvm::outs() << "\n";
    return 0;
  }
  func::FuncOp entry = entryFunction(module);
  if (!entry)
    return fail("the model has no function to list");
  llvm::raw_ostream &os = llvm::outs();
  unsigned id = 0;
  for (BlockArgument argument : entry.getArguments()) {
    auto name = entry.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                                   "tract.name");
    os << id++ << " Source "
       << (name ? name.str()
                : "input_" + std::to_string(argument.getArgNumber()))
       << "\n";
    os << "    \u2014 " << factString(argument.getType()) << "\n";
  }
  for (Operation &op : entry.getBody().front()) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      continue;
    os << id++ << " " << op.getName().stripDialect() << " "
       << nodeName(op.getLoc()) << "\n";
    for (Value result : op.getResults())
      os << "    \u2014 " << factString(result.getType()) << "\n";
  }
  return 0;
}

int notImplemented(llvm::StringRef what) {
  return fail(what + " is not implemented yet");
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::SmallVector<llvm::StringRef> args(argv + 1, argv + argc);
  std::string error;
  std::optional<cli::Invocation> invocation = cli::parse(args, error);
  if (!invocation) {
    llvm::errs() << "tract: error: " << error << "\n";
    return 2;
  }
  if (invocation->help) {
    llvm::outs() << cli::usage();
    return 0;
  }
  if (invocation->version) {
    llvm::outs() << "tract-mlir " TRACT_VERSION " (MLIR " TRACT_LLVM_VERSION
                    ")\n";
    return 0;
  }
  if (!invocation->sets.empty())
    return notImplemented("--set");
  if (!invocation->assertions.empty())
    return notImplemented("--assert");
  if (invocation->pulse)
    return notImplemented("--pulse");
  if (invocation->stage)
    return notImplemented("--pass");

  MLIRContext context;
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  LoadOptions loadOptions;
  loadOptions.inputFacts.assign(invocation->inputFacts.begin(),
                                invocation->inputFacts.end());
  OwningOpRef<ModuleOp> module =
      loadModel(invocation->model, &context, loadOptions);
  if (!module)
    return 1;

  if (invocation->optimize) {
    PassManager pm(&context);
    buildDeclutterPipeline(pm);
    if (failed(pm.run(*module)))
      return 1;
  }

  if (invocation->subcommand == "dump")
    return dump(*module, *invocation);
  return notImplemented("'" + invocation->subcommand + "'");
}
