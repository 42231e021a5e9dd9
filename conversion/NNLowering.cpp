//===- NNLowering.cpp - tract contractions, windows and reductions --------===//
//
// Einsum becomes linalg.matmul / batch_matmul when it is exactly one, and a
// linalg.generic over one loop per axis letter otherwise. Convolutions pad
// their input with tensor.pad and use the linalg.conv_* / depthwise_conv_*
// named ops where one fits, a linalg.generic over the channel groups
// otherwise; transposed convolutions are convolutions of a spread input.
// Reductions are linalg.reduce (argmax/argmin a linalg.generic carrying the
// position) followed by an expand_shape that keeps the axes as size 1;
// softmax, log-softmax and rms_norm are reductions and element-wise
// generics reading the reduced tensors through maps that skip the axes.
// Pools pad like convolutions (with the lowest value for max pools) and are
// linalg.pooling_* where one fits, a linalg.generic over (n, c, y…, k…)
// otherwise; averages divide by a count computed per window when the
// padding makes it vary. Resize is a linalg.generic gathering, per output
// cell, the input cells its interpolation weighs (in f64, like the ONNX
// reference), with the edges repeated or excluded.
// The scalar semantics follow the folders: sums and products stay in the
// element type (integers wrap), float min/max propagate NaN, and integers
// compare by the signedness of their tract type.
//
//===----------------------------------------------------------------------===//

#include "conversion/LoweringUtils.h"

#include "dialects/tract/EinsumExpr.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <limits>
#include <map>
#include <set>

using namespace mlir;
using namespace mlir::tract;

namespace {

//===----------------------------------------------------------------------===//
// Building blocks
//===----------------------------------------------------------------------===//

/// What lowering one op builds with: the insertion point, from which the
/// symbols' values are found.
struct Builder {
  Builder(OpBuilder &b, Operation *op) : b(b), loc(op->getLoc()) {}

