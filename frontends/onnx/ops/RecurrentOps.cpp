//===- RecurrentOps.cpp - ONNX LSTM, GRU and RNN --------------------------===//
//
// Each direction of a recurrent layer is one tract.scan over the sequence.
// The input projection X·Wᵀ + biases does not depend on the state, so it is
// one einsum over the whole sequence before the loop; the scan body keeps
// only the recurrent product H·Rᵀ and the gate math. A reverse direction
// scans backward and its Y is reversed back to sequence order; the two
// directions of a bidirectional layer are stacked on the num_directions
// axis.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/ScanBuilder.h"

#include "dialects/tract/TractAttrs.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::tract;
using namespace mlir::tract::onnx;

namespace {

using Outputs = SmallVectorImpl<Value>;

enum class Cell { Rnn, Gru, Lstm };

/// An activation function of a recurrent layer, with its parameters.
struct Activation {
  std::string name; // lower case
  double alpha = 0, beta = 0;
};

/// The activations a layer names, with their parameters, or failure.
/// Following onnxruntime, activation_alpha and activation_beta are consumed
/// in order by the functions that take each parameter; a function that finds
/// the list exhausted uses its ONNX operator's default.
FailureOr<SmallVector<Activation>> readActivations(NodeContext &ctx,
                                                   ArrayRef<StringRef> defaults,
                                                   int64_t numDirections) {
  struct Known {
    StringRef name;
    bool hasAlpha, hasBeta;
    double alpha, beta;
  };
  static const Known known[] = {{"relu", false, false, 0, 0},
                                {"tanh", false, false, 0, 0},
                                {"sigmoid", false, false, 0, 0},
                                {"affine", true, true, 1.0, 0},
                                {"leakyrelu", true, false, 0.01, 0},
                                {"thresholdedrelu", true, false, 1, 0},
                                {"scaledtanh", true, true, 1, 1},
                                {"hardsigmoid", true, true, 0.2, 0.5},
                                {"elu", true, false, 1, 0},
                                {"softsign", false, false, 0, 0},
                                {"softplus", false, false, 0, 0}};
  SmallVector<std::string> names;
  if (std::optional<SmallVector<std::string>> given =
          ctx.getStrings("activations")) {
    names = *given;
  } else {
    for (int64_t d = 0; d < numDirections; ++d)
      for (StringRef name : defaults)
        names.push_back(name.str());
  }
  size_t expected = defaults.size() * numDirections;
  if (names.size() != expected) {
    (void)ctx.error("activations has " + Twine(names.size()) +
                    " entries, expected " + Twine(expected) + " (" +
                    Twine(defaults.size()) + " per direction)");
    return failure();
  }
  SmallVector<float> alphas =
      ctx.getFloats("activation_alpha").value_or(SmallVector<float>());
  SmallVector<float> betas =
      ctx.getFloats("activation_beta").value_or(SmallVector<float>());
  size_t nextAlpha = 0, nextBeta = 0;
  SmallVector<Activation> result;
  for (const std::string &name : names) {
    std::string lower = StringRef(name).lower();
    const Known *entry =
        llvm::find_if(known, [&](const Known &k) { return k.name == lower; });
    if (entry == std::end(known)) {
      (void)ctx.unsupported("activation '" + name + "'");
      return failure();
    }
    Activation activation{lower, entry->alpha, entry->beta};
    if (entry->hasAlpha && nextAlpha < alphas.size())
      activation.alpha = alphas[nextAlpha++];
    if (entry->hasBeta && nextBeta < betas.size())
      activation.beta = betas[nextBeta++];
    result.push_back(activation);
  }
  return result;
}

Value activate(NodeContext &ctx, const Activation &activation, Value x) {
  auto constant = [&](double value) { return ctx.scalarLike(x, value); };
  StringRef name = activation.name;
  double alpha = activation.alpha, beta = activation.beta;
  if (name == "relu")
    return ctx.binary<MaxOp>(x, constant(0));
  if (name == "tanh")
    return ctx.create<TanhOp>(x);
  if (name == "sigmoid")
    return ctx.create<SigmoidOp>(x);
  if (name == "affine")
    return ctx.binary<AddOp>(ctx.binary<MulOp>(x, constant(alpha)),
                             constant(beta));
  if (name == "leakyrelu")
    return ctx.create<SelectOp>(ctx.binary<LtOp>(x, constant(0)),
                                ctx.binary<MulOp>(x, constant(alpha)), x);
  if (name == "thresholdedrelu")
    return ctx.create<SelectOp>(ctx.binary<GtOp>(x, constant(alpha)), x,
                                constant(0));
  if (name == "scaledtanh")
    return ctx.binary<MulOp>(
        ctx.create<TanhOp>(ctx.binary<MulOp>(x, constant(beta))),
        constant(alpha));
  if (name == "hardsigmoid") {
    Value y = ctx.binary<AddOp>(ctx.binary<MulOp>(x, constant(alpha)),
                                constant(beta));
    return ctx.binary<MinOp>(ctx.binary<MaxOp>(y, constant(0)), constant(1));
  }
  if (name == "elu") {
    Value expm1 = ctx.binary<SubOp>(ctx.create<ExpOp>(x), constant(1));
    return ctx.create<SelectOp>(ctx.binary<LtOp>(x, constant(0)),
                                ctx.binary<MulOp>(expm1, constant(alpha)), x);
  }
  if (name == "softsign")
    return ctx.binary<DivOp>(
        x, ctx.binary<AddOp>(ctx.create<AbsOp>(x), constant(1)));
  assert(name == "softplus" && "activations are checked when read");
  return ctx.create<LnOp>(ctx.binary<AddOp>(ctx.create<ExpOp>(x), constant(1)));
}

/// The part of `value` of direction `d` on `axis`, without that axis.
Value direction(NodeContext &ctx, Value value, int64_t d, int64_t axis = 0) {
  MLIRContext *context = ctx.getContext();
  Value slice = ctx.create<SliceOp>(value, axis, DimAttr::get(context, d),
                                    DimAttr::get(context, d + 1));
  return ctx.create<RmAxisOp>(slice, axis);
}

/// Elements [k * size, (k + 1) * size) of `axis`, the last one by default.
Value block(NodeContext &ctx, Value value, int64_t k, int64_t size,
            int64_t axis = -1) {
  if (!value)
    return {};
  MLIRContext *context = ctx.getContext();
  return ctx.create<SliceOp>(
      value, axis < 0 ? NodeContext::rank(value) - 1 : axis,
      DimAttr::get(context, k * size), DimAttr::get(context, (k + 1) * size));
}

Value concatDirections(NodeContext &ctx, ArrayRef<Value> parts, int64_t axis) {
  if (parts.size() == 1)
    return parts.front();
  return ctx.create<ConcatOp>(SmallVector<Value>(parts), axis);
}

/// The translation of one LSTM, GRU or RNN node.
class RecurrentLayer {
public:
  RecurrentLayer(NodeContext &ctx, Cell cell) : ctx(ctx), cell(cell) {}

