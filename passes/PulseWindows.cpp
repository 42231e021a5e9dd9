//===- PulseWindows.cpp - (time, time) blocks as windows over time --------===//
//
// Attention-like blocks compare every frame of a stream with every other:
// an einsum makes a [T, T] value (scores), element-wise ops mask it to a
// window (block-diagonal, banded, causal), and a softmax, a reduction or a
// second einsum takes its second axis away. Such a value cannot stream as
// it is (two axes carry the stream), but the mask says which frames each
// frame reaches: frames i - L to i + R. This rewrite, run by tract-pulsify
// before the ops are pulsified, finds L and R from the graph itself (no
// op names a mask or an attention) and computes the block over a window
// axis of W = L + R + 1 offsets instead:
//
// * the key side of the first einsum (the operand with the second axis)
//   is unfolded: padded with L frames before and R after, and sliced W
//   times, so that frame i holds frames i - L .. i + R of it;
// * the masks become tables over (frame mod P, offset): P is the period of
//   the mask along the diagonal (1 for a band, the block for a
//   block-diagonal one), read at the positions of the frames;
// * frames of the window before the stream's start or after its end are
//   taken out before each softmax and reduction (by the reduction's
//   neutral value);
// * the second einsum unfolds its own stream operand the same way.
//
// The rewritten block streams with the ordinary rules (pad, slices, concat
// over another axis, einsum, softmax over the window axis), with a delay
// of R frames more. The window is found by evaluating the masks and the
// block's element-wise ops on sampled positions: a key frame is outside
// when the block gives it the value that its softmax or reduction
// ignores (-inf or a large negative number before a softmax, 0 before a
// sum or a product by the values). A block whose reach grows with the
// stream (no mask, a mask of the stream's length) is refused.
//
//===----------------------------------------------------------------------===//

#include "passes/PulseWindows.h"

#include "dialects/tract/EinsumExpr.h"
#include "dialects/tract/TractInterfaces.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractPulse.h"
#include "dialects/tract/TractShapes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

#include <cmath>
#include <limits>
#include <numeric>

using namespace mlir;
using namespace mlir::tract;

namespace {

/// Positions sampled to find a window; a reach that differs between the
/// two samples grows with the stream.
constexpr int64_t kSamples[] = {72, 120};
/// The longest diagonal period of a mask looked for.
constexpr int64_t kMaxPeriod = 32;
/// A value at or below this before a softmax is a masked-out key.
constexpr double kMasked = -1e8;

/// What an axis of a value in a (time, time) block indexes.
enum class Role { None, Query, Key };

/// A value of the block at one (query, key) position: known, or depending
/// on the model's data.
struct Abstract {
  bool known = false;
  double value = 0;
  static Abstract of(double v) { return {true, v}; }
};

double fromAttribute(Attribute attr) {
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto i = dyn_cast<IntegerAttr>(attr)) {
    if (i.getType().isInteger(1))
      return i.getValue().getBoolValue();
    return isa<IntegerType>(i.getType()) &&
                   cast<IntegerType>(i.getType()).isUnsigned()
               ? double(i.getValue().getZExtValue())
               : double(i.getValue().getSExtValue());
  }
  return std::nan("");
}

/// `value` as an element of `type`: booleans are 0 or 1, integers truncated.
double convert(double value, Type type) {
  if (type.isInteger(1))
    return value != 0;
  if (isa<IntegerType>(type))
    return std::trunc(value);
  return value;
}

