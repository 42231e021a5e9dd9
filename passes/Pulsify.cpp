//===- Pulsify.cpp - batch models over a time axis become streaming -------===//
//
// A model whose inputs carry the streaming symbol `S` on one axis is
// rewritten to take `pulse` frames of that axis per call. Every value that
// carries `S` is described by a Stream: its axis, its delay (stream frame t
// holds batch frame t - delay; earlier frames are garbage) and its batch
// length. Ops are visited in program order and each is rewritten for the
// pulses its operands now have:
//
// * element-wise ops, einsum, axis ops and ops working on other axes keep
//   their shape of computation; streamed operands with different delays are
//   realigned by delaying the earlier ones (tract.delay);
// * a window op (conv, pools) over the streaming axis sees its padding
//   become a tract.pulse_pad and its kernel's reach an overlap of past
//   frames (tract.delay's overlap), then runs unpadded on each pulse;
// * a pad becomes a pulse_pad, a slice a change of delay;
// * a scan over the stream carries its states from one pulse to the next
//   and skips the iterations before its input's delay (`pulse.skip`).
//
// What cannot stream (a reduction over the streaming axis, a scan running
// backwards) is an error naming the op and the reason. The output delays
// and axes are recorded in the module's `tract.properties`.
//
//===----------------------------------------------------------------------===//

#include "dialects/tract/EinsumExpr.h"
#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"
#include "passes/DeclutterPatterns.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <numeric>

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTPULSIFY
#include "passes/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;
using namespace mlir::tract;

namespace {

/// How a pulsed value maps to its batch value.
struct Stream {
  int64_t axis = 0;
  /// Frame t of the stream is frame t - delay of the batch value.
  int64_t delay = 0;
  /// The batch value's length on the axis.
  TDim dim;
  /// Input frames per frame of this value, scaleNum / scaleDen: the
  /// product of the strides over that of the upsamplings.
  int64_t scaleNum = 1, scaleDen = 1;

  /// This stream after a stride (`factor` > 1) or an upsampling
  /// (`factor` < -1).
  void rescale(int64_t factor) {
    if (factor > 0)
      scaleNum *= factor;
    else
      scaleDen *= -factor;
    int64_t common = std::gcd(scaleNum, scaleDen);
    scaleNum /= common;
    scaleDen /= common;
  }
  /// The smallest input pulse that gives this stream a multiple of
  /// `stride` frames.
  int64_t requiredMultiple(int64_t stride) const {
    int64_t frames = scaleNum * stride;
    return frames / std::gcd(frames, scaleDen);
  }
};

bool mentionsSymbol(const TDim &dim, StringRef symbol) {
  std::set<std::string> names;
  dim.collectSymbols(names);
  return names.count(symbol.str());
}

bool mentionsSymbol(Type type, StringRef symbol) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isTractTensorType(tensor) &&
         llvm::any_of(getShape(tensor), [&](const TDim &dim) {
           return mentionsSymbol(dim, symbol);
         });
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

class Pulsifier {
public:
  Pulsifier(ModuleOp module, func::FuncOp func, std::string symbol,
            int64_t pulse)
      : module(module), func(func), symbol(std::move(symbol)), pulse(pulse) {}

  LogicalResult run();

private:
  LogicalResult pulsifyOp(Operation *op);
  LogicalResult pulsifyElementwise(Operation *op);
  LogicalResult pulsifyEinsum(EinsumOp op);
  LogicalResult pulsifyWindow(Operation *op);
  LogicalResult pulsifyPad(PadOp op);
  LogicalResult pulsifySlice(SliceOp op);
  LogicalResult pulsifyConcat(ConcatOp op);
  LogicalResult pulsifyScan(ScanOp op);
  LogicalResult pulsifyAxisOp(Operation *op);
  LogicalResult pulsifyDownsample(DownsampleOp op);
  LogicalResult pulsifyDeconv(DeconvOp op);
  LogicalResult pulsifyBroadcastOfConstant(BroadcastOp op);
  LogicalResult pulsifySliceOfConstant(SliceOp op);