  /// The index value of `dim`.
  Value index(const TDim &dim) const { return materializeDim(b, loc, dim); }
  Value index(int64_t value) const {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  /// `dim` as an attribute when it is constant, a value otherwise.
  OpFoldResult size(const TDim &dim) const {
    if (std::optional<int64_t> value = dim.getConstant())
      return b.getIndexAttr(*value);
    return index(dim);
  }
  SmallVector<OpFoldResult> sizes(ArrayRef<TDim> dims) const {
    return llvm::map_to_vector(dims,
                               [&](const TDim &dim) { return size(dim); });
  }
  /// The plain tensor type of `shape`.
  RankedTensorType type(ArrayRef<TDim> shape, Type element) const {
    return cast<RankedTensorType>(
        convertTractType(getTensorType(b.getContext(), shape, element)));
  }
  Value empty(ArrayRef<TDim> shape, Type element) const {
    return emptyTensor(b, loc, getTensorType(b.getContext(), shape, element),
                       convertElementType(element));
  }
  Value fill(Value init, Value scalar) const {
    return linalg::FillOp::create(b, loc, ValueRange{scalar}, ValueRange{init})
        .getResult(0);
  }
  /// A tensor of `shape` filled with `scalar`.
  Value filled(ArrayRef<TDim> shape, Type element, Value scalar) const {
    return fill(empty(shape, element), scalar);
  }
  /// `value` reshaped to `shape` by splitting axes as `groups` says.
  Value expand(Value value, ArrayRef<TDim> shape,
               ArrayRef<ReassociationIndices> groups) const {
    Type element = cast<RankedTensorType>(value.getType()).getElementType();
    return tensor::ExpandShapeOp::create(b, loc, type(shape, element), value,
                                         groups, sizes(shape));
  }
  Value collapse(Value value, ArrayRef<ReassociationIndices> groups) const {
    return tensor::CollapseShapeOp::create(b, loc, value, groups);
  }

  OpBuilder &b;
  Location loc;
};

/// A scalar of the plain version of the tract element type `element`.
Value scalar(OpBuilder &b, Location loc, Type element, double value) {
  Type type = convertElementType(element);
  if (isFloat(type))
    return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
  return arith::ConstantOp::create(
      b, loc, type, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

Value add(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  if (isFloat(lhs.getType()))
    return arith::AddFOp::create(b, loc, lhs, rhs);
  return arith::AddIOp::create(b, loc, lhs, rhs);
}

Value mul(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  if (isFloat(lhs.getType()))
    return arith::MulFOp::create(b, loc, lhs, rhs);
  return arith::MulIOp::create(b, loc, lhs, rhs);
}

SmallVector<utils::IteratorType> iterators(size_t parallel, size_t reduction) {
  SmallVector<utils::IteratorType> result(parallel,
                                          utils::IteratorType::parallel);
  result.append(reduction, utils::IteratorType::reduction);
  return result;
}

/// buildGeneric in the NN patterns' Builder form.
Value mapGeneric(const Builder &builder, ValueRange inputs,
                 ArrayRef<AffineMap> inputMaps, Value init,
                 function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  return buildGeneric(builder.b, builder.loc, init, inputs, inputMaps, body);
}

//===----------------------------------------------------------------------===//
// Einsum
//===----------------------------------------------------------------------===//

/// Whether the two-operand einsum `specs -> output` is exactly a matrix
/// product (`mk,kn->mn`) or a batched one (`bmk,bkn->bmn`).
bool isPlainMatmul(ArrayRef<std::string> specs, StringRef output, bool batch) {
  if (specs.size() != 2)
    return false;
  StringRef a = specs[0], b = specs[1];
  size_t rank = batch ? 3 : 2;
  if (a.size() != rank || b.size() != rank || output.size() != rank)
    return false;
  if (batch) {
    if (a[0] != b[0] || a[0] != output[0])
      return false;
    a = a.drop_front();
    b = b.drop_front();
    output = output.drop_front();
  }
  std::string letters{a[0], a[1], b[1]};
  if (batch)
    letters.push_back(specs[0][0]);
  llvm::sort(letters);
  return a[1] == b[0] && output[0] == a[0] && output[1] == b[1] &&
         std::unique(letters.begin(), letters.end()) == letters.end();
}

/// The CPU kernels vectorize a product along the output's last axis, and
/// read the one operand that has that axis along it. When that operand
/// holds it elsewhere, with a summed axis last (the keys of attention's
/// `q . k^T`), each vector would be gathered lane by lane: a computed
/// operand is transposed first, its output axis last, in one pass that the
/// product's reuse of it repays. Constants are left to
/// tract-cpu-pack-weights, which lays them out at compile time; block
/// arguments and values from outside a loop body (a scan's weights), which
/// would be transposed at each iteration, are left alone.
void transposeStridedOperand(const Builder &builder, EinsumOp op,
                             SmallVectorImpl<std::string> &specs,
                             StringRef output, SmallVectorImpl<Value> &inputs,
                             SmallVectorImpl<Shape> &shapes) {
  if (specs.size() != 2 || output.empty())
    return;
  char lanes = output.back();
  for (size_t i = 0; i < 2; ++i) {
    std::string &spec = specs[i];
    StringRef other = specs[1 - i];
    if (!StringRef(spec).contains(lanes) || other.contains(lanes) ||
        spec.back() == lanes || output.contains(spec.back()))
      continue;
    // Only values computed here: an argument may be a weight that a loop
    // body receives, transposed at each iteration.
    Value source = op.getInputs()[i];
    while (auto cast = source.getDefiningOp<UnrealizedConversionCastOp>())
      source = cast.getInputs().front();
    Operation *producer = source.getDefiningOp();
    if (!producer || isa<ConstOp, arith::ConstantOp>(producer) ||
        producer->getParentRegion() != op->getParentRegion())
      continue;
    SmallVector<int64_t> permutation;
    std::string permuted;
    Shape shape;
    for (size_t axis = 0; axis <= spec.size(); ++axis) {
      size_t from = axis == spec.size() ? spec.find(lanes) : axis;
      if (axis < spec.size() && spec[axis] == lanes)
        continue;
      permutation.push_back(from);
      permuted.push_back(spec[from]);
      shape.push_back(shapes[i][from]);
    }
    Type element = getElementTypeOrSelf(op.getInputs()[i]);
    Value init = builder.empty(shape, element);
    if (!init)
      return;
    inputs[i] = linalg::TransposeOp::create(builder.b, builder.loc, inputs[i],
                                            init, permutation)
                    .getResult()[0];
    spec = permuted;
    shapes[i] = shape;
  }
}

struct EinsumLowering : public TractLoweringPattern<EinsumOp> {
  using TractLoweringPattern::TractLoweringPattern;

  LogicalResult lower(EinsumOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Type element = getElementTypeOrSelf(op.getType());
    if (!isFloat(element) &&
        (!isa<IntegerType>(element) || element.isInteger(1)))
      return op.emitError() << "cannot lower einsum of " << element
                            << ": it multiplies and adds numbers";
    StringRef expr = op.getExpr();
    EinsumExpr parsed = EinsumExpr::parse(expr);
    SmallVector<std::string> specs = parsed.inputs;
    // The size of each letter is the broadcast of its dims.
    std::map<char, TDim> sizes = op.getLetterSizes();
    const std::string &output = parsed.output;
    // One loop per letter: the result's, then the summed ones.
    std::string loops = parsed.loopLetters();

    Builder builder(rewriter, op);
    SmallVector<Value> inputs(adaptor.getInputs());
    SmallVector<Shape> shapes = llvm::map_to_vector(
        op.getInputs(), [](Value input) { return getShape(input); });
    transposeStridedOperand(builder, op, specs, output, inputs, shapes);

    MLIRContext *context = rewriter.getContext();
    SmallVector<AffineMap> maps;
    bool broadcasts = false;
    for (auto [spec, shape] : llvm::zip(specs, shapes)) {
      SmallVector<AffineExpr> exprs;
      for (auto [letter, dim] : llvm::zip(spec, shape)) {
        const TDim &size = sizes.at(letter);
        if (dim == size) {
          exprs.push_back(getAffineDimExpr(loops.find(letter), context));
        } else if (dim == TDim(1)) {
          exprs.push_back(getAffineConstantExpr(0, context));
          broadcasts = true;
        } else {
          return op.emitError()
                 << "cannot lower einsum '" << expr << "': axis '" << letter
                 << "' of dim " << dim.toString() << " broadcasts to "
                 << size.toString() << " only at run time";
        }
      }
      maps.push_back(AffineMap::get(loops.size(), 0, exprs, context));
    }
    SmallVector<AffineExpr> resultExprs;
    for (size_t i = 0; i < output.size(); ++i)
      resultExprs.push_back(getAffineDimExpr(i, context));
    maps.push_back(AffineMap::get(loops.size(), 0, resultExprs, context));

    Value init = builder.filled(getShape(op.getType()), element,
                                scalar(rewriter, op.getLoc(), element, 0));
    Value result;
    if (!broadcasts && isPlainMatmul(specs, output, /*batch=*/false))
      result = linalg::MatmulOp::create(rewriter, op.getLoc(), inputs, init)
                   .getResult(0);
    else if (!broadcasts && isPlainMatmul(specs, output, /*batch=*/true))
      result =
          linalg::BatchMatmulOp::create(rewriter, op.getLoc(), inputs, init)
              .getResult(0);
    else
      result = linalg::GenericOp::create(
                   rewriter, op.getLoc(), init.getType(), inputs, init, maps,
                   iterators(output.size(), loops.size() - output.size()),
                   [&](OpBuilder &b, Location loc, ValueRange args) {
                     Value product = args.front();
                     for (Value arg : args.drop_front().drop_back())
                       product = mul(b, loc, product, arg);
                     linalg::YieldOp::create(b, loc,
                                             add(b, loc, args.back(), product));
                   })
                   .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Windows: convolutions and pools
//===----------------------------------------------------------------------===//

/// The spatial attributes of a window op, defaults filled in.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, before, after;
  Padding padding;
  bool ceilMode = false;

  size_t rank() const { return kernel.size(); }
  /// The extent of the dilated kernel along spatial axis `i`.
  int64_t field(size_t i) const { return (kernel[i] - 1) * dilations[i] + 1; }
};

template <typename OpTy> Window windowOf(OpTy op, ArrayRef<int64_t> kernel) {
  size_t rank = kernel.size();
  auto orDefault = [&](ArrayRef<int64_t> values, int64_t fallback) {
    return values.empty() ? SmallVector<int64_t>(rank, fallback)
                          : SmallVector<int64_t>(values);
  };
  Window window;
  window.kernel.assign(kernel.begin(), kernel.end());
  window.strides = orDefault(op.getStrides(), 1);
  window.dilations = orDefault(op.getDilations(), 1);
  window.before = orDefault(op.getPadsBefore(), 0);
  window.after = orDefault(op.getPadsAfter(), 0);
  window.padding = op.getPadding();
  return window;
}

/// What the windows read before and after each spatial axis of the input to
/// produce an output of spatial dims `output`.
struct Pads {
  SmallVector<TDim> low, high;

  bool isZero() const {
    auto zero = [](const TDim &dim) { return dim == TDim(0); };
    return llvm::all_of(low, zero) && llvm::all_of(high, zero);
  }
};

Pads windowPads(const Window &window, ArrayRef<TDim> input,
                ArrayRef<TDim> output) {
  Pads pads;
  for (size_t i = 0; i < window.rank(); ++i) {
    TDim field(window.field(i)), stride(window.strides[i]);
    // The end of the last window, in input coordinates.
    TDim end = (output[i] - TDim(1)) * stride + field;
    switch (window.padding) {
    case Padding::Valid:
      pads.low.push_back(TDim(0));
      pads.high.push_back(TDim(0));
      break;
    case Padding::Explicit: {
      TDim before(window.before[i]), after(window.after[i]);
      pads.low.push_back(before);
      // In ceil mode the last window may also read past the explicit pads.
      pads.high.push_back(window.ceilMode
                              ? TDim::max({after, end - input[i] - before})
                              : after);
      break;
    }
    case Padding::SameUpper:
    case Padding::SameLower: {
      TDim total = TDim::max({TDim(0), end - input[i]});
      TDim small = total.floorDiv(2);
      TDim low = window.padding == Padding::SameUpper ? small : total - small;
      pads.low.push_back(low);
      pads.high.push_back(total - low);
      break;
    }
    }
  }
  return pads;
}

/// `input` (N, C, spatial…) padded with `value` on its spatial axes, which
/// start at `first` (1 for channels last: N, spatial…, C).
Value padSpatial(const Builder &builder, Value input, ArrayRef<TDim> shape,
                 const Pads &pads, Value value, Shape &padded,
                 size_t first = 2) {
  padded.assign(shape.begin(), shape.end());
  if (pads.isZero())
    return input;
  SmallVector<OpFoldResult> low(shape.size(), builder.b.getIndexAttr(0));
  SmallVector<OpFoldResult> high = low;
  for (size_t i = 0; i < pads.low.size(); ++i) {
    low[i + first] = builder.size(pads.low[i]);
    high[i + first] = builder.size(pads.high[i]);
    padded[i + first] = shape[i + first] + pads.low[i] + pads.high[i];
  }
  return tensor::PadOp::create(builder.b, builder.loc,
                               builder.type(padded, value.getType()), input,
                               low, high, value);
}

/// `value` of volume `size` as a 1-D tensor.
Value flatten(const Builder &builder, Value value, const TDim &size) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() == 1)
    return value;
  if (type.getRank() == 0)
    return builder.expand(value, {TDim(1)}, {});
  ReassociationIndices all =
      llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  return builder.collapse(value, {all});
}

/// The accumulator a convolution starts from: its bias broadcast over the
/// output (N, O, spatial…, or N, spatial…, O with the channels at
/// `channelAxis`), or zeros.
Value convInit(const Builder &builder, Value bias, ArrayRef<TDim> output,
               Type element, size_t channelAxis = 1) {
  Value empty = builder.empty(output, element);
  if (!bias)
    return builder.fill(empty, scalar(builder.b, builder.loc, element, 0));
  Value channels = flatten(builder, bias, output[channelAxis]);
  SmallVector<int64_t> added;
  for (size_t axis = 0; axis < output.size(); ++axis)
    if (axis != channelAxis)
      added.push_back(axis);
  return linalg::BroadcastOp::create(builder.b, builder.loc, channels, empty,
                                     added)
      ->getResult(0);
}

/// Reassociation splitting axis `axis` of a rank-`rank` tensor in two.
SmallVector<ReassociationIndices> splitAxis(size_t rank, size_t axis) {
  SmallVector<ReassociationIndices> groups;
  for (size_t i = 0, j = 0; i < rank; ++i) {
    if (i == axis) {
      groups.push_back({static_cast<int64_t>(j), static_cast<int64_t>(j + 1)});
      j += 2;
    } else {
      groups.push_back({static_cast<int64_t>(j++)});
    }
  }
  return groups;
}

/// Shape `shape` with axis `axis` split into (`outer`, dim / `outer`).
Shape splitShape(ArrayRef<TDim> shape, size_t axis, int64_t outer) {
  Shape result(shape.begin(), shape.begin() + axis);
  result.push_back(TDim(outer));
  result.push_back(shape[axis].floorDiv(outer));
  result.append(shape.begin() + axis + 1, shape.end());
  return result;
}

template <typename ConvTy>
Value namedConv(const Builder &builder, Value input, Value kernel, Value init,
                const Window &window) {
  return ConvTy::create(builder.b, builder.loc, TypeRange{init.getType()},
                        ValueRange{input, kernel}, ValueRange{init},
                        builder.b.getI64TensorAttr(window.strides),
                        builder.b.getI64TensorAttr(window.dilations))
      ->getResult(0);
}

/// A grouped convolution (or transposed convolution) as one linalg.generic
/// over (n, g, o, y…, c, k…). `input` is (N, G, C/G, spatial…), `kernel`
/// (G, ·, ·, k…) and `init` (N, G, O/G, y…); `inputIndex` and `kernelIndex`
/// give the spatial and channel indexing of each.
Value groupedConvolution(const Builder &builder, Value input, Value kernel,
                         Value init, size_t rank,
                         ArrayRef<AffineExpr> inputSpatial,
                         ArrayRef<AffineExpr> kernelExprs) {
  MLIRContext *context = builder.b.getContext();
  size_t loops = 4 + 2 * rank;
  auto d = [&](size_t i) { return getAffineDimExpr(i, context); };
  SmallVector<AffineExpr> inputExprs{d(0), d(1), d(3 + rank)};
  llvm::append_range(inputExprs, inputSpatial);
  SmallVector<AffineExpr> outputExprs{d(0), d(1), d(2)};
  for (size_t i = 0; i < rank; ++i)
    outputExprs.push_back(d(3 + i));
  SmallVector<AffineMap> maps{AffineMap::get(loops, 0, inputExprs, context),
                              AffineMap::get(loops, 0, kernelExprs, context),
                              AffineMap::get(loops, 0, outputExprs, context)};
  return linalg::GenericOp::create(
             builder.b, builder.loc, init.getType(), ValueRange{input, kernel},
             init, maps, iterators(3 + rank, 1 + rank),
             [&](OpBuilder &b, Location loc, ValueRange args) {
               linalg::YieldOp::create(
                   b, loc, add(b, loc, args[2], mul(b, loc, args[0], args[1])));
             })
      .getResult(0);
}

/// The constant spatial dims of a kernel (O or C, ·, k…).
SmallVector<int64_t> kernelSpatial(ArrayRef<TDim> kernel) {
  SmallVector<int64_t> sizes;
  for (const TDim &dim : kernel.drop_front(2))
    sizes.push_back(*dim.getConstant());
  return sizes;
}

struct ConvLowering : public TractLoweringPattern<ConvOp> {
  using TractLoweringPattern::TractLoweringPattern;

  LogicalResult lower(ConvOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Type element = getElementTypeOrSelf(op.getType());
    if (element.isInteger(1))
      return op.emitError() << "cannot lower a convolution of booleans";
    if (op.getBias() && getElementTypeOrSelf(op.getBias().getType()) != element)
      return op.emitError() << "cannot lower a convolution whose bias has "
                               "another element type than its input";
    Shape input = getShape(op.getInput()), kernel = getShape(op.getKernel());
    Shape output = getShape(op.getType());
    if (op.getChannelsLast())
      return lowerChannelsLast(op, adaptor, rewriter, input, kernel, output);
    size_t rank = input.size() - 2;
    Window window = windowOf(op, kernelSpatial(kernel));
    Builder builder(rewriter, op);
    Pads pads = windowPads(window, ArrayRef(input).drop_front(2),
                           ArrayRef(output).drop_front(2));
    Shape padded;
    Value zero = scalar(rewriter, op.getLoc(), element, 0);
    Value x =
        padSpatial(builder, adaptor.getInput(), input, pads, zero, padded);
    Value init = convInit(builder, adaptor.getBias(), output, element);
    Value w = adaptor.getKernel();
    int64_t group = op.getGroup();
    Value result;
    if (group == 1 && rank == 1) {
      result = namedConv<linalg::Conv1DNcwFcwOp>(builder, x, w, init, window);
    } else if (group == 1 && rank == 2) {
      result = namedConv<linalg::Conv2DNchwFchwOp>(builder, x, w, init, window);
    } else if (group == 1 && rank == 3) {
      result =
          namedConv<linalg::Conv3DNcdhwFcdhwOp>(builder, x, w, init, window);
    } else if (rank <= 3 && input[1] == TDim(group) &&
               kernel[0] == TDim(group)) {
      // Depthwise, one output channel per input channel: the kernel
      // (C, 1, k…) is (C, k…).
      SmallVector<ReassociationIndices> groups{{0, 1}};
      for (size_t i = 0; i < rank; ++i)
        groups.push_back({static_cast<int64_t>(i + 2)});
      w = builder.collapse(w, groups);
      if (rank == 1)
        result = namedConv<linalg::DepthwiseConv1DNcwCwOp>(builder, x, w, init,
                                                           window);
      else if (rank == 2)
        result = namedConv<linalg::DepthwiseConv2DNchwChwOp>(builder, x, w,
                                                             init, window);
      else
        result = namedConv<linalg::DepthwiseConv3DNcdhwCdhwOp>(builder, x, w,
                                                               init, window);
    } else {
      // (N, C, x…) as (N, G, C/G, x…), the kernel (O, C/G, k…) as
      // (G, O/G, C/G, k…) and the output (N, O, y…) as (N, G, O/G, y…).
      x = builder.expand(x, splitShape(padded, 1, group),
                         splitAxis(padded.size(), 1));
      w = builder.expand(w, splitShape(kernel, 0, group),
                         splitAxis(kernel.size(), 0));
      Value groupedInit = builder.expand(init, splitShape(output, 1, group),
                                         splitAxis(output.size(), 1));
      MLIRContext *context = rewriter.getContext();
      auto d = [&](size_t i) { return getAffineDimExpr(i, context); };
      SmallVector<AffineExpr> spatial;
      SmallVector<AffineExpr> kernelExprs{d(1), d(2), d(3 + rank)};
      for (size_t i = 0; i < rank; ++i) {
        spatial.push_back(d(3 + i) * window.strides[i] +
                          d(4 + rank + i) * window.dilations[i]);
        kernelExprs.push_back(d(4 + rank + i));
      }
      result = groupedConvolution(builder, x, w, groupedInit, rank, spatial,
                                  kernelExprs);
      result = builder.collapse(result, splitAxis(output.size(), 1));
    }
    rewriter.replaceOp(op, result);
    return success();
  }

  /// N, spatial…, C by a kernel k…, C/group, O: linalg's channels-last
  /// convolutions, dense or depthwise, and a linalg.generic for the
  /// grouped ones.
  LogicalResult lowerChannelsLast(ConvOp op, OpAdaptor adaptor,
                                  ConversionPatternRewriter &rewriter,
                                  ArrayRef<TDim> input, ArrayRef<TDim> kernel,
                                  ArrayRef<TDim> output) const {
    Type element = getElementTypeOrSelf(op.getType());
    size_t rank = input.size() - 2;
    SmallVector<int64_t> spatial;
    for (const TDim &dim : kernel.drop_back(2))
      spatial.push_back(*dim.getConstant());
    Window window = windowOf(op, spatial);
    Builder builder(rewriter, op);
    Pads pads = windowPads(window, input.slice(1, rank), output.slice(1, rank));
    Shape padded;
    Value zero = scalar(rewriter, op.getLoc(), element, 0);
    Value x = padSpatial(builder, adaptor.getInput(), input, pads, zero,
                         padded, /*first=*/1);
    Value init = convInit(builder, adaptor.getBias(), output, element,
                          /*channelAxis=*/rank + 1);
    Value w = adaptor.getKernel();
    int64_t group = op.getGroup();
    Value result;
    if (group == 1) {
      if (rank == 1)
        result = namedConv<linalg::Conv1DNwcWcfOp>(builder, x, w, init, window);
      else if (rank == 2)
        result =
            namedConv<linalg::Conv2DNhwcHwcfOp>(builder, x, w, init, window);
      else if (rank == 3)
        result =
            namedConv<linalg::Conv3DNdhwcDhwcfOp>(builder, x, w, init, window);
    } else if (input.back() == TDim(group) && kernel.back() == TDim(group)) {
      // Depthwise: the kernel (k…, 1, C) is (k…, C).
      SmallVector<ReassociationIndices> groups;
      for (size_t i = 0; i < rank; ++i)
        groups.push_back({static_cast<int64_t>(i)});
      groups.push_back(
          {static_cast<int64_t>(rank), static_cast<int64_t>(rank + 1)});
      w = builder.collapse(w, groups);
      if (rank == 1)
        result = namedConv<linalg::DepthwiseConv1DNwcWcOp>(builder, x, w, init,
                                                           window);
      else if (rank == 2)
        result = namedConv<linalg::DepthwiseConv2DNhwcHwcOp>(builder, x, w,
                                                             init, window);
      else if (rank == 3)
        result = namedConv<linalg::DepthwiseConv3DNdhwcDhwcOp>(builder, x, w,
                                                               init, window);
    }
    if (!result) {
      // Grouped: the input (N, x…, C) as (N, x…, G, C/G), the kernel
      // (k…, C/G, O) as (k…, C/G, G, O/G) and the output (N, y…, O) as
      // (N, y…, G, O/G), in one linalg.generic over (n, g, y…, o, k…, c)
      // whose output channels o are on the lanes, as a dense one's are.
      // The groups are the outer loop: a group's kernel stays in cache
      // over all the pixels (ResNeXt's last grouped convolutions, 1.2 MB
      // of weights on a 5×5 map, read them once per row of pixels).
      // The channels are the innermost reduction, as in linalg's dense
      // convolutions: a tap's channels of a group share a cache line, and
      // pixels 2 KB apart (256 channels, stride 2) would otherwise evict
      // each other's lines from one channel to the next.
      size_t channels = rank + 1;
      x = builder.expand(x, splitShape(padded, channels, group),
                         splitAxis(padded.size(), channels));
      w = builder.expand(w, splitShape(kernel, channels, group),
                         splitAxis(kernel.size(), channels));
      Value groupedInit =
          builder.expand(init, splitShape(output, channels, group),
                         splitAxis(output.size(), channels));
      MLIRContext *context = rewriter.getContext();
      auto d = [&](size_t i) { return getAffineDimExpr(i, context); };
      size_t g = 1, y = 2, o = rank + 2, k = rank + 3, c = 2 * rank + 3;
      size_t loops = 4 + 2 * rank;
      SmallVector<AffineExpr> inputExprs{d(0)}, kernelExprs, outputExprs{d(0)};
      for (size_t i = 0; i < rank; ++i) {
        inputExprs.push_back(d(y + i) * window.strides[i] +
                             d(k + i) * window.dilations[i]);
        kernelExprs.push_back(d(k + i));
        outputExprs.push_back(d(y + i));
      }
      inputExprs.append({d(g), d(c)});
      kernelExprs.append({d(c), d(g), d(o)});
      outputExprs.append({d(g), d(o)});
      SmallVector<AffineMap> maps{
          AffineMap::get(loops, 0, inputExprs, context),
          AffineMap::get(loops, 0, kernelExprs, context),
          AffineMap::get(loops, 0, outputExprs, context)};
      result = linalg::GenericOp::create(
                   rewriter, op.getLoc(), groupedInit.getType(),
                   ValueRange{x, w}, groupedInit, maps,
                   iterators(3 + rank, 1 + rank),
                   [&](OpBuilder &b, Location loc, ValueRange args) {
                     linalg::YieldOp::create(
                         b, loc,
                         add(b, loc, args[2], mul(b, loc, args[0], args[1])));
                   })
                   .getResult(0);
      result = builder.collapse(result, splitAxis(output.size(), channels));
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// `kernel` (·, ·, ·, k…) with its spatial axes reversed.
Value flipSpatial(const Builder &builder, Value kernel, ArrayRef<TDim> shape,
                  Type element) {
  MLIRContext *context = builder.b.getContext();
  SmallVector<AffineExpr> exprs;
  for (auto [axis, dim] : llvm::enumerate(shape)) {
    AffineExpr d = getAffineDimExpr(axis, context);
    exprs.push_back(axis < 3 ? d : *dim.getConstant() - 1 - d);
  }
  return mapGeneric(
      builder, kernel, AffineMap::get(shape.size(), 0, exprs, context),
      builder.empty(shape, element),
      [](OpBuilder &, Location, ValueRange args) -> Value { return args[0]; });
}

/// A transposed convolution is the convolution, by the spatially flipped
/// kernel with its channel axes swapped, of the input spread `stride` apart
/// in a zero tensor: output y reads the spread input at y + shift + j * d
/// and the flipped kernel at j.
struct DeconvLowering : public TractLoweringPattern<DeconvOp> {
  using TractLoweringPattern::TractLoweringPattern;

  LogicalResult lower(DeconvOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Type element = getElementTypeOrSelf(op.getType());
    if (element.isInteger(1))
      return op.emitError()
             << "cannot lower a transposed convolution of booleans";
    if (op.getBias() && getElementTypeOrSelf(op.getBias().getType()) != element)
      return op.emitError() << "cannot lower a transposed convolution whose "
                               "bias has another element type than its input";
    Shape input = getShape(op.getInput()), kernel = getShape(op.getKernel());
    Shape output = getShape(op.getType());
    size_t rank = input.size() - 2;
    Window window = windowOf(op, kernelSpatial(kernel));
    SmallVector<int64_t> adjustments(op.getAdjustments());
    if (adjustments.empty())
      adjustments.assign(rank, 0);
    int64_t group = op.getGroup();
    Builder builder(rewriter, op);
    MLIRContext *context = rewriter.getContext();
    auto d = [&](size_t i) { return getAffineDimExpr(i, context); };

    // Output y is the full transposed convolution at y + before (zero
    // outside of it). In the spread tensor, input x sits at
    // x * s + offset + shift, with shift >= 0 making room for the windows
    // that start before the first input.
    Shape spread{input[0], input[1]};
    SmallVector<OpFoldResult> offsets(2, rewriter.getIndexAttr(0));
    SmallVector<int64_t> steps{1, 1};
    SmallVector<AffineExpr> spatial;
    SmallVector<AffineExpr> kernelExprs{d(1), d(3 + rank), d(2)};
    for (size_t i = 0; i < rank; ++i) {
      int64_t field = window.field(i), stride = window.strides[i];
      int64_t before = 0;
      switch (window.padding) {
      case Padding::Valid:
        break;
      case Padding::Explicit:
        before = window.before[i];
        break;
      case Padding::SameUpper:
      case Padding::SameLower: {
        int64_t total = field + adjustments[i] - stride;
        if (total > 0)
          before = window.padding == Padding::SameUpper ? total / 2
                                                        : total - total / 2;
        break;
      }
      }
      int64_t offset = field - 1 - before;
      int64_t shift = std::max<int64_t>(0, -offset);
      const TDim &x = input[i + 2], &y = output[i + 2];
      spread.push_back(
          TDim::max({y + TDim(field - 1 + shift),
                     (x - TDim(1)) * TDim(stride) + TDim(offset + shift + 1)}));
      offsets.push_back(rewriter.getIndexAttr(offset + shift));
      steps.push_back(stride);
      spatial.push_back(d(3 + i) + shift +
                        d(4 + rank + i) * window.dilations[i]);
      kernelExprs.push_back(d(4 + rank + i));
    }
    Value zero = scalar(rewriter, op.getLoc(), element, 0);
    Value spreadInput = tensor::InsertSliceOp::create(
        rewriter, op.getLoc(), adaptor.getInput(),
        builder.filled(spread, element, zero), offsets, builder.sizes(input),
        llvm::map_to_vector(steps, [&](int64_t step) -> OpFoldResult {
          return rewriter.getIndexAttr(step);
        }));
    // (N, C, ·) as (N, G, C/G, ·), the kernel (C, O/G, k…) as
    // (G, C/G, O/G, k…) and the output (N, O, y…) as (N, G, O/G, y…).
    Value x = builder.expand(spreadInput, splitShape(spread, 1, group),
                             splitAxis(spread.size(), 1));
    Shape groupedKernel = splitShape(kernel, 0, group);
    Value w = builder.expand(adaptor.getKernel(), groupedKernel,
                             splitAxis(kernel.size(), 0));
    w = flipSpatial(builder, w, groupedKernel, element);
    Value init = convInit(builder, adaptor.getBias(), output, element);
    init = builder.expand(init, splitShape(output, 1, group),
                          splitAxis(output.size(), 1));
    Value result =
        groupedConvolution(builder, x, w, init, rank, spatial, kernelExprs);
    rewriter.replaceOp(op,
                       builder.collapse(result, splitAxis(output.size(), 1)));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Reductions and normalizations
//===----------------------------------------------------------------------===//

/// The shape without `axes`.
Shape dropAxes(ArrayRef<TDim> shape, ArrayRef<int64_t> axes) {
  Shape result;
  for (auto [axis, dim] : llvm::enumerate(shape))
    if (!llvm::is_contained(axes, static_cast<int64_t>(axis)))
      result.push_back(dim);
  return result;
}

/// The map from loops over `rank` axes to the axes that are not in `axes`.
AffineMap dropAxesMap(size_t rank, ArrayRef<int64_t> axes,
                      MLIRContext *context) {
  SmallVector<AffineExpr> exprs;
  for (size_t axis = 0; axis < rank; ++axis)
    if (!llvm::is_contained(axes, static_cast<int64_t>(axis)))
      exprs.push_back(getAffineDimExpr(axis, context));
  return AffineMap::get(rank, 0, exprs, context);
}

/// The reassociation that puts back `axes` as size-1 axes in a tensor of
/// rank `rank`: each joins the group of a kept axis next to it.
SmallVector<ReassociationIndices> keptAxesGroups(size_t rank,
                                                 ArrayRef<int64_t> axes) {
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices leading;
  for (int64_t axis = 0; axis < static_cast<int64_t>(rank); ++axis) {
    if (!llvm::is_contained(axes, axis))
      groups.push_back({axis});
    else if (groups.empty())
      leading.push_back(axis);
    else
      groups.back().push_back(axis);
  }
  if (!groups.empty())
    groups.front().insert(groups.front().begin(), leading.begin(),
                          leading.end());
  return groups;
}

/// Integers compare unsigned when their tract type is unsigned or boolean.
bool comparesUnsigned(Type element) {
  return isUnsignedInteger(element) || element.isInteger(1);
}

/// The extremes of a tract element type: where a max or a min starts.
Value lowest(OpBuilder &b, Location loc, Type element) {
  Type type = convertElementType(element);
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(
        b, loc, type,
        b.getFloatAttr(type, APFloat::getInf(floatType.getFloatSemantics(),
                                             /*Negative=*/true)));
  unsigned width = type.getIntOrFloatBitWidth();
  return arith::ConstantOp::create(
      b, loc, type,
      b.getIntegerAttr(type, comparesUnsigned(element)
                                 ? APInt::getMinValue(width)
                                 : APInt::getSignedMinValue(width)));
}

Value highest(OpBuilder &b, Location loc, Type element) {
  Type type = convertElementType(element);
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(
        b, loc, type,
        b.getFloatAttr(type, APFloat::getInf(floatType.getFloatSemantics())));
  unsigned width = type.getIntOrFloatBitWidth();
  return arith::ConstantOp::create(
      b, loc, type,
      b.getIntegerAttr(type, comparesUnsigned(element)
                                 ? APInt::getMaxValue(width)
                                 : APInt::getSignedMaxValue(width)));
}

/// NaN-propagating for floats, by the signedness of the tract type for
/// integers.
Value maxOf(OpBuilder &b, Location loc, Type element, Value lhs, Value rhs) {
  if (isFloat(element))
    return arith::MaximumFOp::create(b, loc, lhs, rhs);
  if (comparesUnsigned(element))
    return arith::MaxUIOp::create(b, loc, lhs, rhs);
  return arith::MaxSIOp::create(b, loc, lhs, rhs);
}

Value minOf(OpBuilder &b, Location loc, Type element, Value lhs, Value rhs) {
  if (isFloat(element))
    return arith::MinimumFOp::create(b, loc, lhs, rhs);
  if (comparesUnsigned(element))
    return arith::MinUIOp::create(b, loc, lhs, rhs);
  return arith::MinSIOp::create(b, loc, lhs, rhs);
}

/// lhs > rhs (or lhs < rhs with `less`); false when a float is NaN.
Value strictlyBeyond(OpBuilder &b, Location loc, Type element, Value lhs,
                     Value rhs, bool less) {
  if (isFloat(element))
    return arith::CmpFOp::create(
        b, loc, less ? arith::CmpFPredicate::OLT : arith::CmpFPredicate::OGT,
        lhs, rhs);
  bool isUnsigned = comparesUnsigned(element);
  arith::CmpIPredicate predicate =
      less
          ? (isUnsigned ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt)
          : (isUnsigned ? arith::CmpIPredicate::ugt
                        : arith::CmpIPredicate::sgt);
  return arith::CmpIOp::create(b, loc, predicate, lhs, rhs);
}

/// `count` as a scalar of the tract element type `element`.
Value countOf(const Builder &builder, const TDim &count, Type element) {
  if (std::optional<int64_t> value = count.getConstant())
    return scalar(builder.b, builder.loc, element, *value);
  OpBuilder &b = builder.b;
  Type type = convertElementType(element);
  Value wide = arith::IndexCastUIOp::create(b, builder.loc, b.getI64Type(),
                                            builder.index(count));
  if (isFloat(type))
    return arith::UIToFPOp::create(b, builder.loc, type, wide);
  if (type.getIntOrFloatBitWidth() < 64)
    return arith::TruncIOp::create(b, builder.loc, type, wide);
  return wide;
}

/// `input` reduced over `axes` by linalg.reduce with `combine(in, acc)`,
/// starting from `start`; the axes are dropped.
Value reduceAxes(
    const Builder &builder, Value input, ArrayRef<TDim> shape,
    ArrayRef<int64_t> axes, Type element, Value start,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  Value init = builder.filled(dropAxes(shape, axes), element, start);
  return linalg::ReduceOp::create(
             builder.b, builder.loc, ValueRange{input}, ValueRange{init}, axes,
             [&](OpBuilder &b, Location loc, ValueRange args) {
               linalg::YieldOp::create(b, loc,
                                       combine(b, loc, args[0], args[1]));
             })
      .getResult(0);
}

struct ReduceLowering : public TractLoweringPattern<ReduceOp> {
  using TractLoweringPattern::TractLoweringPattern;

  LogicalResult lower(ReduceOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Type element = getElementTypeOrSelf(op.getInput().getType());
    Shape shape = getShape(op.getInput());
    ArrayRef<int64_t> axes = op.getAxes();
    Reducer reducer = op.getReducer();
    Builder builder(rewriter, op);
    Location loc = op.getLoc();
    if (reducer == Reducer::ArgMax || reducer == Reducer::ArgMin) {
      rewriter.replaceOp(
          op, argExtremum(builder, adaptor.getInput(), shape, axes.front(),
                          element, reducer == Reducer::ArgMin, op.getLast()));
      return success();
    }
    if (axes.empty() && reducer != Reducer::MeanOfSquares) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    Value start;
    std::function<Value(OpBuilder &, Location, Value, Value)> combine;
    switch (reducer) {
    case Reducer::Sum:
    case Reducer::Any:
      start = scalar(rewriter, loc, element, 0);
      combine = [&](OpBuilder &b, Location l, Value in, Value acc) -> Value {
        if (reducer == Reducer::Any)
          return arith::OrIOp::create(b, l, acc, in);
        return add(b, l, acc, in);
      };
      break;
    case Reducer::Prod:
    case Reducer::All:
      start = scalar(rewriter, loc, element, 1);
      combine = [&](OpBuilder &b, Location l, Value in, Value acc) -> Value {
        if (reducer == Reducer::All)
          return arith::AndIOp::create(b, l, acc, in);
        return mul(b, l, acc, in);
      };
      break;
    case Reducer::Min:
      start = highest(rewriter, loc, element);
      combine = [&](OpBuilder &b, Location l, Value in, Value acc) {
        return minOf(b, l, element, acc, in);
      };
      break;
    case Reducer::Max:
      start = lowest(rewriter, loc, element);
      combine = [&](OpBuilder &b, Location l, Value in, Value acc) {
        return maxOf(b, l, element, acc, in);
      };
      break;
    case Reducer::MeanOfSquares:
      start = scalar(rewriter, loc, element, 0);
      combine = [&](OpBuilder &b, Location l, Value in, Value acc) {
        return add(b, l, acc, mul(b, l, in, in));
      };
      break;
    default:
      return op.emitError()
             << "cannot lower reducer " << stringifyReducer(reducer);
    }
    Value result = reduceAxes(builder, adaptor.getInput(), shape, axes, element,
                              start, combine);
    Shape reduced = dropAxes(shape, axes);
    if (reducer == Reducer::MeanOfSquares) {
      TDim count(1);
      for (int64_t axis : axes)
        count *= shape[axis];
      Value divisor = countOf(builder, count, element);
      result = mapGeneric(
          builder, result, rewriter.getMultiDimIdentityMap(reduced.size()),
          builder.empty(reduced, element),
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            return arith::DivFOp::create(b, l, args[0], divisor);
          });
    }
    rewriter.replaceOp(op, builder.expand(result, getShape(op.getType()),
                                          keptAxesGroups(shape.size(), axes)));
    return success();
  }

  /// The i64 position of the first (or `last`) maximum (or minimum with
  /// `less`) along `axis`, which is kept as size 1. As in the folder, the
  /// running extremum starts at the first element and moves to a later one
  /// that strictly beats it, or, for the last, that it does not strictly
  /// beat.
  Value argExtremum(const Builder &builder, Value input, ArrayRef<TDim> shape,
                    int64_t axis, Type element, bool less, bool last) const {
    OpBuilder &rewriter = builder.b;
    MLIRContext *context = rewriter.getContext();
    Shape reduced = dropAxes(shape, axis);
    SmallVector<OpFoldResult> offsets(shape.size(), rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes = builder.sizes(shape);
    sizes[axis] = rewriter.getIndexAttr(1);
    SmallVector<OpFoldResult> strides(shape.size(), rewriter.getIndexAttr(1));
    Value first = tensor::ExtractSliceOp::create(
        rewriter, builder.loc,
        builder.type(reduced, getElementTypeOrSelf(input.getType())), input,
        offsets, sizes, strides);
    Type i64 = rewriter.getI64Type();
    Value positions = builder.filled(
        reduced, i64,
        arith::ConstantOp::create(rewriter, builder.loc, i64,
                                  rewriter.getI64IntegerAttr(0)));
    AffineMap reducedMap = dropAxesMap(shape.size(), axis, context);
    SmallVector<AffineMap> maps{rewriter.getMultiDimIdentityMap(shape.size()),
                                reducedMap, reducedMap};
    SmallVector<utils::IteratorType> loops(shape.size(),
                                           utils::IteratorType::parallel);
    loops[axis] = utils::IteratorType::reduction;
    auto generic = linalg::GenericOp::create(
        rewriter, builder.loc, TypeRange{first.getType(), positions.getType()},
        input, ValueRange{first, positions}, maps, loops,
        [&](OpBuilder &b, Location loc, ValueRange args) {
          Value value = args[0], best = args[1], position = args[2];
          Value take =
              last ? arith::XOrIOp::create(
                         b, loc,
                         strictlyBeyond(b, loc, element, best, value, less),
                         arith::ConstantOp::create(b, loc, b.getBoolAttr(true)))
                         .getResult()
                   : strictlyBeyond(b, loc, element, value, best, less);
          Value here = arith::IndexCastOp::create(
              b, loc, b.getI64Type(), linalg::IndexOp::create(b, loc, axis));
          linalg::YieldOp::create(
              b, loc,
              ValueRange{
                  arith::SelectOp::create(b, loc, take, value, best),
                  arith::SelectOp::create(b, loc, take, here, position)});
        });
    Shape result(shape.begin(), shape.end());
    result[axis] = TDim(1);
    return builder.expand(generic.getResult(1), result,
                          keptAxesGroups(shape.size(), axis));
  }
};

/// Softmax and log-softmax subtract the maximum over the axes before
/// exponentiating, so that the largest term is exp(0).
template <typename OpTy>
struct SoftmaxLowering : public TractLoweringPattern<OpTy> {
  using TractLoweringPattern<OpTy>::TractLoweringPattern;
  static constexpr bool isLog = std::is_same_v<OpTy, LogSoftmaxOp>;

  LogicalResult lower(OpTy op, typename OpTy::Adaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Type element = getElementTypeOrSelf(op.getType());
    Shape shape = getShape(op.getType());
    ArrayRef<int64_t> axes = op.getAxes();
    Builder builder(rewriter, op);
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    Value x = adaptor.getInput();
    Value max = reduceAxes(builder, x, shape, axes, element,
                           lowest(rewriter, loc, element),
                           [&](OpBuilder &b, Location l, Value in, Value acc) {
                             return maxOf(b, l, element, acc, in);
                           });
    AffineMap identity = rewriter.getMultiDimIdentityMap(shape.size());
    AffineMap reducedMap = dropAxesMap(shape.size(), axes, context);
    Shape reduced = dropAxes(shape, axes);
    Value zero = scalar(rewriter, loc, element, 0);
    Value result;
    if (!isLog) {
      Value exp =
          mapGeneric(builder, ValueRange{x, max}, {identity, reducedMap},
                     builder.empty(shape, element),
                     [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                       return math::ExpOp::create(
                           b, l, arith::SubFOp::create(b, l, args[0], args[1]));
                     });
      Value sum = reduceAxes(builder, exp, shape, axes, element, zero,
                             [&](OpBuilder &b, Location l, Value in,
                                 Value acc) { return add(b, l, acc, in); });
      result =
          mapGeneric(builder, ValueRange{exp, sum}, {identity, reducedMap},
                     builder.empty(shape, element),
                     [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                       return arith::DivFOp::create(b, l, args[0], args[1]);
                     });
    } else {
      SmallVector<utils::IteratorType> loops(shape.size(),
                                             utils::IteratorType::parallel);
      for (int64_t axis : axes)
        loops[axis] = utils::IteratorType::reduction;
      Value sum =
          linalg::GenericOp::create(
              rewriter, loc, builder.type(reduced, element), ValueRange{x, max},
              builder.filled(reduced, element, zero),
              SmallVector<AffineMap>{identity, reducedMap, reducedMap}, loops,
              [&](OpBuilder &b, Location l, ValueRange args) {
                Value exp = math::ExpOp::create(
                    b, l, arith::SubFOp::create(b, l, args[0], args[1]));
                linalg::YieldOp::create(b, l, add(b, l, args[2], exp));
              })
              .getResult(0);
      result = mapGeneric(
          builder, ValueRange{x, max, sum}, {identity, reducedMap, reducedMap},
          builder.empty(shape, element),
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            Value shifted = arith::SubFOp::create(b, l, args[0], args[1]);
            return arith::SubFOp::create(b, l, shifted,
                                         math::LogOp::create(b, l, args[2]));
          });
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct RmsNormLowering : public TractLoweringPattern<RmsNormOp> {
  using TractLoweringPattern::TractLoweringPattern;

  LogicalResult lower(RmsNormOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Type element = getElementTypeOrSelf(op.getType());
    Shape shape = getShape(op.getType());
    int64_t axis = op.getAxis();
    Builder builder(rewriter, op);
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    Value squares = reduceAxes(
        builder, x, shape, axis, element, scalar(rewriter, loc, element, 0),
        [&](OpBuilder &b, Location l, Value in, Value acc) {
          return add(b, l, acc, mul(b, l, in, in));
        });
    Shape reduced = dropAxes(shape, axis);
    Value count = countOf(builder, shape[axis], element);
    Value eps = scalar(rewriter, loc, element, op.getEps().convertToDouble());
    Value rms = mapGeneric(
        builder, squares, rewriter.getMultiDimIdentityMap(reduced.size()),
        builder.empty(reduced, element),
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value mean = arith::DivFOp::create(b, l, args[0], count);
          return math::SqrtOp::create(b, l,
                                      arith::AddFOp::create(b, l, mean, eps));
        });
    rewriter.replaceOp(
        op, mapGeneric(builder, ValueRange{x, rms},
                       {rewriter.getMultiDimIdentityMap(shape.size()),
                        dropAxesMap(shape.size(), axis, rewriter.getContext())},
                       builder.empty(shape, element),
                       [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                         return arith::DivFOp::create(b, l, args[0], args[1]);
                       }));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Pools
//===----------------------------------------------------------------------===//

/// A pool as a linalg.generic over (n, c, y…, k…): `input`, padded, is read
/// at y * s + k * d, and an empty tensor of the kernel's shape gives the
/// ranges of k; `inits` are indexed by (n, c, y…), or by (n, y…, c) with
/// `channelsLast` (the input too).
linalg::GenericOp
poolGeneric(const Builder &builder, Value input, const Window &window,
            Type element, ValueRange inits,
            function_ref<void(OpBuilder &, Location, ValueRange)> body,
            bool channelsLast = false) {
  MLIRContext *context = builder.b.getContext();
  size_t rank = window.rank(), loops = 2 + 2 * rank;
  auto d = [&](size_t i) { return getAffineDimExpr(i, context); };
  SmallVector<AffineExpr> inputExprs{d(0), d(1)}, kernelExprs,
      outputExprs{d(0), d(1)};
  Shape kernel;
  for (size_t i = 0; i < rank; ++i) {
    inputExprs.push_back(d(2 + i) * window.strides[i] +
                         d(2 + rank + i) * window.dilations[i]);
    kernelExprs.push_back(d(2 + rank + i));
    outputExprs.push_back(d(2 + i));
    kernel.push_back(TDim(window.kernel[i]));
  }
  if (channelsLast) {
    inputExprs = channelsLastOf(ArrayRef(inputExprs));
    outputExprs = channelsLastOf(ArrayRef(outputExprs));
  }
  SmallVector<AffineMap> maps{AffineMap::get(loops, 0, inputExprs, context),
                              AffineMap::get(loops, 0, kernelExprs, context)};
  maps.append(inits.size(), AffineMap::get(loops, 0, outputExprs, context));
  return linalg::GenericOp::create(
      builder.b, builder.loc, inits.getTypes(),
      ValueRange{input, builder.empty(kernel, element)}, inits, maps,
      iterators(2 + rank, rank), body);
}

template <typename PoolTy>
Value namedPool(const Builder &builder, Value input, Value init,
                const Window &window, Type element) {
  Shape kernel;
  for (int64_t size : window.kernel)
    kernel.push_back(TDim(size));
  return PoolTy::create(builder.b, builder.loc, TypeRange{init.getType()},
                        ValueRange{input, builder.empty(kernel, element)},
                        ValueRange{init},
                        builder.b.getI64TensorAttr(window.strides),
                        builder.b.getI64TensorAttr(window.dilations))
      ->getResult(0);
}

/// The window attributes of a pool, with the spatial dims of its input and
/// output and what its windows read past the input.
template <typename OpTy> struct PoolGeometry {
  explicit PoolGeometry(OpTy op)
      : input(getShape(op.getInput())),
        output(getShape(op->getResult(0).getType())),
        window(windowOf(op, op.getKernelShape())),
        channelsLast(op.getChannelsLast()) {
    window.ceilMode = op.getCeilMode();
    pads = windowPads(window, ArrayRef(input).slice(first(), window.rank()),
                      ArrayRef(output).slice(first(), window.rank()));
  }

  /// The first spatial axis: 2 (N, C, spatial…) or 1 with the channels
  /// last (N, spatial…, C).
  size_t first() const { return channelsLast ? 1 : 2; }

  Shape input, output;
  Window window;
  bool channelsLast;
  Pads pads;
};

struct MaxPoolLowering : public TractLoweringPattern<MaxPoolOp> {
  using TractLoweringPattern::TractLoweringPattern;

  LogicalResult lower(MaxPoolOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Type element = getElementTypeOrSelf(op.getInput().getType());
    PoolGeometry<MaxPoolOp> geometry(op);
    const Window &window = geometry.window;
    size_t rank = window.rank();
    Builder builder(rewriter, op);
    Location loc = op.getLoc();
    // Padding never wins a maximum.
    Value low = lowest(rewriter, loc, element);
    Shape padded;
    Value x = padSpatial(builder, adaptor.getInput(), geometry.input,
                         geometry.pads, low, padded, geometry.first());
    Value init = builder.filled(geometry.output, element, low);
    // The named pools compare integers signed.
    bool named = !comparesUnsigned(element);
    if (geometry.channelsLast) {
      if (rank > 2 || op.getWithIndex())
        return op.emitError() << "cannot lower a channels-last max pool of "
                              << rank << " spatial axes"
                              << (op.getWithIndex() ? " with indices" : "")
                              << " (tract-channels-last makes none)";
      if (!named) {
        Value result =
            poolGeneric(
                builder, x, window, element, init,
                [&](OpBuilder &b, Location l, ValueRange args) {
                  linalg::YieldOp::create(
                      b, l, maxOf(b, l, element, args[2], args[0]));
                },
                /*channelsLast=*/true)
                .getResult(0);
        rewriter.replaceOp(op, {result});
        return success();
      }
      Value result =
          rank == 1 ? namedPool<linalg::PoolingNwcMaxOp>(builder, x, init,
                                                         window, element)
                    : namedPool<linalg::PoolingNhwcMaxOp>(builder, x, init,
                                                          window, element);
      rewriter.replaceOp(op, {result});
      return success();
    }
    if (!op.getWithIndex()) {
      Value result;
      if (named && rank == 1)
        result = namedPool<linalg::PoolingNcwMaxOp>(builder, x, init, window,
                                                    element);
      else if (named && rank == 2)
        result = namedPool<linalg::PoolingNchwMaxOp>(builder, x, init, window,
                                                     element);
      else
        result =
            poolGeneric(builder, x, window, element, init,
                        [&](OpBuilder &b, Location l, ValueRange args) {
                          linalg::YieldOp::create(
                              b, l, maxOf(b, l, element, args[2], args[0]));
                        })
                .getResult(0);
      rewriter.replaceOp(op, {result});
      return success();
    }
    rewriter.replaceOp(op, withIndex(builder, x, init, geometry, element));
    return success();
  }

  /// The maximum and the flat index, in the unpadded input, of its first
  /// occurrence (NaN counting as the maximum). Windows see cells of the
  /// padding as absent.
  SmallVector<Value> withIndex(const Builder &builder, Value x, Value init,
                               const PoolGeometry<MaxPoolOp> &geometry,
                               Type element) const {
    OpBuilder &rewriter = builder.b;
    const Window &window = geometry.window;
    size_t rank = window.rank();
    Type i64 = rewriter.getI64Type();
    Value none = builder.filled(
        geometry.output, i64,
        arith::ConstantOp::create(rewriter, builder.loc, i64,
                                  rewriter.getI64IntegerAttr(-1)));
    // The input dims and the padding before each spatial axis.
    SmallVector<Value> dims, before;
    for (const TDim &dim : geometry.input)
      dims.push_back(builder.index(dim));
    for (const TDim &pad : geometry.pads.low)
      before.push_back(builder.index(pad));
    bool padded = !geometry.pads.isZero();
    auto generic = poolGeneric(
        builder, x, window, element, ValueRange{init, none},
        [&](OpBuilder &b, Location loc, ValueRange args) {
          Value value = args[0], best = args[2], bestIndex = args[3];
          auto index = [&](int64_t value) {
            return arith::ConstantIndexOp::create(b, loc, value);
          };
          Value flat = arith::AddIOp::create(
              b, loc,
              arith::MulIOp::create(b, loc, linalg::IndexOp::create(b, loc, 0),
                                    dims[1]),
              linalg::IndexOp::create(b, loc, 1));
          Value inside = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
          for (size_t i = 0; i < rank; ++i) {
            Value y = linalg::IndexOp::create(b, loc, 2 + i);
            Value k = linalg::IndexOp::create(b, loc, 2 + rank + i);
            Value position = arith::SubIOp::create(
                b, loc,
                arith::AddIOp::create(
                    b, loc,
                    arith::MulIOp::create(b, loc, y, index(window.strides[i])),
                    arith::MulIOp::create(b, loc, k,
                                          index(window.dilations[i]))),
                before[i]);
            if (padded) {
              Value aboveStart = arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::sge, position, index(0));
              Value belowEnd = arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::slt, position, dims[2 + i]);
              inside = arith::AndIOp::create(
                  b, loc, inside,
                  arith::AndIOp::create(b, loc, aboveStart, belowEnd));
            }
            flat = arith::AddIOp::create(
                b, loc, arith::MulIOp::create(b, loc, flat, dims[2 + i]),
                position);
          }
          Value first = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::eq, bestIndex,
              arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(-1)));
          Value better = strictlyBeyond(b, loc, element, value, best, false);
          if (isFloat(element)) {
            // A NaN beats any number, and the first NaN stays.
            Value isNan = arith::CmpFOp::create(
                b, loc, arith::CmpFPredicate::UNO, value, value);
            Value bestIsNumber = arith::CmpFOp::create(
                b, loc, arith::CmpFPredicate::ORD, best, best);
            better = arith::OrIOp::create(
                b, loc, better,
                arith::AndIOp::create(b, loc, isNan, bestIsNumber));
          }
          Value take = arith::AndIOp::create(
              b, loc, inside, arith::OrIOp::create(b, loc, first, better));
          Value flat64 =
              arith::IndexCastOp::create(b, loc, b.getI64Type(), flat);
          linalg::YieldOp::create(
              b, loc,
              ValueRange{
                  arith::SelectOp::create(b, loc, take, value, best),
                  arith::SelectOp::create(b, loc, take, flat64, bestIndex)});
        });
    return {generic.getResult(0), generic.getResult(1)};
  }
};

struct SumPoolLowering : public TractLoweringPattern<SumPoolOp> {
  using TractLoweringPattern::TractLoweringPattern;

  LogicalResult lower(SumPoolOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Type element = getElementTypeOrSelf(op.getInput().getType());
    if (element.isInteger(1))
      return op.emitError() << "cannot lower a sum pool of booleans";
    PoolGeometry<SumPoolOp> geometry(op);
    const Window &window = geometry.window;
    size_t rank = window.rank();
    Builder builder(rewriter, op);
    Value zero = scalar(rewriter, op.getLoc(), element, 0);
    Shape padded;
    Value x = padSpatial(builder, adaptor.getInput(), geometry.input,
                         geometry.pads, zero, padded, geometry.first());
    Value init = builder.filled(geometry.output, element, zero);
    Value sum;
    if (geometry.channelsLast && rank > 2)
      return op.emitError() << "cannot lower a channels-last sum pool of "
                            << rank
                            << " spatial axes (tract-channels-last makes none)";
    if (geometry.channelsLast && rank == 1)
      sum =
          namedPool<linalg::PoolingNwcSumOp>(builder, x, init, window, element);
    else if (geometry.channelsLast)
      sum = namedPool<linalg::PoolingNhwcSumOp>(builder, x, init, window,
                                                element);
    else if (rank == 1)
      sum =
          namedPool<linalg::PoolingNcwSumOp>(builder, x, init, window, element);
    else if (rank == 2)
      sum = namedPool<linalg::PoolingNchwSumOp>(builder, x, init, window,
                                                element);
    else
      sum = poolGeneric(builder, x, window, element, init,
                        [&](OpBuilder &b, Location l, ValueRange args) {
                          linalg::YieldOp::create(b, l,
                                                  add(b, l, args[2], args[0]));
                        })
                .getResult(0);
    if (op.getNormalize())
      sum = average(builder, sum, geometry, op.getCountIncludePad(), element);
    rewriter.replaceOp(op, sum);
    return success();
  }

  /// Divides each sum by the number of cells its window counts: those over
  /// the input, or with `countIncludePad` those over the input and its
  /// padding (but not past the explicit pads, where ceil mode reads).
  Value average(const Builder &builder, Value sum,
                const PoolGeometry<SumPoolOp> &geometry, bool countIncludePad,
                Type element) const {
    OpBuilder &rewriter = builder.b;
    const Window &window = geometry.window;
    const Pads &pads = geometry.pads;
    size_t rank = window.rank();
    // Per spatial axis, the counted cells [start, end) in padded
    // coordinates, unless every window counts all its cells.
    SmallVector<std::optional<std::pair<Value, Value>>> ranges;
    int64_t whole = 1;
    for (size_t i = 0; i < rank; ++i) {
      const TDim &x = geometry.input[geometry.first() + i],
                 &y = geometry.output[geometry.first() + i];
      TDim start = countIncludePad ? TDim(0) : pads.low[i];
      TDim explicitAfter = window.padding == Padding::Explicit
                               ? TDim(window.after[i])
                               : pads.high[i];
      TDim end =
          countIncludePad ? pads.low[i] + x + explicitAfter : pads.low[i] + x;
      TDim lastEnd =
          (y - TDim(1)) * TDim(window.strides[i]) + TDim(window.field(i));
      std::optional<int64_t> startValue = start.getConstant();
      std::optional<int64_t> margin = (end - lastEnd).getConstant();
      if (startValue && *startValue <= 0 && margin && *margin >= 0) {
        whole *= window.kernel[i];
        ranges.push_back(std::nullopt);
      } else {
        ranges.push_back(
            std::make_pair(builder.index(start), builder.index(end)));
      }
    }
    Value wholeCount = scalar(rewriter, builder.loc, element, whole);
    Type type = convertElementType(element);
    size_t outputRank = geometry.output.size();
    return mapGeneric(
        builder, sum, rewriter.getMultiDimIdentityMap(outputRank),
        builder.empty(geometry.output, element),
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          auto index = [&](int64_t value) -> Value {
            return arith::ConstantIndexOp::create(b, loc, value);
          };
          Value count;
          for (size_t i = 0; i < rank; ++i) {
            if (!ranges[i])
              continue;
            // Kernel offsets k with start <= y * s + k * d < end.
            auto [start, end] = *ranges[i];
            Value first = arith::MulIOp::create(
                b, loc, linalg::IndexOp::create(b, loc, geometry.first() + i),
                index(window.strides[i]));
            Value dilation = index(window.dilations[i]);
            Value lowest = arith::MaxSIOp::create(
                b, loc, index(0),
                arith::CeilDivSIOp::create(
                    b, loc, arith::SubIOp::create(b, loc, start, first),
                    dilation));
            Value highest = arith::MinSIOp::create(
                b, loc, index(window.kernel[i]),
                arith::CeilDivSIOp::create(
                    b, loc, arith::SubIOp::create(b, loc, end, first),
                    dilation));
            Value cells = arith::MaxSIOp::create(
                b, loc, index(0),
                arith::SubIOp::create(b, loc, highest, lowest));
            count =
                count ? arith::MulIOp::create(b, loc, count, cells).getResult()
                      : cells;
          }
          Value divisor = wholeCount;
          if (count) {
            // An empty window divides by 1.
            count = arith::MaxSIOp::create(b, loc, count, index(1));
            Value wide =
                arith::IndexCastUIOp::create(b, loc, b.getI64Type(), count);
            Value cells =
                isFloat(type)
                    ? arith::UIToFPOp::create(b, loc, type, wide).getResult()
                : type.getIntOrFloatBitWidth() < 64
                    ? arith::TruncIOp::create(b, loc, type, wide).getResult()
                    : wide;
            divisor = whole == 1 ? cells : mul(b, loc, cells, wholeCount);
          }
          if (isFloat(type))
            return arith::DivFOp::create(b, loc, args[0], divisor);
          if (comparesUnsigned(element))
            return arith::DivUIOp::create(b, loc, args[0], divisor);
          return arith::DivSIOp::create(b, loc, args[0], divisor);
        });
  }
};

//===----------------------------------------------------------------------===//
// Resize
//===----------------------------------------------------------------------===//

/// One axis of a resize that moves its cells: its input and output lengths
/// (f64), its scale, the last input index, and for tf_crop_and_resize the
/// box it samples.
struct ResizedAxis {
  size_t axis;
  Value in, out, scale, last;
  /// The box of tf_crop_and_resize (f64), in units of in - 1.
  Value roiStart, roiEnd;
};

/// The input coordinate (f64) of output coordinate `y` (f64) along `axis`,
/// as the coordinate transform says.
Value sourceCoordinate(OpBuilder &b, Location loc, CoordTransform transform,
                       Value y, const ResizedAxis &axis) {
  Type f64 = b.getF64Type();
  auto constant = [&](double value) -> Value {
    return arith::ConstantOp::create(b, loc, f64, b.getF64FloatAttr(value));
  };
  auto addf = [&](Value lhs, Value rhs) -> Value {
    return arith::AddFOp::create(b, loc, lhs, rhs);
  };
  auto subf = [&](Value lhs, Value rhs) -> Value {
    return arith::SubFOp::create(b, loc, lhs, rhs);
  };
  auto mulf = [&](Value lhs, Value rhs) -> Value {
    return arith::MulFOp::create(b, loc, lhs, rhs);
  };
  auto divf = [&](Value lhs, Value rhs) -> Value {
    return arith::DivFOp::create(b, loc, lhs, rhs);
  };
  Value half = constant(0.5), zero = constant(0.0), one = constant(1.0);
  Value single =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, axis.out, one);
  // (y + 0.5) / s - 0.5
  auto halfPixel = [&] { return subf(divf(addf(y, half), axis.scale), half); };
  switch (transform) {
  case CoordTransform::Asymmetric:
    return divf(y, axis.scale);
  case CoordTransform::HalfPixel:
    return halfPixel();
  case CoordTransform::PytorchHalfPixel:
    return arith::SelectOp::create(b, loc, single, zero, halfPixel());
  case CoordTransform::HalfPixelSymmetric: {
    // in / 2 * (1 - out / (s * in)) + (y + 0.5) / s - 0.5
    Value adjustment = divf(axis.out, mulf(axis.scale, axis.in));
    Value offset = mulf(mulf(axis.in, half), subf(one, adjustment));
    return addf(offset, halfPixel());
  }
  case CoordTransform::TfHalfPixelForNn:
    return divf(addf(y, half), axis.scale);
  case CoordTransform::AlignCorners: {
    // s * in is out unless the frontend passed a scale whose output length
    // was rounded: ONNX stretches to the unrounded length then.
    Value stretched =
        divf(mulf(y, subf(axis.in, one)), subf(mulf(axis.scale, axis.in), one));
    return arith::SelectOp::create(b, loc, single, zero, stretched);
  }
  case CoordTransform::TfCropAndResize: {
    Value span = subf(axis.in, one);
    Value start = mulf(axis.roiStart, span);
    Value stretched =
        addf(start, divf(mulf(y, mulf(subf(axis.roiEnd, axis.roiStart), span)),
                         subf(axis.out, one)));
    Value centre =
        mulf(mulf(addf(axis.roiStart, axis.roiEnd), constant(0.5)), span);
    return arith::SelectOp::create(b, loc, single, centre, stretched);
  }
  }
  llvm_unreachable("unknown coordinate transform");
}

/// Keys' cubic convolution weights, of parameter `a`, of the cells at
/// floor(x) - 1 … floor(x) + 2, for `t` = x - floor(x).
SmallVector<Value> cubicWeights(OpBuilder &b, Location loc, Value t, double a) {
  Type f64 = b.getF64Type();
  auto constant = [&](double value) -> Value {
    return arith::ConstantOp::create(b, loc, f64, b.getF64FloatAttr(value));
  };
  auto mulf = [&](Value lhs, Value rhs) -> Value {
    return arith::MulFOp::create(b, loc, lhs, rhs);
  };
  auto addf = [&](Value lhs, Value rhs) -> Value {
    return arith::AddFOp::create(b, loc, lhs, rhs);
  };
  // Distances 1 < d < 2: ((a d - 5a) d + 8a) d - 4a.
  auto far = [&](Value d) {
    Value p = addf(mulf(constant(a), d), constant(-5 * a));
    p = addf(mulf(p, d), constant(8 * a));
    return addf(mulf(p, d), constant(-4 * a));
  };
  // Distances d <= 1: ((a + 2) d - (a + 3)) d d + 1.
  auto near = [&](Value d) {
    Value p = addf(mulf(constant(a + 2), d), constant(-(a + 3)));
    return addf(mulf(mulf(p, d), d), constant(1.0));
  };
  Value one = constant(1.0);
  Value rest = arith::SubFOp::create(b, loc, one, t);
  return {far(addf(t, one)), near(t), near(rest), far(addf(rest, one))};
}

/// An index as an f64.
Value indexToF64(OpBuilder &b, Location loc, Value index) {
  return arith::SIToFPOp::create(
      b, loc, b.getF64Type(),
      arith::IndexCastOp::create(b, loc, b.getI64Type(), index));
}

/// A float holding an integral coordinate as an index.
Value floatToIndex(OpBuilder &b, Location loc, Value value) {
  return arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      arith::FPToSIOp::create(b, loc, b.getI64Type(), value));
}

/// `index` clamped into the cells [0, last] of an axis, and whether it lay
/// among them.
std::pair<Value, Value> clampToAxis(OpBuilder &b, Location loc, Value index,
                                    Value last) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value inside = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, index, zero),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, index, last));
  index = arith::MaxSIOp::create(b, loc, index, zero);
  return {arith::MinSIOp::create(b, loc, index, last), inside};
}

