//===- Jit.cpp - compile a tract model in process and run it --------------===//

#include "target/Jit.h"

#include "codegen/cpu/TargetInfo.h"
#include "pipelines/Pipelines.h"
#include "runtime/tract_cuda.h"
#include "runtime/tract_gpu.h"
#include "runtime/tract_profile.h"
#include "target/PackedEntry.h"
#include "target/Passes.h"
#include "target/Targets.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/TargetSelect.h"

#include <cstdlib>
#include <cstring>

using namespace mlir;
using namespace mlir::tract;

namespace {

/// The JIT's packed entry point is `tract_jit_invoke`.
constexpr const char *kEntryPrefix = "tract_jit";

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Large constants stay where the model's IR holds them: each such global
/// becomes an external declaration, resolved to its attribute's data when
/// the JIT links, instead of being copied into LLVM IR, an object file and
/// JIT memory (three copies of every weight, and most of the compile
/// time). The data lives in the MLIRContext, which outlives the model.
/// Returns each global's name and data.
std::vector<std::pair<std::string, const void *>>
referenceLargeConstants(ModuleOp module) {
  constexpr size_t kMinBytes = 4096;
  std::vector<std::pair<std::string, const void *>> references;
  module.walk([&](LLVM::GlobalOp global) {
    if (!global.getConstant() || !global.getValueAttr())
      return;
    auto value = dyn_cast<DenseElementsAttr>(global.getValueAttr());
    if (!value || value.isSplat() ||
        value.getElementType().getIntOrFloatBitWidth() % 8 != 0 ||
        value.getRawData().size() < kMinBytes)
      return;
    references.emplace_back(global.getSymName().str(),
                            value.getRawData().data());
    global.removeValueAttr();
    global.setLinkage(LLVM::Linkage::External);
    // The attribute's data is aligned for its elements only.
    global.removeAlignmentAttr();
  });
  return references;
}

/// The GPU facts of `target` for `api`, from the device the runtime
/// opens: the element types its kernels may use and their SPIR-V
/// capabilities. `forMetal`: kernels Metal can run too, so no doubles.
llvm::Error describeGpu(llvm::StringRef api, bool forMetal,
                        TargetInfo &target) {
  char why[256] = "";
  if (api == "cuda") {
    // NVVM has every type; the PTX is for the device's chip.
    if (!tract_cuda_available(why, sizeof(why)))
      return makeError("--gpu cuda: " + llvm::Twine(why));
    target.setGpu(api, TargetInfo::GpuFeatures::cuda(), forMetal);
    target.gpuChip = tract_cuda_device_chip();
    return llvm::Error::success();
  }
  if (api == "metal")
    return makeError("--gpu metal: tract runs Metal kernels only in programs "
                     "built on macOS; write them with `compile --target "
                     "metal`");
  if (api != "vulkan")
    return makeError("unknown GPU API '" + api +
                     "' (vulkan, cuda and metal are known)");
  if (!tract_gpu_available(why, sizeof(why)))
    return makeError("--gpu vulkan: " + llvm::Twine(why));
  tract_gpu_features device;
  tract_gpu_get_features(&device);
  TargetInfo::GpuFeatures features;
  features.int8 = device.int8;
  features.int16 = device.int16;
  features.int64 = device.int64;
  features.float16 = device.float16;
  features.float64 = device.float64;
  features.maxWorkgroupInvocations = device.max_workgroup_invocations;
  target.setGpu(api, features, forMetal);
  return llvm::Error::success();
}

/// The target run and bench compile for: the host, and the GPU asked for.
llvm::Expected<TargetInfo> describeJitTarget(const JitOptions &jitOptions) {
  TargetInfo target = TargetInfo::host();
  target.threads = jitOptions.threads;
  target.threadingThreshold = jitOptions.threadingThreshold;
  if (!jitOptions.gpu.empty())
    if (llvm::Error error =
            describeGpu(jitOptions.gpu, !jitOptions.mslDir.empty(), target))
      return std::move(error);
  target.spirvDir = jitOptions.spirvDir;
  target.mslDir = jitOptions.mslDir;
  target.ptxDir = jitOptions.ptxDir;
  llvm::Expected<std::string> toolkit = resolveCudaToolkit(jitOptions.cudaPath);
  if (!toolkit)
    return toolkit.takeError();
  target.cudaPath = *toolkit;
  return target;
}

} // namespace

