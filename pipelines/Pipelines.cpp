//===- Pipelines.cpp - the named pipelines --------------------------------===//

#include "pipelines/Pipelines.h"

#include "codegen/Passes.h"
#include "codegen/cpu/TargetInfo.h"
#include "codegen/gpu/Passes.h"
#include "conversion/Passes.h"
#include "passes/Passes.h"
#include "target/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToFuncs/MathToFuncs.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/OpenMPToLLVM/ConvertOpenMPToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToOpenMP/SCFToOpenMP.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::tract::buildDeclutterPipeline(OpPassManager &pm) {
  // Types follow from the inputs first (a fact or --set may have changed
  // them), then the rewrites see exact shapes.
  pm.addPass(createTractInferShapes());
  pm.addPass(createTractDeclutter());
  pm.addPass(createCSEPass());
  // CSE merges duplicated subgraphs, which lets more patterns match.
  pm.addPass(createTractDeclutter());
}

void mlir::tract::buildStepFunctionPipeline(OpPassManager &pm) {
  pm.addPass(createTractExternalizeState());
  // The state's concats and slices simplify with the rest.
  buildDeclutterPipeline(pm);
}

void mlir::tract::registerLoweringDialects(DialectRegistry &registry) {
  registry.insert<affine::AffineDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, cf::ControlFlowDialect,
                  DLTIDialect, func::FuncDialect, gpu::GPUDialect,
                  linalg::LinalgDialect, LLVM::LLVMDialect, math::MathDialect,
                  NVVM::NVVMDialect, memref::MemRefDialect, omp::OpenMPDialect,
                  scf::SCFDialect, spirv::SPIRVDialect, tensor::TensorDialect,
                  ub::UBDialect, vector::VectorDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  // Deallocation follows buffers through the entry checks' branches, the
  // selects between buffers, and the loops: without scf's models the
  // buffers allocated in an scf.forall's body (the scratch of a head) were
  // never freed.
  arith::registerBufferDeallocationOpInterfaceExternalModels(registry);
  cf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  scf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  vector::registerBufferizableOpInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerOpenMPDialectTranslation(registry);
  // CUDA's kernels: NVVM's target attribute serializes a gpu.module to PTX
  // through LLVM IR.
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  // convert-gpu-to-nvvm converts the kernels' bodies with the patterns
  // their dialects offer through ConvertToLLVMPatternInterface.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  NVVM::registerConvertGpuToNVVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
}

/// The threads of the passes that make parallel loops, and the work under
/// which a loop stays on one thread.
template <typename Options>
static void setThreading(Options &options, const tract::TargetInfo &target) {
  options.threads = target.threads;
  options.threadingThreshold = target.threadingThreshold;
}

/// The options of a conversion to LLVM with the target's index width.
template <typename Options>
static Options withIndexBitwidth(const tract::TargetInfo &target) {
  Options options;
  options.indexBitwidth = target.indexBitwidth;
  return options;
}

void mlir::tract::buildLowerToLinalgPipeline(
    OpPassManager &pm, const LowerToLinalgOptions &options) {
  pm.addPass(createTractBindSymbols());
  TractCpuAttentionKernelsOptions attention;
  attention.registerFile = options.registerFile;
  pm.addNestedPass<func::FuncOp>(createTractCpuAttentionKernels(attention));
  TractCpuBlockQuantKernelsOptions blockQuant;
  blockQuant.registerFile = options.registerFile;
  blockQuant.dotProduct = options.dotProduct;
  pm.addPass(createTractCpuBlockQuantKernels(blockQuant));
  TractCpuQuantKernelsOptions quant;
  quant.signedProducts = options.signedProducts;
  pm.addNestedPass<func::FuncOp>(createTractCpuQuantKernels(quant));
  pm.addPass(createTractLowerToLinalg());
  TractEntryChecksOptions checks;
  checks.bodyMayFail = options.bodyMayFail;
  pm.addPass(createTractEntryChecks(checks));
}

