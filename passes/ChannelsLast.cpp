//===- ChannelsLast.cpp - convolutional networks with the channels last ---===//
//
// A depthwise convolution wants its channels on the vector lanes: with
// them last, each tap is one vector load and one FMA per output pixel, and
// neighbouring output pixels share the loads. The pass rewrites the
// convolutions as their channels-last form and carries that layout forward
// through what follows them (element-wise ops, einsums, reductions,
// concatenations), so that a chain of blocks runs without transposes. A
// value whose reader needs the channels first gets one move_axis back; an
// input that comes channels first gets one move_axis forward.
//
// The layout is a code generator's choice: NNEF has no channels-last
// convolution, so the pass runs in the CPU pipeline only, after declutter.
//
//===----------------------------------------------------------------------===//

#include "dialects/tract/EinsumExpr.h"
#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractFolding.h"
#include "dialects/tract/TractInterfaces.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"
#include "passes/DeclutterPatterns.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/StringExtras.h"

#include <cstring>

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTCHANNELSLAST
#include "passes/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;
using namespace mlir::tract;

namespace {

SmallVector<int64_t> identity(int64_t rank) {
  return llvm::to_vector(llvm::seq<int64_t>(0, rank));
}

/// An axis of a rank-`rank` tensor once its channels (axis 1) move last.
int64_t axisOnceLast(int64_t axis, int64_t rank) {
  if (axis == 1)
    return rank - 1;
  return axis == 0 ? 0 : axis - 1;
}

/// `spec` (an einsum operand's letters) once the channels move last.
std::string lettersOnceLast(StringRef spec) {
  return (spec.take_front(1) + spec.drop_front(2) + spec.substr(1, 1)).str();
}

/// Whether `value` is a tensor whose layout the pass may change: rank 3 to
/// 6, so that axis 1 is the channels of a convolution's input.
bool isFeatureMap(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.getRank() >= 3 && type.getRank() <= 6;
}

/// How many neighbouring groups of a grouped convolution, `perGroup`
/// outputs each, run as one so that a group's outputs fill a vector of
/// `lanes`: the largest count that divides both `group` and
/// lanes / perGroup. The merged groups' kernel is zero between one group's
/// outputs and the others' inputs: m groups cost m times their products,
/// as many as the lanes that m·perGroup outputs would leave empty anyway.
int64_t groupsPerVector(int64_t group, int64_t perGroup, int64_t lanes) {
  if (perGroup <= 0 || perGroup >= lanes || lanes % perGroup)
    return 1;
  for (int64_t merged = lanes / perGroup; merged > 1; --merged)
    if ((lanes / perGroup) % merged == 0 && group % merged == 0)
      return merged;
  return 1;
}

/// A grouped convolution's kernel `weights` (O, C/G, k…) as the
/// channels-last kernel (k…, m·C/G, O) of the same convolution with G/m
/// groups (`merged` = m): input channel j·C/G + c of a merged group feeds
/// the outputs of its group j only. Null for a constant whose bytes are
/// not at hand (a splat).
DenseElementsAttr channelsLastKernel(ElementsAttr weights, int64_t group,
                                     int64_t merged) {
  auto type = cast<RankedTensorType>(weights.getType());
  std::optional<ArrayRef<char>> bytes = tract::constantBytes(weights);
  if (!bytes || !type.hasStaticShape() || type.getRank() < 3)
    return nullptr;
  size_t element = type.getElementTypeBitWidth() / 8;
  int64_t outputs = type.getDimSize(0), channels = type.getDimSize(1);
  int64_t taps = type.getNumElements() / (outputs * channels);
  int64_t perGroup = outputs / group;
  int64_t mergedChannels = merged * channels;
  std::vector<char> result(taps * mergedChannels * outputs * element, 0);
  for (int64_t o = 0; o < outputs; ++o) {
    int64_t slot = (o / perGroup) % merged;
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t t = 0; t < taps; ++t)
        std::memcpy(
            &result[((t * mergedChannels + slot * channels + c) * outputs +
                     o) *
                    element],
            &(*bytes)[((o * channels + c) * taps + t) * element], element);
  }
  SmallVector<int64_t> shape(type.getShape().drop_front(2));
  shape.push_back(mergedChannels);
  shape.push_back(outputs);
  return DenseElementsAttr::getFromRawBuffer(
      RankedTensorType::get(shape, type.getElementType()), result);
}

