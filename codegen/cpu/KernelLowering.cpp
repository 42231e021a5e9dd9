//===- KernelLowering.cpp - what the fused CPU kernels share --------------===//

#include "codegen/cpu/KernelLowering.h"

#include "conversion/LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tract;

Value mlir::tract::forallOverSlices(
    OpBuilder &b, Location loc, ArrayRef<OpFoldResult> counts, Value init,
    function_ref<void(ValueRange, SmallVectorImpl<OpFoldResult> &,
                      SmallVectorImpl<OpFoldResult> &)>
        where,
    function_ref<Value(ValueRange, Value)> body) {
  auto forall =
      scf::ForallOp::create(b, loc, counts, ValueRange{init}, std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getBody());
  SmallVector<Value> ivs = forall.getInductionVars();
  SmallVector<OpFoldResult> offsets, sizes;
  where(ivs, offsets, sizes);
  SmallVector<OpFoldResult> strides(offsets.size(), b.getIndexAttr(1));
  Value shared = forall.getRegionIterArgs().front();
  Value slice =
      tensor::ExtractSliceOp::create(b, loc, shared, offsets, sizes, strides);
  slice = body(ivs, slice);
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(b, loc, slice, shared, offsets, sizes,
                                        strides);
  return forall.getResult(0);
}

Value mlir::tract::forRowBlocks(
    OpBuilder &b, Location loc, Value count, int64_t block, Value init,
    function_ref<Value(Value, int64_t, Value)> body) {
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  auto rows = [&](Value lb, Value ub, int64_t step, Value carried) {
    auto loop =
        scf::ForOp::create(b, loc, lb, ub, index(step), ValueRange{carried});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value next =
        body(loop.getInductionVar(), step, loop.getRegionIterArgs().front());
    scf::YieldOp::create(b, loc, next);
    return loop.getResult(0);
  };
  Value full = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, count, index(block)),
      index(block));
  Value out = rows(index(0), full, block, init);
  return rows(full, count, 1, out);
}

LogicalResult mlir::tract::lowerToKernels(
    func::FuncOp func,
    function_ref<void(const TypeConverter &, RewritePatternSet &)> populate,
    function_ref<void(ConversionTarget &)> configure) {
  if (failed(bindInputSymbols(func)))
    return failure();
  MLIRContext *context = func.getContext();
  TractTypeConverter converter;
  RewritePatternSet patterns(context);
  populate(converter, patterns);
  ConversionTarget target(*context);
  target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                         math::MathDialect, scf::SCFDialect,
                         tensor::TensorDialect, vector::VectorDialect>();
  target.addLegalOp<UnrealizedConversionCastOp>();
  if (configure)
    configure(target);
  return applyPartialConversion(func, target, std::move(patterns));
}

Value mlir::tract::repeatQuad(OpBuilder &b, Location loc, Value quad,
                              int64_t lanes) {
  Type i32 = b.getI32Type();
  Value word = vector::ExtractOp::create(
      b, loc, vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), quad),
      ArrayRef<int64_t>{0});
  return vector::BitCastOp::create(
      b, loc, VectorType::get({lanes * 4}, b.getI8Type()),
      vector::BroadcastOp::create(b, loc, VectorType::get({lanes}, i32), word));
}

Value mlir::tract::byteDot(OpBuilder &b, Location loc, Value acc, Value first,
                           Value second, bool firstSigned) {
  int64_t lanes = cast<VectorType>(acc.getType()).getDimSize(0);
  auto quadType = VectorType::get({lanes, 4}, b.getI8Type());
  auto wideType = VectorType::get({lanes, 4}, b.getI32Type());
  Value firstBytes = vector::ShapeCastOp::create(b, loc, quadType, first);
  Value firstWide =
      firstSigned
          ? Value(arith::ExtSIOp::create(b, loc, wideType, firstBytes))
          : Value(arith::ExtUIOp::create(b, loc, wideType, firstBytes));
  Value secondWide = arith::ExtSIOp::create(
      b, loc, wideType, vector::ShapeCastOp::create(b, loc, quadType, second));
  return vector::MultiDimReductionOp::create(
      b, loc, arith::MulIOp::create(b, loc, firstWide, secondWide), acc,
      ArrayRef<bool>{false, true}, vector::CombiningKind::ADD);
}
