//===- Aot.cpp - compile a tract model to an object file ------------------===//

#include "target/Aot.h"

#include "codegen/cpu/TargetInfo.h"
#include "pipelines/Pipelines.h"
#include "target/ObjectCode.h"
#include "target/PackedEntry.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;
using namespace mlir::tract;

namespace {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The target machine for `options`, position-independent so that the
/// object links into executables and shared libraries alike.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const AotOptions &options) {
  // The code generators of the CPU targets (Targets.cpp) only, not all of
  // LLVM's: a program linked with LLVM's static libraries carries no others.
  static const bool initialized = [] {
#define TRACT_INITIALIZE(name)                                                 \
  LLVMInitialize##name##TargetInfo();                                          \
  LLVMInitialize##name##Target();                                              \
  LLVMInitialize##name##TargetMC();                                            \
  LLVMInitialize##name##AsmPrinter();
    TRACT_INITIALIZE(X86)
    TRACT_INITIALIZE(AArch64)
    TRACT_INITIALIZE(ARM)
    TRACT_INITIALIZE(WebAssembly)
#undef TRACT_INITIALIZE
    return true;
  }();
  (void)initialized;
  llvm::Triple triple(options.target->triple);
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return makeError("no code generator for " + options.target->triple + ": " +
                     error);
  std::string cpu =
      options.cpu.empty() ? options.target->defaultCpu.str() : options.cpu;
  // Without --cpu, the target's baseline features (its vector unit).
  std::string features =
      options.cpu.empty() ? options.target->defaultFeatures.str() : "";
  if (cpu == "native") {
    if (options.target != hostCpuTarget())
      return makeError("--cpu native needs the host's target, not " +
                       options.target->name);
    cpu = llvm::sys::getHostCPUName().str();
    llvm::SubtargetFeatures subtarget;
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      subtarget.AddFeature(feature.first(), feature.second);
    features = subtarget.getString();
  }
  std::unique_ptr<llvm::MCSubtargetInfo> subtargetInfo(
      target->createMCSubtargetInfo(triple, "", ""));
  if (!subtargetInfo || !subtargetInfo->isCPUStringValid(cpu))
    return makeError("unknown CPU '" + cpu + "' for " + options.target->name);
  llvm::TargetOptions targetOptions;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpu, features, targetOptions, llvm::Reloc::PIC_, std::nullopt,
      options.optLevel >= 2 ? llvm::CodeGenOptLevel::Aggressive
                            : llvm::CodeGenOptLevel::Default));
  if (!machine)
    return makeError("cannot create a code generator for " +
                     options.target->triple);
  return machine;
}

/// A C string literal for `text`.
std::string quoted(llvm::StringRef text) {
  std::string result = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      result += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      result += llvm::formatv("\\{0:o3}", static_cast<unsigned char>(c)).str();
      continue;
    }
    result += c;
  }
  return result + "\"";
}

/// f16 the way LLVM 22's WebAssembly back end compiles it: compares of f16
/// vectors as compares of f32 vectors (it never returns from legalizing
/// those with SIMD128), and f16 extended to f64 through f32 (exact; it
/// passed the half to its conversion as an i64, which the engine refuses).
/// After the optimizer, which would narrow both back.
void rewriteHalvesForWasm(llvm::Module &module) {
  llvm::SmallVector<llvm::Instruction *> found;
  auto isHalf = [](llvm::Value *value) {
    return value->getType()->getScalarType()->isHalfTy();
  };
  for (llvm::Function &function : module)
    for (llvm::Instruction &instruction : llvm::instructions(function)) {
      if (auto *compare = llvm::dyn_cast<llvm::FCmpInst>(&instruction))
        if (compare->getOperand(0)->getType()->isVectorTy() &&
            isHalf(compare->getOperand(0)))
          found.push_back(compare);
      if (auto *extend = llvm::dyn_cast<llvm::FPExtInst>(&instruction))
        if (isHalf(extend->getOperand(0)) &&
            extend->getType()->getScalarType()->isDoubleTy())
          found.push_back(extend);
    }
  for (llvm::Instruction *instruction : found) {
    llvm::IRBuilder<> builder(instruction);
    llvm::Type *single = builder.getFloatTy();
    if (auto *vector = llvm::dyn_cast<llvm::VectorType>(
            instruction->getOperand(0)->getType()))
      single = llvm::VectorType::get(single, vector);
    llvm::Value *replacement;
    if (auto *compare = llvm::dyn_cast<llvm::FCmpInst>(instruction))
      replacement = builder.CreateFCmp(
          compare->getPredicate(),
          builder.CreateFPExt(compare->getOperand(0), single),
          builder.CreateFPExt(compare->getOperand(1), single));
    else
      replacement = builder.CreateFPExt(
          builder.CreateFPExt(instruction->getOperand(0), single),
          instruction->getType());
    instruction->replaceAllUsesWith(replacement);
    instruction->eraseFromParent();
  }
}

