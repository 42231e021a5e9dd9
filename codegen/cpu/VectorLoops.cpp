//===- VectorLoops.cpp - linalg ops on buffers as loops of vector tiles ---===//
//
// Most ops of a model are maps, broadcasts, copies, pools and reductions
// over outer axes: linalg ops whose output's innermost dim is parallel.
// Along that dim each operand is a vector (contiguous, strided, or one
// scalar for all lanes), so the body runs on vectors as it is written,
// and the reduction dims, if any, become loops around an accumulator that
// stays in registers.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/cpu/LaneReductions.h"
#include "codegen/cpu/ParallelChoice.h"
#include "codegen/cpu/VectorTiles.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTCPUVECTORLOOPS
#include "codegen/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

namespace {

/// How each operand of the op is seen along the vector dim.
struct VectorLoopPlan {
  linalg::LinalgOp op;
  unsigned vectorDim;
  unsigned outputAxis;
  /// Per input: the axis the vector dim walks and its stride, or nullopt
  /// for an operand that is one scalar for all lanes.
  SmallVector<std::optional<std::pair<unsigned, int64_t>>> inputs;
  SmallVector<unsigned> outerDims;
  SmallVector<unsigned> reductionDims;
  bool readsOutput = false;
  /// A reduction whose output a fill sets just before it (a max pool's
  /// lowest value, a sum's zeros): its accumulators start from the fill's
  /// value, and the fill, a pass over the whole output, goes.
  linalg::FillOp fill;
  /// A pool: an outer dim that an input reads shifted by a reduction dim
  /// (`ow * stride + kw`), whose taps, all static and few, are unrolled
  /// around kWindowPixels neighbouring outputs along it (see windowDim).
  std::optional<unsigned> windowDim;
  /// A transpose: a copy whose one input walks, along its last axis, this
  /// outer dim of the output (see transposeDim).
  std::optional<unsigned> transposeDim;
};

/// Outputs of a pool computed together: as many independent chains of the
/// reduction (a max has a latency of several cycles), and the taps that
/// neighbouring windows share read once.
constexpr int64_t kWindowPixels = 4;
/// The most taps a pool's window may have to be unrolled.
constexpr int64_t kWindowTaps = 27;

bool isVectorElement(Type type) {
  return isa<FloatType, IntegerType, IndexType>(type);
}

/// Booleans are bytes in a buffer but bits in a vector load: keep them out
/// of vector reads and writes.
bool isVectorMemoryElement(Type type) {
  return isVectorElement(type) && !type.isInteger(1);
}

/// The outer dim of a transpose (VectorLoopPlan::transposeDim): the op
/// copies its one input, of 32-bit items, whose last axis (unit stride) is
/// that dim, while the output's last axis (the vector dim) is another axis
/// of the input; both dims static and at least `lanes` long.
std::optional<unsigned> transposeDim(const VectorLoopPlan &plan,
                                     int64_t lanes) {
  linalg::LinalgOp op = plan.op;
  if (!plan.reductionDims.empty() || op.getNumDpsInputs() != 1 ||
      !plan.inputs[0])
    return std::nullopt;
  Block *body = op.getBlock();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  if (body->getOperations().size() != 1 ||
      yield.getValues().front() != body->getArgument(0))
    return std::nullopt;
  auto input = cast<MemRefType>(op.getDpsInputOperand(0)->get().getType());
  auto output = cast<MemRefType>(op.getDpsInitOperand(0)->get().getType());
  if (input.getElementType() != output.getElementType() ||
      input.getElementTypeBitWidth() != 32 || !input.isLastDimUnitStride() ||
      !output.isLastDimUnitStride() ||
      plan.inputs[0]->first == static_cast<unsigned>(input.getRank() - 1))
    return std::nullopt;
  AffineMap map = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  auto last = dyn_cast<AffineDimExpr>(map.getResults().back());
  if (!last || !llvm::is_contained(plan.outerDims, last.getPosition()))
    return std::nullopt;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  unsigned dim = last.getPosition();
  if (ShapedType::isDynamic(sizes[dim]) || sizes[dim] < lanes ||
      ShapedType::isDynamic(sizes[plan.vectorDim]) ||
      sizes[plan.vectorDim] < lanes)
    return std::nullopt;
  return dim;
}

/// The outer dim of a pool's windows (VectorLoopPlan::windowDim): the
/// innermost outer dim of the output that an input reads in a sum with a
/// reduction dim, when the reduction dims are static and have at most
/// kWindowTaps taps and that outer dim has at least kWindowPixels outputs.
std::optional<unsigned> windowDim(const VectorLoopPlan &plan) {
  linalg::LinalgOp op = plan.op;
  if (plan.reductionDims.empty())
    return std::nullopt;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  int64_t taps = 1;
  for (unsigned dim : plan.reductionDims) {
    if (ShapedType::isDynamic(sizes[dim]))
      return std::nullopt;
    taps *= sizes[dim];
  }
  if (taps > kWindowTaps)
    return std::nullopt;
  AffineMap outputMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  for (AffineExpr result : llvm::reverse(outputMap.getResults())) {
    unsigned dim = cast<AffineDimExpr>(result).getPosition();
    if (dim == plan.vectorDim)
      continue;
    if (ShapedType::isDynamic(sizes[dim]) || sizes[dim] < kWindowPixels)
      return std::nullopt;
    bool shifted = llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *in) {
      AffineMap map = op.getMatchingIndexingMap(in);
      return llvm::any_of(map.getResults(), [&](AffineExpr expr) {
        return expr.isFunctionOfDim(dim) &&
               llvm::any_of(plan.reductionDims, [&](unsigned reduction) {
                 return expr.isFunctionOfDim(reduction);
               });
      });
    });
    return shifted ? std::optional<unsigned>(dim) : std::nullopt;
  }
  return std::nullopt;
}

