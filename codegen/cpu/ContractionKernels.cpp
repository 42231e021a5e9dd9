//===- ContractionKernels.cpp - register-tiled multiply-accumulate ops ----===//
//
// Every linalg op on buffers whose body is `out + a * b` is an outer product
// in disguise: along the output's innermost dim one operand is a vector, the
// other a scalar per row. The op becomes loops around a rows × cols register
// tile whose accumulators stay in registers across all reduction dims.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/cpu/LaneChoice.h"
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
  unsigned vectorAxis = 0; ///< the axis of `vectors` that the vector dim walks
  int64_t vectorStride = 1;
  SmallVector<unsigned> outerDims;     ///< other parallel dims, one by one
  SmallVector<unsigned> reductionDims; ///< loops inside the tile
};

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
    return failure();
  AffineMap outputMap = op.getMatchingIndexingMap(plan.output);
  plan.vectorDim = choice->dim;
  plan.outputAxis = *outputMap.getResultPosition(
      getAffineDimExpr(plan.vectorDim, op.getContext()));
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  unsigned numDims = op.getNumLoops();
  plan.vectors = op.getDpsInputOperand(choice->vectorInput);
  plan.scalars = op.getDpsInputOperand(1 - choice->vectorInput);

  // The vector dim walks one axis of `vectors`, with a constant stride.
  AffineMap vectorMap = op.getMatchingIndexingMap(plan.vectors);
  auto axis = tract::vectorAxisOf(vectorMap, plan.vectorDim);
  if (failed(axis) || !axis->first)
    return failure();
  plan.vectorAxis = *axis->first;
  plan.vectorStride = axis->second;

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

class KernelEmitter {
public:
  KernelEmitter(OuterProduct plan, TileShape tile, int64_t kBlock)
      : plan(plan), tile(tile), kBlock(kBlock) {}

  void emit(RewriterBase &rewriter) {
    linalg::LinalgOp op = plan.op;
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    ranges = op.createLoopRanges(rewriter, loc);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    dims.assign(op.getNumLoops(), zero);
    emitOuter(rewriter, loc, 0);
    rewriter.eraseOp(op);
  }

private:
  OuterProduct plan;
  TileShape tile;
  int64_t kBlock;
  SmallVector<Range> ranges;
  SmallVector<Value> dims; ///< the current value of every loop dim
  /// The block of the single reduction dim: [begin, end).
  Value blockBegin, blockEnd;

  OpFoldResult size(unsigned dim) const { return ranges[dim].size; }

  void emitOuter(OpBuilder &b, Location loc, size_t i) {
    if (i == plan.outerDims.size())
      return emitBlocks(b, loc);
    Value ub = getValueOrCreateConstantIndexOp(b, loc, size(plan.outerDims[i]));
    Value lb = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    scf::ForOp::create(b, loc, lb, ub, one, ValueRange{},
                       [&](OpBuilder &nested, Location l, Value iv,
                           ValueRange) {
                         dims[plan.outerDims[i]] = iv;
                         emitOuter(nested, l, i + 1);
                         scf::YieldOp::create(nested, l);
                       });
  }

