//===- DeclutterAxes.cpp - axis-change propagation ------------------------===//
//
// A transpose imports as a chain of move_axis ops. Chains are composed into
// the fewest moves of their permutation (none when it is the identity). A
// move_axis is pushed down through element-wise ops, slices, axis ops,
// reductions and normalizations (split per reader when it has several),
// or pulled up into the einsum above, so that it meets its inverse or
// becomes einsum letters. add_axis/rm_axis pairs on the same axis cancel;
// reshapes and slices of their own kind compose.
//
//===----------------------------------------------------------------------===//

#include "dialects/tract/TractAttrs.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"
#include "passes/DeclutterPatterns.h"

#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::tract;

namespace {

/// The permutation a move applies: output axis i is input axis perm[i].
void applyMove(SmallVectorImpl<int64_t> &perm, int64_t from, int64_t to) {
  int64_t moved = perm[from];
  perm.erase(perm.begin() + from);
  perm.insert(perm.begin() + to, moved);
}

/// The fewest (from, to) moves that arrange the identity as `perm`: the
/// axes of a longest increasing subsequence stay, each other one moves once
/// right after its predecessor in `perm`.
SmallVector<std::pair<int64_t, int64_t>> movesFor(ArrayRef<int64_t> perm) {
  int64_t n = perm.size();
  // Longest increasing subsequence, quadratic: ranks are small.
  SmallVector<int64_t> length(n, 1), previous(n, -1);
  int64_t best = -1;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < i; ++j)
      if (perm[j] < perm[i] && length[j] + 1 > length[i]) {
        length[i] = length[j] + 1;
        previous[i] = j;
      }
    if (best < 0 || length[i] > length[best])
      best = i;
  }
  SmallVector<bool> stays(n, false);
  for (int64_t i = best; i >= 0; i = previous[i])
    stays[i] = true;
  SmallVector<int64_t> current = llvm::to_vector(llvm::seq<int64_t>(0, n));
  SmallVector<std::pair<int64_t, int64_t>> moves;
  for (int64_t i = 0; i < n; ++i) {
    if (stays[i])
      continue;
    int64_t from = llvm::find(current, perm[i]) - current.begin();
    current.erase(current.begin() + from);
    int64_t to = 0;
    if (i > 0)
      to = llvm::find(current, perm[i - 1]) - current.begin() + 1;
    current.insert(current.begin() + to, perm[i]);
    if (from != to)
      moves.push_back({from, to});
  }
  return moves;
}

/// A chain of move_axis ops ending at `op` becomes the fewest moves of the
/// permutation it applies: the identity (no move) when a transpose meets
/// its inverse.
LogicalResult composeMoveAxisChain(MoveAxisOp op, PatternRewriter &rewriter) {
  SmallVector<MoveAxisOp> chain{op};
  Value root = op.getInput();
  while (auto previous = root.getDefiningOp<MoveAxisOp>()) {
    chain.push_back(previous);
    root = previous.getInput();
  }
  if (chain.size() < 2)
    return rewriter.notifyMatchFailure(op, "a single move");
  int64_t rank = cast<RankedTensorType>(root.getType()).getRank();
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  for (MoveAxisOp move : llvm::reverse(chain))
    applyMove(perm, move.getFrom(), move.getTo());
  SmallVector<std::pair<int64_t, int64_t>> moves = movesFor(perm);
  if (moves.size() >= chain.size())
    return rewriter.notifyMatchFailure(op, "already the fewest moves");
  Value result = root;
  for (auto [from, to] : moves)
    result = MoveAxisOp::create(rewriter, op.getLoc(), result,
                                static_cast<uint64_t>(from),
                                static_cast<uint64_t>(to));
  rewriter.replaceOp(op, result);
  return success();
}

/// rm_axis(add_axis(x, a), a) -> x.
LogicalResult cancelAddThenRmAxis(RmAxisOp op, PatternRewriter &rewriter) {
  auto add = op.getInput().getDefiningOp<AddAxisOp>();
  if (!add || add.getAxis() != op.getAxis())
    return rewriter.notifyMatchFailure(op, "not after add_axis of its axis");
  rewriter.replaceOp(op, add.getInput());
  return success();
}