/// The element-wise ops a mask is written with, on numbers.
std::optional<double> applyElementwise(Operation *op, ArrayRef<double> in) {
  Type type = getElementTypeOrSelf(op->getOperand(0).getType());
  bool integer = isa<IntegerType>(type) && !type.isInteger(1);
  if (in.size() == 1) {
    if (isa<NegOp>(op))
      return -in[0];
    if (isa<NotOp>(op))
      return double(in[0] == 0);
    if (isa<AbsOp>(op))
      return std::fabs(in[0]);
    return std::nullopt;
  }
  if (in.size() == 3 && isa<SelectOp>(op))
    return in[0] != 0 ? in[1] : in[2];
  if (in.size() != 2)
    return std::nullopt;
  double a = in[0], b = in[1];
  if (isa<AddOp>(op))
    return a + b;
  if (isa<SubOp>(op))
    return a - b;
  if (isa<MulOp>(op))
    return a * b;
  if (isa<DivOp>(op)) {
    if (integer)
      return b == 0 ? std::optional<double>() : std::trunc(a / b);
    return a / b;
  }
  if (isa<RemOp>(op))
    return b == 0 ? std::optional<double>() : std::fmod(a, b);
  if (isa<MinOp>(op))
    return std::min(a, b);
  if (isa<MaxOp>(op))
    return std::max(a, b);
  if (isa<LtOp>(op))
    return double(a < b);
  if (isa<LeOp>(op))
    return double(a <= b);
  if (isa<GtOp>(op))
    return double(a > b);
  if (isa<GeOp>(op))
    return double(a >= b);
  if (isa<EqOp>(op))
    return double(a == b);
  if (isa<NeOp>(op))
    return double(a != b);
  if (isa<AndOp>(op))
    return double(a != 0 && b != 0);
  if (isa<OrOp>(op))
    return double(a != 0 || b != 0);
  if (isa<XorOp>(op))
    return double((a != 0) != (b != 0));
  return std::nullopt;
}

/// The value a reduction ignores (its neutral element), for the reductions
/// a window can take.
std::optional<double> neutralOf(Reducer reducer) {
  switch (reducer) {
  case Reducer::Sum:
  case Reducer::Any:
    return 0.0;
  case Reducer::Prod:
  case Reducer::All:
    return 1.0;
  case Reducer::Max:
    return -std::numeric_limits<double>::infinity();
  case Reducer::Min:
    return std::numeric_limits<double>::infinity();
  default:
    return std::nullopt;
  }
}

/// One (time, time) block: the einsum that makes it, the ops that keep both
/// axes, and the ops that take the key axis away.
struct TimeBlock {
  EinsumOp source;
  TDim length;              ///< the dim of both axes
  int64_t queryAxis, keyAxis; ///< in the block's values
  SetVector<Operation *> body; ///< element-wise ops, softmaxes (in order)
  SmallVector<Operation *> ends; ///< reductions and einsums over keys
  int64_t before = 0, after = 0; ///< the window: i - before .. i + after
};

class WindowRewriter {
public:
  WindowRewriter(func::FuncOp func, StringRef symbol)
      : func(func), symbol(symbol) {}

  LogicalResult run();

private:
  /// Whether `type` is a value of the block (both axes of the length).
  bool inBlock(Value value, const TimeBlock &block) const;
  LogicalResult collect(TimeBlock &block);
  LogicalResult findWindow(TimeBlock &block);
  LogicalResult rewrite(TimeBlock &block);

  /// A mask's value at (i, j); nullopt when it depends on the model's data
  /// or on ops not understood here.
  std::optional<double> evaluate(Value value, ArrayRef<Role> roles, int64_t i,
                                 int64_t j, int depth = 0);
  Abstract evaluateBlock(const TimeBlock &block, Value value, int64_t i,
                         int64_t j, DenseMap<Value, Abstract> &cache);
  /// Whether the block leaves key j out of query i.
  bool excluded(const TimeBlock &block, int64_t i, int64_t j);
  SmallVector<Role> rolesOf(const TimeBlock &block, Value value) const;

  /// Frames i - before .. i + after of `value` along `axis`, on a new axis
  /// after it.
  Value unfold(OpBuilder &b, Location loc, Value value, int64_t axis,
               const TimeBlock &block);
  /// A [length, window] value placed on the block's axes of rank `rank`.
  Value placeOnAxes(OpBuilder &b, Location loc, Value value, int64_t rank,
                    const TimeBlock &block);
  /// The mask `value` over (frame, offset) as a table read at the frames'
  /// positions; null if it is not periodic along the diagonal.
  Value windowedMask(OpBuilder &b, Location loc, Value value,
                     const TimeBlock &block);
  Value scalarConstant(OpBuilder &b, Location loc, Type element, double value,
                       int64_t rank);

