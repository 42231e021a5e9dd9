//===- ControlOps.cpp - ONNX If, Scan and Loop ----------------------------===//
//
// If becomes tract.if (or only its taken branch when the condition is a
// constant). Scan and Loop become tract.scan: ONNX scans slices without the
// scanned axis, tract scans chunks of one element, so the body removes the
// axis from each chunk and adds it back to each scanned output. A Loop runs
// as a scan over the range of its iteration numbers, which requires its
// number of iterations to be fixed when it starts.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/ScanBuilder.h"

#include "dialects/tract/TractAttrs.h"
#include "frontends/onnx/GraphImporter.h"
#include "frontends/onnx/onnx.pb.h"

using namespace mlir;
using namespace mlir::tract;
using namespace mlir::tract::onnx;

namespace {

using Outputs = SmallVectorImpl<Value>;

/// The node's outputs: the results of the scan that computes them.
LogicalResult appendResults(Outputs &outputs,
                            const FailureOr<SmallVector<Value>> &results) {
  if (failed(results))
    return failure();
  outputs.append(results->begin(), results->end());
  return success();
}

/// Regions under construction. A placeholder op at the insertion point holds
/// them while their ops are built, so that nested ops (a scan in a scan
/// body) are verified with the enclosing values in scope; the regions then
/// move into the state of the op being created.
class PendingRegions {
public:
  PendingRegions(NodeContext &ctx, StringRef opName, unsigned count) {
    OperationState state(ctx.getLoc(), opName);
    for (unsigned i = 0; i < count; ++i)
      state.addRegion();
    holder = ctx.getBuilder().create(state);
  }
  PendingRegions(const PendingRegions &) = delete;
  PendingRegions &operator=(const PendingRegions &) = delete;
  ~PendingRegions() { holder->erase(); }

  /// Forgets what the model state knows of the values inside the regions,
  /// before they are dropped unused.
  void forget(ModelState &model) {
    holder->walk([&](Operation *op) {
      for (Value result : op->getResults())
        model.dims.erase(result);
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument argument : block.getArguments())
            model.dims.erase(argument);
    });
  }

  /// A new block at the end of region `index`.
  Block *addBlock(unsigned index) {
    Block *block = new Block();
    holder->getRegion(index).push_back(block);
    return block;
  }

  /// Moves the regions into those that the op's build added to `state`.
  void moveInto(OperationState &state) {
    for (auto [index, region] : llvm::enumerate(state.regions))
      region->takeBody(holder->getRegion(index));
  }

private:
  Operation *holder;
};

/// The branch an If whose condition compares two dims the shapes cannot
/// decide (`Equal(Gather(Shape(x), 2), 1)`, through Not and Cast) takes
/// when they are equal; the equality is recorded as an assertion. None
/// when the condition is not of that form.
std::optional<bool> assumeEqualDims(NodeContext &ctx, Value cond) {
  bool flipped = false;
  Operation *op = cond.getDefiningOp();
  while (op && (isa<CastOp>(op) || isa<NotOp>(op))) {
    flipped ^= isa<NotOp>(op);
    op = op->getOperand(0).getDefiningOp();
  }
  auto eq = dyn_cast_or_null<EqOp>(op);
  if (!eq)
    return std::nullopt;
  std::optional<SmallVector<TDim>> lhs = ctx.getDims(eq.getLhs()),
                                   rhs = ctx.getDims(eq.getRhs());
  if (!lhs || !rhs || lhs->size() != 1 || rhs->size() != 1)
    return std::nullopt;
  ctx.getGraph().assumeEqual(lhs->front(), rhs->front());
  return !flipped;
}

std::string typeString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// Whether `value` is a constant whose elements are all true.
bool isConstantTrue(Value value) {
  auto op = value.getDefiningOp<ConstOp>();
  auto constant =
      op ? dyn_cast<DenseElementsAttr>(op.getValue()) : DenseElementsAttr();
  if (!constant || !constant.getElementType().isInteger(1))
    return false;
  return llvm::all_of(constant.getValues<bool>(), [](bool b) { return b; });
}

//===----------------------------------------------------------------------===//
// If
//===----------------------------------------------------------------------===//

