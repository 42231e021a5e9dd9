//===- DeclutterAffine.cpp - batch-norm folding, 1x1 conv as einsum -------===//
//
// The ONNX importer turns BatchNormalization into `x * a + b` with `a` and
// `b` per-channel constants of shape 1xCx1x1 (frontends/onnx/ops/NNOps.cpp);
// after a convolution both fold into its kernel and bias. The same per-
// channel scale folds into the constant weights of an einsum.
//
//===----------------------------------------------------------------------===//

#include "dialects/tract/TractFolding.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"
#include "passes/DeclutterPatterns.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::tract;

namespace {

/// The values of a float constant `c` that varies at most along `axis` of a
/// result of rank `rank` with `channels` elements on that axis, one per
/// channel; none if `c` is anything else.
std::optional<SmallVector<APFloat>> perChannel(Value c, int64_t rank,
                                               int64_t axis, int64_t channels) {
  DenseElementsAttr dense = getConstantValue(c);
  if (!dense || !isa<FloatType>(dense.getElementType()))
    return std::nullopt;
  ArrayRef<int64_t> shape = dense.getType().getShape();
  if (static_cast<int64_t>(shape.size()) != rank)
    return std::nullopt;
  for (auto [i, dim] : llvm::enumerate(shape))
    if (dim != 1 && !(static_cast<int64_t>(i) == axis && dim == channels))
      return std::nullopt;
  if (dense.isSplat())
    return SmallVector<APFloat>(channels, dense.getSplatValue<APFloat>());
  return SmallVector<APFloat>(dense.getValues<APFloat>());
}

/// `values` multiplied by `scale[i]` along `axis` of `shape`.
DenseElementsAttr scaleAlong(DenseElementsAttr values, int64_t axis,
                             ArrayRef<APFloat> scale) {
  ArrayRef<int64_t> shape = values.getType().getShape();
  int64_t inner = 1;
  for (int64_t dim : shape.drop_front(axis + 1))
    inner *= dim;
  int64_t size = shape[axis];
  SmallVector<APFloat> out;
  out.reserve(values.getNumElements());
  int64_t i = 0;
  for (APFloat value : values.getValues<APFloat>()) {
    value.multiply(scale[(i++ / inner) % size], APFloat::rmNearestTiesToEven);
    out.push_back(value);
  }
  return DenseElementsAttr::get(values.getType(), out);
}

/// The operand of a binary `op` that an `Op` defines, with the other one.
template <typename Op>
std::optional<std::pair<Op, Value>> producerAndOther(Operation *op) {
  for (unsigned i = 0; i < 2; ++i)
    if (auto producer = op->getOperand(i).getDefiningOp<Op>())
      return std::make_pair(producer, op->getOperand(1 - i));
  return std::nullopt;
}

/// A conv whose output channels a per-channel mul or add can fold into: a
/// constant kernel with a static number of output channels, a constant
/// bias or none, and no other user of its result.
std::optional<int64_t> foldableConvChannels(ConvOp conv) {
  if (conv.getChannelsLast() || !conv->hasOneUse() ||
      !getConstantValue(conv.getKernel()))
    return std::nullopt;
  if (conv.getBias() && !getConstantValue(conv.getBias()))
    return std::nullopt;
  if (!isa<FloatType>(getElementTypeOrSelf(conv.getType())))
    return std::nullopt;
  int64_t channels =
      cast<RankedTensorType>(conv.getKernel().getType()).getDimSize(0);
  if (ShapedType::isDynamic(channels))
    return std::nullopt;
  return channels;
}

/// The conv's bias as one value per output channel (zeros when absent).
SmallVector<APFloat> biasValues(ConvOp conv, int64_t channels) {
  const llvm::fltSemantics &semantics =
      cast<FloatType>(getElementTypeOrSelf(conv.getType())).getFloatSemantics();
  if (!conv.getBias())
    return SmallVector<APFloat>(channels, APFloat::getZero(semantics));
  DenseElementsAttr bias = getConstantValue(conv.getBias());
  if (bias.isSplat())
    return SmallVector<APFloat>(channels, bias.getSplatValue<APFloat>());
  return SmallVector<APFloat>(bias.getValues<APFloat>());
}

/// A copy of `conv` with another kernel and bias (null for none).
Value rebuildConv(PatternRewriter &rewriter, ConvOp conv, Value kernel,
                  Value bias) {
  SmallVector<Value> operands{conv.getInput(), kernel};
  if (bias)
    operands.push_back(bias);
  return ConvOp::create(rewriter, conv.getLoc(), TypeRange{conv.getType()},
                        operands, conv.getProperties(),
                        llvm::to_vector(conv->getDiscardableAttrs()));
}

Value createConstant(PatternRewriter &rewriter, Location loc,
                     DenseElementsAttr value) {
  return ConstOp::create(rewriter, loc, value.getType(),
                         cast<ElementsAttr>(value));
}

/// The rank-1 bias constant holding `bias`.
Value biasConstant(PatternRewriter &rewriter, ConvOp conv,
                   ArrayRef<APFloat> bias) {
  auto type = RankedTensorType::get({static_cast<int64_t>(bias.size())},
                                    getElementTypeOrSelf(conv.getType()));
  return createConstant(rewriter, conv.getLoc(),
                        DenseElementsAttr::get(type, bias));
}

/// conv(x, K, b) * s with s per output channel: conv(x, K * s, b * s);
/// conv(x, K, b) + c with c per output channel: conv(x, K, b + c).
template <typename OpTy>
struct FoldChannelAffineIntoConv : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  static constexpr bool scales = std::is_same_v<OpTy, MulOp>;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto match = producerAndOther<ConvOp>(op);
    if (!match)
      return rewriter.notifyMatchFailure(op, "no conv operand");
    auto [conv, other] = *match;
    std::optional<int64_t> channels = foldableConvChannels(conv);
    if (!channels || conv.getType() != op.getType())
      return rewriter.notifyMatchFailure(op, "conv cannot absorb it");
    std::optional<SmallVector<APFloat>> values =
        perChannel(other, op.getType().getRank(), 1, *channels);
    if (!values)
      return rewriter.notifyMatchFailure(op, "not a per-channel constant");
    SmallVector<APFloat> bias = biasValues(conv, *channels);
    for (auto [b, v] : llvm::zip(bias, *values))
      if (scales)
        b.multiply(v, APFloat::rmNearestTiesToEven);
      else
        b.add(v, APFloat::rmNearestTiesToEven);
    Value kernel = conv.getKernel();
    if (scales)
      kernel = createConstant(rewriter, kernel.getLoc(),
                              scaleAlong(getConstantValue(kernel), 0, *values));
    // A scale of no bias is no bias.
    Value newBias = scales && !conv.getBias()
                        ? Value()
                        : biasConstant(rewriter, conv, bias);
    rewriter.replaceOp(op, rebuildConv(rewriter, conv, kernel, newBias));
    return success();
  }
};

