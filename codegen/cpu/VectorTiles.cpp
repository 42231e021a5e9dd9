//===- VectorTiles.cpp - loops of static vector tiles over buffers --------===//

#include "codegen/cpu/VectorTiles.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

#include <algorithm>
#include <cmath>

using namespace mlir;

std::optional<int64_t> tract::coefficientOf(AffineExpr expr, unsigned dim,
                                            unsigned numDims) {
  if (!expr.isFunctionOfDim(dim))
    return 0;
  MLIRContext *context = expr.getContext();
  auto at = [&](int64_t value) {
    SmallVector<AffineExpr> values(numDims, getAffineConstantExpr(0, context));
    values[dim] = getAffineConstantExpr(value, context);
    return dyn_cast<AffineConstantExpr>(
        simplifyAffineExpr(expr.replaceDims(values), numDims, 0));
  };
  auto zero = at(0), one = at(1), two = at(2);
  if (!zero || !one || !two)
    return std::nullopt;
  int64_t step = one.getValue() - zero.getValue();
  if (two.getValue() - one.getValue() != step)
    return std::nullopt;
  // Linear in `dim` alone: no other dim may multiply it.
  AffineExpr rest = expr - getAffineDimExpr(dim, context) * step;
  if (simplifyAffineExpr(rest, numDims, 0).isFunctionOfDim(dim))
    return std::nullopt;
  return step;
}

FailureOr<std::pair<std::optional<unsigned>, int64_t>>
tract::vectorAxisOf(AffineMap map, unsigned dim) {
  std::optional<unsigned> axis;
  int64_t stride = 0;
  for (auto [i, expr] : llvm::enumerate(map.getResults())) {
    if (!expr.isFunctionOfDim(dim))
      continue;
    std::optional<int64_t> step = coefficientOf(expr, dim, map.getNumDims());
    if (axis || !step || *step <= 0)
      return failure();
    axis = i;
    stride = *step;
  }
  return std::make_pair(axis, stride);
}

SmallVector<tract::Piece> tract::cutIntoTiles(OpBuilder &b, Location loc,
                                              OpFoldResult size, int64_t tile,
                                              int64_t restTile) {
  if (std::optional<int64_t> known = getConstantIntValue(size)) {
    SmallVector<Piece> pieces;
    int64_t full = *known / tile * tile;
    if (full > 0)
      pieces.push_back({b.getIndexAttr(0), b.getIndexAttr(full), tile});
    // A vector of 28 f32 is legalized far worse than 16 + 12.
    for (int64_t at = full; at < *known;) {
      int64_t step = std::min(*known - at, restTile);
      pieces.push_back({b.getIndexAttr(at), b.getIndexAttr(at + step), step});
      at += step;
    }
    return pieces;
  }
  if (tile == 1)
    return {Piece{b.getIndexAttr(0), size, 1}};
  AffineExpr s = getAffineSymbolExpr(0, b.getContext());
  OpFoldResult full = affine::makeComposedFoldedAffineApply(
      b, loc, s.floorDiv(tile) * tile, {size});
  return {Piece{b.getIndexAttr(0), full, tile}, Piece{full, size, 1}};
}

SmallVector<Value> tract::foldTiles(
    OpBuilder &b, Location loc, const Piece &piece, ValueRange init,
    function_ref<SmallVector<Value>(OpBuilder &, Location, Value, ValueRange)>
        body,
    std::optional<IterationRange> only) {
  std::optional<int64_t> begin = getConstantIntValue(piece.begin);
  std::optional<int64_t> end = getConstantIntValue(piece.end);
  if (!only && begin && end && *end - *begin == piece.tile)
    return body(b, loc, arith::ConstantIndexOp::create(b, loc, *begin), init);
  Value lb = getValueOrCreateConstantIndexOp(b, loc, piece.begin);
  Value ub = getValueOrCreateConstantIndexOp(b, loc, piece.end);
  Value step = arith::ConstantIndexOp::create(b, loc, piece.tile);
  if (only) {
    // begin + first * tile, begin + last * tile.
    Value first = arith::MulIOp::create(b, loc, only->first, step);
    Value last = arith::MulIOp::create(b, loc, only->second, step);
    ub = arith::AddIOp::create(b, loc, lb, last);
    lb = arith::AddIOp::create(b, loc, lb, first);
  }
  auto loop = scf::ForOp::create(
      b, loc, lb, ub, step, init,
      [&](OpBuilder &nested, Location l, Value iv, ValueRange carried) {
        scf::YieldOp::create(nested, l, body(nested, l, iv, carried));
      });
  return SmallVector<Value>(loop.getResults());
}

