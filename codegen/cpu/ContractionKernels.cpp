//===- ContractionKernels.cpp - register-tiled multiply-accumulate ops ----===//
//
// Every linalg op on buffers whose body is `out + a * b` is an outer product
// in disguise: along the output's innermost dim one operand is a vector, the
// other a scalar per row. The op becomes loops around a rows × cols register
// tile whose accumulators stay in registers across all reduction dims.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/common/BufferUses.h"
#include "codegen/cpu/LaneChoice.h"
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
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTCPUCONTRACTIONKERNELS
#include "codegen/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

namespace {

/// The register tile: `rows` accumulators of `cols` f32 each.
struct TileShape {
  int64_t rows;
  int64_t cols;
  int64_t lanes; ///< of one vector register
};

/// How a multiply-accumulate op maps onto the register tile.
struct OuterProduct {
  linalg::LinalgOp op;
  OpOperand *scalars; ///< one scalar per row, constant along the vector dim
  OpOperand *vectors; ///< one vector per step (per row if it uses the row dim)
  OpOperand *output;
  unsigned vectorDim; ///< the loop on the vector lanes
  unsigned outputAxis; ///< the output axis it walks
  std::optional<unsigned> rowDim;
  bool rowsShareVector = true;
  /// Both operands walk the vector dim as their last axis (a depthwise
  /// convolution with the channels last: a weight per channel): `scalars`
  /// is read as a vector per row too, and the small reduction loops (the
  /// taps) are unrolled so that rows reading the same pixel share its load.
  bool laneWise = false;
  unsigned vectorAxis = 0; ///< the axis of `vectors` that the vector dim walks
  int64_t vectorStride = 1;
  /// When `vectors` is laid out in panels (tract-cpu-pack-weights), read at
  /// (dim floordiv panel, ..., dim mod panel): their width. Column tiles
  /// then divide it, so that none crosses a panel.
  std::optional<int64_t> panel;
  SmallVector<unsigned> outerDims;     ///< other parallel dims, one by one
  SmallVector<unsigned> reductionDims; ///< loops inside the tile
  /// A lane-wise op that fills the output before the product (a bias
  /// broadcast, zeros): it runs on each tile's accumulators instead.
  linalg::LinalgOp prologue;
  /// A lane-wise op that reads the product and writes elsewhere (bias,
  /// activation, residual add): it runs on each tile before the write, and
  /// the product itself is never stored.
  linalg::LinalgOp epilogue;
  /// When the product writes a collapsed view of its buffer (an image's
  /// rows merged, tract-collapse-dims) and the epilogue reads the buffer
  /// itself, writing where rows do not follow each other (the interior of
  /// a padded image): the width of the rows its output axis merges. The
  /// epilogue's dims are the product's output axes with that axis split
  /// in two, rows then columns.
  std::optional<int64_t> rowWidth;
  /// When the epilogue reads the product's output with some of its axes
  /// other than the last split (the pixels of a channels-last image that
  /// the product merged into rows): the groups of the epilogue's axes that
  /// each of the product's output axes becomes, and their sizes. Each row
  /// of a tile is then one pixel, at the indices its row splits into.
  SmallVector<ReassociationIndices> rowGroups;
  SmallVector<int64_t> expandedShape;
};

/// A lane-wise op on buffers that a kernel can run on its tiles: parallel
/// loops, one output written with the identity map, inputs read through
/// projected permutations, a body of lane-wise ops.
bool isTileCompanion(linalg::LinalgOp op) {
  if (!op || !op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 0 || op.hasIndexSemantics())
    return false;
  OpOperand *output = op.getDpsInitOperand(0);
  auto outputType = dyn_cast<MemRefType>(output->get().getType());
  if (!outputType || outputType.getElementType().isInteger(1) ||
      !op.getMatchingIndexingMap(output).isIdentity())
    return false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto type = dyn_cast<MemRefType>(input->get().getType());
    if (!type)
      continue;
    if (type.getElementType().isInteger(1) ||
        !op.getMatchingIndexingMap(input).isProjectedPermutation(
            /*allowZeroInResults=*/true))
      return false;
  }
  // Small bodies only (bias, clip, relu, residual add): a companion's body
  // is emitted once per row and column piece of every tile shape, and a
  // long one (an exponential's polynomial) would multiply the code.
  constexpr size_t kMaxCompanionOps = 8;
  if (op.getBlock()->getOperations().size() > kMaxCompanionOps + 1)
    return false;
  return tract::isLaneWiseBody(op.getBlock(), /*allowIndex=*/false);
}

using tract::baseBuffer;
using tract::touchesBuffers;

/// Whether `buffer` is an allocation, or a step's argument whose contents
/// the caller does not read afterwards (kDeadAfterAttrName): what the
/// kernel leaves in it after its last use there is then nobody's.
bool isOwnBuffer(Value buffer) {
  if (buffer.getDefiningOp<memref::AllocOp>())
    return true;
  auto argument = dyn_cast<BlockArgument>(buffer);
  if (!argument)
    return false;
  auto function =
      dyn_cast<func::FuncOp>(argument.getOwner()->getParentOp());
  return function && argument.getOwner()->isEntryBlock() &&
         function.getArgAttr(argument.getArgNumber(),
                             tract::kDeadAfterAttrName);
}

/// The buffers `op` reads.
SmallVector<Value> inputBuffers(linalg::LinalgOp op) {
  SmallVector<Value> buffers;
  for (OpOperand *input : op.getDpsInputOperands())
    if (isa<MemRefType>(input->get().getType()))
      buffers.push_back(baseBuffer(input->get()));
  return buffers;
}

/// The op that fills `plan`'s output just before the product, if it can
/// run on the tiles: nothing between them touches the output or writes
/// what it reads.
linalg::LinalgOp findPrologue(const OuterProduct &plan) {
  Operation *op = plan.op;
  Value output = plan.output->get();
  for (Operation *before = op->getPrevNode(); before;
       before = before->getPrevNode()) {
    auto candidate = dyn_cast<linalg::LinalgOp>(before);
    if (candidate && isTileCompanion(candidate) &&
        candidate.getDpsInitOperand(0)->get() == output &&
        !llvm::is_contained(inputBuffers(candidate), baseBuffer(output)) &&
        candidate.getBlock()->getArguments().back().use_empty()) {
      SmallVector<Value> guarded = inputBuffers(candidate);
      guarded.push_back(baseBuffer(output));
      for (Operation *between = before->getNextNode(); between != op;
           between = between->getNextNode())
        if (touchesBuffers(between, guarded, /*writesOnly=*/false))
          return nullptr;
      return candidate;
    }
    if (touchesBuffers(before, {baseBuffer(output)}, /*writesOnly=*/false))
      return nullptr;
  }
  return nullptr;
}

/// Whether `view` is `buffer` or a reshape of all of it (the next product
/// of a buffer that bufferization reuses fills it through a collapsed view).
bool isWholeBuffer(Value view, Value buffer) {
  while (view != buffer) {
    Operation *reshape = view.getDefiningOp();
    if (!isa_and_nonnull<memref::CollapseShapeOp, memref::ExpandShapeOp>(
            reshape))
      return false;
    view = reshape->getOperand(0);
  }
  return true;
}

