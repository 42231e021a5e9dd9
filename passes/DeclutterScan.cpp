//===- DeclutterScan.cpp - less work in each iteration of a scan ----------===//
//
// The other declutter rewrites reach into scan bodies by themselves (the
// greedy driver walks nested regions); these change the scan itself. Full
// inputs become values the body captures, so that the body's rewrites see
// constants; inputs, states and outputs nothing reads are dropped; a scan
// of a single iteration is inlined; a loop over positions that gathers a
// sequence's frame at each scans the sequence; and an op of the body that reads a
// scanned chunk and loop-invariant values only moves out of the loop,
// applied once to the whole scanned input, whose result is scanned instead:
// S products x_t · Wᵀ of a vector by a matrix become one matrix product.
//
//===----------------------------------------------------------------------===//

#include "dialects/tract/EinsumExpr.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"
#include "passes/DeclutterPatterns.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::tract;

namespace {

/// The operands and attributes of a scan that replaces another one.
struct ScanParts {
  SmallVector<Value> inputs;
  int64_t numStates = 0;
  SmallVector<int64_t> scanAxes, chunks, outputAxes;
  /// For each result of the new scan, the result of the old one it
  /// replaces; the old results left out have no uses.
  SmallVector<unsigned> kept;

  static ScanParts of(ScanOp op) {
    ScanParts parts;
    parts.inputs = llvm::to_vector(op.getInputs());
    parts.numStates = op.getNumStates();
    parts.scanAxes = llvm::to_vector(op.getScanAxes());
    parts.chunks = llvm::to_vector(op.getScanChunks());
    parts.outputAxes = llvm::to_vector(op.getOutputAxes());
    parts.kept = llvm::to_vector(llvm::seq<unsigned>(0, op.getNumResults()));
    return parts;
  }
};

/// Replaces `op` by a scan made of `parts` that takes over its body, which
/// the caller has already matched to the new inputs and results.
void replaceScan(PatternRewriter &rewriter, ScanOp op, const ScanParts &parts) {
  rewriter.setInsertionPoint(op);
  SmallVector<Type> types;
  for (unsigned index : parts.kept)
    types.push_back(op.getResult(index).getType());
  auto scan = ScanOp::create(rewriter, op.getLoc(), types, parts.inputs,
                             static_cast<uint64_t>(parts.numStates),
                             parts.scanAxes, parts.chunks, parts.outputAxes);
  // What other passes attached to the scan (pulse.skip, the frames a
  // pulsified scan ignores at the start of the stream) stays on it.
  for (NamedAttribute attribute : op->getDiscardableAttrs())
    scan->setDiscardableAttr(attribute.getName(), attribute.getValue());
  rewriter.inlineRegionBefore(op.getBody(), scan.getBody(),
                              scan.getBody().end());
  for (auto [position, index] : llvm::enumerate(parts.kept))
    rewriter.replaceAllUsesWith(op.getResult(index), scan.getResult(position));
  rewriter.eraseOp(op);
}

/// Full inputs become values the body captures: the scan lowers to a loop
/// that sees them anyway, and the body's rewrites see constants as such.
LogicalResult captureScanFullInputs(ScanOp op, PatternRewriter &rewriter) {
  size_t firstFull = op.getNumStates() + op.getScanAxes().size();
  if (op.getInputs().size() == firstFull)
    return rewriter.notifyMatchFailure(op, "no full input");
  Block &body = op.getBody().front();
  for (size_t i = firstFull; i < op.getInputs().size(); ++i)
    rewriter.replaceAllUsesWith(body.getArgument(i), op.getInputs()[i]);
  body.eraseArguments(firstFull, body.getNumArguments() - firstFull);
  ScanParts parts = ScanParts::of(op);
  parts.inputs.resize(firstFull);
  replaceScan(rewriter, op, parts);
  return success();
}

/// States, scanned outputs and scanned inputs that nothing reads are
/// dropped, with the body ops that only computed them. A state is read when
/// the scan's result is, or when an op computing something read reads it; a
/// state the body yields unchanged is its initial value throughout. The
/// last scanned input stays: it gives the iteration count.
LogicalResult removeDeadScanValues(ScanOp op, PatternRewriter &rewriter) {
  Block &body = op.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  int64_t numStates = op.getNumStates();
  int64_t numScans = op.getScanAxes().size();
  int64_t numOutputs = op.getOutputAxes().size();

  // A state yielded unchanged keeps its initial value: it goes too.
  SmallVector<bool> passThrough(numStates);
  for (int64_t i = 0; i < numStates; ++i)
    passThrough[i] = yield.getValues()[i] == body.getArgument(i);

  // Live body ops: those the read results depend on, through the states.
  SmallVector<bool> liveState(numStates);
  SmallVector<Value> worklist;
  for (int64_t i = 0; i < numStates; ++i)
    if ((liveState[i] = !passThrough[i] && !op.getResult(i).use_empty()))
      worklist.push_back(yield.getValues()[i]);
  for (int64_t i = 0; i < numOutputs; ++i)
    if (!op.getResult(numStates + i).use_empty())
      worklist.push_back(yield.getValues()[numStates + i]);
  DenseSet<Operation *> live;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (auto argument = dyn_cast<BlockArgument>(value)) {
      int64_t index = argument.getArgNumber();
      if (argument.getOwner() == &body && index < numStates &&
          !liveState[index] && !passThrough[index]) {
        liveState[index] = true;
        worklist.push_back(yield.getValues()[index]);
      }
      continue;
    }
    Operation *owner = body.findAncestorOpInBlock(*value.getDefiningOp());
    if (!owner || !live.insert(owner).second)
      continue;
    owner->walk([&](Operation *nested) {
      llvm::append_range(worklist, nested->getOperands());
    });
  }