/// Calls `body` with each combination of one choice in [0, counts[i]) per
/// entry, the first entry varying fastest (the cells an interpolation
/// reads, one tap per axis).
void forEachCombination(ArrayRef<size_t> counts,
                        function_ref<void(ArrayRef<size_t>)> body) {
  SmallVector<size_t> choice(counts.size(), 0);
  while (true) {
    body(choice);
    size_t axis = 0;
    while (axis < choice.size() && ++choice[axis] == counts[axis])
      choice[axis++] = 0;
    if (axis == choice.size())
      return;
  }
}

/// The input coordinate of output cell `y` along an axis of `in` cells
/// resized to `out` by `scale`: sourceCoordinate's arithmetic, in the same
/// order on doubles, for the tables of a resize whose shapes are known.
double sourceCoordinateOf(CoordTransform transform, double y, double in,
                          double out, double scale) {
  bool single = out <= 1.0;
  auto halfPixel = [&] { return (y + 0.5) / scale - 0.5; };
  switch (transform) {
  case CoordTransform::Asymmetric:
    return y / scale;
  case CoordTransform::HalfPixel:
    return halfPixel();
  case CoordTransform::PytorchHalfPixel:
    return single ? 0.0 : halfPixel();
  case CoordTransform::HalfPixelSymmetric: {
    double adjustment = out / (scale * in);
    double offset = (in * 0.5) * (1.0 - adjustment);
    return offset + halfPixel();
  }
  case CoordTransform::TfHalfPixelForNn:
    return (y + 0.5) / scale;
  case CoordTransform::AlignCorners:
    return single ? 0.0 : (y * (in - 1.0)) / (scale * in - 1.0);
  case CoordTransform::TfCropAndResize:
    break;
  }
  llvm_unreachable("crop and resize has no table");
}