/// True when the only user of `conv` is a per-channel mul or add that the
/// patterns above fold: the conv waits for it before turning into an einsum.
bool feedsChannelAffine(ConvOp conv) {
  std::optional<int64_t> channels = foldableConvChannels(conv);
  if (!channels)
    return false;
  Operation *user = *conv->getUsers().begin();
  if (!isa<MulOp, AddOp>(user) ||
      user->getResult(0).getType() != conv.getType())
    return false;
  Value other = user->getOperand(0) == conv.getResult() ? user->getOperand(1)
                                                        : user->getOperand(0);
  return perChannel(other, conv.getType().getRank(), 1, *channels).has_value();
}

/// A 1x1 convolution without stride, padding or group is a contraction
/// over the channels: `nc…,oc->no…`, plus the bias.
struct PointwiseConvToEinsum : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvOp conv,
                                PatternRewriter &rewriter) const override {
    auto kernelType = cast<RankedTensorType>(conv.getKernel().getType());
    int64_t spatial = kernelType.getRank() - 2;
    if (conv.getChannelsLast())
      return rewriter.notifyMatchFailure(conv, "channels last");
    if (conv.getGroup() != 1)
      return rewriter.notifyMatchFailure(conv, "grouped convolution");
    if (spatial > 6)
      return rewriter.notifyMatchFailure(conv, "too many spatial axes");
    if (llvm::any_of(kernelType.getShape().drop_front(2),
                     [](int64_t d) { return d != 1; }))
      return rewriter.notifyMatchFailure(conv, "kernel is not 1x1");
    auto allOnes = [](ArrayRef<int64_t> values) {
      return llvm::all_of(values, [](int64_t v) { return v == 1; });
    };
    auto allZeros = [](ArrayRef<int64_t> values) {
      return llvm::all_of(values, [](int64_t v) { return v == 0; });
    };
    if (!allOnes(conv.getStrides()) || !allZeros(conv.getPadsBefore()) ||
        !allZeros(conv.getPadsAfter()))
      return rewriter.notifyMatchFailure(conv, "strided or padded");
    if (getShape(conv.getInput()).size() != getShape(conv.getType()).size() ||
        llvm::ArrayRef<TDim>(getShape(conv.getInput())).drop_front(2) !=
            llvm::ArrayRef<TDim>(getShape(conv.getType())).drop_front(2))
      return rewriter.notifyMatchFailure(conv, "spatial dims change");
    if (feedsChannelAffine(conv))
      return rewriter.notifyMatchFailure(conv, "a batch norm folds first");
    Location loc = conv.getLoc();
    Value kernel = conv.getKernel();
    for (int64_t i = 0; i < spatial; ++i)
      kernel = RmAxisOp::create(rewriter, loc, kernel, uint64_t(2));
    std::string letters = std::string("xyzuvw").substr(0, spatial);
    std::string expr = "nc" + letters + ",oc->no" + letters;
    Value result =
        EinsumOp::create(rewriter, loc, ValueRange{conv.getInput(), kernel},
                         rewriter.getStringAttr(expr));
    if (Value bias = conv.getBias()) {
      Shape shape(spatial + 2, TDim(1));
      shape[1] = getShape(conv.getType())[1];
      int64_t biasRank = getShape(bias).size();
      bias = ReshapeOp::create(rewriter, loc, bias, uint64_t(0),
                               static_cast<uint64_t>(biasRank),
                               ShapeAttr::get(rewriter.getContext(), shape));
      result = AddOp::create(rewriter, loc, result, bias);
    }
    rewriter.replaceOp(conv, result);
    return success();
  }
};

} // namespace