llvm::Expected<std::vector<OpPlacement>>
mlir::tract::placeOnGpu(ModuleOp module, llvm::StringRef entry,
                        const JitOptions &options) {
  auto function = module.lookupSymbol<func::FuncOp>(entry);
  if (!function)
    return makeError("no function '" + entry + "'");
  int64_t ops =
      llvm::range_size(function.getBody().front().without_terminator());
  llvm::Expected<TargetInfo> target = describeJitTarget(options);
  if (!target)
    return target.takeError();
  target->stopAtGpuKernels = true;
  // Each op bracketed by the profile's enter and exit calls, whose slot
  // the launches between them belong to.
  OwningOpRef<ModuleOp> lowered = module.clone();
  PassManager pm(module.getContext());
  TractInstrumentProfileOptions instrumentation;
  instrumentation.entry = entry.str();
  pm.addPass(createTractInstrumentProfile(instrumentation));
  auto main = lowered->lookupSymbol<func::FuncOp>(entry);
  if (failed(pm.run(*lowered)) ||
      failed(lowerModelToLLVM(*lowered, main, *target, nullptr)))
    return makeError("the model could not be lowered");
  std::vector<OpPlacement> placements(ops);
  int64_t slot = -1;
  main.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      APInt value;
      if (call.getCallee() == kProfileEnterName && call.getNumOperands() == 1 &&
          matchPattern(call.getOperand(0), m_ConstantInt(&value)))
        slot = value.getSExtValue();
      else if (call.getCallee() == kProfileExitName)
        slot = -1;
      return;
    }
    if (slot < 0 || slot >= ops)
      return;
    if (isa<gpu::LaunchFuncOp>(op))
      ++placements[slot].kernels;
    else if (isa<linalg::LinalgOp, memref::CopyOp>(op))
      placements[slot].onCpu = true;
  });
  return placements;
}

CompiledModel::~CompiledModel() = default;

