//===- ControlLowering.cpp - tract scan and if ----------------------------===//
//
// tract.scan becomes an scf.for over its iterations: states and the stacked
// outputs are loop-carried tensors, scanned inputs are read as slices at the
// iteration's offset and each output chunk is inserted at its own. tract.if
// becomes an scf.if on the element of its condition. The bodies move into
// the new ops as they are; the conversion then lowers their ops in place.
//
//===----------------------------------------------------------------------===//

#include "lowering/LoweringUtils.h"

#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tract;

namespace {

/// `value` (a tract value whose defining op is not lowered yet) as the plain
/// type; the conversion resolves the cast once the producer is lowered.
Value asPlain(OpBuilder &builder, Location loc, Value value) {
  Type plain = convertTractType(value.getType());
  if (plain == value.getType())
    return value;
  return UnrealizedConversionCastOp::create(builder, loc, plain, value)
      .getResult(0);
}

/// The sizes of `value` (plain, ranked) with `axis` replaced by `size`.
SmallVector<OpFoldResult> sizesWithAxis(OpBuilder &builder, Location loc,
                                        Value value, int64_t axis,
                                        OpFoldResult size) {
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(builder, loc, value);
  sizes[axis] = size;
  return sizes;
}

/// Offsets that are 0 except `offset` on `axis`.
SmallVector<OpFoldResult> offsetsOnAxis(OpBuilder &builder, int64_t rank,
                                        int64_t axis, Value offset) {
  SmallVector<OpFoldResult> offsets(rank, builder.getIndexAttr(0));
  offsets[axis] = offset;
  return offsets;
}

/// `value * factor`, without a multiplication by 1.
Value scale(OpBuilder &builder, Location loc, Value value, int64_t factor) {
  if (factor == 1)
    return value;
  return arith::MulIOp::create(
      builder, loc, value,
      arith::ConstantIndexOp::create(builder, loc, factor));
}

/// The first element of a one-element tensor.
Value extractOnlyElement(OpBuilder &builder, Location loc, Value tensor) {
  int64_t rank = cast<RankedTensorType>(tensor.getType()).getRank();
  Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
  return tensor::ExtractOp::create(builder, loc, tensor,
                                   SmallVector<Value>(rank, zero));
}

struct ScanLowering : public OpConversionPattern<ScanOp> {
  ScanLowering(const TypeConverter &converter, MLIRContext *context,
               const SymbolValueMap &symbols)
      : OpConversionPattern(converter, context), symbols(symbols) {}

  LogicalResult
  matchAndRewrite(ScanOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Operation *func = getEnclosingFunction(op);
    int64_t numStates = op.getNumStates();
    ArrayRef<int64_t> scanAxes = op.getScanAxes(), chunks = op.getScanChunks();
    ArrayRef<int64_t> outputAxes = op.getOutputAxes();
    int64_t numScans = scanAxes.size();
    ValueRange inputs = adaptor.getInputs();
    ValueRange states = inputs.take_front(numStates);
    ValueRange scanned = inputs.slice(numStates, numScans);

    if (numScans == 0) {
      op.emitError() << "cannot lower a scan without scanned inputs: nothing "
                        "gives its number of iterations";
      return failure();
    }
    // The iteration count, from the first scanned input; chunks must divide
    // their axis (a partial last chunk has no type in the body).
    Value iterations;
    for (int64_t i = 0; i < numScans; ++i) {
      TDim length = getShape(op.getInputs()[numStates + i])[scanAxes[i]];
      int64_t chunk = std::abs(chunks[i]);
      if (chunk != 1) {
        std::optional<int64_t> constant = length.getConstant();
        if (!constant || *constant % chunk != 0) {
          op.emitError() << "cannot lower a scan whose chunk of " << chunk
                         << " does not provably divide the scanned length "
                         << length.toString() << " of input " << numStates + i;
          return failure();
        }
      }
      if (iterations)
        continue;
      iterations =
          symbols.materialize(rewriter, loc, func, length.ceilDiv(chunk));
      if (!iterations)
        return rewriter.notifyMatchFailure(op, "a size has an unbound symbol");
    }

    SmallVector<Value> initial(states.begin(), states.end());
    for (Value result : op.getResults().drop_front(numStates)) {
      Value empty = symbols.emptyTensor(rewriter, loc, func, result.getType());
      if (!empty)
        return rewriter.notifyMatchFailure(op, "a size has an unbound symbol");
      initial.push_back(empty);
    }
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value last;
    if (llvm::any_of(chunks, [](int64_t chunk) { return chunk < 0; }))
      last = arith::SubIOp::create(rewriter, loc, iterations, one);
    auto loop =
        scf::ForOp::create(rewriter, loc, zero, iterations, one, initial);
    Block *loopBody = loop.getBody();
    Value iv = loop.getInductionVar();
    rewriter.setInsertionPointToStart(loopBody);

    // The body's arguments: states, the chunks of this iteration (counted
    // from the end when the chunk is negative), full inputs.
    SmallVector<Value> arguments(loop.getRegionIterArgs().begin(),
                                 loop.getRegionIterArgs().begin() + numStates);
    for (int64_t i = 0; i < numScans; ++i) {
      int64_t chunk = std::abs(chunks[i]);
      Value step = iv;
      if (chunks[i] < 0)
        step = arith::SubIOp::create(rewriter, loc, last, iv);
      Value offset = chunk == 1
                         ? step
                         : arith::MulIOp::create(rewriter, loc, step,
                                                 arith::ConstantIndexOp::create(
                                                     rewriter, loc, chunk));
      Value input = scanned[i];
      int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
      Type chunkType =
          convertTractType(op.getBody().getArgument(numStates + i).getType());
      arguments.push_back(tensor::ExtractSliceOp::create(
          rewriter, loc, cast<RankedTensorType>(chunkType), input,
          offsetsOnAxis(rewriter, rank, scanAxes[i], offset),
          sizesWithAxis(rewriter, loc, input, scanAxes[i],
                        rewriter.getIndexAttr(chunk)),
          SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(1))));
    }
    for (Value full : inputs.drop_front(numStates + numScans))
      arguments.push_back(full);