  // What goes: dead states and outputs, then inputs only dead ops read.
  auto readByLive = [&](Value argument) {
    return llvm::any_of(argument.getUsers(), [&](Operation *user) {
      Operation *owner = body.findAncestorOpInBlock(*user);
      return owner && live.contains(owner);
    });
  };
  SmallVector<bool> dropState(numStates), dropScan(numScans),
      dropOutput(numOutputs);
  bool any = false;
  for (int64_t i = 0; i < numStates; ++i)
    any |= dropState[i] = !liveState[i] || passThrough[i];
  for (int64_t i = 0; i < numOutputs; ++i)
    any |= dropOutput[i] = op.getResult(numStates + i).use_empty();
  int64_t scansLeft = numScans;
  for (int64_t i = 0; i < numScans; ++i)
    if (scansLeft > 1 && !readByLive(body.getArgument(numStates + i))) {
      any = dropScan[i] = true;
      --scansLeft;
    }
  if (!any)
    return rewriter.notifyMatchFailure(op, "every value is read");

  // The body forgets them: yields first, then the dead ops from the last.
  SmallVector<Value> yielded;
  for (int64_t i = 0; i < numStates; ++i)
    if (!dropState[i])
      yielded.push_back(yield.getValues()[i]);
  for (int64_t i = 0; i < numOutputs; ++i)
    if (!dropOutput[i])
      yielded.push_back(yield.getValues()[numStates + i]);
  rewriter.modifyOpInPlace(yield,
                           [&] { yield.getValuesMutable().assign(yielded); });
  SmallVector<Operation *> dead;
  for (Operation &inner : body.without_terminator())
    if (!live.contains(&inner))
      dead.push_back(&inner);
  for (Operation *inner : llvm::reverse(dead))
    rewriter.eraseOp(inner);

  ScanParts parts;
  parts.kept.clear();
  llvm::BitVector dropArguments(body.getNumArguments());
  for (int64_t i = 0; i < numStates; ++i) {
    if (dropState[i]) {
      dropArguments.set(i);
      continue;
    }
    parts.inputs.push_back(op.getInputs()[i]);
    parts.kept.push_back(i);
  }
  parts.numStates = parts.inputs.size();
  for (int64_t i = 0; i < numScans; ++i) {
    if (dropScan[i]) {
      dropArguments.set(numStates + i);
      continue;
    }
    parts.inputs.push_back(op.getInputs()[numStates + i]);
    parts.scanAxes.push_back(op.getScanAxes()[i]);
    parts.chunks.push_back(op.getScanChunks()[i]);
  }
  for (Value full : op.getInputs().drop_front(numStates + numScans))
    parts.inputs.push_back(full);
  for (int64_t i = 0; i < numOutputs; ++i) {
    if (dropOutput[i])
      continue;
    parts.outputAxes.push_back(op.getOutputAxes()[i]);
    parts.kept.push_back(numStates + i);
  }
  for (int64_t i = 0; i < numStates; ++i)
    if (dropState[i]) {
      rewriter.replaceAllUsesWith(op.getResult(i), op.getInputs()[i]);
      rewriter.replaceAllUsesWith(body.getArgument(i), op.getInputs()[i]);
    }
  body.eraseArguments(dropArguments);
  replaceScan(rewriter, op, parts);
  return success();
}