Value mlir::tract::sliceOrCut(OpBuilder &builder, Location loc, Value value,
                              int64_t axis, int64_t begin, int64_t end) {
  if (DenseElementsAttr dense = getConstantValue(value))
    if (DenseElementsAttr cut = sliceDense(dense, axis, begin, end))
      return ConstOp::create(builder, loc, cut.getType(),
                             cast<ElementsAttr>(cut));
  MLIRContext *context = builder.getContext();
  return builder.createOrFold<SliceOp>(
      loc, value, static_cast<uint64_t>(axis),
      DimAttr::get(context, TDim(begin)), DimAttr::get(context, TDim(end)));
}

/// The pads of a window op's spatial axis `axis` (ConvOp, MaxPoolOp).
template <typename OpTy>
static std::optional<std::pair<int64_t, int64_t>>
staticWindowPads(OpTy op, int64_t axis, int64_t size, int64_t outputs,
                 int64_t taps) {
  auto at = [](ArrayRef<int64_t> values, int64_t axis, int64_t otherwise) {
    return values.empty() ? otherwise : values[axis];
  };
  switch (op.getPadding()) {
  case Padding::Valid:
    return std::make_pair(int64_t(0), int64_t(0));
  case Padding::Explicit:
    return std::make_pair(at(op.getPadsBefore(), axis, 0),
                          at(op.getPadsAfter(), axis, 0));
  case Padding::SameUpper:
  case Padding::SameLower: {
    int64_t stride = at(op.getStrides(), axis, 1);
    int64_t field = (taps - 1) * at(op.getDilations(), axis, 1) + 1;
    int64_t total = std::max<int64_t>(0, (outputs - 1) * stride + field - size);
    int64_t low = op.getPadding() == Padding::SameUpper ? total / 2
                                                        : total - total / 2;
    return std::make_pair(low, total - low);
  }
  }
  llvm_unreachable("unknown padding");
}

std::optional<std::pair<int64_t, int64_t>>
mlir::tract::staticConvPads(ConvOp conv, int64_t axis, int64_t size,
                            int64_t outputs, int64_t taps) {
  return staticWindowPads(conv, axis, size, outputs, taps);
}

std::optional<std::pair<int64_t, int64_t>>
mlir::tract::staticPoolPads(MaxPoolOp pool, int64_t axis, int64_t size,
                            int64_t outputs, int64_t taps) {
  return staticWindowPads(pool, axis, size, outputs, taps);
}

