//===- TractPulse.cpp - how tract ops stream over pulses ------------------===//
//
// The PulseContext's shared rewrites, then the ops' PulsifyOpInterface
// implementations, family by family: axis ops, slices, pads and concats;
// einsum, convolutions and pools; scans. See passes/Pulsify.cpp for the
// driver and the model of streams.
//
//===----------------------------------------------------------------------===//

#include "dialects/tract/TractPulse.h"

#include "dialects/tract/EinsumExpr.h"
#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/SetVector.h"

#include <numeric>
#include <set>

using namespace mlir;
using namespace mlir::tract;

//===----------------------------------------------------------------------===//
// Streams and the context
//===----------------------------------------------------------------------===//

void Stream::rescale(int64_t factor) {
  if (factor > 0)
    scaleNum *= factor;
  else
    scaleDen *= -factor;
  int64_t common = std::gcd(scaleNum, scaleDen);
  scaleNum /= common;
  scaleDen /= common;
}

int64_t Stream::requiredMultiple(int64_t stride) const {
  int64_t frames = scaleNum * stride;
  return frames / std::gcd(frames, scaleDen);
}

bool mlir::tract::mentionsSymbol(const TDim &dim, StringRef symbol) {
  std::set<std::string> names;
  dim.collectSymbols(names);
  return names.count(symbol.str());
}

bool mlir::tract::mentionsSymbol(Type type, StringRef symbol) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isTractTensorType(tensor) &&
         llvm::any_of(getShape(tensor), [&](const TDim &dim) {
           return mentionsSymbol(dim, symbol);
         });
}