FailureOr<VectorLoopPlan> matchVectorLoop(linalg::LinalgOp op,
                                          int64_t lanes) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1)
    return failure();
  VectorLoopPlan plan;
  plan.op = op;
  OpOperand *output = op.getDpsInitOperand(0);
  auto outputType = dyn_cast<MemRefType>(output->get().getType());
  if (!outputType || outputType.getRank() == 0 ||
      !isVectorMemoryElement(outputType.getElementType()))
    return failure();
  AffineMap outputMap = op.getMatchingIndexingMap(output);
  if (!outputMap.isProjectedPermutation())
    return failure();
  auto last = dyn_cast<AffineDimExpr>(outputMap.getResults().back());
  if (!last)
    return failure();
  plan.vectorDim = last.getPosition();
  plan.outputAxis = outputMap.getNumResults() - 1;

  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned dim = 0, e = op.getNumLoops(); dim < e; ++dim) {
    if (iterators[dim] == utils::IteratorType::reduction)
      plan.reductionDims.push_back(dim);
    else if (dim != plan.vectorDim)
      plan.outerDims.push_back(dim);
  }

  for (OpOperand *input : op.getDpsInputOperands()) {
    auto type = dyn_cast<MemRefType>(input->get().getType());
    if (!type) {
      if (!isVectorElement(input->get().getType()))
        return failure();
      plan.inputs.push_back(std::nullopt);
      continue;
    }
    if (!isVectorMemoryElement(type.getElementType()))
      return failure();
    AffineMap map = op.getMatchingIndexingMap(input);
    auto axis = tract::vectorAxisOf(map, plan.vectorDim);
    if (failed(axis))
      return failure();
    if (!axis->first) {
      plan.inputs.push_back(std::nullopt);
      continue;
    }
    // A reduction that a vector could walk contiguously (a sum over the
    // last axis) gains nothing from strided lanes: leave it to loops.
    if (!plan.reductionDims.empty() &&
        (*axis->first != map.getNumResults() - 1 || axis->second > 4))
      return failure();
    plan.inputs.push_back(std::make_pair(*axis->first, axis->second));
  }

  Block *body = op.getBlock();
  if (!tract::isLaneWiseBody(body, /*allowIndex=*/true, /*allowLoads=*/true))
    return failure();
  plan.readsOutput = !body->getArguments().back().use_empty();
  if (!plan.reductionDims.empty() && !plan.readsOutput)
    return failure();
  if (!plan.reductionDims.empty()) {
    auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
    if (fill && fill.hasPureBufferSemantics() &&
        fill.getOutputs().front() == output->get() &&
        fill.getInputs().front().getType() == outputType.getElementType())
      plan.fill = fill;
  }
  plan.windowDim = windowDim(plan);
  plan.transposeDim = transposeDim(plan, lanes);
  return plan;
}