  func::FuncOp func;
  StringRef symbol;
  Value validity; ///< per block: [length, window] booleans
};

bool WindowRewriter::inBlock(Value value, const TimeBlock &block) const {
  Shape shape = getShape(value);
  return int64_t(shape.size()) > std::max(block.queryAxis, block.keyAxis) &&
         shape[block.queryAxis] == block.length &&
         shape[block.keyAxis] == block.length;
}

SmallVector<Role> WindowRewriter::rolesOf(const TimeBlock &block,
                                          Value value) const {
  SmallVector<Role> roles(getShape(value).size(), Role::None);
  if (int64_t(roles.size()) > std::max(block.queryAxis, block.keyAxis)) {
    roles[block.queryAxis] = Role::Query;
    roles[block.keyAxis] = Role::Key;
  }
  return roles;
}

std::optional<double> WindowRewriter::evaluate(Value value,
                                               ArrayRef<Role> roles, int64_t i,
                                               int64_t j, int depth) {
  if (depth > 64)
    return std::nullopt;
  Shape shape = getShape(value);
  if (shape.size() != roles.size())
    return std::nullopt;
  // Each axis is indexed by its role, or at 0 when its dim is 1.
  SmallVector<int64_t> coords;
  for (auto [dim, role] : llvm::zip(shape, roles)) {
    if (dim == TDim(1))
      coords.push_back(0);
    else if (role == Role::Query)
      coords.push_back(i);
    else if (role == Role::Key)
      coords.push_back(j);
    else
      return std::nullopt;
  }
  Operation *op = value.getDefiningOp();
  if (!op)
    return std::nullopt;
  Type element = getElementTypeOrSelf(value.getType());
  DenseElementsAttr attr;
  if (matchPattern(value, m_Constant(&attr))) {
    if (attr.isSplat())
      return fromAttribute(attr.getSplatValue<Attribute>());
    if (attr.getNumElements() == 1)
      return fromAttribute(*attr.getValues<Attribute>().begin());
    return std::nullopt;
  }
  auto scalar = [&](Value v) -> std::optional<double> {
    return evaluate(v, SmallVector<Role>(getShape(v).size(), Role::None), 0, 0,
                    depth + 1);
  };
  if (auto range = dyn_cast<RangeOp>(op)) {
    std::optional<double> start = scalar(range.getStart()),
                          step = scalar(range.getStep());
    if (!start || !step)
      return std::nullopt;
    return *start + *step * double(coords[0]);
  }
  if (auto add = dyn_cast<AddAxisOp>(op)) {
    SmallVector<Role> inner(roles);
    inner.erase(inner.begin() + add.getAxis());
    return evaluate(add.getInput(), inner, i, j, depth + 1);
  }
  if (auto rm = dyn_cast<RmAxisOp>(op)) {
    SmallVector<Role> inner(roles);
    inner.insert(inner.begin() + rm.getAxis(), Role::None);
    return evaluate(rm.getInput(), inner, i, j, depth + 1);
  }
  if (auto move = dyn_cast<MoveAxisOp>(op)) {
    SmallVector<Role> inner(roles);
    Role moved = inner[move.getTo()];
    inner.erase(inner.begin() + move.getTo());
    inner.insert(inner.begin() + move.getFrom(), moved);
    return evaluate(move.getInput(), inner, i, j, depth + 1);
  }
  if (auto broadcast = dyn_cast<BroadcastOp>(op))
    return evaluate(broadcast.getInput(), roles, i, j, depth + 1);
  if (auto cast = dyn_cast<CastOp>(op)) {
    std::optional<double> v = evaluate(cast.getInput(), roles, i, j, depth + 1);
    if (!v)
      return std::nullopt;
    return convert(*v, element);
  }
  if (isElementwise(op) || isa<SelectOp>(op)) {
    SmallVector<double> in;
    for (Value operand : op->getOperands()) {
      std::optional<double> v = evaluate(operand, roles, i, j, depth + 1);
      if (!v)
        return std::nullopt;
      in.push_back(*v);
    }
    std::optional<double> out = applyElementwise(op, in);
    if (!out)
      return std::nullopt;
    return convert(*out, element);
  }
  return std::nullopt;
}