bool PulseContext::anyStreamed(Operation *op) const {
  if (llvm::any_of(op->getOperands(),
                   [&](Value value) { return isStreamed(value); }))
    return true;
  // What a region reads from outside it.
  WalkResult reads = op->walk([&](Operation *inner) {
    for (Value value : inner->getOperands())
      if (isStreamed(value))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return reads.wasInterrupted();
}

LogicalResult mlir::tract::pulsifyOperation(PulseContext &context,
                                            Operation *op) {
  StringRef symbol = context.getSymbol();
  auto pulsable = dyn_cast<PulsifyOpInterface>(op);
  if (!context.anyStreamed(op)) {
    if (pulsable && pulsable.startsStream(context))
      return pulsable.pulsify(context);
    for (Value result : op->getResults())
      if (mentionsSymbol(result.getType(), symbol))
        return context.error(op)
               << "it computes a value of " << result.getType()
               << " from the stream length, not from the stream";
    return success();
  }
  if (pulsable)
    return pulsable.pulsify(context);
  if (isElementwise(op))
    return pulsifyElementwise(context, op);
  if (isa<WorkAxesOpInterface>(op) && context.isStreamed(op->getOperand(0)))
    return pulsifyWorkAxes(context, op);
  return context.error(op) << "no pulsifier for " << op->getName()
                           << " on a streamed operand";
}

int64_t PulseContext::pulseOf(Value value) const {
  return *getShape(value)[getStream(value).axis].getConstant();
}

InFlightDiagnostic PulseContext::error(Operation *op) const {
  InFlightDiagnostic diagnostic = op->emitOpError();
  if (auto name = dyn_cast<NameLoc>(op->getLoc()))
    diagnostic << "(node '" << name.getName().getValue() << "') ";
  return std::move(diagnostic << "cannot be pulsified: ");
}

LogicalResult PulseContext::checkStride(Operation *op, Value input,
                                        int64_t stride) const {
  if (pulseOf(input) % stride == 0)
    return success();
  return error(op) << "the pulse " << pulse << " is not a multiple of "
                   << getStream(input).requiredMultiple(stride)
                   << ", which the stride " << stride << " of this op requires";
}

Value PulseContext::delayBy(Operation *op, Value value, int64_t frames) {
  Stream stream = getStream(value);
  OpBuilder builder(op);
  Value delayed =
      DelayOp::create(builder, op->getLoc(), value, stream.axis, frames, 0);
  stream.delay += frames;
  setStream(delayed, stream);
  return delayed;
}

int64_t PulseContext::alignDelays(Operation *op, ArrayRef<unsigned> operands) {
  int64_t delay = 0;
  for (unsigned index : operands)
    if (isStreamed(op->getOperand(index)))
      delay = std::max(delay, getStream(op->getOperand(index)).delay);
  for (unsigned index : operands) {
    Value operand = op->getOperand(index);
    if (!isStreamed(operand))
      continue;
    int64_t missing = delay - getStream(operand).delay;
    if (missing > 0)
      op->setOperand(index, delayBy(op, operand, missing));
  }
  return delay;
}

Value PulseContext::padStream(Operation *op, Value input, Stream &stream,
                              int64_t before, int64_t after, TypedAttr value) {
  // Enough delay that the padding before the stream fits in it.
  if (stream.delay < before) {
    input = delayBy(op, input, before - stream.delay);
    stream = getStream(input);
  }
  OpBuilder builder(op);
  Value padded = PulsePadOp::create(
      builder, op->getLoc(), input, stream.axis, before,
      DimAttr::get(op->getContext(), TDim(after)), stream.delay,
      DimAttr::get(op->getContext(), TDim(stream.delay) + stream.dim),
      PadMode::Constant, value, 0);
  stream.delay -= before;
  stream.dim = stream.dim + TDim(before + after);
  return padded;
}

LogicalResult PulseContext::reinfer(Operation *op) {
  if (failed(inferOpResultTypes(op)))
    return failure();
  for (Value result : op->getResults())
    if (mentionsSymbol(result.getType(), symbol))
      return error(op) << "its result " << result.getType()
                       << " still depends on the stream length " << symbol;
  return success();
}

LogicalResult PulseContext::reinferWith(Operation *op, Stream stream,
                                        const Shape &original) {
  if (failed(reinfer(op)))
    return failure();
  stream.dim = original[stream.axis];
  setStream(op->getResult(0), stream);
  return success();
}

LogicalResult PulseContext::alignAndReinfer(Operation *op, Stream stream,
                                            int64_t axis) {
  Shape original = getShape(op->getResult(0));
  SmallVector<unsigned> all(op->getNumOperands());
  std::iota(all.begin(), all.end(), 0);
  stream.delay = alignDelays(op, all);
  if (failed(reinfer(op)))
    return failure();
  stream.axis = axis;
  stream.dim = original[axis];
  setStream(op->getResult(0), stream);
  return success();
}

LogicalResult PulseContext::moveStreamAxis(Operation *op, int64_t newAxis) {
  for (Value operand : op->getOperands().drop_front())
    if (isStreamed(operand))
      return error(op) << "a secondary operand is streamed";
  Stream stream = getStream(op->getOperand(0));
  stream.axis = newAxis;
  return reinferWith(op, stream, getShape(op->getResult(0)));
}

//===----------------------------------------------------------------------===//
// Element-wise ops and ops working along axes
//===----------------------------------------------------------------------===//

LogicalResult mlir::tract::pulsifyElementwise(PulseContext &context,
                                              Operation *op) {
  std::optional<Stream> first;
  for (Value operand : op->getOperands()) {
    if (!context.isStreamed(operand))
      continue;
    Stream stream = context.getStream(operand);
    if (first && first->axis != stream.axis)
      return context.error(op) << "its operands stream over different axes ("
                               << first->axis << " and " << stream.axis << ")";
    if (!first)
      first = stream;
  }
  size_t rank = getShape(op->getResult(0)).size();
  for (Value operand : op->getOperands())
    if (!context.isStreamed(operand)) {
      Shape shape = getShape(operand);
      if (shape.size() == rank && shape[first->axis] != TDim(1))
        return context.error(op)
               << "an operand that is not streamed has "
               << shape[first->axis].toString()
               << " frames on the streaming axis " << first->axis;
    }
  return context.alignAndReinfer(op, *first, first->axis);
}

LogicalResult mlir::tract::pulsifyWorkAxes(PulseContext &context,
                                           Operation *op) {
  auto work = cast<WorkAxesOpInterface>(op);
  int64_t axis = context.getStream(op->getOperand(0)).axis;
  if (llvm::is_contained(work.getWorkAxes(), axis))
    return context.error(op)
           << "it " << (isa<ReduceOp>(op) ? "reduces" : "normalizes")
           << " over the streaming axis";
  return context.moveStreamAxis(op, axis);
}

namespace {

//===----------------------------------------------------------------------===//
// Axis ops
//===----------------------------------------------------------------------===//

/// The streaming axis of `op`'s first operand.
int64_t streamAxis(PulseContext &context, Operation *op) {
  return context.getStream(op->getOperand(0)).axis;
}

LogicalResult pulsifyRmAxis(PulseContext &context, RmAxisOp op) {
  int64_t axis = streamAxis(context, op), removed = op.getAxis();
  if (removed == axis)
    return context.error(op) << "it removes the streaming axis";
  return context.moveStreamAxis(op, axis - (removed < axis));
}

LogicalResult pulsifyMoveAxis(PulseContext &context, MoveAxisOp op) {
  int64_t from = op.getFrom(), to = op.getTo();
  SmallVector<int64_t> order(getShape(op.getInput()).size());
  std::iota(order.begin(), order.end(), 0);
  order.erase(order.begin() + from);
  order.insert(order.begin() + to, from);
  int64_t axis = streamAxis(context, op);
  return context.moveStreamAxis(op, llvm::find(order, axis) - order.begin());
}

LogicalResult pulsifyReshape(PulseContext &context, ReshapeOp op) {
  int64_t axis = streamAxis(context, op);
  int64_t at = op.getAt(), count = op.getCount();
  if (axis >= at && axis < at + count)
    return context.error(op) << "it reshapes the streaming axis";
  if (axis >= at + count)
    axis = axis - count + op.getTo().getDims().size();
  return context.moveStreamAxis(op, axis);
}

LogicalResult pulsifyTile(PulseContext &context, TileOp op) {
  int64_t axis = streamAxis(context, op);
  if (op.getMultipliers().getDims()[axis] != TDim(1))
    return context.error(op) << "it tiles the streaming axis";
  return context.moveStreamAxis(op, axis);
}

LogicalResult pulsifyGather(PulseContext &context, GatherOp op) {
  if (!context.isStreamed(op.getInput())) {
    // A fixed table read at streamed indices (a mask's rows by position):
    // the indices' frames, where the indices' axes land.
    Stream stream = context.getStream(op.getIndices());
    stream.axis += op.getAxis();
    return context.reinferWith(op, stream, getShape(op.getOutput()));
  }
  if (context.isStreamed(op.getIndices()))
    return context.error(op) << "both its table and its indices stream";
  int64_t axis = streamAxis(context, op);
  if (static_cast<int64_t>(op.getAxis()) <= axis)
    return context.error(op) << "it gathers on or before the streaming axis";
  return context.moveStreamAxis(op, axis);
}

/// A broadcast of a value that is not streamed to a shape over the stream
/// length: the same frames all along, which streams with any delay.
LogicalResult pulsifyBroadcastOfConstant(PulseContext &context,
                                         BroadcastOp op) {
  Shape shape(op.getShape().getDims());
  std::optional<int64_t> axis;
  for (auto [index, dim] : llvm::enumerate(shape)) {
    if (!mentionsSymbol(dim, context.getSymbol()))
      continue;
    if (axis)
      return context.error(op)
             << "it broadcasts to the stream length on two axes";
    axis = index;
  }
  Shape original = getShape(op.getOutput());
  if (getShape(op.getInput())[*axis] != TDim(1))
    return context.error(op)
           << "it broadcasts frames that differ over the stream";
  shape[*axis] = TDim(context.getPulse());
  op.setShapeAttr(ShapeAttr::get(op->getContext(), shape));
  if (failed(context.reinfer(op)))
    return failure();
  context.setStream(op.getOutput(),
                    Stream{static_cast<int64_t>(*axis), 0, original[*axis]});
  return success();
}

/// A slice of a value that does not stream (a positional table) over
/// [start, start + S) follows the stream: each pulse takes the table's
/// frames at the stream's position.
LogicalResult pulsifySliceOfConstant(PulseContext &context, SliceOp op) {
  int64_t axis = op.getAxis();
  const TDim &begin = op.getStart().getValue(), &end = op.getEnd().getValue();
  std::optional<int64_t> start = begin.getConstant();
  if (!start || end != begin + TDim::symbol(context.getSymbol()))
    return context.error(op) << "it slices a value that does not stream over ["
                             << begin.toString() << ", " << end.toString()
                             << "), not over [start, start + "
                             << context.getSymbol() << ") for a constant start";
  Shape original = getShape(op.getOutput());
  OpBuilder builder(op);
  auto window =
      StreamSliceOp::create(builder, op.getLoc(), op.getInput(), uint64_t(axis),
                            *start, context.getPulse());
  op.getOutput().replaceAllUsesWith(window.getOutput());
  op.erase();
  context.setStream(window.getOutput(), Stream{axis, 0, original[axis]});
  return success();
}

LogicalResult pulsifyBroadcast(PulseContext &context, BroadcastOp op) {
  if (!context.isStreamed(op.getInput()))
    return pulsifyBroadcastOfConstant(context, op);
  int64_t axis = streamAxis(context, op);
  Shape shape(op.getShape().getDims());
  shape[axis] = TDim(context.pulseOf(op.getInput()));
  op.setShapeAttr(ShapeAttr::get(op->getContext(), shape));
  return context.moveStreamAxis(op, axis);
}

//===----------------------------------------------------------------------===//
// Slices, pads, concats
//===----------------------------------------------------------------------===//

LogicalResult pulsifyPad(PulseContext &context, PadOp op) {
  Stream stream = context.getStream(op.getInput());
  int64_t before = op.getBefore()[stream.axis];
  int64_t after = op.getAfter()[stream.axis];
  Shape original = getShape(op.getOutput());
  if (before || after) {
    if (op.getMode() != PadMode::Constant)
      return context.error(op)
             << "only constant padding over the streaming axis is "
                "supported";
    TypedAttr value = op.getValueAttr();
    if (!value)
      value = OpBuilder(op).getZeroAttr(
          getElementTypeOrSelf(op.getInput().getType()));
    op.getInputMutable().assign(
        context.padStream(op, op.getInput(), stream, before, after, value));
    SmallVector<int64_t> newBefore(op.getBefore()), newAfter(op.getAfter());
    newBefore[stream.axis] = 0;
    newAfter[stream.axis] = 0;
    op.setBefore(newBefore);
    op.setAfter(newAfter);
  }
  return context.reinferWith(op, stream, original);
}

LogicalResult pulsifySlice(PulseContext &context, SliceOp op) {
  if (!context.isStreamed(op.getInput()))
    return pulsifySliceOfConstant(context, op);
  Stream stream = context.getStream(op.getInput());
  Shape original = getShape(op.getOutput());
  if (static_cast<int64_t>(op.getAxis()) == stream.axis) {
    // A slice of the stream is the same frames, later in the batch value.
    std::optional<int64_t> start = op.getStart().getValue().getConstant();
    if (!start)
      return context.error(op)
             << "it starts at " << op.getStart().getValue().toString()
             << " frames of the stream, which is not a constant";
    op.setStartAttr(DimAttr::get(op->getContext(), TDim(0)));
    op.setEndAttr(
        DimAttr::get(op->getContext(), TDim(context.pulseOf(op.getInput()))));
    stream.delay += *start;
  }
  return context.reinferWith(op, stream, original);
}

LogicalResult pulsifyConcat(PulseContext &context, ConcatOp op) {
  std::optional<Stream> first;
  for (Value input : op.getInputs()) {
    if (!context.isStreamed(input))
      return context.error(op)
             << "it concatenates a stream with a value that is not "
                "streamed";
    const Stream &stream = context.getStream(input);
    if (first && first->axis != stream.axis)
      return context.error(op) << "its operands stream over different axes";
    first = first ? first : stream;
  }
  if (static_cast<int64_t>(op.getAxis()) == first->axis)
    return context.error(op) << "it concatenates along the streaming axis";
  return context.alignAndReinfer(op, *first, first->axis);
}

LogicalResult pulsifyDownsample(PulseContext &context, DownsampleOp op) {
  Stream stream = context.getStream(op.getInput());
  Shape original = getShape(op.getOutput());
  if (static_cast<int64_t>(op.getAxis()) == stream.axis) {
    int64_t stride = op.getStride(), modulo = op.getModulo();
    if (failed(context.checkStride(op, op.getInput(), stride)))
      return failure();
    // Delay the stream until the kept frames are the first of each group
    // of `stride` in a pulse.
    int64_t skew = (stride - (stream.delay + modulo) % stride) % stride;
    if (skew) {
      op.getInputMutable().assign(context.delayBy(op, op.getInput(), skew));
      stream = context.getStream(op.getInput());
    }
    op.setModulo(0);
    stream.delay = (stream.delay + modulo) / stride;
    stream.rescale(stride);
  }
  return context.reinferWith(op, stream, original);
}

//===----------------------------------------------------------------------===//
// Contractions, convolutions and pools
//===----------------------------------------------------------------------===//

LogicalResult pulsifyEinsum(PulseContext &context, EinsumOp op) {
  EinsumExpr expr = EinsumExpr::parse(op.getExpr());
  std::optional<char> letter;
  std::optional<Stream> first;
  for (auto [operand, axes] : llvm::zip(op.getInputs(), expr.inputs)) {
    if (!context.isStreamed(operand))
      continue;
    Stream stream = context.getStream(operand);
    char streamed = axes[stream.axis];
    if (letter && *letter != streamed)
      return context.error(op) << "its operands stream over different axes ('"
                               << *letter << "' and '" << streamed << "')";
    letter = streamed;
    if (!first)
      first = stream;
  }
  size_t outputAxis = expr.output.find(*letter);
  if (outputAxis == std::string::npos)
    return context.error(op)
           << "it sums over the streaming axis '" << *letter << "'";
  for (auto [operand, axes] : llvm::zip(op.getInputs(), expr.inputs)) {
    size_t axis = axes.find(*letter);
    if (!context.isStreamed(operand) && axis != std::string::npos &&
        getShape(operand)[axis] != TDim(1))
      return context.error(op)
             << "an operand that is not streamed has "
             << getShape(operand)[axis].toString()
             << " frames on the streaming axis '" << *letter << "'";
  }
  return context.alignAndReinfer(op, *first, outputAxis);
}

/// The value a padded window op fills its border with: the identity of its
/// reduction.
TypedAttr paddingValue(Operation *op, Type elementType) {
  bool lowest = isa<MaxPoolOp>(op);
  if (auto floatType = dyn_cast<FloatType>(elementType))
    return FloatAttr::get(
        floatType, lowest ? APFloat::getInf(floatType.getFloatSemantics(),
                                            /*Negative=*/true)
                          : APFloat::getZero(floatType.getFloatSemantics()));
  auto intType = cast<IntegerType>(elementType);
  return IntegerAttr::get(intType,
                          lowest ? APInt::getSignedMinValue(intType.getWidth())
                                 : APInt::getZero(intType.getWidth()));
}

/// The attributes shared by conv and the pools.
struct WindowAttrs {
  ArrayRef<int64_t> strides, dilations, padsBefore, padsAfter;
  Padding padding;
};

template <typename OpTy> WindowAttrs getWindowAttrs(OpTy op) {
  return {op.getStrides(), op.getDilations(), op.getPadsBefore(),
          op.getPadsAfter(), op.getPadding()};
}

LogicalResult pulsifyWindow(PulseContext &context, Operation *op) {
  Value input = op->getOperand(0);
  for (Value operand : op->getOperands().drop_front())
    if (context.isStreamed(operand))
      return context.error(op) << "its kernel or bias is streamed";
  Stream stream = context.getStream(input);
  Shape inputShape = getShape(input);
  Shape original = getShape(op->getResult(0));
  size_t rank = inputShape.size();
  if (stream.axis == 0) {
    // Batch items are independent: each frame of the stream is one.
    if (failed(context.reinfer(op)))
      return failure();
    stream.dim = original[0];
    context.setStream(op->getResult(0), stream);
    return success();
  }
  if (stream.axis == 1)
    return context.error(op) << "it mixes the channels, its streaming axis";

  WindowAttrs attrs;
  int64_t kernel;
  size_t spatial = stream.axis - 2, numSpatial = rank - 2;
  if (auto conv = dyn_cast<ConvOp>(op)) {
    attrs = getWindowAttrs(conv);
    kernel = getShape(conv.getKernel())[stream.axis].getConstant().value_or(0);
  } else if (auto pool = dyn_cast<MaxPoolOp>(op)) {
    attrs = getWindowAttrs(pool);
    kernel = pool.getKernelShape()[spatial];
    if (pool.getCeilMode())
      return context.error(op)
             << "ceil mode over the streaming axis is not supported";
    if (pool.getWithIndex())
      return context.error(op)
             << "its indices are positions in the whole stream";
  } else {
    auto sum = cast<SumPoolOp>(op);
    attrs = getWindowAttrs(sum);
    kernel = sum.getKernelShape()[spatial];
    if (sum.getCeilMode())
      return context.error(op)
             << "ceil mode over the streaming axis is not supported";
  }
  auto at = [&](ArrayRef<int64_t> values, int64_t otherwise) {
    return values.empty() ? otherwise : values[spatial];
  };
  int64_t stride = at(attrs.strides, 1), dilation = at(attrs.dilations, 1);
  int64_t reach = (kernel - 1) * dilation;

  if (failed(context.checkStride(op, input, stride)))
    return failure();

  // The padding over the streaming axis, as numbers.
  int64_t before = 0, after = 0;
  SmallVector<int64_t> padsBefore(numSpatial, 0), padsAfter(numSpatial, 0);
  switch (attrs.padding) {
  case Padding::Valid:
    break;
  case Padding::Explicit:
    padsBefore.assign(attrs.padsBefore.begin(), attrs.padsBefore.end());
    padsAfter.assign(attrs.padsAfter.begin(), attrs.padsAfter.end());
    before = padsBefore[spatial];
    after = padsAfter[spatial];
    break;
  case Padding::SameUpper:
  case Padding::SameLower:
    for (size_t axis = 0; axis < numSpatial; ++axis) {
      int64_t s = attrs.strides.empty() ? 1 : attrs.strides[axis];
      int64_t d = attrs.dilations.empty() ? 1 : attrs.dilations[axis];
      int64_t k = axis == spatial ? kernel
                  : isa<ConvOp>(op)
                      ? *getShape(op->getOperand(1))[axis + 2].getConstant()
                      : (isa<MaxPoolOp>(op)
                             ? cast<MaxPoolOp>(op).getKernelShape()[axis]
                             : cast<SumPoolOp>(op).getKernelShape()[axis]);
      int64_t total;
      if (s == 1) {
        total = (k - 1) * d;
      } else if (std::optional<int64_t> length =
                     inputShape[axis + 2].getConstant();
                 length && axis != spatial) {
        int64_t out = (*length + s - 1) / s;
        total = std::max<int64_t>((out - 1) * s + (k - 1) * d + 1 - *length, 0);
      } else {
        return context.error(op)
               << "'same' padding with a stride over the streaming "
                  "axis depends on the stream length";
      }
      bool lower = attrs.padding == Padding::SameLower;
      padsBefore[axis] = lower ? total - total / 2 : total / 2;
      padsAfter[axis] = total - padsBefore[axis];
    }
    before = padsBefore[spatial];
    after = padsAfter[spatial];
    break;
  }
  if ((before || after) && isa<SumPoolOp>(op) &&
      cast<SumPoolOp>(op).getNormalize() &&
      !cast<SumPoolOp>(op).getCountIncludePad())
    return context.error(op)
           << "an average that excludes padding over the streaming "
              "axis is not supported";

  OpBuilder builder(op);
  Location loc = op->getLoc();
  Value current = input;
  if (before || after) {
    current = context.padStream(
        op, current, stream, before, after,
        paddingValue(op, getElementTypeOrSelf(input.getType())));
    padsBefore[spatial] = 0;
    padsAfter[spatial] = 0;
  }
  // The kernel reaches `reach` frames back; the first output frame of a
  // pulse must start on a stride boundary of the padded stream.
  int64_t skew = (stride - (reach + stream.delay) % stride) % stride;
  if (reach || skew)
    current = DelayOp::create(builder, loc, current, stream.axis, skew, reach);
  op->setOperand(0, current);
  bool anyPadding = llvm::any_of(padsBefore, [](int64_t p) { return p; }) ||
                    llvm::any_of(padsAfter, [](int64_t p) { return p; });
  auto padding = anyPadding ? Padding::Explicit : Padding::Valid;
  op->setAttr("padding", PaddingAttr::get(op->getContext(), padding));
  op->setAttr("pads_before",
              builder.getDenseI64ArrayAttr(anyPadding ? padsBefore
                                                      : ArrayRef<int64_t>()));
  op->setAttr("pads_after", builder.getDenseI64ArrayAttr(
                                anyPadding ? padsAfter : ArrayRef<int64_t>()));
  if (failed(context.reinfer(op)))
    return failure();
  Stream result = stream;
  result.delay = (reach + stream.delay + skew) / stride;
  result.dim = original[stream.axis];
  result.rescale(stride);
  for (Value value : op->getResults())
    context.setStream(value, result);
  return success();
}

/// The kernel of the convolution a transposed convolution is, over its
/// input upsampled by the strides: `O, C/g, k...` from `C, O/g, k...`,
/// flipped along the spatial axes.
DenseElementsAttr convKernelOfDeconv(DenseElementsAttr kernel, int64_t group) {
  ArrayRef<int64_t> shape = kernel.getType().getShape();
  int64_t channels = shape[0], outPerGroup = shape[1];
  int64_t inPerGroup = channels / group, outputs = outPerGroup * group;
  SmallVector<int64_t> convShape(shape);
  convShape[0] = outputs;
  convShape[1] = inPerGroup;
  SmallVector<int64_t> spatial(shape.drop_front(2));
  int64_t window = 1;
  for (int64_t k : spatial)
    window *= k;
  SmallVector<APFloat> values(kernel.getValues<APFloat>());
  SmallVector<APFloat> out;
  out.reserve(values.size());
  for (int64_t o = 0; o < outputs; ++o)
    for (int64_t c = 0; c < inPerGroup; ++c)
      for (int64_t w = 0; w < window; ++w) {
        // The flipped window position: each spatial index k-1-j.
        int64_t flipped = 0, rest = w, scale = window;
        for (int64_t k : spatial) {
          scale /= k;
          int64_t j = rest / scale;
          rest %= scale;
          flipped = flipped * k + (k - 1 - j);
        }
        int64_t source = o / outPerGroup * inPerGroup + c;
        out.push_back(values[(source * outPerGroup + o % outPerGroup) * window +
                             flipped]);
      }
  auto type = RankedTensorType::get(convShape, kernel.getElementType());
  return DenseElementsAttr::get(type, out);
}

/// A transposed convolution over the stream is a convolution of its input
/// upsampled by the stride (zeros between the frames), with the kernel
/// flipped and transposed and the padding the kernel's reach minus its own.
LogicalResult pulsifyDeconv(PulseContext &context, DeconvOp op) {
  Value input = op.getInput();
  if (context.isStreamed(op.getKernel()) ||
      (op.getBias() && context.isStreamed(op.getBias())))
    return context.error(op) << "its kernel or bias is streamed";
  Stream stream = context.getStream(input);
  Shape original = getShape(op.getOutput());
  if (stream.axis == 0) {
    if (failed(context.reinfer(op)))
      return failure();
    stream.dim = original[0];
    context.setStream(op.getOutput(), stream);
    return success();
  }
  if (stream.axis == 1)
    return context.error(op) << "it mixes the channels, its streaming axis";
  Attribute constant;
  DenseElementsAttr kernel;
  if (matchPattern(op.getKernel(), m_Constant(&constant)))
    kernel = dyn_cast<DenseElementsAttr>(constant);
  if (!kernel || !isa<FloatType>(kernel.getElementType()))
    return context.error(op) << "its kernel is not a constant of floats";
  if (op.getPadding() != Padding::Valid && op.getPadding() != Padding::Explicit)
    return context.error(op)
           << "'same' padding of a transposed convolution is not "
              "supported over the streaming axis";
  size_t numSpatial = getShape(input).size() - 2;
  size_t spatial = stream.axis - 2;
  auto at = [](ArrayRef<int64_t> values, size_t axis, int64_t otherwise) {
    return values.empty() ? otherwise : values[axis];
  };
  SmallVector<int64_t> before(numSpatial), after(numSpatial);
  ArrayRef<int64_t> kernelShape = kernel.getType().getShape();
  bool explicitPads = op.getPadding() == Padding::Explicit;
  for (size_t axis = 0; axis < numSpatial; ++axis) {
    if (axis != spatial && at(op.getStrides(), axis, 1) != 1)
      return context.error(op) << "it has a stride over spatial axis "
                               << axis + 2 << " besides the streaming one";
    int64_t reach =
        (kernelShape[axis + 2] - 1) * at(op.getDilations(), axis, 1);
    before[axis] = reach - (explicitPads ? op.getPadsBefore()[axis] : 0);
    after[axis] = reach - (explicitPads ? op.getPadsAfter()[axis] : 0) +
                  at(op.getAdjustments(), axis, 0);
    if (before[axis] < 0 || after[axis] < 0)
      return context.error(op) << "its padding exceeds its kernel's reach";
  }

  OpBuilder builder(op);
  Location loc = op.getLoc();
  Value current = input;
  int64_t stride = at(op.getStrides(), spatial, 1);
  if (stride > 1) {
    // Each frame, then stride - 1 zero frames.
    int64_t axis = stream.axis;
    size_t rank = getShape(input).size() + 1;
    current = AddAxisOp::create(builder, loc, current, axis + 1);
    SmallVector<int64_t> padBefore(rank, 0), padAfter(rank, 0);
    padAfter[axis + 1] = stride - 1;
    Type elementType = getElementTypeOrSelf(input.getType());
    current = PadOp::create(builder, loc, current, padBefore, padAfter,
                            PadMode::Constant,
                            cast<TypedAttr>(builder.getZeroAttr(elementType)));
    current = ReshapeOp::create(
        builder, loc, current, axis, 2,
        ShapeAttr::get(op.getContext(),
                       {TDim(context.pulseOf(input) * stride)}));
    Stream upsampled = stream;
    upsampled.delay = stream.delay * stride;
    upsampled.dim = (stream.dim - TDim(1)) * TDim(stride) + TDim(1);
    upsampled.rescale(-stride);
    context.setStream(current, upsampled);
  }
  Value convKernel = ConstOp::create(
      builder, loc, convKernelOfDeconv(kernel, op.getGroup()).getType(),
      convKernelOfDeconv(kernel, op.getGroup()));
  auto conv = ConvOp::create(
      builder, loc, TypeRange{op.getOutput().getType()}, current, convKernel,
      op.getBias(), builder.getI64IntegerAttr(op.getGroup()),
      builder.getDenseI64ArrayAttr({}), op.getDilationsAttr(),
      PaddingAttr::get(op.getContext(), Padding::Explicit),
      builder.getDenseI64ArrayAttr(before),
      builder.getDenseI64ArrayAttr(after));
  if (failed(pulsifyWindow(context, conv)))
    return failure();
  op.getOutput().replaceAllUsesWith(conv.getOutput());
  Operation *oldKernel = op.getKernel().getDefiningOp();
  op.erase();
  if (oldKernel->use_empty())
    oldKernel->erase();
  return success();
}

//===----------------------------------------------------------------------===//
// Scans
//===----------------------------------------------------------------------===//

/// A scan across the stream: over another axis (frequency bands, heads, a
/// table) of values that stream, its body reading streams from outside too.
/// Each pulse runs the whole loop on its frames, so the streams the scan
/// reads are first delayed to the latest of them (outside the loop), the
/// body's ops are pulsified like the model's, and nothing in the body may
/// keep frames from one pulse to the next; the states start again at each
/// pulse, as in the batch model they start once for all frames.
LogicalResult pulsifyScanAcross(PulseContext &context, ScanOp op) {
  Region &body = op.getBody();
  Block &block = body.front();
  int64_t numStates = op.getNumStates();
  ArrayRef<int64_t> scanAxes = op.getScanAxes(), chunks = op.getScanChunks();
  int64_t numScans = scanAxes.size();
  auto inBody = [&](Operation *user) {
    return body.isAncestor(user->getParentRegion());
  };
  // The streams read from outside the body, all at one delay.
  llvm::SetVector<Value> captures;
  body.walk([&](Operation *inner) {
    for (Value value : inner->getOperands())
      if (!body.isAncestor(value.getParentRegion()) && context.isStreamed(value))
        captures.insert(value);
  });
  int64_t delay = 0;
  for (Value value : op->getOperands())
    if (context.isStreamed(value))
      delay = std::max(delay, context.getStream(value).delay);
  for (Value value : captures)
    delay = std::max(delay, context.getStream(value).delay);
  for (OpOperand &operand : op->getOpOperands())
    if (context.isStreamed(operand.get()) &&
        context.getStream(operand.get()).delay < delay)
      operand.set(context.delayBy(op, operand.get(),
                                  delay - context.getStream(operand.get()).delay));
  for (Value value : captures)
    if (int64_t missing = delay - context.getStream(value).delay; missing > 0) {
      Value delayed = context.delayBy(op, value, missing);
      value.replaceUsesWithIf(
          delayed, [&](OpOperand &use) { return inBody(use.getOwner()); });
    }

  SmallVector<Shape> originals;
  for (Value result : op->getResults())
    originals.push_back(getShape(result));
  // The body's arguments: the operands, a chunk of each scanned one.
  for (auto [index, input] : llvm::enumerate(op.getInputs())) {
    Type type = input.getType();
    int64_t scanIndex = static_cast<int64_t>(index) - numStates;
    if (scanIndex >= 0 && scanIndex < numScans) {
      Shape shape = getShape(input);
      shape[scanAxes[scanIndex]] = TDim(std::abs(chunks[scanIndex]));
      type = getTensorTypeLike(input.getType(), shape);
    }
    block.getArgument(index).setType(type);
    if (context.isStreamed(input))
      context.setStream(block.getArgument(index), context.getStream(input));
  }
  for (Operation &inner : llvm::make_early_inc_range(block.without_terminator()))
    if (failed(pulsifyOperation(context, &inner)))
      return failure();
  WalkResult keeps = body.walk([&](Operation *inner) {
    if (inner->hasTrait<TractTrait::Stateful>() || isa<PulsePadOp>(inner) ||
        (isa<ScanOp>(inner) && inner->hasAttr("pulse.skip")))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (keeps.wasInterrupted())
    return context.error(op)
           << "its body would keep frames from one pulse to the next (a "
              "window or a recurrence over the stream inside a loop across "
              "it)";
  auto yield = cast<YieldOp>(block.getTerminator());
  for (int64_t i = 0; i < numStates; ++i) {
    Value next = yield.getValues()[i];
    BlockArgument state = block.getArgument(i);
    bool streamed = context.isStreamed(state);
    if (streamed != context.isStreamed(next) ||
        (streamed &&
         (context.getStream(next).axis != context.getStream(state).axis ||
          context.getStream(next).delay != context.getStream(state).delay)))
      return context.error(op)
             << "its state " << i
             << " does not keep the stream's frames where they are from one "
                "iteration to the next";
  }
  ArrayRef<int64_t> outputAxes = op.getOutputAxes();
  for (auto [index, axis] : llvm::enumerate(outputAxes)) {
    Value chunk = yield.getValues()[numStates + index];
    if (context.isStreamed(chunk) && context.getStream(chunk).axis == axis)
      return context.error(op) << "it stacks its output " << index
                               << " along the streaming axis";
  }
  // A loop across the stream starts again at each pulse.
  op->removeAttr("pulse.skip");
  op->removeAttr(kStatefulScanAttrName);
  if (failed(context.reinfer(op)))
    return failure();
  for (auto [index, result] : llvm::enumerate(op.getResults())) {
    Value yielded = yield.getValues()[index];
    if (!context.isStreamed(yielded))
      continue;
    Stream stream = context.getStream(yielded);
    stream.dim = originals[index][stream.axis];
    context.setStream(result, stream);
  }
  return success();
}

LogicalResult pulsifyScan(PulseContext &context, ScanOp op) {
  int64_t numStates = op.getNumStates();
  ArrayRef<int64_t> scanAxes = op.getScanAxes(), chunks = op.getScanChunks();
  int64_t numScans = scanAxes.size();
  // A scan along the stream carries its states from pulse to pulse; one
  // across it (no scanned input streams along its scanned axis) runs whole
  // at each pulse.
  bool along = false;
  for (int64_t i = 0; i < numScans; ++i) {
    Value input = op.getInputs()[numStates + i];
    along |= context.isStreamed(input) &&
             context.getStream(input).axis == scanAxes[i];
  }
  if (!along)
    return pulsifyScanAcross(context, op);
  SmallVector<unsigned> scanned;
  std::optional<Stream> first;
  for (auto [index, input] : llvm::enumerate(op.getInputs())) {
    int64_t scanIndex = static_cast<int64_t>(index) - numStates;
    bool isScanned = scanIndex >= 0 && scanIndex < numScans;
    if (!isScanned) {
      if (context.isStreamed(input))
        return context.error(op)
               << "its " << (scanIndex < 0 ? "state " : "input ") << index
               << " is streamed";
      continue;
    }
    if (!context.isStreamed(input))
      return context.error(op) << "it scans input " << index
                               << ", which is not streamed, with streamed ones";
    const Stream &stream = context.getStream(input);
    if (scanAxes[scanIndex] != stream.axis)
      return context.error(op) << "it scans input " << index << " over axis "
                               << scanAxes[scanIndex]
                               << ", not its streaming axis " << stream.axis;
    if (chunks[scanIndex] < 0)
      return context.error(op)
             << "it runs backwards over the stream (a reverse or "
                "bidirectional recurrence needs the whole stream)";
    if (context.pulseOf(input) % chunks[scanIndex] != 0)
      return context.error(op) << "its chunk of " << chunks[scanIndex]
                               << " frames does not divide the pulse";
    scanned.push_back(index);
    first = first ? first : stream;
  }
  for (Value state : op.getResults().take_front(numStates))
    if (!state.use_empty())
      return context.error(op) << "its final state depends on the whole stream";
  // The body sees a chunk of the stream per iteration, never all of it.
  WalkResult captures = op.getBody().walk([&](Operation *inner) {
    for (Value operand : inner->getOperands())
      if (context.isStreamed(operand))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (captures.wasInterrupted())
    return context.error(op) << "its body reads a whole stream from outside";
  SmallVector<Shape> originals;
  for (Value result : op.getResults())
    originals.push_back(getShape(result));
  int64_t delay = context.alignDelays(op, scanned);
  if (failed(context.reinfer(op)))
    return failure();
  // The states go on from one pulse to the next; the iterations over the
  // frames before the delay are garbage and must not touch them.
  op->setAttr("pulse.skip", OpBuilder(op).getI64IntegerAttr(delay));
  for (auto [index, axis] : llvm::enumerate(op.getOutputAxes())) {
    Stream stream = *first;
    stream.axis = axis;
    stream.delay = delay;
    stream.dim = originals[numStates + index][axis];
    context.setStream(op.getResult(numStates + index), stream);
  }
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// The ops' implementations
//===----------------------------------------------------------------------===//

LogicalResult AddAxisOp::pulsify(PulseContext &context) {
  int64_t axis = streamAxis(context, *this);
  return context.moveStreamAxis(
      *this, axis + (static_cast<int64_t>(getAxis()) <= axis));
}
LogicalResult RmAxisOp::pulsify(PulseContext &context) {
  return pulsifyRmAxis(context, *this);
}
LogicalResult MoveAxisOp::pulsify(PulseContext &context) {
  return pulsifyMoveAxis(context, *this);
}
LogicalResult ReshapeOp::pulsify(PulseContext &context) {
  return pulsifyReshape(context, *this);
}
LogicalResult TileOp::pulsify(PulseContext &context) {
  return pulsifyTile(context, *this);
}
LogicalResult GatherOp::pulsify(PulseContext &context) {
  return pulsifyGather(context, *this);
}
LogicalResult BroadcastOp::pulsify(PulseContext &context) {
  return pulsifyBroadcast(context, *this);
}
bool BroadcastOp::startsStream(PulseContext &context) {
  return mentionsSymbol(getOutput().getType(), context.getSymbol());
}

/// A range of the stream's length (`range(0, S, 1)`, the positions that a
/// mask over time compares) is the positions of the pulse's frames in the
/// whole stream: tract.stream_position, for constant start and step.
LogicalResult RangeOp::pulsify(PulseContext &context) {
  auto scalar = [](Value value) -> std::optional<int64_t> {
    DenseElementsAttr attr;
    if (!matchPattern(value, m_Constant(&attr)) || attr.getNumElements() != 1 ||
        !isa<IntegerType>(attr.getElementType()))
      return std::nullopt;
    return (*attr.getValues<APInt>().begin()).getSExtValue();
  };
  std::optional<int64_t> start = scalar(getStart()), step = scalar(getStep());
  if (!start || !step)
    return context.error(*this)
           << "its positions over the stream need a constant integer start "
              "and step";
  TDim length = getLen().getValue();
  OpBuilder builder(*this);
  auto positions = StreamPositionOp::create(
      builder, getLoc(),
      getTensorTypeLike(getOutput().getType(), {TDim(context.getPulse())}),
      *start, *step, context.getPulse());
  getOutput().replaceAllUsesWith(positions.getOutput());
  erase();
  context.setStream(positions.getOutput(), Stream{0, 0, length});
  return success();
}
bool RangeOp::startsStream(PulseContext &context) {
  return mentionsSymbol(getOutput().getType(), context.getSymbol());
}

LogicalResult SliceOp::pulsify(PulseContext &context) {
  return pulsifySlice(context, *this);
}
bool SliceOp::startsStream(PulseContext &context) {
  return mentionsSymbol(getOutput().getType(), context.getSymbol());
}
LogicalResult DownsampleOp::pulsify(PulseContext &context) {
  return pulsifyDownsample(context, *this);
}
LogicalResult PadOp::pulsify(PulseContext &context) {
  return pulsifyPad(context, *this);
}
LogicalResult ConcatOp::pulsify(PulseContext &context) {
  return pulsifyConcat(context, *this);
}

LogicalResult EinsumOp::pulsify(PulseContext &context) {
  return pulsifyEinsum(context, *this);
}
LogicalResult ConvOp::pulsify(PulseContext &context) {
  if (getChannelsLast())
    return context.error(*this) << "a channels-last convolution is the code "
                                   "generator's; pulsify the model before";
  return pulsifyWindow(context, *this);
}
LogicalResult MaxPoolOp::pulsify(PulseContext &context) {
  if (getChannelsLast())
    return context.error(*this) << "a channels-last pool is the code "
                                   "generator's; pulsify the model before";
  return pulsifyWindow(context, *this);
}
LogicalResult SumPoolOp::pulsify(PulseContext &context) {
  if (getChannelsLast())
    return context.error(*this) << "a channels-last pool is the code "
                                   "generator's; pulsify the model before";
  return pulsifyWindow(context, *this);
}
LogicalResult DeconvOp::pulsify(PulseContext &context) {
  return pulsifyDeconv(context, *this);
}

LogicalResult ScanOp::pulsify(PulseContext &context) {
  return pulsifyScan(context, *this);
}