  LogicalResult translate(Outputs &outputs);

private:
  LogicalResult readAttributes();
  /// One direction: the final states (h, and c for an LSTM) and Y if
  /// wanted, with their num_directions axis.
  FailureOr<SmallVector<Value>> runDirection(int64_t d);
  /// The scan body: next states, then the Y chunk if wanted.
  FailureOr<SmallVector<Value>> step(ArrayRef<Activation> activations,
                                     ValueRange states, Value projected,
                                     ValueRange full);
  Value clipped(Value x) {
    if (!clip)
      return x;
    return ctx.binary<MinOp>(ctx.binary<MaxOp>(x, ctx.scalarLike(x, -*clip)),
                             ctx.scalarLike(x, *clip));
  }
  Value gate(const Activation &activation, Value x) {
    return activate(ctx, activation, clipped(x));
  }
  Value scalar(Value like, double value) { return ctx.scalarLike(like, value); }

  NodeContext &ctx;
  Cell cell;
  int64_t numGates = 1, numDirections = 1, hidden = 0, layout = 0;
  std::string directionName;
  std::optional<float> clip;
  bool inputForget = false, linearBeforeReset = false, wantY = false;
  SmallVector<Activation> activations;
  TDim batch;
  Type elementType;
};

LogicalResult RecurrentLayer::readAttributes() {
  Value x = ctx.input(0), w = ctx.input(1), r = ctx.input(2);
  if (!x || !w || !r)
    return ctx.error("X, W and R are required");
  elementType = NodeContext::elementType(x);
  if (!isa<FloatType>(elementType))
    return ctx.unsupported("a recurrent layer on non-float tensors");
  for (Value value : {x, w, r})
    if (NodeContext::rank(value) != 3)
      return ctx.error("X, W and R must have rank 3");
  numGates = cell == Cell::Lstm ? 4 : cell == Cell::Gru ? 3 : 1;
  layout = ctx.getInt("layout", 0);
  if (layout != 0 && layout != 1)
    return ctx.error("layout must be 0 or 1, not " + Twine(layout));
  directionName = ctx.getString("direction", "forward");
  if (directionName != "forward" && directionName != "reverse" &&
      directionName != "bidirectional")
    return ctx.error("direction must be forward, reverse or bidirectional, "
                     "not '" +
                     directionName + "'");
  numDirections = directionName == "bidirectional" ? 2 : 1;

  Shape rShape = getShape(r), wShape = getShape(w);
  std::optional<int64_t> hiddenDim = rShape[2].getConstant();
  if (!hiddenDim)
    return ctx.unsupported("a symbolic hidden size (R is " +
                           shapeToString(rShape) + ")");
  hidden = *hiddenDim;
  if (std::optional<int64_t> attr = ctx.getOptInt("hidden_size");
      attr && *attr != hidden)
    return ctx.error("hidden_size = " + Twine(*attr) + " but R is " +
                     shapeToString(rShape));
  TDim gateRows(numGates * hidden);
  if (wShape[0] != TDim(numDirections) || rShape[0] != TDim(numDirections) ||
      wShape[1] != gateRows || rShape[1] != gateRows)
    return ctx.error("W is " + shapeToString(wShape) + " and R is " +
                     shapeToString(rShape) + ", expected " +
                     Twine(numDirections) + "," + Twine(numGates * hidden) +
                     ",... for " + Twine(numDirections) + " direction(s) of " +
                     Twine(numGates) + " gate(s) of " + Twine(hidden));
  auto checkShape = [&](unsigned index, StringRef name,
                        int64_t perDirection) -> LogicalResult {
    if (!ctx.hasInput(index))
      return success();
    Shape shape = getShape(ctx.input(index));
    if (shape != Shape{TDim(numDirections), TDim(perDirection)})
      return ctx.error(name + " is " + shapeToString(shape) + ", expected " +
                       Twine(numDirections) + "," + Twine(perDirection));
    return success();
  };
  if (failed(checkShape(3, "B", 2 * numGates * hidden)) ||
      (cell == Cell::Lstm && failed(checkShape(7, "P", 3 * hidden))))
    return failure();

  Shape xShape = getShape(x);
  TDim length = xShape[layout];
  batch = xShape[1 - layout];
  if (ctx.hasInput(4)) {
    std::optional<SmallVector<int64_t>> lengths = ctx.getConstInts(4);
    std::optional<int64_t> full = length.getConstant();
    if (!lengths || !full ||
        llvm::any_of(*lengths, [&](int64_t l) { return l != *full; }))
      return ctx.unsupported(
          "sequence_lens other than a constant equal to the sequence length "
          "for every batch element");
  }
  clip = ctx.getOptFloat("clip");
  if (clip && !(*clip > 0))
    return ctx.error("clip must be positive");
  inputForget = cell == Cell::Lstm && ctx.getInt("input_forget", 0) != 0;
  linearBeforeReset =
      cell == Cell::Gru && ctx.getInt("linear_before_reset", 0) != 0;
  wantY = ctx.hasOutput(0);

  static const StringRef lstm[] = {"Sigmoid", "Tanh", "Tanh"};
  static const StringRef gru[] = {"Sigmoid", "Tanh"};
  static const StringRef rnn[] = {"Tanh"};
  ArrayRef<StringRef> defaults = cell == Cell::Lstm  ? ArrayRef(lstm)
                                 : cell == Cell::Gru ? ArrayRef(gru)
                                                     : ArrayRef(rnn);
  FailureOr<SmallVector<Activation>> read =
      readActivations(ctx, defaults, numDirections);
  if (failed(read))
    return failure();
  activations = std::move(*read);
  return success();
}

FailureOr<SmallVector<Value>> RecurrentLayer::step(ArrayRef<Activation> f,
                                                   ValueRange states,
                                                   Value projected,
                                                   ValueRange full) {
  Value h = states[0];
  Value r = full[0];
  auto recurrent = [&](Value state, Value weights) {
    return ctx.create<EinsumOp>(ValueRange{state, weights}, "bh,gh->bg");
  };
  SmallVector<Value> next;
  switch (cell) {
  case Cell::Rnn:
    next.push_back(gate(f[0], ctx.binary<AddOp>(projected, recurrent(h, r))));
    break;
  case Cell::Gru: {
    // full: R of z and r, R of h, and Rbh when linear_before_reset.
    Value zr = ctx.binary<AddOp>(block(ctx, projected, 0, 2 * hidden),
                                 recurrent(h, r));
    Value z = gate(f[0], block(ctx, zr, 0, hidden));
    Value reset = gate(f[0], block(ctx, zr, 1, hidden));
    Value candidate;
    if (linearBeforeReset) {
      Value hr = recurrent(h, full[1]);
      if (full.size() > 2)
        hr = ctx.binary<AddOp>(hr, full[2]);
      candidate = ctx.binary<MulOp>(reset, hr);
    } else {
      candidate = recurrent(ctx.binary<MulOp>(reset, h), full[1]);
    }
    Value ht = gate(
        f[1], ctx.binary<AddOp>(block(ctx, projected, 2, hidden), candidate));
    Value keep = ctx.binary<SubOp>(scalar(z, 1), z);
    next.push_back(ctx.binary<AddOp>(ctx.binary<MulOp>(keep, ht),
                                     ctx.binary<MulOp>(z, h)));
    break;
  }
  case Cell::Lstm: {
    // Gates in ONNX order i, o, f, c; full: R, then Pi, Po, Pf if given.
    Value c = states[1];
    Value all = ctx.binary<AddOp>(projected, recurrent(h, r));
    Value gi = block(ctx, all, 0, hidden), go = block(ctx, all, 1, hidden);
    Value gf = block(ctx, all, 2, hidden), gc = block(ctx, all, 3, hidden);
    bool peepholes = full.size() > 1;
    if (peepholes)
      gi = ctx.binary<AddOp>(gi, ctx.binary<MulOp>(full[1], c));
    if (peepholes && !inputForget)
      gf = ctx.binary<AddOp>(gf, ctx.binary<MulOp>(full[3], c));
    Value i = gate(f[0], gi);
    Value forget =
        inputForget ? ctx.binary<SubOp>(scalar(i, 1), i) : gate(f[0], gf);
    Value candidate = gate(f[1], gc);
    Value nextC = ctx.binary<AddOp>(ctx.binary<MulOp>(forget, c),
                                    ctx.binary<MulOp>(i, candidate));
    if (peepholes)
      go = ctx.binary<AddOp>(go, ctx.binary<MulOp>(full[2], nextC));
    Value o = gate(f[0], go);
    next.push_back(ctx.binary<MulOp>(o, activate(ctx, f[2], nextC)));
    next.push_back(nextC);
    break;
  }
  }
  if (wantY)
    next.push_back(ctx.create<AddAxisOp>(next.front(), layout));
  return next;
}

FailureOr<SmallVector<Value>> RecurrentLayer::runDirection(int64_t d) {
  bool reverse =
      directionName == "reverse" || (directionName == "bidirectional" && d);
  size_t perDirection = activations.size() / numDirections;
  ArrayRef<Activation> f =
      ArrayRef(activations).slice(d * perDirection, perDirection);
  Value x = ctx.input(0);
  Value w = direction(ctx, ctx.input(1), d);
  Value r = direction(ctx, ctx.input(2), d);

  // The input projection of the whole sequence, with the biases that do not
  // depend on the state.
  Value projected = ctx.create<EinsumOp>(
      ValueRange{x, w}, layout ? "bsi,gi->bsg" : "sbi,gi->sbg");
  Value rbh;
  if (ctx.hasInput(3)) {
    Value biases = direction(ctx, ctx.input(3), d);
    Value wb = block(ctx, biases, 0, numGates * hidden);
    Value rb = block(ctx, biases, 1, numGates * hidden);
    Value bias = ctx.binary<AddOp>(wb, rb);
    if (linearBeforeReset) {
      // Rbh is added to H·Rhᵀ before the reset gate scales it.
      rbh = block(ctx, rb, 2, hidden);
      bias = ctx.create<ConcatOp>(
          SmallVector<Value>{block(ctx, bias, 0, 2 * hidden),
                             block(ctx, wb, 2, hidden)},
          int64_t(0));
    }
    projected = ctx.binary<AddOp>(projected, bias);
  }

  // Initial states, [batch, hidden].
  int64_t stateAxis = layout ? 1 : 0;
  auto initial = [&](unsigned index) -> Value {
    if (ctx.hasInput(index)) {
      // The state's batch is the input's, assumed when not provable.
      Value state = direction(ctx, ctx.input(index), d, stateAxis);
      FailureOr<Value> aligned =
          state ? ctx.assumeDim(state, 0, batch, "the initial state")
                : FailureOr<Value>(state);
      return succeeded(aligned) ? *aligned : Value();
    }
    if (std::optional<int64_t> b = batch.getConstant()) {
      auto type = RankedTensorType::get({*b, hidden}, elementType);
      return ctx.constant(DenseElementsAttr::get(
          type, FloatAttr::get(cast<FloatType>(elementType), 0.0)));
    }
    return ctx.create<BroadcastOp>(
        ctx.scalar(elementType, 0, 2),
        ShapeAttr::get(ctx.getContext(), {batch, TDim(hidden)}));
  };
  SmallVector<Value> states{initial(5)};
  if (cell == Cell::Lstm)
    states.push_back(initial(6));

  SmallVector<Value> full;
  if (cell == Cell::Gru) {
    full.push_back(block(ctx, r, 0, 2 * hidden, 0));
    full.push_back(block(ctx, r, 2, hidden, 0));
    if (rbh)
      full.push_back(rbh);
  } else {
    full.push_back(r);
  }
  if (cell == Cell::Lstm && ctx.hasInput(7)) {
    Value p = direction(ctx, ctx.input(7), d);
    for (int64_t k = 0; k < 3; ++k)
      full.push_back(block(ctx, p, k, hidden));
  }

  int64_t seqAxis = layout;
  SmallVector<int64_t> outputAxes;
  if (wantY)
    outputAxes.push_back(seqAxis);
  FailureOr<SmallVector<Value>> results = buildScan(
      ctx, states, {{projected, seqAxis, reverse ? -1 : 1}}, full, outputAxes,
      [&](ValueRange stateArgs, ValueRange chunks, ValueRange fullArgs) {
        Value chunk = ctx.create<RmAxisOp>(chunks[0], seqAxis);
        return step(f, stateArgs, chunk, fullArgs);
      });
  if (failed(results))
    return failure();

  // Y is [seq, dir, batch, hidden] or [batch, seq, dir, hidden]; Y_h and
  // Y_c are [dir, batch, hidden] or [batch, dir, hidden].
  SmallVector<Value> withDirection;
  for (auto [index, state] :
       llvm::enumerate(ArrayRef(*results).take_front(states.size())))
    withDirection.push_back(ctx.hasOutput(1 + index)
                                ? ctx.create<AddAxisOp>(state, stateAxis)
                                : Value());
  if (wantY) {
    Value y = results->back();
    if (reverse)
      y = reverseAxis(ctx, y, seqAxis);
    withDirection.push_back(ctx.create<AddAxisOp>(y, layout ? 2 : 1));
  }
  return withDirection;
}

LogicalResult RecurrentLayer::translate(Outputs &outputs) {
  if (failed(readAttributes()))
    return failure();
  SmallVector<SmallVector<Value>> perDirection;
  for (int64_t d = 0; d < numDirections; ++d) {
    FailureOr<SmallVector<Value>> results = runDirection(d);
    if (failed(results))
      return failure();
    perDirection.push_back(std::move(*results));
  }
  auto gather = [&](size_t index, int64_t axis) {
    SmallVector<Value> parts;
    for (const SmallVector<Value> &results : perDirection)
      parts.push_back(results[index]);
    return concatDirections(ctx, parts, axis);
  };
  size_t numStates = cell == Cell::Lstm ? 2 : 1;
  int64_t stateAxis = layout ? 1 : 0;
  outputs.push_back(wantY ? gather(numStates, layout ? 2 : 1) : Value());
  outputs.push_back(ctx.hasOutput(1) ? gather(0, stateAxis) : Value());
  if (cell == Cell::Lstm)
    outputs.push_back(ctx.hasOutput(2) ? gather(1, stateAxis) : Value());
  return success();
}

} // namespace

void mlir::tract::onnx::registerRecurrentOps(OpRegistry &registry) {
  registry.add("LSTM", {1, 7, 14, 22}, [](NodeContext &ctx, Outputs &outputs) {
    return RecurrentLayer(ctx, Cell::Lstm).translate(outputs);
  });
  registry.add("GRU", {1, 3, 7, 14, 22},
               [](NodeContext &ctx, Outputs &outputs) {
                 return RecurrentLayer(ctx, Cell::Gru).translate(outputs);
               });
  registry.add("RNN", {1, 7, 14, 22}, [](NodeContext &ctx, Outputs &outputs) {
    return RecurrentLayer(ctx, Cell::Rnn).translate(outputs);
  });
}