/// maximum or minimum (NaN-propagating, -0 below +0) of two doubles, with
/// compares and selects.
llvm::Value *expandMinMax(llvm::IRBuilder<> &builder, bool isMax,
                          llvm::Value *a, llvm::Value *b) {
  llvm::Value *unordered = builder.CreateFCmpUNO(a, b);
  llvm::Value *aFirst =
      isMax ? builder.CreateFCmpOGT(a, b) : builder.CreateFCmpOLT(a, b);
  llvm::Value *equal = builder.CreateFCmpOEQ(a, b);
  // Equal: zeros of either sign, or the same value.
  llvm::Value *aNegative = builder.CreateICmpSLT(
      builder.CreateBitCast(a, builder.getInt64Ty()), builder.getInt64(0));
  llvm::Value *tie = isMax ? builder.CreateSelect(aNegative, b, a)
                           : builder.CreateSelect(aNegative, a, b);
  llvm::Value *result = builder.CreateSelect(aFirst, a, b);
  result = builder.CreateSelect(equal, tie, result);
  return builder.CreateSelect(unordered, builder.CreateFAdd(a, b), result);
}

/// llvm.maximum and llvm.minimum of doubles, and their vector reductions,
/// as compares and selects, lane by lane. LLVM 22's 32-bit ARM back end
/// cannot select its own expansion of them (a 64-bit compare of the bits of
/// a double it makes after legalization).
void expandDoubleMinMax(llvm::Module &module) {
  llvm::SmallVector<llvm::IntrinsicInst *> calls;
  for (llvm::Function &function : module)
    for (llvm::Instruction &instruction : llvm::instructions(function))
      if (auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&instruction)) {
        switch (call->getIntrinsicID()) {
        case llvm::Intrinsic::maximum:
        case llvm::Intrinsic::minimum:
        case llvm::Intrinsic::vector_reduce_fmaximum:
        case llvm::Intrinsic::vector_reduce_fminimum:
          if (call->getArgOperand(0)->getType()->getScalarType()->isDoubleTy())
            calls.push_back(call);
          break;
        default:
          break;
        }
      }
  for (llvm::IntrinsicInst *call : calls) {
    llvm::IRBuilder<> builder(call);
    llvm::Intrinsic::ID id = call->getIntrinsicID();
    bool isMax = id == llvm::Intrinsic::maximum ||
                 id == llvm::Intrinsic::vector_reduce_fmaximum;
    llvm::Value *operand = call->getArgOperand(0);
    llvm::Value *result;
    if (id == llvm::Intrinsic::vector_reduce_fmaximum ||
        id == llvm::Intrinsic::vector_reduce_fminimum) {
      unsigned lanes = llvm::cast<llvm::FixedVectorType>(operand->getType())
                           ->getNumElements();
      result = builder.CreateExtractElement(operand, uint64_t(0));
      for (unsigned lane = 1; lane < lanes; ++lane)
        result = expandMinMax(builder, isMax, result,
                              builder.CreateExtractElement(operand, lane));
    } else if (auto *vector =
                   llvm::dyn_cast<llvm::FixedVectorType>(operand->getType())) {
      result = llvm::PoisonValue::get(vector);
      for (unsigned lane = 0; lane < vector->getNumElements(); ++lane)
        result = builder.CreateInsertElement(
            result,
            expandMinMax(
                builder, isMax, builder.CreateExtractElement(operand, lane),
                builder.CreateExtractElement(call->getArgOperand(1), lane)),
            lane);
    } else {
      result = expandMinMax(builder, isMax, operand, call->getArgOperand(1));
    }
    call->replaceAllUsesWith(result);
    call->eraseFromParent();
  }
}

} // namespace

