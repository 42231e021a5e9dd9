//===- Jit.cpp - compile a tract model in process and run it --------------===//

#include "target/Jit.h"

#include "codegen/cpu/TargetInfo.h"
#include "dialects/tract/TractFolding.h"
#include "pipelines/Pipelines.h"
#include "runtime/tract_cuda.h"
#include "runtime/tract_gpu.h"
#include "runtime/tract_profile.h"
#include "target/CompileCache.h"
#include "target/ObjectCode.h"
#include "target/PackedEntry.h"
#include "target/Passes.h"
#include "target/Targets.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Support/Format.h"
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
/// Returns each global's name and data, and appends its value to `values`.
std::vector<CachedConstant>
referenceLargeConstants(ModuleOp module, SmallVectorImpl<Attribute> &values) {
  constexpr size_t kMinBytes = 4096;
  std::vector<CachedConstant> references;
  module.walk([&](LLVM::GlobalOp global) {
    if (!global.getConstant() || !global.getValueAttr())
      return;
    ArrayRef<char> data;
    if (auto value = dyn_cast<DenseElementsAttr>(global.getValueAttr())) {
      if (value.isSplat() ||
          value.getElementType().getIntOrFloatBitWidth() % 8 != 0)
        return;
      data = value.getRawData();
    } else if (auto resource =
                   dyn_cast<DenseResourceElementsAttr>(global.getValueAttr())) {
      // Packed weights, in memory of their own (tract-cpu-pack-weights).
      if (AsmResourceBlob *blob = resource.getRawHandle().getBlob())
        data = blob->getData();
    }
    if (data.size() < kMinBytes)
      return;
    references.push_back({global.getSymName().str(),
                          llvm::StringRef(data.data(), data.size())});
    values.push_back(global.getValueAttr());
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

namespace {

/// The runtime functions compiled code calls, by name.
void addRuntimeSymbols(
    llvm::function_ref<void(llvm::StringRef, const void *)> add) {
  auto address = [](auto *function) {
    return reinterpret_cast<const void *>(function);
  };
  add("memrefCopy", address(&memrefCopy));
  add("tract_buffer_aligned_alloc", address(&tract_buffer_aligned_alloc));
  add("tract_buffer_free", address(&tract_buffer_free));
  add("tract_set_error", address(&tract_set_error));
  add("tract_fail", address(&tract_fail));
  add("tract_take_failure", address(&tract_take_failure));
  add("tract_last_error", address(&tract_last_error));
  add("tract_gpu_record", address(&tract_gpu_record));
  add("tract_gpu_sync", address(&tract_gpu_sync));
  add("tract_cuda_launch", address(&tract_cuda_launch));
  add("tract_cuda_record", address(&tract_cuda_record));
  add("tract_cuda_sync", address(&tract_cuda_sync));
  add("tract_cuda_discard", address(&tract_cuda_discard));
  add("tract_gpu_discard", address(&tract_gpu_discard));
  add("tract_memory_limit", address(&tract_memory_limit));
  // Called by models instrumented with tract-instrument-profile.
  add("tract_profile_enter", address(&tract_profile_enter));
  add("tract_profile_exit", address(&tract_profile_exit));
}

/// The host CPU the code is optimized for, with its features (vector
/// widths); code that reaches the weights and the runtime through its GOT,
/// wherever they are in memory.
llvm::Expected<llvm::orc::JITTargetMachineBuilder> describeHostMachine() {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  builder->setRelocationModel(llvm::Reloc::PIC_);
  builder->setCodeModel(llvm::CodeModel::Small);
  return std::move(*builder);
}

/// What the code depends on besides the IR, as the compile cache's key
/// takes it.
std::string describeForCache(const JitOptions &options,
                             const llvm::orc::JITTargetMachineBuilder &host) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "triple=" << host.getTargetTriple().str() << " cpu=" << host.getCPU()
     << " features=" << host.getFeatures().getString()
     << " opt=" << options.optLevel << " threads=" << options.threads
     << " threshold=" << llvm::format("%a", options.threadingThreshold);
  return text;
}

} // namespace

llvm::Error
CompiledModel::link(const llvm::orc::JITTargetMachineBuilder &host,
                    std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects,
                    llvm::ArrayRef<CachedConstant> constants) {
  auto built =
      llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(host).create();
  if (!built)
    return built.takeError();
  jit = std::move(*built);
  llvm::orc::JITDylib &library = jit->getMainJITDylib();
  // The runtime, the weights, and what the process has loaded (libm,
  // OpenMP's runtime).
  llvm::orc::MangleAndInterner interner(jit->getExecutionSession(),
                                        jit->getDataLayout());
  llvm::orc::SymbolMap symbols;
  auto add = [&](llvm::StringRef name, const void *address) {
    symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                               llvm::JITSymbolFlags::Exported};
  };
  addRuntimeSymbols(add);
  for (const CachedConstant &constant : constants)
    add(constant.name, constant.data.data());
  if (llvm::Error error =
          library.define(llvm::orc::absoluteSymbols(std::move(symbols))))
    return error;
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      jit->getDataLayout().getGlobalPrefix());
  if (!process)
    return process.takeError();
  library.addGenerator(std::move(*process));
  for (std::unique_ptr<llvm::MemoryBuffer> &object : objects)
    if (llvm::Error error = jit->addObjectFile(std::move(object)))
      return error;
  auto invoke = jit->lookup(std::string(kEntryPrefix) + "_invoke");
  if (!invoke)
    return invoke.takeError();

  // A nameless model: the runtime's messages then name the input only.
  for (const TensorSignature &signature : inputs)
    shapes.push_back(signature.shapeString());
  for (const TensorSignature &signature : outputs)
    shapes.push_back(signature.shapeString());
  size_t shape = 0;
  for (auto *list : {&inputs, &outputs}) {
    auto &infos = list == &inputs ? inputInfos : outputInfos;
    for (const TensorSignature &signature : *list)
      infos.push_back({signature.name.c_str(), signature.dtype,
                       static_cast<int32_t>(signature.shape.size()),
                       shapes[shape++].c_str(), signature.role});
  }
  runtimeModel.name = "";
  runtimeModel.num_inputs = inputInfos.size();
  runtimeModel.num_outputs = outputInfos.size();
  runtimeModel.inputs = inputInfos.data();
  runtimeModel.outputs = outputInfos.data();
  runtimeModel.invoke = invoke->toPtr<int32_t (*)(void **)>();
  return llvm::Error::success();
}

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
  llvm::Expected<llvm::orc::JITTargetMachineBuilder> host =
      describeHostMachine();
  if (!host)
    return host.takeError();

  // A model compiled before, for this machine, by this compiler.
  std::string cacheKey;
  if (!jitOptions.cacheDir.empty() && jitOptions.gpu.empty()) {
    TimingScope lookup = compileTiming.nest("compile cache lookup");
    cacheKey = computeCacheKey(module, describeForCache(jitOptions, *host));
    if (std::optional<CacheEntry> entry =
            lookupCache(jitOptions.cacheDir, cacheKey)) {
      std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects;
      for (llvm::MemoryBufferRef object : entry->objects)
        objects.push_back(llvm::MemoryBuffer::getMemBuffer(
            object, /*RequiresNullTerminator=*/false));
      model->cachedEntry = std::move(entry->file);
      if (llvm::Error error =
              model->link(*host, std::move(objects), entry->constants)) {
        // Not code this process can link: compiled again and replaced.
        llvm::consumeError(std::move(error));
        std::unique_ptr<CompiledModel> fresh(new CompiledModel());
        fresh->inputs = std::move(model->inputs);
        fresh->outputs = std::move(model->outputs);
        model = std::move(fresh);
      } else {
        return model;
      }
    }
  }

  llvm::Expected<TargetInfo> target = describeJitTarget(jitOptions);
  if (!target)
    return target.takeError();
  if (failed(lowerModelToLLVM(module, main, *target, &compileTiming)))
    return makeError("the model could not be lowered");
  SmallVector<Attribute> values;
  std::vector<CachedConstant> weights =
      referenceLargeConstants(module, values);

  TimingScope translation = compileTiming.nest("translation to LLVM IR");
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "model");
  if (!llvmModule)
    return makeError("the lowered model does not translate to LLVM IR");
  // The packed entry compiled objects have, for tract_model_run.
  llvm::Function *entry = llvmModule->getFunction("_mlir_ciface_main");
  llvm::Function *lowered = llvmModule->getFunction("main");
  if (!entry || !lowered)
    return makeError("the lowered model has no C interface for its entry");
  addPackedEntry(*llvmModule, *entry, lowered->getReturnType(), kEntryPrefix);
  translation.stop();

  TimingScope generation =
      compileTiming.nest("LLVM optimization and code generation");
  ObjectCodeOptions codeOptions;
  codeOptions.optLevel = jitOptions.optLevel;
  codeOptions.threads = 0;
  auto objects = emitObjects(
      std::move(llvmModule),
      [&]() -> llvm::Expected<std::unique_ptr<llvm::TargetMachine>> {
        return host->createTargetMachine();
      },
      codeOptions);
  if (!objects)
    return objects.takeError();
  generation.stop();

  if (!cacheKey.empty()) {
    TimingScope store = compileTiming.nest("compile cache store");
    std::vector<llvm::MemoryBufferRef> objectRefs;
    for (const std::unique_ptr<llvm::MemoryBuffer> &object : *objects)
      objectRefs.push_back(object->getMemBufferRef());
    if (llvm::Error error =
            storeCache(jitOptions.cacheDir, cacheKey, objectRefs, weights))
      emitWarning(module.getLoc()) << llvm::toString(std::move(error));
    // Written, the weights read in place from the model file can go until
    // the run reads them: a gathered table would stay resident whole.
    for (Attribute value : values)
      tract::dropMappedPages(value);
  }

  TimingScope linking = compileTiming.nest("linking");
  if (llvm::Error error = model->link(*host, std::move(*objects), weights))
    return std::move(error);
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