/// A scan whose scanned inputs are each a single chunk runs its body once:
/// the body is inlined on the initial states and the whole inputs.
LogicalResult inlineSingleIterationScan(ScanOp op, PatternRewriter &rewriter) {
  Block &body = op.getBody().front();
  if (!op.runsOnce())
    return rewriter.notifyMatchFailure(op, "not a single iteration");
  // A pulsified scan's one iteration may be one it skips.
  if (op->hasAttr("pulse.skip"))
    return rewriter.notifyMatchFailure(op, "skips its first iterations");
  // tract keeps a scan that carries its state from call to call.
  if (op->hasAttr(kStatefulScanAttrName))
    return rewriter.notifyMatchFailure(op, "carries its state across calls");
  // Scanned outputs are their single chunk.
  auto yield = cast<YieldOp>(body.getTerminator());
  for (auto [value, result] : llvm::zip(yield.getValues(), op.getResults()))
    if (value.getType() != result.getType())
      return rewriter.notifyMatchFailure(op, "output type changes");
  SmallVector<Value> results(yield.getValues());
  rewriter.inlineBlockBefore(&body, op, op.getInputs());
  rewriter.eraseOp(yield);
  rewriter.replaceOp(op, results);
  return success();
}

bool isStaticOne(Value value, int64_t axis) {
  return cast<RankedTensorType>(value.getType()).getDimSize(axis) == 1;
}

/// The axis of `op`'s result that carries axis `axis` of its operand
/// `chunk` (a scanned chunk) when `op` acts on each position of that axis
/// alike and its other operands are `invariant`: `op` then gives the same
/// result on the whole scanned input. None otherwise.
std::optional<int64_t> scannedResultAxis(Operation *op, Value chunk,
                                         int64_t axis,
                                         function_ref<bool(Value)> invariant) {
  if (op->getNumResults() != 1 || op->getNumRegions() != 0)
    return std::nullopt;
  for (Value operand : op->getOperands())
    if (operand != chunk && !invariant(operand))
      return std::nullopt;
  int64_t resultRank =
              cast<RankedTensorType>(op->getResult(0).getType()).getRank(),
          chunkRank = cast<RankedTensorType>(chunk.getType()).getRank();

  if (isElementwiseUnary(op))
    return axis;
  if (isElementwiseBinary(op)) {
    // Operands align on their last axes; an invariant one must broadcast
    // along the scanned axis.
    int64_t outAxis = axis + resultRank - chunkRank;
    for (Value operand : op->getOperands()) {
      int64_t rank = cast<RankedTensorType>(operand.getType()).getRank();
      int64_t own = outAxis - (resultRank - rank);
      if (operand != chunk && own >= 0 && !isStaticOne(operand, own))
        return std::nullopt;
    }
    return outAxis;
  }
  if (auto einsum = dyn_cast<EinsumOp>(op)) {
    if (llvm::count(op->getOperands(), chunk) != 1)
      return std::nullopt;
    EinsumExpr expr = EinsumExpr::parse(einsum.getExpr());
    unsigned index = llvm::find(op->getOperands(), chunk) - op->operand_begin();
    const std::string &spec = expr.inputs[index];
    if (static_cast<int64_t>(spec.size()) != chunkRank)
      return std::nullopt;
    char letter = spec[axis];
    if (llvm::count(spec, letter) != 1 || llvm::count(expr.output, letter) != 1)
      return std::nullopt;
    for (auto [other, otherSpec] : llvm::zip(op->getOperands(), expr.inputs))
      for (auto [position, l] : llvm::enumerate(otherSpec))
        if (other != chunk && l == letter && !isStaticOne(other, position))
          return std::nullopt;
    return expr.output.find(letter);
  }
  if (auto slice = dyn_cast<SliceOp>(op))
    return static_cast<int64_t>(slice.getAxis()) == axis
               ? std::nullopt
               : std::optional<int64_t>(axis);
  if (auto add = dyn_cast<AddAxisOp>(op))
    return axis + (static_cast<int64_t>(add.getAxis()) <= axis);
  if (auto rm = dyn_cast<RmAxisOp>(op)) {
    int64_t removed = rm.getAxis();
    if (removed == axis)
      return std::nullopt;
    return axis - (removed < axis);
  }
  if (auto move = dyn_cast<MoveAxisOp>(op)) {
    SmallVector<int64_t> perm =
        llvm::to_vector(llvm::seq<int64_t>(0, chunkRank));
    int64_t moved = perm[move.getFrom()];
    perm.erase(perm.begin() + move.getFrom());
    perm.insert(perm.begin() + move.getTo(), moved);
    return llvm::find(perm, axis) - perm.begin();
  }
  return std::nullopt;
}