/// The cells of one axis that each output cell reads, and their weights:
/// `cells[k][y]` and `weights[k][y]` for the k-th tap of output cell y
/// (no weights for nearest).
struct ResizeTable {
  size_t axis;
  SmallVector<SmallVector<int32_t>> cells;
  SmallVector<SmallVector<double>> weights;
};

/// The table of an axis of `in` cells resized to `out`, computed as
/// ResizeLowering's general body computes each cell's taps.
ResizeTable resizeTable(ResizeOp op, size_t axis, int64_t in, int64_t out) {
  ArrayRef<double> scales = op.getScales();
  double inF = static_cast<double>(in), outF = static_cast<double>(out);
  double scale = scales.empty() ? outF / inF : scales[axis];
  Interpolator interpolator = op.getInterpolator();
  size_t taps = interpolator == Interpolator::Nearest  ? 1
                : interpolator == Interpolator::Linear ? 2
                                                       : 4;
  ResizeTable table;
  table.axis = axis;
  table.cells.assign(taps, SmallVector<int32_t>(out));
  if (interpolator != Interpolator::Nearest)
    table.weights.assign(taps, SmallVector<double>(out));
  auto clamp = [&](int64_t index) {
    return static_cast<int32_t>(std::clamp<int64_t>(index, 0, in - 1));
  };
  for (int64_t y = 0; y < out; ++y) {
    double x = sourceCoordinateOf(op.getCoordTransform(),
                                  static_cast<double>(y), inF, outF, scale);
    if (interpolator == Interpolator::Nearest) {
      double rounded;
      switch (op.getNearestMode()) {
      case NearestMode::Floor:
        rounded = std::floor(x);
        break;
      case NearestMode::Ceil:
        rounded = std::ceil(x);
        break;
      case NearestMode::RoundPreferFloor:
        rounded = std::ceil(x - 0.5);
        break;
      case NearestMode::RoundPreferCeil:
        rounded = std::floor(x + 0.5);
        break;
      }
      table.cells[0][y] = clamp(static_cast<int64_t>(rounded));
      continue;
    }
    double floor = std::floor(x), t = x - floor;
    SmallVector<double> weights;
    if (interpolator == Interpolator::Linear) {
      weights = {1.0 - t, t};
    } else {
      double a = op.getCubicCoeffA().convertToDouble();
      auto far = [&](double d) {
        return ((a * d + -5 * a) * d + 8 * a) * d + -4 * a;
      };
      auto near = [&](double d) {
        return ((a + 2) * d + -(a + 3)) * d * d + 1.0;
      };
      double rest = 1.0 - t;
      weights = {far(t + 1.0), near(t), near(rest), far(rest + 1.0)};
    }
    int64_t first = interpolator == Interpolator::Linear ? 0 : -1;
    double total = 0;
    for (size_t k = 0; k < taps; ++k) {
      int64_t index = static_cast<int64_t>(floor) + first + k;
      if (op.getExcludeOutside()) {
        if (index < 0 || index > in - 1)
          weights[k] = 0;
        total += weights[k];
      }
      table.cells[k][y] = clamp(index);
    }
    for (size_t k = 0; k < taps; ++k)
      table.weights[k][y] =
          op.getExcludeOutside() ? weights[k] / total : weights[k];
  }
  return table;
}