void tract::forEachTile(OpBuilder &b, Location loc, const Piece &piece,
                        function_ref<void(OpBuilder &, Location, Value)> body,
                        std::optional<IterationRange> only) {
  foldTiles(
      b, loc, piece, {},
      [&](OpBuilder &nested, Location l, Value tile, ValueRange) {
        body(nested, l, tile);
        return SmallVector<Value>();
      },
      only);
}

SmallVector<Value> tract::indicesAt(OpBuilder &b, Location loc, AffineMap map,
                                    ArrayRef<Value> dims) {
  SmallVector<Value> result;
  for (AffineExpr expr : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      result.push_back(dims[dim.getPosition()]);
      continue;
    }
    if (auto constant = dyn_cast<AffineConstantExpr>(expr)) {
      result.push_back(
          arith::ConstantIndexOp::create(b, loc, constant.getValue()));
      continue;
    }
    SmallVector<OpFoldResult> operands;
    for (auto [d, value] : llvm::enumerate(dims))
      operands.push_back(expr.isFunctionOfDim(d) ? OpFoldResult(value)
                                                 : b.getIndexAttr(0));
    AffineMap single = AffineMap::get(map.getNumDims(), 0, expr);
    result.push_back(
        affine::makeComposedAffineApply(b, loc, single, operands));
  }
  return result;
}

/// A read of `count` elements along `axis` from `at`, in bounds.
static Value contiguousRead(OpBuilder &b, Location loc, Value memref,
                            ValueRange at, unsigned axis, int64_t count) {
  auto type = cast<MemRefType>(memref.getType());
  Type element = type.getElementType();
  auto vectorType = VectorType::get({count}, element);
  // Every read is in bounds: the padding is never used.
  Value padding = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
  AffineMap map =
      AffineMap::get(type.getRank(), 0, getAffineDimExpr(axis, b.getContext()));
  return vector::TransferReadOp::create(b, loc, vectorType, memref, at,
                                        padding, map, ArrayRef{true});
}

Value tract::readVector(OpBuilder &b, Location loc, Value memref,
                        ValueRange at, unsigned axis, int64_t stride,
                        int64_t cols) {
  if (stride == 1)
    return contiguousRead(b, loc, memref, at, axis, cols);
  if (stride <= 4 && cols > 1) {
    // Every `stride`-th element of the span [at, at + span): whole-width
    // loads of `cols` elements (the last one ends where the span ends, so
    // none reads past it) merged by register shuffles. A single load of
    // `span` elements would be an odd-sized vector, which the backend
    // splits into scalar loads and inserts.
    int64_t span = (cols - 1) * stride + 1;
    int64_t pieces = llvm::divideCeil(span, cols);
    auto pieceStart = [&](int64_t piece) {
      return std::min(piece * cols, span - cols);
    };
    auto readPiece = [&](int64_t piece) {
      SmallVector<Value> where(at.begin(), at.end());
      AffineExpr d0 = b.getAffineDimExpr(0);
      where[axis] = affine::makeComposedAffineApply(
          b, loc, AffineMap::get(1, 0, d0 + pieceStart(piece)),
          {OpFoldResult(where[axis])});
      return contiguousRead(b, loc, memref, where, axis, cols);
    };
    // Lane i of the result is element i * stride of the span; `result`
    // holds the lanes whose element lies in the pieces read so far.
    Value result = readPiece(0);
    for (int64_t piece = 1; piece < pieces; ++piece) {
      Value next = readPiece(piece);
      int64_t start = pieceStart(piece);
      SmallVector<int64_t> mask;
      for (int64_t i = 0; i < cols; ++i) {
        int64_t element = i * stride;
        if (element >= start && element < start + cols)
          mask.push_back(cols + element - start);
        else if (piece == 1 && element < cols)
          mask.push_back(element); // still the raw first piece
        else
          mask.push_back(i); // placed before, or by a later piece
      }
      result = vector::ShuffleOp::create(b, loc, result, next, mask);
    }
    return result;
  }
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<OpFoldResult> offsets = getAsOpFoldResult(at);
  SmallVector<OpFoldResult> sizes(type.getRank(), b.getIndexAttr(1));
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  sizes[axis] = b.getIndexAttr(cols);
  strides[axis] = b.getIndexAttr(stride);
  auto viewType = memref::SubViewOp::inferRankReducedResultType(
      {cols}, type, offsets, sizes, strides);
  Value view = memref::SubViewOp::create(b, loc, cast<MemRefType>(viewType),
                                         memref, offsets, sizes, strides);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  return contiguousRead(b, loc, view, zero, 0, cols);
}