/// A fresh einsum letter for `expr`.
char freshLetter(StringRef expr) {
  for (char c :
       StringRef("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"))
    if (!expr.contains(c))
      return c;
  return 0;
}

/// Whether `op` (one result, no region) reads only `squeezed` (a chunk of
/// one without its scanned axis) and loop-`invariant` values the way an
/// einsum or an element-wise op does, so that it can run on the whole
/// input with the scanned axis in front.
bool hoistableOnSqueezed(Operation *op, Value squeezed,
                         function_ref<bool(Value)> invariant) {
  if (op->getNumResults() != 1 || op->getNumRegions() != 0)
    return false;
  for (Value operand : op->getOperands())
    if (operand != squeezed && !invariant(operand))
      return false;
  if (auto einsum = dyn_cast<EinsumOp>(op)) {
    EinsumExpr expr = EinsumExpr::parse(einsum.getExpr());
    if (llvm::count(op->getOperands(), squeezed) != 1 ||
        !freshLetter(einsum.getExpr()) ||
        expr.inputs.size() != op->getNumOperands())
      return false;
    unsigned index =
        llvm::find(op->getOperands(), squeezed) - op->operand_begin();
    return static_cast<int64_t>(expr.inputs[index].size()) ==
           cast<RankedTensorType>(squeezed.getType()).getRank();
  }
  return isElementwiseUnary(op) || isElementwiseBinary(op);
}

