//===- GpuToSpirv.cpp - the tract-gpu-to-spirv pass -----------------------===//
//
// The kernels of each gpu.module as a spirv.module of Vulkan compute
// shaders, for the capabilities the device has.
//
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Passes.h"

#include "mlir/Conversion/ArithToSPIRV/ArithToSPIRV.h"
#include "mlir/Conversion/FuncToSPIRV/FuncToSPIRV.h"
#include "mlir/Conversion/GPUToSPIRV/GPUToSPIRV.h"
#include "mlir/Conversion/IndexToSPIRV/IndexToSPIRV.h"
#include "mlir/Conversion/MathToSPIRV/MathToSPIRV.h"
#include "mlir/Conversion/MemRefToSPIRV/MemRefToSPIRV.h"
#include "mlir/Conversion/SCFToSPIRV/SCFToSPIRV.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVAttributes.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVEnums.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"
#include "mlir/Dialect/SPIRV/Transforms/SPIRVConversion.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTGPUTOSPIRV
#include "codegen/gpu/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

namespace {

/// The extensions a capability needs on Vulkan 1.1.
void addExtensions(spirv::Capability capability,
                   SmallVectorImpl<spirv::Extension> &extensions) {
  switch (capability) {
  case spirv::Capability::StorageBuffer8BitAccess:
    extensions.push_back(spirv::Extension::SPV_KHR_8bit_storage);
    break;
  case spirv::Capability::StorageBuffer16BitAccess:
    extensions.push_back(spirv::Extension::SPV_KHR_16bit_storage);
    break;
  default:
    break;
  }
}

struct TractGpuToSpirvPass
    : public tract::impl::TractGpuToSpirvBase<TractGpuToSpirvPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    FailureOr<spirv::TargetEnvAttr> target = targetEnv();
    if (failed(target))
      return signalPassFailure();

    // The shaders are converted from copies, after the gpu.module each
    // copies.
    SmallVector<gpu::GPUModuleOp> copies;
    module.walk([&](gpu::GPUModuleOp kernels) {
      OpBuilder b(kernels);
      b.setInsertionPointAfter(kernels);
      auto copy = cast<gpu::GPUModuleOp>(b.clone(*kernels));
      copy->setAttr(spirv::getTargetEnvAttrName(), *target);
      copies.push_back(copy);
    });
    for (gpu::GPUModuleOp copy : copies) {
      copy.walk([](gpu::GPUFuncOp kernel) { allocateWorkgroupMemory(kernel); });
      // Memory space 0 is the storage buffers', 3 the workgroup's.
      spirv::MemorySpaceToStorageClassConverter storage(
          spirv::mapMemorySpaceToVulkanStorageClass);
      spirv::convertMemRefTypesAndAttrs(copy, storage);

      std::unique_ptr<ConversionTarget> legal =
          SPIRVConversionTarget::get(*target);
      SPIRVConversionOptions options;
      options.use64bitIndex = false;
      SPIRVTypeConverter types(*target, options);
      RewritePatternSet patterns(context);
      populateGPUToSPIRVPatterns(types, patterns);
      ScfToSPIRVContext scf;
      populateSCFToSPIRVPatterns(types, scf, patterns);
      arith::populateArithToSPIRVPatterns(types, patterns);
      populateMathToSPIRVPatterns(types, patterns);
      populateMemRefToSPIRVPatterns(types, patterns);
      populateFuncToSPIRVPatterns(types, patterns);
      index::populateIndexToSPIRVPatterns(types, patterns);
      if (failed(applyFullConversion(copy, *legal, std::move(patterns))))
        return signalPassFailure();
    }
  }

  /// The kernel's workgroup attributions as workgroup allocations in its
  /// body (memory space 3), which the memref patterns make Workgroup
  /// variables: the GPU patterns take no attributions.
  static void allocateWorkgroupMemory(gpu::GPUFuncOp kernel) {
    unsigned count = kernel.getNumWorkgroupAttributions();
    if (count == 0)
      return;
    Block &entry = kernel.getBody().front();
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    for (BlockArgument attribution : kernel.getWorkgroupAttributions()) {
      auto type = cast<MemRefType>(attribution.getType());
      auto allocation = memref::AllocOp::create(
          b, kernel.getLoc(),
          MemRefType::get(type.getShape(), type.getElementType(),
                          type.getLayout(), b.getI64IntegerAttr(3)));
      attribution.replaceAllUsesWith(allocation.getResult());
    }
    unsigned first = kernel.getFunctionType().getNumInputs();
    entry.eraseArguments(first, count);
    kernel->removeAttr(gpu::GPUFuncOp::getNumWorkgroupAttributionsAttrName());
  }

  /// Vulkan 1.1's SPIR-V 1.3 with Shader and the given capabilities.
  FailureOr<spirv::TargetEnvAttr> targetEnv() {
    SmallVector<spirv::Capability> caps = {spirv::Capability::Shader};
    SmallVector<spirv::Extension> extensions = {
        spirv::Extension::SPV_KHR_storage_buffer_storage_class};
    for (const std::string &name : capabilities) {
      std::optional<spirv::Capability> capability =
          spirv::symbolizeCapability(name);
      if (!capability) {
        getOperation().emitError()
            << "unknown SPIR-V capability '" << name << "'";
        return failure();
      }
      caps.push_back(*capability);
      addExtensions(*capability, extensions);
    }
    MLIRContext *context = &getContext();
    auto triple = spirv::VerCapExtAttr::get(spirv::Version::V_1_3, caps,
                                            extensions, context);
    return spirv::TargetEnvAttr::get(
        triple, spirv::getDefaultResourceLimits(context),
        spirv::ClientAPI::Vulkan, spirv::Vendor::Unknown,
        spirv::DeviceType::Unknown, spirv::TargetEnvAttr::kUnknownDeviceID);
  }
};

} // namespace