/// Imports one branch into a region block and yields its outputs; the
/// assertions its ops record go to `assertions`, as they only hold when the
/// branch runs.
FailureOr<SmallVector<Value>>
importBranch(NodeContext &ctx, const ::onnx::GraphProto &graph, Block *block,
             std::vector<std::string> &assertions) {
  OpBuilder &builder = ctx.getBuilder();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(block);
  ModelState &model = ctx.getGraph().getModel();
  std::vector<std::string> *outer = model.branchAssertions;
  model.branchAssertions = &assertions;
  FailureOr<SmallVector<Value>> values =
      ctx.getGraph().importSubgraph(graph, {}, builder);
  model.branchAssertions = outer;
  if (failed(values))
    return failure();
  YieldOp::create(builder, ctx.getLoc(), *values);
  return values;
}

LogicalResult ifHandler(NodeContext &ctx, Outputs &outputs) {
  const ::onnx::GraphProto *thenGraph = ctx.getGraphAttr("then_branch");
  const ::onnx::GraphProto *elseGraph = ctx.getGraphAttr("else_branch");
  if (!thenGraph || !elseGraph)
    return ctx.error("If needs both then_branch and else_branch");
  if (thenGraph->output_size() != elseGraph->output_size())
    return ctx.error("the branches have " + Twine(thenGraph->output_size()) +
                     " and " + Twine(elseGraph->output_size()) + " outputs");
  if (static_cast<int>(ctx.getNumOutputs()) != thenGraph->output_size())
    return ctx.error("the node has " + Twine(ctx.getNumOutputs()) +
                     " outputs, its branches " +
                     Twine(thenGraph->output_size()));

  // A constant condition: only the taken branch, inline.
  if (DenseElementsAttr cond = ctx.getConstant(0)) {
    if (cond.getNumElements() != 1 || !cond.getElementType().isInteger(1))
      return ctx.error("the condition must be one boolean");
    bool taken = *cond.getValues<bool>().begin();
    FailureOr<SmallVector<Value>> values = ctx.getGraph().importSubgraph(
        taken ? *thenGraph : *elseGraph, {}, ctx.getBuilder());
    if (failed(values))
      return failure();
    outputs.append(values->begin(), values->end());
    return success();
  }

  Value cond = ctx.input(0);
  if (!cond)
    return ctx.error("the condition is missing");
  PendingRegions regions(ctx, IfOp::getOperationName(), 2);
  std::vector<std::string> thenAssertions, elseAssertions;
  FailureOr<SmallVector<Value>> thenValues =
      importBranch(ctx, *thenGraph, regions.addBlock(0), thenAssertions);
  if (failed(thenValues))
    return failure();
  FailureOr<SmallVector<Value>> elseValues =
      importBranch(ctx, *elseGraph, regions.addBlock(1), elseAssertions);
  if (failed(elseValues))
    return failure();
  SmallVector<Type> types;
  // Branches of different types on a comparison of dims: the branch for
  // equal dims, which an assertion checks when the model runs.
  bool sameTypes =
      llvm::all_of(llvm::zip(*thenValues, *elseValues), [](auto pair) {
        return std::get<0>(pair).getType() == std::get<1>(pair).getType();
      });
  if (!sameTypes)
    if (std::optional<bool> taken = assumeEqualDims(ctx, cond)) {
      regions.forget(ctx.getGraph().getModel());
      FailureOr<SmallVector<Value>> values = ctx.getGraph().importSubgraph(
          *taken ? *thenGraph : *elseGraph, {}, ctx.getBuilder());
      if (failed(values))
        return failure();
      outputs.append(values->begin(), values->end());
      return success();
    }
  for (auto [index, thenValue, elseValue] :
       llvm::enumerate(*thenValues, *elseValues)) {
    if (thenValue.getType() != elseValue.getType())
      return ctx.unsupported(
          "output " + Twine(index) + " is " + typeString(thenValue.getType()) +
          " in the then branch and " + typeString(elseValue.getType()) +
          " in the else branch; tract.if needs one type");
    types.push_back(thenValue.getType());
  }
  OperationState state(ctx.getLoc(), IfOp::getOperationName());
  auto strings = [&](ArrayRef<std::string> texts) -> ArrayAttr {
    if (texts.empty())
      return {};
    return ctx.getBuilder().getStrArrayAttr(
        llvm::to_vector_of<StringRef>(texts));
  };
  IfOp::build(ctx.getBuilder(), state, types, cond, strings(thenAssertions),
              strings(elseAssertions));
  regions.moveInto(state);
  Operation *op = ctx.createWithTypes(state);
  if (!op)
    return failure();
  outputs.append(op->result_begin(), op->result_end());
  return success();
}