/// add_axis(rm_axis(x, a), a) -> x.
LogicalResult cancelRmThenAddAxis(AddAxisOp op, PatternRewriter &rewriter) {
  auto rm = op.getInput().getDefiningOp<RmAxisOp>();
  if (!rm || rm.getAxis() != op.getAxis() ||
      rm.getInput().getType() != op.getType())
    return rewriter.notifyMatchFailure(op, "not after rm_axis of its axis");
  rewriter.replaceOp(op, rm.getInput());
  return success();
}

/// A copy of `op` on `operands`, changed by `adjust`, its result type
/// inferred.
Value cloneOn(PatternRewriter &rewriter, Operation *op, ValueRange operands,
              function_ref<void(Operation *copy)> adjust = {}) {
  Operation *copy = rewriter.clone(*op);
  copy->setOperands(operands);
  if (adjust)
    adjust(copy);
  SmallVector<Type> types;
  if (auto infer = dyn_cast<InferTypeOpInterface>(copy);
      infer && succeeded(infer.inferReturnTypes(
                   copy->getContext(), copy->getLoc(), copy->getOperands(),
                   copy->getAttrDictionary(), copy->getPropertiesStorage(),
                   copy->getRegions(), types)))
    copy->getResult(0).setType(
        keepQuantization(types[0], op->getResult(0).getType()));
  else
    copy->getResult(0).setType(operands[0].getType());
  return copy->getResult(0);
}

/// Whether a move_axis of `value` can be absorbed above it: `value` is read
/// once and is an einsum's result, or an element-wise op of such values and
/// constants (the move travels up to the einsum).
bool absorbable(Value value, int depth) {
  Operation *op = value.getDefiningOp();
  if (!op || !value.hasOneUse() || depth > 4)
    return false;
  if (auto einsum = dyn_cast<EinsumOp>(op))
    return einsum.getExpr().contains("->");
  if (!isElementwiseUnary(op) && !isElementwiseBinary(op))
    return false;
  bool any = false;
  for (Value operand : op->getOperands()) {
    if (DenseElementsAttr constant = getConstantValue(operand)) {
      if (!constant.isSplat() && constant.getNumElements() > 4096)
        return false;
      continue;
    }
    if (!absorbable(operand, depth + 1))
      return false;
    any = true;
  }
  return any;
}

/// move_axis(f(x, c)) -> f(move_axis(x), move_axis(c)) for element-wise f
/// when x is absorbable: an einsum's result (the move becomes its output
/// letters), perhaps through more element-wise ops. The bias add between a
/// 1x1 convolution and a transpose to channels-last is the usual case.
LogicalResult pullMoveAxisUp(MoveAxisOp op, PatternRewriter &rewriter) {
  Value input = op.getInput();
  Operation *producer = input.getDefiningOp();
  if (!producer || isa<EinsumOp>(producer) || !absorbable(input, 0))
    return rewriter.notifyMatchFailure(op, "nothing above absorbs it");
  SmallVector<Value> operands;
  for (Value operand : producer->getOperands())
    operands.push_back(MoveAxisOp::create(rewriter, operand.getLoc(), operand,
                                          op.getFrom(), op.getTo()));
  rewriter.replaceOp(op, cloneOn(rewriter, producer, operands));
  // Its only reader gone, the producer goes now: the einsum above must
  // be seen read once.
  rewriter.eraseOp(producer);
  return success();
}

/// The permutation a move_axis applies: output axis i is input axis
/// perm[i].
SmallVector<int64_t> permutationOf(MoveAxisOp move) {
  int64_t rank = move.getType().getRank();
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  applyMove(perm, move.getFrom(), move.getTo());
  return perm;
}