void tract::writeVector(OpBuilder &b, Location loc, Value vector, Value memref,
                        ValueRange at, unsigned axis) {
  auto type = cast<MemRefType>(memref.getType());
  AffineMap map =
      AffineMap::get(type.getRank(), 0, getAffineDimExpr(axis, b.getContext()));
  vector::TransferWriteOp::create(b, loc, vector, memref, at, map,
                                  ArrayRef{true});
}

Value tract::splatLanes(OpBuilder &b, Location loc, Value value,
                        int64_t width) {
  return vector::BroadcastOp::create(
      b, loc, VectorType::get({width}, value.getType()), value);
}

static bool isVectorElement(Type type) {
  return isa<FloatType, IntegerType, IndexType>(type);
}

/// Whether `load` can be a gather: from a buffer defined outside the body,
/// of vector elements, whose last axis is contiguous and whose strides are
/// known.
static bool isGatherable(memref::LoadOp load, Block *body) {
  MemRefType type = load.getMemRefType();
  if (type.getRank() == 0 || !isVectorElement(type.getElementType()) ||
      type.getElementType().isInteger(1))
    return false;
  if (Operation *source = load.getMemRef().getDefiningOp())
    if (body->getParentOp()->isAncestor(source))
      return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  return strides.back() == 1 &&
         !llvm::is_contained(strides, ShapedType::kDynamic);
}

bool tract::isLaneWiseBody(Block *body, bool allowIndex, bool allowLoads) {
  for (Operation &op : body->without_terminator()) {
    if (isa<linalg::IndexOp>(op)) {
      if (!allowIndex)
        return false;
      continue;
    }
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      if (!allowLoads || !isGatherable(load, body))
        return false;
      continue;
    }
    if (isa<arith::ConstantOp>(op))
      continue;
    if (op.getNumRegions() != 0 || op.getNumResults() != 1 ||
        !op.hasTrait<OpTrait::Elementwise>() ||
        !op.hasTrait<OpTrait::Vectorizable>() ||
        !isVectorElement(op.getResult(0).getType()))
      return false;
  }
  return true;
}

/// Whether every lane of `lanes` holds the same value: a broadcast, or lane
/// by lane arithmetic on such values.
static bool isUniform(Value lanes) {
  Operation *op = lanes.getDefiningOp();
  if (!op)
    return false;
  if (isa<vector::BroadcastOp>(op))
    return true;
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    return dense && dense.isSplat();
  }
  return op->hasTrait<OpTrait::Elementwise>() && op->getNumOperands() > 0 &&
         llvm::all_of(op->getOperands(), isUniform);
}