/// Whether an input of `plan` is read lane by lane: the vector dim walks
/// another axis than its last, or with a stride a shuffle does not take.
bool gathers(VectorLoopPlan &plan) {
  for (auto [i, input] : llvm::enumerate(plan.op.getDpsInputOperands())) {
    if (!plan.inputs[i])
      continue;
    auto type = cast<MemRefType>(input->get().getType());
    auto [axis, stride] = *plan.inputs[i];
    if (axis != type.getRank() - 1 || stride > 4)
      return true;
  }
  return false;
}

/// The loop of `plan`'s nest that runs on `threads` threads, if any: an
/// outer dim, or the full vector tiles (the last value); nullopt for none
/// (`threshold`: ParallelCost::threshold); `forkPoints` becomes
/// tract::breakEvenPoints.
std::optional<unsigned> chooseSplit(const VectorLoopPlan &plan, int64_t cols,
                                    int64_t threads, double threshold,
                                    double &forkPoints) {
  if (threads <= 1)
    return std::nullopt;
  linalg::LinalgOp op = plan.op;
  tract::ParallelCost cost;
  cost.threads = threads;
  cost.threshold = threshold;
  cost.work = tract::memoryBoundWork(op);
  SmallVector<tract::ParallelCandidate> candidates =
      tract::nestCandidates(op, plan.outerDims);
  tract::ParallelCandidate columns{std::nullopt, 1.0, 1,
                                   tract::outputAxisOf(op, plan.vectorDim)};
  int64_t size = op.getStaticLoopRanges()[plan.vectorDim];
  if (!ShapedType::isDynamic(size)) {
    columns.iterations = size / cols;
    columns.share =
        size ? static_cast<double>(size / cols * cols) / size : 0.0;
  }
  candidates.push_back(columns);
  forkPoints = tract::breakEvenPoints(op, cost);
  return tract::chooseParallelLoop(candidates, cost);
}

class VectorLoopEmitter {
public:
  VectorLoopEmitter(VectorLoopPlan plan, int64_t cols, int64_t lanes,
                    std::optional<unsigned> split, int64_t threads,
                    double forkPoints)
      : plan(std::move(plan)), cols(cols), lanes(lanes), split(split),
        threads(threads), forkPoints(forkPoints) {}

  void emit(RewriterBase &rewriter) {
    linalg::LinalgOp op = plan.op;
    rewriter.setInsertionPoint(op);
    loops.emplace(rewriter, op);
    unsigned numOuter = plan.outerDims.size();
    std::optional<unsigned> chunkedDim;
    if (split && *split < numOuter)
      chunkedDim = plan.outerDims[*split];
    bool chunkedColumns = split == numOuter;
    loops->nestInChunks(
        rewriter, op.getLoc(), plan.outerDims, split ? threads : 1,
        chunkedDim,
        [&](OpBuilder &b, Location loc, const tract::Chunks &chunks) {
          tract::Chunks columns = chunkedColumns ? chunks : tract::Chunks();
          if (plan.transposeDim)
            return emitTransposed(b, loc, columns);
          if (!plan.windowDim)
            return emitColumns(b, loc, columns, nullptr, 1);
          // The pool's outputs along its window dim, kWindowPixels at a
          // time, then the rest at once.
          for (const tract::Piece &piece :
               tract::cutIntoTiles(b, loc, loops->size(*plan.windowDim),
                                   kWindowPixels, kWindowPixels)) {
            int64_t pixels = piece.tile;
            tract::forEachTile(b, loc, piece,
                               [&](OpBuilder &nested, Location l, Value at) {
                                 emitColumns(nested, l, columns, at, pixels);
                               });
          }
        },
        forkPoints);
    rewriter.eraseOp(op);
    if (plan.fill)
      rewriter.eraseOp(plan.fill);
  }

private:
  /// The vector tiles, this chunk's run of the full ones when `chunks`
  /// (the rest with the last chunk); for a pool, of the `pixels` outputs
  /// from `pixel` along its window dim.
  void emitColumns(OpBuilder &b, Location loc, const tract::Chunks &chunks,
                   Value pixel, int64_t pixels) {
    SmallVector<tract::Piece> pieces = tract::cutIntoTiles(
        b, loc, loops->size(plan.vectorDim), cols, lanes);
    for (auto [index, piece] : llvm::enumerate(pieces)) {
      const tract::Piece &tiles = piece;
      auto body = [&](OpBuilder &nested, Location l, Value column) {
        if (pixel)
          emitWindows(nested, l, column, tiles.tile, pixel, pixels);
        else
          emitTile(nested, l, column, tiles.tile);
      };
      chunks.forEachTile(b, loc, tiles, body,
                         index == 0 && tiles.tile == cols);
    }
  }