/// An op of the body that reads a scanned chunk and loop-invariant values
/// only runs once before the loop on the whole scanned input; its result is
/// scanned in the chunk's stead. The einsum of the chunk x_t by a weight
/// becomes one product of the whole sequence: the input half of a
/// recurrent layer. A chunk of one read without its scanned axis (rm_axis)
/// is read from the whole input with that axis in front, a new einsum
/// letter; the body removes it from the new chunk.
struct HoistScannedInputOp : OpRewritePattern<ScanOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ScanOp op,
                                PatternRewriter &rewriter) const override {
    Block &body = op.getBody().front();
    int64_t numStates = op.getNumStates();
    int64_t numScans = op.getScanAxes().size();
    auto invariant = [&](Value value) {
      return !op.getBody().isAncestor(value.getParentRegion());
    };
    for (int64_t i = 0; i < numScans; ++i) {
      BlockArgument chunk = body.getArgument(numStates + i);
      int64_t axis = op.getScanAxes()[i];
      for (Operation *user : chunk.getUsers()) {
        if (std::optional<int64_t> resultAxis =
                scannedResultAxis(user, chunk, axis, invariant)) {
          hoist(rewriter, op, *user, i, *resultAxis);
          return success();
        }
        auto rm = dyn_cast<RmAxisOp>(user);
        if (!rm || static_cast<int64_t>(rm.getAxis()) != axis)
          continue;
        for (Operation *reader : rm->getUsers())
          if (hoistableOnSqueezed(reader, rm.getResult(), invariant)) {
            hoistSqueezed(rewriter, op, *reader, rm.getResult(), i);
            return success();
          }
      }
    }
    return rewriter.notifyMatchFailure(op, "no op of a chunk to hoist");
  }

  /// `inner` moves before the scan, on the whole input; `wholeResult` (its
  /// copy's result) is scanned on `resultAxis` and the body reads its
  /// chunk, through `unwrap`, where it read `inner`'s result.
  static void replaceByScanned(PatternRewriter &rewriter, ScanOp op,
                               Operation &inner, int64_t scanIndex,
                               Value wholeResult, int64_t resultAxis,
                               Type chunkType, bool squeezed) {
    Block &body = op.getBody().front();
    int64_t numStates = op.getNumStates();
    int64_t numScans = op.getScanAxes().size();
    ScanParts parts = ScanParts::of(op);
    parts.inputs.insert(parts.inputs.begin() + numStates + numScans,
                        wholeResult);
    parts.scanAxes.push_back(resultAxis);
    parts.chunks.push_back(op.getScanChunks()[scanIndex]);
    BlockArgument argument =
        body.insertArgument(numStates + numScans, chunkType, inner.getLoc());
    Value replacement = argument;
    if (squeezed) {
      rewriter.setInsertionPoint(&inner);
      replacement =
          RmAxisOp::create(rewriter, inner.getLoc(), argument, uint64_t(0));
    }
    rewriter.replaceAllUsesWith(inner.getResult(0), replacement);
    rewriter.eraseOp(&inner);
    replaceScan(rewriter, op, parts);
  }

  static void hoist(PatternRewriter &rewriter, ScanOp op, Operation &inner,
                    int64_t scanIndex, int64_t resultAxis) {
    Block &body = op.getBody().front();
    int64_t numStates = op.getNumStates();
    Value whole = op.getInputs()[numStates + scanIndex];
    IRMapping mapping;
    mapping.map(body.getArgument(numStates + scanIndex), whole);
    rewriter.setInsertionPoint(op);
    Operation *outer = rewriter.clone(inner, mapping);
    Value chunkResult = inner.getResult(0);
    Shape shape = getShape(chunkResult);
    shape[resultAxis] = getShape(whole)[op.getScanAxes()[scanIndex]];
    outer->getResult(0).setType(getTensorTypeLike(chunkResult, shape));
    replaceByScanned(rewriter, op, inner, scanIndex, outer->getResult(0),
                     resultAxis, chunkResult.getType(), /*squeezed=*/false);
  }

  static void hoistSqueezed(PatternRewriter &rewriter, ScanOp op,
                            Operation &inner, Value squeezed,
                            int64_t scanIndex) {
    int64_t numStates = op.getNumStates();
    int64_t axis = op.getScanAxes()[scanIndex];
    Value whole = op.getInputs()[numStates + scanIndex];
    TDim length = getShape(whole)[axis];
    rewriter.setInsertionPoint(op);
    Operation *outer;
    if (auto einsum = dyn_cast<EinsumOp>(inner)) {
      // The scanned axis becomes a new letter, first in the output.
      EinsumExpr expr = EinsumExpr::parse(einsum.getExpr());
      char letter = freshLetter(einsum.getExpr());
      unsigned index =
          llvm::find(inner.getOperands(), squeezed) - inner.operand_begin();
      expr.inputs[index].insert(expr.inputs[index].begin() + axis, letter);
      std::string text =
          llvm::join(expr.inputs, ",") + "->" + letter + expr.output;
      IRMapping mapping;
      mapping.map(squeezed, whole);
      outer = rewriter.clone(inner, mapping);
      outer->setAttr("expr", rewriter.getStringAttr(text));
    } else {
      // Element-wise: the scanned axis goes in front, where the other
      // operands broadcast along it (a new axis of 1).
      Value front = whole;
      if (axis != 0)
        front = MoveAxisOp::create(rewriter, op.getLoc(), whole,
                                   static_cast<uint64_t>(axis), uint64_t(0));
      IRMapping mapping;
      mapping.map(squeezed, front);
      for (Value operand : inner.getOperands())
        if (operand != squeezed && !mapping.contains(operand))
          mapping.map(operand, AddAxisOp::create(rewriter, op.getLoc(), operand,
                                                 uint64_t(0)));
      outer = rewriter.clone(inner, mapping);
    }
    Value chunkResult = inner.getResult(0);
    Shape shape = getShape(chunkResult);
    shape.insert(shape.begin(), length);
    outer->getResult(0).setType(getTensorTypeLike(chunkResult, shape));
    shape[0] = TDim(1);
    replaceByScanned(rewriter, op, inner, scanIndex, outer->getResult(0),
                     /*resultAxis=*/0, getTensorTypeLike(chunkResult, shape),
                     /*squeezed=*/true);
  }
};