Abstract WindowRewriter::evaluateBlock(const TimeBlock &block, Value value,
                                       int64_t i, int64_t j,
                                       DenseMap<Value, Abstract> &cache) {
  if (auto it = cache.find(value); it != cache.end())
    return it->second;
  Abstract result;
  Operation *op = value.getDefiningOp();
  if (value == block.source->getResult(0)) {
    result = {};
  } else if (!op || !block.body.contains(op)) {
    if (std::optional<double> v = evaluate(value, rolesOf(block, value), i, j))
      result = Abstract::of(*v);
  } else if (isa<SoftmaxOp, LogSoftmaxOp>(op)) {
    Abstract x = evaluateBlock(block, op->getOperand(0), i, j, cache);
    if (x.known && x.value <= kMasked)
      result = Abstract::of(isa<SoftmaxOp>(op)
                                ? 0.0
                                : -std::numeric_limits<double>::infinity());
  } else {
    SmallVector<Abstract> in;
    for (Value operand : op->getOperands())
      in.push_back(evaluateBlock(block, operand, i, j, cache));
    bool allKnown = llvm::all_of(in, [](const Abstract &a) { return a.known; });
    if (allKnown) {
      SmallVector<double> numbers;
      for (const Abstract &a : in)
        numbers.push_back(a.value);
      if (std::optional<double> v = applyElementwise(op, numbers))
        result = Abstract::of(
            convert(*v, getElementTypeOrSelf(value.getType())));
    } else if (isa<SelectOp>(op) && in[0].known) {
      result = in[0].value != 0 ? in[1] : in[2];
    } else if (isa<CastOp>(op)) {
      result = in[0];
    } else if (isa<AddOp, SubOp>(op)) {
      // Data plus a huge constant is that constant, as far as a softmax
      // can tell (an additive mask).
      for (auto [index, a] : llvm::enumerate(in))
        if (a.known && std::fabs(a.value) >= -kMasked)
          result = Abstract::of(isa<SubOp>(op) && index == 1 ? -a.value
                                                            : a.value);
    } else if (isa<MulOp>(op)) {
      for (const Abstract &a : in)
        if (a.known && a.value == 0)
          result = Abstract::of(0);
    } else if (isa<MaxOp>(op)) {
      for (const Abstract &a : in)
        if (a.known && a.value >= -kMasked)
          result = a;
    } else if (isa<MinOp>(op)) {
      for (const Abstract &a : in)
        if (a.known && a.value <= kMasked)
          result = a;
    }
  }
  cache[value] = result;
  return result;
}

bool WindowRewriter::excluded(const TimeBlock &block, int64_t i, int64_t j) {
  DenseMap<Value, Abstract> cache;
  for (Operation *end : block.ends) {
    Value input;
    double neutral = 0;
    if (auto reduce = dyn_cast<ReduceOp>(end)) {
      input = reduce.getInput();
      std::optional<double> value = neutralOf(reduce.getReducer());
      if (!value)
        return false;
      neutral = *value;
    } else {
      for (Value operand : end->getOperands())
        if (inBlock(operand, block))
          input = operand;
    }
    Abstract v = evaluateBlock(block, input, i, j, cache);
    bool ignored = v.known && (v.value == neutral ||
                               (std::isinf(neutral) && neutral < 0 &&
                                v.value <= kMasked) ||
                               (std::isinf(neutral) && neutral > 0 &&
                                v.value >= -kMasked));
    if (!ignored)
      return false;
  }
  return true;
}