void mlir::tract::buildLowerToLLVMPipeline(OpPassManager &pm,
                                           const TargetInfo &target) {
  LowerToLinalgOptions lowering;
  lowering.registerFile = target.vectorRegisters * target.f32Lanes;
  lowering.signedProducts = target.dotProduct == "sdot";
  lowering.dotProduct = target.dotProduct;
  lowering.bodyMayFail = !target.gpu.empty();
  // Quantized values as their integers, and the convolutions between a
  // dequantization and a quantization as integer ones, which the layout
  // below then takes as it takes tract.quant_conv from ONNX.
  pm.addPass(createTractLowerQuantizedTypes());
  // Convolutions with their channels on the vector lanes: a layout for the
  // CPU kernels (the GPU path keeps the model's). Then those whose taps
  // read padding in a large share of their products, cut into regions.
  if (target.gpu.empty()) {
    TractChannelsLastOptions channelsLast;
    channelsLast.lanes = target.f32Lanes;
    pm.addPass(createTractChannelsLast(channelsLast));
    pm.addPass(createTractConvRegions());
  }
  buildLowerToLinalgPipeline(pm, lowering);
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // 3×3 convolutions of stride 1 in Winograd's form: products that the
  // kernels below run, 2.25× fewer multiplications. On several threads,
  // only large ones: the three ops fork apart, and a small convolution
  // lost more in the forks than it saved (a 27×27 map of 32 to 128
  // channels: 0.72× the direct time on one thread, 1.8× on two).
  if (target.gpu.empty()) {
    TractCpuWinogradOptions winograd;
    winograd.minChannels = 2 * target.f32Lanes;
    if (target.threads > 1)
      winograd.minWork = int64_t(32) << 20;
    pm.addNestedPass<func::FuncOp>(createTractCpuWinograd(winograd));
  }
  pm.addNestedPass<func::FuncOp>(createTractFuseElementwise());
  // Before collapsing: a pad fuses with the producer of its source only.
  pm.addNestedPass<func::FuncOp>(createTractFusePads());
  pm.addNestedPass<func::FuncOp>(createTractCollapseDims());
  TractCpuPackWeightsOptions packing;
  packing.lanes = target.f32Lanes;
  // Panels as wide as the kernels' column tiles: a tile then reads one
  // contiguous run over all k. (Wider panels, for the wider tiles of a
  // single row, made a prompt's tiles stride across them: on AVX2 both the
  // prompt and the decoding steps of the LLM ran slower.)
  packing.panel = target.f32Lanes * target.vectorsPerRow();
  if (target.gpu.empty())
    pm.addNestedPass<func::FuncOp>(createTractCpuPackWeights(packing));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  // After the canonicalizer, which folds a slice of an empty tensor into
  // an empty tensor.
  if (target.gpu.empty())
    pm.addNestedPass<func::FuncOp>(createTractConcatInPlace());
  pm.addNestedPass<func::FuncOp>(createTractPrivateFills());

  bufferization::OneShotBufferizePassOptions bufferization;
  bufferization.bufferizeFunctionBoundaries = true;
  // Scans carry state tensors that each iteration computes anew.
  bufferization.allowReturnAllocsFromLoops = true;
  bufferization.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferization));
  pm.addPass(createTractKernelResultsInPlace());
  bufferization::BufferDeallocationPipelineOptions deallocation;
  bufferization::buildBufferDeallocationPipeline(pm, deallocation);
  // Deallocation may return clones of buffers it cannot give away.
  pm.addPass(createConvertBufferizationToMemRefPass());
  if (target.gpu.empty())
    pm.addNestedPass<func::FuncOp>(createTractFillBorders());
  // The heads of attention are an scf.forall: parallel loops on threads
  // (OpenMP below), a serial loop on one.
  if (target.threads > 1)
    pm.addPass(createForallToParallelLoopPass());
  else
    pm.addPass(createForallToForLoopPass());
  // A large body as steps of bounded size: the function passes below run
  // on threads, a function each, and so do LLVM's (ObjectCode.cpp).
  if (target.gpu.empty())
    pm.addPass(createTractOutlineSteps());
  // The linalg ops a GPU can run become kernels; the rest, and the
  // launches, are the host's.
  if (!target.gpu.empty()) {
    TractGpuKernelsFromLinalgOptions kernels;
    kernels.allowedTypes = target.gpuTypes;
    kernels.tileSize = target.gpuTileSize;
    // Shape arithmetic (a few dims at a time) stays on the CPU.
    kernels.minWork = 16;
    pm.addPass(createTractGpuKernelsFromLinalg(kernels));
    pm.addPass(createCanonicalizerPass());
    if (target.stopAtGpuKernels)
      return;
    if (target.gpu == "cuda") {
      // NVVM, then PTX for the chip from LLVM's NVPTX back end.
      GpuNVVMAttachTargetOptions nvvm;
      nvvm.chip = target.gpuChip;
      pm.addPass(createGpuNVVMAttachTarget(nvvm));
      pm.addNestedPass<gpu::GPUModuleOp>(createSCFToControlFlowPass());
      pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps());
      pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());
      GpuModuleToBinaryPassOptions binary;
      binary.compilationTarget = "isa";
      binary.toolkitPath = target.cudaPath;
      pm.addPass(createGpuModuleToBinaryPass(binary));
    } else {
      TractGpuToSpirvOptions spirv;
      spirv.capabilities.assign(target.gpuCapabilities.begin(),
                                target.gpuCapabilities.end());
      pm.addPass(createTractGpuToSpirv(spirv));
      pm.addNestedPass<spirv::ModuleOp>(
          spirv::createSPIRVLowerABIAttributesPass());
      pm.addNestedPass<spirv::ModuleOp>(spirv::createSPIRVUpdateVCEPass());
    }
    TractGpuLaunchWithRuntimeOptions launches;
    launches.api = target.gpu;
    launches.ptxDir = target.ptxDir;
    if (target.cudaFatbin)
      launches.cudaToolkit = target.cudaPath;
    launches.spirvDir = target.spirvDir;
    launches.mslDir = target.mslDir;
    pm.addPass(createTractGpuLaunchWithRuntime(launches));
  }

  TractCpuContractionKernelsOptions kernels;
  kernels.lanes = target.f32Lanes;
  kernels.rows = target.tileRows();
  kernels.vectorsPerRow = target.vectorsPerRow();
  kernels.kBlock = target.kBlock();
  // Weights larger than L2 come from L3 or memory at each run.
  kernels.prefetchBytes = target.l2Bytes;
  // Half of L2 for the rows the column tiles share, the rest for panels.
  kernels.rowBlockBytes = target.l2Bytes / 2;
  setThreading(kernels, target);
  pm.addNestedPass<func::FuncOp>(createTractCpuContractionKernels(kernels));
  TractCpuVectorLoopsOptions loops;
  loops.lanes = target.f32Lanes;
  setThreading(loops, target);
  pm.addNestedPass<func::FuncOp>(createTractCpuVectorLoops(loops));
  pm.addNestedPass<func::FuncOp>(createTractApproximateMath());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Once the kernels are made (they read the buffers' deaths from where
  // deallocation put them), each buffer goes back to the pool after its
  // last use, not at the end of its step.
  if (target.gpu.empty())
    pm.addNestedPass<func::FuncOp>(createTractFreeEarly());
  // Repeated kernels (a model's layers) compiled once from here on.
  if (target.gpu.empty())
    pm.addPass(createTractShareKernels());
  VectorTransferToSCFOptions transfers;
  transfers.enableFullUnroll();
  pm.addNestedPass<func::FuncOp>(createConvertVectorToSCFPass(transfers));
  TractCpuParallelLoopsOptions leftovers;
  setThreading(leftovers, target);
  pm.addNestedPass<func::FuncOp>(createTractCpuParallelLoops(leftovers));
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertMathToFuncs());
  // The kernels' parallel loops become OpenMP worksharing loops, run by the
  // team of the calling thread (its size is OpenMP's: omp_set_num_threads
  // or OMP_NUM_THREADS). Made for one thread, the code has no parallel
  // loop and needs no OpenMP runtime.
  if (target.threads > 1) {
    pm.addPass(createConvertSCFToOpenMPPass());
    pm.addNestedPass<func::FuncOp>(createTractCpuForkIf());
    pm.addNestedPass<func::FuncOp>(createTractCpuInlineAllocaScopes());
  }
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // bf16 conversions as integer arithmetic: otherwise LLVM calls
  // __truncsfbf2 on CPUs without bf16 instructions, which neither the JIT
  // nor every C runtime provides.
  pm.addPass(arith::createArithExpandOpsPass({/*includeBf16=*/true}));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  auto vectorToLLVM = withIndexBitwidth<TractConvertVectorToLLVMOptions>(target);
  vectorToLLVM.dotProduct = target.dotProduct;
  pm.addPass(createTractConvertVectorToLLVM(vectorToLLVM));
  // Transfers lowered lane by lane start from a poison vector.
  pm.addPass(createUBToLLVMConversionPass(
      withIndexBitwidth<UBToLLVMConversionPassOptions>(target)));
  // Buffers come from the runtime's pool, aligned as tensors: they are
  // kept between runs, and a dense result's buffer can become the caller's
  // tensor as it is (tract_model_run), without a copy.
  auto memrefs =
      withIndexBitwidth<FinalizeMemRefToLLVMConversionPassOptions>(target);
  memrefs.useAlignedAlloc = true;
  memrefs.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefs));
  pm.addPass(createTractUseRuntimeBuffers());
  pm.addPass(createArithToLLVMConversionPass(
      withIndexBitwidth<ArithToLLVMConversionPassOptions>(target)));
  pm.addPass(createConvertIndexToLLVMPass(
      withIndexBitwidth<ConvertIndexToLLVMPassOptions>(target)));
  pm.addPass(createConvertControlFlowToLLVMPass(
      withIndexBitwidth<ConvertControlFlowToLLVMPassOptions>(target)));
  pm.addPass(createConvertFuncToLLVMPass(
      withIndexBitwidth<ConvertFuncToLLVMPassOptions>(target)));
  if (target.threads > 1)
    pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