//===----------------------------------------------------------------------===//
// Scan
//===----------------------------------------------------------------------===//

/// An ONNX scan over slices: `states` and `scanned` (with their axes and
/// directions) feed `body`, whose scanned outputs are stacked on
/// `outputAxes` (negative counts from the end of the stacked output) in
/// `outputReverse` order.
FailureOr<SmallVector<Value>>
scanSlices(NodeContext &ctx, const ::onnx::GraphProto &body, ValueRange states,
           ValueRange scanned, ArrayRef<int64_t> inputAxes,
           ArrayRef<bool> inputReverse, ArrayRef<int64_t> outputAxes,
           ArrayRef<bool> outputReverse) {
  size_t numStates = states.size();
  if (static_cast<size_t>(body.input_size()) != numStates + scanned.size())
    return ctx.error("the body takes " + Twine(body.input_size()) +
                     " inputs, expected " + Twine(numStates) + " states and " +
                     Twine(scanned.size()) + " scanned inputs");
  if (static_cast<size_t>(body.output_size()) != numStates + outputAxes.size())
    return ctx.error("the body has " + Twine(body.output_size()) +
                     " outputs, expected " + Twine(numStates) + " states and " +
                     Twine(outputAxes.size()) + " scanned outputs");
  if (scanned.empty())
    return ctx.error("a scan needs at least one scanned input");
  SmallVector<ScannedInput> inputs;
  for (auto [value, axis, reverse] :
       llvm::zip(scanned, inputAxes, inputReverse)) {
    FailureOr<int64_t> normalized =
        ctx.normalizeAxis(axis, NodeContext::rank(value));
    if (failed(normalized))
      return failure();
    inputs.push_back({value, *normalized, reverse ? -1 : 1});
  }
  auto buildBody = [&](ValueRange stateArgs, ValueRange chunks,
                       ValueRange) -> FailureOr<SmallVector<Value>> {
    SmallVector<Value> bodyInputs(stateArgs.begin(), stateArgs.end());
    for (auto [chunk, input] : llvm::zip(chunks, inputs))
      bodyInputs.push_back(ctx.create<RmAxisOp>(chunk, input.axis));
    FailureOr<SmallVector<Value>> results =
        ctx.getGraph().importSubgraph(body, bodyInputs, ctx.getBuilder());
    if (failed(results))
      return failure();
    SmallVector<Value> yielded;
    for (size_t i = 0; i < numStates; ++i) {
      Value next = (*results)[i];
      if (next.getType() != stateArgs[i].getType())
        return ctx.unsupported(
            "state " + Twine(i) + " ('" + body.output(i).name() +
            "') starts as " + typeString(stateArgs[i].getType()) +
            " but the body makes it " + typeString(next.getType()));
      yielded.push_back(next);
    }
    for (auto [index, axis] : llvm::enumerate(outputAxes)) {
      Value slice = (*results)[numStates + index];
      FailureOr<int64_t> normalized =
          ctx.normalizeAxis(axis, NodeContext::rank(slice) + 1);
      if (failed(normalized))
        return failure();
      yielded.push_back(ctx.create<AddAxisOp>(slice, *normalized));
    }
    return yielded;
  };
  FailureOr<SmallVector<Value>> results =
      buildScan(ctx, states, inputs, {}, outputAxes, buildBody);
  if (failed(results))
    return failure();
  for (auto [index, reverse] : llvm::enumerate(outputReverse)) {
    if (!reverse)
      continue;
    Value &output = (*results)[numStates + index];
    int64_t axis = outputAxes[index];
    if (axis < 0)
      axis += NodeContext::rank(output);
    output = reverseAxis(ctx, output, axis);
  }
  return results;
}