/// `value` permuted by `perm` (output axis i is input axis perm[i]) with
/// the fewest moves.
Value permute(PatternRewriter &rewriter, Location loc, Value value,
              ArrayRef<int64_t> perm) {
  for (auto [from, to] : movesFor(perm))
    value =
        MoveAxisOp::create(rewriter, loc, value, static_cast<uint64_t>(from),
                           static_cast<uint64_t>(to));
  return value;
}

/// rm_axis(f(add_axis(x, a)), a) -> f(x) for a normalization f (softmax,
/// log_softmax, rms_norm) over other axes, which are renumbered: the unit
/// axis a model adds around one op (an exporter's unsqueeze/squeeze pair)
/// goes away.
LogicalResult cancelAxisAroundNormalization(RmAxisOp op,
                                            PatternRewriter &rewriter) {
  Operation *norm = op.getInput().getDefiningOp();
  if (!norm || !isa<SoftmaxOp, LogSoftmaxOp, RmsNormOp>(norm) ||
      !norm->hasOneUse())
    return rewriter.notifyMatchFailure(op, "not after a normalization");
  auto add = norm->getOperand(0).getDefiningOp<AddAxisOp>();
  int64_t axis = op.getAxis();
  if (!add || add.getAxis() != op.getAxis() || !add->hasOneUse())
    return rewriter.notifyMatchFailure(op, "no add_axis of its axis");
  // The normalized axes, without the added one.
  SmallVector<int64_t> axes;
  for (int64_t a : cast<WorkAxesOpInterface>(norm).getWorkAxes()) {
    if (a == axis)
      return rewriter.notifyMatchFailure(op, "normalizes the added axis");
    axes.push_back(a > axis ? a - 1 : a);
  }
  Value result = cloneOn(rewriter, norm, add.getInput(), [&](Operation *copy) {
    cast<WorkAxesOpInterface>(copy).setWorkAxes(axes);
  });
  rewriter.replaceOp(op, result);
  return success();
}

