//===- ObjectCode.cpp - LLVM IR to object code, on several threads --------===//

#include "target/ObjectCode.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Dominators.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/SmallVectorMemoryBuffer.h"
#include "llvm/Support/Threading.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include <atomic>
#include <numeric>
#include <thread>

using namespace mlir;
using namespace mlir::tract;

namespace {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Loops of this many instructions or more, before optimization, are not
/// unrolled by LLVM.
constexpr size_t kMaxUnrolledLoop = 100;

llvm::OptimizationLevel toLevel(unsigned optLevel) {
  switch (optLevel) {
  case 0:
    return llvm::OptimizationLevel::O0;
  case 1:
    return llvm::OptimizationLevel::O1;
  case 2:
    return llvm::OptimizationLevel::O2;
  default:
    return llvm::OptimizationLevel::O3;
  }
}

/// Optimizes and compiles `module`, whose context is this thread's.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
compileModule(llvm::Module &module, const TargetMachineFactory &makeMachine,
              unsigned optLevel) {
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      makeMachine();
  if (!machine)
    return machine.takeError();
  module.setTargetTriple((*machine)->getTargetTriple());
  module.setDataLayout((*machine)->createDataLayout());
  if (llvm::Error error = optimizeModule(module, **machine, optLevel))
    return std::move(error);
  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager codegen;
  if ((*machine)->addPassesToEmitFile(codegen, os, nullptr,
                                      llvm::CodeGenFileType::ObjectFile))
    return makeError("the target cannot emit object files");
  codegen.run(module);
  return std::make_unique<llvm::SmallVectorMemoryBuffer>(
      std::move(object), module.getModuleIdentifier() + ".o",
      /*RequiresNullTerminator=*/false);
}

} // namespace

llvm::Error mlir::tract::optimizeModule(llvm::Module &module,
                                        llvm::TargetMachine &machine,
                                        unsigned optLevel) {
  llvm::PipelineTuningOptions tuning;
  // The vector dialect's code is vectorized already: SLP finds nothing
  // to pack in it (40% of a ResNet's optimization time); the loop
  // vectorizer still pays on the scalar loops left, and the unroller on
  // small loops (recurrent cells), but a loop body of a hundred
  // instructions or more gains nothing from being copied again, and
  // fully unrolling the three rows of each 3x3 convolution doubled the
  // time of optimization and code generation (MobileNetV2).
  tuning.SLPVectorization = false;
  for (llvm::Function &function : module) {
    if (function.isDeclaration())
      continue;
    llvm::DominatorTree dominators(function);
    llvm::LoopInfo loops(dominators);
    for (llvm::Loop *loop : loops.getLoopsInPreorder()) {
      size_t size = 0;
      for (llvm::BasicBlock *block : loop->blocks())
        size += block->size();
      if (size >= kMaxUnrolledLoop)
        loop->setLoopAlreadyUnrolled();
    }
  }
  llvm::PassBuilder builder(&machine, tuning);
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  llvm::ModulePassManager pipeline =
      optLevel == 0
          ? builder.buildO0DefaultPipeline(llvm::OptimizationLevel::O0)
          : builder.buildPerModuleDefaultPipeline(toLevel(optLevel));
  pipeline.run(module, modules);
  return llvm::Error::success();
}

llvm::Expected<std::vector<std::unique_ptr<llvm::MemoryBuffer>>>
mlir::tract::emitObjects(std::unique_ptr<llvm::Module> module,
                         const TargetMachineFactory &makeMachine,
                         const ObjectCodeOptions &options) {
  unsigned threads = options.threads
                         ? options.threads
                         : llvm::hardware_concurrency().compute_thread_count();
  // Three partitions a thread: functions differ in size, partitions too,
  // and a thread that ends early takes the next one, the largest first.
  unsigned partitions = threads > 1 ? 3 * threads : 1;
  unsigned functions = 0;
  for (llvm::Function &function : *module)
    functions += !function.isDeclaration();
  partitions = std::max(1u, std::min(partitions, functions / 4));
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects;
  if (partitions == 1) {
    llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> object =
        compileModule(*module, makeMachine, options.optLevel);
    if (!object)
      return object.takeError();
    objects.push_back(std::move(*object));
    return objects;
  }

  // Each partition travels as bitcode to a thread and a context of its own.
  std::vector<std::pair<unsigned, llvm::SmallVector<char, 0>>> sized;
  llvm::SplitModule(*module, partitions,
                    [&](std::unique_ptr<llvm::Module> part) {
                      auto &[size, bitcode] = sized.emplace_back();
                      size = part->getInstructionCount();
                      llvm::raw_svector_ostream os(bitcode);
                      llvm::WriteBitcodeToFile(*part, os);
                    });
  module.reset();
  // The largest first, so that the threads end together.
  std::vector<size_t> order(sized.size());
  std::iota(order.begin(), order.end(), 0);
  llvm::sort(order, [&](size_t a, size_t b) {
    return sized[a].first > sized[b].first;
  });
  std::vector<llvm::SmallVector<char, 0>> bitcodes;
  for (size_t index : order)
    bitcodes.push_back(std::move(sized[index].second));
  objects.resize(bitcodes.size());
  std::vector<std::string> errors(bitcodes.size());
  auto compilePart = [&](size_t index) {
    llvm::LLVMContext context;
    llvm::Expected<std::unique_ptr<llvm::Module>> part = llvm::parseBitcodeFile(
        llvm::MemoryBufferRef(
            llvm::StringRef(bitcodes[index].data(), bitcodes[index].size()),
            "part" + std::to_string(index)),
        context);
    if (!part) {
      errors[index] = llvm::toString(part.takeError());
      return;
    }
    (*part)->setModuleIdentifier("part" + std::to_string(index));
    // What another partition defines may be linked anywhere in memory:
    // reached through the GOT and call stubs, not by 32-bit offsets
    // (SplitModule made the symbols it shares hidden, so local).
    for (llvm::GlobalValue &value : (*part)->global_values()) {
      auto *function = llvm::dyn_cast<llvm::Function>(&value);
      if (!value.isDeclaration() || (function && function->isIntrinsic()))
        continue;
      value.setVisibility(llvm::GlobalValue::DefaultVisibility);
      value.setDSOLocal(false);
    }
    llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> object =
        compileModule(**part, makeMachine, options.optLevel);
    if (!object) {
      errors[index] = llvm::toString(object.takeError());
      return;
    }
    objects[index] = std::move(*object);
  };
  std::atomic<size_t> next{0};
  auto work = [&]() {
    for (size_t index = next++; index < bitcodes.size(); index = next++)
      compilePart(index);
  };
  std::vector<std::thread> workers;
  for (unsigned worker = 1; worker < std::min<size_t>(threads, bitcodes.size());
       ++worker)
    workers.emplace_back(work);
  work();
  for (std::thread &worker : workers)
    worker.join();
  for (const std::string &error : errors)
    if (!error.empty())
      return makeError(error);
  return objects;
}