/// Whether the contents of `buffer` (allocated in the block of `op`, or
/// an argument of it that isOwnBuffer) are never read after `op`: the next
/// op to touch it overwrites all of it without reading (the next product's
/// prologue, bufferization reusing the buffer) or frees it, or nothing
/// touches it and it does not leave the block.
bool isDeadAfter(Value buffer, Operation *op) {
  if (buffer.getParentBlock() != op->getBlock())
    return false;
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode()) {
    if (next->hasTrait<OpTrait::IsTerminator>()) {
      // A step may return it for a later step to overwrite
      // (kDeadAfterAttrName on the result).
      auto function = dyn_cast<func::FuncOp>(next->getParentOp());
      return llvm::all_of(next->getOpOperands(), [&](OpOperand &operand) {
        return operand.get() != buffer ||
               (isa<func::ReturnOp>(next) && function &&
                function.getResultAttr(operand.getOperandNumber(),
                                       tract::kDeadAfterAttrName));
      });
    }
    if (!touchesBuffers(next, {buffer}, /*writesOnly=*/false))
      continue;
    if (auto dealloc = dyn_cast<memref::DeallocOp>(next))
      return baseBuffer(dealloc.getMemref()) == baseBuffer(buffer);
    auto overwrite = dyn_cast<linalg::LinalgOp>(next);
    return overwrite && isTileCompanion(overwrite) &&
           isWholeBuffer(overwrite.getDpsInitOperand(0)->get(), buffer) &&
           !llvm::is_contained(inputBuffers(overwrite), buffer) &&
           overwrite.getBlock()->getArguments().back().use_empty();
  }
  return false;
}

/// The width of the rows that `plan`'s output axis merges when its output
/// is a collapsed view whose only merged group is that axis's two dims,
/// both static; nullopt otherwise.
std::optional<int64_t> collapsedRowWidth(const OuterProduct &plan) {
  auto collapse = plan.output->get().getDefiningOp<memref::CollapseShapeOp>();
  if (!collapse)
    return std::nullopt;
  std::optional<int64_t> width;
  for (auto [axis, group] :
       llvm::enumerate(collapse.getReassociationIndices())) {
    if (group.size() == 1)
      continue;
    MemRefType source = collapse.getSrcType();
    if (axis != plan.outputAxis || group.size() != 2 ||
        source.isDynamicDim(group[0]) || source.isDynamicDim(group[1]))
      return std::nullopt;
    width = source.getDimSize(group[1]);
  }
  return width;
}

/// Whether `groups` (of a reshape between the product's output and a
/// static `shape`) merge axes other than the output axis, the last
/// (OuterProduct::rowGroups).
bool mergesOtherAxes(const OuterProduct &plan,
                     ArrayRef<ReassociationIndices> groups, MemRefType shape) {
  return shape.hasStaticShape() && plan.outputAxis + 1 == groups.size() &&
         groups.back().size() == 1 &&
         llvm::any_of(groups, [](const ReassociationIndices &group) {
           return group.size() > 1;
         });
}

/// Whether `candidate` can take the product's tiles as rows of `width`
/// (OuterProduct::rowWidth): its result has unit-stride rows, and what
/// else it reads is the same along the rows and columns (a bias).
bool takesTilesAsRows(linalg::LinalgOp candidate, Value product, unsigned axis,
                      int64_t width) {
  auto result =
      cast<MemRefType>(candidate.getDpsInitOperand(0)->get().getType());
  if (!result.isLastDimUnitStride() || result.getRank() != axis + 2 ||
      result.getDimSize(axis + 1) != width)
    return false;
  return llvm::all_of(candidate.getDpsInputOperands(), [&](OpOperand *input) {
    AffineMap map = candidate.getMatchingIndexingMap(input);
    return input->get() == product ||
           !isa<MemRefType>(input->get().getType()) ||
           (!map.isFunctionOfDim(axis) && !map.isFunctionOfDim(axis + 1));
  });
}

/// The op that reads `plan`'s output right after the product, if it can
/// run on the tiles and the output is used by nothing else: its own output
/// and inputs are not touched in between, and the product's buffer is
/// only deallocated afterwards. Sets `rowWidth` when the op reads the
/// product's buffer uncollapsed.
linalg::LinalgOp findEpilogue(const OuterProduct &plan,
                              linalg::LinalgOp prologue,
                              std::optional<int64_t> &rowWidth,
                              SmallVector<ReassociationIndices> &rowGroups,
                              SmallVector<int64_t> &expandedShape) {
  Operation *op = plan.op;
  Value output = plan.output->get();
  // The buffer: the output itself or what it is a collapsed view of.
  Value buffer = output;
  std::optional<int64_t> width = collapsedRowWidth(plan);
  auto collapse = output.getDefiningOp<memref::CollapseShapeOp>();
  bool expanded = !width && collapse &&
                  mergesOtherAxes(plan, collapse.getReassociationIndices(),
                                  collapse.getSrcType());
  if (width || expanded)
    buffer = collapse.getSrc();
  if (!isOwnBuffer(buffer))
    return nullptr;
  for (Operation *after = op->getNextNode(); after;
       after = after->getNextNode()) {
    if (!touchesBuffers(after, {buffer}, /*writesOnly=*/false))
      continue;
    auto candidate = dyn_cast<linalg::LinalgOp>(after);
    if (!candidate || !isTileCompanion(candidate))
      return nullptr;
    unsigned reads = 0;
    bool asRows = false;
    // The product's rows split into pixels: by the collapse the product
    // writes through, or by an expand_shape the candidate reads through.
    SmallVector<ReassociationIndices> groups;
    MemRefType pixels;
    for (OpOperand *input : candidate.getDpsInputOperands()) {
      bool whole = input->get() == buffer && (width || expanded);
      auto expand = input->get().getDefiningOp<memref::ExpandShapeOp>();
      bool split = !width && !expanded && expand &&
                   expand.getSrc() == output &&
                   mergesOtherAxes(plan, expand.getReassociationIndices(),
                                   expand.getResultType());
      if (input->get() == output || whole || split) {
        if (!candidate.getMatchingIndexingMap(input).isIdentity())
          return nullptr;
        ++reads;
        asRows = whole || split;
        if (whole && expanded) {
          groups = collapse.getReassociationIndices();
          pixels = collapse.getSrcType();
        } else if (split) {
          groups = expand.getReassociationIndices();
          pixels = expand.getResultType();
        }
      } else if (baseBuffer(input->get()) == buffer) {
        return nullptr; // another view of the product
      }
    }
    Value result = candidate.getDpsInitOperand(0)->get();
    // In place (an activation bufferized into the product's own buffer):
    // each element becomes f(product) where the product would have been
    // written, which the epilogue, reading that element only, then does.
    bool inPlace = result == output &&
                   candidate.getMatchingIndexingMap(
                                candidate.getDpsInitOperand(0))
                       .isIdentity();
    if (reads != 1 || (baseBuffer(result) == buffer && !inPlace) ||
        !candidate.getBlock()->getArguments().back().use_empty())
      return nullptr;
    if (asRows && width &&
        !takesTilesAsRows(candidate, buffer, plan.outputAxis, *width))
      return nullptr;
    // Pixel by pixel: the result has the pixels' shape, its lanes' axis
    // contiguous.
    auto resultType = cast<MemRefType>(result.getType());
    if (!groups.empty() && (resultType.getShape() != pixels.getShape() ||
                            !resultType.isLastDimUnitStride()))
      return nullptr;
    // The product moves down to the epilogue: what runs between must not
    // write what the product (or its prologue) reads.
    SmallVector<Value> read = inputBuffers(plan.op);
    if (prologue)
      llvm::append_range(read, inputBuffers(prologue));
    for (Operation *between = op->getNextNode(); between != after;
         between = between->getNextNode())
      if (touchesBuffers(between, read, /*writesOnly=*/true))
        return nullptr;
    // Tiles of the result are written while the product still reads: the
    // epilogue must not write in place of what the product reads.
    if (llvm::is_contained(read, baseBuffer(result)))
      return nullptr;
    if (!inPlace && !isDeadAfter(buffer, after))
      return nullptr;
    op->moveBefore(after);
    if (asRows && width)
      rowWidth = width;
    if (!groups.empty()) {
      rowGroups = groups;
      expandedShape.assign(pixels.getShape().begin(), pixels.getShape().end());
    }
    return candidate;
  }
  return nullptr;
}