/// op(move_axis(x)) -> move_axis'(op'(x)) for an op that tracks axes
/// (slices, add_axis, rm_axis, reductions, normalizations): op' reads x with
/// its axes renumbered and its result takes the permutation the op gives
/// (none when the identity). Every reader of the move must track axes (the
/// q, k, v slices of an attention): each gets its own move, which travels
/// on to meet an einsum.
struct PushMoveAxisThroughAxisTracking
    : OpInterfaceRewritePattern<AxisTrackingOpInterface> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(AxisTrackingOpInterface op,
                                PatternRewriter &rewriter) const override {
    auto move = op->getOperand(0).getDefiningOp<MoveAxisOp>();
    if (!move || !llvm::all_of(move->getUsers(), [](Operation *user) {
          return isa<AxisTrackingOpInterface>(user);
        }))
      return rewriter.notifyMatchFailure(op, "not after a move it can take");
    SmallVector<int64_t> perm = permutationOf(move);
    std::optional<SmallVector<int64_t>> resultPerm =
        op.getResultPermutation(perm);
    if (!resultPerm)
      return rewriter.notifyMatchFailure(op, "cannot take the permutation");
    Value result = cloneOn(rewriter, op, move.getInput(), [&](Operation *copy) {
      cast<AxisTrackingOpInterface>(copy).readUnpermuted(perm);
    });
    // The move's own (from, to) when the permutation passes through.
    if (*resultPerm == perm)
      result = MoveAxisOp::create(rewriter, op->getLoc(), result,
                                  move.getFrom(), move.getTo());
    else
      result = permute(rewriter, op->getLoc(), result, *resultPerm);
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// f(move_axis(x)) -> move_axis(f(x)) for element-wise f, and
/// g(move_axis(x), c) -> move_axis(g(x, move_axis⁻¹(c))) for a constant or
/// an identically moved other operand: the move travels down to meet its
/// inverse (or the output).
struct PushMoveAxisDown : RewritePattern {
  PushMoveAxisDown(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    bool unary = isElementwiseUnary(op);
    if (!unary && !isElementwiseBinary(op))
      return failure();
    MoveAxisOp move;
    for (Value operand : op->getOperands())
      if ((move = operand.getDefiningOp<MoveAxisOp>()))
        break;
    if (!move || !move->hasOneUse())
      return rewriter.notifyMatchFailure(op, "no single-use move_axis operand");
    if (absorbable(move.getInput(), 0))
      return rewriter.notifyMatchFailure(op, "the einsum above absorbs it");
    uint64_t from = move.getFrom(), to = move.getTo();
    SmallVector<Value> operands;
    for (Value operand : op->getOperands()) {
      auto other = operand.getDefiningOp<MoveAxisOp>();
      if (other && other.getFrom() == from && other.getTo() == to &&
          (other == move || other->hasOneUse())) {
        operands.push_back(other.getInput());
        continue;
      }
      if (absorbable(operand, 0)) {
        // The einsum above takes the inverse move into its letters.
        operands.push_back(
            MoveAxisOp::create(rewriter, operand.getLoc(), operand, to, from));
        continue;
      }
      DenseElementsAttr constant = getConstantValue(operand);
      if (!constant)
        return rewriter.notifyMatchFailure(op, "an operand cannot be moved");
      // Small constants only: the inverse move folds into them.
      if (!constant.isSplat() && constant.getNumElements() > 4096)
        return rewriter.notifyMatchFailure(op, "large constant operand");
      operands.push_back(MoveAxisOp::create(rewriter, operand.getLoc(), operand,
                                            static_cast<uint64_t>(to),
                                            static_cast<uint64_t>(from)));
    }
    Value result = cloneOn(rewriter, op, operands);
    rewriter.replaceOpWithNewOp<MoveAxisOp>(
        op, result, static_cast<uint64_t>(from), static_cast<uint64_t>(to));
    return success();
  }
};

/// Whether `value` is computed from `source` within a few ops.
bool derivesFrom(Value value, Value source, int depth) {
  if (value == source)
    return true;
  Operation *op = value.getDefiningOp();
  if (!op || depth > 8)
    return false;
  return llvm::any_of(op->getOperands(), [&](Value operand) {
    return derivesFrom(operand, source, depth + 1);
  });
}

/// Whether `user` lets a move of its operand `moved` through (or absorbs
/// it): the rewrites above handle it once the move is its own.
bool takesMove(Operation *user, Value moved) {
  if (isa<AxisTrackingOpInterface>(user) || isElementwiseUnary(user))
    return true;
  if (auto einsum = dyn_cast<EinsumOp>(user))
    return einsum.getExpr().contains("->");
  if (!isElementwiseBinary(user))
    return false;
  return llvm::all_of(user->getOperands(), [&](Value operand) {
    DenseElementsAttr constant = getConstantValue(operand);
    return operand == moved ||
           (constant &&
            (constant.isSplat() || constant.getNumElements() <= 4096)) ||
           absorbable(operand, 0) || derivesFrom(operand, moved, 0);
  });
}

/// A move read by several ops that all let it through becomes one move per
/// reader, so that each travels on (and they meet again, or vanish into
/// einsums): the transpose into a transformer's sequence layout that the
/// residual stream and the layer norms both read.
LogicalResult splitSharedMoveAxis(MoveAxisOp op, PatternRewriter &rewriter) {
  if (op->hasOneUse() || op->use_empty())
    return rewriter.notifyMatchFailure(op, "a single reader");
  if (!llvm::all_of(op->getUsers(), [&](Operation *user) {
        return takesMove(user, op.getResult());
      }))
    return rewriter.notifyMatchFailure(op, "a reader stops the move");
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : op->getUses())
    uses.push_back(&use);
  for (OpOperand *use : llvm::drop_begin(uses)) {
    rewriter.setInsertionPoint(use->getOwner());
    Value copy = MoveAxisOp::create(rewriter, op.getLoc(), op.getInput(),
                                    op.getFrom(), op.getTo());
    rewriter.modifyOpInPlace(use->getOwner(), [&] { use->set(copy); });
  }
  return success();
}