  /// Fails, naming the input pulse multiple needed, unless `stride`
  /// divides the pulse of `input`.
  LogicalResult checkStride(Operation *op, Value input, int64_t stride) {
    if (pulseOf(input) % stride == 0)
      return success();
    return error(op) << "the pulse " << pulse << " is not a multiple of "
                     << streams.lookup(input).requiredMultiple(stride)
                     << ", which the stride " << stride
                     << " of this op requires";
  }

  /// The number of frames of a streamed value per pulse.
  int64_t pulseOf(Value value) const {
    const Stream &stream = streams.lookup(value);
    return *getShape(value)[stream.axis].getConstant();
  }
  bool isStreamed(Value value) const { return streams.count(value); }

  /// `input` (of stream `stream`) padded by `before` and `after` frames of
  /// `value`, before `op`, delayed first when its delay cannot hold the
  /// padding before it; `stream` becomes the padded stream's.
  Value padStream(Operation *op, Value input, Stream &stream, int64_t before,
                  int64_t after, TypedAttr value);
  /// `value` delayed by `frames` more, before `op`.
  Value delayBy(Operation *op, Value value, int64_t frames);
  /// Delays the streamed operands of `op` among `operands` so that they all
  /// have the largest delay, which is returned.
  int64_t alignDelays(Operation *op, ArrayRef<unsigned> operands);
  /// Realigns every streamed operand of `op`, re-infers it and gives its
  /// result `stream` on `axis`, with the operands' delay and the batch
  /// length of that axis.
  LogicalResult alignAndReinfer(Operation *op, Stream stream, int64_t axis);
  /// Re-infers `op` and gives its result `stream`, with the batch length
  /// `original` has on the stream's axis.
  LogicalResult reinferWith(Operation *op, Stream stream,
                            const Shape &original) {
    if (failed(reinfer(op)))
      return failure();
    stream.dim = original[stream.axis];
    setStream(op->getResult(0), stream);
    return success();
  }
  /// Re-infers `op`'s result types from its (pulsed) operands.
  LogicalResult reinfer(Operation *op);
  /// Records the stream of result `index` of `op`: `stream` with the
  /// original batch length `batchDim`.
  void setStream(Value result, Stream stream) {
    streams[result] = std::move(stream);
  }
  /// An error at `op`, naming its model node when the frontend recorded
  /// one.
  InFlightDiagnostic error(Operation *op) {
    InFlightDiagnostic diagnostic = op->emitOpError();
    if (auto name = dyn_cast<NameLoc>(op->getLoc()))
      diagnostic << "(node '" << name.getName().getValue() << "') ";
    return std::move(diagnostic << "cannot be pulsified: ");
  }