/// The width P of the panels `map` reads: its results are
/// (dim floordiv P, ..., dim mod P) and no other uses `dim`.
std::optional<int64_t> panelWidth(AffineMap map, unsigned dim) {
  ArrayRef<AffineExpr> results = map.getResults();
  if (results.size() < 2)
    return std::nullopt;
  auto first = dyn_cast<AffineBinaryOpExpr>(results.front());
  auto last = dyn_cast<AffineBinaryOpExpr>(results.back());
  if (!first || !last || first.getKind() != AffineExprKind::FloorDiv ||
      last.getKind() != AffineExprKind::Mod ||
      first.getLHS() != getAffineDimExpr(dim, map.getContext()) ||
      last.getLHS() != first.getLHS() || first.getRHS() != last.getRHS())
    return std::nullopt;
  auto width = dyn_cast<AffineConstantExpr>(first.getRHS());
  if (!width || width.getValue() <= 0)
    return std::nullopt;
  for (AffineExpr expr : results.drop_front().drop_back())
    if (expr.isFunctionOfDim(dim))
      return std::nullopt;
  return width.getValue();
}

/// The lane-wise form (OuterProduct::laneWise): the output's innermost dim
/// is the last axis of both inputs, which no other axis uses; the rows are
/// the parallel dim (the innermost of the longest) that one input walks and
/// the other does not: that one is read per row, the other is shared.
FailureOr<OuterProduct> matchLaneWise(linalg::LinalgOp op) {
  AffineMap outputMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!outputMap.isProjectedPermutation() || outputMap.getNumResults() == 0)
    return failure();
  unsigned lane =
      cast<AffineDimExpr>(outputMap.getResults().back()).getPosition();
  AffineMap maps[2] = {op.getMatchingIndexingMap(op.getDpsInputOperand(0)),
                       op.getMatchingIndexingMap(op.getDpsInputOperand(1))};
  for (AffineMap map : maps) {
    auto last = dyn_cast<AffineDimExpr>(map.getResults().back());
    if (!last || last.getPosition() != lane ||
        llvm::any_of(map.getResults().drop_back(), [&](AffineExpr expr) {
          return expr.isFunctionOfDim(lane);
        }))
      return failure();
  }
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  OuterProduct plan;
  plan.op = op;
  plan.output = op.getDpsInitOperand(0);
  plan.vectorDim = lane;
  plan.outputAxis = outputMap.getNumResults() - 1;
  plan.laneWise = true;
  std::optional<unsigned> perRow;
  for (AffineExpr expr : outputMap.getResults().drop_back()) {
    unsigned dim = cast<AffineDimExpr>(expr).getPosition();
    bool uses0 = maps[0].isFunctionOfDim(dim);
    bool uses1 = maps[1].isFunctionOfDim(dim);
    if (uses0 == uses1 || ShapedType::isDynamic(sizes[dim]))
      continue;
    if (!plan.rowDim || sizes[dim] >= sizes[*plan.rowDim]) {
      plan.rowDim = dim;
      perRow = uses0 ? 0 : 1;
    }
  }
  if (!plan.rowDim)
    return failure();
  plan.scalars = op.getDpsInputOperand(*perRow);
  plan.vectors = op.getDpsInputOperand(1 - *perRow);
  plan.vectorAxis = maps[1 - *perRow].getNumResults() - 1;
  for (unsigned dim = 0; dim < op.getNumLoops(); ++dim) {
    if (iterators[dim] == utils::IteratorType::reduction)
      plan.reductionDims.push_back(dim);
    else if (dim != plan.vectorDim && dim != plan.rowDim)
      plan.outerDims.push_back(dim);
  }
  return plan;
}

FailureOr<OuterProduct> matchOuterProduct(linalg::LinalgOp op,
                                          int64_t lanes) {
  if (!op.hasPureBufferSemantics() || !tract::isMultiplyAccumulate(op))
    return failure();
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.getElementType().isF32() || type.getRank() == 0)
      return failure();
  }
  OuterProduct plan;
  plan.op = op;
  plan.output = op.getDpsInitOperand(0);
  std::optional<tract::LaneChoice> choice = tract::chooseLaneDim(
      op, lanes, [](unsigned) { return false; });
  if (!choice)
    return matchLaneWise(op);
  AffineMap outputMap = op.getMatchingIndexingMap(plan.output);
  plan.vectorDim = choice->dim;
  plan.outputAxis = *outputMap.getResultPosition(
      getAffineDimExpr(plan.vectorDim, op.getContext()));
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  unsigned numDims = op.getNumLoops();
  plan.vectors = op.getDpsInputOperand(choice->vectorInput);
  plan.scalars = op.getDpsInputOperand(1 - choice->vectorInput);

  // The vector dim walks one axis of `vectors`, with a constant stride, or
  // the last axis of its panels.
  AffineMap vectorMap = op.getMatchingIndexingMap(plan.vectors);
  auto axis = tract::vectorAxisOf(vectorMap, plan.vectorDim);
  if (succeeded(axis) && axis->first) {
    plan.vectorAxis = *axis->first;
    plan.vectorStride = axis->second;
  } else if (std::optional<int64_t> width =
                 panelWidth(vectorMap, plan.vectorDim)) {
    plan.vectorAxis = vectorMap.getNumResults() - 1;
    plan.panel = width;
  } else {
    return failure();
  }

  // Rows: a parallel output dim that the scalar operand walks, preferably
  // one the vector operand does not (all rows share one vector), then the
  // longest, then the innermost.
  AffineMap scalarMap = op.getMatchingIndexingMap(plan.scalars);
  auto rank = [&](unsigned dim) {
    int64_t size = ShapedType::isDynamic(sizes[dim]) ? INT64_MAX : sizes[dim];
    return std::make_tuple(!vectorMap.isFunctionOfDim(dim), size);
  };
  for (AffineExpr expr : outputMap.getResults()) {
    unsigned dim = cast<AffineDimExpr>(expr).getPosition();
    if (dim == plan.vectorDim || !scalarMap.isFunctionOfDim(dim))
      continue;
    if (!plan.rowDim || rank(dim) >= rank(*plan.rowDim))
      plan.rowDim = dim;
  }
  if (plan.rowDim)
    plan.rowsShareVector = !vectorMap.isFunctionOfDim(*plan.rowDim);
  for (unsigned dim = 0; dim < numDims; ++dim) {
    if (iterators[dim] == utils::IteratorType::reduction)
      plan.reductionDims.push_back(dim);
    else if (dim != plan.vectorDim && dim != plan.rowDim)
      plan.outerDims.push_back(dim);
  }
  return plan;
}