/// Whether lane i of `lanes` is lane 0 plus i: a uniform value plus
/// `vector.step`, plus uniform values.
static bool isConsecutive(Value lanes) {
  auto add = lanes.getDefiningOp<arith::AddIOp>();
  if (!add)
    return false;
  for (auto [one, other] : {std::pair(add.getLhs(), add.getRhs()),
                            std::pair(add.getRhs(), add.getLhs())})
    if (isUniform(other) &&
        (one.getDefiningOp<vector::StepOp>() || isConsecutive(one)))
      return true;
  return false;
}

/// The lanes of `load`, each at the indices of its lane. A load whose
/// indices are the same on every lane is one load; one whose last index
/// walks the lanes one by one and whose others are the same, a vector load;
/// any other a gather, of one offset per lane (32-bit when the buffer is
/// small enough, which the targets gather with 16 lanes at once).
static Value gatherLanes(OpBuilder &b, Location loc, memref::LoadOp load,
                         function_ref<Value(Value)> lookup, int64_t width) {
  MemRefType type = load.getMemRefType();
  auto result = VectorType::get({width}, type.getElementType());
  SmallVector<Value> lanes = llvm::map_to_vector(load.getIndices(), lookup);
  if (isConsecutive(lanes.back()) &&
      llvm::all_of(ArrayRef<Value>(lanes).drop_back(), isUniform)) {
    SmallVector<Value> at = llvm::map_to_vector(lanes, [&](Value value) {
      return Value(vector::ExtractOp::create(b, loc, value, int64_t(0)));
    });
    return vector::LoadOp::create(b, loc, result, load.getMemRef(), at);
  }
  // The indices the lanes share are the gather's origin; the others are
  // offsets from it.
  SmallVector<int64_t> strides;
  int64_t offset;
  (void)type.getStridesAndOffset(strides, offset);
  auto indexLanes = VectorType::get({width}, b.getIndexType());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  SmallVector<Value> origin(type.getRank(), zero);
  Value linear;
  for (auto [axis, index] : llvm::enumerate(lanes)) {
    if (isUniform(index)) {
      origin[axis] = vector::ExtractOp::create(b, loc, index, int64_t(0));
      continue;
    }
    if (strides[axis] != 1)
      index = arith::MulIOp::create(
          b, loc, index,
          arith::ConstantOp::create(
              b, loc,
              DenseElementsAttr::get(indexLanes,
                                     b.getIndexAttr(strides[axis]))));
    linear = linear ? arith::AddIOp::create(b, loc, linear, index).getResult()
                    : index;
  }
  if (!linear)
    return tract::splatLanes(
        b, loc, memref::LoadOp::create(b, loc, load.getMemRef(), origin),
        width);
  if (type.hasStaticShape() && type.getNumElements() < (int64_t(1) << 31))
    linear = arith::IndexCastOp::create(
        b, loc, VectorType::get({width}, b.getI32Type()), linear);
  Value mask = vector::ConstantMaskOp::create(
      b, loc, VectorType::get({width}, b.getI1Type()),
      ArrayRef<int64_t>{width});
  Value passThrough = arith::ConstantOp::create(b, loc, b.getZeroAttr(result));
  return vector::GatherOp::create(b, loc, result, load.getMemRef(), origin,
                                  linear, mask, passThrough);
}