  ModuleOp module;
  func::FuncOp func;
  std::string symbol;
  int64_t pulse;
  llvm::DenseMap<Value, Stream> streams;
};

Value Pulsifier::delayBy(Operation *op, Value value, int64_t frames) {
  Stream stream = streams.lookup(value);
  OpBuilder builder(op);
  Value delayed =
      DelayOp::create(builder, op->getLoc(), value, stream.axis, frames, 0);
  stream.delay += frames;
  setStream(delayed, stream);
  return delayed;
}

int64_t Pulsifier::alignDelays(Operation *op, ArrayRef<unsigned> operands) {
  int64_t delay = 0;
  for (unsigned index : operands)
    if (isStreamed(op->getOperand(index)))
      delay = std::max(delay, streams.lookup(op->getOperand(index)).delay);
  for (unsigned index : operands) {
    Value operand = op->getOperand(index);
    if (!isStreamed(operand))
      continue;
    int64_t missing = delay - streams.lookup(operand).delay;
    if (missing > 0)
      op->setOperand(index, delayBy(op, operand, missing));
  }
  return delay;
}

LogicalResult Pulsifier::reinfer(Operation *op) {
  if (failed(inferOpResultTypes(op)))
    return failure();
  for (Value result : op->getResults())
    if (mentionsSymbol(result.getType(), symbol))
      return error(op) << "its result " << result.getType()
                       << " still depends on the stream length " << symbol;
  return success();
}

LogicalResult Pulsifier::alignAndReinfer(Operation *op, Stream stream,
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

LogicalResult Pulsifier::pulsifyElementwise(Operation *op) {
  std::optional<Stream> first;
  for (Value operand : op->getOperands()) {
    if (!isStreamed(operand))
      continue;
    const Stream &stream = streams.lookup(operand);
    if (first && first->axis != stream.axis)
      return error(op) << "its operands stream over different axes ("
                       << first->axis << " and " << stream.axis << ")";
    if (!first)
      first = stream;
  }
  size_t rank = getShape(op->getResult(0)).size();
  for (Value operand : op->getOperands())
    if (!isStreamed(operand)) {
      Shape shape = getShape(operand);
      if (shape.size() == rank && shape[first->axis] != TDim(1))
        return error(op) << "an operand that is not streamed has "
                         << shape[first->axis].toString()
                         << " frames on the streaming axis " << first->axis;
    }
  return alignAndReinfer(op, *first, first->axis);
}

LogicalResult Pulsifier::pulsifyEinsum(EinsumOp op) {
  EinsumExpr expr = EinsumExpr::parse(op.getExpr());
  std::optional<char> letter;
  std::optional<Stream> first;
  for (auto [operand, axes] : llvm::zip(op.getInputs(), expr.inputs)) {
    if (!isStreamed(operand))
      continue;
    const Stream &stream = streams.lookup(operand);
    char streamed = axes[stream.axis];
    if (letter && *letter != streamed)
      return error(op) << "its operands stream over different axes ('"
                       << *letter << "' and '" << streamed << "')";
    letter = streamed;
    if (!first)
      first = stream;
  }
  size_t outputAxis = expr.output.find(*letter);
  if (outputAxis == std::string::npos)
    return error(op) << "it sums over the streaming axis '" << *letter << "'";
  for (auto [operand, axes] : llvm::zip(op.getInputs(), expr.inputs)) {
    size_t axis = axes.find(*letter);
    if (!isStreamed(operand) && axis != std::string::npos &&
        getShape(operand)[axis] != TDim(1))
      return error(op) << "an operand that is not streamed has "
                       << getShape(operand)[axis].toString()
                       << " frames on the streaming axis '" << *letter << "'";
  }
  return alignAndReinfer(op, *first, outputAxis);
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

LogicalResult Pulsifier::pulsifyWindow(Operation *op) {
  Value input = op->getOperand(0);
  for (Value operand : op->getOperands().drop_front())
    if (isStreamed(operand))
      return error(op) << "its kernel or bias is streamed";
  Stream stream = streams.lookup(input);
  Shape inputShape = getShape(input);
  Shape original = getShape(op->getResult(0));
  size_t rank = inputShape.size();
  if (stream.axis == 0) {
    // Batch items are independent: each frame of the stream is one.
    if (failed(reinfer(op)))
      return failure();
    stream.dim = original[0];
    setStream(op->getResult(0), stream);
    return success();
  }
  if (stream.axis == 1)
    return error(op) << "it mixes the channels, its streaming axis";

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
      return error(op) << "ceil mode over the streaming axis is not supported";
    if (pool.getWithIndex())
      return error(op) << "its indices are positions in the whole stream";
  } else {
    auto sum = cast<SumPoolOp>(op);
    attrs = getWindowAttrs(sum);
    kernel = sum.getKernelShape()[spatial];
    if (sum.getCeilMode())
      return error(op) << "ceil mode over the streaming axis is not supported";
  }
  auto at = [&](ArrayRef<int64_t> values, int64_t otherwise) {
    return values.empty() ? otherwise : values[spatial];
  };
  int64_t stride = at(attrs.strides, 1), dilation = at(attrs.dilations, 1);
  int64_t reach = (kernel - 1) * dilation;

  if (failed(checkStride(op, input, stride)))
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
        return error(op) << "'same' padding with a stride over the streaming "
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
    return error(op) << "an average that excludes padding over the streaming "
                        "axis is not supported";

  OpBuilder builder(op);
  Location loc = op->getLoc();
  Value current = input;
  if (before || after) {
    current =
        padStream(op, current, stream, before, after,
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
  if (failed(reinfer(op)))
    return failure();
  Stream result = stream;
  result.delay = (reach + stream.delay + skew) / stride;
  result.dim = original[stream.axis];
  result.rescale(stride);
  for (Value value : op->getResults())
    setStream(value, result);
  return success();
}

Value Pulsifier::padStream(Operation *op, Value input, Stream &stream,
                           int64_t before, int64_t after, TypedAttr value) {
  // Enough delay that the padding before the stream fits in it.
  if (stream.delay < before) {
    input = delayBy(op, input, before - stream.delay);
    stream = streams.lookup(input);
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

LogicalResult Pulsifier::pulsifyPad(PadOp op) {
  Stream stream = streams.lookup(op.getInput());
  int64_t before = op.getBefore()[stream.axis];
  int64_t after = op.getAfter()[stream.axis];
  Shape original = getShape(op.getOutput());
  if (before || after) {
    if (op.getMode() != PadMode::Constant)
      return error(op) << "only constant padding over the streaming axis is "
                          "supported";
    TypedAttr value = op.getValueAttr();
    if (!value)
      value = OpBuilder(op).getZeroAttr(
          getElementTypeOrSelf(op.getInput().getType()));
    op.getInputMutable().assign(
        padStream(op, op.getInput(), stream, before, after, value));
    SmallVector<int64_t> newBefore(op.getBefore()), newAfter(op.getAfter());
    newBefore[stream.axis] = 0;
    newAfter[stream.axis] = 0;
    op.setBefore(newBefore);
    op.setAfter(newAfter);
  }
  return reinferWith(op, stream, original);
}

LogicalResult Pulsifier::pulsifySlice(SliceOp op) {
  Stream stream = streams.lookup(op.getInput());
  Shape original = getShape(op.getOutput());
  if (static_cast<int64_t>(op.getAxis()) == stream.axis) {
    // A slice of the stream is the same frames, later in the batch value.
    std::optional<int64_t> start = op.getStart().getValue().getConstant();
    if (!start)
      return error(op) << "it starts at " << op.getStart().getValue().toString()
                       << " frames of the stream, which is not a constant";
    op.setStartAttr(DimAttr::get(op->getContext(), TDim(0)));
    op.setEndAttr(DimAttr::get(op->getContext(), TDim(pulseOf(op.getInput()))));
    stream.delay += *start;
  }
  return reinferWith(op, stream, original);
}

LogicalResult Pulsifier::pulsifyConcat(ConcatOp op) {
  std::optional<Stream> first;
  for (Value input : op.getInputs()) {
    if (!isStreamed(input))
      return error(op) << "it concatenates a stream with a value that is not "
                          "streamed";
    const Stream &stream = streams.lookup(input);
    if (first && first->axis != stream.axis)
      return error(op) << "its operands stream over different axes";
    first = first ? first : stream;
  }
  if (static_cast<int64_t>(op.getAxis()) == first->axis)
    return error(op) << "it concatenates along the streaming axis";
  return alignAndReinfer(op, *first, first->axis);
}

/// add_axis, rm_axis, move_axis, reshape, broadcast, tile, reduce,
/// softmax-like ops and gather: ops that work on other axes than the
/// streaming one, and move it.
LogicalResult Pulsifier::pulsifyAxisOp(Operation *op) {
  Value input = op->getOperand(0);
  Stream stream = streams.lookup(input);
  int64_t axis = stream.axis;
  for (Value operand : op->getOperands().drop_front())
    if (isStreamed(operand))
      return error(op) << "a secondary operand is streamed";
  auto touches = [&](ArrayRef<int64_t> axes) {
    return llvm::is_contained(axes, axis);
  };
  int64_t newAxis = axis;
  if (auto add = dyn_cast<AddAxisOp>(op)) {
    newAxis = axis + (static_cast<int64_t>(add.getAxis()) <= axis);
  } else if (auto rm = dyn_cast<RmAxisOp>(op)) {
    if (static_cast<int64_t>(rm.getAxis()) == axis)
      return error(op) << "it removes the streaming axis";
    newAxis = axis - (static_cast<int64_t>(rm.getAxis()) < axis);
  } else if (auto move = dyn_cast<MoveAxisOp>(op)) {
    int64_t from = move.getFrom(), to = move.getTo();
    SmallVector<int64_t> order(getShape(input).size());
    std::iota(order.begin(), order.end(), 0);
    order.erase(order.begin() + from);
    order.insert(order.begin() + to, from);
    newAxis = llvm::find(order, axis) - order.begin();
  } else if (auto reshape = dyn_cast<ReshapeOp>(op)) {
    int64_t at = reshape.getAt(), count = reshape.getCount();
    if (axis >= at && axis < at + count)
      return error(op) << "it reshapes the streaming axis";
    if (axis >= at + count)
      newAxis = axis - count + reshape.getTo().getDims().size();
  } else if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
    Shape shape(broadcast.getShape().getDims());
    shape[axis] = TDim(pulseOf(input));
    broadcast.setShapeAttr(ShapeAttr::get(op->getContext(), shape));
  } else if (auto tile = dyn_cast<TileOp>(op)) {
    if (tile.getMultipliers().getDims()[axis] != TDim(1))
      return error(op) << "it tiles the streaming axis";
  } else if (auto work = dyn_cast<WorkAxesOpInterface>(op)) {
    if (touches(work.getWorkAxes()))
      return error(op) << "it "
                       << (isa<ReduceOp>(op) ? "reduces" : "normalizes")
                       << " over the streaming axis";
  } else if (auto gather = dyn_cast<GatherOp>(op)) {
    if (static_cast<int64_t>(gather.getAxis()) <= axis)
      return error(op) << "it gathers on or before the streaming axis";
  }
  stream.axis = newAxis;
  return reinferWith(op, stream, getShape(op->getResult(0)));
}

LogicalResult Pulsifier::pulsifyDownsample(DownsampleOp op) {
  Stream stream = streams.lookup(op.getInput());
  Shape original = getShape(op.getOutput());
  if (static_cast<int64_t>(op.getAxis()) == stream.axis) {
    int64_t stride = op.getStride(), modulo = op.getModulo();
    if (failed(checkStride(op, op.getInput(), stride)))
      return failure();
    // Delay the stream until the kept frames are the first of each group
    // of `stride` in a pulse.
    int64_t skew = (stride - (stream.delay + modulo) % stride) % stride;
    if (skew) {
      op.getInputMutable().assign(delayBy(op, op.getInput(), skew));
      stream = streams.lookup(op.getInput());
    }
    op.setModulo(0);
    stream.delay = (stream.delay + modulo) / stride;
    stream.rescale(stride);
  }
  return reinferWith(op, stream, original);
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
LogicalResult Pulsifier::pulsifyDeconv(DeconvOp op) {
  Value input = op.getInput();
  if (isStreamed(op.getKernel()) || (op.getBias() && isStreamed(op.getBias())))
    return error(op) << "its kernel or bias is streamed";
  Stream stream = streams.lookup(input);
  Shape original = getShape(op.getOutput());
  if (stream.axis == 0) {
    if (failed(reinfer(op)))
      return failure();
    stream.dim = original[0];
    setStream(op.getOutput(), stream);
    return success();
  }
  if (stream.axis == 1)
    return error(op) << "it mixes the channels, its streaming axis";
  Attribute constant;
  DenseElementsAttr kernel;
  if (matchPattern(op.getKernel(), m_Constant(&constant)))
    kernel = dyn_cast<DenseElementsAttr>(constant);
  if (!kernel || !isa<FloatType>(kernel.getElementType()))
    return error(op) << "its kernel is not a constant of floats";
  if (op.getPadding() != Padding::Valid && op.getPadding() != Padding::Explicit)
    return error(op) << "'same' padding of a transposed convolution is not "
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
      return error(op) << "it has a stride over spatial axis " << axis + 2
                       << " besides the streaming one";
    int64_t reach =
        (kernelShape[axis + 2] - 1) * at(op.getDilations(), axis, 1);
    before[axis] = reach - (explicitPads ? op.getPadsBefore()[axis] : 0);
    after[axis] = reach - (explicitPads ? op.getPadsAfter()[axis] : 0) +
                  at(op.getAdjustments(), axis, 0);
    if (before[axis] < 0 || after[axis] < 0)
      return error(op) << "its padding exceeds its kernel's reach";
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
        ShapeAttr::get(op.getContext(), {TDim(pulseOf(input) * stride)}));
    Stream upsampled = stream;
    upsampled.delay = stream.delay * stride;
    upsampled.dim = (stream.dim - TDim(1)) * TDim(stride) + TDim(1);
    upsampled.rescale(-stride);
    setStream(current, upsampled);
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
  if (failed(pulsifyWindow(conv)))
    return failure();
  op.getOutput().replaceAllUsesWith(conv.getOutput());
  Operation *oldKernel = op.getKernel().getDefiningOp();
  op.erase();
  if (oldKernel->use_empty())
    oldKernel->erase();
  return success();
}

/// A broadcast of a value that is not streamed to a shape over the stream
/// length: the same frames all along, which streams with any delay.
LogicalResult Pulsifier::pulsifyBroadcastOfConstant(BroadcastOp op) {
  Shape shape(op.getShape().getDims());
  std::optional<int64_t> axis;
  for (auto [index, dim] : llvm::enumerate(shape)) {
    if (!mentionsSymbol(dim, symbol))
      continue;
    if (axis)
      return error(op) << "it broadcasts to the stream length on two axes";
    axis = index;
  }
  Shape original = getShape(op.getOutput());
  if (getShape(op.getInput())[*axis] != TDim(1))
    return error(op) << "it broadcasts frames that differ over the stream";
  shape[*axis] = TDim(pulse);
  op.setShapeAttr(ShapeAttr::get(op->getContext(), shape));
  if (failed(reinfer(op)))
    return failure();
  setStream(op.getOutput(),
            Stream{static_cast<int64_t>(*axis), 0, original[*axis]});
  return success();
}

/// A slice of a value that does not stream (a positional table) over
/// [start, start + S) follows the stream: each pulse takes the table's
/// frames at the stream's position.
LogicalResult Pulsifier::pulsifySliceOfConstant(SliceOp op) {
  int64_t axis = op.getAxis();
  const TDim &begin = op.getStart().getValue(), &end = op.getEnd().getValue();
  std::optional<int64_t> start = begin.getConstant();
  if (!start || end != begin + TDim::symbol(symbol))
    return error(op) << "it slices a value that does not stream over ["
                     << begin.toString() << ", " << end.toString()
                     << "), not over [start, start + " << symbol
                     << ") for a constant start";
  Shape original = getShape(op.getOutput());
  OpBuilder builder(op);
  auto window = StreamSliceOp::create(builder, op.getLoc(), op.getInput(),
                                      uint64_t(axis), *start, pulse);
  op.getOutput().replaceAllUsesWith(window.getOutput());
  op.erase();
  setStream(window.getOutput(), Stream{axis, 0, original[axis]});
  return success();
}

LogicalResult Pulsifier::pulsifyScan(ScanOp op) {
  int64_t numStates = op.getNumStates();
  ArrayRef<int64_t> scanAxes = op.getScanAxes(), chunks = op.getScanChunks();
  int64_t numScans = scanAxes.size();
  SmallVector<unsigned> scanned;
  std::optional<Stream> first;
  for (auto [index, input] : llvm::enumerate(op.getInputs())) {
    int64_t scanIndex = static_cast<int64_t>(index) - numStates;
    bool isScanned = scanIndex >= 0 && scanIndex < numScans;
    if (!isScanned) {
      if (isStreamed(input))
        return error(op) << "its " << (scanIndex < 0 ? "state " : "input ")
                         << index << " is streamed";
      continue;
    }
    if (!isStreamed(input))
      return error(op) << "it scans input " << index
                       << ", which is not streamed, with streamed ones";
    const Stream &stream = streams.lookup(input);
    if (scanAxes[scanIndex] != stream.axis)
      return error(op) << "it scans input " << index << " over axis "
                       << scanAxes[scanIndex] << ", not its streaming axis "
                       << stream.axis;
    if (chunks[scanIndex] < 0)
      return error(op) << "it runs backwards over the stream (a reverse or "
                          "bidirectional recurrence needs the whole stream)";
    if (pulseOf(input) % chunks[scanIndex] != 0)
      return error(op) << "its chunk of " << chunks[scanIndex]
                       << " frames does not divide the pulse";
    scanned.push_back(index);
    first = first ? first : stream;
  }
  for (Value state : op.getResults().take_front(numStates))
    if (!state.use_empty())
      return error(op) << "its final state depends on the whole stream";
  // The body sees a chunk of the stream per iteration, never all of it.
  WalkResult captures = op.getBody().walk([&](Operation *inner) {
    for (Value operand : inner->getOperands())
      if (isStreamed(operand))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (captures.wasInterrupted())
    return error(op) << "its body reads a whole stream from outside";
  SmallVector<Shape> originals;
  for (Value result : op.getResults())
    originals.push_back(getShape(result));
  int64_t delay = alignDelays(op, scanned);
  if (failed(reinfer(op)))
    return failure();
  // The states go on from one pulse to the next; the iterations over the
  // frames before the delay are garbage and must not touch them.
  op->setAttr("pulse.skip", OpBuilder(op).getI64IntegerAttr(delay));
  for (auto [index, axis] : llvm::enumerate(op.getOutputAxes())) {
    Stream stream = *first;
    stream.axis = axis;
    stream.delay = delay;
    stream.dim = originals[numStates + index][axis];
    setStream(op.getResult(numStates + index), stream);
  }
  return success();
}

LogicalResult Pulsifier::pulsifyOp(Operation *op) {
  bool streamed =
      llvm::any_of(op->getOperands(), [&](Value v) { return isStreamed(v); });
  if (!streamed) {
    if (auto broadcast = dyn_cast<BroadcastOp>(op);
        broadcast && mentionsSymbol(broadcast.getOutput().getType(), symbol))
      return pulsifyBroadcastOfConstant(broadcast);
    if (auto slice = dyn_cast<SliceOp>(op);
        slice && mentionsSymbol(slice.getOutput().getType(), symbol))
      return pulsifySliceOfConstant(slice);
    for (Value result : op->getResults())
      if (mentionsSymbol(result.getType(), symbol))
        return error(op) << "it computes a value of " << result.getType()
                         << " from the stream length, not from the stream";
    return success();
  }
  if (isElementwise(op))
    return pulsifyElementwise(op);
  std::optional<LogicalResult> result =
      llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
          .Case([&](EinsumOp einsum) { return pulsifyEinsum(einsum); })
          .Case<ConvOp, MaxPoolOp, SumPoolOp>(
              [&](Operation *window) { return pulsifyWindow(window); })
          .Case([&](PadOp pad) { return pulsifyPad(pad); })
          .Case([&](SliceOp slice) { return pulsifySlice(slice); })
          .Case([&](ConcatOp concat) { return pulsifyConcat(concat); })
          .Case([&](ScanOp scan) { return pulsifyScan(scan); })
          .Case([&](DownsampleOp down) { return pulsifyDownsample(down); })
          .Case([&](DeconvOp deconv) { return pulsifyDeconv(deconv); })
          .Default([](Operation *) { return std::nullopt; });
  if (result)
    return *result;
  if (isa<AddAxisOp, RmAxisOp, MoveAxisOp, ReshapeOp, BroadcastOp, TileOp,
          WorkAxesOpInterface, GatherOp>(op) &&
      isStreamed(op->getOperand(0)))
    return pulsifyAxisOp(op);
  return error(op) << "no pulsifier for " << op->getName()
                   << " on a streamed operand";
}

LogicalResult Pulsifier::run() {
  Block &entry = func.getBody().front();
  SmallVector<int64_t> inputAxes;
  for (BlockArgument argument : entry.getArguments()) {
    if (!mentionsSymbol(argument.getType(), symbol)) {
      inputAxes.push_back(-1);
      continue;
    }
    Shape shape = getShape(argument);
    std::optional<int64_t> axis;
    for (auto [index, dim] : llvm::enumerate(shape)) {
      if (!mentionsSymbol(dim, symbol))
        continue;
      if (axis || dim.getSymbolName() != symbol)
        return func.emitError("input ")
               << argument.getArgNumber() << " has the shape "
               << shapeToString(shape) << "; a streamed input must have "
               << symbol << " itself on exactly one axis";
      axis = index;
    }
    shape[*axis] = TDim(pulse);
    argument.setType(getTensorTypeLike(argument.getType(), shape));
    setStream(argument, Stream{*axis, 0, TDim::symbol(symbol)});
    inputAxes.push_back(*axis);
  }
  if (llvm::all_of(inputAxes, [](int64_t axis) { return axis < 0; }))
    return func.emitError("no input streams over ") << symbol;

  for (Operation &op : llvm::make_early_inc_range(entry.without_terminator()))
    if (failed(pulsifyOp(&op)))
      return failure();

  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  SmallVector<int64_t> outputAxes, delays;
  std::vector<TDim> lengths;
  for (Value output : ret.getOperands()) {
    if (!isStreamed(output)) {
      unsigned index = outputAxes.size();
      auto name = func.getResultAttrOfType<StringAttr>(index, "tract.name");
      return ret.emitError("output ")
             << (name ? "'" + name.str() + "'" : std::to_string(index))
             << " does not stream over " << symbol
             << ": it does not keep the frames of the streaming axis (a "
                "streaming model's outputs must)";
    }
    const Stream &stream = streams.lookup(output);
    outputAxes.push_back(stream.axis);
    delays.push_back(stream.delay);
    lengths.push_back(stream.dim);
  }
  func.setFunctionType(FunctionType::get(
      module.getContext(), entry.getArgumentTypes(), ret.getOperandTypes()));

  // Identity slices left by the slices of the stream.
  func.walk([](SliceOp slice) {
    if (slice.getInput().getType() == slice.getOutput().getType() &&
        slice.getStart().getValue() == TDim(0)) {
      slice.getOutput().replaceAllUsesWith(slice.getInput());
      slice.erase();
    }
  });

  PulseProperties properties;
  properties.symbol = symbol;
  properties.pulse = pulse;
  properties.inputAxes = inputAxes;
  properties.outputAxes = outputAxes;
  properties.delays = delays;
  properties.outputLengths = std::move(lengths);
  setPulseProperties(module, properties);
  return success();
}

struct PulsifyPass : mlir::tract::impl::TractPulsifyBase<PulsifyPass> {
  using TractPulsifyBase::TractPulsifyBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string name = symbol;
    if (name.empty()) {
      // The only symbol, or `S`, tract's streaming symbol.
      std::set<std::string> symbols = collectModuleSymbols(module);
      if (symbols.size() != 1 && symbols.count("S"))
        symbols = {"S"};
      if (symbols.size() != 1) {
        std::string names;
        for (const std::string &name : symbols)
          names += (names.empty() ? "" : ", ") + name;
        module.emitError("the model has ")
            << symbols.size() << " symbols (" << names
            << "); name the one to pulsify, e.g. --pulse "
            << (symbols.empty() ? "S" : *symbols.rbegin()) << "="
            << static_cast<int64_t>(pulse);
        return signalPassFailure();
      }
      name = *symbols.begin();
    }
    if (pulse <= 0) {
      module.emitError("the pulse must be a positive number of frames");
      return signalPassFailure();
    }
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal()) {
      module.emitError("the model has no main function to pulsify");
      return signalPassFailure();
    }
    if (failed(Pulsifier(module, main, name, pulse).run()))
      return signalPassFailure();
  }
};

} // namespace