/// The reduction dim cut into blocks, so that the vector operand's panel
/// over one block stays in L1 while the row tiles reuse it.
struct ReductionBlock {
  unsigned dim;   ///< the dim cut
  int64_t size;   ///< of a block (the last may be shorter)
  int64_t length; ///< of the dim
};

/// The reduction dim of `plan` cut into blocks of `kBlock`, if any: a
/// single reduction dim (a product's k), only when it is long (a block of
/// a third or less would not pay its accumulator reloads) and several row
/// tiles reuse each panel. (A convolution's channels in blocks, inside its
/// loop on the output rows, cost GoogLeNet 8%: its rows of 14 or 28 pixels
/// are two to four tiles.)
std::optional<ReductionBlock> reductionBlock(const OuterProduct &plan,
                                             int64_t rows, int64_t kBlock) {
  if (plan.reductionDims.size() != 1 || !plan.rowDim)
    return std::nullopt;
  linalg::LinalgOp op = plan.op;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  unsigned dim = plan.reductionDims[0];
  int64_t length = sizes[dim];
  int64_t rowCount = sizes[*plan.rowDim];
  if (ShapedType::isDynamic(length) || length <= 2 * kBlock ||
      (!ShapedType::isDynamic(rowCount) && rowCount <= rows))
    return std::nullopt;
  return ReductionBlock{dim, kBlock, length};
}

/// Where a kernel's nest shares its work among threads: the loop whose
/// iterations are cut into one run per chunk.
struct Split {
  enum Kind { None, Outer, Columns, Rows } kind = None;
  unsigned dim = 0;    ///< the outer dim, for Outer
  int64_t chunks = 1;  ///< one per thread
  double forkPoints = 0; ///< tract::breakEvenPoints
};

/// The rows of the register tile for column tiles `cols` wide: a narrower
/// column tile takes more rows, since the accumulators, not the rows, are
/// what the register file holds.
int64_t rowsFor(const TileShape &tile, int64_t cols) {
  int64_t registersPerRow = (cols + tile.lanes - 1) / tile.lanes;
  int64_t budget = tile.rows * (tile.cols / tile.lanes);
  return std::max<int64_t>(1, budget / registersPerRow);
}

/// The candidate of the full tiles of a dim of `size` (static or not) cut
/// in tiles of `tile`: the remainder goes with the last chunk.
tract::ParallelCandidate fullTiles(int64_t size, int64_t tile) {
  if (ShapedType::isDynamic(size))
    return {std::nullopt, 1.0, 1};
  int64_t full = size / tile;
  return {full, size ? static_cast<double>(full * tile) / size : 0.0, 1};
}

/// The loop of `plan`'s nest whose iterations are shared among `threads`
/// threads, if any: an outer dim, the full column tiles or the full row
/// tiles (`threshold`: ParallelCost::threshold).
Split chooseSplit(const OuterProduct &plan, const TileShape &tile,
                  int64_t threads, double threshold) {
  if (threads <= 1)
    return {};
  linalg::LinalgOp op = plan.op;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  tract::ParallelCost cost;
  cost.threads = threads;
  cost.threshold = threshold;
  cost.work = tract::iterationWork(op, /*perElement=*/2);

  SmallVector<tract::ParallelCandidate> candidates =
      tract::nestCandidates(op, plan.outerDims);
  SmallVector<Split> splits;
  for (unsigned dim : plan.outerDims)
    splits.push_back({Split::Outer, dim, threads});
  candidates.push_back(fullTiles(sizes[plan.vectorDim], tile.cols));
  candidates.back().preference = tract::outputAxisOf(op, plan.vectorDim);
  splits.push_back({Split::Columns, 0, threads});
  if (plan.rowDim) {
    candidates.push_back(
        fullTiles(sizes[*plan.rowDim], rowsFor(tile, tile.cols)));
    candidates.back().preference = tract::outputAxisOf(op, *plan.rowDim);
    splits.push_back({Split::Rows, 0, threads});
  }
  std::optional<unsigned> chosen =
      tract::chooseParallelLoop(candidates, cost);
  if (!chosen)
    return {};
  Split split = splits[*chosen];
  split.forkPoints = tract::breakEvenPoints(op, cost);
  return split;
}

class KernelEmitter {
public:
  KernelEmitter(OuterProduct plan, TileShape tile, int64_t kBlock,
                int64_t rowBlockBytes, Split split, bool prefetch)
      : plan(plan), tile(tile), kBlock(kBlock), rowBlockBytes(rowBlockBytes),
        split(split), prefetch(prefetch) {}

  void emit(RewriterBase &rewriter) {
    linalg::LinalgOp op = plan.op;
    rewriter.setInsertionPoint(op);
    loops.emplace(rewriter, op);
    std::optional<unsigned> chunkedDim;
    if (split.kind == Split::Outer)
      chunkedDim = split.dim;
    columnsOutside = panelsOutgrowCache();
    loops->nestInChunks(
        rewriter, op.getLoc(),
        columnsOutside ? ArrayRef<unsigned>() : ArrayRef(plan.outerDims),
        split.kind == Split::None ? 1 : split.chunks, chunkedDim,
        [&](OpBuilder &b, Location loc, const tract::Chunks &chunk) {
          chunks = chunk;
          emitBlocks(b, loc);
        },
        split.forkPoints);
    if (plan.prologue)
      rewriter.eraseOp(plan.prologue);
    if (plan.epilogue)
      rewriter.eraseOp(plan.epilogue);
    rewriter.eraseOp(op);
  }

private:
  OuterProduct plan;
  TileShape tile;
  int64_t kBlock;
  int64_t rowBlockBytes;
  Split split;
  /// Whether each step of a full column tile prefetches, into L2, what
  /// the next column tile reads at that step: a product whose weights
  /// stream from memory then fetches them while its tiles compute, and
  /// not only while its first row tile waits for them (the other row
  /// tiles find them in cache). ResNeXt's 8 MB products on 5×5 maps took
  /// 1.5 ms, 5.5 GB/s, with the memory idle three quarters of the time.
  bool prefetch;
  tract::Chunks chunks; ///< this thread's, when split
  std::optional<tract::LoopDims> loops;
  /// The reduction dim cut into blocks, if it is, and the current block:
  /// [begin, end).
  std::optional<ReductionBlock> block;
  Value blockBegin, blockEnd;
  /// The block of rows being emitted, [begin, end), when rows go in blocks.
  Value rowBlockBegin, rowBlockEnd;
  /// Whether the pieces being emitted are row tiles (else column tiles).
  bool inRows = false;
  /// Whether the outer dims loop inside each column tile rather than
  /// around all of them (panelsOutgrowCache).
  bool columnsOutside = false;