/// The einsum letters of `spec` after moving the one at `from` to `to`.
std::string moveLetter(StringRef spec, int64_t from, int64_t to) {
  std::string letters = spec.str();
  char moved = letters[from];
  letters.erase(letters.begin() + from);
  letters.insert(letters.begin() + to, moved);
  return letters;
}

/// einsum(…, move_axis(x), …) -> einsum(…, x, …) with that operand's
/// letters moved back: the contraction reads the axes where they are.
LogicalResult absorbMoveAxisIntoEinsumInput(EinsumOp op,
                                            PatternRewriter &rewriter) {
  auto [inputsPart, outputPart] = op.getExpr().split("->");
  if (!op.getExpr().contains("->"))
    return rewriter.notifyMatchFailure(op, "implicit output");
  SmallVector<StringRef> specs;
  inputsPart.split(specs, ',');
  SmallVector<std::string> newSpecs(specs.begin(), specs.end());
  SmallVector<Value> operands(op.getInputs());
  bool changed = false;
  for (auto [i, operand] : llvm::enumerate(operands)) {
    auto move = operand.getDefiningOp<MoveAxisOp>();
    if (!move || newSpecs[i].size() !=
                     static_cast<size_t>(
                         cast<RankedTensorType>(operand.getType()).getRank()))
      continue;
    newSpecs[i] = moveLetter(newSpecs[i], move.getTo(), move.getFrom());
    operand = move.getInput();
    changed = true;
  }
  if (!changed)
    return rewriter.notifyMatchFailure(op, "no moved operand");
  std::string expr = llvm::join(newSpecs, ",") + "->" + outputPart.str();
  rewriter.replaceOpWithNewOp<EinsumOp>(op, op.getType(), operands,
                                        rewriter.getStringAttr(expr));
  return success();
}

/// move_axis(einsum(…)) -> einsum(…) with the output letters moved.
LogicalResult absorbMoveAxisIntoEinsumOutput(MoveAxisOp op,
                                             PatternRewriter &rewriter) {
  auto einsum = op.getInput().getDefiningOp<EinsumOp>();
  if (!einsum || !einsum->hasOneUse() || !einsum.getExpr().contains("->"))
    return rewriter.notifyMatchFailure(op, "not the only user of an einsum");
  auto [inputsPart, outputPart] = einsum.getExpr().split("->");
  if (outputPart.size() != static_cast<size_t>(op.getType().getRank()))
    return rewriter.notifyMatchFailure(op, "output letters do not match");
  std::string expr = inputsPart.str() + "->" +
                     moveLetter(outputPart, op.getFrom(), op.getTo());
  rewriter.replaceOpWithNewOp<EinsumOp>(op, op.getType(), einsum.getInputs(),
                                        rewriter.getStringAttr(expr));
  return success();
}

/// slice(slice(x, a, s1, e1), a, s2, e2) -> slice(x, a, s1 + s2, s1 + e2).
LogicalResult composeSlices(SliceOp op, PatternRewriter &rewriter) {
  auto inner = op.getInput().getDefiningOp<SliceOp>();
  if (!inner || inner.getAxis() != op.getAxis())
    return rewriter.notifyMatchFailure(op, "not a slice of a slice");
  MLIRContext *context = op.getContext();
  TDim offset = inner.getStart().getValue();
  rewriter.replaceOpWithNewOp<SliceOp>(
      op, op.getType(), inner.getInput(), op.getAxis(),
      DimAttr::get(context, offset + op.getStart().getValue()),
      DimAttr::get(context, offset + op.getEnd().getValue()));
  return success();
}

