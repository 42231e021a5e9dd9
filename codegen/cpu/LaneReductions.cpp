//===- LaneReductions.cpp - reductions along a contiguous axis ------------===//

#include "codegen/cpu/LaneReductions.h"
#include "codegen/cpu/ParallelChoice.h"
#include "codegen/cpu/VectorTiles.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;

namespace {

struct LaneReduction {
  linalg::LinalgOp op;
  unsigned laneDim;                    ///< the innermost loop dim
  SmallVector<unsigned> outerDims;     ///< the parallel dims
  SmallVector<unsigned> reductionDims; ///< the others, around the lanes
  /// Per input: whether it walks the lane dim (else one scalar per step).
  SmallVector<bool> walksLanes;
  vector::CombiningKind kind;
  double neutral; ///< the combiner's identity
};

/// The kind and identity of a combining op.
std::optional<std::pair<vector::CombiningKind, double>>
combiningKind(Operation *op) {
  double inf = std::numeric_limits<double>::infinity();
  if (isa<arith::AddFOp>(op))
    return std::make_pair(vector::CombiningKind::ADD, 0.0);
  if (isa<arith::MulFOp>(op))
    return std::make_pair(vector::CombiningKind::MUL, 1.0);
  if (isa<arith::MaximumFOp>(op))
    return std::make_pair(vector::CombiningKind::MAXIMUMF, -inf);
  if (isa<arith::MinimumFOp>(op))
    return std::make_pair(vector::CombiningKind::MINIMUMF, inf);
  if (isa<arith::MaxNumFOp>(op))
    return std::make_pair(vector::CombiningKind::MAXNUMF, -inf);
  if (isa<arith::MinNumFOp>(op))
    return std::make_pair(vector::CombiningKind::MINNUMF, inf);
  return std::nullopt;
}

FailureOr<LaneReduction> matchLaneReduction(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumLoops() == 0)
    return failure();
  LaneReduction plan;
  plan.op = op;
  plan.laneDim = op.getNumLoops() - 1;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (iterators[plan.laneDim] != utils::IteratorType::reduction)
    return failure();
  for (unsigned dim = 0; dim < plan.laneDim; ++dim)
    (iterators[dim] == utils::IteratorType::reduction ? plan.reductionDims
                                                      : plan.outerDims)
        .push_back(dim);

  OpOperand *output = op.getDpsInitOperand(0);
  auto outputType = dyn_cast<MemRefType>(output->get().getType());
  if (!outputType || !isa<FloatType>(outputType.getElementType()))
    return failure();
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto type = dyn_cast<MemRefType>(input->get().getType());
    if (!type) {
      if (!isa<FloatType>(input->get().getType()))
        return failure();
      plan.walksLanes.push_back(false);
      continue;
    }
    if (!isa<FloatType>(type.getElementType()) || type.getRank() == 0)
      return failure();
    auto axis = tract::vectorAxisOf(op.getMatchingIndexingMap(input),
                                    plan.laneDim);
    if (failed(axis))
      return failure();
    // Contiguous along its last axis, or not along the lanes at all.
    if (axis->first &&
        (*axis->first != static_cast<unsigned>(type.getRank() - 1) ||
         axis->second != 1))
      return failure();
    plan.walksLanes.push_back(axis->first.has_value());
  }
  if (!llvm::is_contained(plan.walksLanes, true))
    return failure();

  // out = combine(value, out), the output used by the combiner only.
  Block *body = op.getBlock();
  if (!tract::isLaneWiseBody(body, /*allowIndex=*/false))
    return failure();
  BlockArgument accumulator = body->getArguments().back();
  if (!accumulator.hasOneUse())
    return failure();
  Operation *combiner = *accumulator.getUsers().begin();
  auto kind = combiningKind(combiner);
  if (!kind || body->getTerminator()->getOperand(0) != combiner->getResult(0))
    return failure();
  plan.kind = kind->first;
  plan.neutral = kind->second;
  return plan;
}

class LaneReductionEmitter {
public:
  LaneReductionEmitter(LaneReduction plan, int64_t width, int64_t lanes,
                       std::optional<unsigned> chunkedDim, int64_t threads,
                       double forkPoints)
      : plan(std::move(plan)), width(width), lanes(lanes),
        chunkedDim(chunkedDim), threads(threads), forkPoints(forkPoints) {}

  void emit(RewriterBase &rewriter) {
    linalg::LinalgOp op = plan.op;
    rewriter.setInsertionPoint(op);
    loops.emplace(rewriter, op);
    loops->nestInChunks(
        rewriter, op.getLoc(), plan.outerDims, chunkedDim ? threads : 1,
        chunkedDim,
        [&](OpBuilder &b, Location loc, const tract::Chunks &) {
          emitElement(b, loc);
        },
        forkPoints);
    rewriter.eraseOp(op);
  }

private:
  LaneReduction plan;
  int64_t width, lanes;
  /// The outer dim whose iterations are shared among `threads` threads.
  std::optional<unsigned> chunkedDim;
  int64_t threads;
  double forkPoints; ///< tract::breakEvenPoints
  std::optional<tract::LoopDims> loops;
  /// Whether tiles narrower than `width` fold into the scalar rest.
  bool hasRest = false;