  /// Whether the vector operand (the weights), the same for every
  /// iteration of the outer dims, is too large to stay in cache from one
  /// to the next: the outer dims then loop inside each column tile, whose
  /// panel stays in L2 across them. A channels-last convolution on a 7×7
  /// map with 512 channels in and out (9.4 MB of weights) read them 7
  /// times, once per output row, at 26 GFLOP/s.
  bool panelsOutgrowCache() {
    constexpr int64_t kCachedPanels = 512 * 1024;
    if (plan.outerDims.empty() || split.kind == Split::Outer)
      return false;
    auto type = dyn_cast<MemRefType>(plan.vectors->get().getType());
    if (!type || !type.hasStaticShape() ||
        type.getNumElements() * 4 <= kCachedPanels)
      return false;
    AffineMap map = plan.op.getMatchingIndexingMap(plan.vectors);
    SmallVector<int64_t> sizes = plan.op.getStaticLoopRanges();
    int64_t iterations = 1;
    for (unsigned dim : plan.outerDims) {
      if (map.isFunctionOfDim(dim) || ShapedType::isDynamic(sizes[dim]))
        return false;
      iterations *= sizes[dim];
    }
    return iterations > 1;
  }

  OpFoldResult size(unsigned dim) const { return loops->size(dim); }

  /// Blocks a long reduction (reductionBlock) so that the vector operand's
  /// panel stays in cache across all row tiles.
  void emitBlocks(OpBuilder &b, Location loc) {
    block = reductionBlock(plan, tile.rows, kBlock);
    if (!block) {
      blockBegin = blockEnd = nullptr;
      return emitColumns(b, loc);
    }
    Value lb = arith::ConstantIndexOp::create(b, loc, 0);
    Value ub = arith::ConstantIndexOp::create(b, loc, block->length);
    Value step = arith::ConstantIndexOp::create(b, loc, block->size);
    MLIRContext *context = b.getContext();
    AffineMap end = AffineMap::get(
        1, 0,
        {getAffineDimExpr(0, context) + block->size,
         getAffineConstantExpr(block->length, context)},
        context);
    scf::ForOp::create(
        b, loc, lb, ub, step, ValueRange{},
        [&](OpBuilder &nested, Location l, Value iv, ValueRange) {
          blockBegin = iv;
          blockEnd = affine::AffineMinOp::create(nested, l, end, iv);
          emitColumns(nested, l);
          scf::YieldOp::create(nested, l);
        });
  }

  /// Column tiles outside, row tiles inside: the vector operand's panel
  /// of one column tile (k × cols) is reused by every row tile while it is
  /// in L1, and the scalar operand (weights, usually smaller) is what
  /// streams. When the rows are fewer than a row tile (a matrix-vector
  /// product) or known only at run time (a decoding step's one token), those
  /// that fill no row tile of the full column tiles come after, in wider
  /// column tiles (emitShortRows).
  void emitColumns(OpBuilder &b, Location loc) {
    SmallVector<tract::Piece> pieces = tract::cutIntoTiles(
        b, loc, size(plan.vectorDim), tile.cols, tile.lanes);
    // Only when no row tile reads the panels anyway: otherwise the rows
    // left (the last channels of a convolution) would read the whole
    // vector operand a second time.
    int64_t rows = plan.rowDim ? rowsFor(tile, tile.cols) : 1;
    int64_t rowCount =
        plan.rowDim ? plan.op.getStaticLoopRanges()[*plan.rowDim] : 0;
    bool shortRowsApart = rows > 1 && !pieces.empty() && !columnsOutside &&
                          pieces.front().tile == tile.cols &&
                          (ShapedType::isDynamic(rowCount) || rowCount < rows);
    auto columns = [&](OpBuilder &b, Location loc) {
      for (auto [index, piece] : llvm::enumerate(pieces)) {
        int64_t cols = piece.tile;
        bool fullRowsOnly = shortRowsApart && index == 0;
        auto body = [&](OpBuilder &nested, Location l, Value column) {
          if (!columnsOutside)
            return emitRows(nested, l, column, cols, fullRowsOnly);
          loops->nest(nested, l, plan.outerDims, {},
                      [&](OpBuilder &inner, Location il, ValueRange) {
                        emitRows(inner, il, column, cols, fullRowsOnly);
                        return SmallVector<Value>();
                      });
        };
        emitPiece(b, loc, piece, body,
                  split.kind == Split::Columns && index == 0 &&
                      cols == tile.cols);
      }
    };
    // Blocks of whole row tiles from row 0: the rows left out of the full
    // tiles are those of the whole dim, as without blocks.
    if (std::optional<int64_t> block = rowsPerBlock()) {
      Value count = getValueOrCreateConstantIndexOp(b, loc, size(*plan.rowDim));
      MLIRContext *context = b.getContext();
      AffineMap end = AffineMap::get(1, 1,
                                     {getAffineDimExpr(0, context) + *block,
                                      getAffineSymbolExpr(0, context)},
                                     context);
      scf::ForOp::create(
          b, loc, arith::ConstantIndexOp::create(b, loc, 0), count,
          arith::ConstantIndexOp::create(b, loc, *block), ValueRange{},
          [&](OpBuilder &nested, Location l, Value iv, ValueRange) {
            rowBlockBegin = iv;
            rowBlockEnd = affine::AffineMinOp::create(nested, l, end,
                                                      ValueRange{iv, count});
            columns(nested, l);
            scf::YieldOp::create(nested, l);
          });
      rowBlockBegin = rowBlockEnd = nullptr;
    } else {
      columns(b, loc);
    }
    if (shortRowsApart)
      emitShortRows(b, loc, pieces.front(), rows);
  }

  /// The rows left out of the row tiles (of `rows` rows) over the columns of
  /// `columns` (the full column tiles), a few rows at a time: the register
  /// budget of a tile goes to columns, so that a single row still has
  /// enough independent accumulators to hide the FMA latency and reads long
  /// runs of the vector operand.
  void emitShortRows(OpBuilder &b, Location loc, const tract::Piece &columns,
                     int64_t rows) {
    int64_t registers = tile.rows * (tile.cols / tile.lanes);
    SmallVector<tract::Piece> rowPieces =
        tract::cutIntoTiles(b, loc, size(*plan.rowDim), rows, rows);
    for (const tract::Piece &rowPiece : rowPieces) {
      int64_t height = rowPiece.tile;
      if (height == rows)
        continue;
      int64_t wide = std::max<int64_t>(
          tile.cols, registers / height * tile.lanes / tile.cols * tile.cols);
      // No wider than a panel of the weights, and dividing it.
      if (plan.panel) {
        wide = std::min(wide, *plan.panel);
        while (*plan.panel % wide)
          wide -= tile.cols;
      }
      // [begin, end) in tiles of `wide`, then what is left (whole tiles of
      // the usual width): in one tile when its width is known, so that the
      // operand is read in two passes at most.
      AffineExpr s = getAffineSymbolExpr(0, b.getContext());
      OpFoldResult wideEnd = affine::makeComposedFoldedAffineApply(
          b, loc, s.floorDiv(wide) * wide, {columns.end});
      std::optional<int64_t> restBegin = getConstantIntValue(wideEnd);
      std::optional<int64_t> restEnd = getConstantIntValue(columns.end);
      int64_t restTile = tile.cols;
      if (restBegin && restEnd && *restEnd > *restBegin)
        restTile = *restEnd - *restBegin;
      SmallVector<tract::Piece> columnPieces = {
          {columns.begin, wideEnd, wide}, {wideEnd, columns.end, restTile}};
      inRows = true;
      emitPiece(
          b, loc, rowPiece,
          [&](OpBuilder &nested, Location l, Value row) {
            inRows = false;
            for (const tract::Piece &piece : columnPieces) {
              int64_t cols = piece.tile;
              emitPiece(
                  nested, l, piece,
                  [&](OpBuilder &inner, Location il, Value column) {
                    emitTile(inner, il, row, height, column, cols);
                  },
                  split.kind == Split::Columns && cols == wide);
            }
            inRows = true;
          },
          /*chunked=*/false);
      inRows = false;
    }
  }