Value tract::emitLaneWiseBody(OpBuilder &b, Location loc, Block *body,
                              ArrayRef<Value> arguments, int64_t width,
                              function_ref<Value(unsigned dim)> index) {
  IRMapping lanesOf;
  for (auto [argument, value] : llvm::zip(body->getArguments(), arguments))
    if (value)
      lanesOf.map(argument, value);
  // A value from outside the body is the same on every lane.
  auto lookup = [&](Value value) {
    if (Value mapped = lanesOf.lookupOrNull(value))
      return mapped;
    return splatLanes(b, loc, value, width);
  };
  for (Operation &inner : body->without_terminator()) {
    Value lanes;
    if (auto indexOp = dyn_cast<linalg::IndexOp>(inner)) {
      lanes = index(indexOp.getDim());
    } else if (isa<arith::ConstantOp>(inner)) {
      lanes = splatLanes(b, loc, b.clone(inner)->getResult(0), width);
    } else if (auto load = dyn_cast<memref::LoadOp>(inner)) {
      lanes = gatherLanes(b, loc, load, lookup, width);
    } else {
      SmallVector<Value> operands =
          llvm::map_to_vector(inner.getOperands(), lookup);
      // On values every lane shares, the op runs once, on scalars.
      bool shared = llvm::all_of(operands, [](Value operand) {
        return operand.getDefiningOp<vector::BroadcastOp>() &&
               !isa<VectorType>(
                   operand.getDefiningOp<vector::BroadcastOp>().getSource()
                       .getType());
      });
      OperationState state(inner.getLoc(), inner.getName());
      Type type = inner.getResult(0).getType();
      if (shared) {
        for (Value operand : operands)
          state.addOperands(
              operand.getDefiningOp<vector::BroadcastOp>().getSource());
        state.addTypes(type);
      } else {
        state.addOperands(operands);
        state.addTypes(VectorType::get({width}, type));
      }
      state.addAttributes(inner.getAttrs());
      lanes = b.create(state)->getResult(0);
      if (shared)
        lanes = splatLanes(b, loc, lanes, width);
    }
    lanesOf.map(inner.getResult(0), lanes);
  }
  return lookup(body->getTerminator()->getOperand(0));
}

tract::LoopDims::LoopDims(OpBuilder &b, linalg::LinalgOp op)
    : ranges(op.createLoopRanges(b, op.getLoc())) {
  Value zero = arith::ConstantIndexOp::create(b, op.getLoc(), 0);
  values.assign(op.getNumLoops(), zero);
}

SmallVector<Value> tract::LoopDims::nest(OpBuilder &b, Location loc,
                                         ArrayRef<unsigned> loops,
                                         ValueRange init, Body body,
                                         Bounds bounds) {
  if (loops.empty())
    return body(b, loc, init);
  unsigned dim = loops.front();
  Value lb, ub;
  if (bounds) {
    std::tie(lb, ub) = bounds(b, loc, dim);
  } else {
    lb = arith::ConstantIndexOp::create(b, loc, 0);
    ub = getValueOrCreateConstantIndexOp(b, loc, size(dim));
  }
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, lb, ub, one, init,
      [&](OpBuilder &nested, Location l, Value iv, ValueRange carried) {
        values[dim] = iv;
        scf::YieldOp::create(
            nested, l, nest(nested, l, loops.drop_front(), carried, body,
                            bounds));
      });
  return SmallVector<Value>(loop.getResults());
}