LogicalResult WindowRewriter::collect(TimeBlock &block) {
  SmallVector<Value> worklist{block.source->getResult(0)};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (block.body.contains(user) || llvm::is_contained(block.ends, user))
        continue;
      auto fail = [&](const Twine &why) {
        return block.source.emitError("cannot stream: its [")
               << block.length.toString() << ", " << block.length.toString()
               << "] result over the stream twice reaches "
               << user->getName() << ", " << why;
      };
      if (auto reduce = dyn_cast<ReduceOp>(user)) {
        if (reduce.getAxes() != ArrayRef<int64_t>{block.keyAxis})
          return fail("a reduction over other axes than the second one");
        block.ends.push_back(user);
        continue;
      }
      if (auto einsum = dyn_cast<EinsumOp>(user)) {
        block.ends.push_back(user);
        continue;
      }
      if (auto softmax = dyn_cast<SoftmaxOp>(user);
          softmax && softmax.getAxes() != ArrayRef<int64_t>{block.keyAxis})
        return fail("a softmax over other axes than the second one");
      if (auto softmax = dyn_cast<LogSoftmaxOp>(user);
          softmax && softmax.getAxes() != ArrayRef<int64_t>{block.keyAxis})
        return fail("a softmax over other axes than the second one");
      bool elementwise = isElementwise(user) || isa<SelectOp>(user);
      if (!(elementwise || isa<SoftmaxOp, LogSoftmaxOp>(user)) ||
          user->getNumResults() != 1 || !inBlock(user->getResult(0), block))
        return fail("which the window rewrite does not take");
      block.body.insert(user);
      worklist.push_back(user->getResult(0));
    }
  }
  if (block.ends.empty())
    return block.source.emitError("cannot stream: its result over the "
                                  "stream twice is never reduced");
  // In program order, for the rewrite.
  SmallVector<Operation *> ordered(block.body.begin(), block.body.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  block.body = SetVector<Operation *>(ordered.begin(), ordered.end());
  return success();
}

LogicalResult WindowRewriter::findWindow(TimeBlock &block) {
  std::optional<std::pair<int64_t, int64_t>> previous;
  for (int64_t samples : kSamples) {
    int64_t before = -1, after = -1;
    for (int64_t i = 0; i < samples; ++i)
      for (int64_t j = 0; j < samples; ++j)
        if (!excluded(block, i, j)) {
          before = std::max(before, i - j);
          after = std::max(after, j - i);
        }
    if (before < 0 && after < 0)
      return block.source.emitError(
          "cannot stream: its block over the stream twice keeps no frame");
    std::pair<int64_t, int64_t> reach{std::max<int64_t>(before, 0),
                                      std::max<int64_t>(after, 0)};
    if (previous && *previous != reach)
      return block.source.emitError(
                 "cannot stream: each frame of its block over the stream "
                 "twice reaches frames ")
             << reach.first << " before and " << reach.second
             << " after it on " << samples << " frames, and "
             << previous->first << " and " << previous->second
             << " on fewer: the reach grows with the stream (no window)";
    previous = reach;
  }
  block.before = previous->first;
  block.after = previous->second;
  return success();
}

Value WindowRewriter::scalarConstant(OpBuilder &b, Location loc, Type element,
                                     double value, int64_t rank) {
  auto type = RankedTensorType::get(SmallVector<int64_t>(rank, 1), element);
  Attribute attr;
  if (auto f = dyn_cast<FloatType>(element))
    attr = FloatAttr::get(f, value);
  else
    attr = IntegerAttr::get(element, int64_t(value));
  return ConstOp::create(b, loc, type,
                         cast<ElementsAttr>(DenseElementsAttr::get(type, attr)));
}

Value WindowRewriter::unfold(OpBuilder &b, Location loc, Value value,
                             int64_t axis, const TimeBlock &block) {
  int64_t window = block.before + block.after + 1;
  Shape shape = getShape(value);
  TDim length = shape[axis];
  Value padded = value;
  if (window > 1) {
    SmallVector<int64_t> before(shape.size(), 0), after(shape.size(), 0);
    before[axis] = block.before;
    after[axis] = block.after;
    Type element = getElementTypeOrSelf(value.getType());
    padded = PadOp::create(b, loc, value, before, after, PadMode::Constant,
                           cast<TypedAttr>(b.getZeroAttr(element)));
  }
  SmallVector<Value> frames;
  for (int64_t w = 0; w < window; ++w) {
    Value frame = padded;
    if (window > 1)
      frame = SliceOp::create(b, loc, padded, axis,
                              DimAttr::get(b.getContext(), TDim(w)),
                              DimAttr::get(b.getContext(), TDim(w) + length));
    frames.push_back(AddAxisOp::create(b, loc, frame, axis + 1));
  }
  if (frames.size() == 1)
    return frames.front();
  return ConcatOp::create(b, loc, frames, axis + 1);
}