/// Reads a per-input attribute list, `defaultValue` for each when absent.
FailureOr<SmallVector<int64_t>> perInput(NodeContext &ctx, StringRef name,
                                         size_t count, int64_t defaultValue) {
  std::optional<SmallVector<int64_t>> values = ctx.getInts(name);
  if (!values)
    return SmallVector<int64_t>(count, defaultValue);
  if (values->size() != count) {
    (void)ctx.error(name + " has " + Twine(values->size()) +
                    " entries, expected " + Twine(count));
    return failure();
  }
  return *values;
}

/// Directions as flags: 0 forward, 1 reverse.
FailureOr<SmallVector<bool>> directions(NodeContext &ctx, StringRef name,
                                        size_t count) {
  FailureOr<SmallVector<int64_t>> values = perInput(ctx, name, count, 0);
  if (failed(values))
    return failure();
  SmallVector<bool> reverse;
  for (int64_t value : *values) {
    if (value != 0 && value != 1) {
      (void)ctx.error(name + " must hold 0 (forward) or 1 (reverse), not " +
                      Twine(value));
      return failure();
    }
    reverse.push_back(value == 1);
  }
  return reverse;
}

/// A Scan node's body and how its inputs after the first `leading` ones
/// (Scan-8's sequence lengths) split into states and scanned ones, with the
/// number of scanned outputs the body yields after the states.
struct ScanCounts {
  const ::onnx::GraphProto *body;
  int64_t numInputs, numScanned, numStates, numScanOutputs;
};

FailureOr<ScanCounts> readScanCounts(NodeContext &ctx, int64_t leading) {
  int64_t numInputs = static_cast<int64_t>(ctx.getNumInputs()) - leading;
  const ::onnx::GraphProto *body = ctx.getGraphAttr("body");
  std::optional<int64_t> numScanned = ctx.getOptInt("num_scan_inputs");
  if (!body || !numScanned)
    return ctx.error("Scan needs a body and num_scan_inputs");
  int64_t numStates = numInputs - *numScanned;
  int64_t numScanOutputs = body->output_size() - numStates;
  if (*numScanned < 1 || numStates < 0 || numScanOutputs < 0)
    return ctx.error("num_scan_inputs = " + Twine(*numScanned) +
                     " does not fit " + Twine(numInputs) + " inputs and " +
                     Twine(body->output_size()) + " body outputs");
  return ScanCounts{body, numInputs, *numScanned, numStates, numScanOutputs};
}

/// Scan-9 and later: no batch axis.
LogicalResult scanHandler(NodeContext &ctx, Outputs &outputs) {
  FailureOr<ScanCounts> counts = readScanCounts(ctx, /*leading=*/0);
  if (failed(counts))
    return failure();
  const ScanCounts &scan = *counts;
  SmallVector<Value> states, scanned;
  for (int64_t i = 0; i < scan.numInputs; ++i)
    (i < scan.numStates ? states : scanned).push_back(ctx.input(i));
  FailureOr<SmallVector<int64_t>> inputAxes =
      perInput(ctx, "scan_input_axes", scan.numScanned, 0);
  FailureOr<SmallVector<bool>> inputReverse =
      directions(ctx, "scan_input_directions", scan.numScanned);
  FailureOr<SmallVector<int64_t>> outputAxes =
      perInput(ctx, "scan_output_axes", scan.numScanOutputs, 0);
  FailureOr<SmallVector<bool>> outputReverse =
      directions(ctx, "scan_output_directions", scan.numScanOutputs);
  if (failed(inputAxes) || failed(inputReverse) || failed(outputAxes) ||
      failed(outputReverse))
    return failure();
  return appendResults(outputs,
                       scanSlices(ctx, *scan.body, states, scanned, *inputAxes,
                                  *inputReverse, *outputAxes, *outputReverse));
}