LogicalResult mlir::tract::lowerModelToLLVM(ModuleOp module, func::FuncOp main,
                                            const TargetInfo &target,
                                            TimingScope *timing) {
  MLIRContext *context = module.getContext();
  main->setAttr("llvm.emit_c_interface", UnitAttr::get(context));
  // The conversions without an index-bitwidth option (vector's, OpenMP's)
  // take the width of index from the module's data layout.
  if (target.indexBitwidth != 64) {
    context->getOrLoadDialect<DLTIDialect>();
    module->setAttr(
        DLTIDialect::kDataLayoutAttrName,
        DataLayoutSpecAttr::get(
            context, {DataLayoutEntryAttr::get(
                         IndexType::get(context),
                         IntegerAttr::get(IntegerType::get(context, 64),
                                          target.indexBitwidth))}));
  }
  TimingScope lowering =
      timing ? timing->nest("lowering to the LLVM dialect") : TimingScope();
  PassManager pm(context);
  buildLowerToLLVMPipeline(pm, target);
  if (lowering)
    pm.enableTiming(lowering);
  // Verified once, at the end, rather than after each of its thirty
  // passes: tract-opt and the lit tests verify after each.
  pm.enableVerifier(false);
  if (failed(pm.run(module)))
    return failure();
  return verify(module);
}

