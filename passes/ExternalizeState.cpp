//===- ExternalizeState.cpp - the state of a streaming model as arguments -===//
//
// A pulsified model remembers things from one call to the next: the last
// frames of each tract.delay, the position in the stream for pulse_pad and
// pulse_mask, the states of a scan that goes on across pulses. This pass
// makes that memory explicit, so that the compiled step function is pure and
// several streams can run at once:
//
//   main(inputs…, symbols…, step, states…) -> (outputs…, step + 1, states…)
//
// * `step` (tensor<i64>, named "pulse_step") counts the calls made so far;
// * a symbol an op needs at run time (the stream length `S` in a
//   pulse_pad's end) becomes a tensor<i64> input named after it;
// * each delay's history is a state: the output is the first frames of
//   concat(history, input), the next history its last frames;
// * pulse_pad and pulse_mask become a select on the frame positions
//   `step * pulse + i`;
// * a scan carried across pulses starts from its initial states on the
//   first call and from the previous call's final states after; the
//   iterations over frames before its `pulse.skip` keep the states;
// * a key/value cache (dyn_kv_cache) is a state of its past's length, named
//   after the cache: the output is the past and the input concatenated,
//   which is also the next past. (A model with caches only needs no step.)
//
// The caller starts every state at zero (the step too). State arguments and
// results carry `tract.state`, symbol arguments `tract.symbol`.
//
//===----------------------------------------------------------------------===//

#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTEXTERNALIZESTATE
#include "passes/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;
using namespace mlir::tract;

namespace {

class Externalizer {
public:
  Externalizer(func::FuncOp func) : func(func), builder(func.getContext()) {}

  LogicalResult run();

private:
  /// A new argument of `main`, with its name and a tract.state (or
  /// tract.symbol) marker.
  BlockArgument addArgument(Type type, StringRef name, bool isState);
  /// A constant of `type` filled with `value`.
  Value splat(Location loc, RankedTensorType type, Attribute value);
  Value i64Scalar(Location loc, int64_t value, size_t rank);
  /// `value` (a rank-0 tensor) with `rank` unit axes.
  Value toRank(Location loc, Value value, size_t rank);
  /// The i64 positions in the stream of the frames of a pulse of `pulse`
  /// frames on `axis` of a tensor of rank `rank`: step * pulse + i.
  Value framePositions(Location loc, int64_t pulse, int64_t axis, size_t rank);
  /// `dim` computed from the symbol arguments, as a rank-0 i64 tensor.
  FailureOr<Value> materialize(Operation *op, const TDim &dim);
  /// The boolean mask of the frames in [begin, end) of the stream.
  FailureOr<Value> validFrames(Operation *op, Value input, int64_t axis,
                               int64_t begin, const TDim &end);

  LogicalResult externalize(DelayOp op);
  LogicalResult externalize(Operation *op, Value input, int64_t axis,
                            int64_t begin, const TDim &end, TypedAttr value);
  LogicalResult externalize(ScanOp op);
  LogicalResult externalize(StreamSliceOp op);
  LogicalResult externalize(StreamPositionOp op);
  LogicalResult externalize(DynKvCacheOp op);