  /// The tiles of `piece`: when the split is on its dim, this chunk's run of
  /// them for the full tiles (`chunked`), all of them in the last chunk for
  /// the others.
  void emitPiece(OpBuilder &b, Location loc, const tract::Piece &piece,
                 function_ref<void(OpBuilder &, Location, Value)> body,
                 bool chunked) {
    bool splitHere = (split.kind == Split::Columns && !inRows) ||
                     (split.kind == Split::Rows && inRows);
    (splitHere ? chunks : tract::Chunks())
        .forEachTile(b, loc, piece, body, chunked);
  }

  /// The rows of a block, in whole row tiles, when the rows of the
  /// broadcast operand that every column tile reads (each row its block of
  /// k, in f32) exceed rowBlockBytes: they then come from L2 rather than
  /// from memory once per column tile. Only for a single reduction dim (a
  /// product): the windows of a convolution overlap, its rows take far
  /// less than their size, and blocks of them cost resnet18 a tenth of its
  /// speed. Not when threads share the rows.
  std::optional<int64_t> rowsPerBlock() {
    if (!rowBlockBytes || !plan.rowDim || !plan.rowsShareVector ||
        plan.reductionDims.size() != 1 || split.kind == Split::Rows)
      return std::nullopt;
    SmallVector<int64_t> sizes = plan.op.getStaticLoopRanges();
    int64_t reduction = blockBegin ? block->size : sizes[plan.reductionDims[0]];
    if (ShapedType::isDynamic(reduction))
      return std::nullopt;
    int64_t tileRows = rowsFor(tile, tile.cols);
    int64_t rows = std::max<int64_t>(tileRows, rowBlockBytes / (reduction * 4) /
                                                   tileRows * tileRows);
    int64_t count = sizes[*plan.rowDim];
    if (!ShapedType::isDynamic(count) && count <= rows)
      return std::nullopt;
    return rows;
  }

  /// The row dim cut into tiles of `rows`: all of it, or the current block.
  SmallVector<tract::Piece> rowPieces(OpBuilder &b, Location loc,
                                      int64_t rows) {
    if (!rowBlockBegin)
      return tract::cutIntoTiles(b, loc, size(*plan.rowDim), rows, rows);
    AffineExpr begin, end;
    bindDims(b.getContext(), begin, end);
    OpFoldResult length = affine::makeComposedFoldedAffineApply(
        b, loc, end - begin, {rowBlockBegin, rowBlockEnd});
    SmallVector<tract::Piece> pieces =
        tract::cutIntoTiles(b, loc, length, rows, rows);
    for (tract::Piece &piece : pieces)
      for (OpFoldResult *bound : {&piece.begin, &piece.end})
        *bound = affine::makeComposedFoldedAffineApply(b, loc, begin + end,
                                                       {rowBlockBegin, *bound});
    return pieces;
  }

  /// The row tiles at `column`; with `fullRowsOnly`, only those of the
  /// full height.
  void emitRows(OpBuilder &b, Location loc, Value column, int64_t cols,
                bool fullRowsOnly) {
    if (!plan.rowDim)
      return emitTile(b, loc, nullptr, 1, column, cols);
    int64_t rows = rowsFor(tile, cols);
    SmallVector<tract::Piece> pieces = rowPieces(b, loc, rows);
    inRows = true;
    for (auto [index, piece] : llvm::enumerate(pieces)) {
      int64_t height = piece.tile;
      if (fullRowsOnly && height != rows)
        continue;
      emitPiece(
          b, loc, piece,
          [&](OpBuilder &nested, Location l, Value row) {
            emitTile(nested, l, row, height, column, cols);
          },
          index == 0 && height == rows);
    }
    inRows = false;
  }

  /// The indices of `operand` at the current loop dims.
  SmallVector<Value> indices(OpBuilder &b, Location loc, OpOperand *operand) {
    return tract::indicesAt(b, loc, plan.op.getMatchingIndexingMap(operand),
                            loops->values);
  }

  Value readVector(OpBuilder &b, Location loc, OpOperand *operand,
                   unsigned axis, int64_t stride, int64_t cols) {
    return tract::readVector(b, loc, operand->get(),
                             indices(b, loc, operand), axis, stride, cols);
  }