/// A scatter_nd of constant indices that writes one block (the updates,
/// in order, over a run of one axis and the whole of the others) is the
/// data before the block, the updates and the data after, concatenated:
/// no scatter, no index tensor.
LogicalResult scatterNdBlockToConcat(ScatterNdOp op,
                                     PatternRewriter &rewriter) {
  if (op.getReduction() != ScatterReduction::None)
    return rewriter.notifyMatchFailure(op, "a reduction");
  DenseElementsAttr indices = getConstantValue(op.getIndices());
  if (!indices || !isa<IntegerType>(indices.getElementType()))
    return rewriter.notifyMatchFailure(op, "indices not constant");
  ArrayRef<int64_t> indexShape = indices.getType().getShape();
  Shape dataShape = getShape(op.getData()),
        updateShape = getShape(op.getUpdates());
  int64_t depth = indexShape.empty() ? 0 : indexShape.back();
  int64_t grid = int64_t(indexShape.size()) - 1;
  // One index row per element of the first `depth` data axes written.
  if (grid != depth || depth == 0 || int64_t(dataShape.size()) < depth ||
      int64_t(updateShape.size()) != int64_t(dataShape.size()))
    return rewriter.notifyMatchFailure(op, "not a block of whole rows");
  SmallVector<int64_t> data, block(indexShape.begin(), indexShape.end() - 1);
  for (int64_t axis = 0; axis < depth; ++axis) {
    std::optional<int64_t> size = dataShape[axis].getConstant();
    if (!size || updateShape[axis] != TDim(block[axis]))
      return rewriter.notifyMatchFailure(op, "dynamic or mismatched");
    data.push_back(*size);
  }
  // Each row must be its position in the block plus one offset.
  SmallVector<int64_t> offset(depth, -1);
  SmallVector<int64_t> position(depth, 0);
  auto values = indices.getValues<APInt>();
  for (int64_t row = 0, rows = indices.getNumElements() / depth; row < rows;
       ++row) {
    for (int64_t axis = 0; axis < depth; ++axis) {
      int64_t index = values[row * depth + axis].getSExtValue();
      if (index < 0)
        index += data[axis];
      int64_t shift = index - position[axis];
      if (offset[axis] < 0)
        offset[axis] = shift;
      if (shift != offset[axis] || shift < 0)
        return rewriter.notifyMatchFailure(op, "not one block");
    }
    for (int64_t axis = depth - 1; axis >= 0; --axis)
      if (++position[axis] < block[axis])
        break;
      else
        position[axis] = 0;
  }
  // The block spans every axis but at most one.
  std::optional<int64_t> along;
  for (int64_t axis = 0; axis < depth; ++axis)
    if (block[axis] != data[axis]) {
      if (along)
        return rewriter.notifyMatchFailure(op, "a block along two axes");
      along = axis;
    }
  if (!along) {
    rewriter.replaceOp(op, op.getUpdates());
    return success();
  }
  int64_t axis = *along, begin = offset[axis], end = begin + block[axis];
  if (end > data[axis])
    return rewriter.notifyMatchFailure(op, "out of bounds");
  Location loc = op.getLoc();
  auto dim = [&](int64_t value) {
    return DimAttr::get(rewriter.getContext(), TDim(value));
  };
  SmallVector<Value> parts;
  if (begin > 0)
    parts.push_back(SliceOp::create(rewriter, loc, op.getData(), uint64_t(axis),
                                    dim(0), dim(begin)));
  parts.push_back(op.getUpdates());
  if (end < data[axis])
    parts.push_back(SliceOp::create(rewriter, loc, op.getData(), uint64_t(axis),
                                    dim(end), dim(data[axis])));
  rewriter.replaceOpWithNewOp<ConcatOp>(op, parts, uint64_t(axis));
  return success();
}

/// A slice of a concat along its axis that falls within one of the
/// concatenated inputs is a slice of that input (or the input itself).
LogicalResult sliceOfConcat(SliceOp op, PatternRewriter &rewriter) {
  auto concat = op.getInput().getDefiningOp<ConcatOp>();
  std::optional<int64_t> start = op.getStart().getValue().getConstant();
  std::optional<int64_t> end = op.getEnd().getValue().getConstant();
  if (!concat || concat.getAxis() != op.getAxis() || !start || !end)
    return rewriter.notifyMatchFailure(op, "not a static slice of a concat");
  int64_t axis = op.getAxis(), offset = 0;
  for (Value input : concat.getInputs()) {
    std::optional<int64_t> length = getShape(input)[axis].getConstant();
    if (!length)
      return rewriter.notifyMatchFailure(op, "symbolic concat input");
    if (*start >= offset && *end <= offset + *length) {
      MLIRContext *context = op.getContext();
      rewriter.replaceOpWithNewOp<SliceOp>(
          op, op.getType(), input, op.getAxis(),
          DimAttr::get(context, *start - offset),
          DimAttr::get(context, *end - offset));
      return success();
    }
    offset += *length;
  }
  return rewriter.notifyMatchFailure(op, "the slice spans several inputs");
}