  /// A transpose in tiles of lanes × lanes: `lanes` rows of the input
  /// along its last axis, transposed in registers, written as `lanes` rows
  /// of the output along its own; what is left of either dim goes element
  /// by element along the other (emitTile).
  void emitTransposed(OpBuilder &b, Location loc, const tract::Chunks &chunks) {
    unsigned dim = *plan.transposeDim;
    for (const tract::Piece &piece :
         tract::cutIntoTiles(b, loc, loops->size(dim), lanes, 1)) {
      int64_t rows = piece.tile;
      tract::forEachTile(b, loc, piece, [&](OpBuilder &nested, Location l,
                                            Value at) {
        if (rows != lanes) {
          loops->values[dim] = at;
          return emitColumns(nested, l, chunks, nullptr, 1);
        }
        SmallVector<tract::Piece> columns = tract::cutIntoTiles(
            nested, l, loops->size(plan.vectorDim), lanes, lanes);
        for (auto [index, column] : llvm::enumerate(columns)) {
          int64_t width = column.tile;
          chunks.forEachTile(
              nested, l, column,
              [&](OpBuilder &inner, Location il, Value v) {
                if (width == lanes)
                  return emitTransposeTile(inner, il, at, v);
                for (int64_t i = 0; i < lanes; ++i) {
                  loops->values[dim] = offset(inner, il, at, i);
                  emitTile(inner, il, v, width);
                }
              },
              index == 0 && width == lanes);
        }
      });
    }
  }

  Value offset(OpBuilder &b, Location loc, Value base, int64_t i) {
    AffineExpr d0 = getAffineDimExpr(0, b.getContext());
    return getValueOrCreateConstantIndexOp(
        b, loc, affine::makeComposedFoldedAffineApply(b, loc, d0 + i, {base}));
  }

  /// The lanes × lanes block from `row` (along the transpose dim) and
  /// `column` (along the vector dim): log2(lanes) rounds of interleaving
  /// pairs of rows, row i with row i + lanes/2, leave the columns.
  void emitTransposeTile(OpBuilder &b, Location loc, Value row, Value column) {
    unsigned dim = *plan.transposeDim;
    OpOperand *input = plan.op.getDpsInputOperand(0);
    OpOperand *output = plan.op.getDpsInitOperand(0);
    auto inputType = cast<MemRefType>(input->get().getType());
    unsigned inputAxis = inputType.getRank() - 1;
    SmallVector<Value> rows;
    loops->values[dim] = row;
    for (int64_t i = 0; i < lanes; ++i) {
      loops->values[plan.vectorDim] = offset(b, loc, column, i);
      rows.push_back(tract::readVector(b, loc, input->get(),
                                       indices(b, loc, input), inputAxis, 1,
                                       lanes));
    }
    int64_t half = lanes / 2;
    SmallVector<int64_t> low, high;
    for (int64_t i = 0; i < half; ++i) {
      low.append({i, lanes + i});
      high.append({half + i, lanes + half + i});
    }
    for (int64_t round = 1; round < lanes; round *= 2) {
      SmallVector<Value> next(lanes);
      for (int64_t i = 0; i < half; ++i) {
        next[2 * i] =
            vector::ShuffleOp::create(b, loc, rows[i], rows[i + half], low);
        next[2 * i + 1] =
            vector::ShuffleOp::create(b, loc, rows[i], rows[i + half], high);
      }
      rows = next;
    }
    loops->values[plan.vectorDim] = column;
    for (int64_t i = 0; i < lanes; ++i) {
      loops->values[dim] = offset(b, loc, row, i);
      tract::writeVector(b, loc, rows[i], output->get(),
                         indices(b, loc, output), plan.outputAxis);
    }
  }