namespace {
/// What `tract-opt --tract-lower-to-llvm='threads=N'` can choose: the
/// other target facts are the host's.
struct LowerToLLVMPipelineOptions
    : public PassPipelineOptions<LowerToLLVMPipelineOptions> {
  Option<int64_t> threads{*this, "threads",
                          llvm::cl::desc("Threads the large ops share "
                                         "their tiles among (as `tract "
                                         "--threads`)"),
                          llvm::cl::init(1)};
  Option<double> threadingThreshold{
      *this, "threading-threshold",
      llvm::cl::desc("Work, in flops, from which an op runs on threads "
                     "(as `tract --threading-threshold`; below 0, the cost "
                     "model decides)"),
      llvm::cl::init(-1)};
  Option<unsigned> indexBitwidth{
      *this, "index-bitwidth",
      llvm::cl::desc("Bits of index, as wide as the target's pointers (the "
                     "module's data layout must say the same)"),
      llvm::cl::init(64)};
};
} // namespace

void mlir::tract::registerTractPassesAndPipelines() {
  registerTractPasses();
  registerTractConversionPasses();
  registerTractTargetPasses();
  registerTractCodegenPasses();
  registerTractGpuCodegenPasses();
  // What the GPU pipeline runs on its spirv.modules.
  spirv::registerSPIRVLowerABIAttributesPass();
  spirv::registerSPIRVUpdateVCEPass();
  // ... and on its gpu.modules for CUDA.
  registerGpuNVVMAttachTarget();
  registerGpuModuleToBinaryPass();
  registerPass([] { return createConvertGpuOpsToNVVMOps(); });
  registerPass([] { return createSCFToControlFlowPass(); });
  registerPass([] { return createReconcileUnrealizedCastsPass(); });
  PassPipelineRegistration<>(
      "tract-declutter-pipeline",
      "The declutter pipeline that `tract -O` runs on a model",
      [](OpPassManager &pm) { buildDeclutterPipeline(pm); });
  PassPipelineRegistration<>(
      "tract-step-function-pipeline",
      "What `tract --pulse` runs on a pulsified model before compiling it: "
      "tract-externalize-state, then the declutter pipeline",
      [](OpPassManager &pm) { buildStepFunctionPipeline(pm); });
  PassPipelineRegistration<LowerToLLVMPipelineOptions>(
      "tract-lower-to-llvm",
      "Lower a tract model to the LLVM dialect for the host CPU, as `tract "
      "run` does",
      [](OpPassManager &pm, const LowerToLLVMPipelineOptions &options) {
        TargetInfo target = TargetInfo::host();
        target.threads = options.threads;
        target.threadingThreshold = options.threadingThreshold;
        target.indexBitwidth = options.indexBitwidth;
        buildLowerToLLVMPipeline(pm, target);
      });
}