class Converter {
public:
  Converter(func::FuncOp function, bool dense, int64_t lanes)
      : function(function), builder(function.getContext()), dense(dense),
        lanes(lanes) {}

  void run() {
    Block &body = function.getBody().front();
    for (Operation &op : llvm::make_early_inc_range(body)) {
      if (auto conv = dyn_cast<ConvOp>(op))
        convertConv(conv);
      else if (auto conv = dyn_cast<QuantConvOp>(op))
        convertQuantConv(conv);
      else if (auto conv = dyn_cast<QuantDepthwiseOp>(op))
        convertQuantDepthwise(conv);
      else if (!anyLast(&op))
        continue;
      else if (auto einsum = dyn_cast<EinsumOp>(op))
        convertEinsum(einsum);
      else if (auto reduce = dyn_cast<ReduceOp>(op))
        convertReduce(reduce);
      else if (auto concat = dyn_cast<ConcatOp>(op))
        convertConcat(concat);
      else if (isa<MaxPoolOp, SumPoolOp>(op))
        convertPool(&op);
      else if (auto move = dyn_cast<MoveAxisOp>(op))
        cancelMove(move);
      else if (auto norm = dyn_cast<RmsNormOp>(op))
        convertNorm(norm);
      else if (auto pad = dyn_cast<PadOp>(op))
        convertPad(pad);
      else if (auto cast = dyn_cast<CastOp>(op))
        convertCast(cast);
      else if (isElementwiseOp(&op))
        convertElementwise(&op);
    }
    // The moves back that nothing reads any more, and the constants whose
    // layout changed.
    for (Operation *back : llvm::reverse(backs))
      if (back->use_empty())
        back->erase();
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
      if (isa<ConstOp, MoveAxisOp>(op) && op.use_empty())
        op.erase();
  }

private:
  func::FuncOp function;
  OpBuilder builder;
  bool dense;
  int64_t lanes;
  /// A channels-first value's channels-last twin: move_axis(value, 1, last).
  DenseMap<Value, Value> last;
  SmallVector<Operation *> backs;

  static bool isElementwiseOp(Operation *op) {
    return (isElementwise(op) || isElementwiseUnary(op)) &&
           op->getNumResults() == 1 && op->getNumRegions() == 0 &&
           isFeatureMap(op->getResult(0));
  }

  /// Whether an operand other than a constant is channels last: a
  /// constant (a clip's bound, a quantization's scale) that one op took
  /// channels last does not carry the layout to its other readers.
  bool anyLast(Operation *op) {
    return llvm::any_of(op->getOperands(), [&](Value value) {
      return last.count(value) && !matchPattern(value, m_Constant());
    });
  }

  Value move(Location loc, Value value, int64_t from, int64_t to) {
    return builder.createOrFold<MoveAxisOp>(loc, value, uint64_t(from),
                                            uint64_t(to));
  }

  /// `value` with its axes permuted (result axis i is axis perm[i]): a
  /// constant transposed whatever its size (the folders stop at 64 K
  /// elements, and a kernel left to a move_axis would be transposed at
  /// every run), else the moves.
  Value permute(Location loc, Value value, ArrayRef<int64_t> perm) {
    DenseElementsAttr dense;
    if (matchPattern(value, m_Constant(&dense)))
      if (DenseElementsAttr moved = transposeDense(dense, perm))
        return ConstOp::create(builder, loc, moved.getType(), moved);
    SmallVector<int64_t> current =
        llvm::to_vector(llvm::seq<int64_t>(0, perm.size()));
    for (auto [i, axis] : llvm::enumerate(perm)) {
      int64_t from = llvm::find(current, axis) - current.begin();
      if (from == int64_t(i))
        continue;
      value = move(loc, value, from, i);
      current.erase(current.begin() + from);
      current.insert(current.begin() + i, axis);
    }
    return value;
  }