Value WindowRewriter::placeOnAxes(OpBuilder &b, Location loc, Value value,
                                  int64_t rank, const TimeBlock &block) {
  if (block.queryAxis > block.keyAxis)
    value = MoveAxisOp::create(b, loc, value, 0, 1);
  for (int64_t axis = 0; axis < rank; ++axis)
    if (axis != block.queryAxis && axis != block.keyAxis)
      value = AddAxisOp::create(b, loc, value, axis);
  return value;
}

Value WindowRewriter::windowedMask(OpBuilder &b, Location loc, Value value,
                                   const TimeBlock &block) {
  int64_t window = block.before + block.after + 1;
  int64_t samples = kSamples[1];
  SmallVector<Role> roles = rolesOf(block, value);
  // table[i][w] = mask(i, i + w - before) where that key exists.
  std::vector<std::vector<std::optional<double>>> table(
      samples, std::vector<std::optional<double>>(window));
  for (int64_t i = 0; i < samples; ++i)
    for (int64_t w = 0; w < window; ++w) {
      int64_t j = i + w - block.before;
      if (j < 0 || j >= samples)
        continue;
      table[i][w] = evaluate(value, roles, i, j);
      if (!table[i][w])
        return {};
    }
  int64_t period = 0;
  for (int64_t p = 1; p <= kMaxPeriod && !period; ++p) {
    bool periodic = true;
    for (int64_t i = 0; i + p < samples && periodic; ++i)
      for (int64_t w = 0; w < window && periodic; ++w)
        if (table[i][w] && table[i + p][w])
          periodic = *table[i][w] == *table[i + p][w];
    if (periodic)
      period = p;
  }
  if (!period)
    return {};
  // One row per residue, from frames whose whole window exists.
  Type element = getElementTypeOrSelf(value.getType());
  SmallVector<Attribute> values;
  for (int64_t r = 0; r < period; ++r) {
    int64_t i = r;
    while (i < block.before)
      i += period;
    if (i + block.after >= samples)
      return {};
    for (int64_t w = 0; w < window; ++w) {
      double v = *table[i][w];
      if (auto f = dyn_cast<FloatType>(element))
        values.push_back(FloatAttr::get(f, v));
      else
        values.push_back(IntegerAttr::get(element, APInt(
            element.getIntOrFloatBitWidth(), int64_t(v), /*isSigned=*/true)));
    }
  }
  auto tableType = RankedTensorType::get({period, window}, element);
  Value rows = ConstOp::create(
      b, loc, tableType,
      cast<ElementsAttr>(DenseElementsAttr::get(tableType, values)));
  int64_t rank = getShape(value).size();
  if (period == 1) {
    // The same row for every frame: [1, window] on the block's axes.
    return placeOnAxes(b, loc, rows, rank, block);
  }
  // The row of each frame's position modulo the period.
  Type i64 = b.getI64Type();
  auto scalarType = RankedTensorType::get({}, i64);
  auto zero = ConstOp::create(
      b, loc, scalarType,
      cast<ElementsAttr>(DenseElementsAttr::get(scalarType, int64_t(0))));
  auto one = ConstOp::create(
      b, loc, scalarType,
      cast<ElementsAttr>(DenseElementsAttr::get(scalarType, int64_t(1))));
  Value end = RmAxisOp::create(
      b, loc,
      ShapeValueOp::create(b, loc, ShapeAttr::get(b.getContext(),
                                                   {block.length})),
      int64_t(0));
  Value positions = RangeOp::create(b, loc, zero, end, one,
                                    DimAttr::get(b.getContext(), block.length));
  Value residues =
      RemOp::create(b, loc, positions, scalarConstant(b, loc, i64, period, 1));
  Value perFrame = GatherOp::create(b, loc, rows, residues, int64_t(0));
  return placeOnAxes(b, loc, perFrame, rank, block);
}