  /// Blocks a long single reduction dim so that the vector operand's panel
  /// stays in cache across all row tiles.
  void emitBlocks(OpBuilder &b, Location loc) {
    std::optional<int64_t> length;
    if (plan.reductionDims.size() == 1)
      length = getConstantIntValue(size(plan.reductionDims[0]));
    if (!length || *length <= kBlock) {
      blockBegin = blockEnd = nullptr;
      return emitColumns(b, loc);
    }
    Value lb = arith::ConstantIndexOp::create(b, loc, 0);
    Value ub = arith::ConstantIndexOp::create(b, loc, *length);
    Value step = arith::ConstantIndexOp::create(b, loc, kBlock);
    MLIRContext *context = b.getContext();
    AffineMap end = AffineMap::get(
        1, 0,
        {getAffineDimExpr(0, context) + kBlock,
         getAffineConstantExpr(*length, context)},
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
  /// streams.
  void emitColumns(OpBuilder &b, Location loc) {
    for (const tract::Piece &piece : tract::cutIntoTiles(
             b, loc, size(plan.vectorDim), tile.cols, tile.lanes))
      tract::forEachTile(b, loc, piece,
                         [&](OpBuilder &nested, Location l, Value column) {
                           emitRows(nested, l, column, piece.tile);
                         });
  }

  void emitRows(OpBuilder &b, Location loc, Value column, int64_t cols) {
    if (!plan.rowDim)
      return emitTile(b, loc, nullptr, 1, column, cols);
    // A narrower column tile takes more rows: the accumulators, not the
    // rows, are what the register file holds.
    int64_t registersPerRow = (cols + tile.lanes - 1) / tile.lanes;
    int64_t budget = tile.rows * (tile.cols / tile.lanes);
    int64_t rows = std::max<int64_t>(1, budget / registersPerRow);
    for (const tract::Piece &piece :
         tract::cutIntoTiles(b, loc, size(*plan.rowDim), rows, rows))
      tract::forEachTile(b, loc, piece,
                         [&](OpBuilder &nested, Location l, Value row) {
                           emitTile(nested, l, row, piece.tile, column, cols);
                         });
  }

  /// The indices of `operand` at the current loop dims.
  SmallVector<Value> indices(OpBuilder &b, Location loc, OpOperand *operand) {
    return tract::indicesAt(b, loc, plan.op.getMatchingIndexingMap(operand),
                            dims);
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
      dims[*plan.rowDim] = arith::AddIOp::create(builder, l, row, offset);
    };
    dims[plan.vectorDim] = column;
    SmallVector<Value> accumulators;
    for (int64_t i = 0; i < rows; ++i) {
      setRow(b, loc, i);
      accumulators.push_back(
          readVector(b, loc, plan.output, outputAxis, 1, cols));
    }
    SmallVector<Value> sums =
        emitReductions(b, loc, 0, accumulators, [&](OpBuilder &builder,
                                                    Location l,
                                                    ValueRange accs) {
          SmallVector<Value> next;
          Value shared;
          for (int64_t i = 0; i < rows; ++i) {
            setRow(builder, l, i);
            Value vector = shared;
            if (!vector)
              vector = readVector(builder, l, plan.vectors, plan.vectorAxis,
                                  plan.vectorStride, cols);
            if (plan.rowsShareVector)
              shared = vector;
            Value scalar =
                memref::LoadOp::create(builder, l, plan.scalars->get(),
                                       indices(builder, l, plan.scalars));
            Value splat = vector::BroadcastOp::create(
                builder, l, vector.getType(), scalar);
            next.push_back(
                vector::FMAOp::create(builder, l, splat, vector, accs[i]));
          }
          return next;
        });
    for (int64_t i = 0; i < rows; ++i) {
      setRow(b, loc, i);
      tract::writeVector(b, loc, sums[i], plan.output->get(),
                         indices(b, loc, plan.output), outputAxis);
    }
  }

  using StepFn =
      function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>;

  /// Nests one loop per reduction dim, carrying the accumulators.
  SmallVector<Value> emitReductions(OpBuilder &b, Location loc, size_t i,
                                    ValueRange accumulators, StepFn step) {
    if (i == plan.reductionDims.size())
      return step(b, loc, accumulators);
    unsigned dim = plan.reductionDims[i];
    Value lb = blockBegin ? blockBegin : arith::ConstantIndexOp::create(b, loc, 0);
    Value ub = blockBegin ? blockEnd
                          : getValueOrCreateConstantIndexOp(b, loc, size(dim));
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto loop = scf::ForOp::create(
        b, loc, lb, ub, one, accumulators,
        [&](OpBuilder &nested, Location l, Value iv, ValueRange accs) {
          dims[dim] = iv;
          scf::YieldOp::create(nested, l,
                               emitReductions(nested, l, i + 1, accs, step));
        });
    return SmallVector<Value>(loop.getResults());
  }
};

struct TractCpuContractionKernels
    : public tract::impl::TractCpuContractionKernelsBase<
          TractCpuContractionKernels> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, OuterProduct>> work;
    getOperation().walk([&](linalg::LinalgOp op) {
      FailureOr<OuterProduct> plan = matchOuterProduct(op, lanes);
      if (succeeded(plan))
        work.emplace_back(op, *plan);
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, plan] : work) {
      // A depthwise tile reads one vector per row: fewer rows keep the
      // accumulators and the row vectors in registers.
      TileShape shape{plan.rowsShareVector ? rows : std::max<int64_t>(rows / 2, 1),
                      lanes * vectorsPerRow, lanes};
      KernelEmitter(plan, shape, kBlock).emit(rewriter);
    }
  }
};

} // namespace