  /// The channels-last twin of `value`: the one known, else a move_axis
  /// right after its definition (folded for a constant).
  Value toLast(Value value) {
    if (auto it = last.find(value); it != last.end())
      return it->second;
    auto type = cast<RankedTensorType>(value.getType());
    int64_t rank = type.getRank();
    // A model's own move of the channels first (an NHWC model's input).
    if (auto move = value.getDefiningOp<MoveAxisOp>();
        move && move.getFrom() == uint64_t(rank - 1) && move.getTo() == 1)
      return last[value] = move.getInput();
    // An einsum writes its result channels last itself (ConvNeXt's second
    // MLP product, whose letters took the model's move back to the
    // channels first).
    if (auto einsum = value.getDefiningOp<EinsumOp>()) {
      EinsumExpr expr = EinsumExpr::parse(einsum.getExpr());
      std::string text = llvm::join(expr.inputs, ",") + "->" +
                         lettersOnceLast(expr.output);
      OpBuilder::InsertionGuard guard(builder);
      Operation *copy =
          rebuild(einsum, einsum.getInputs(), [&](Operation *copy) {
            copy->setAttr("expr", StringAttr::get(copy->getContext(), text));
          });
      if (copy) {
        replace(einsum, copy->getResult(0));
        return copy->getResult(0);
      }
    }
    // So does an element-wise op read by nothing else, on the operands
    // channels last (the layer scale after that product).
    if (Operation *def = value.getDefiningOp();
        def && value.hasOneUse() && isElementwiseOp(def)) {
      SmallVector<Value> operands = operandsLast(def);
      OpBuilder::InsertionGuard guard(builder);
      if (Operation *copy = operands.empty() ? nullptr
                                             : rebuild(def, operands)) {
        replace(def, copy->getResult(0));
        return copy->getResult(0);
      }
    }
    OpBuilder::InsertionGuard guard(builder);
    if (Operation *def = value.getDefiningOp())
      builder.setInsertionPointAfter(def);
    else
      builder.setInsertionPointToStart(value.getParentBlock());
    Value moved =
        matchPattern(value, m_Constant())
            ? permute(value.getLoc(), value,
                      channelsLastOf(ArrayRef(identity(rank))))
            : move(value.getLoc(), value, 1, rank - 1);
    last[value] = moved;
    return moved;
  }

  /// Replaces `op`'s result by `result`, channels last: readers of the old
  /// one get a move back, which the pass drops if none is left.
  void replace(Operation *op, Value result) {
    int64_t rank = cast<RankedTensorType>(result.getType()).getRank();
    builder.setInsertionPointAfterValue(result);
    auto back = MoveAxisOp::create(builder, op->getLoc(), result,
                                   uint64_t(rank - 1), uint64_t(1));
    backs.push_back(back);
    op->getResult(0).replaceAllUsesWith(back.getResult());
    last[back.getResult()] = result;
    op->erase();
  }

  /// A copy of `op` on `operands` before it, its result type inferred.
  Operation *rebuild(Operation *op, ValueRange operands,
                     function_ref<void(Operation *)> adjust = {}) {
    builder.setInsertionPoint(op);
    Operation *copy = builder.clone(*op);
    copy->setOperands(operands);
    if (adjust)
      adjust(copy);
    SmallVector<Type> types;
    auto infer = dyn_cast<InferTypeOpInterface>(copy);
    if (!infer ||
        failed(infer.inferReturnTypes(
            copy->getContext(), copy->getLoc(), copy->getOperands(),
            copy->getAttrDictionary(), copy->getPropertiesStorage(),
            copy->getRegions(), types))) {
      copy->erase();
      return nullptr;
    }
    copy->getResult(0).setType(types[0]);
    return copy;
  }