/// The integer of a constant of one element.
std::optional<int64_t> constantInteger(Value value) {
  DenseElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)) || attr.getNumElements() != 1 ||
      !isa<IntegerType>(attr.getElementType()))
    return std::nullopt;
  return (*attr.getValues<APInt>().begin()).getSExtValue();
}

/// A loop over the positions of a sequence that reads the sequence's frame
/// at each position (a Loop from TensorFlow's while loops: `x_t =
/// gather(X, i)` with `i` from `range(0, len(X))`) scans the sequence
/// instead: the body reads its chunk where it gathered, the positions are
/// dropped when nothing else reads them, and the frames become an input
/// the other scan rewrites (hoisting x_t · W) and the pulsifier see.
LogicalResult scanGatheredFrames(ScanOp op, PatternRewriter &rewriter) {
  Block &body = op.getBody().front();
  int64_t numStates = op.getNumStates();
  int64_t numScans = op.getScanAxes().size();
  auto outside = [&](Value value) {
    return !op.getBody().isAncestor(value.getParentRegion());
  };
  for (int64_t i = 0; i < numScans; ++i) {
    auto range = op.getInputs()[numStates + i].getDefiningOp<RangeOp>();
    if (!range || op.getScanAxes()[i] != 0 || op.getScanChunks()[i] != 1 ||
        constantInteger(range.getStart()) != 0 ||
        constantInteger(range.getStep()) != 1)
      continue;
    TDim positions = range.getLen().getValue();
    BlockArgument position = body.getArgument(numStates + i);
    // The gathers of a frame at the position: of a position of one (the
    // frame keeps its axis) or of the position itself (it loses it).
    SmallVector<std::pair<GatherOp, bool>> gathers;
    auto collect = [&](Value index, bool squeezed) {
      for (Operation *user : index.getUsers())
        if (auto gather = dyn_cast<GatherOp>(user))
          if (gather.getIndices() == index && outside(gather.getInput()) &&
              getShape(gather.getInput())[gather.getAxis()] == positions)
            gathers.push_back({gather, squeezed});
    };
    collect(position, false);
    for (Operation *user : position.getUsers())
      if (auto rm = dyn_cast<RmAxisOp>(user); rm && rm.getAxis() == 0)
        collect(rm.getResult(), true);
    if (gathers.empty())
      continue;
    auto [gather, squeezed] = gathers.front();
    Value frames = gather.getInput();
    int64_t axis = gather.getAxis();
    Shape chunk = getShape(frames);
    chunk[axis] = TDim(1);
    ScanParts parts = ScanParts::of(op);
    parts.inputs.insert(parts.inputs.begin() + numStates + numScans, frames);
    parts.scanAxes.push_back(axis);
    parts.chunks.push_back(1);
    BlockArgument argument = body.insertArgument(
        numStates + numScans, getTensorTypeLike(frames, chunk), gather.getLoc());
    Value replacement = argument;
    if (squeezed) {
      rewriter.setInsertionPoint(gather);
      replacement = RmAxisOp::create(rewriter, gather.getLoc(), argument,
                                     static_cast<uint64_t>(axis));
    }
    rewriter.replaceOp(gather, replacement);
    replaceScan(rewriter, op, parts);
    return success();
  }
  return rewriter.notifyMatchFailure(op, "no frame gathered at the position");
}

} // namespace

void mlir::tract::populateDeclutterScanPatterns(RewritePatternSet &patterns) {
  patterns.add(captureScanFullInputs)
      .add(scanGatheredFrames)
      .add(removeDeadScanValues)
      .add(inlineSingleIterationScan)
      .add<HoistScannedInputOp>(patterns.getContext());
}
