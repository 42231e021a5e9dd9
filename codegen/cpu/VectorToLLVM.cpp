//===- VectorToLLVM.cpp - the tract-convert-vector-to-llvm pass -----------===//
//
// The vector dialect to LLVM with the index width of the target: upstream's
// pass builds its type converter for a 64-bit index whatever the data
// layout says.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "mlir/Analysis/DataLayoutAnalysis.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTCONVERTVECTORTOLLVM
#include "codegen/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

namespace {

struct TractConvertVectorToLLVMPass
    : public tract::impl::TractConvertVectorToLLVMBase<
          TractConvertVectorToLLVMPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    // First the vector ops the conversion has no pattern for, as simpler
    // vector ops; mask indices in i32 when they fit.
    {
      RewritePatternSet patterns(context);
      vector::populateVectorToVectorCanonicalizationPatterns(patterns);
      vector::populateVectorBitCastLoweringPatterns(patterns);
      vector::populateVectorBroadcastLoweringPatterns(patterns);
      vector::populateVectorContractLoweringPatterns(
          patterns, vector::VectorContractLowering::Dot);
      vector::populateVectorMaskOpLoweringPatterns(patterns);
      vector::populateVectorShapeCastLoweringPatterns(patterns);
      vector::populateVectorInterleaveLoweringPatterns(patterns);
      vector::populateVectorTransposeLoweringPatterns(
          patterns, vector::VectorTransposeLowering::EltWise);
      vector::populateVectorTransferLoweringPatterns(patterns,
                                                     /*maxTransferRank=*/1);
      vector::populateVectorMaskMaterializationPatterns(
          patterns, /*force32BitVectorIndices=*/true);
      vector::populateVectorInsertExtractStridedSliceTransforms(patterns);
      vector::populateVectorStepLoweringPatterns(patterns);
      vector::populateVectorRankReducingFMAPattern(patterns);
      vector::populateVectorGatherLoweringPatterns(patterns);
      (void)applyPatternsGreedily(module, std::move(patterns));
    }

    LowerToLLVMOptions options(
        context, getAnalysis<DataLayoutAnalysis>().getAtOrAbove(module));
    if (indexBitwidth)
      options.overrideIndexBitwidth(indexBitwidth);
    LLVMTypeConverter converter(context, options);
    RewritePatternSet patterns(context);
    vector::populateVectorTransferLoweringPatterns(patterns);
    populateVectorToLLVMConversionPatterns(converter, patterns,
                                           /*reassociateFPReductions=*/false,
                                           /*force32BitVectorIndices=*/true);
    LLVMConversionTarget target(*context);
    target.addLegalDialect<arith::ArithDialect, memref::MemRefDialect>();
    target.addLegalOp<UnrealizedConversionCastOp>();
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