/// Scan-8: every input has a leading batch axis and scanned inputs are
/// scanned on axis 1. The batch runs as an outer scan over its elements
/// (or is just dropped when it is 1).
LogicalResult scan8Handler(NodeContext &ctx, Outputs &outputs) {
  FailureOr<ScanCounts> counts = readScanCounts(ctx, /*leading=*/1);
  if (failed(counts))
    return failure();
  const ScanCounts &scan = *counts;
  SmallVector<Value> inputs;
  for (int64_t i = 0; i < scan.numInputs; ++i) {
    Value input = ctx.input(i + 1);
    if (!input)
      return ctx.error("input " + Twine(i + 1) + " is missing");
    if (NodeContext::rank(input) < (i < scan.numStates ? 1 : 2))
      return ctx.error("input " + Twine(i + 1) +
                       " lacks the batch (and scan) axes");
    inputs.push_back(input);
  }
  TDim batch = getShape(inputs.front())[0];
  TDim length = getShape(inputs[scan.numStates])[1];
  if (ctx.hasInput(0)) {
    std::optional<SmallVector<int64_t>> lengths = ctx.getConstInts(0);
    std::optional<int64_t> full = length.getConstant();
    if (!lengths || !full ||
        llvm::any_of(*lengths, [&](int64_t l) { return l != *full; }))
      return ctx.unsupported("sequence_lens other than the full sequence "
                             "length of every batch element");
  }
  FailureOr<SmallVector<bool>> inputReverse =
      directions(ctx, "directions", scan.numScanned);
  if (failed(inputReverse))
    return failure();
  SmallVector<int64_t> inputAxes(scan.numScanned, 0),
      outputAxes(scan.numScanOutputs, 0);
  SmallVector<bool> outputReverse(scan.numScanOutputs, false);

  // One batch element: inputs without the batch axis, outputs with it.
  auto scanElement =
      [&](ValueRange elementInputs) -> FailureOr<SmallVector<Value>> {
    SmallVector<Value> sliced;
    for (Value input : elementInputs)
      sliced.push_back(ctx.create<RmAxisOp>(input, int64_t(0)));
    FailureOr<SmallVector<Value>> results = scanSlices(
        ctx, *scan.body, ValueRange(sliced).take_front(scan.numStates),
        ValueRange(sliced).drop_front(scan.numStates), inputAxes, *inputReverse,
        outputAxes, outputReverse);
    if (failed(results))
      return failure();
    SmallVector<Value> batched;
    for (Value result : *results)
      batched.push_back(ctx.create<AddAxisOp>(result, int64_t(0)));
    return batched;
  };

  FailureOr<SmallVector<Value>> results = failure();
  if (batch == TDim(1)) {
    results = scanElement(inputs);
  } else {
    SmallVector<ScannedInput> perElement;
    for (Value input : inputs)
      perElement.push_back({input, 0, 1});
    SmallVector<int64_t> stacked(scan.numStates + scan.numScanOutputs, 0);
    results = buildScan(ctx, {}, perElement, {}, stacked,
                        [&](ValueRange, ValueRange chunks, ValueRange) {
                          return scanElement(chunks);
                        });
  }
  return appendResults(outputs, results);
}

//===----------------------------------------------------------------------===//
// Loop
//===----------------------------------------------------------------------===//