/// One pass of a tabled resize: `source` (of `shape` with the tables' axes
/// at their input lengths) resized along the axes of `tables` at once into
/// a tensor of `shape` and `element`, summing in `compute`. Each output
/// cell gathers its taps' cells, at the cells of each table, and weighs
/// them by the product of their weights.
Value tabledResizePass(const Builder &builder, Value source,
                       ArrayRef<ResizeTable> tables, const Shape &shape,
                       Type element, Type compute) {
  OpBuilder &rewriter = builder.b;
  Location loc = builder.loc;
  unsigned rank = shape.size();
  bool weighted = !tables.front().weights.empty();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (const ResizeTable &table : tables) {
    AffineMap map = AffineMap::get(
        rank, 0, rewriter.getAffineDimExpr(table.axis), rewriter.getContext());
    auto length = static_cast<int64_t>(table.cells[0].size());
    for (size_t k = 0; k < table.cells.size(); ++k) {
      auto cellsType = RankedTensorType::get({length}, rewriter.getI32Type());
      inputs.push_back(arith::ConstantOp::create(
          rewriter, loc,
          DenseElementsAttr::get(cellsType, ArrayRef<int32_t>(table.cells[k]))));
      maps.push_back(map);
      if (!weighted)
        continue;
      auto weightsType = RankedTensorType::get({length}, compute);
      SmallVector<Attribute> weights = llvm::map_to_vector(
          table.weights[k],
          [&](double w) -> Attribute { return FloatAttr::get(compute, w); });
      inputs.push_back(arith::ConstantOp::create(
          rewriter, loc, DenseElementsAttr::get(weightsType, weights)));
      maps.push_back(map);
    }
  }
  return mapGeneric(
      builder, inputs, maps, builder.empty(shape, element),
      [&](OpBuilder &b, Location l, ValueRange args) -> Value {
        SmallVector<Value> indices;
        for (unsigned axis = 0; axis < rank; ++axis)
          indices.push_back(linalg::IndexOp::create(b, l, axis));
        // Per table, its taps: (cell, weight).
        SmallVector<SmallVector<std::pair<Value, Value>>> taps;
        size_t next = 0;
        for (const ResizeTable &table : tables) {
          SmallVector<std::pair<Value, Value>> axisTaps;
          for (size_t k = 0; k < table.cells.size(); ++k) {
            Value cell = arith::IndexCastOp::create(b, l, b.getIndexType(),
                                                    args[next++]);
            Value weight = weighted ? args[next++] : Value();
            axisTaps.push_back({cell, weight});
          }
          taps.push_back(axisTaps);
        }
        SmallVector<size_t> counts = llvm::map_to_vector(
            taps, [](const auto &axisTaps) { return axisTaps.size(); });
        Value value;
        forEachCombination(counts, [&](ArrayRef<size_t> choice) {
          SmallVector<Value> at(indices);
          Value weight;
          for (size_t i = 0; i < tables.size(); ++i) {
            auto [cell, w] = taps[i][choice[i]];
            at[tables[i].axis] = cell;
            if (w)
              weight = weight ? arith::MulFOp::create(b, l, weight, w).getResult()
                              : w;
          }
          Value cellValue = tensor::ExtractOp::create(b, l, source, at);
          if (!weight) {
            value = cellValue;
            return;
          }
          Value term = arith::MulFOp::create(
              b, l, castScalar(b, l, cellValue, compute), weight);
          value = value ? arith::AddFOp::create(b, l, value, term).getResult()
                        : term;
        });
        return castScalar(b, l, value, element);
      });
}