/// reshape(reshape(x)) -> one reshape of the axes that change between x and
/// the result (the common leading and trailing dims stay out of it).
LogicalResult composeReshapes(ReshapeOp op, PatternRewriter &rewriter) {
  auto inner = op.getInput().getDefiningOp<ReshapeOp>();
  if (!inner)
    return rewriter.notifyMatchFailure(op, "not a reshape of a reshape");
  Value x = inner.getInput();
  Shape from = getShape(x), to = getShape(op.getType());
  size_t prefix = 0, suffix = 0;
  while (prefix < from.size() && prefix < to.size() &&
         from[prefix] == to[prefix])
    ++prefix;
  while (suffix + prefix < from.size() && suffix + prefix < to.size() &&
         from[from.size() - 1 - suffix] == to[to.size() - 1 - suffix])
    ++suffix;
  SmallVector<TDim> dims(to.begin() + prefix, to.end() - suffix);
  rewriter.replaceOpWithNewOp<ReshapeOp>(
      op, op.getType(), x, static_cast<uint64_t>(prefix),
      static_cast<uint64_t>(from.size() - prefix - suffix),
      ShapeAttr::get(op.getContext(), dims));
  return success();
}

/// A reshape that only removes or inserts one axis of 1 is that axis op,
/// which the other axis rewrites know.
LogicalResult reshapeToAxisOp(ReshapeOp op, PatternRewriter &rewriter) {
  ArrayRef<TDim> to = op.getTo().getDims();
  uint64_t at = op.getAt();
  if (op.getCount() == 1 && to.empty() &&
      getShape(op.getInput())[at] == TDim(1)) {
    rewriter.replaceOpWithNewOp<RmAxisOp>(op, op.getType(), op.getInput(), at);
    return success();
  }
  if (op.getCount() == 0 && to.size() == 1 && to[0] == TDim(1)) {
    rewriter.replaceOpWithNewOp<AddAxisOp>(op, op.getType(), op.getInput(), at);
    return success();
  }
  return rewriter.notifyMatchFailure(op, "not one axis of 1");
}

} // namespace

void mlir::tract::populateDeclutterAxisPatterns(RewritePatternSet &patterns) {
  patterns.add(composeMoveAxisChain)
      .add(cancelAddThenRmAxis)
      .add(cancelRmThenAddAxis)
      .add<PushMoveAxisDown>(patterns.getContext())
      .add(pullMoveAxisUp)
      .add<PushMoveAxisThroughAxisTracking>(patterns.getContext())
      .add(absorbMoveAxisIntoEinsumInput)
      .add(absorbMoveAxisIntoEinsumOutput)
      .add(composeSlices)
      .add(sliceOfConcat)
      .add(composeReshapes)
      .add(reshapeToAxisOp)
      .add(splitSharedMoveAxis)
      .add(scatterNdBlockToConcat)
      .add(cancelAxisAroundNormalization);
}

bool mlir::tract::isElementwiseUnary(Operation *op) {
  return isa<TractDialect>(op->getDialect()) && op->getNumOperands() == 1 &&
         op->getNumResults() == 1 && op->getNumRegions() == 0 &&
         op->hasTrait<OpTrait::SameOperandsAndResultType>();
}

bool mlir::tract::isElementwiseBinary(Operation *op) {
  return isElementwise(op) && op->hasTrait<OpTrait::SameOperandsElementType>();
}