LogicalResult loopHandler(NodeContext &ctx, Outputs &outputs) {
  const ::onnx::GraphProto *body = ctx.getGraphAttr("body");
  if (!body)
    return ctx.error("Loop needs a body");
  int64_t numCarried = static_cast<int64_t>(ctx.getNumInputs()) - 2;
  int64_t numScanOutputs = body->output_size() - 1 - numCarried;
  if (numCarried < 0 || body->input_size() != 2 + numCarried ||
      numScanOutputs < 0)
    return ctx.error("the body takes " + Twine(body->input_size()) +
                     " inputs and has " + Twine(body->output_size()) +
                     " outputs, which does not fit " +
                     Twine(ctx.getNumInputs()) + " node inputs");
  Value tripCount = ctx.input(0);
  if (!tripCount)
    return ctx.unsupported("a Loop without a trip count (M) ends when its "
                           "body says so (data-dependent termination)");
  if (NodeContext::elementType(tripCount) !=
          IntegerType::get(ctx.getContext(), 64) ||
      volume(getShape(tripCount)) != TDim(1))
    return ctx.error("the trip count must be one int64");
  SmallVector<Value> initial;
  for (int64_t i = 0; i < numCarried; ++i) {
    Value value = ctx.input(2 + i);
    if (!value)
      return ctx.error("loop-carried input " + Twine(2 + i) + " is missing");
    initial.push_back(value);
  }

  // The number of iterations: M while the initial condition holds. Inside
  // the body the incoming condition is always true (the body only runs then),
  // so the body must give true back for the loop to go on to M.
  Type i64 = IntegerType::get(ctx.getContext(), 64);
  Type i1 = IntegerType::get(ctx.getContext(), 1);
  Value end = tripCount;
  std::optional<TDim> iterations;
  if (std::optional<SmallVector<TDim>> dims = ctx.getDims(0);
      dims && dims->size() == 1)
    iterations = dims->front();
  if (std::optional<int64_t> constant =
          iterations ? iterations->getConstant() : std::nullopt;
      constant && *constant < 0) {
    end = ctx.intScalar(i64, 0);
    iterations = TDim(0);
  }
  if (ctx.hasInput(1)) {
    Value cond = ctx.input(1);
    if (DenseElementsAttr constant = ctx.getConstant(1)) {
      if (constant.getNumElements() != 1 ||
          !constant.getElementType().isInteger(1))
        return ctx.error("the condition must be one boolean");
      if (!*constant.getValues<bool>().begin()) {
        end = ctx.intScalar(i64, 0);
        iterations = TDim(0);
      }
    } else {
      int64_t rank =
          std::max(NodeContext::rank(cond), NodeContext::rank(tripCount));
      end = ctx.create<SelectOp>(ctx.unsqueezeTo(cond, rank),
                                 ctx.unsqueezeTo(tripCount, rank),
                                 ctx.intScalar(i64, 0, rank));
      iterations.reset();
    }
  }
  if (!iterations)
    iterations = ctx.freshSymbol("iterations");
  Value range =
      ctx.create<RangeOp>(ctx.intScalar(i64, 0), end, ctx.intScalar(i64, 1),
                          DimAttr::get(ctx.getContext(), *iterations));

  auto buildBody = [&](ValueRange states, ValueRange chunks,
                       ValueRange) -> FailureOr<SmallVector<Value>> {
    SmallVector<Value> bodyInputs;
    bodyInputs.push_back(ctx.create<RmAxisOp>(chunks[0], int64_t(0)));
    bodyInputs.push_back(ctx.constant(
        DenseElementsAttr::get(RankedTensorType::get({}, i1), true)));
    bodyInputs.append(states.begin(), states.end());
    FailureOr<SmallVector<Value>> results =
        ctx.getGraph().importSubgraph(*body, bodyInputs, ctx.getBuilder());
    if (failed(results))
      return failure();
    if (!isConstantTrue(results->front()))
      return ctx.unsupported(
          "the body computes the loop condition ('" + body->output(0).name() +
          "'): data-dependent termination; only loops whose condition "
          "stays true run as a scan");
    SmallVector<Value> yielded;
    for (int64_t i = 0; i < numCarried; ++i) {
      Value next = (*results)[1 + i];
      if (next.getType() != states[i].getType())
        return ctx.unsupported("loop-carried value " + Twine(i) + " ('" +
                               body->output(1 + i).name() + "') starts as " +
                               typeString(states[i].getType()) +
                               " but the body makes it " +
                               typeString(next.getType()));
      yielded.push_back(next);
    }
    for (int64_t i = 0; i < numScanOutputs; ++i)
      yielded.push_back(
          ctx.create<AddAxisOp>((*results)[1 + numCarried + i], int64_t(0)));
    return yielded;
  };
  SmallVector<int64_t> outputAxes(numScanOutputs, 0);
  return appendResults(outputs, buildScan(ctx, initial, {{range, 0, 1}}, {},
                                          outputAxes, buildBody));
}

} // namespace