  void emitTile(OpBuilder &b, Location loc, Value row, int64_t rows,
                Value column, int64_t cols) {
    unsigned outputAxis = plan.outputAxis;
    auto setRow = [&](OpBuilder &builder, Location l, int64_t i) {
      if (!row)
        return;
      Value offset = arith::ConstantIndexOp::create(builder, l, i);
      loops->values[*plan.rowDim] =
          arith::AddIOp::create(builder, l, row, offset);
    };
    loops->values[plan.vectorDim] = column;
    // Where the next column tile starts (the last full one for the last),
    // for the prefetches (prefetch).
    Value nextColumn;
    if (prefetch && cols == tile.cols) {
      AffineExpr d0 = getAffineDimExpr(0, b.getContext());
      AffineExpr s0 = getAffineSymbolExpr(0, b.getContext());
      AffineMap next = AffineMap::get(1, 1, {d0 + cols, s0 - cols},
                                      b.getContext());
      nextColumn = getValueOrCreateConstantIndexOp(
          b, loc,
          affine::makeComposedFoldedAffineMin(
              b, loc, next, {OpFoldResult(column), size(plan.vectorDim)}));
    }
    // With the reduction in blocks, the partial sums of a block go through
    // the product's own buffer: the first block starts from the prologue,
    // the last runs the epilogue.
    Value first, last;
    if (blockBegin) {
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value length = arith::ConstantIndexOp::create(b, loc, block->length);
      first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                    blockBegin, zero);
      last = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                   blockEnd, length);
    }
    auto startValues = [&](OpBuilder &builder, Location l, bool fromPrologue) {
      SmallVector<Value> values;
      for (int64_t i = 0; i < rows; ++i) {
        setRow(builder, l, i);
        if (fromPrologue)
          values.push_back(runCompanion(builder, l, plan.prologue, nullptr,
                                        indices(builder, l, plan.output),
                                        cols));
        else
          values.push_back(
              readVector(builder, l, plan.output, outputAxis, 1, cols));
      }
      return values;
    };
    SmallVector<Value> accumulators;
    if (plan.prologue && first) {
      auto choice = scf::IfOp::create(
          b, loc, first,
          [&](OpBuilder &nested, Location l) {
            scf::YieldOp::create(nested, l, startValues(nested, l, true));
          },
          [&](OpBuilder &nested, Location l) {
            scf::YieldOp::create(nested, l, startValues(nested, l, false));
          });
      accumulators.assign(choice.getResults().begin(),
                          choice.getResults().end());
    } else {
      accumulators = startValues(b, loc, bool(plan.prologue));
    }
    SmallVector<Value> sums =
        emitReductions(b, loc, accumulators, [&](OpBuilder &builder,
                                                    Location l,
                                                    ValueRange accs) {
          SmallVector<Value> next;
          Value shared;
          for (int64_t i = 0; i < rows; ++i) {
            setRow(builder, l, i);
            Value vector = shared;
            if (!vector && nextColumn && i == 0) {
              // One prefetch per cache line of the step's vector.
              Value current = loops->values[plan.vectorDim];
              constexpr int64_t kLineLanes = 64 / 4;
              for (int64_t lane = 0; lane < cols; lane += kLineLanes) {
                loops->values[plan.vectorDim] =
                    lane ? arith::AddIOp::create(
                               builder, l, nextColumn,
                               arith::ConstantIndexOp::create(builder, l,
                                                              lane))
                               .getResult()
                         : nextColumn;
                memref::PrefetchOp::create(builder, l, plan.vectors->get(),
                                           indices(builder, l, plan.vectors),
                                           /*isWrite=*/false,
                                           /*localityHint=*/2,
                                           /*isDataCache=*/true);
              }
              loops->values[plan.vectorDim] = current;
            }
            if (!vector)
              vector = readVector(builder, l, plan.vectors, plan.vectorAxis,
                                  plan.vectorStride, cols);
            if (plan.rowsShareVector)
              shared = vector;
            Value splat;
            if (plan.laneWise) {
              AffineMap map =
                  plan.op.getMatchingIndexingMap(plan.scalars);
              splat = readVector(builder, l, plan.scalars,
                                 map.getNumResults() - 1, 1, cols);
            } else {
              Value scalar =
                  memref::LoadOp::create(builder, l, plan.scalars->get(),
                                         indices(builder, l, plan.scalars));
              splat = vector::BroadcastOp::create(builder, l,
                                                  vector.getType(), scalar);
            }
            next.push_back(
                vector::FMAOp::create(builder, l, splat, vector, accs[i]));
          }
          return next;
        });
    auto writeSums = [&](OpBuilder &builder, Location l, bool finish) {
      for (int64_t i = 0; i < rows; ++i) {
        setRow(builder, l, i);
        SmallVector<Value> at = indices(builder, l, plan.output);
        if (!finish || !plan.epilogue) {
          tract::writeVector(builder, l, sums[i], plan.output->get(), at,
                             outputAxis);
          continue;
        }
        Value destination = plan.epilogue.getDpsInitOperand(0)->get();
        if (!plan.rowGroups.empty()) {
          SmallVector<Value> expanded = expandRows(builder, l, at);
          Value result = runCompanion(builder, l, plan.epilogue, sums[i],
                                      expanded, cols);
          tract::writeVector(builder, l, result, destination, expanded,
                             expanded.size() - 1);
          continue;
        }
        if (plan.rowWidth) {
          SmallVector<Value> expanded = splitIntoRows(builder, l, at);
          Value result = runCompanion(builder, l, plan.epilogue, sums[i],
                                      expanded, cols);
          writeAcrossRows(builder, l, result, destination, expanded);
          continue;
        }
        Value result =
            runCompanion(builder, l, plan.epilogue, sums[i], at, cols);
        tract::writeVector(builder, l, result, destination, at, outputAxis);
      }
    };
    if (plan.epilogue && last) {
      scf::IfOp::create(
          b, loc, last,
          [&](OpBuilder &nested, Location l) {
            writeSums(nested, l, true);
            scf::YieldOp::create(nested, l);
          },
          [&](OpBuilder &nested, Location l) {
            writeSums(nested, l, false);
            scf::YieldOp::create(nested, l);
          });
    } else {
      writeSums(b, loc, true);
    }
  }

  /// The buffer's indices at the product's (collapsed) output indices `at`
  /// (OuterProduct::expandedRows): each merged index split into its axes.
  SmallVector<Value> expandRows(OpBuilder &b, Location loc,
                                ArrayRef<Value> at) {
    ArrayRef<int64_t> shape = plan.expandedShape;
    SmallVector<Value> expanded;
    for (auto [index, group] : llvm::enumerate(plan.rowGroups)) {
      SmallVector<Value> parts(group.size());
      Value rest = at[index];
      for (size_t j = group.size(); j-- > 0;) {
        if (j == 0) {
          parts[j] = rest;
          break;
        }
        Value size = arith::ConstantIndexOp::create(b, loc, shape[group[j]]);
        parts[j] = arith::RemUIOp::create(b, loc, rest, size);
        rest = arith::DivUIOp::create(b, loc, rest, size);
      }
      llvm::append_range(expanded, parts);
    }
    return expanded;
  }

  /// The epilogue's indices at the product's output indices `at`: the
  /// output axis split into a row and a column (OuterProduct::rowWidth).
  SmallVector<Value> splitIntoRows(OpBuilder &b, Location loc,
                                   ArrayRef<Value> at) {
    Value width = arith::ConstantIndexOp::create(b, loc, *plan.rowWidth);
    Value position = at[plan.outputAxis];
    SmallVector<Value> expanded(at.begin(), at.end());
    expanded[plan.outputAxis] = arith::DivUIOp::create(b, loc, position, width);
    expanded.insert(expanded.begin() + plan.outputAxis + 1,
                    arith::RemUIOp::create(b, loc, position, width));
    return expanded;
  }

  /// Writes the lanes of `vector`, consecutive elements of the product's
  /// collapsed rows, at their row and column of `memref` from `at`: one
  /// store when they stay in one row, else one masked store per row they
  /// reach (lane l of the store for row `at + j` goes to column
  /// `column + l - j * width`, which is where it belongs when the mask
  /// keeps it).
  void writeAcrossRows(OpBuilder &b, Location loc, Value vector, Value memref,
                       ArrayRef<Value> at) {
    int64_t width = *plan.rowWidth;
    unsigned rowAxis = plan.outputAxis, columnAxis = rowAxis + 1;
    auto type = cast<VectorType>(vector.getType());
    int64_t lanes = type.getNumElements();
    Value column = at[columnAxis];
    auto segments = [&](OpBuilder &nested, Location l) {
      Type i32 = nested.getI32Type();
      auto laneType = VectorType::get({lanes}, i32);
      SmallVector<int32_t> iota(lanes);
      for (int64_t lane = 0; lane < lanes; ++lane)
        iota[lane] = static_cast<int32_t>(lane);
      Value first = arith::IndexCastUIOp::create(nested, l, i32, column);
      Value positions = arith::AddIOp::create(
          nested, l, vector::BroadcastOp::create(nested, l, laneType, first),
          arith::ConstantOp::create(nested, l,
                                    DenseIntElementsAttr::get(laneType, iota)));
      auto bound = [&](int64_t value) -> Value {
        return arith::ConstantOp::create(
            nested, l,
            DenseIntElementsAttr::get(laneType, static_cast<int32_t>(value)));
      };
      int64_t rowsReached = (width - 1 + lanes - 1) / width + 1;
      for (int64_t j = 0; j < rowsReached; ++j) {
        Value mask = arith::CmpIOp::create(nested, l, arith::CmpIPredicate::slt,
                                           positions, bound((j + 1) * width));
        if (j > 0)
          mask = arith::AndIOp::create(
              nested, l, mask,
              arith::CmpIOp::create(nested, l, arith::CmpIPredicate::sge,
                                    positions, bound(j * width)));
        SmallVector<Value> where(at.begin(), at.end());
        Value offset = arith::ConstantIndexOp::create(nested, l, j);
        Value shift = arith::ConstantIndexOp::create(nested, l, j * width);
        where[rowAxis] = arith::AddIOp::create(nested, l, at[rowAxis], offset);
        where[columnAxis] = arith::SubIOp::create(nested, l, column, shift);
        vector::MaskedStoreOp::create(nested, l, memref, where, mask, vector);
      }
    };
    if (lanes > width) {
      segments(b, loc);
      return;
    }
    // Most tiles stay in their row when the rows are wider than a tile.
    Value end = arith::AddIOp::create(
        b, loc, column, arith::ConstantIndexOp::create(b, loc, lanes));
    Value inRow =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, end,
                              arith::ConstantIndexOp::create(b, loc, width));
    scf::IfOp::create(
        b, loc, inRow,
        [&](OpBuilder &nested, Location l) {
          tract::writeVector(nested, l, vector, memref, at, columnAxis);
          scf::YieldOp::create(nested, l);
        },
        [&](OpBuilder &nested, Location l) {
          segments(nested, l);
          scf::YieldOp::create(nested, l);
        });
  }

  /// The body of `companion` on one row of the tile, at output indices
  /// `at` (its own loop indices: its output map is the identity); the
  /// product's row, when it reads it, is `product`.
  Value runCompanion(OpBuilder &b, Location loc, linalg::LinalgOp companion,
                     Value product, ArrayRef<Value> at, int64_t cols) {
    SmallVector<Value> arguments;
    for (OpOperand *input : companion.getDpsInputOperands()) {
      Value source = input->get();
      if (product && baseBuffer(source) == baseBuffer(plan.output->get()) &&
          (source == plan.output->get() || plan.rowWidth ||
           !plan.rowGroups.empty())) {
        arguments.push_back(product);
        continue;
      }
      if (!isa<MemRefType>(source.getType())) {
        arguments.push_back(tract::splatLanes(b, loc, source, cols));
        continue;
      }
      AffineMap map = companion.getMatchingIndexingMap(input);
      SmallVector<Value> where = tract::indicesAt(b, loc, map, at);
      // Split into rows, the lanes walk the columns.
      unsigned lanesDim = plan.outputAxis + (plan.rowWidth ? 1 : 0);
      if (!plan.rowGroups.empty())
        lanesDim = at.size() - 1;
      auto axis = tract::vectorAxisOf(map, lanesDim);
      if (succeeded(axis) && axis->first)
        arguments.push_back(tract::readVector(b, loc, source, where,
                                              *axis->first, axis->second,
                                              cols));
      else
        arguments.push_back(tract::splatLanes(
            b, loc, memref::LoadOp::create(b, loc, source, where), cols));
    }
    arguments.push_back(nullptr);
    return tract::emitLaneWiseBody(b, loc, companion.getBlock(), arguments,
                                   cols);
  }

  /// The size of the last reduction dim (a kernel's row of taps) when a
  /// lane-wise tile unrolls it: static, at most 8. The pixels of a tile
  /// then read each input pixel of that row at the same index expression,
  /// which CSE shares; the other taps stay loops (unrolling all 49 taps of
  /// a 7×7 kernel, for every tile shape, doubled the compile time of the
  /// networks that have them).
  std::optional<int64_t> unrolledTaps() {
    if (!plan.laneWise || blockBegin || plan.reductionDims.empty())
      return std::nullopt;
    int64_t size = plan.op.getStaticLoopRanges()[plan.reductionDims.back()];
    if (ShapedType::isDynamic(size) || size > 8)
      return std::nullopt;
    return size;
  }

  /// Nests one loop per reduction dim (within the current block of k),
  /// carrying the accumulators.
  SmallVector<Value> emitReductions(OpBuilder &b, Location loc,
                                    ValueRange accumulators,
                                    tract::LoopDims::Body step) {
    if (std::optional<int64_t> taps = unrolledTaps()) {
      unsigned dim = plan.reductionDims.back();
      auto row = [&](OpBuilder &builder, Location l, ValueRange sums) {
        SmallVector<Value> next(sums.begin(), sums.end());
        for (int64_t i = 0; i < *taps; ++i) {
          loops->values[dim] = arith::ConstantIndexOp::create(builder, l, i);
          next = step(builder, l, next);
        }
        return next;
      };
      return loops->nest(b, loc, ArrayRef(plan.reductionDims).drop_back(),
                         accumulators, row);
    }
    auto bounds = [&](OpBuilder &builder, Location l, unsigned dim) {
      if (dim == block->dim)
        return std::make_pair(blockBegin, blockEnd);
      return std::make_pair(
          Value(arith::ConstantIndexOp::create(builder, l, 0)),
          getValueOrCreateConstantIndexOp(builder, l, size(dim)));
    };
    return loops->nest(b, loc, plan.reductionDims, accumulators, step,
                       blockBegin ? tract::LoopDims::Bounds(bounds) : nullptr);
  }
};