bool mlir::tract::isValidModelName(llvm::StringRef name) {
  if (name.empty() || llvm::isDigit(name.front()))
    return false;
  return llvm::all_of(name,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

llvm::Expected<ModelSignature>
mlir::tract::compileToObject(ModuleOp module, const AotOptions &options,
                             llvm::raw_pwrite_stream &os) {
  if (!isValidModelName(options.name))
    return makeError("the model name '" + options.name +
                     "' is not a C identifier");
  if (!options.target)
    return makeError("no target given");
  if (options.threads < 1)
    return makeError("the number of threads must be positive");
  if (options.threads > 1 && options.target->name == "wasm32")
    return makeError("--threads " + llvm::Twine(options.threads) +
                     ": wasm32 has no OpenMP runtime; compile for one thread");
  func::FuncOp main;
  llvm::Expected<ModelSignature> signature = describeMain(module, &main);
  if (!signature)
    return signature.takeError();
  auto machine = createTargetMachine(options);
  if (!machine)
    return machine.takeError();

  // The entry gets the model's prefix, so that several models link together.
  std::string entryName = options.name + "_main";
  if (failed(SymbolTable::replaceAllSymbolUses(
          main, StringAttr::get(module.getContext(), entryName), module)))
    return makeError("cannot rename the model's entry");
  main.setSymName(entryName);
  TimingScope timing =
      options.timing ? options.timing->nest("compile") : TimingScope();
  const llvm::MCSubtargetInfo *subtarget = (*machine)->getMCSubtargetInfo();
  TargetInfo target = TargetInfo::forFeatures(
      (*machine)->getTargetTriple().getArchName(),
      [&](llvm::StringRef feature) {
        return subtarget->checkFeatures(("+" + feature).str());
      });
  target.threads = options.threads;
  target.threadingThreshold = options.threadingThreshold;
  target.indexBitwidth = (*machine)->createDataLayout().getPointerSizeInBits();
  if (options.gpu == "vulkan") {
    // The device is the program's, unknown here: the baseline every Vulkan
    // device has.
    target.setGpu(options.gpu, TargetInfo::GpuFeatures(),
                  /*forMetal=*/!options.mslDir.empty());
    target.spirvDir = options.spirvDir;
    target.mslDir = options.mslDir;
  } else if (options.gpu == "cuda") {
    // PTX for the chip asked for; NVVM has every type.
    target.setGpu(options.gpu, TargetInfo::GpuFeatures::cuda());
    target.gpuChip = options.gpuChip;
    target.ptxDir = options.ptxDir;
    llvm::Expected<std::string> toolkit = resolveCudaToolkit(options.cudaPath);
    if (!toolkit)
      return toolkit.takeError();
    target.cudaPath = *toolkit;
    if (options.cudaFatbin && !hasCudaAssembler(target.cudaPath))
      return makeError("fatbins need ptxas and fatbinary from a CUDA toolkit");
    target.cudaFatbin = options.cudaFatbin;
  } else if (options.gpu == "metal") {
    // As for Vulkan, the baseline types, and for the MSL of each kernel;
    // threadgroups of 1024 invocations, as every Mac with Metal 2.3 has.
    TargetInfo::GpuFeatures features;
    features.maxWorkgroupInvocations = 1024;
    target.setGpu(options.gpu, features, /*forMetal=*/true);
    target.mslDir = options.mslDir;
  } else if (!options.gpu.empty()) {
    return makeError("unknown GPU API '" + options.gpu +
                     "' (vulkan, cuda and metal are known)");
  }
  if (failed(lowerModelToLLVM(module, main, target, &timing)))
    return makeError("the model could not be lowered");

  TimingScope translation = timing.nest("translation to LLVM IR");
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context, options.name);
  if (!llvmModule)
    return makeError("the lowered model does not translate to LLVM IR");
  llvmModule->setTargetTriple((*machine)->getTargetTriple());
  llvmModule->setDataLayout((*machine)->createDataLayout());
  llvm::Function *entry = llvmModule->getFunction("_mlir_ciface_" + entryName);
  llvm::Function *lowered = llvmModule->getFunction(entryName);
  if (!entry || !lowered)
    return makeError("the lowered model has no C interface for its entry");
  addPackedEntry(*llvmModule, *entry, lowered->getReturnType(), options.name);
  if (llvm::verifyModule(*llvmModule, &llvm::errs()))
    return makeError("the generated LLVM IR is invalid");
  translation.stop();

  TimingScope optimization = timing.nest("LLVM optimization");
  if (llvm::Error error =
          optimizeModule(*llvmModule, **machine, options.optLevel))
    return std::move(error);
  optimization.stop();
  // Around what LLVM 22's back ends cannot compile.
  const llvm::Triple &triple = (*machine)->getTargetTriple();
  if (triple.isWasm())
    rewriteHalvesForWasm(*llvmModule);
  if (triple.isARM())
    expandDoubleMinMax(*llvmModule);
  TimingScope generation = timing.nest("code generation");
  llvm::legacy::PassManager codegen;
  if ((*machine)->addPassesToEmitFile(codegen, os, nullptr,
                                      llvm::CodeGenFileType::ObjectFile))
    return makeError(options.target->name + " cannot emit object files");
  codegen.run(*llvmModule);
  return signature;
}

std::string mlir::tract::generateHeader(const ModelSignature &signature,
                                        const AotOptions &options,
                                        llvm::StringRef source) {
  const std::string &name = options.name;
  std::string guard = llvm::StringRef(name).upper() + "_H";
  std::string macro = llvm::StringRef(name).upper();
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "/* " << name << ": generated by `tract compile` from "
     << llvm::sys::path::filename(source) << " for " << options.target->triple
     << ".\n"
     << " *\n"
     << " * Link with the object file and the tract runtime library:\n"
     << " *   cc app.c " << name << ".o "
     << (options.gpu.empty() ? "libtract_runtime.a -lm\n"
         : options.gpu == "metal"
             ? "libtract_runtime_metal.a libtract_runtime.a -framework "
               "Metal\n"
               " *     -framework Foundation\n"
               " * (its tensor ops run as MSL kernels on the Mac's GPU; the "
               "libraries are\n"
               " * built on macOS from the runtime's sources)\n"
         : options.gpu == "cuda"
             ? "libtract_runtime_cuda.a libtract_runtime.a -lm -ldl "
               "-lpthread\n"
               " * (its tensor ops run through the CUDA driver as " +
                   (options.cudaFatbin
                        ? "code for " + options.gpuChip +
                              ",\n * or its PTX on newer chips)\n"
                        : "PTX for " + options.gpuChip +
                              ", which the driver compiles)\n")
             : "libtract_runtime_vulkan.a libtract_runtime.a -lm -ldl "
               "-lpthread\n"
               " * (its tensor ops run on a Vulkan device)\n")
     << " *\n";
  auto describe = [&](llvm::StringRef what,
                      const std::vector<TensorSignature> &tensors) {
    os << " * " << what << ":\n";
    for (auto [index, tensor] : llvm::enumerate(tensors))
      os << " *   " << index << " '" << tensor.name
         << "': " << tensor.shapeString() << (tensor.shape.empty() ? "" : ",")
         << tract_dtype_name(tensor.dtype)
         << (tensor.role == TRACT_IO_STATE    ? " (state)"
             : tensor.role == TRACT_IO_SYMBOL ? " (symbol)"
                                              : "")
         << "\n";
  };
  describe("Inputs", signature.inputs);
  describe("Outputs", signature.outputs);
  os << " *\n"
     << " * The model keeps no state between calls: a streaming model's state\n"
     << " * is among its inputs and outputs; tract_stream_new and\n"
     << " * tract_stream_run keep it for you. */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include \"tract_runtime.h\"\n\n";
  // The object's calling convention and structs are its target's: a
  // program for another one must not build.
  unsigned pointerBytes =
      llvm::Triple(options.target->triple).isArch32Bit() ? 4 : 8;
  std::string mismatch = "\"the model " + name + " is compiled for " +
                         options.target->triple.str() + "\"";
  // Its index, the type of its descriptors' offsets, sizes and strides, is
  // as wide as its pointers: the runtime's tract_index.
  os << "#ifdef __cplusplus\n#define " << macro
     << "_STATIC_ASSERT static_assert\n#else\n#define " << macro
     << "_STATIC_ASSERT _Static_assert\n#endif\n";
  for (llvm::StringRef type : {"void *", "tract_index"})
    os << macro << "_STATIC_ASSERT(sizeof(" << type << ") == " << pointerBytes
       << ", " << mismatch << ");\n";
  os << "\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
     << "#define " << macro << "_NUM_INPUTS " << signature.inputs.size()
     << "\n#define " << macro << "_NUM_OUTPUTS " << signature.outputs.size()
     << "\n";
  if (signature.pulse) {
    os << "/* A streaming model: frames per call, and the delay of each data\n"
          " * output in its frames (output frame t is frame t - delay of the\n"
          " * whole stream's output). */\n"
       << "#define " << macro << "_PULSE " << signature.pulse << "\n";
    for (auto [index, delay] : llvm::enumerate(signature.outputDelays))
      os << "#define " << macro << "_OUTPUT_DELAY_" << index << " " << delay
         << "\n";
  }
  os << "\n"
     << "/* The compiled entry point; call it through " << name << "_run. */\n"
     << "int32_t " << name << "_invoke(void **args);\n\n";
  auto table = [&](llvm::StringRef suffix,
                   const std::vector<TensorSignature> &tensors) {
    if (tensors.empty())
      return;
    os << "static const tract_io_info " << name << "_" << suffix << "["
       << tensors.size() << "] = {\n";
    for (const TensorSignature &tensor : tensors)
      os << "    {" << quoted(tensor.name) << ", TRACT_DT_"
         << llvm::StringRef(tract_dtype_name(tensor.dtype)).upper() << ", "
         << tensor.shape.size() << ", " << quoted(tensor.shapeString()) << ", "
         << (tensor.role == TRACT_IO_STATE    ? "TRACT_IO_STATE"
             : tensor.role == TRACT_IO_SYMBOL ? "TRACT_IO_SYMBOL"
                                              : "TRACT_IO_DATA")
         << "},\n";
    os << "};\n\n";
  };
  table("inputs", signature.inputs);
  table("outputs", signature.outputs);
  os << "static const tract_model " << name << "_model = {\n"
     << "    " << quoted(name) << ", " << signature.inputs.size() << ", "
     << signature.outputs.size() << ",\n"
     << "    " << (signature.inputs.empty() ? "0" : name + "_inputs") << ", "
     << (signature.outputs.empty() ? "0" : name + "_outputs") << ", " << name
     << "_invoke};\n\n"
     << "/* Runs the model on " << macro << "_NUM_INPUTS tensors; on success "
     << "outputs[0.." << macro << "_NUM_OUTPUTS)\n"
     << " * are new tensors to free with tract_tensor_free. On TRACT_ERROR, "
        "tract_last_error()\n"
     << " * says why. */\n"
     << "static inline tract_status " << name
     << "_run(const tract_tensor *const *inputs,\n"
     << "    tract_tensor **outputs) {\n"
     << "  return tract_model_run(&" << name << "_model, inputs, outputs);\n"
     << "}\n\n"
     << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
  return text;
}
