//===- PackedEntry.cpp - the packed entry point of a compiled model -------===//

#include "target/PackedEntry.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

using namespace mlir::tract;

void mlir::tract::addPackedEntry(llvm::Module &module, llvm::Function &entry,
                                 llvm::Type *results, llvm::StringRef name) {
  llvm::LLVMContext &context = module.getContext();
  auto *pointer = llvm::PointerType::getUnqual(context);
  auto *status = llvm::Type::getInt32Ty(context);
  auto *type = llvm::FunctionType::get(status, {pointer}, /*isVarArg=*/false);
  auto *invoke = llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                                        name + "_invoke", module);
  invoke->getArg(0)->setName("args");
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context, "entry", invoke));
  llvm::SmallVector<llvm::Value *> arguments;
  for (llvm::Argument &parameter : entry.args()) {
    llvm::Value *slotAddress = builder.CreateConstGEP1_64(
        pointer, invoke->getArg(0), parameter.getArgNo());
    llvm::Value *slot = builder.CreateLoad(pointer, slotAddress);
    arguments.push_back(builder.CreateLoad(parameter.getType(), slot));
  }
  llvm::Value *returned = builder.CreateCall(&entry, arguments);
  auto *resultsStruct = llvm::dyn_cast<llvm::StructType>(results);
  if (!resultsStruct) {
    builder.CreateRet(returned);
    return;
  }
  llvm::Value *statusAddress = builder.CreateStructGEP(
      resultsStruct, arguments.front(), resultsStruct->getNumElements() - 1);
  builder.CreateRet(builder.CreateLoad(status, statusAddress));
}