/// The first letter free in `expr`.
char freeLetter(const EinsumExpr &expr) {
  std::string used = expr.output;
  for (const std::string &input : expr.inputs)
    used += input;
  for (char c : StringRef("wvutsrqponmlkjihgfedcbazyxWVUTSRQPONMLKJIHGFEDCBA"))
    if (!StringRef(used).contains(c))
      return c;
  return 0;
}

std::string joinExpr(const EinsumExpr &expr) {
  return llvm::join(expr.inputs, ",") + "->" + expr.output;
}

LogicalResult WindowRewriter::rewrite(TimeBlock &block) {
  EinsumOp source = block.source;
  Location loc = source.getLoc();
  OpBuilder b(source);
  EinsumExpr expr = EinsumExpr::parse(source.getExpr());
  char query = expr.output[block.queryAxis], key = expr.output[block.keyAxis];
  char window = freeLetter(expr);
  std::optional<unsigned> keyOperand;
  for (auto [index, spec] : llvm::enumerate(expr.inputs)) {
    if (StringRef(spec).contains(key) && StringRef(spec).contains(query))
      return source.emitError("cannot stream: an operand of this einsum "
                              "holds both of its axes over the stream");
    if (StringRef(spec).contains(key)) {
      if (keyOperand)
        return source.emitError("cannot stream: two operands of this einsum "
                                "hold its second axis over the stream");
      keyOperand = index;
    }
  }
  if (!keyOperand || !window)
    return source.emitError("cannot stream: its second axis over the stream "
                            "comes from no operand");
  int64_t windowSize = block.before + block.after + 1;

  // The frames that exist in each window: ones over the stream, unfolded
  // with zeros outside it.
  Type f32 = b.getF32Type();
  Value ones = BroadcastOp::create(
      b, loc, scalarConstant(b, loc, f32, 1.0, 1),
      ShapeAttr::get(b.getContext(), {block.length}));
  validity = GtOp::create(b, loc, unfold(b, loc, ones, 0, block),
                          scalarConstant(b, loc, f32, 0.5, 2));

  // The first einsum over the key operand's window.
  SmallVector<Value> operands(source.getInputs());
  std::string &spec = expr.inputs[*keyOperand];
  int64_t keyAxisThere = StringRef(spec).find(key);
  operands[*keyOperand] =
      unfold(b, loc, operands[*keyOperand], keyAxisThere, block);
  spec.replace(keyAxisThere, 1, std::string{query, window});
  expr.output[block.keyAxis] = window;
  auto windowed = EinsumOp::create(b, loc, operands, joinExpr(expr));
  source.getOutput().replaceAllUsesWith(windowed.getOutput());
  source.erase();
  block.source = windowed;

  auto windowShape = [&](Value value) {
    Shape shape = getShape(value);
    shape[block.keyAxis] = TDim(windowSize);
    return getTensorTypeLike(value.getType(), shape);
  };
  auto masked = [&](OpBuilder &at, Value value, double neutral) -> Value {
    int64_t rank = getShape(value).size();
    Value valid = placeOnAxes(at, loc, validity, rank, block);
    Type element = getElementTypeOrSelf(value.getType());
    return SelectOp::create(at, loc, valid, value,
                            scalarConstant(at, loc, element, neutral, rank));
  };
  double minusInf = -std::numeric_limits<double>::infinity();
  for (Operation *op : block.body) {
    OpBuilder at(op);
    for (OpOperand &operand : op->getOpOperands()) {
      Value value = operand.get();
      Operation *def = value.getDefiningOp();
      if (def && (block.body.contains(def) || def == windowed))
        continue;
      Shape shape = getShape(value);
      if (int64_t(shape.size()) <= block.keyAxis ||
          shape[block.keyAxis] == TDim(1))
        continue; // broadcast over the keys: as it is
      Value mask = windowedMask(at, op->getLoc(), value, block);
      if (!mask)
        return op->emitError("cannot stream: this mask over the stream "
                             "twice is not a function of the frames' "
                             "positions that repeats along the diagonal");
      operand.set(mask);
    }
    if (isa<SoftmaxOp, LogSoftmaxOp>(op))
      op->setOperand(0, masked(at, op->getOperand(0), minusInf));
    op->getResult(0).setType(windowShape(op->getResult(0)));
  }

  for (Operation *end : block.ends) {
    OpBuilder at(end);
    if (auto reduce = dyn_cast<ReduceOp>(end)) {
      std::optional<double> neutral = neutralOf(reduce.getReducer());
      if (!neutral)
        return end->emitError("cannot stream: this reduction over a "
                              "window of the stream is not a sum, product, "
                              "minimum or maximum");
      reduce->setOperand(0, masked(at, reduce.getInput(), *neutral));
      continue;
    }
    auto einsum = cast<EinsumOp>(end);
    EinsumExpr second = EinsumExpr::parse(einsum.getExpr());
    SmallVector<Value> inputs(einsum.getInputs());
    std::optional<unsigned> blockOperand;
    for (auto [index, input] : llvm::enumerate(inputs))
      if (input.getDefiningOp() &&
          (block.body.contains(input.getDefiningOp()) ||
           input.getDefiningOp() == windowed))
        blockOperand = index;
    std::string &own = second.inputs[*blockOperand];
    char q = own[block.queryAxis], k = own[block.keyAxis];
    char w = freeLetter(second);
    if (StringRef(second.output).contains(k) || !w)
      return end->emitError("cannot stream: this einsum keeps both axes over "
                            "the stream");
    for (auto [index, input] : llvm::enumerate(inputs)) {
      if (index == *blockOperand)
        continue;
      std::string &other = second.inputs[index];
      size_t at = StringRef(other).find(k);
      if (at == StringRef::npos)
        continue;
      if (StringRef(other).contains(q) ||
          getShape(input)[at] != block.length)
        return end->emitError("cannot stream: this einsum's operand over "
                              "the keys is not over the stream");
      OpBuilder before(end);
      inputs[index] = unfold(before, loc, input, at, block);
      other.replace(at, 1, std::string{q, w});
    }
    own[block.keyAxis] = w;
    OpBuilder before(end);
    inputs[*blockOperand] = masked(before, inputs[*blockOperand], 0.0);
    auto replaced = EinsumOp::create(before, end->getLoc(), inputs,
                                     joinExpr(second));
    end->getResult(0).replaceAllUsesWith(replaced.getOutput());
    end->erase();
  }
  return success();
}