  /// A pool's `pixels` outputs from `pixel` along its window dim, at
  /// `column`: one accumulator each, the taps unrolled (each tap of every
  /// output in turn, so that the chains interleave and neighbouring windows
  /// read their common taps at the same indices, once after CSE).
  void emitWindows(OpBuilder &b, Location loc, Value column, int64_t width,
                   Value pixel, int64_t pixels) {
    loops->values[plan.vectorDim] = column;
    unsigned dim = *plan.windowDim;
    OpOperand *output = plan.op.getDpsInitOperand(0);
    auto at = [&](int64_t i) {
      AffineExpr d0 = getAffineDimExpr(0, b.getContext());
      loops->values[dim] = getValueOrCreateConstantIndexOp(
          b, loc,
          affine::makeComposedFoldedAffineApply(b, loc, d0 + i, {pixel}));
    };
    SmallVector<Value> accumulators;
    for (int64_t i = 0; i < pixels; ++i) {
      at(i);
      accumulators.push_back(initialAccumulator(b, loc, width));
    }
    SmallVector<int64_t> sizes = plan.op.getStaticLoopRanges();
    SmallVector<int64_t> tap(plan.reductionDims.size(), 0);
    while (true) {
      for (auto [index, reduction] : llvm::enumerate(plan.reductionDims))
        loops->values[reduction] =
            arith::ConstantIndexOp::create(b, loc, tap[index]);
      for (int64_t i = 0; i < pixels; ++i) {
        at(i);
        accumulators[i] = emitBody(b, loc, accumulators[i], width);
      }
      // The next tap, the last reduction dim fastest.
      int64_t index = static_cast<int64_t>(tap.size()) - 1;
      for (; index >= 0; --index) {
        if (++tap[index] < sizes[plan.reductionDims[index]])
          break;
        tap[index] = 0;
      }
      if (index < 0)
        break;
    }
    for (int64_t i = 0; i < pixels; ++i) {
      at(i);
      tract::writeVector(b, loc, accumulators[i], output->get(),
                         indices(b, loc, output), plan.outputAxis);
    }
  }

  VectorLoopPlan plan;
  int64_t cols, lanes;
  std::optional<unsigned> split;
  int64_t threads;
  double forkPoints; ///< tract::breakEvenPoints
  std::optional<tract::LoopDims> loops;

  SmallVector<Value> indices(OpBuilder &b, Location loc, OpOperand *operand) {
    return tract::indicesAt(b, loc, plan.op.getMatchingIndexingMap(operand),
                            loops->values);
  }

  void emitTile(OpBuilder &b, Location loc, Value column, int64_t width) {
    loops->values[plan.vectorDim] = column;
    OpOperand *output = plan.op.getDpsInitOperand(0);
    Value accumulator;
    if (plan.readsOutput)
      accumulator = initialAccumulator(b, loc, width);
    // The reduction loops carry the accumulator, when there is one.
    SmallVector<Value> carried;
    if (accumulator)
      carried.push_back(accumulator);
    Value result =
        loops
            ->nest(b, loc, plan.reductionDims, carried,
                   [&](OpBuilder &nested, Location l, ValueRange accs) {
                     return SmallVector<Value>{emitBody(
                         nested, l, accs.empty() ? Value() : accs[0], width)};
                   })
            .front();
    tract::writeVector(b, loc, result, output->get(), indices(b, loc, output),
                       plan.outputAxis);
  }

  /// What the output holds before the op, on `width` lanes at the current
  /// indices: the fill's value, else read.
  Value initialAccumulator(OpBuilder &b, Location loc, int64_t width) {
    if (plan.fill)
      return tract::splatLanes(b, loc, plan.fill.getInputs().front(), width);
    OpOperand *output = plan.op.getDpsInitOperand(0);
    return tract::readVector(b, loc, output->get(), indices(b, loc, output),
                             plan.outputAxis, 1, width);
  }