  void convertConv(ConvOp conv) {
    Shape input = getShape(conv.getInput());
    Shape kernel = getShape(conv.getKernel());
    size_t rank = input.size();
    if (conv.getChannelsLast() || rank < 3 || rank > 5)
      return;
    int64_t group = conv.getGroup();
    bool depthwise = group > 1 && input[1] == TDim(group) &&
                     kernel[0] == TDim(group);
    if (!depthwise && !dense)
      return;
    if (!isa<FloatType>(getElementTypeOrSelf(conv.getType())))
      return;
    Value x = toLast(conv.getInput());
    builder.setInsertionPoint(conv);
    Location loc = conv.getLoc();
    // The kernel O, C/group, k… as k…, C/group, O; a grouped convolution
    // whose groups have fewer outputs than a vector holds runs neighbouring
    // groups as one (groupsPerVector).
    Value w;
    int64_t merged = 1;
    ElementsAttr weights;
    if (!depthwise && group > 1 &&
        matchPattern(conv.getKernel(), m_Constant(&weights))) {
      std::optional<int64_t> outputs = kernel[0].getConstant();
      if (outputs)
        merged = groupsPerVector(group, *outputs / group, lanes);
      if (DenseElementsAttr moved = channelsLastKernel(weights, group, merged))
        w = ConstOp::create(builder, loc, moved.getType(), moved);
      else
        merged = 1;
    }
    if (!w) {
      SmallVector<int64_t> perm;
      for (size_t i = 2; i < rank; ++i)
        perm.push_back(i);
      perm.push_back(1);
      perm.push_back(0);
      w = permute(loc, conv.getKernel(), perm);
    }
    SmallVector<Value> operands{x, w};
    if (conv.getBias())
      operands.push_back(conv.getBias());
    Operation *copy = rebuild(conv, operands, [&](Operation *copy) {
      copy->setAttr("channels_last", UnitAttr::get(copy->getContext()));
      if (merged > 1)
        copy->setAttr("group", builder.getI64IntegerAttr(group / merged));
    });
    if (copy)
      replace(conv, copy->getResult(0));
  }

  /// An 8-bit convolution (group 1) of static shapes. A 1x1 one on an
  /// input that comes channels first stays so: it is a product on the
  /// channels-first pixels as it is (MobileNet's, between depthwise ones).
  void convertQuantConv(QuantConvOp conv) {
    if (conv.getChannelsLast() || !dense)
      return;
    auto input = cast<RankedTensorType>(conv.getInput().getType());
    auto kernel = cast<RankedTensorType>(conv.getWeights().getType());
    if (!input.hasStaticShape() || !kernel.hasStaticShape() ||
        !matchPattern(conv.getWeights(), m_Constant()))
      return;
    if (kernel.getDimSize(2) * kernel.getDimSize(3) == 1 &&
        !last.count(conv.getInput()))
      return;
    Value x = toLast(conv.getInput());
    builder.setInsertionPoint(conv);
    Location loc = conv.getLoc();
    Value w = permute(loc, conv.getWeights(), {2, 3, 1, 0});
    // The kernels read four channels at a time: a stem's three become four,
    // the fourth the input's zero point (it adds nothing to the sums,
    // whatever its weights), padded where the input is padded.
    int64_t channels = input.getDimSize(1);
    if (int64_t extra = -channels & 3) {
      DenseElementsAttr weights;
      if (!matchPattern(w, m_Constant(&weights)) || weights.isSplat())
        return;
      auto type = cast<RankedTensorType>(weights.getType());
      int64_t outputs = type.getDimSize(3),
              taps = type.getDimSize(0) * type.getDimSize(1);
      ArrayRef<char> raw = weights.getRawData();
      std::vector<char> widened(taps * (channels + extra) * outputs, 0);
      for (int64_t t = 0; t < taps; ++t)
        std::memcpy(&widened[t * (channels + extra) * outputs],
                    &raw[t * channels * outputs], channels * outputs);
      auto widenedType = RankedTensorType::get(
          {type.getDimSize(0), type.getDimSize(1), channels + extra, outputs},
          type.getElementType());
      w = ConstOp::create(builder, loc, widenedType,
                          DenseElementsAttr::getFromRawBuffer(
                              widenedType, ArrayRef<char>(widened)));
      Type element = getElementTypeOrSelf(x);
      auto zero = IntegerAttr::get(element, conv.getInputZero());
      SmallVector<int64_t> before(4, 0), after(4, 0);
      after[3] = extra;
      // One pad for both: the spatial one before, when it is the same.
      if (auto pad = x.getDefiningOp<PadOp>();
          pad && pad->hasOneUse() && pad.getMode() == PadMode::Constant &&
          pad.getValueAttr() == zero) {
        before = llvm::to_vector(pad.getBefore());
        after = llvm::to_vector(pad.getAfter());
        after[3] += extra;
        x = pad.getInput();
      }
      x = PadOp::create(builder, loc, x, before, after, PadMode::Constant,
                        zero);
    }
    SmallVector<Value> operands{x, w};
    if (conv.getBias())
      operands.push_back(conv.getBias());
    Operation *copy = rebuild(conv, operands, [&](Operation *copy) {
      copy->setAttr("channels_last", UnitAttr::get(copy->getContext()));
    });
    if (copy)
      replace(conv, copy->getResult(0));
  }