//===----------------------------------------------------------------------===//
// Shared scan building
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<Value>> mlir::tract::onnx::buildScan(
    NodeContext &ctx, ValueRange states, ArrayRef<ScannedInput> scanned,
    ValueRange full, ArrayRef<int64_t> outputAxes, ScanBodyBuilder body) {
  SmallVector<Value> operands(states.begin(), states.end());
  for (const ScannedInput &input : scanned)
    operands.push_back(input.value);
  operands.append(full.begin(), full.end());
  if (llvm::any_of(operands, [](Value v) { return !v; }))
    return failure();

  PendingRegions regions(ctx, ScanOp::getOperationName(), 1);
  Block *block = regions.addBlock(0);
  Location loc = ctx.getLoc();
  for (Value state : states)
    block->addArgument(state.getType(), loc);
  std::optional<TDim> iterations;
  SmallVector<int64_t> scanAxes, chunks;
  for (const ScannedInput &input : scanned) {
    Shape shape = getShape(input.value);
    if (input.axis < 0 || input.axis >= static_cast<int64_t>(shape.size()) ||
        input.chunk == 0)
      return ctx.error("invalid scan axis " + Twine(input.axis) + " or chunk " +
                       Twine(input.chunk));
    int64_t chunk = std::abs(input.chunk);
    if (!iterations)
      iterations = shape[input.axis].ceilDiv(chunk);
    shape[input.axis] = TDim(chunk);
    block->addArgument(getTensorTypeLike(input.value, shape), loc);
    scanAxes.push_back(input.axis);
    chunks.push_back(input.chunk);
  }
  for (Value value : full)
    block->addArgument(value.getType(), loc);

  SmallVector<Value> yielded;
  {
    OpBuilder &builder = ctx.getBuilder();
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(block);
    ValueRange args = block->getArguments();
    FailureOr<SmallVector<Value>> result =
        body(args.take_front(states.size()),
             args.slice(states.size(), scanned.size()),
             args.drop_front(states.size() + scanned.size()));
    if (failed(result) || ctx.hasFailed() ||
        llvm::any_of(*result, [](Value v) { return !v; }))
      return failure();
    if (result->size() != states.size() + outputAxes.size())
      return ctx.error("the scan body yields " + Twine(result->size()) +
                       " values, expected " +
                       Twine(states.size() + outputAxes.size()));
    yielded = std::move(*result);
    YieldOp::create(builder, loc, yielded);
  }

  SmallVector<Type> types = llvm::to_vector(states.getTypes());
  SmallVector<int64_t> axes;
  for (auto [index, axis] : llvm::enumerate(outputAxes)) {
    Value chunk = yielded[states.size() + index];
    Shape shape = getShape(chunk);
    int64_t rank = shape.size();
    int64_t normalized = axis < 0 ? axis + rank : axis;
    if (normalized < 0 || normalized >= rank)
      return ctx.error("scan output axis " + Twine(axis) +
                       " is out of range for rank " + Twine(rank));
    if (!iterations)
      return ctx.error("a scan with scanned outputs needs a scanned input");
    shape[normalized] = shape[normalized] * *iterations;
    types.push_back(getTensorTypeLike(chunk, shape));
    axes.push_back(normalized);
  }

  OperationState state(loc, ScanOp::getOperationName());
  ScanOp::build(ctx.getBuilder(), state, types, operands, states.size(),
                scanAxes, chunks, axes);
  regions.moveInto(state);
  Operation *op = ctx.createWithTypes(state);
  if (!op)
    return failure();
  return SmallVector<Value>(op->result_begin(), op->result_end());
}

Value mlir::tract::onnx::reverseAxis(NodeContext &ctx, Value value,
                                     int64_t axis) {
  if (!value)
    return {};
  TDim length = getShape(value)[axis];
  if (length == TDim(1) || length == TDim(0))
    return value;
  Type i64 = IntegerType::get(ctx.getContext(), 64);
  Value last;
  if (std::optional<int64_t> constant = length.getConstant()) {
    last = ctx.intScalar(i64, *constant - 1);
  } else {
    Value shape = ctx.create<ShapeOfOp>(value);
    Value dim =
        ctx.create<GatherOp>(shape, ctx.intScalar(i64, axis), int64_t(0));
    last = ctx.create<SubOp>(dim, ctx.intScalar(i64, 1));
  }
  Value indices =
      ctx.create<RangeOp>(last, ctx.intScalar(i64, -1), ctx.intScalar(i64, -1),
                          DimAttr::get(ctx.getContext(), length));
  return ctx.create<GatherOp>(value, indices, axis);
}

void mlir::tract::onnx::registerControlOps(OpRegistry &registry) {
  registry.add("If", {1, 11, 13, 16, 19, 21, 23}, ifHandler);
  registry.add("Scan", 8, scan8Handler);
  registry.add("Scan", {9, 11, 16, 19, 21, 23}, scanHandler);
  registry.add("Loop", {1, 11, 13, 16, 19, 21, 23}, loopHandler);
}