LogicalResult WindowRewriter::run() {
  // The einsums whose result has two axes of one length over the stream.
  SmallVector<TimeBlock> blocks;
  func.walk([&](EinsumOp einsum) {
    Shape shape = getShape(einsum.getOutput());
    SmallVector<int64_t> axes;
    for (auto [axis, dim] : llvm::enumerate(shape))
      if (mentionsSymbol(dim, symbol))
        axes.push_back(axis);
    if (axes.size() != 2 || shape[axes[0]] != shape[axes[1]])
      return;
    TimeBlock block;
    block.source = einsum;
    block.length = shape[axes[0]];
    // The query axis is the one of the first operand that has one.
    EinsumExpr expr = EinsumExpr::parse(einsum.getExpr());
    bool firstIsQuery = !expr.inputs.empty() &&
                        StringRef(expr.inputs[0]).contains(
                            expr.output[axes[0]]);
    block.queryAxis = firstIsQuery ? axes[0] : axes[1];
    block.keyAxis = firstIsQuery ? axes[1] : axes[0];
    blocks.push_back(std::move(block));
  });
  for (TimeBlock &block : blocks)
    if (failed(collect(block)) || failed(findWindow(block)) ||
        failed(rewrite(block)))
      return failure();
  if (blocks.empty())
    return success();
  // The masks over the stream twice are no longer used.
  mlir::Block &entry = func.getBody().front();
  for (bool erased = true; erased;) {
    SmallVector<Operation *> dead;
    for (Operation &op : entry.without_terminator())
      if (isOpTriviallyDead(&op))
        dead.push_back(&op);
    for (Operation *op : llvm::reverse(dead))
      op->erase();
    erased = !dead.empty();
  }
  return success();
}

} // namespace

LogicalResult mlir::tract::unfoldStreamWindows(func::FuncOp func,
                                               StringRef symbol) {
  return WindowRewriter(func, symbol).run();
}