  /// A cast of a feature map (the dequantization after an 8-bit
  /// convolution): its type names its result's shape.
  void convertCast(CastOp cast) {
    auto type = cast.getType();
    if (!isFeatureMap(cast.getResult()) || type.getEncoding() ||
        !type.hasStaticShape())
      return;
    builder.setInsertionPoint(cast);
    auto moved = CastOp::create(
        builder, cast.getLoc(),
        RankedTensorType::get(channelsLastOf(type.getShape()),
                              type.getElementType()),
        last[cast.getInput()]);
    replace(cast, moved.getResult());
  }

  /// An 8-bit depthwise convolution of static shapes, as the float ones:
  /// always (its channels on the lanes).
  void convertQuantDepthwise(QuantDepthwiseOp conv) {
    if (conv.getChannelsLast() ||
        !cast<RankedTensorType>(conv.getInput().getType()).hasStaticShape())
      return;
    SmallVector<Value> operands{toLast(conv.getInput()), conv.getWeights()};
    if (conv.getBias())
      operands.push_back(conv.getBias());
    Operation *copy = rebuild(conv, operands, [&](Operation *copy) {
      copy->setAttr("channels_last", UnitAttr::get(copy->getContext()));
    });
    if (copy)
      replace(conv, copy->getResult(0));
  }

  /// A pad of a feature map: its pads move with the axes.
  void convertPad(PadOp pad) {
    if (!isFeatureMap(pad.getResult()))
      return;
    Value input = last[pad.getInput()];
    Operation *copy = rebuild(pad, {input}, [&](Operation *copy) {
      copy->setAttr("before", builder.getDenseI64ArrayAttr(
                                  channelsLastOf(pad.getBefore())));
      copy->setAttr("after", builder.getDenseI64ArrayAttr(
                                 channelsLastOf(pad.getAfter())));
    });
    if (copy)
      replace(pad, copy->getResult(0));
  }

  void convertEinsum(EinsumOp einsum) {
    EinsumExpr expr = EinsumExpr::parse(einsum.getExpr());
    SmallVector<Value> operands;
    SmallVector<std::string> specs;
    std::string spatial; // the letters of the converted inputs' pixels
    for (auto [input, spec] : llvm::zip(einsum.getInputs(), expr.inputs)) {
      if (last.count(input) && spec.size() >= 3) {
        operands.push_back(last[input]);
        specs.push_back(lettersOnceLast(spec));
        spatial += spec.substr(2);
      } else {
        operands.push_back(input);
        specs.push_back(spec);
      }
    }
    // The result moves its axis 1 last when that axis is not a pixel axis
    // and its last is: a 1x1 convolution's `noxy` becomes `nxyo`, but a
    // product over the channels of pixels already last (ConvNeXt's MLP,
    // `ABmn`) keeps its letters.
    std::string output = expr.output;
    bool outputLast = output.size() >= 3 && output.size() <= 6 &&
                      !llvm::is_contained(spatial, output[1]) &&
                      llvm::is_contained(spatial, output.back());
    if (outputLast)
      output = lettersOnceLast(output);
    std::string text = llvm::join(specs, ",") + "->" + output;
    Operation *copy = rebuild(einsum, operands, [&](Operation *copy) {
      copy->setAttr("expr", StringAttr::get(copy->getContext(), text));
    });
    if (!copy)
      return;
    if (outputLast) {
      replace(einsum, copy->getResult(0));
    } else {
      einsum.getResult().replaceAllUsesWith(copy->getResult(0));
      einsum->erase();
    }
  }