/// The order of the passes of a separable resize that does the least work:
/// each pass costs its output's cells times its taps, four times over along
/// the last axis, where each tap is a gather (the other axes read rows).
SmallVector<size_t> cheapestPassOrder(ArrayRef<ResizeTable> tables,
                                      ArrayRef<int64_t> input) {
  SmallVector<size_t> order = llvm::to_vector(llvm::seq<size_t>(tables.size()));
  SmallVector<size_t> best = order;
  double bestCost = std::numeric_limits<double>::infinity();
  do {
    SmallVector<int64_t> shape(input);
    double cost = 0;
    for (size_t i : order) {
      const ResizeTable &table = tables[i];
      shape[table.axis] = table.cells[0].size();
      double cells = 1;
      for (int64_t size : shape)
        cells *= static_cast<double>(size);
      bool last = table.axis + 1 == input.size();
      cost += cells * table.cells.size() * (last ? 4 : 1);
    }
    if (cost < bestCost) {
      bestCost = cost;
      best = order;
    }
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

/// A resize whose scales and resized axes are known, on floats: the cells
/// and weights of each output position come from tables computed here, so
/// that the body only gathers and sums (in f32, or f64 for f64), and the
/// vector loops run it with the tables of the last axis on the lanes. A
/// linear or cubic resize is separable: one pass per axis, in the order
/// that does the least work (for an upsampling, the gathers along the last
/// axis before the rows multiply), the passes in between in `compute`.
FailureOr<Value> lowerResizeWithTables(ResizeOp op, Value source,
                                       const Builder &builder,
                                       ConversionPatternRewriter &rewriter) {
  Type element = getElementTypeOrSelf(op.getType());
  CoordTransform transform = op.getCoordTransform();
  if (!isa<FloatType>(element) || op.getScaleValues() || op.getRoiValues() ||
      transform == CoordTransform::TfCropAndResize)
    return failure();
  Shape input = getShape(op.getInput()), output = getShape(op.getType());
  ArrayRef<double> scales = op.getScales();
  SmallVector<ResizeTable> tables;
  // The input's lengths, 1 where unknown (they weigh the passes' order).
  SmallVector<int64_t> lengths;
  for (size_t axis = 0; axis < input.size(); ++axis) {
    lengths.push_back(input[axis].getConstant().value_or(1));
    bool unitScale = scales.empty() || scales[axis] == 1.0;
    if (transform != CoordTransform::TfHalfPixelForNn && unitScale &&
        input[axis] == output[axis])
      continue;
    std::optional<int64_t> in = input[axis].getConstant();
    std::optional<int64_t> out = output[axis].getConstant();
    if (!in || !out || *in < 1 || *in >= (int64_t(1) << 31))
      return failure();
    tables.push_back(resizeTable(op, axis, *in, *out));
  }
  if (tables.empty())
    return failure();
  Type compute = element.isF64() ? element : rewriter.getF32Type();
  if (op.getInterpolator() == Interpolator::Nearest || tables.size() == 1)
    return tabledResizePass(builder, source, tables, output, element, compute);
  Value result = source;
  Shape shape = input;
  SmallVector<size_t> order = cheapestPassOrder(tables, lengths);
  for (auto [pass, i] : llvm::enumerate(order)) {
    const ResizeTable &table = tables[i];
    shape[table.axis] = output[table.axis];
    bool final = pass + 1 == order.size();
    result = tabledResizePass(builder, result, table, shape,
                              final ? element : compute, compute);
  }
  return result;
}

struct ResizeLowering : public TractLoweringPattern<ResizeOp> {
  using TractLoweringPattern::TractLoweringPattern;

  LogicalResult lower(ResizeOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Type element = getElementTypeOrSelf(op.getType());
    Shape input = getShape(op.getInput()), output = getShape(op.getType());
    Builder builder(rewriter, op);
    if (FailureOr<Value> tabled =
            lowerResizeWithTables(op, adaptor.getInput(), builder, rewriter);
        succeeded(tabled)) {
      rewriter.replaceOp(op, *tabled);
      return success();
    }
    Location loc = op.getLoc();
    Type f64 = rewriter.getF64Type();
    CoordTransform transform = op.getCoordTransform();
    ArrayRef<double> scales = op.getScales(), roi = op.getRoi();
    bool crop = transform == CoordTransform::TfCropAndResize;
    // These transforms map a coordinate to itself when the scale is 1.
    bool identityAtScaleOne =
        transform != CoordTransform::TfHalfPixelForNn && !crop;
    auto asFloat = [&](Value index) {
      return indexToF64(rewriter, loc, index);
    };
    // The axes whose cells move; the others are read at the output index.
    SmallVector<ResizedAxis> resized;
    for (size_t axis = 0; axis < input.size(); ++axis) {
      bool unitScale = scales.empty() || scales[axis] == 1.0;
      if (identityAtScaleOne && unitScale && input[axis] == output[axis])
        continue;
      ResizedAxis entry;
      entry.axis = axis;
      Value in = builder.index(input[axis]);
      entry.last = arith::SubIOp::create(rewriter, loc, in, builder.index(1));
      entry.in = asFloat(in);
      entry.out = asFloat(builder.index(output[axis]));
      if (Value values = adaptor.getScaleValues()) {
        Value scale = tensor::ExtractOp::create(
            rewriter, loc, values,
            ValueRange{arith::ConstantIndexOp::create(rewriter, loc, axis)});
        entry.scale =
            scale.getType() == f64
                ? scale
                : arith::ExtFOp::create(rewriter, loc, f64, scale).getResult();
      } else if (scales.empty()) {
        entry.scale = arith::DivFOp::create(rewriter, loc, entry.out, entry.in);
      } else {
        entry.scale = arith::ConstantOp::create(
            rewriter, loc, f64, rewriter.getF64FloatAttr(scales[axis]));
      }
      if (crop) {
        auto bound = [&](size_t at) -> Value {
          if (Value values = adaptor.getRoiValues()) {
            Value v = tensor::ExtractOp::create(
                rewriter, loc, values,
                ValueRange{arith::ConstantIndexOp::create(rewriter, loc, at)});
            return v.getType() == f64
                       ? v
                       : arith::ExtFOp::create(rewriter, loc, f64, v)
                             .getResult();
          }
          return arith::ConstantOp::create(rewriter, loc, f64,
                                           rewriter.getF64FloatAttr(roi[at]));
        };
        entry.roiStart = bound(axis);
        entry.roiEnd = bound(input.size() + axis);
      }
      resized.push_back(entry);
    }
    Value source = adaptor.getInput();
    Interpolator interpolator = op.getInterpolator();
    NearestMode nearestMode = op.getNearestMode();
    double cubicA = op.getCubicCoeffA().convertToDouble();
    bool excludeOutside = op.getExcludeOutside();
    Type type = convertElementType(element);
    Value extrapolation =
        crop ? scalar(rewriter, loc, element,
                      op.getExtrapolationValue().convertToDouble())
             : Value();
    Value result = mapGeneric(
        builder, ValueRange{}, {}, builder.empty(output, element),
        [&](OpBuilder &b, Location l, ValueRange) -> Value {
          auto constant = [&](double value) -> Value {
            return arith::ConstantOp::create(b, l, f64,
                                             b.getF64FloatAttr(value));
          };
          SmallVector<Value> indices;
          for (size_t axis = 0; axis < output.size(); ++axis)
            indices.push_back(linalg::IndexOp::create(b, l, axis));
          // Whether a coordinate falls outside the input (crop only).
          Value outside;
          // Per moving axis, the cells read and their weights.
          SmallVector<SmallVector<std::pair<Value, Value>>> taps;
          for (const ResizedAxis &axis : resized) {
            Value y = indexToF64(b, l, indices[axis.axis]);
            Value x = sourceCoordinate(b, l, transform, y, axis);
            if (crop) {
              Value below = arith::CmpFOp::create(
                  b, l, arith::CmpFPredicate::OLT, x, constant(0));
              Value above = arith::CmpFOp::create(
                  b, l, arith::CmpFPredicate::OGT, x,
                  arith::SubFOp::create(b, l, axis.in, constant(1)));
              Value out = arith::OrIOp::create(b, l, below, above);
              outside =
                  outside ? arith::OrIOp::create(b, l, outside, out).getResult()
                          : out;
            }
            // The cell `offset` after `position` (an integral f64), and
            // whether it lies in the input; edges repeat.
            auto cell = [&](Value position,
                            int64_t offset) -> std::pair<Value, Value> {
              Value index = floatToIndex(b, l, position);
              if (offset)
                index = arith::AddIOp::create(
                    b, l, index, arith::ConstantIndexOp::create(b, l, offset));
              return clampToAxis(b, l, index, axis.last);
            };
            SmallVector<std::pair<Value, Value>> axisTaps;
            if (interpolator == Interpolator::Nearest) {
              Value half = constant(0.5);
              Value rounded;
              switch (nearestMode) {
              case NearestMode::Floor:
                rounded = math::FloorOp::create(b, l, x);
                break;
              case NearestMode::Ceil:
                rounded = math::CeilOp::create(b, l, x);
                break;
              case NearestMode::RoundPreferFloor:
                rounded = math::CeilOp::create(
                    b, l, arith::SubFOp::create(b, l, x, half));
                break;
              case NearestMode::RoundPreferCeil:
                rounded = math::FloorOp::create(
                    b, l, arith::AddFOp::create(b, l, x, half));
                break;
              }
              axisTaps.push_back({cell(rounded, 0).first, Value()});
              taps.push_back(axisTaps);
              continue;
            }
            Value floor = math::FloorOp::create(b, l, x);
            Value t = arith::SubFOp::create(b, l, x, floor);
            SmallVector<Value> weights;
            if (interpolator == Interpolator::Linear)
              weights = {arith::SubFOp::create(b, l, constant(1), t), t};
            else
              weights = cubicWeights(b, l, t, cubicA);
            int64_t first = interpolator == Interpolator::Linear ? 0 : -1;
            SmallVector<Value> cells;
            Value total;
            for (size_t k = 0; k < weights.size(); ++k) {
              auto [index, inside] =
                  cell(floor, first + static_cast<int64_t>(k));
              if (excludeOutside) {
                // Cells outside the input weigh nothing; the others are
                // renormalized below.
                weights[k] = arith::SelectOp::create(b, l, inside, weights[k],
                                                     constant(0));
                total = total ? arith::AddFOp::create(b, l, total, weights[k])
                                    .getResult()
                              : weights[k];
              }
              cells.push_back(index);
            }
            for (auto [index, weight] : llvm::zip(cells, weights))
              axisTaps.push_back(
                  {index,
                   total
                       ? arith::DivFOp::create(b, l, weight, total).getResult()
                       : weight});
            taps.push_back(axisTaps);
          }
          // The weighted sum over every combination of taps.
          Value value;
          SmallVector<size_t> counts = llvm::map_to_vector(
              taps, [](const auto &axisTaps) { return axisTaps.size(); });
          forEachCombination(counts, [&](ArrayRef<size_t> choice) {
            SmallVector<Value> at(indices);
            Value weight;
            for (size_t i = 0; i < resized.size(); ++i) {
              auto [index, w] = taps[i][choice[i]];
              at[resized[i].axis] = index;
              if (w)
                weight =
                    weight ? arith::MulFOp::create(b, l, weight, w).getResult()
                           : w;
            }
            Value cellValue = tensor::ExtractOp::create(b, l, source, at);
            if (!weight) {
              value = cellValue; // nearest: one cell
              return;
            }
            Value term = arith::MulFOp::create(
                b, l, castScalar(b, l, cellValue, f64), weight);
            value = value ? arith::AddFOp::create(b, l, value, term).getResult()
                          : term;
          });
          value = castScalar(b, l, value, type);
          if (outside)
            value =
                arith::SelectOp::create(b, l, outside, extrapolation, value);
          return value;
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// GridSample
//===----------------------------------------------------------------------===//

/// Arithmetic on f64 scalars for the sampling coordinates.
struct F64Math {
  OpBuilder &b;
  Location loc;

  Value constant(double value) const {
    return arith::ConstantOp::create(b, loc, b.getF64Type(),
                                     b.getF64FloatAttr(value));
  }
  Value add(Value x, Value y) const {
    return arith::AddFOp::create(b, loc, x, y);
  }
  Value sub(Value x, Value y) const {
    return arith::SubFOp::create(b, loc, x, y);
  }
  Value mul(Value x, Value y) const {
    return arith::MulFOp::create(b, loc, x, y);
  }
  Value div(Value x, Value y) const {
    return arith::DivFOp::create(b, loc, x, y);
  }
  Value clamp(Value x, Value low, Value high) const {
    return arith::MinimumFOp::create(
        b, loc, arith::MaximumFOp::create(b, loc, x, low), high);
  }
  Value select(Value condition, Value x, Value y) const {
    return arith::SelectOp::create(b, loc, condition, x, y);
  }
  Value compare(arith::CmpFPredicate predicate, Value x, Value y) const {
    return arith::CmpFOp::create(b, loc, predicate, x, y);
  }
};

/// `x` reflected at `low` and `high` until it lies between them: the
/// distance to `low` folded by the span between the two, backwards on odd
/// folds. A span of 0 (one cell, aligned corners) gives `low`.
Value reflect(const F64Math &m, Value x, Value low, Value high) {
  Value span = m.sub(high, low);
  Value distance = math::AbsFOp::create(m.b, m.loc, m.sub(x, low));
  Value extra = arith::RemFOp::create(m.b, m.loc, distance, span);
  Value flips = math::FloorOp::create(m.b, m.loc, m.div(distance, span));
  Value even =
      m.compare(arith::CmpFPredicate::OEQ,
                arith::RemFOp::create(m.b, m.loc, flips, m.constant(2.0)),
                m.constant(0.0));
  Value reflected = m.select(even, m.add(low, extra), m.sub(high, extra));
  return m.select(m.compare(arith::CmpFPredicate::OLE, span, m.constant(0.0)),
                  low, reflected);
}

/// One spatial axis of a grid_sample: its length (f64), last index, and
/// the coordinates its edges have (the edge cells' centres with
/// `align_corners`, the image's edges without).
struct SampledAxis {
  Value length, last, low, high;
};

/// SplitMix64's finalizer: a bijective mix of 64 bits.
Value splitMix(OpBuilder &b, Location loc, Value z) {
  Type i64 = b.getI64Type();
  auto constant = [&](uint64_t v) -> Value {
    return arith::ConstantOp::create(
        b, loc, i64, b.getIntegerAttr(i64, static_cast<int64_t>(v)));
  };
  auto xorShift = [&](Value v, int64_t bits) -> Value {
    return arith::XOrIOp::create(
        b, loc, v, arith::ShRUIOp::create(b, loc, v, constant(bits)));
  };
  z = arith::AddIOp::create(b, loc, z, constant(0x9E3779B97F4A7C15ull));
  z = arith::MulIOp::create(b, loc, xorShift(z, 30),
                            constant(0xBF58476D1CE4E5B9ull));
  z = arith::MulIOp::create(b, loc, xorShift(z, 27),
                            constant(0x94D049BB133111EBull));
  return xorShift(z, 31);
}

/// The top 53 bits of `z` as an f64 in [0, 1), or (0, 1] with `open0`.
Value unitInterval(OpBuilder &b, Location loc, Value z, bool open0) {
  Type i64 = b.getI64Type(), f64 = b.getF64Type();
  Value bits = arith::ShRUIOp::create(
      b, loc, z,
      arith::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(11)));
  if (open0)
    bits = arith::AddIOp::create(
        b, loc, bits,
        arith::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(1)));
  Value real = arith::UIToFPOp::create(b, loc, f64, bits);
  return arith::MulFOp::create(
      b, loc, real,
      arith::ConstantOp::create(b, loc, f64,
                                b.getF64FloatAttr(std::ldexp(1.0, -53))));
}

/// Element i is drawn from SplitMix64(seed * golden + i): uniform from its
/// top 53 bits, normal by Box-Muller from it and the next draw.
struct RandomLowering : public TractLoweringPattern<RandomOp> {
  using TractLoweringPattern::TractLoweringPattern;

  LogicalResult lower(RandomOp op, OpAdaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Builder builder(rewriter, op);
    Shape shape = getShape(op.getType());
    Type element = getElementTypeOrSelf(op.getType());
    Value init = builder.empty(shape, element);
    if (!init)
      return rewriter.notifyMatchFailure(op, "a size has an unbound symbol");
    SmallVector<Value> dims;
    for (const TDim &dim : shape)
      dims.push_back(builder.index(dim));
    double a = op.getA().convertToDouble(), b = op.getB().convertToDouble();
    bool normal = op.getDistribution() == RandomDistribution::Normal;
    uint64_t seed = static_cast<uint64_t>(op.getSeed()) * 0x9E3779B97F4A7C15ull;
    Type f64 = rewriter.getF64Type(), i64 = rewriter.getI64Type();
    Value result = mapGeneric(
        builder, ValueRange{}, {}, init,
        [&](OpBuilder &nb, Location l, ValueRange) -> Value {
          auto constant = [&](double v) -> Value {
            return arith::ConstantOp::create(nb, l, f64, nb.getF64FloatAttr(v));
          };
          // The row-major index of the element.
          Value linear = arith::ConstantIndexOp::create(nb, l, 0);
          for (size_t axis = 0; axis < shape.size(); ++axis)
            linear = arith::AddIOp::create(
                nb, l, arith::MulIOp::create(nb, l, linear, dims[axis]),
                linalg::IndexOp::create(nb, l, axis));
          Value counter = arith::AddIOp::create(
              nb, l, arith::IndexCastOp::create(nb, l, i64, linear),
              arith::ConstantOp::create(
                  nb, l, i64,
                  nb.getIntegerAttr(i64, static_cast<int64_t>(seed))));
          Value z = splitMix(nb, l, counter);
          Value value;
          if (!normal) {
            value = arith::AddFOp::create(
                nb, l, constant(a),
                arith::MulFOp::create(nb, l, constant(b - a),
                                      unitInterval(nb, l, z, false)));
          } else {
            Value u1 = unitInterval(nb, l, z, true);
            Value u2 = unitInterval(nb, l, splitMix(nb, l, z), false);
            Value radius = math::SqrtOp::create(
                nb, l,
                arith::MulFOp::create(nb, l, constant(-2.0),
                                      math::LogOp::create(nb, l, u1)));
            Value angle =
                arith::MulFOp::create(nb, l, constant(2.0 * M_PI), u2);
            Value gauss = arith::MulFOp::create(
                nb, l, radius, math::CosOp::create(nb, l, angle));
            value = arith::AddFOp::create(
                nb, l, constant(a),
                arith::MulFOp::create(nb, l, constant(b), gauss));
          }
          Type plain = convertElementType(element);
          return plain == f64
                     ? value
                     : arith::TruncFOp::create(nb, l, plain, value).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct GridSampleLowering : public TractLoweringPattern<GridSampleOp> {
  using TractLoweringPattern::TractLoweringPattern;

  LogicalResult lower(GridSampleOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Type element = getElementTypeOrSelf(op.getType());
    Shape input = getShape(op.getInput()), output = getShape(op.getType());
    Builder builder(rewriter, op);
    Location loc = op.getLoc();
    F64Math outer{rewriter, loc};
    size_t spatial = input.size() - 2;
    bool alignCorners = op.getAlignCorners();
    SmallVector<SampledAxis> axes;
    for (size_t i = 0; i < spatial; ++i) {
      Value length = builder.index(input[2 + i]);
      SampledAxis axis;
      axis.last =
          arith::SubIOp::create(rewriter, loc, length, builder.index(1));
      axis.length = indexToF64(rewriter, loc, length);
      axis.low = outer.constant(alignCorners ? 0.0 : -0.5);
      axis.high = alignCorners ? outer.sub(axis.length, outer.constant(1.0))
                               : outer.sub(axis.length, outer.constant(0.5));
      axes.push_back(axis);
    }
    Value source = adaptor.getInput(), grid = adaptor.getGrid();
    Interpolator interpolator = op.getInterpolator();
    GridPadding padding = op.getPadding();
    Type type = convertElementType(element);
    Value result = mapGeneric(
        builder, ValueRange{}, {}, builder.empty(output, element),
        [&](OpBuilder &b, Location l, ValueRange) -> Value {
          F64Math m{b, l};
          SmallVector<Value> indices;
          for (size_t axis = 0; axis < output.size(); ++axis)
            indices.push_back(linalg::IndexOp::create(b, l, axis));
          Value one = m.constant(1.0);
          // The cell at integral coordinate `position` (f64) along `axis`:
          // its index, clamped into the input, and whether it lies in it.
          // Border and reflection padding move the position inside first.
          auto cell = [&](Value position,
                          const SampledAxis &axis) -> std::pair<Value, Value> {
            if (padding == GridPadding::Border)
              position =
                  m.clamp(position, m.constant(0.0), m.sub(axis.length, one));
            else if (padding == GridPadding::Reflection)
              position = reflect(m, position, axis.low, axis.high);
            return clampToAxis(b, l, floatToIndex(b, l, position), axis.last);
          };
          // Per spatial axis: the cells read, whether each lies in the
          // input, and their weights (none for nearest).
          struct Tap {
            Value index, inside, weight;
          };
          // The point's coordinate along each axis.
          SmallVector<Value> point;
          Value beyond;
          for (size_t i = 0; i < spatial; ++i) {
            const SampledAxis &axis = axes[i];
            // The grid holds the last axis' coordinate first.
            SmallVector<Value> at{indices[0]};
            at.append(indices.begin() + 2, indices.end());
            at.push_back(arith::ConstantIndexOp::create(b, l, spatial - 1 - i));
            Value normalized =
                castScalar(b, l, tensor::ExtractOp::create(b, l, grid, at),
                           b.getF64Type());
            // (c + 1) / 2 * (D - 1), or ((c + 1) * D - 1) / 2.
            Value x =
                alignCorners
                    ? m.mul(m.div(m.add(normalized, one), m.constant(2.0)),
                            m.sub(axis.length, one))
                    : m.div(m.sub(m.mul(m.add(normalized, one), axis.length),
                                  one),
                            m.constant(2.0));
            Value out = arith::OrIOp::create(
                b, l, m.compare(arith::CmpFPredicate::OLT, x, axis.low),
                m.compare(arith::CmpFPredicate::OGT, x, axis.high));
            beyond = beyond ? arith::OrIOp::create(b, l, beyond, out) : out;
            point.push_back(x);
          }
          SmallVector<SmallVector<Tap>> taps;
          for (size_t i = 0; i < spatial; ++i) {
            const SampledAxis &axis = axes[i];
            Value x = point[i];
            // A point beyond the edges along any axis moves inside as the
            // padding says, along every axis; cubic pads its cells only.
            if (interpolator == Interpolator::Cubic)
              ;
            else if (padding == GridPadding::Border)
              x = m.select(beyond,
                           m.clamp(x, m.constant(0.0), m.sub(axis.length, one)),
                           x);
            else if (padding == GridPadding::Reflection)
              x = reflect(m, x, axis.low, axis.high);
            SmallVector<Tap> axisTaps;
            if (interpolator == Interpolator::Nearest) {
              auto [index, inside] =
                  cell(math::RoundEvenOp::create(b, l, x), axis);
              axisTaps.push_back({index, inside, Value()});
            } else {
              Value floor = math::FloorOp::create(b, l, x);
              Value t = m.sub(x, floor);
              SmallVector<Value> weights =
                  interpolator == Interpolator::Linear
                      ? SmallVector<Value>{m.sub(one, t), t}
                      : cubicWeights(b, l, t, -0.75);
              int64_t first = interpolator == Interpolator::Linear ? 0 : -1;
              for (auto [k, weight] : llvm::enumerate(weights)) {
                double offset = static_cast<double>(first + (int64_t)k);
                auto [index, inside] =
                    cell(m.add(floor, m.constant(offset)), axis);
                axisTaps.push_back({index, inside, weight});
              }
            }
            taps.push_back(axisTaps);
          }
          // The weighted sum over every combination of taps; cells outside
          // the input read 0.
          Value value;
          Value zeroValue = m.constant(0.0);
          SmallVector<size_t> counts = llvm::map_to_vector(
              taps, [](const auto &axisTaps) { return axisTaps.size(); });
          forEachCombination(counts, [&](ArrayRef<size_t> choice) {
            SmallVector<Value> at{indices[0], indices[1]};
            Value weight, inside;
            for (size_t i = 0; i < spatial; ++i) {
              const Tap &tap = taps[i][choice[i]];
              at.push_back(tap.index);
              inside = inside ? arith::AndIOp::create(b, l, inside, tap.inside)
                                    .getResult()
                              : tap.inside;
              if (tap.weight)
                weight = weight ? m.mul(weight, tap.weight) : tap.weight;
            }
            Value cellValue =
                castScalar(b, l, tensor::ExtractOp::create(b, l, source, at),
                           b.getF64Type());
            cellValue = m.select(inside, cellValue, zeroValue);
            Value term = weight ? m.mul(cellValue, weight) : cellValue;
            value = value ? m.add(value, term) : term;
          });
          return castScalar(b, l, value, type);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// RoiAlign
//===----------------------------------------------------------------------===//

/// One output element per iteration of a linalg.generic: the bin's samples
/// in two loops whose trip counts come from the region's size when the
/// sampling ratio is adaptive.
struct RoiAlignLowering : public TractLoweringPattern<RoiAlignOp> {
  using TractLoweringPattern::TractLoweringPattern;

  LogicalResult lower(RoiAlignOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Type element = getElementTypeOrSelf(op.getType());
    Shape input = getShape(op.getInput()), output = getShape(op.getType());
    Builder builder(rewriter, op);
    Location loc = op.getLoc();
    Type f64 = rewriter.getF64Type(), index = rewriter.getIndexType();
    Value heightIndex = builder.index(input[2]);
    Value widthIndex = builder.index(input[3]);
    Value height = indexToF64(rewriter, loc, heightIndex);
    Value width = indexToF64(rewriter, loc, widthIndex);
    Value source = adaptor.getInput(), rois = adaptor.getRois();
    Value batches = adaptor.getBatchIndices();
    bool max = op.getMax(), halfPixel = op.getHalfPixel();
    int64_t binsHigh = op.getOutputHeight(), binsWide = op.getOutputWidth();
    int64_t sampling = op.getSamplingRatio();
    double scale = op.getSpatialScale().convertToDouble();
    Type type = convertElementType(element);
    Value result = mapGeneric(
        builder, ValueRange{}, {}, builder.empty(output, element),
        [&](OpBuilder &b, Location l, ValueRange) -> Value {
          F64Math m{b, l};
          Value r = linalg::IndexOp::create(b, l, 0);
          Value c = linalg::IndexOp::create(b, l, 1);
          Value ph = linalg::IndexOp::create(b, l, 2);
          Value pw = linalg::IndexOp::create(b, l, 3);
          Value zero = arith::ConstantIndexOp::create(b, l, 0);
          Value one = arith::ConstantIndexOp::create(b, l, 1);
          Value batch = arith::IndexCastOp::create(
              b, l, index,
              tensor::ExtractOp::create(b, l, batches, ValueRange{r}));
          auto corner = [&](int64_t k) -> Value {
            Value v = castScalar(
                b, l,
                tensor::ExtractOp::create(
                    b, l, rois,
                    ValueRange{r, arith::ConstantIndexOp::create(b, l, k)}),
                f64);
            return m.sub(m.mul(v, m.constant(scale)),
                         m.constant(halfPixel ? 0.5 : 0.0));
          };
          Value startW = corner(0), startH = corner(1);
          Value roiW = m.sub(corner(2), startW);
          Value roiH = m.sub(corner(3), startH);
          if (!halfPixel) {
            roiW = arith::MaximumFOp::create(b, l, roiW, m.constant(1.0));
            roiH = arith::MaximumFOp::create(b, l, roiH, m.constant(1.0));
          }
          Value binH = m.div(roiH, m.constant(static_cast<double>(binsHigh)));
          Value binW = m.div(roiW, m.constant(static_cast<double>(binsWide)));
          // Samples per bin and axis: the ratio, or ceil of the bin's size.
          auto samples = [&](Value bin) -> Value {
            if (sampling > 0)
              return arith::ConstantIndexOp::create(b, l, sampling);
            Value n = arith::FPToSIOp::create(
                b, l, b.getI64Type(),
                arith::MaximumFOp::create(b, l, math::CeilOp::create(b, l, bin),
                                          m.constant(0.0)));
            return arith::IndexCastOp::create(b, l, index, n);
          };
          Value gridH = samples(binH), gridW = samples(binW);
          Value fromH = m.add(startH, m.mul(indexToF64(b, l, ph), binH));
          Value fromW = m.add(startW, m.mul(indexToF64(b, l, pw), binW));
          Value stepH = m.div(binH, indexToF64(b, l, gridH));
          Value stepW = m.div(binW, indexToF64(b, l, gridW));
          Value none =
              m.constant(max ? -std::numeric_limits<double>::infinity() : 0.0);
          auto pixel = [&](OpBuilder &b, Location l, Value y, Value x) {
            return castScalar(b, l,
                              tensor::ExtractOp::create(
                                  b, l, source, ValueRange{batch, c, y, x}),
                              f64);
          };
          // The bilinear sample at (y, x) (0 beyond a cell outside), as
          // its four weighted corners.
          auto sample = [&](OpBuilder &b, Location l, Value y,
                            Value x) -> std::array<Value, 4> {
            F64Math n{b, l};
            Value outside = arith::OrIOp::create(
                b, l,
                arith::OrIOp::create(
                    b, l,
                    n.compare(arith::CmpFPredicate::OLT, y, n.constant(-1.0)),
                    n.compare(arith::CmpFPredicate::OGT, y, height)),
                arith::OrIOp::create(
                    b, l,
                    n.compare(arith::CmpFPredicate::OLT, x, n.constant(-1.0)),
                    n.compare(arith::CmpFPredicate::OGT, x, width)));
            // The cell at or below `v` (clamped to >= 0), its neighbour
            // (both the last cell at the edge), and the fraction.
            auto axis = [&](Value v, Value lastIndex) {
              v = arith::MaximumFOp::create(b, l, v, n.constant(0.0));
              Value low = floatToIndex(b, l, v);
              low = arith::MinSIOp::create(b, l, low, lastIndex);
              Value atEdge = arith::CmpIOp::create(
                  b, l, arith::CmpIPredicate::sge, low, lastIndex);
              Value high = arith::SelectOp::create(
                  b, l, atEdge, low, arith::AddIOp::create(b, l, low, one));
              Value fraction = n.select(atEdge, n.constant(0.0),
                                        n.sub(v, indexToF64(b, l, low)));
              return std::make_tuple(low, high, fraction);
            };
            Value lastY = arith::SubIOp::create(b, l, heightIndex, one);
            Value lastX = arith::SubIOp::create(b, l, widthIndex, one);
            auto [y0, y1, ly] = axis(y, lastY);
            auto [x0, x1, lx] = axis(x, lastX);
            Value hy = n.sub(n.constant(1.0), ly);
            Value hx = n.sub(n.constant(1.0), lx);
            std::array<Value, 4> corners{
                n.mul(n.mul(hy, hx), pixel(b, l, y0, x0)),
                n.mul(n.mul(hy, lx), pixel(b, l, y0, x1)),
                n.mul(n.mul(ly, hx), pixel(b, l, y1, x0)),
                n.mul(n.mul(ly, lx), pixel(b, l, y1, x1))};
            for (Value &v : corners)
              v = n.select(outside, n.constant(0.0), v);
            return corners;
          };
          Value total =
              scf::ForOp::create(
                  b, l, zero, gridH, one, ValueRange{none},
                  [&](OpBuilder &b, Location l, Value iy, ValueRange acc) {
                    F64Math n{b, l};
                    Value y = n.add(fromH, n.mul(n.add(indexToF64(b, l, iy),
                                                       n.constant(0.5)),
                                                 stepH));
                    Value row =
                        scf::ForOp::create(
                            b, l, zero, gridW, one, acc,
                            [&](OpBuilder &b, Location l, Value ix,
                                ValueRange acc) {
                              F64Math n{b, l};
                              Value x =
                                  n.add(fromW, n.mul(n.add(indexToF64(b, l, ix),
                                                           n.constant(0.5)),
                                                     stepW));
                              std::array<Value, 4> v = sample(b, l, y, x);
                              Value next;
                              if (max) {
                                next = acc[0];
                                for (Value corner : v)
                                  next = arith::MaximumFOp::create(b, l, next,
                                                                   corner);
                              } else {
                                next = n.add(acc[0], n.add(n.add(v[0], v[1]),
                                                           n.add(v[2], v[3])));
                              }
                              scf::YieldOp::create(b, l, ValueRange{next});
                            })
                            .getResult(0);
                    scf::YieldOp::create(b, l, ValueRange{row});
                  })
                  .getResult(0);
          Value count = arith::MaxSIOp::create(
              b, l, arith::MulIOp::create(b, l, gridH, gridW), one);
          Value value =
              max ? m.select(m.compare(arith::CmpFPredicate::OEQ, total, none),
                             m.constant(0.0), total)
                  : m.div(total, indexToF64(b, l, count));
          return castScalar(b, l, value, type);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::tract::populateNNLoweringPatterns(const TypeConverter &converter,
                                             RewritePatternSet &patterns) {
  patterns
      .add<EinsumLowering, ConvLowering, DeconvLowering, ReduceLowering,
           SoftmaxLowering<SoftmaxOp>, SoftmaxLowering<LogSoftmaxOp>,
           RmsNormLowering, MaxPoolLowering, SumPoolLowering, ResizeLowering,
           GridSampleLowering, RoiAlignLowering, RandomLowering>(
          converter, patterns.getContext());
}
