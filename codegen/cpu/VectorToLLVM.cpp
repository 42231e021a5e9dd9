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
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTCONVERTVECTORTOLLVM
#include "codegen/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

namespace {

/// The operand of `value`, an arith.extui (`isUnsigned`) or extsi, when it
/// widens bytes.
Value widenedBytes(Value value, bool isUnsigned) {
  Operation *op = value.getDefiningOp();
  if (!op || !(isUnsigned ? isa<arith::ExtUIOp>(op) : isa<arith::ExtSIOp>(op)))
    return {};
  Value source = op->getOperand(0);
  return getElementTypeOrSelf(source).isInteger(8) ? source : Value();
}

/// The two byte operands (64 each, the first `firstUnsigned` or signed,
/// the second signed) of a sum over the last dim of 16x4 i32 products of
/// widened bytes, as tract-cpu-quant-kernels writes its inner step; of the
/// bytes alone, the second operand is ones. Null when `op` is not one.
std::pair<Value, Value> matchByteDot(vector::MultiDimReductionOp op,
                                     bool firstUnsigned,
                                     PatternRewriter &rewriter) {
  auto type = dyn_cast<VectorType>(op.getSourceVectorType());
  if (op.getKind() != vector::CombiningKind::ADD || !type ||
      type.getShape() != ArrayRef<int64_t>{16, 4} ||
      !type.getElementType().isInteger(32) ||
      op.getReductionMask() != ArrayRef<bool>{false, true})
    return {};
  Location loc = op.getLoc();
  auto bytes = VectorType::get({64}, rewriter.getI8Type());
  Value first, second;
  if (auto product = op.getSource().getDefiningOp<arith::MulIOp>()) {
    first = widenedBytes(product.getLhs(), firstUnsigned);
    second = widenedBytes(product.getRhs(), false);
    if (!first || !second) {
      first = widenedBytes(product.getRhs(), firstUnsigned);
      second = widenedBytes(product.getLhs(), false);
    }
  } else if ((first = widenedBytes(op.getSource(), firstUnsigned))) {
    // Sums of bytes: their products with ones.
    second = arith::ConstantOp::create(
        rewriter, loc,
        DenseElementsAttr::get(bytes, rewriter.getI8IntegerAttr(1)));
  }
  if (!first || !second)
    return {};
  return {vector::ShapeCastOp::create(rewriter, loc, bytes, first),
          vector::ShapeCastOp::create(rewriter, loc, bytes, second)};
}

/// acc + the sums over the last dim of 16x4 products of unsigned by signed
/// bytes widened to i32 (tract-cpu-quant-kernels' inner step), or of
/// unsigned bytes alone (the same against ones, folded), as AVX-512 VNNI's
/// vpdpbusd.
struct DotProductToVnni : OpRewritePattern<vector::MultiDimReductionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::MultiDimReductionOp op,
                                PatternRewriter &rewriter) const override {
    auto [u, s] = matchByteDot(op, /*firstUnsigned=*/true, rewriter);
    if (!u)
      return failure();
    rewriter.replaceOpWithNewOp<LLVM::CallIntrinsicOp>(
        op, op.getType(), rewriter.getStringAttr("llvm.x86.avx512.vpdpbusd.512"),
        ValueRange{op.getAcc(), u, s});
    return success();
  }
};

/// The same sums of signed by signed bytes (or of signed bytes alone,
/// against ones) as four of AArch64's sdot, each on a quarter: 4 lanes of
/// i32 and their 16 bytes.
struct DotProductToSdot : OpRewritePattern<vector::MultiDimReductionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::MultiDimReductionOp op,
                                PatternRewriter &rewriter) const override {
    auto [a, b] = matchByteDot(op, /*firstUnsigned=*/false, rewriter);
    if (!a)
      return failure();
    Location loc = op.getLoc();
    Value result = op.getAcc();
    auto quarter = VectorType::get({4}, rewriter.getI32Type());
    for (int64_t q = 0; q < 4; ++q) {
      auto slice = [&](Value vector, int64_t offset, int64_t size) -> Value {
        return vector::ExtractStridedSliceOp::create(
            rewriter, loc, vector, ArrayRef<int64_t>{offset},
            ArrayRef<int64_t>{size}, ArrayRef<int64_t>{1});
      };
      Value sums =
          LLVM::CallIntrinsicOp::create(
              rewriter, loc, quarter,
              rewriter.getStringAttr("llvm.aarch64.neon.sdot.v4i32.v16i8"),
              ValueRange{slice(op.getAcc(), 4 * q, 4), slice(a, 16 * q, 16),
                         slice(b, 16 * q, 16)})
              .getResult(0);
      result = vector::InsertStridedSliceOp::create(
          rewriter, loc, sums, result, ArrayRef<int64_t>{4 * q},
          ArrayRef<int64_t>{1});
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// A sum over the last dim of an Nx4 vector of i32 as four strided
/// shuffles added lane to lane, where no instruction does it: lowered as
/// it is, each lane's four would be one horizontal reduction.
struct SumsOfQuadsAsShuffles : OpRewritePattern<vector::MultiDimReductionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::MultiDimReductionOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<VectorType>(op.getSourceVectorType());
    if (op.getKind() != vector::CombiningKind::ADD || !type ||
        type.getRank() != 2 || type.getShape()[1] != 4 ||
        type.isScalable() || !type.getElementType().isInteger(32) ||
        op.getReductionMask() != ArrayRef<bool>{false, true})
      return failure();
    Location loc = op.getLoc();
    int64_t lanes = type.getShape()[0];
    Value flat = vector::ShapeCastOp::create(
        rewriter, loc, VectorType::get({lanes * 4}, type.getElementType()),
        op.getSource());
    Value sum = op.getAcc();
    for (int64_t i = 0; i < 4; ++i) {
      SmallVector<int64_t> mask;
      for (int64_t lane = 0; lane < lanes; ++lane)
        mask.push_back(lane * 4 + i);
      Value part = vector::ShuffleOp::create(rewriter, loc, flat, flat, mask);
      sum = arith::AddIOp::create(rewriter, loc, sum, part);
    }
    rewriter.replaceOp(op, sum);
    return success();
  }
};

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
      if (dotProduct == "vnni")
        patterns.add<DotProductToVnni>(context, /*benefit=*/10);
      else if (dotProduct == "sdot")
        patterns.add<DotProductToSdot>(context, /*benefit=*/10);
      else if (dotProduct != "none") {
        module.emitError("tract-convert-vector-to-llvm: unknown dot-product '")
            << dotProduct << "' (vnni, sdot or none)";
        return signalPassFailure();
      }
      patterns.add<SumsOfQuadsAsShuffles>(context, /*benefit=*/5);
      vector::populateVectorMultiReductionLoweringPatterns(
          patterns, vector::VectorMultiReductionLowering::InnerReduction);
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