  func::FuncOp func;
  OpBuilder builder;
  Value step;
  llvm::StringMap<Value> symbols;
  SmallVector<Value> stateResults;
  SmallVector<DictionaryAttr> argAttrs;
  int64_t numStates = 0;
};

BlockArgument Externalizer::addArgument(Type type, StringRef name,
                                        bool isState) {
  Block &entry = func.getBody().front();
  BlockArgument argument = entry.addArgument(type, func.getLoc());
  NamedAttrList attrs;
  attrs.set("tract.name", builder.getStringAttr(name));
  if (isState)
    attrs.set("tract.state", builder.getUnitAttr());
  else
    attrs.set("tract.symbol", builder.getStringAttr(name));
  argAttrs.push_back(attrs.getDictionary(func.getContext()));
  return argument;
}

Value Externalizer::splat(Location loc, RankedTensorType type,
                          Attribute value) {
  return ConstOp::create(builder, loc, type,
                         DenseElementsAttr::get(type, value));
}

/// An i64 constant of `rank` unit axes.
Value i64Constant(OpBuilder &builder, Location loc, int64_t value,
                  size_t rank) {
  auto type = RankedTensorType::get(SmallVector<int64_t>(rank, 1),
                                    builder.getI64Type());
  return ConstOp::create(
      builder, loc, type,
      DenseElementsAttr::get(type, builder.getI64IntegerAttr(value)));
}

Value Externalizer::i64Scalar(Location loc, int64_t value, size_t rank) {
  return i64Constant(builder, loc, value, rank);
}

Value Externalizer::toRank(Location loc, Value value, size_t rank) {
  for (size_t i = 0; i < rank; ++i)
    value = AddAxisOp::create(builder, loc, value, 0);
  return value;
}

Value Externalizer::framePositions(Location loc, int64_t pulse, int64_t axis,
                                   size_t rank) {
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = pulse;
  auto type = RankedTensorType::get(shape, builder.getI64Type());
  SmallVector<int64_t> values(pulse);
  std::iota(values.begin(), values.end(), 0);
  Value iota = ConstOp::create(builder, loc, type,
                               DenseElementsAttr::get(type, ArrayRef(values)));
  Value start = MulOp::create(builder, loc, toRank(loc, step, rank),
                              i64Scalar(loc, pulse, rank));
  return AddOp::create(builder, loc, start, iota);
}

/// Rank-0 i64 tensor arithmetic in the tract dialect, over the symbol
/// arguments.
struct TensorAlgebra : DimAlgebra<Value> {
  TensorAlgebra(OpBuilder &builder, Location loc,
                const llvm::StringMap<Value> &symbols)
      : builder(builder), loc(loc), symbols(symbols) {}
  Value constant(int64_t value) override {
    return i64Constant(builder, loc, value, 0);
  }
  Value symbol(StringRef name) override { return symbols.lookup(name); }
  Value add(Value lhs, Value rhs) override {
    return AddOp::create(builder, loc, lhs, rhs);
  }
  Value mul(Value lhs, Value rhs) override {
    return MulOp::create(builder, loc, lhs, rhs);
  }
  Value floorDiv(Value value, int64_t divisor) override {
    // Truncation, minus one for a negative remainder.
    Value by = constant(divisor);
    Value quotient = DivOp::create(builder, loc, value, by);
    Value remainder = RemOp::create(builder, loc, value, by);
    Value negative = LtOp::create(builder, loc, remainder, constant(0));
    Value borrow = CastOp::create(builder, loc, negative, builder.getI64Type());
    return SubOp::create(builder, loc, quotient, borrow);
  }
  Value min(Value lhs, Value rhs) override {
    return MinOp::create(builder, loc, lhs, rhs);
  }
  Value max(Value lhs, Value rhs) override {
    return MaxOp::create(builder, loc, lhs, rhs);
  }
  Value broadcast(Value, Value) override { return {}; }
  OpBuilder &builder;
  Location loc;
  const llvm::StringMap<Value> &symbols;
};

FailureOr<Value> Externalizer::materialize(Operation *op, const TDim &dim) {
  TensorAlgebra algebra(builder, op->getLoc(), symbols);
  if (Value value = buildDim(dim, algebra))
    return value;
  return op->emitOpError("cannot compute ")
         << dim.toString() << " at run time from the symbol inputs";
}

FailureOr<Value> Externalizer::validFrames(Operation *op, Value input,
                                           int64_t axis, int64_t begin,
                                           const TDim &end) {
  Location loc = op->getLoc();
  Shape shape = getShape(input);
  std::optional<int64_t> pulse = shape[axis].getConstant();
  if (!pulse)
    return op->emitOpError("needs a constant pulse");
  Value positions = framePositions(loc, *pulse, axis, shape.size());
  FailureOr<Value> endValue = materialize(op, end);
  if (failed(endValue))
    return failure();
  Value afterBegin = GeOp::create(builder, loc, positions,
                                  i64Scalar(loc, begin, shape.size()));
  Value beforeEnd = LtOp::create(builder, loc, positions,
                                 toRank(loc, *endValue, shape.size()));
  return AndOp::create(builder, loc, afterBegin, beforeEnd).getResult();
}

LogicalResult Externalizer::externalize(DelayOp op) {
  Location loc = op.getLoc();
  int64_t axis = op.getAxis();
  int64_t history = op.getDelay() + op.getOverlap();
  Value input = op.getInput();
  Shape shape = getShape(input);
  std::optional<int64_t> pulse = shape[axis].getConstant();
  if (!pulse)
    return op.emitOpError("needs a constant pulse");
  if (history == 0) {
    op.getOutput().replaceAllUsesWith(input);
    op.erase();
    return success();
  }
  Shape stateShape = shape;
  stateShape[axis] = TDim(history);
  Value state =
      addArgument(getTensorTypeLike(input, stateShape),
                  "delay_" + std::to_string(numStates++), /*isState=*/true);
  builder.setInsertionPoint(op);
  Value all = ConcatOp::create(builder, loc, ValueRange{state, input}, axis);
  auto dim = [&](int64_t value) {
    return DimAttr::get(op.getContext(), TDim(value));
  };
  Value output = SliceOp::create(builder, loc, all, axis, dim(0),
                                 dim(*pulse + op.getOverlap()));
  Value next = SliceOp::create(builder, loc, all, axis, dim(*pulse),
                               dim(*pulse + history));
  op.getOutput().replaceAllUsesWith(output);
  op.erase();
  stateResults.push_back(next);
  return success();
}

LogicalResult Externalizer::externalize(Operation *op, Value input,
                                        int64_t axis, int64_t begin,
                                        const TDim &end, TypedAttr value) {
  builder.setInsertionPoint(op);
  Location loc = op->getLoc();
  FailureOr<Value> valid = validFrames(op, input, axis, begin, end);
  if (failed(valid))
    return failure();
  size_t rank = getShape(input).size();
  Type elementType = getElementTypeOrSelf(input.getType());
  if (!value)
    value = builder.getZeroAttr(elementType);
  Value border = splat(
      loc, RankedTensorType::get(SmallVector<int64_t>(rank, 1), elementType),
      value);
  Value output = SelectOp::create(builder, loc, *valid, input, border);
  op->getResult(0).replaceAllUsesWith(output);
  op->erase();
  return success();
}

/// The table's frames at positions start + step * pulse + i, the last
/// frame past its end: a gather.
LogicalResult Externalizer::externalize(StreamSliceOp op) {
  Location loc = op.getLoc();
  builder.setInsertionPoint(op);
  std::optional<int64_t> length =
      getShape(op.getInput())[op.getAxis()].getConstant();
  if (!length || *length == 0)
    return op.emitOpError("needs a table of known, non-zero length");
  Value positions = AddOp::create(
      builder, loc, framePositions(loc, op.getPulse(), 0, 1),
      i64Scalar(loc, op.getStart(), 1));
  positions =
      MinOp::create(builder, loc, positions, i64Scalar(loc, *length - 1, 1));
  Value frames =
      GatherOp::create(builder, loc, op.getInput(), positions, op.getAxis());
  op.getOutput().replaceAllUsesWith(frames);
  op.erase();
  return success();
}

/// start + step * (pulse_step * pulse + k), in the op's integer type.
LogicalResult Externalizer::externalize(StreamPositionOp op) {
  Location loc = op.getLoc();
  builder.setInsertionPoint(op);
  Value positions = AddOp::create(
      builder, loc,
      MulOp::create(builder, loc, framePositions(loc, op.getPulse(), 0, 1),
                    i64Scalar(loc, op.getStep(), 1)),
      i64Scalar(loc, op.getStart(), 1));
  Type elementType = getElementTypeOrSelf(op.getType());
  if (elementType != builder.getI64Type())
    positions = CastOp::create(builder, loc, op.getType(), positions);
  op.getOutput().replaceAllUsesWith(positions);
  op.erase();
  return success();
}

/// The cache is a state of the past's length: the output is the past and
/// the input concatenated, and the next past.
LogicalResult Externalizer::externalize(DynKvCacheOp op) {
  int64_t axis = op.getAxis();
  Shape shape = getShape(op.getInput());
  shape[axis] = op.getPast().getValue();
  Value past = addArgument(getTensorTypeLike(op.getInput(), shape),
                           op.getName(), /*isState=*/true);
  builder.setInsertionPoint(op);
  Value all = ConcatOp::create(builder, op.getLoc(),
                               ValueRange{past, op.getInput()}, axis);
  op.getOutput().replaceAllUsesWith(all);
  op.erase();
  stateResults.push_back(all);
  return success();
}

LogicalResult Externalizer::externalize(ScanOp op) {
  auto skipAttr = op->getAttrOfType<IntegerAttr>("pulse.skip");
  op->removeAttr("pulse.skip");
  int64_t skip = skipAttr.getInt();
  Location loc = op.getLoc();
  int64_t numScanStates = op.getNumStates();
  builder.setInsertionPoint(op);

  // First call: the initial states; then the last call's final states.
  Value first = EqOp::create(builder, loc, step, i64Scalar(loc, 0, 0));
  for (int64_t i = 0; i < numScanStates; ++i) {
    Value init = op.getInputs()[i];
    Value carried =
        addArgument(init.getType(), "scan_" + std::to_string(numStates++),
                    /*isState=*/true);
    size_t rank = getShape(init).size();
    Value choice =
        SelectOp::create(builder, loc, toRank(loc, first, rank), init, carried);
    op->setOperand(i, choice);
    stateResults.push_back(op.getResult(i));
  }
  if (skip == 0 || numScanStates == 0)
    return success();

  // The frames before `skip` keep the states: the body gets the position
  // of its frame as one more scanned input.
  int64_t numScans = op.getScanAxes().size();
  Value scannedInput = op.getInputs()[numScanStates];
  int64_t axis = op.getScanAxes()[0];
  int64_t chunk = op.getScanChunks()[0];
  std::optional<int64_t> length = getShape(scannedInput)[axis].getConstant();
  if (!length || chunk != 1)
    return op.emitOpError("skips frames with a constant pulse and chunks of "
                          "one frame only");
  Value positions = framePositions(loc, *length, 0, 1);
  unsigned position = numScanStates + numScans;
  op->insertOperands(position, positions);
  SmallVector<int64_t> axes(op.getScanAxes()), chunks(op.getScanChunks());
  axes.push_back(0);
  chunks.push_back(1);
  op.setScanAxes(axes);
  op.setScanChunks(chunks);
  Block &body = op.getBody().front();
  BlockArgument frame = body.insertArgument(
      position, RankedTensorType::get({1}, builder.getI64Type()), loc);
  auto yield = cast<YieldOp>(body.getTerminator());
  builder.setInsertionPoint(yield);
  Value live = GeOp::create(builder, loc, frame, i64Scalar(loc, skip, 1));
  for (int64_t i = 0; i < numScanStates; ++i) {
    Value state = body.getArgument(i);
    size_t rank = getShape(state).size();
    Value cond = live;
    if (rank == 0)
      cond = RmAxisOp::create(builder, loc, cond, 0);
    for (size_t r = 1; r < rank; ++r)
      cond = AddAxisOp::create(builder, loc, cond, 0);
    Value next =
        SelectOp::create(builder, loc, cond, yield.getValues()[i], state);
    yield->setOperand(i, next);
  }
  return success();
}

LogicalResult Externalizer::run() {
  Block &entry = func.getBody().front();
  SmallVector<Operation *> stateful;
  std::set<std::string> needed;
  WalkResult walk = func.walk([&](Operation *op) {
    bool topLevel = op->getBlock() == &entry;
    if (isStateful(op) || (isa<ScanOp>(op) && op->hasAttr("pulse.skip"))) {
      if (!topLevel) {
        op->emitOpError("keeps a state inside a region, which is not "
                        "supported");
        return WalkResult::interrupt();
      }
      stateful.push_back(op);
    }
    if (auto pad = dyn_cast<PulsePadOp>(op))
      pad.getEndInput().getValue().collectSymbols(needed);
    if (auto mask = dyn_cast<PulseMaskOp>(op))
      mask.getEnd().getValue().collectSymbols(needed);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (stateful.empty())
    return success();

  for (unsigned i = 0; i < entry.getNumArguments(); ++i)
    argAttrs.push_back(func.getArgAttrDict(i));
  auto scalar = RankedTensorType::get({}, builder.getI64Type());
  for (const std::string &name : needed)
    symbols[name] = addArgument(scalar, name, /*isState=*/false);
  // Key/value caches alone need no step.
  if (!llvm::all_of(stateful, llvm::IsaPred<DynKvCacheOp>)) {
    step = addArgument(scalar, "pulse_step", /*isState=*/true);
    builder.setInsertionPointToStart(&entry);
    Value one = i64Scalar(func.getLoc(), 1, 0);
    stateResults.push_back(AddOp::create(builder, func.getLoc(), step, one));
  }

  for (Operation *op : stateful) {
    LogicalResult result = success();
    if (auto delay = dyn_cast<DelayOp>(op))
      result = externalize(delay);
    else if (auto pad = dyn_cast<PulsePadOp>(op)) {
      if (pad.getMode() != PadMode::Constant || pad.getOverlap() != 0)
        return pad.emitOpError("only constant padding without overlap can "
                               "stream");
      result =
          externalize(op, pad.getInput(), pad.getAxis(), pad.getBeginInput(),
                      pad.getEndInput().getValue(), pad.getValueAttr());
    } else if (auto mask = dyn_cast<PulseMaskOp>(op))
      result = externalize(op, mask.getInput(), mask.getAxis(), mask.getBegin(),
                           mask.getEnd().getValue(), mask.getValue());
    else if (auto window = dyn_cast<StreamSliceOp>(op))
      result = externalize(window);
    else if (auto positions = dyn_cast<StreamPositionOp>(op))
      result = externalize(positions);
    else if (auto scan = dyn_cast<ScanOp>(op))
      result = externalize(scan);
    else if (auto cache = dyn_cast<DynKvCacheOp>(op))
      result = externalize(cache);
    else
      return op->emitOpError("keeps a state that cannot be externalized yet");
    if (failed(result))
      return failure();
  }

  // The new states are results after the outputs.
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  SmallVector<Value> results(ret.getOperands());
  SmallVector<DictionaryAttr> resultAttrs;
  for (unsigned i = 0; i < results.size(); ++i)
    resultAttrs.push_back(func.getResultAttrDict(i));
  for (auto [index, state] : llvm::enumerate(stateResults)) {
    results.push_back(state);
    NamedAttrList attrs(
        argAttrs[argAttrs.size() - stateResults.size() + index]);
    resultAttrs.push_back(attrs.getDictionary(func.getContext()));
  }
  ret->setOperands(results);
  func.setFunctionType(FunctionType::get(func.getContext(),
                                         entry.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  func.setAllArgAttrs(argAttrs);
  func.setAllResultAttrs(resultAttrs);
  return inferShapes(func->getParentOfType<ModuleOp>());
}

struct ExternalizeStatePass
    : mlir::tract::impl::TractExternalizeStateBase<ExternalizeStatePass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && failed(Externalizer(func).run()))
        return signalPassFailure();
  }
};

} // namespace