  Type elementType() {
    return cast<MemRefType>(plan.op.getDpsInitOperand(0)->get().getType())
        .getElementType();
  }

  Value neutral(OpBuilder &b, Location loc, int64_t count) {
    Value scalar = arith::ConstantOp::create(
        b, loc, b.getFloatAttr(elementType(), plan.neutral));
    return tract::splatLanes(b, loc, scalar, count);
  }

  /// One output element: the reduction dims around the lane tiles, which
  /// carry a full-width accumulator and the combined rest.
  void emitElement(OpBuilder &b, Location loc) {
    OpOperand *output = plan.op.getDpsInitOperand(0);
    SmallVector<Value> at = tract::indicesAt(
        b, loc, plan.op.getMatchingIndexingMap(output), loops->values);
    Value initial = memref::LoadOp::create(b, loc, output->get(), at);
    Value rest = arith::ConstantOp::create(
        b, loc, b.getFloatAttr(elementType(), plan.neutral));
    SmallVector<Value> sums = loops->nest(
        b, loc, plan.reductionDims, {neutral(b, loc, width), rest},
        [&](OpBuilder &nested, Location l, ValueRange carried) {
          return emitLanes(nested, l, carried[0], carried[1]);
        });
    // One horizontal reduction per output element: any order of its lanes.
    Value total = vector::ReductionOp::create(
        b, loc, plan.kind, sums[0], initial, arith::FastMathFlags::reassoc);
    if (hasRest)
      total = vector::makeArithReduction(b, loc, plan.kind, total, sums[1]);
    memref::StoreOp::create(b, loc, total, output->get(), at);
  }

  /// The lane dim in tiles: full-width ones fold into `accumulator`, the
  /// narrower rest into the scalar `rest`.
  SmallVector<Value> emitLanes(OpBuilder &b, Location loc, Value accumulator,
                               Value rest) {
    for (const tract::Piece &piece : tract::cutIntoTiles(
             b, loc, loops->size(plan.laneDim), width, lanes)) {
      bool full = piece.tile == width;
      hasRest |= !full;
      Value carried = full ? accumulator : rest;
      carried = tract::foldTiles(
          b, loc, piece, carried,
          [&](OpBuilder &nested, Location l, Value column,
              ValueRange values) -> SmallVector<Value> {
            loops->values[plan.laneDim] = column;
            Value value = values.front();
            if (full)
              return {emitBody(nested, l, value, piece.tile)};
            Value lanesOf = emitBody(nested, l, neutral(nested, l, piece.tile),
                                     piece.tile);
            return {vector::makeArithReduction(
                nested, l, plan.kind, value,
                vector::ReductionOp::create(nested, l, plan.kind, lanesOf,
                                            arith::FastMathFlags::reassoc))};
          }).front();
      (full ? accumulator : rest) = carried;
    }
    return {accumulator, rest};
  }

  /// The body on `count` lanes of the current tile, combined into
  /// `accumulator` (a vector of `count` lanes).
  Value emitBody(OpBuilder &b, Location loc, Value accumulator,
                 int64_t count) {
    SmallVector<Value> arguments;
    for (auto [i, input] :
         llvm::enumerate(plan.op.getDpsInputOperands())) {
      Value source = input->get();
      if (!isa<MemRefType>(source.getType())) {
        arguments.push_back(tract::splatLanes(b, loc, source, count));
        continue;
      }
      SmallVector<Value> at = tract::indicesAt(
          b, loc, plan.op.getMatchingIndexingMap(input), loops->values);
      if (plan.walksLanes[i]) {
        unsigned axis = cast<MemRefType>(source.getType()).getRank() - 1;
        arguments.push_back(
            tract::readVector(b, loc, source, at, axis, 1, count));
      } else {
        arguments.push_back(tract::splatLanes(
            b, loc, memref::LoadOp::create(b, loc, source, at), count));
      }
    }
    arguments.push_back(accumulator);
    return tract::emitLaneWiseBody(b, loc, plan.op.getBlock(), arguments,
                                   count);
  }
};

} // namespace

LogicalResult tract::emitLaneReduction(RewriterBase &rewriter,
                                       linalg::LinalgOp op, int64_t width,
                                       int64_t lanes, int64_t threads,
                                       double threshold) {
  FailureOr<LaneReduction> plan = matchLaneReduction(op);
  if (failed(plan))
    return failure();
  std::optional<unsigned> chunkedDim;
  double forkPoints = 0;
  if (threads > 1) {
    ParallelCost cost;
    cost.threads = threads;
    cost.threshold = threshold;
    cost.work = memoryBoundWork(op);
    if (std::optional<unsigned> chosen = chooseParallelLoop(
            nestCandidates(op, plan->outerDims), cost))
      chunkedDim = plan->outerDims[*chosen];
    forkPoints = breakEvenPoints(op, cost);
  }
  // A short axis takes a narrower accumulator rather than a rest.
  int64_t length = op.getStaticLoopRanges()[plan->laneDim];
  if (!ShapedType::isDynamic(length) && length < width)
    width = std::max(lanes, length / lanes * lanes);
  LaneReductionEmitter(std::move(*plan), width, lanes, chunkedDim, threads,
                       forkPoints)
      .emit(rewriter);
  return success();
}