  /// Reads the operands channels last, when they all have the result's
  /// rank (broadcast operands of lower rank keep the op as it is).
  SmallVector<Value> operandsLast(Operation *op) {
    int64_t rank = cast<RankedTensorType>(op->getResult(0).getType()).getRank();
    SmallVector<Value> operands;
    for (Value operand : op->getOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.getType());
      if (!type || type.getRank() != rank)
        return {};
    }
    for (Value operand : op->getOperands())
      operands.push_back(toLast(operand));
    return operands;
  }

  void convertElementwise(Operation *op) {
    SmallVector<Value> operands = operandsLast(op);
    if (operands.empty())
      return;
    if (Operation *copy = rebuild(op, operands))
      replace(op, copy->getResult(0));
  }

  void convertNorm(RmsNormOp norm) {
    int64_t rank = norm.getType().getRank();
    int64_t axis = axisOnceLast(norm.getAxis(), rank);
    Operation *copy =
        rebuild(norm, {last[norm.getInput()]}, [&](Operation *copy) {
          copy->setAttr("axis", builder.getI64IntegerAttr(axis));
        });
    if (copy)
      replace(norm, copy->getResult(0));
  }

  void convertReduce(ReduceOp reduce) {
    if (!isFeatureMap(reduce.getResult()))
      return;
    int64_t rank = reduce.getType().getRank();
    SmallVector<int64_t> axes;
    for (int64_t axis : reduce.getAxes())
      axes.push_back(axisOnceLast(axis, rank));
    llvm::sort(axes);
    Value input = last[reduce.getInput()];
    Operation *copy = rebuild(reduce, {input}, [&](Operation *copy) {
      copy->setAttr("axes", builder.getDenseI64ArrayAttr(axes));
    });
    if (copy)
      replace(reduce, copy->getResult(0));
  }

  void convertConcat(ConcatOp concat) {
    if (!isFeatureMap(concat.getResult()))
      return;
    SmallVector<Value> operands = operandsLast(concat);
    if (operands.empty())
      return;
    int64_t rank = concat.getType().getRank();
    int64_t axis = axisOnceLast(concat.getAxis(), rank);
    Operation *copy = rebuild(concat, operands, [&](Operation *copy) {
      copy->setAttr("axis", builder.getI64IntegerAttr(axis));
    });
    if (copy)
      replace(concat, copy->getResult(0));
  }

  /// A max or sum pool of one or two spatial axes (linalg's channels-last
  /// pools), on floats (a max pool on integers too), without indices.
  void convertPool(Operation *pool) {
    auto type = cast<RankedTensorType>(pool->getResult(0).getType());
    Type element = type.getElementType();
    bool integer = isa<IntegerType>(element) && !element.isInteger(1);
    if (type.getRank() < 3 || type.getRank() > 4 ||
        !(isa<FloatType>(element) || (integer && isa<MaxPoolOp>(pool))))
      return;
    if (auto max = dyn_cast<MaxPoolOp>(pool); max && max.getWithIndex())
      return;
    Value input = last[pool->getOperand(0)];
    Operation *copy = rebuild(pool, {input}, [](Operation *copy) {
      copy->setAttr("channels_last", UnitAttr::get(copy->getContext()));
    });
    if (copy)
      replace(pool, copy->getResult(0));
  }

  /// A model's own move of the channels last (ConvNeXt's permute before
  /// its layer norm) reads the twin as it is.
  void cancelMove(MoveAxisOp op) {
    int64_t rank = op.getType().getRank();
    if (op.getFrom() != 1 || op.getTo() != uint64_t(rank - 1))
      return;
    op.getResult().replaceAllUsesWith(last[op.getInput()]);
    op->erase();
  }
};

struct TractChannelsLast
    : public tract::impl::TractChannelsLastBase<TractChannelsLast> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp function) {
      if (!function.getBody().empty())
        Converter(function, dense, lanes).run();
    });
  }
};

} // namespace