struct TractCpuContractionKernels
    : public tract::impl::TractCpuContractionKernelsBase<
          TractCpuContractionKernels> {
  using Base::Base;

  /// Whether `plan`'s vector operand (the weights) is too large to stay
  /// in cache from one run to the next (KernelEmitter::prefetch).
  bool streams(OuterProduct &plan) {
    auto type = dyn_cast<MemRefType>(plan.vectors->get().getType());
    return prefetchBytes > 0 && !plan.laneWise && type &&
           type.hasStaticShape() &&
           type.getNumElements() * 4 >= prefetchBytes;
  }

  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, OuterProduct>, 4> work;
    getOperation().walk([&](linalg::LinalgOp op) {
      FailureOr<OuterProduct> plan = matchOuterProduct(op, lanes);
      if (succeeded(plan))
        work.emplace_back(op, *plan);
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, plan] : work) {
      // A depthwise tile reads one vector per row: fewer rows keep the
      // accumulators and the row vectors in registers.
      TileShape shape{plan.rowsShareVector ? rows
                                           : std::max<int64_t>(rows / 2, 1),
                      lanes * vectorsPerRow, lanes};
      // Panels are cut for these tiles (tract-cpu-pack-weights): a tile
      // that does not divide them would cross from one to the next.
      if (plan.panel && *plan.panel % shape.cols) {
        op.emitOpError("reads panels of ")
            << *plan.panel << " columns, which tiles of " << shape.cols
            << " do not divide";
        return signalPassFailure();
      }
      // Partial sums of k blocks go through the product's own buffer, the
      // companions run on the first and the last block.
      plan.prologue = findPrologue(plan);
      plan.epilogue = findEpilogue(plan, plan.prologue, plan.rowWidth,
                                   plan.rowGroups, plan.expandedShape);
      Split split = chooseSplit(plan, shape, threads, threadingThreshold);
      KernelEmitter(plan, shape, kBlock, rowBlockBytes, split,
                    streams(plan))
          .emit(rewriter);
    }
  }
};

} // namespace