void tract::LoopDims::nestInChunks(
    OpBuilder &b, Location loc, ArrayRef<unsigned> loops, int64_t chunkCount,
    std::optional<unsigned> chunkedDim,
    function_ref<void(OpBuilder &, Location, const Chunks &)> body,
    double forkPoints) {
  auto inChunk = [&](OpBuilder &builder, Location l, const Chunks &chunks) {
    auto run = [&](OpBuilder &nested, Location at, ValueRange) {
      body(nested, at, chunks);
      return SmallVector<Value>();
    };
    auto bounds = [&](OpBuilder &nested, Location at, unsigned dim) {
      if (dim == *chunkedDim)
        return chunks.runOf(nested, at, size(dim));
      return std::make_pair(
          Value(arith::ConstantIndexOp::create(nested, at, 0)),
          getValueOrCreateConstantIndexOp(nested, at, size(dim)));
    };
    if (chunks && chunkedDim)
      nest(builder, l, loops, {}, run, bounds);
    else
      nest(builder, l, loops, {}, run);
  };
  if (chunkCount <= 1)
    return inChunk(b, loc, Chunks());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value upper = arith::ConstantIndexOp::create(b, loc, chunkCount);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value countValue;
  if (forkPoints > 0) {
    // The op's iteration points at run time against the break-even.
    Value points = one;
    bool dynamic = false;
    int64_t fixed = 1;
    for (const Range &range : ranges) {
      if (std::optional<int64_t> size = getConstantIntValue(range.size)) {
        fixed *= *size;
        continue;
      }
      dynamic = true;
      points = arith::MulIOp::create(
          b, loc, points,
          getValueOrCreateConstantIndexOp(b, loc, range.size));
    }
    if (dynamic) {
      constexpr double kMost = 1e18;
      int64_t least = static_cast<int64_t>(
          std::min(kMost, std::ceil(forkPoints / std::max<int64_t>(fixed, 1))));
      Value worth = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::uge, points,
          arith::ConstantIndexOp::create(b, loc, least));
      if (chunkedDim && !getConstantIntValue(size(*chunkedDim))) {
        Value two = arith::ConstantIndexOp::create(b, loc, 2);
        worth = arith::AndIOp::create(
            b, loc, worth,
            arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::uge,
                getValueOrCreateConstantIndexOp(b, loc, size(*chunkedDim)),
                two));
      }
      countValue = arith::SelectOp::create(b, loc, worth, upper, one);
      upper = countValue;
    }
  }
  scf::ParallelOp::create(b, loc, zero, upper, one,
                          [&](OpBuilder &nested, Location l, ValueRange ivs) {
                            Chunks chunks;
                            chunks.index = ivs.front();
                            chunks.count = chunkCount;
                            chunks.countValue = countValue;
                            inChunk(nested, l, chunks);
                          });
}

tract::IterationRange tract::Chunks::runOf(OpBuilder &b, Location loc,
                                           OpFoldResult iterations) const {
  // Chunk c starts at ceil(c * n / count).
  Value n = getValueOrCreateConstantIndexOp(b, loc, iterations);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value count = countValue;
  Value roundUp;
  if (count) {
    roundUp = arith::SubIOp::create(b, loc, count, one);
  } else {
    count = arith::ConstantIndexOp::create(b, loc, this->count);
    roundUp = arith::ConstantIndexOp::create(b, loc, this->count - 1);
  }
  auto startOf = [&](Value chunk) -> Value {
    Value scaled = arith::MulIOp::create(b, loc, chunk, n);
    Value up = arith::AddIOp::create(b, loc, scaled, roundUp);
    return arith::DivUIOp::create(b, loc, up, count);
  };
  Value next = arith::AddIOp::create(b, loc, index, one);
  return {startOf(index), startOf(next)};
}

tract::IterationRange tract::Chunks::tilesOf(OpBuilder &b, Location loc,
                                             const Piece &piece) const {
  AffineExpr begin, end;
  bindSymbols(b.getContext(), begin, end);
  OpFoldResult tiles = affine::makeComposedFoldedAffineApply(
      b, loc, (end - begin).floorDiv(piece.tile), {piece.begin, piece.end});
  return runOf(b, loc, tiles);
}

void tract::Chunks::inLast(
    OpBuilder &b, Location loc,
    function_ref<void(OpBuilder &, Location)> body) const {
  if (!index)
    return body(b, loc);
  Value last =
      countValue
          ? arith::SubIOp::create(b, loc, countValue,
                                  arith::ConstantIndexOp::create(b, loc, 1))
                .getResult()
          : arith::ConstantIndexOp::create(b, loc, count - 1).getResult();
  Value isLast = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       index, last);
  scf::IfOp::create(b, loc, isLast, [&](OpBuilder &nested, Location l) {
    body(nested, l);
    scf::YieldOp::create(nested, l);
  });
}

void tract::Chunks::forEachTile(
    OpBuilder &b, Location loc, const Piece &piece,
    function_ref<void(OpBuilder &, Location, Value)> body, bool full) const {
  if (!index)
    return tract::forEachTile(b, loc, piece, body);
  if (full)
    return tract::forEachTile(b, loc, piece, body, tilesOf(b, loc, piece));
  inLast(b, loc, [&](OpBuilder &nested, Location l) {
    tract::forEachTile(nested, l, piece, body);
  });
}