    Block &body = op.getBody().front();
    auto yield = cast<YieldOp>(body.getTerminator());
    rewriter.inlineBlockBefore(&body, loopBody, loopBody->end(), arguments);

    // States go round; each output chunk lands at this iteration's offset.
    rewriter.setInsertionPoint(yield);
    SmallVector<Value> next;
    for (auto [index, value] : llvm::enumerate(yield.getValues())) {
      Value plain = asPlain(rewriter, loc, value);
      if (static_cast<int64_t>(index) < numStates) {
        next.push_back(plain);
        continue;
      }
      int64_t axis = outputAxes[index - numStates];
      Value accumulator = loop.getRegionIterArgs()[index];
      int64_t rank = cast<RankedTensorType>(plain.getType()).getRank();
      int64_t length = cast<RankedTensorType>(plain.getType()).getDimSize(axis);
      Value offset =
          ShapedType::isDynamic(length)
              ? arith::MulIOp::create(
                    rewriter, loc, iv,
                    tensor::DimOp::create(rewriter, loc, plain, axis))
                    .getResult()
              : scale(rewriter, loc, iv, length);
      next.push_back(tensor::InsertSliceOp::create(
          rewriter, loc, plain, accumulator,
          offsetsOnAxis(rewriter, rank, axis, offset),
          tensor::getMixedSizes(rewriter, loc, plain),
          SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(1))));
    }
    scf::YieldOp::create(rewriter, loc, next);
    rewriter.eraseOp(yield);
    rewriter.replaceOp(op, loop.getResults());
    return success();
  }

private:
  const SymbolValueMap &symbols;
};

struct IfLowering : public OpConversionPattern<IfOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(IfOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Type> types;
    if (failed(getTypeConverter()->convertTypes(op.getResultTypes(), types)))
      return failure();
    Value cond = extractOnlyElement(rewriter, loc, adaptor.getCond());
    auto lowered = scf::IfOp::create(rewriter, loc, types, cond,
                                     /*addThenBlock=*/false,
                                     /*addElseBlock=*/false);
    for (auto [from, to] :
         {std::pair{&op.getThenRegion(), &lowered.getThenRegion()},
          std::pair{&op.getElseRegion(), &lowered.getElseRegion()}}) {
      rewriter.inlineRegionBefore(*from, *to, to->end());
      auto yield = cast<YieldOp>(to->front().getTerminator());
      rewriter.setInsertionPoint(yield);
      SmallVector<Value> values;
      for (Value value : yield.getValues())
        values.push_back(asPlain(rewriter, yield.getLoc(), value));
      scf::YieldOp::create(rewriter, yield.getLoc(), values);
      rewriter.eraseOp(yield);
    }
    rewriter.replaceOp(op, lowered.getResults());
    return success();
  }
};

} // namespace

void mlir::tract::populateControlLoweringPatterns(
    const TypeConverter &converter, const SymbolValueMap &symbols,
    RewritePatternSet &patterns) {
  patterns.add<ScanLowering>(converter, patterns.getContext(), symbols);
  patterns.add<IfLowering>(converter, patterns.getContext());
}
