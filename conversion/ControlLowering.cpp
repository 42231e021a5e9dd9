//===- ControlLowering.cpp - tract scan and if ----------------------------===//
//
// tract.scan becomes an scf.for over its iterations: states and the stacked
// outputs are loop-carried tensors, scanned inputs are read as slices at the
// iteration's offset and each output chunk is inserted at its own. tract.if
// becomes an scf.if on the element of its condition. The bodies move into
// the new ops as they are; the conversion then lowers their ops in place.
//
//===----------------------------------------------------------------------===//

#include "conversion/LoweringUtils.h"

#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
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

struct ScanLowering : public TractLoweringPattern<ScanOp> {
  using TractLoweringPattern::TractLoweringPattern;

  LogicalResult lower(ScanOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
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
      iterations = materializeDim(rewriter, loc, length.ceilDiv(chunk));
      if (!iterations)
        return rewriter.notifyMatchFailure(op, "a size has an unbound symbol");
    }

    SmallVector<Value> initial(states.begin(), states.end());
    for (Value result : op.getResults().drop_front(numStates)) {
      Value empty = emptyTensor(rewriter, loc, result.getType());
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
};

/// The check of a branch's assertions: whether they all hold, and the
/// message (a printf format and its int64 values) when they do not.
struct BranchCheck {
  Value holds;
  std::string format;
  SmallVector<Value> values;
};

/// A tract.if whose branches rely on assertions checks those of the branch
/// it takes first: when they fail, tract_fail records which and the results
/// are empty tensors of the sizes the types say (the model's entry then
/// returns an error status).
struct IfLowering : public TractLoweringPattern<IfOp> {
  using TractLoweringPattern::TractLoweringPattern;

  /// Its results may take sizes in its branches.
  bool requiresBoundSymbols() const override { return false; }

  LogicalResult lower(IfOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Type> types;
    if (failed(getTypeConverter()->convertTypes(op.getResultTypes(), types)))
      return failure();
    Value cond = extractScalar(rewriter, loc, adaptor.getCond());
    FailureOr<BranchCheck> thenCheck =
        check(rewriter, op, op.getThenAssertionsAttr(), "then");
    FailureOr<BranchCheck> elseCheck =
        check(rewriter, op, op.getElseAssertionsAttr(), "else");
    if (failed(thenCheck) || failed(elseCheck))
      return failure();
    scf::IfOp guarded;
    if (thenCheck->holds || elseCheck->holds) {
      Value yes =
          arith::ConstantIntOp::create(rewriter, loc, rewriter.getI1Type(), 1);
      Value ok = arith::SelectOp::create(
          rewriter, loc, cond, thenCheck->holds ? thenCheck->holds : yes,
          elseCheck->holds ? elseCheck->holds : yes);
      guarded = scf::IfOp::create(rewriter, loc, types, ok,
                                  /*withElseRegion=*/true);
      // The failure: report the branch's assertions, return empty results.
      rewriter.setInsertionPointToStart(guarded.elseBlock());
      auto report = scf::IfOp::create(rewriter, loc, cond,
                                      /*withElseRegion=*/true);
      for (auto [block, branch] :
           {std::pair{report.thenBlock(), &*thenCheck},
            std::pair{report.elseBlock(), &*elseCheck}}) {
        if (!branch->holds)
          continue;
        OpBuilder b = OpBuilder::atBlockBegin(block);
        callFail(b, op, branch->format, branch->values);
      }
      rewriter.setInsertionPointAfter(report);
      SmallVector<Value> empties;
      for (Type type : op.getResultTypes())
        empties.push_back(empty(rewriter, op, type));
      scf::YieldOp::create(rewriter, loc, empties);
      rewriter.setInsertionPointToStart(guarded.thenBlock());
    }
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
    if (!guarded) {
      rewriter.replaceOp(op, lowered.getResults());
      return success();
    }
    rewriter.setInsertionPointAfter(lowered);
    scf::YieldOp::create(rewriter, loc, lowered.getResults());
    rewriter.replaceOp(op, guarded.getResults());
    return success();
  }

private:
  /// Whether the assertions `texts` of `branch` hold (null holds when there
  /// are none); an error when one reads a symbol nothing binds.
  FailureOr<BranchCheck> check(OpBuilder &b, IfOp op, ArrayAttr texts,
                               StringRef branch) const {
    BranchCheck result;
    if (!texts)
      return result;
    Location loc = op.getLoc();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    std::set<std::string> names;
    SmallVector<std::string> quoted;
    for (StringRef text : texts.getAsValueRange<StringAttr>()) {
      std::vector<TDim> constraints;
      std::string error;
      if (!SymbolScope::parseAssertion(text, constraints, &error))
        return op.emitError()
               << "invalid assertion of its " << branch << " branch: " << error;
      for (const TDim &constraint : constraints) {
        Value value = materializeDim(b, loc, constraint);
        if (!value)
          return op.emitError()
                 << "its " << branch << " branch relies on " << text
                 << ", over symbols that nothing binds before it";
        Value nonNegative = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::sge, value, zero);
        result.holds =
            result.holds
                ? arith::AndIOp::create(b, loc, result.holds, nonNegative)
                      .getResult()
                : nonNegative;
        constraint.collectSymbols(names);
      }
      quoted.push_back(escapeFormat(text));
    }
    result.format = "the " + branch.str() + " branch taken by '" +
                    escapeFormat(nodeName(op)) + "' needs " +
                    llvm::join(quoted, " and ");
    SmallVector<std::string> parts;
    for (const std::string &name : names) {
      parts.push_back(name + "=%lld");
      result.values.push_back(arith::IndexCastOp::create(
          b, loc, b.getI64Type(), materializeDim(b, loc, TDim::symbol(name))));
    }
    if (!parts.empty())
      result.format += " (" + llvm::join(parts, ", ") + ")";
    return result;
  }

  /// An empty tensor of `type` (a tract type), of the sizes its dims have
  /// (0 for a dim nothing binds yet).
  Value empty(OpBuilder &b, IfOp op, Type type) const {
    Location loc = op.getLoc();
    auto tensorType = cast<RankedTensorType>(convertTractType(type));
    SmallVector<Value> sizes;
    for (auto [axis, dim] : llvm::enumerate(getShape(type))) {
      if (!tensorType.isDynamicDim(axis))
        continue;
      Value size = materializeDim(b, loc, dim);
      sizes.push_back(size ? size : arith::ConstantIndexOp::create(b, loc, 0));
    }
    return tensor::EmptyOp::create(b, loc, tensorType, sizes);
  }
};

} // namespace

void mlir::tract::populateControlLoweringPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<ScanLowering, IfLowering>(converter, patterns.getContext());
}