llvm::Expected<std::unique_ptr<CompiledModel>>
CompiledModel::compile(ModuleOp module, const JitOptions &jitOptions,
                       TimingScope *timing) {
  std::unique_ptr<CompiledModel> model(new CompiledModel());
  func::FuncOp main;
  llvm::Expected<ModelSignature> signature = describeMain(module, &main);
  if (!signature)
    return signature.takeError();
  model->inputs = std::move(signature->inputs);
  model->outputs = std::move(signature->outputs);
  TimingScope compileTiming = timing ? timing->nest("compile") : TimingScope();
  llvm::Expected<TargetInfo> target = describeJitTarget(jitOptions);
  if (!target)
    return target.takeError();
  if (failed(lowerModelToLLVM(module, main, *target, &compileTiming)))
    return makeError("the model could not be lowered");
  std::vector<std::pair<std::string, const void *>> weights =
      referenceLargeConstants(module);

  TimingScope jit = compileTiming.nest("LLVM translation, optimization, JIT");
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // Optimized for the host CPU, with its features (vector widths).
  auto hostMachineBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!hostMachineBuilder)
    return hostMachineBuilder.takeError();
  hostMachineBuilder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto hostMachine = hostMachineBuilder->createTargetMachine();
  if (!hostMachine)
    return hostMachine.takeError();
  std::function<llvm::Error(llvm::Module *)> optimize =
      makeOptimizingTransformer(jitOptions.optLevel, 0, hostMachine->get());
  // The packed entry compiled objects have, for tract_model_run.
  auto addEntryAndOptimize = [&](llvm::Module *llvmModule) -> llvm::Error {
    llvm::Function *entry = llvmModule->getFunction("_mlir_ciface_main");
    llvm::Function *lowered = llvmModule->getFunction("main");
    if (!entry || !lowered)
      return makeError("the lowered model has no C interface for its entry");
    addPackedEntry(*llvmModule, *entry, lowered->getReturnType(), kEntryPrefix);
    return optimize(llvmModule);
  };
  ExecutionEngineOptions options;
  options.transformer = addEntryAndOptimize;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  auto engine = ExecutionEngine::create(module, options);
  if (!engine)
    return engine.takeError();
  model->engine = std::move(*engine);
  // The runtime functions compiled code calls.
  model->engine->registerSymbols([&](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    auto add = [&](StringRef name, auto *address) {
      symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                 llvm::JITSymbolFlags::Exported};
    };
    add("memrefCopy", &memrefCopy);
    add("tract_buffer_aligned_alloc", &tract_buffer_aligned_alloc);
    add("tract_buffer_free", &tract_buffer_free);
    add("tract_set_error", &tract_set_error);
    add("tract_fail", &tract_fail);
    add("tract_take_failure", &tract_take_failure);
    add("tract_last_error", &tract_last_error);
    add("tract_gpu_record", &tract_gpu_record);
    add("tract_gpu_sync", &tract_gpu_sync);
    add("tract_cuda_launch", &tract_cuda_launch);
    add("tract_memory_limit", &tract_memory_limit);
    // Called by models instrumented with tract-instrument-profile.
    add("tract_profile_enter", &tract_profile_enter);
    add("tract_profile_exit", &tract_profile_exit);
    for (const auto &[name, data] : weights)
      add(name, data);
    return symbols;
  });
  // Code generation happens at the first lookup: do it here, timed.
  auto invoke = model->engine->lookup(std::string(kEntryPrefix) + "_invoke");
  if (!invoke)
    return invoke.takeError();

  // A nameless model: the runtime's messages then name the input only.
  for (const TensorSignature &signature : model->inputs)
    model->shapes.push_back(signature.shapeString());
  for (const TensorSignature &signature : model->outputs)
    model->shapes.push_back(signature.shapeString());
  size_t shape = 0;
  for (auto *list : {&model->inputs, &model->outputs}) {
    auto &infos =
        list == &model->inputs ? model->inputInfos : model->outputInfos;
    for (const TensorSignature &signature : *list)
      infos.push_back({signature.name.c_str(), signature.dtype,
                       static_cast<int32_t>(signature.shape.size()),
                       model->shapes[shape++].c_str(), signature.role});
  }
  model->runtimeModel.name = "";
  model->runtimeModel.num_inputs = model->inputInfos.size();
  model->runtimeModel.num_outputs = model->outputInfos.size();
  model->runtimeModel.inputs = model->inputInfos.data();
  model->runtimeModel.outputs = model->outputInfos.data();
  model->runtimeModel.invoke = reinterpret_cast<int32_t (*)(void **)>(*invoke);
  return model;
}

llvm::Error
CompiledModel::checkInputs(llvm::ArrayRef<const tract_tensor *> args) const {
  if (args.size() != inputs.size())
    return makeError("the model takes " + llvm::Twine(inputs.size()) +
                     " inputs, " + llvm::Twine(args.size()) + " given");
  return llvm::Error::success();
}

llvm::Expected<std::vector<tract_tensor *>>
CompiledModel::run(llvm::ArrayRef<const tract_tensor *> args) const {
  if (llvm::Error error = checkInputs(args))
    return std::move(error);
  std::vector<tract_tensor *> results(outputs.size() + 1, nullptr);
  if (tract_model_run(&runtimeModel, args.data(), results.data()) != TRACT_OK)
    return makeError(tract_last_error());
  results.pop_back();
  return results;
}