namespace {

/// Kernel taps that can only ever read padding dropped: with the shapes
/// known, tap `i` of an axis reads input positions `o * s - pb + i * d` for
/// the outputs `o`; when none of them is inside the input, its products
/// are all with zeros. The taps that do read form one range (they shift
/// with `i`), and the convolution over that range of the kernel, with the
/// padding reduced by the taps dropped on each side, computes the same
/// output. A segmentation head's atrous 3x3 convolution of dilation 24 on
/// a 16x16 map is a 1x1 convolution (then an einsum) in disguise.
struct DropPaddingOnlyConvTaps : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvOp conv,
                                PatternRewriter &rewriter) const override {
    if (conv.getChannelsLast())
      return rewriter.notifyMatchFailure(conv, "channels last");
    if (conv.getPadding() == Padding::Valid)
      return rewriter.notifyMatchFailure(conv, "no padding to read");
    auto kernelType = cast<RankedTensorType>(conv.getKernel().getType());
    Shape input = getShape(conv.getInput());
    Shape output = getShape(conv.getType());
    int64_t spatial = kernelType.getRank() - 2;
    if (static_cast<int64_t>(input.size()) != spatial + 2 ||
        static_cast<int64_t>(output.size()) != spatial + 2)
      return rewriter.notifyMatchFailure(conv, "unexpected ranks");
    auto at = [](ArrayRef<int64_t> values, int64_t axis, int64_t otherwise) {
      return values.empty() ? otherwise : values[axis];
    };
    SmallVector<int64_t> first, last, before, after;
    bool dropped = false;
    for (int64_t axis = 0; axis < spatial; ++axis) {
      std::optional<int64_t> size = input[axis + 2].getConstant();
      std::optional<int64_t> outputs = output[axis + 2].getConstant();
      int64_t taps = kernelType.getDimSize(axis + 2);
      if (!size || !outputs || ShapedType::isDynamic(taps) || *outputs < 1)
        return rewriter.notifyMatchFailure(conv, "dynamic spatial shape");
      int64_t stride = at(conv.getStrides(), axis, 1);
      int64_t dilation = at(conv.getDilations(), axis, 1);
      std::pair<int64_t, int64_t> pads =
          *staticConvPads(conv, axis, *size, *outputs, taps);
      int64_t low = pads.first, high = pads.second;
      // Tap i reads [i * d - low, (outputs - 1) * s + i * d - low].
      auto reads = [&](int64_t tap) {
        int64_t begin = tap * dilation - low;
        int64_t end = (*outputs - 1) * stride + tap * dilation - low;
        return end >= 0 && begin < *size;
      };
      int64_t from = 0, to = taps - 1;
      while (from < taps && !reads(from))
        ++from;
      while (to > from && !reads(to))
        --to;
      if (from == taps)
        return rewriter.notifyMatchFailure(conv, "no tap reads the input");
      int64_t newLow = low - from * dilation;
      int64_t newHigh = high - (taps - 1 - to) * dilation;
      if (newLow < 0 || newHigh < 0)
        return rewriter.notifyMatchFailure(
            conv, "the taps left would need the input cropped");
      dropped |= from > 0 || to < taps - 1;
      first.push_back(from);
      last.push_back(to);
      before.push_back(newLow);
      after.push_back(newHigh);
    }
    if (!dropped)
      return rewriter.notifyMatchFailure(conv, "every tap reads the input");
    Location loc = conv.getLoc();
    Value kernel = conv.getKernel();
    for (int64_t axis = 0; axis < spatial; ++axis)
      if (first[axis] > 0 || last[axis] < kernelType.getDimSize(axis + 2) - 1)
        kernel = sliceOrCut(rewriter, loc, kernel, axis + 2, first[axis],
                            last[axis] + 1);
    Value replacement = rebuildConv(rewriter, conv, kernel, conv.getBias());
    auto rebuilt = cast<ConvOp>(replacement.getDefiningOp());
    rebuilt.setPadding(Padding::Explicit);
    rebuilt.setPadsBefore(before);
    rebuilt.setPadsAfter(after);
    rewriter.replaceOp(conv, replacement);
    return success();
  }
};

} // namespace

void mlir::tract::populateDeclutterAffinePatterns(RewritePatternSet &patterns) {
  patterns
      .add<FoldChannelAffineIntoConv<MulOp>, FoldChannelAffineIntoConv<AddOp>,
           DropPaddingOnlyConvTaps>(patterns.getContext());
}

void mlir::tract::populateDeclutterConvToEinsumPatterns(
    RewritePatternSet &patterns) {
  patterns.add<PointwiseConvToEinsum>(patterns.getContext());
}