  /// The body on vectors of `width` lanes; `accumulator` is the output's
  /// block argument.
  Value emitBody(OpBuilder &b, Location loc, Value accumulator,
                 int64_t width) {
    SmallVector<Value> arguments;
    for (auto [i, input] : llvm::enumerate(plan.op.getDpsInputOperands())) {
      Value source = input->get();
      if (!isa<MemRefType>(source.getType()))
        arguments.push_back(tract::splatLanes(b, loc, source, width));
      else if (plan.inputs[i])
        arguments.push_back(tract::readVector(
            b, loc, source, indices(b, loc, input), plan.inputs[i]->first,
            plan.inputs[i]->second, width));
      else
        arguments.push_back(tract::splatLanes(
            b, loc,
            memref::LoadOp::create(b, loc, source, indices(b, loc, input)),
            width));
    }
    arguments.push_back(accumulator);
    return tract::emitLaneWiseBody(
        b, loc, plan.op.getBlock(), arguments, width, [&](unsigned dim) {
          Value lanes = tract::splatLanes(b, loc, loops->values[dim], width);
          if (dim != plan.vectorDim)
            return lanes;
          Value step = vector::StepOp::create(
              b, loc, VectorType::get({width}, b.getIndexType()));
          return Value(arith::AddIOp::create(b, loc, lanes, step));
        });
  }
};

struct TractCpuVectorLoops
    : public tract::impl::TractCpuVectorLoopsBase<TractCpuVectorLoops> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // Copies into or out of views (a padded interior) would otherwise go
    // through the runtime's element-by-element memrefCopy.
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      auto source = cast<MemRefType>(copy.getSource().getType());
      auto target = cast<MemRefType>(copy.getTarget().getType());
      if (source.getRank() > 0 &&
          (!source.getLayout().isIdentity() || !target.getLayout().isIdentity()))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                  copy.getTarget());
    }

    SmallVector<VectorLoopPlan> work;
    SmallVector<linalg::LinalgOp> others;
    getOperation().walk([&](linalg::LinalgOp op) {
      FailureOr<VectorLoopPlan> plan = matchVectorLoop(op, lanes);
      if (succeeded(plan))
        work.push_back(*plan);
      else
        others.push_back(op);
    });
    // A fill that a reduction starts from goes with it (VectorLoopPlan::fill).
    llvm::SmallPtrSet<Operation *, 8> claimed;
    for (VectorLoopPlan &plan : work)
      if (plan.fill)
        claimed.insert(plan.fill);
    llvm::erase_if(work, [&](VectorLoopPlan &plan) {
      return claimed.contains(plan.op.getOperation());
    });
    llvm::erase_if(others, [&](linalg::LinalgOp op) {
      return claimed.contains(op.getOperation());
    });
    // Reductions along a contiguous last axis put it on the lanes instead,
    // four registers wide (four independent chains of adds).
    for (linalg::LinalgOp op : others)
      (void)tract::emitLaneReduction(rewriter, op, 4 * lanes, lanes, threads,
                                     threadingThreshold);
    for (VectorLoopPlan &plan : work) {
      // A pool's window dim loops inside the others (emitWindows).
      if (plan.windowDim)
        llvm::erase(plan.outerDims, *plan.windowDim);
      if (plan.transposeDim)
        llvm::erase(plan.outerDims, *plan.transposeDim);
      // Reductions keep fewer accumulators live across their loops; a
      // gathered operand (a transpose: its lanes are scalar loads, unrolled)
      // keeps tiles to one register so that the code stays small.
      int64_t width = lanes * (plan.reductionDims.empty() ? 4 : 2);
      if (gathers(plan))
        width = lanes;
      double forkPoints = 0;
      std::optional<unsigned> split =
          chooseSplit(plan, width, threads, threadingThreshold, forkPoints);
      VectorLoopEmitter(plan, width, lanes, split, threads, forkPoints)
          .emit(rewriter);
    }
  }
};

} // namespace
