//===- ArrayLowering.cpp - tract axis, shape, slicing and indexing ops ----===//
//
// Axis and shape ops become tensor reshapes, linalg.transpose and
// linalg.broadcast; slices, pads and concatenations the tensor ops of the
// same name; gathers a linalg.generic that reads its input with
// tensor.extract at coordinates computed from the index tensor. Every
// dynamic size is the run-time value of the result's symbolic dim.
//
// Indices read from run-time tensors wrap once when negative and are then
// clamped into the axis: an out-of-range index reads (or writes) the nearest
// element instead of memory outside the tensor.
//
//===----------------------------------------------------------------------===//

#include "conversion/LoweringUtils.h"

#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::tract;

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

RankedTensorType plainType(Type tractType) {
  return cast<RankedTensorType>(convertTractType(tractType));
}

/// `value` with `type`, through a tensor.cast when only static-ness differs.
Value castTo(OpBuilder &b, Location loc, Value value, Type type) {
  if (value.getType() == type)
    return value;
  return tensor::CastOp::create(b, loc, type, value);
}

/// The reassociation that folds the axes marked in `unit` (all of size 1)
/// into a neighbour: each kept axis heads a group that also takes the unit
/// axes after it; leading unit axes join the first group. Without any kept
/// axis the reassociation is empty (a rank-0 tensor).
SmallVector<ReassociationIndices> foldUnitAxes(ArrayRef<bool> unit) {
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices leading;
  for (auto [axis, isUnit] : llvm::enumerate(unit)) {
    int64_t index = axis;
    if (isUnit) {
      if (groups.empty())
        leading.push_back(index);
      else
        groups.back().push_back(index);
      continue;
    }
    groups.push_back(leading);
    groups.back().push_back(index);
    leading.clear();
  }
  return groups;
}

/// One group per axis of a tensor of rank `rank`, except the `count` axes
/// from `at`, which form one group.
SmallVector<ReassociationIndices> groupRun(int64_t rank, int64_t at,
                                           int64_t count) {
  SmallVector<ReassociationIndices> groups;
  for (int64_t axis = 0; axis < rank; ++axis) {
    if (axis > at && axis < at + count)
      groups.back().push_back(axis);
    else
      groups.push_back({axis});
  }
  return groups;
}

/// The groups of `many` (whole shape) whose products are the dims of `few`,
/// in order, when the reshape of the run [at, at + count) of `many` into
/// the run [at, at + newCount) of `few` merges consecutive dims only; each
/// dim outside the runs is its own group.
std::optional<SmallVector<ReassociationIndices>>
mergedGroups(ArrayRef<TDim> many, ArrayRef<TDim> few, int64_t at,
             int64_t count, int64_t newCount) {
  SmallVector<ReassociationIndices> groups;
  for (int64_t axis = 0; axis < at; ++axis)
    groups.push_back({axis});
  int64_t next = at;
  for (int64_t out = at; out < at + newCount; ++out) {
    ReassociationIndices group;
    TDim product(1);
    while (next < at + count && (group.empty() || product != few[out])) {
      product = product * many[next];
      group.push_back(next++);
    }
    if (group.empty() || product != few[out])
      return std::nullopt;
    groups.push_back(group);
  }
  if (next != at + count)
    return std::nullopt;
  for (int64_t axis = at + count; axis < int64_t(many.size()); ++axis)
    groups.push_back({axis});
  return groups;
}

/// collapse_shape of `value` by `groups`, with the plain type `resultType`.
Value collapse(OpBuilder &b, Location loc, Value value,
               ArrayRef<ReassociationIndices> groups,
               RankedTensorType resultType) {
  Value collapsed = tensor::CollapseShapeOp::create(b, loc, value, groups);
  return castTo(b, loc, collapsed, resultType);
}

/// expand_shape of `value` by `groups` into `resultType`, whose sizes are
/// `sizes`. The source is first cast to the static-ness the groups imply.
/// A dim split into several symbolic ones is a tensor.reshape to the sizes
/// instead: MLIR 22's expand-strided-metadata crashes on such an
/// expand_shape.
Value expand(OpBuilder &b, Location loc, Value value,
             ArrayRef<ReassociationIndices> groups, RankedTensorType resultType,
             ArrayRef<OpFoldResult> sizes) {
  bool severalSymbolic = llvm::any_of(groups, [&](const auto &group) {
    return llvm::count_if(group, [&](int64_t axis) {
             return resultType.isDynamicDim(axis);
           }) > 1;
  });
  if (severalSymbolic) {
    SmallVector<Value> dims;
    for (OpFoldResult size : sizes)
      dims.push_back(getValueOrCreateConstantIndexOp(b, loc, size));
    Value shape = tensor::FromElementsOp::create(b, loc, dims);
    return tensor::ReshapeOp::create(b, loc, resultType, value, shape);
  }
  auto sourceType = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> collapsedShape;
  for (const ReassociationIndices &group : groups) {
    int64_t product = 1;
    for (int64_t axis : group) {
      int64_t dim = resultType.getDimSize(axis);
      product = ShapedType::isDynamic(dim) || ShapedType::isDynamic(product)
                    ? ShapedType::kDynamic
                    : product * dim;
    }
    collapsedShape.push_back(product);
  }
  Value source = castTo(b, loc, value, sourceType.clone(collapsedShape));
  return tensor::ExpandShapeOp::create(b, loc, resultType, source, groups,
                                       sizes);
}

/// A scalar constant of the plain element type from a tract attribute (whose
/// integer type may be unsigned).
Value scalarConstant(OpBuilder &b, Location loc, TypedAttr attr) {
  Type type = convertElementType(attr.getType());
  if (auto integer = dyn_cast<IntegerAttr>(attr))
    return arith::ConstantOp::create(
        b, loc, type, IntegerAttr::get(type, integer.getValue()));
  return arith::ConstantOp::create(b, loc, type, attr);
}

/// The zero of a plain element type.
Value zeroOf(OpBuilder &b, Location loc, Type type) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, type,
                                     b.getFloatAttr(floatType, 0.0));
  return arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, 0));
}

Value indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

/// An integer index of a tract element type as an `index`.
Value toIndex(OpBuilder &b, Location loc, Value value, Type tractElement) {
  if (isUnsignedInteger(tractElement) || tractElement.isInteger(1))
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), value);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), value);
}

/// `value` clamped into [low, high].
Value clamp(OpBuilder &b, Location loc, Value value, Value low, Value high) {
  Value capped = arith::MinSIOp::create(b, loc, value, high);
  return arith::MaxSIOp::create(b, loc, capped, low);
}

/// A run-time index into an axis of size `dim`: negative ones count from the
/// end, and the result is clamped into [0, dim - 1] so that an out-of-range
/// index never addresses memory outside the tensor.
Value normalizeIndex(OpBuilder &b, Location loc, Value index, Value dim) {
  Value zero = indexConstant(b, loc, 0);
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index, zero);
  Value wrapped = arith::SelectOp::create(
      b, loc, negative, arith::AddIOp::create(b, loc, index, dim), index);
  Value last = arith::SubIOp::create(b, loc, dim, indexConstant(b, loc, 1));
  return clamp(b, loc, wrapped, zero, last);
}

/// Fails the run through the runtime (tract_fail), naming `op` and the
/// offending value, when an index of `indices` is outside [-dim, dim): one
/// min/max pass over the indices, before the op reads them (the op still
/// clamps, so a failing run never addresses memory outside its tensors).
/// `axisDims` holds the dim every index addresses, or with `perColumn`
/// the dim each entry of the last axis addresses (GatherND, ScatterND: the
/// k-th entry of a row indexes the k-th data axis from `firstAxis`).
void checkIndices(OpBuilder &b, Operation *op, Value indices,
                  Type indexElement, ArrayRef<Value> axisDims,
                  int64_t firstAxis, bool perColumn = false) {
  Location loc = op->getLoc();
  auto type = cast<RankedTensorType>(indices.getType());
  int64_t rank = type.getRank();
  // No index, nothing to check (an empty gather along an axis that may be
  // empty too: the bounds of an empty pass are not indices).
  if ((perColumn && rank == 0) || llvm::is_contained(type.getShape(), 0))
    return;
  Type i64 = b.getI64Type();
  SmallVector<int64_t> boundShape;
  if (perColumn)
    boundShape.push_back(int64_t(axisDims.size()));
  auto boundOf = [&](int64_t initial) {
    Value empty = tensor::EmptyOp::create(b, loc, boundShape, i64);
    Value value = arith::ConstantIntOp::create(b, loc, i64, initial);
    return linalg::FillOp::create(b, loc, value, empty).getResult(0);
  };
  Value lowest = boundOf(std::numeric_limits<int64_t>::max());
  Value highest = boundOf(std::numeric_limits<int64_t>::min());
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::reduction);
  SmallVector<AffineExpr> boundExprs;
  if (perColumn) {
    iterators.back() = utils::IteratorType::parallel;
    boundExprs.push_back(b.getAffineDimExpr(rank - 1));
  }
  AffineMap boundMap = AffineMap::get(rank, 0, boundExprs, b.getContext());
  auto pass = linalg::GenericOp::create(
      b, loc, TypeRange{lowest.getType(), highest.getType()}, indices,
      ValueRange{lowest, highest},
      {b.getMultiDimIdentityMap(rank), boundMap, boundMap}, iterators,
      [&](OpBuilder &nb, Location bodyLoc, ValueRange args) {
        Value index = arith::IndexCastOp::create(
            nb, bodyLoc, i64, toIndex(nb, bodyLoc, args[0], indexElement));
        linalg::YieldOp::create(
            nb, bodyLoc,
            ValueRange{arith::MinSIOp::create(nb, bodyLoc, index, args[1]),
                       arith::MaxSIOp::create(nb, bodyLoc, index, args[2])});
      });
  // Indices of a dynamic shape may be none at run time.
  Value some;
  for (int64_t axis = 0; axis < rank; ++axis) {
    if (!type.isDynamicDim(axis))
      continue;
    Value dim = tensor::DimOp::create(b, loc, indices, axis);
    Value positive = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::sgt, dim, indexConstant(b, loc, 0));
    some = some ? arith::AndIOp::create(b, loc, some, positive).getResult()
                : positive;
  }
  for (auto [k, dim] : llvm::enumerate(axisDims)) {
    SmallVector<Value> at;
    if (perColumn)
      at.push_back(indexConstant(b, loc, k));
    Value low = tensor::ExtractOp::create(b, loc, pass.getResult(0), at);
    Value high = tensor::ExtractOp::create(b, loc, pass.getResult(1), at);
    Value size = arith::IndexCastOp::create(b, loc, i64, dim);
    Value below = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::slt, low,
        arith::SubIOp::create(
            b, loc, arith::ConstantIntOp::create(b, loc, i64, 0), size));
    Value above =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, high, size);
    Value offending = arith::SelectOp::create(b, loc, below, low, high);
    Value wrong = arith::OrIOp::create(b, loc, below, above);
    if (some)
      wrong = arith::AndIOp::create(b, loc, some, wrong);
    auto report = scf::IfOp::create(b, loc, wrong, /*withElseRegion=*/false);
    OpBuilder reportBuilder = report.getThenBodyBuilder();
    callFail(reportBuilder, op,
             "'" + escapeFormat(nodeName(op)) + "' (" +
                 op->getName().getStringRef().str() +
                 "): index %lld is out of range for axis " +
                 std::to_string(firstAxis + (perColumn ? k : 0)) +
                 " of size %lld",
             {offending, size});
    b.setInsertionPointAfter(report);
  }
}

/// Whether a dim of `shape` is the constant 0. Slices of such tensors are
/// left out: the tensor and memref verifiers reject any static offset into an
/// empty axis, even for an empty slice.
bool isStaticallyEmpty(ArrayRef<TDim> shape) {
  return llvm::is_contained(shape, TDim(0));
}

/// The family's helpers over the base pattern's: empty results, slices
/// along one axis, and the lengths ops compute.
template <typename OpTy>
class ArrayLoweringPattern : public TractLoweringPattern<OpTy> {
public:
  using TractLoweringPattern<OpTy>::TractLoweringPattern;

  /// A tensor.empty of shape `dims`.
  static Value emptyOf(OpBuilder &b, Location loc, ArrayRef<TDim> dims,
                       Type elementType) {
    return emptyTensor(b, loc, getTensorType(b.getContext(), dims, elementType),
                       elementType);
  }

  /// A tensor.empty of the op's result `index`.
  static Value emptyResult(OpBuilder &b, Location loc, Operation *op,
                           unsigned index = 0) {
    return emptyTensor(b, loc, op->getResult(index).getType());
  }

  /// An extract_slice of one axis of `input` to the op's (single) result:
  /// from `offset`, with `stride`.
  FailureOr<Value> sliceAxis(OpBuilder &b, Location loc, Operation *op,
                             Value input, int64_t axis, OpFoldResult offset,
                             int64_t stride) const {
    Type resultType = op->getResult(0).getType();
    Shape outShape = getShape(resultType);
    FailureOr<SmallVector<OpFoldResult>> outputSizes =
        this->sizes(b, loc, outShape);
    if (failed(outputSizes))
      return failure();
    if (isStaticallyEmpty(outShape) ||
        isStaticallyEmpty(getShape(op->getOperand(0).getType())))
      return tensor::EmptyOp::create(b, loc, *outputSizes,
                                     plainType(resultType).getElementType())
          .getResult();
    SmallVector<OpFoldResult> offsets(outShape.size(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> strides(outShape.size(), b.getIndexAttr(1));
    offsets[axis] = offset;
    strides[axis] = b.getIndexAttr(stride);
    return tensor::ExtractSliceOp::create(b, loc, plainType(resultType), input,
                                          offsets, *outputSizes, strides)
        .getResult();
  }

  /// The value of `len`, the length of `op`'s result that the op computes
  /// (its `len` attribute): the symbol's value when it is already bound (a
  /// size given with --set), else what `compute` builds, which then binds
  /// it. Null, with an error naming the op as `what`, when `len` is neither
  /// bound nor a lone symbol.
  Value boundLength(OpBuilder &b, Location loc, Operation *op, StringRef what,
                    const TDim &len, function_ref<Value()> compute) const {
    if (Value value = materializeDim(b, loc, len))
      return value;
    std::optional<std::string> name = getComputedSymbol(op);
    if (!name) {
      op->emitError() << "cannot lower a " << what << " of length "
                      << len.toString()
                      << ": it is neither bound nor a lone symbol";
      return {};
    }
    Value value = compute();
    bindSymbol(b, loc, *name, value);
    return value;
  }

  LogicalResult unboundSize(ConversionPatternRewriter &rewriter,
                            Operation *op) const {
    return rewriter.notifyMatchFailure(op, "a size has an unbound symbol");
  }
};

/// The loop indices of the enclosing linalg.generic, `from` to `to`.
SmallVector<Value> loopIndices(OpBuilder &b, Location loc, int64_t from,
                               int64_t to) {
  SmallVector<Value> indices;
  for (int64_t dim = from; dim < to; ++dim)
    indices.push_back(linalg::IndexOp::create(b, loc, dim));
  return indices;
}

//===----------------------------------------------------------------------===//
// Axis ops
//===----------------------------------------------------------------------===//

struct AddAxisLowering : public ArrayLoweringPattern<AddAxisOp> {
  using ArrayLoweringPattern::ArrayLoweringPattern;
  LogicalResult lower(AddAxisOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Shape shape = getShape(op.getType());
    FailureOr<SmallVector<OpFoldResult>> outputSizes =
        sizes(rewriter, loc, shape);
    if (failed(outputSizes))
      return unboundSize(rewriter, op);
    SmallVector<bool> unit(shape.size(), false);
    unit[op.getAxis()] = true;
    rewriter.replaceOp(op, expand(rewriter, loc, adaptor.getInput(),
                                  foldUnitAxes(unit), plainType(op.getType()),
                                  *outputSizes));
    return success();
  }
};

struct RmAxisLowering : public ArrayLoweringPattern<RmAxisOp> {
  using ArrayLoweringPattern::ArrayLoweringPattern;
  LogicalResult lower(RmAxisOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    SmallVector<bool> unit(getShape(op.getInput()).size(), false);
    unit[op.getAxis()] = true;
    rewriter.replaceOp(op,
                       collapse(rewriter, op.getLoc(), adaptor.getInput(),
                                foldUnitAxes(unit), plainType(op.getType())));
    return success();
  }
};

/// A move is a permutation: the linalg.transpose whose result axis i reads
/// input axis permutation[i].
struct MoveAxisLowering : public ArrayLoweringPattern<MoveAxisOp> {
  using ArrayLoweringPattern::ArrayLoweringPattern;
  LogicalResult lower(MoveAxisOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    int64_t from = op.getFrom(), to = op.getTo();
    if (from == to) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    SmallVector<int64_t> permutation =
        llvm::to_vector(llvm::seq<int64_t>(0, getShape(op.getType()).size()));
    permutation.erase(permutation.begin() + from);
    permutation.insert(permutation.begin() + to, from);
    Value init = emptyResult(rewriter, op.getLoc(), op);
    if (!init)
      return unboundSize(rewriter, op);
    rewriter.replaceOp(op, linalg::TransposeOp::create(rewriter, op.getLoc(),
                                                       adaptor.getInput(), init,
                                                       permutation)
                               .getResult());
    return success();
  }
};

/// The replaced run collapses to one axis that expands to the new dims;
/// runs of unit dims fold into a neighbour.
struct ReshapeLowering : public ArrayLoweringPattern<ReshapeOp> {
  using ArrayLoweringPattern::ArrayLoweringPattern;
  LogicalResult lower(ReshapeOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = plainType(op.getType());
    Value input = adaptor.getInput();
    Shape inShape = getShape(op.getInput());
    Shape outShape = getShape(op.getType());
    int64_t at = op.getAt(), count = op.getCount();
    int64_t newCount = op.getTo().getDims().size();
    FailureOr<SmallVector<OpFoldResult>> outputSizes =
        sizes(rewriter, loc, outShape);
    if (failed(outputSizes))
      return unboundSize(rewriter, op);
    Value result;
    if (count == newCount && inShape == outShape) {
      result = castTo(rewriter, loc, input, resultType);
    } else if (count == 0) {
      // Only unit dims are inserted.
      SmallVector<bool> unit(outShape.size(), false);
      for (int64_t axis = at; axis < at + newCount; ++axis)
        unit[axis] = true;
      result = expand(rewriter, loc, input, foldUnitAxes(unit), resultType,
                      *outputSizes);
    } else if (newCount == 0) {
      // Only unit dims are removed.
      SmallVector<bool> unit(inShape.size(), false);
      for (int64_t axis = at; axis < at + count; ++axis)
        unit[axis] = true;
      result = collapse(rewriter, loc, input, foldUnitAxes(unit), resultType);
    } else if (auto groups = mergedGroups(inShape, outShape, at, count,
                                          newCount)) {
      // Runs of dims merged: one collapse (also of symbolic dims, where a
      // collapse to one dim and an expand back fails downstream).
      result = collapse(rewriter, loc, input, *groups, resultType);
    } else if (auto groups = mergedGroups(outShape, inShape, at, newCount,
                                          count)) {
      // Dims split into runs: one expand.
      result = expand(rewriter, loc, input, *groups, resultType,
                      *outputSizes);
    } else {
      result = input;
      if (count > 1) {
        Shape collapsedShape(inShape.begin(), inShape.begin() + at);
        collapsedShape.push_back(
            volume(ArrayRef<TDim>(inShape).slice(at, count)));
        collapsedShape.append(inShape.begin() + at + count, inShape.end());
        result = collapse(
            rewriter, loc, result, groupRun(inShape.size(), at, count),
            plainType(getTensorTypeLike(op.getInput(), collapsedShape)));
      }
      if (newCount > 1)
        result = expand(rewriter, loc, result,
                        groupRun(outShape.size(), at, newCount), resultType,
                        *outputSizes);
      result = castTo(rewriter, loc, result, resultType);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The unit axes that grow are collapsed away, then linalg.broadcast adds
/// them back at their full size.
struct BroadcastLowering : public ArrayLoweringPattern<BroadcastOp> {
  using ArrayLoweringPattern::ArrayLoweringPattern;
  LogicalResult lower(BroadcastOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Shape inShape = getShape(op.getInput());
    ArrayRef<TDim> target = op.getShape().getDims();
    RankedTensorType resultType = plainType(op.getType());
    SmallVector<bool> grows;
    SmallVector<int64_t> addedAxes;
    Shape kept;
    for (auto [axis, dims] : llvm::enumerate(llvm::zip(inShape, target))) {
      auto [from, to] = dims;
      bool grow = from != to;
      grows.push_back(grow);
      if (grow)
        addedAxes.push_back(axis);
      else
        kept.push_back(from);
    }
    if (addedAxes.empty()) {
      rewriter.replaceOp(op,
                         castTo(rewriter, loc, adaptor.getInput(), resultType));
      return success();
    }
    Value init = emptyResult(rewriter, loc, op);
    if (!init)
      return unboundSize(rewriter, op);
    Value collapsed =
        collapse(rewriter, loc, adaptor.getInput(), foldUnitAxes(grows),
                 plainType(getTensorTypeLike(op.getInput(), kept)));
    rewriter.replaceOp(op, linalg::BroadcastOp::create(rewriter, loc, collapsed,
                                                       init, addedAxes)
                               .getResults());
    return success();
  }
};

/// Tiling is a broadcast to (m0, d0, m1, d1, ...) that collapses each pair:
/// row-major order makes the copies follow each other.
struct TileLowering : public ArrayLoweringPattern<TileOp> {
  using ArrayLoweringPattern::ArrayLoweringPattern;
  LogicalResult lower(TileOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Shape inShape = getShape(op.getInput());
    ArrayRef<TDim> multipliers = op.getMultipliers().getDims();
    RankedTensorType resultType = plainType(op.getType());
    Shape spread;
    SmallVector<int64_t> addedAxes;
    SmallVector<ReassociationIndices> groups;
    for (auto [dim, multiplier] : llvm::zip(inShape, multipliers)) {
      ReassociationIndices group;
      if (multiplier != TDim(1)) {
        addedAxes.push_back(spread.size());
        group.push_back(spread.size());
        spread.push_back(multiplier);
      }
      group.push_back(spread.size());
      spread.push_back(dim);
      groups.push_back(group);
    }
    if (addedAxes.empty()) {
      rewriter.replaceOp(op,
                         castTo(rewriter, loc, adaptor.getInput(), resultType));
      return success();
    }
    Value init = emptyOf(rewriter, loc, spread, resultType.getElementType());
    if (!init)
      return unboundSize(rewriter, op);
    Value spreadValue = linalg::BroadcastOp::create(
                            rewriter, loc, adaptor.getInput(), init, addedAxes)
                            .getResult()[0];
    rewriter.replaceOp(
        op, collapse(rewriter, loc, spreadValue, groups, resultType));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Slicing, padding, concatenation
//===----------------------------------------------------------------------===//

struct SliceLowering : public ArrayLoweringPattern<SliceOp> {
  using ArrayLoweringPattern::ArrayLoweringPattern;
  LogicalResult lower(SliceOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    FailureOr<OpFoldResult> start =
        size(rewriter, loc, op.getStart().getValue());
    if (failed(start))
      return unboundSize(rewriter, op);
    FailureOr<Value> slice = sliceAxis(rewriter, loc, op, adaptor.getInput(),
                                       op.getAxis(), *start, /*stride=*/1);
    if (failed(slice))
      return unboundSize(rewriter, op);
    rewriter.replaceOp(op, *slice);
    return success();
  }
};

struct DownsampleLowering : public ArrayLoweringPattern<DownsampleOp> {
  using ArrayLoweringPattern::ArrayLoweringPattern;
  LogicalResult lower(DownsampleOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    FailureOr<Value> slice =
        sliceAxis(rewriter, op.getLoc(), op, adaptor.getInput(), op.getAxis(),
                  rewriter.getIndexAttr(op.getModulo()), op.getStride());
    if (failed(slice))
      return unboundSize(rewriter, op);
    rewriter.replaceOp(op, *slice);
    return success();
  }
};

/// Constant padding is a tensor.pad; edge and reflect padding read the input
/// at a coordinate folded back into each axis.
struct PadLowering : public ArrayLoweringPattern<PadOp> {
  using ArrayLoweringPattern::ArrayLoweringPattern;
  LogicalResult lower(PadOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = plainType(op.getType());
    Type elementType = resultType.getElementType();
    ArrayRef<int64_t> before = op.getBefore(), after = op.getAfter();
    bool constant = op.getMode() == PadMode::Constant;
    Value fill = constant && op.getValue()
                     ? scalarConstant(rewriter, loc, *op.getValue())
                     : zeroOf(rewriter, loc, elementType);
    if (isStaticallyEmpty(getShape(op.getInput()))) {
      // All border: edge and reflect have nothing to repeat and give zeros.
      Value init = emptyResult(rewriter, loc, op);
      if (!init)
        return unboundSize(rewriter, op);
      rewriter.replaceOp(
          op, linalg::FillOp::create(rewriter, loc, fill, init).getResult(0));
      return success();
    }
    if (constant) {
      auto attrs = [&](ArrayRef<int64_t> pads) {
        return llvm::map_to_vector(pads, [&](int64_t pad) -> OpFoldResult {
          return rewriter.getIndexAttr(pad);
        });
      };
      rewriter.replaceOp(op, tensor::PadOp::create(
                                 rewriter, loc, resultType, adaptor.getInput(),
                                 attrs(before), attrs(after), fill)
                                 .getResult());
      return success();
    }
    Shape inShape = getShape(op.getInput());
    SmallVector<Value> dims;
    for (const TDim &dim : inShape) {
      dims.push_back(materializeDim(rewriter, loc, dim));
      if (!dims.back())
        return unboundSize(rewriter, op);
    }
    Value init = emptyResult(rewriter, loc, op);
    if (!init)
      return unboundSize(rewriter, op);
    bool reflect = op.getMode() == PadMode::Reflect;
    Value input = adaptor.getInput();
    Value result = buildGeneric(
        rewriter, loc, init, {}, {},
        [&](OpBuilder &b, Location bodyLoc, ValueRange) -> Value {
          SmallVector<Value> coords;
          Value zero = indexConstant(b, bodyLoc, 0);
          Value one = indexConstant(b, bodyLoc, 1);
          for (auto [axis, dim] : llvm::enumerate(dims)) {
            Value i = linalg::IndexOp::create(b, bodyLoc, axis);
            if (before[axis] == 0 && after[axis] == 0) {
              coords.push_back(i);
              continue;
            }
            i = arith::SubIOp::create(b, bodyLoc, i,
                                      indexConstant(b, bodyLoc, before[axis]));
            Value last = arith::SubIOp::create(b, bodyLoc, dim, one);
            if (reflect) {
              // -i before the start, 2 * last - i past the end; a pad longer
              // than the axis (reflected more than once) ends up clamped.
              Value negated = arith::SubIOp::create(b, bodyLoc, zero, i);
              Value isBefore = arith::CmpIOp::create(
                  b, bodyLoc, arith::CmpIPredicate::slt, i, zero);
              i = arith::SelectOp::create(b, bodyLoc, isBefore, negated, i);
              Value mirrored = arith::SubIOp::create(
                  b, bodyLoc, arith::AddIOp::create(b, bodyLoc, last, last), i);
              Value isAfter = arith::CmpIOp::create(
                  b, bodyLoc, arith::CmpIPredicate::sgt, i, last);
              i = arith::SelectOp::create(b, bodyLoc, isAfter, mirrored, i);
            }
            coords.push_back(clamp(b, bodyLoc, i, zero, last));
          }
          return tensor::ExtractOp::create(b, bodyLoc, input, coords);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ConcatLowering : public ArrayLoweringPattern<ConcatOp> {
  using ArrayLoweringPattern::ArrayLoweringPattern;
  LogicalResult lower(ConcatOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = plainType(op.getType());
    int64_t axis = op.getAxis();
    // Inputs empty along the axis add nothing.
    SmallVector<Value> inputs;
    for (auto [input, original] :
         llvm::zip(adaptor.getInputs(), op.getInputs()))
      if (getShape(original)[axis] != TDim(0))
        inputs.push_back(input);
    Value result;
    if (inputs.empty() || isStaticallyEmpty(getShape(op.getType()))) {
      result = emptyResult(rewriter, loc, op);
      if (!result)
        return unboundSize(rewriter, op);
    } else if (inputs.size() == 1) {
      result = inputs.front();
    } else {
      result = tensor::ConcatOp::create(rewriter, loc, axis, inputs);
    }
    rewriter.replaceOp(op, castTo(rewriter, loc, result, resultType));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Gathers
//===----------------------------------------------------------------------===//

/// A linalg.generic over the result reads the index tensor through its
/// indexing map and the input with tensor.extract.
struct GatherLowering : public ArrayLoweringPattern<GatherOp> {
  using ArrayLoweringPattern::ArrayLoweringPattern;
  LogicalResult lower(GatherOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t axis = op.getAxis();
    int64_t rank = getShape(op.getType()).size();
    int64_t indicesRank = getShape(op.getIndices()).size();
    Type indexElement = getElementTypeOrSelf(op.getIndices().getType());
    Value dim = materializeDim(rewriter, loc, getShape(op.getInput())[axis]);
    Value init = emptyResult(rewriter, loc, op);
    if (!dim || !init)
      return unboundSize(rewriter, op);
    SmallVector<AffineExpr> indicesExprs;
    for (int64_t i = 0; i < indicesRank; ++i)
      indicesExprs.push_back(rewriter.getAffineDimExpr(axis + i));
    AffineMap indicesMap =
        AffineMap::get(rank, 0, indicesExprs, rewriter.getContext());
    Value input = adaptor.getInput();
    checkIndices(rewriter, op, adaptor.getIndices(), indexElement, dim, axis);
    Value result = buildGeneric(
        rewriter, loc, init, adaptor.getIndices(), indicesMap,
        [&](OpBuilder &b, Location bodyLoc, ValueRange args) -> Value {
          Value index = normalizeIndex(
              b, bodyLoc, toIndex(b, bodyLoc, args[0], indexElement), dim);
          SmallVector<Value> coords = loopIndices(b, bodyLoc, 0, axis);
          coords.push_back(index);
          llvm::append_range(coords,
                             loopIndices(b, bodyLoc, axis + indicesRank, rank));
          return tensor::ExtractOp::create(b, bodyLoc, input, coords);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct GatherElementsLowering : public ArrayLoweringPattern<GatherElementsOp> {
  using ArrayLoweringPattern::ArrayLoweringPattern;
  LogicalResult lower(GatherElementsOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t axis = op.getAxis();
    int64_t rank = getShape(op.getType()).size();
    Type indexElement = getElementTypeOrSelf(op.getIndices().getType());
    Value dim = materializeDim(rewriter, loc, getShape(op.getInput())[axis]);
    Value init = emptyResult(rewriter, loc, op);
    if (!dim || !init)
      return unboundSize(rewriter, op);
    Value input = adaptor.getInput();
    checkIndices(rewriter, op, adaptor.getIndices(), indexElement, dim, axis);
    Value result = buildGeneric(
        rewriter, loc, init, adaptor.getIndices(),
        rewriter.getMultiDimIdentityMap(rank),
        [&](OpBuilder &b, Location bodyLoc, ValueRange args) -> Value {
          SmallVector<Value> coords = loopIndices(b, bodyLoc, 0, rank);
          coords[axis] = normalizeIndex(
              b, bodyLoc, toIndex(b, bodyLoc, args[0], indexElement), dim);
          return tensor::ExtractOp::create(b, bodyLoc, input, coords);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Result coordinates are (batch, index rows, tail); the n indices of a row
/// are read with tensor.extract and address axes batch_dims.. of the input.
struct GatherNdLowering : public ArrayLoweringPattern<GatherNdOp> {
  using ArrayLoweringPattern::ArrayLoweringPattern;
  LogicalResult lower(GatherNdOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Shape inShape = getShape(op.getInput());
    Shape indicesShape = getShape(op.getIndices());
    int64_t batchDims = op.getBatchDims();
    int64_t rows = indicesShape.size() - 1;
    int64_t n = *indicesShape.back().getConstant();
    int64_t rank = getShape(op.getType()).size();
    Type indexElement = getElementTypeOrSelf(op.getIndices().getType());
    SmallVector<Value> dims;
    for (int64_t k = 0; k < n; ++k) {
      dims.push_back(materializeDim(rewriter, loc, inShape[batchDims + k]));
      if (!dims.back())
        return unboundSize(rewriter, op);
    }
    Value init = emptyResult(rewriter, loc, op);
    if (!init)
      return unboundSize(rewriter, op);
    Value input = adaptor.getInput(), indices = adaptor.getIndices();
    checkIndices(rewriter, op, indices, indexElement, dims, batchDims,
                 /*perColumn=*/true);
    Value result = buildGeneric(
        rewriter, loc, init, {}, {},
        [&](OpBuilder &b, Location bodyLoc, ValueRange) -> Value {
          SmallVector<Value> row = loopIndices(b, bodyLoc, 0, rows);
          SmallVector<Value> coords(row.begin(), row.begin() + batchDims);
          row.push_back(Value());
          for (int64_t k = 0; k < n; ++k) {
            row.back() = indexConstant(b, bodyLoc, k);
            Value index = tensor::ExtractOp::create(b, bodyLoc, indices, row);
            coords.push_back(normalizeIndex(
                b, bodyLoc, toIndex(b, bodyLoc, index, indexElement), dims[k]));
          }
          llvm::append_range(coords, loopIndices(b, bodyLoc, rows, rank));
          return tensor::ExtractOp::create(b, bodyLoc, input, coords);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Run-time slices
//===----------------------------------------------------------------------===//

/// The start is clamped into the axis. When the length is a symbol that only
/// this op determines, it is computed here, `clamp(end, start, dim) - start`,
/// and bound for the ops that follow; otherwise the start is also kept low
/// enough for the slice to end within the axis.
struct DynSliceLowering : public ArrayLoweringPattern<DynSliceOp> {
  using ArrayLoweringPattern::ArrayLoweringPattern;
  LogicalResult lower(DynSliceOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t axis = op.getAxis();
    Value dim = materializeDim(rewriter, loc, getShape(op.getInput())[axis]);
    if (!dim)
      return unboundSize(rewriter, op);
    Value zero = indexConstant(rewriter, loc, 0);
    Value start =
        toIndex(rewriter, loc, extractScalar(rewriter, loc, adaptor.getStart()),
                getElementTypeOrSelf(op.getStart().getType()));
    start = clamp(rewriter, loc, start, zero, dim);
    TDim len = op.getLen().getValue();
    Value length = materializeDim(rewriter, loc, len);
    if (length) {
      Value room = arith::SubIOp::create(rewriter, loc, dim, length);
      start = clamp(rewriter, loc, start, zero, room);
    } else if (std::optional<std::string> name = getComputedSymbol(op)) {
      Value end =
          toIndex(rewriter, loc, extractScalar(rewriter, loc, adaptor.getEnd()),
                  getElementTypeOrSelf(op.getEnd().getType()));
      end = clamp(rewriter, loc, end, start, dim);
      length = arith::SubIOp::create(rewriter, loc, end, start);
      bindSymbol(rewriter, loc, *name, length);
    } else {
      return op.emitError()
             << "cannot lower a dyn_slice of length " << len.toString()
             << ": it is neither bound nor a lone symbol";
    }
    FailureOr<Value> slice =
        sliceAxis(rewriter, loc, op, adaptor.getInput(), axis, start, 1);
    if (failed(slice))
      return unboundSize(rewriter, op);
    rewriter.replaceOp(op, *slice);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Scatters
//===----------------------------------------------------------------------===//

/// How a scattered update combines with the element it lands on.
Value combineScatter(OpBuilder &b, Location loc, ScatterReduction reduction,
                     Value old, Value update, Type tractElement) {
  bool isFloat = isa<FloatType>(tractElement);
  bool isBool = tractElement.isInteger(1);
  bool isUnsigned = isUnsignedInteger(tractElement);
  switch (reduction) {
  case ScatterReduction::None:
    return update;
  case ScatterReduction::Add:
    if (isFloat)
      return arith::AddFOp::create(b, loc, old, update);
    if (isBool)
      return arith::OrIOp::create(b, loc, old, update);
    return arith::AddIOp::create(b, loc, old, update);
  case ScatterReduction::Mul:
    if (isFloat)
      return arith::MulFOp::create(b, loc, old, update);
    if (isBool)
      return arith::AndIOp::create(b, loc, old, update);
    return arith::MulIOp::create(b, loc, old, update);
  case ScatterReduction::Min:
    if (isFloat)
      return arith::MinimumFOp::create(b, loc, old, update);
    if (isBool || isUnsigned)
      return arith::MinUIOp::create(b, loc, old, update);
    return arith::MinSIOp::create(b, loc, old, update);
  case ScatterReduction::Max:
    if (isFloat)
      return arith::MaximumFOp::create(b, loc, old, update);
    if (isBool || isUnsigned)
      return arith::MaxUIOp::create(b, loc, old, update);
    return arith::MaxSIOp::create(b, loc, old, update);
  }
  llvm_unreachable("unknown scatter reduction");
}

/// Updates are applied one after the other, in row-major order of the
/// updates, by a loop nest that carries the result tensor.
template <typename OpTy>
struct ScatterLoweringBase : public ArrayLoweringPattern<OpTy> {
  using ArrayLoweringPattern<OpTy>::ArrayLoweringPattern;

  /// The data coordinates of the update at `ivs`.
  virtual SmallVector<Value> dataCoords(OpBuilder &b, Location loc, OpTy op,
                                        Value indices, ValueRange ivs,
                                        ArrayRef<Value> dataDims) const = 0;

  LogicalResult lower(OpTy op, typename OpTy::Adaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Value> dataDims, updateDims;
    for (const TDim &dim : getShape(op.getData())) {
      dataDims.push_back(materializeDim(rewriter, loc, dim));
      if (!dataDims.back())
        return this->unboundSize(rewriter, op);
    }
    for (const TDim &dim : getShape(op.getUpdates())) {
      updateDims.push_back(materializeDim(rewriter, loc, dim));
      if (!updateDims.back())
        return this->unboundSize(rewriter, op);
    }
    Type element = getElementTypeOrSelf(op.getData().getType());
    ScatterReduction reduction = op.getReduction();
    Value indices = adaptor.getIndices(), updates = adaptor.getUpdates();
    Type indexElement = getElementTypeOrSelf(op.getIndices().getType());
    if constexpr (std::is_same_v<OpTy, ScatterNdOp>) {
      int64_t n = *getShape(op.getIndices()).back().getConstant();
      checkIndices(rewriter, op, indices, indexElement,
                   ArrayRef(dataDims).take_front(n), 0, /*perColumn=*/true);
    } else {
      int64_t axis = op.getAxis();
      checkIndices(rewriter, op, indices, indexElement, dataDims[axis], axis);
    }
    SmallVector<Value> lbs(updateDims.size(), indexConstant(rewriter, loc, 0));
    SmallVector<Value> steps(updateDims.size(),
                             indexConstant(rewriter, loc, 1));
    scf::LoopNest nest = scf::buildLoopNest(
        rewriter, loc, lbs, updateDims, steps, adaptor.getData(),
        [&](OpBuilder &b, Location bodyLoc, ValueRange ivs,
            ValueRange carried) -> scf::ValueVector {
          SmallVector<Value> coords =
              dataCoords(b, bodyLoc, op, indices, ivs, dataDims);
          Value update = tensor::ExtractOp::create(b, bodyLoc, updates, ivs);
          if (reduction != ScatterReduction::None) {
            Value old =
                tensor::ExtractOp::create(b, bodyLoc, carried[0], coords);
            update =
                combineScatter(b, bodyLoc, reduction, old, update, element);
          }
          return {
              tensor::InsertOp::create(b, bodyLoc, update, carried[0], coords)};
        });
    rewriter.replaceOp(op, nest.results);
    return success();
  }
};

struct ScatterElementsLowering : public ScatterLoweringBase<ScatterElementsOp> {
  using ScatterLoweringBase::ScatterLoweringBase;
  SmallVector<Value> dataCoords(OpBuilder &b, Location loc,
                                ScatterElementsOp op, Value indices,
                                ValueRange ivs,
                                ArrayRef<Value> dataDims) const override {
    int64_t axis = op.getAxis();
    Value index = tensor::ExtractOp::create(b, loc, indices, ivs);
    SmallVector<Value> coords(ivs);
    coords[axis] = normalizeIndex(
        b, loc,
        toIndex(b, loc, index, getElementTypeOrSelf(op.getIndices().getType())),
        dataDims[axis]);
    return coords;
  }
};

struct ScatterNdLowering : public ScatterLoweringBase<ScatterNdOp> {
  using ScatterLoweringBase::ScatterLoweringBase;
  SmallVector<Value> dataCoords(OpBuilder &b, Location loc, ScatterNdOp op,
                                Value indices, ValueRange ivs,
                                ArrayRef<Value> dataDims) const override {
    Shape indicesShape = getShape(op.getIndices());
    int64_t rows = indicesShape.size() - 1;
    int64_t n = *indicesShape.back().getConstant();
    Type indexElement = getElementTypeOrSelf(op.getIndices().getType());
    SmallVector<Value> row(ivs.take_front(rows));
    row.push_back(Value());
    SmallVector<Value> coords;
    for (int64_t k = 0; k < n; ++k) {
      row.back() = indexConstant(b, loc, k);
      Value index = tensor::ExtractOp::create(b, loc, indices, row);
      coords.push_back(normalizeIndex(
          b, loc, toIndex(b, loc, index, indexElement), dataDims[k]));
    }
    llvm::append_range(coords, ivs.drop_front(rows));
    return coords;
  }
};

//===----------------------------------------------------------------------===//
// Generators and selections
//===----------------------------------------------------------------------===//

/// Negative indices count from the end; an index out of range matches no
/// position, so its row is all `off`, as in the folder.
struct OneHotLowering : public ArrayLoweringPattern<OneHotOp> {
  using ArrayLoweringPattern::ArrayLoweringPattern;
  LogicalResult lower(OneHotOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t axis = op.getAxis();
    int64_t rank = getShape(op.getType()).size();
    Type indexElement = getElementTypeOrSelf(op.getIndices().getType());
    Value init = emptyResult(rewriter, loc, op);
    if (!init)
      return unboundSize(rewriter, op);
    SmallVector<AffineExpr> exprs;
    for (int64_t dim = 0; dim < rank; ++dim)
      if (dim != axis)
        exprs.push_back(rewriter.getAffineDimExpr(dim));
    AffineMap indicesMap =
        AffineMap::get(rank, 0, exprs, rewriter.getContext());
    Value on = scalarConstant(rewriter, loc, op.getOn());
    Value off = scalarConstant(rewriter, loc, op.getOff());
    Value depth = indexConstant(rewriter, loc, op.getDim());
    Value result = buildGeneric(
        rewriter, loc, init, adaptor.getIndices(), indicesMap,
        [&](OpBuilder &b, Location bodyLoc, ValueRange args) -> Value {
          Value index = toIndex(b, bodyLoc, args[0], indexElement);
          Value zero = indexConstant(b, bodyLoc, 0);
          Value negative = arith::CmpIOp::create(
              b, bodyLoc, arith::CmpIPredicate::slt, index, zero);
          index = arith::SelectOp::create(
              b, bodyLoc, negative,
              arith::AddIOp::create(b, bodyLoc, index, depth), index);
          Value position = linalg::IndexOp::create(b, bodyLoc, axis);
          Value hot = arith::CmpIOp::create(
              b, bodyLoc, arith::CmpIPredicate::eq, index, position);
          return arith::SelectOp::create(b, bodyLoc, hot, on, off);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Elements with `col < row + k` (upper) or `col > row + k` (lower) of the
/// last two axes become zero.
struct TriluLowering : public ArrayLoweringPattern<TriluOp> {
  using ArrayLoweringPattern::ArrayLoweringPattern;
  LogicalResult lower(TriluOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t rank = getShape(op.getType()).size();
    Value init = emptyResult(rewriter, loc, op);
    if (!init)
      return unboundSize(rewriter, op);
    Value k =
        toIndex(rewriter, loc, extractScalar(rewriter, loc, adaptor.getK()),
                getElementTypeOrSelf(op.getK().getType()));
    bool upper = op.getUpper();
    Value result = buildGeneric(
        rewriter, loc, init, adaptor.getInput(),
        rewriter.getMultiDimIdentityMap(rank),
        [&](OpBuilder &b, Location bodyLoc, ValueRange args) -> Value {
          Value row = linalg::IndexOp::create(b, bodyLoc, rank - 2);
          Value col = linalg::IndexOp::create(b, bodyLoc, rank - 1);
          Value diagonal = arith::AddIOp::create(b, bodyLoc, row, k);
          Value keep = arith::CmpIOp::create(b, bodyLoc,
                                             upper ? arith::CmpIPredicate::sge
                                                   : arith::CmpIPredicate::sle,
                                             col, diagonal);
          return arith::SelectOp::create(b, bodyLoc, keep, args[0],
                                         zeroOf(b, bodyLoc, args[0].getType()));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// `start + i * step`, computed in the element type as the folder does.
/// When the length is a symbol only this op determines, it is computed here:
/// `max(ceil((end - start) / step), 0)` (0 for a zero step).
struct RangeLowering : public ArrayLoweringPattern<RangeOp> {
  using ArrayLoweringPattern::ArrayLoweringPattern;

  static Value computeLength(OpBuilder &b, Location loc, Value start, Value end,
                             Value step, Type tractElement) {
    Type i64 = b.getI64Type();
    Value zero = arith::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(0));
    Value count;
    if (isa<FloatType>(tractElement)) {
      Type f64 = b.getF64Type();
      auto widen = [&](Value v) -> Value {
        return v.getType() == f64 ? v : arith::ExtFOp::create(b, loc, f64, v);
      };
      Value span = arith::SubFOp::create(b, loc, widen(end), widen(start));
      Value steps = math::CeilOp::create(
          b, loc, arith::DivFOp::create(b, loc, span, widen(step)));
      // NaN, negative and zero-step infinite counts are empty ranges.
      Value limit = arith::ConstantOp::create(
          b, loc, f64,
          b.getF64FloatAttr(static_cast<double>(int64_t(1) << 62)));
      Value positive = arith::CmpFOp::create(
          b, loc, arith::CmpFPredicate::OGT, steps,
          arith::ConstantOp::create(b, loc, f64, b.getF64FloatAttr(0.0)));
      Value finite = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                           steps, limit);
      Value valid = arith::AndIOp::create(b, loc, positive, finite);
      Value safe = arith::SelectOp::create(
          b, loc, valid, steps,
          arith::ConstantOp::create(b, loc, f64, b.getF64FloatAttr(0.0)));
      count = arith::FPToSIOp::create(b, loc, i64, safe);
    } else {
      bool isUnsigned = isUnsignedInteger(tractElement);
      auto widen = [&](Value v) -> Value {
        if (v.getType() == i64)
          return v;
        if (isUnsigned)
          return arith::ExtUIOp::create(b, loc, i64, v);
        return arith::ExtSIOp::create(b, loc, i64, v);
      };
      Value first = widen(start), last = widen(end), delta = widen(step);
      Value zeroStep =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, delta, zero);
      Value divisor = arith::SelectOp::create(
          b, loc, zeroStep,
          arith::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(1)),
          delta);
      if (isUnsigned) {
        Value ahead = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                            last, first);
        Value span = arith::SubIOp::create(b, loc, last, first);
        count = arith::CeilDivUIOp::create(b, loc, span, divisor);
        count = arith::SelectOp::create(b, loc, ahead, count, zero);
      } else {
        Value span = arith::SubIOp::create(b, loc, last, first);
        count = arith::CeilDivSIOp::create(b, loc, span, divisor);
        count = arith::MaxSIOp::create(b, loc, count, zero);
      }
      count = arith::SelectOp::create(b, loc, zeroStep, zero, count);
    }
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), count);
  }

  LogicalResult lower(RangeOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type tractElement = getElementTypeOrSelf(op.getStart().getType());
    if (tractElement.isInteger(1))
      return op.emitError() << "cannot lower a range of booleans";
    Value start = extractScalar(rewriter, loc, adaptor.getStart());
    Value end = extractScalar(rewriter, loc, adaptor.getEnd());
    Value step = extractScalar(rewriter, loc, adaptor.getStep());
    if (!boundLength(rewriter, loc, op, "range", op.getLen().getValue(), [&] {
          return computeLength(rewriter, loc, start, end, step, tractElement);
        }))
      return failure();
    Value init = emptyResult(rewriter, loc, op);
    if (!init)
      return unboundSize(rewriter, op);
    Value result = buildGeneric(
        rewriter, loc, init, {}, {},
        [&](OpBuilder &b, Location bodyLoc, ValueRange) -> Value {
          Value i = linalg::IndexOp::create(b, bodyLoc, 0);
          Type type = start.getType();
          if (isa<FloatType>(type)) {
            Value count = arith::UIToFPOp::create(
                b, bodyLoc, type,
                arith::IndexCastUIOp::create(b, bodyLoc, b.getI64Type(), i));
            return arith::AddFOp::create(
                b, bodyLoc, start,
                arith::MulFOp::create(b, bodyLoc, count, step));
          }
          Value count = arith::IndexCastOp::create(b, bodyLoc, type, i);
          return arith::AddIOp::create(
              b, bodyLoc, start,
              arith::MulIOp::create(b, bodyLoc, count, step));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The dims' run-time values, as i64, in a tensor.from_elements: of the
/// input's type for shape_of, of the attribute for shape_value.
template <typename OpTy>
struct ShapeValuesLowering : public ArrayLoweringPattern<OpTy> {
  using ArrayLoweringPattern<OpTy>::ArrayLoweringPattern;
  using OpAdaptor = typename OpTy::Adaptor;
  LogicalResult lower(OpTy op, OpAdaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = plainType(op.getType());
    Shape shape;
    if constexpr (std::is_same_v<OpTy, ShapeOfOp>)
      shape = getShape(op.getInput());
    else
      shape = Shape(op.getDims().getDims());
    if (shape.empty()) {
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(
          op, resultType,
          DenseElementsAttr::get(resultType, ArrayRef<int64_t>{}));
      return success();
    }
    SmallVector<Value> dims;
    for (const TDim &dim : shape) {
      Value value = materializeDim(rewriter, loc, dim);
      if (!value)
        return this->unboundSize(rewriter, op);
      dims.push_back(arith::IndexCastOp::create(rewriter, loc,
                                                rewriter.getI64Type(), value));
    }
    rewriter.replaceOpWithNewOp<tensor::FromElementsOp>(op, resultType, dims);
    return success();
  }
};
using ShapeOfLowering = ShapeValuesLowering<ShapeOfOp>;
using ShapeValueLowering = ShapeValuesLowering<ShapeValueOp>;

/// Each lone symbol of `dims` not bound yet takes its element of `values`;
/// the other entries are what the model expects of theirs. The elements
/// must make dims the model can take: non-negative, equal to the expected
/// ones, and satisfying the model's assertions over the symbols they bind
/// (a reshape's volume). Otherwise tract_fail reports them and the symbols
/// become 0, so that everything they size is empty rather than out of
/// bounds. The op leaves nothing behind but the index values.
struct BindDimsLowering : public ArrayLoweringPattern<BindDimsOp> {
  using ArrayLoweringPattern::ArrayLoweringPattern;
  LogicalResult lower(BindDimsOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elementType = getElementTypeOrSelf(op.getValues().getType());
    Value zero = indexConstant(rewriter, loc, 0);
    SmallVector<std::pair<std::string, Value>> bound;
    Value ok;
    auto require = [&](Value holds) {
      ok = ok ? arith::AndIOp::create(rewriter, loc, ok, holds).getResult()
              : holds;
    };
    ArrayRef<TDim> dims = op.getDims().getDims();
    auto elementAt = [&](size_t i) {
      return toIndex(rewriter, loc,
                     tensor::ExtractOp::create(
                         rewriter, loc, adaptor.getValues(),
                         ValueRange{indexConstant(rewriter, loc, i)}),
                     elementType);
    };
    SmallVector<size_t> known;
    for (auto [i, dim] : llvm::enumerate(dims)) {
      std::optional<std::string> name = dim.getSymbolName();
      if (!name || materializeDim(rewriter, loc, dim)) {
        known.push_back(i);
        continue;
      }
      Value value = elementAt(i);
      bindSymbol(rewriter, loc, *name, value);
      bound.emplace_back(*name, value);
      require(arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge,
                                    value, zero));
    }
    // The entries the model already knows (constants, symbols bound before,
    // expressions) are what it expects of the values.
    SmallVector<std::tuple<size_t, Value, Value>> expected;
    for (size_t i : known) {
      Value wanted = materializeDim(rewriter, loc, dims[i]);
      if (!wanted)
        continue;
      Value value = elementAt(i);
      expected.emplace_back(i, value, wanted);
      require(arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                    value, wanted));
    }
    if (!ok) {
      rewriter.eraseOp(op);
      return success();
    }
    // The model's assertions that these symbols complete.
    SmallVector<std::string> checked;
    auto module = op->getParentOfType<ModuleOp>();
    if (auto texts = module->getAttrOfType<ArrayAttr>(kAssertionsAttrName))
      for (StringRef text : texts.getAsValueRange<StringAttr>()) {
        std::vector<TDim> constraints;
        if (!SymbolScope::parseAssertion(text, constraints, nullptr))
          continue;
        std::set<std::string> names;
        for (const TDim &constraint : constraints)
          constraint.collectSymbols(names);
        if (llvm::none_of(bound, [&](const auto &entry) {
              return names.count(entry.first);
            }))
          continue;
        SmallVector<Value> values;
        for (const TDim &constraint : constraints)
          values.push_back(materializeDim(rewriter, loc, constraint));
        if (llvm::any_of(values, [](Value v) { return !v; }))
          continue;
        for (Value value : values)
          require(arith::CmpIOp::create(
              rewriter, loc, arith::CmpIPredicate::sge, value, zero));
        checked.push_back(escapeFormat(text));
      }
    std::string format =
        "the values that '" + escapeFormat(nodeName(op)) + "' reads as dims (";
    SmallVector<Value> values;
    auto print = [&](Value value) {
      values.push_back(arith::IndexCastOp::create(
          rewriter, loc, rewriter.getI64Type(), value));
    };
    SmallVector<std::string> clauses;
    for (auto [i, entry] : llvm::enumerate(bound)) {
      format += (i ? ", " : "") + entry.first + "=%lld";
      print(entry.second);
    }
    if (!bound.empty())
      clauses.push_back(">= 0");
    for (auto [i, value, wanted] : expected) {
      format += (format.back() == '(' ? "" : ", ") + Twine(i).str() +
                ": %lld";
      print(value);
      clauses.push_back(escapeFormat(dims[i].toString()) + " = %lld");
    }
    for (auto [i, value, wanted] : expected)
      print(wanted);
    format += ") must be " + llvm::join(clauses, ", ");
    if (!checked.empty())
      format += " and satisfy " + llvm::join(checked, " and ");
    Value failed = arith::XOrIOp::create(
        rewriter, loc, ok,
        arith::ConstantIntOp::create(rewriter, loc, rewriter.getI1Type(), 1));
    auto report = scf::IfOp::create(rewriter, loc, failed,
                                    /*withElseRegion=*/false);
    OpBuilder reportBuilder = report.getThenBodyBuilder();
    callFail(reportBuilder, op, format, values);
    rewriter.setInsertionPointAfter(report);
    for (auto &[name, value] : bound)
      bindSymbol(rewriter, loc, name,
                 arith::SelectOp::create(rewriter, loc, ok, value, zero));
    rewriter.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Top-k
//===----------------------------------------------------------------------===//

/// The order of top-k: `beats(a, b)` when a comes strictly before b by value
/// (the index breaks ties, lowest first). NaN is above every number, as in
/// numpy's sort; booleans and unsigned integers compare unsigned.
struct TopKOrder {
  Type tractElement;
  bool largest;

  Value greater(OpBuilder &b, Location loc, Value x, Value y) const {
    if (isa<FloatType>(tractElement)) {
      Value ordered =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, y);
      Value xNan =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
      Value yNumber =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ORD, y, y);
      return arith::OrIOp::create(b, loc, ordered,
                                  arith::AndIOp::create(b, loc, xNan, yNumber));
    }
    bool isUnsigned =
        isUnsignedInteger(tractElement) || tractElement.isInteger(1);
    return arith::CmpIOp::create(b, loc,
                                 isUnsigned ? arith::CmpIPredicate::ugt
                                            : arith::CmpIPredicate::sgt,
                                 x, y);
  }

  Value equal(OpBuilder &b, Location loc, Value x, Value y) const {
    if (isa<FloatType>(tractElement)) {
      Value same =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, y);
      Value xNan =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
      Value yNan =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, y, y);
      return arith::OrIOp::create(b, loc, same,
                                  arith::AndIOp::create(b, loc, xNan, yNan));
    }
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y);
  }

  /// Whether value x strictly precedes value y.
  Value precedes(OpBuilder &b, Location loc, Value x, Value y) const {
    return largest ? greater(b, loc, x, y) : greater(b, loc, y, x);
  }
};

/// Selection, one rank at a time: the j-th result is the best element that
/// comes after the (j-1)-th in the order (value, then lowest index). That is
/// O(k * n) per row without any scratch memory; ties resolve to the lowest
/// index as ONNX specifies, and the results are always sorted.
struct TopKLowering : public ArrayLoweringPattern<TopKOp> {
  using ArrayLoweringPattern::ArrayLoweringPattern;
  LogicalResult lower(TopKOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t axis = op.getAxis();
    Shape inShape = getShape(op.getInput());
    Value dim = materializeDim(rewriter, loc, inShape[axis]);
    if (!dim)
      return unboundSize(rewriter, op);
    Value k =
        boundLength(rewriter, loc, op, "topk", op.getLen().getValue(), [&] {
          // k is clamped into [0, dim].
          Value given = toIndex(rewriter, loc,
                                extractScalar(rewriter, loc, adaptor.getK()),
                                getElementTypeOrSelf(op.getK().getType()));
          return clamp(rewriter, loc, given, indexConstant(rewriter, loc, 0),
                       dim);
        });
    if (!k)
      return failure();
    Value values = emptyResult(rewriter, loc, op, 0);
    Value indices = emptyResult(rewriter, loc, op, 1);
    if (!values || !indices)
      return unboundSize(rewriter, op);
    SmallVector<Value> outerDims;
    for (auto [i, d] : llvm::enumerate(inShape)) {
      if (static_cast<int64_t>(i) == axis)
        continue;
      outerDims.push_back(materializeDim(rewriter, loc, d));
      if (!outerDims.back())
        return unboundSize(rewriter, op);
    }
    TopKOrder order{getElementTypeOrSelf(op.getInput().getType()),
                    op.getLargest()};
    Value input = adaptor.getInput();
    Type elementType = cast<RankedTensorType>(input.getType()).getElementType();
    Value zero = indexConstant(rewriter, loc, 0);
    Value one = indexConstant(rewriter, loc, 1);
    SmallVector<Value> lbs(outerDims.size(), zero),
        steps(outerDims.size(), one);
    scf::LoopNest nest = scf::buildLoopNest(
        rewriter, loc, lbs, outerDims, steps, ValueRange{values, indices},
        [&](OpBuilder &b, Location l, ValueRange outer,
            ValueRange results) -> scf::ValueVector {
          auto at = [&](Value position) {
            SmallVector<Value> coords(outer);
            coords.insert(coords.begin() + axis, position);
            return coords;
          };
          Value noValue = zeroOf(b, l, elementType);
          auto rank = scf::ForOp::create(
              b, l, zero, k, one,
              ValueRange{noValue, zero, results[0], results[1]},
              [&](OpBuilder &b, Location l, Value j, ValueRange carried) {
                Value previous = carried[0], previousIndex = carried[1];
                Value first = arith::CmpIOp::create(
                    b, l, arith::CmpIPredicate::eq, j, zero);
                Value falseValue = arith::ConstantIntOp::create(b, l, 0, 1);
                auto scan = scf::ForOp::create(
                    b, l, zero, dim, one, ValueRange{noValue, zero, falseValue},
                    [&](OpBuilder &b, Location l, Value i, ValueRange best) {
                      Value x = tensor::ExtractOp::create(b, l, input, at(i));
                      // After the previous pick: worse value, or equal value
                      // at a higher index.
                      Value after = arith::OrIOp::create(
                          b, l, order.precedes(b, l, previous, x),
                          arith::AndIOp::create(
                              b, l, order.equal(b, l, previous, x),
                              arith::CmpIOp::create(b, l,
                                                    arith::CmpIPredicate::sgt,
                                                    i, previousIndex)));
                      after = arith::OrIOp::create(b, l, first, after);
                      // Strictly better than the best so far: the lowest
                      // index wins ties.
                      Value better = arith::OrIOp::create(
                          b, l,
                          arith::XOrIOp::create(
                              b, l, best[2],
                              arith::ConstantIntOp::create(b, l, 1, 1)),
                          order.precedes(b, l, x, best[0]));
                      Value take = arith::AndIOp::create(b, l, after, better);
                      scf::YieldOp::create(
                          b, l,
                          ValueRange{
                              arith::SelectOp::create(b, l, take, x, best[0]),
                              arith::SelectOp::create(b, l, take, i, best[1]),
                              arith::OrIOp::create(b, l, take, best[2])});
                    });
                Value bestValue = scan.getResult(0);
                Value bestIndex = scan.getResult(1);
                Value valuesOut = tensor::InsertOp::create(b, l, bestValue,
                                                           carried[2], at(j));
                Value index64 =
                    arith::IndexCastOp::create(b, l, b.getI64Type(), bestIndex);
                Value indicesOut =
                    tensor::InsertOp::create(b, l, index64, carried[3], at(j));
                scf::YieldOp::create(
                    b, l,
                    ValueRange{bestValue, bestIndex, valuesOut, indicesOut});
              });
          return {rank.getResult(2), rank.getResult(3)};
        });
    rewriter.replaceOp(op, nest.results);
    return success();
  }
};

/// Two passes over the input in row-major order: the count of non-zero
/// elements, which binds the result's length, then each one's coordinates
/// into the next column (never past the length, when a value was given for
/// it instead).
struct NonZeroLowering : public ArrayLoweringPattern<NonZeroOp> {
  using ArrayLoweringPattern::ArrayLoweringPattern;
  LogicalResult lower(NonZeroOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Value> dims;
    for (const TDim &dim : getShape(op.getInput())) {
      dims.push_back(materializeDim(rewriter, loc, dim));
      if (!dims.back())
        return unboundSize(rewriter, op);
    }
    Value input = adaptor.getInput();
    Type elementType = cast<RankedTensorType>(input.getType()).getElementType();
    Value zero = indexConstant(rewriter, loc, 0);
    Value one = indexConstant(rewriter, loc, 1);
    SmallVector<Value> lbs(dims.size(), zero), steps(dims.size(), one);
    // NaN is not zero.
    auto isNonZero = [&](OpBuilder &b, Location l, ValueRange at) -> Value {
      Value x = tensor::ExtractOp::create(b, l, input, at);
      Value none = zeroOf(b, l, elementType);
      if (isa<FloatType>(elementType))
        return arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNE, x, none);
      return arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, x, none);
    };
    scf::LoopNest counting = scf::buildLoopNest(
        rewriter, loc, lbs, dims, steps, ValueRange{zero},
        [&](OpBuilder &b, Location l, ValueRange at,
            ValueRange count) -> scf::ValueVector {
          Value add = arith::SelectOp::create(b, l, isNonZero(b, l, at), one,
                                              zero);
          return {arith::AddIOp::create(b, l, count[0], add)};
        });
    Value limit =
        boundLength(rewriter, loc, op, "non_zero", op.getLen().getValue(),
                    [&] { return counting.results[0]; });
    if (!limit)
      return failure();
    Value output = emptyResult(rewriter, loc, op, 0);
    if (!output)
      return unboundSize(rewriter, op);
    scf::LoopNest filling = scf::buildLoopNest(
        rewriter, loc, lbs, dims, steps, ValueRange{output, zero},
        [&](OpBuilder &b, Location l, ValueRange at,
            ValueRange carried) -> scf::ValueVector {
          Value column = carried[1];
          Value take = arith::AndIOp::create(
              b, l, isNonZero(b, l, at),
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, column,
                                    limit));
          auto write = scf::IfOp::create(
              b, l, take,
              [&](OpBuilder &b, Location l) {
                Value coords = carried[0];
                for (auto [axis, index] : llvm::enumerate(at)) {
                  Value coord = arith::IndexCastOp::create(
                      b, l, b.getI64Type(), index);
                  coords = tensor::InsertOp::create(
                      b, l, coord, coords,
                      ValueRange{indexConstant(b, l, axis), column});
                }
                scf::YieldOp::create(
                    b, l,
                    ValueRange{coords, arith::AddIOp::create(b, l, column,
                                                             indexConstant(
                                                                 b, l, 1))});
              },
              [&](OpBuilder &b, Location l) {
                scf::YieldOp::create(b, l, carried);
              });
          return {write.getResult(0), write.getResult(1)};
        });
    rewriter.replaceOp(op, filling.results[0]);
    return success();
  }
};

/// Quadratic passes over the rows, each comparing rows element by element:
/// the first row equal to each row (which says which rows are first
/// occurrences, and binds the count), the position of each distinct row in
/// the result (its order of appearance, or the number of distinct rows
/// lexicographically smaller when sorted), then the four results.
struct UniqueLowering : public ArrayLoweringPattern<UniqueOp> {
  using ArrayLoweringPattern::ArrayLoweringPattern;

  LogicalResult lower(UniqueOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Shape shape = getShape(op.getInput());
    Value rows = materializeDim(rewriter, loc, shape[0]);
    Value width = materializeDim(rewriter, loc, shape[1]);
    if (!rows || !width)
      return unboundSize(rewriter, op);
    Value input = adaptor.getInput();
    Type element = cast<RankedTensorType>(input.getType()).getElementType();
    bool isFloat = isa<FloatType>(element);
    bool isUnsigned = isUnsignedInteger(getElementTypeOrSelf(op.getInput())) ||
                      element.isInteger(1);
    Type index = rewriter.getIndexType(), i64 = rewriter.getI64Type();
    Value zero = indexConstant(rewriter, loc, 0);
    Value one = indexConstant(rewriter, loc, 1);
    Value yes = arith::ConstantIntOp::create(rewriter, loc, 1, 1);
    Value no = arith::ConstantIntOp::create(rewriter, loc, 0, 1);

    auto at = [&](OpBuilder &b, Location l, Value row, Value column) {
      return tensor::ExtractOp::create(b, l, input, ValueRange{row, column})
          .getResult();
    };
    auto equal = [&](OpBuilder &b, Location l, Value x, Value y) -> Value {
      if (isFloat)
        return arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, x, y);
      return arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, x, y);
    };
    auto less = [&](OpBuilder &b, Location l, Value x, Value y) -> Value {
      if (isFloat)
        return arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x, y);
      return arith::CmpIOp::create(b, l,
                                   isUnsigned ? arith::CmpIPredicate::ult
                                              : arith::CmpIPredicate::slt,
                                   x, y);
    };
    // Whether rows `p` and `q` are equal.
    auto rowsEqual = [&](OpBuilder &b, Location l, Value p, Value q) {
      return scf::ForOp::create(
                 b, l, zero, width, one, ValueRange{yes},
                 [&](OpBuilder &b, Location l, Value s, ValueRange same) {
                   Value here = equal(b, l, at(b, l, p, s), at(b, l, q, s));
                   scf::YieldOp::create(
                       b, l,
                       ValueRange{arith::AndIOp::create(b, l, same[0], here)});
                 })
          .getResult(0);
    };
    // Whether row `p` comes before row `q`: at the first element where
    // they differ, p's is smaller.
    auto rowLess = [&](OpBuilder &b, Location l, Value p, Value q) {
      auto scan = scf::ForOp::create(
          b, l, zero, width, one, ValueRange{no, no},
          [&](OpBuilder &b, Location l, Value s, ValueRange state) {
            Value x = at(b, l, p, s), y = at(b, l, q, s);
            Value decided = state[0];
            Value differ = arith::XOrIOp::create(b, l, equal(b, l, x, y), yes);
            Value decides = arith::AndIOp::create(
                b, l, differ, arith::XOrIOp::create(b, l, decided, yes));
            Value result = arith::SelectOp::create(b, l, decides,
                                                   less(b, l, x, y), state[1]);
            scf::YieldOp::create(
                b, l,
                ValueRange{arith::OrIOp::create(b, l, decided, differ),
                           result});
          });
      return scan.getResult(1);
    };
    auto indexVector = [&](Value size) -> Value {
      return tensor::EmptyOp::create(rewriter, loc,
                                     ArrayRef<OpFoldResult>{size}, index);
    };
    // first[i]: the first row equal to row i.
    Value first =
        scf::ForOp::create(
            rewriter, loc, zero, rows, one, ValueRange{indexVector(rows)},
            [&](OpBuilder &b, Location l, Value i, ValueRange carried) {
              auto search = scf::ForOp::create(
                  b, l, zero, i, one, ValueRange{i},
                  [&](OpBuilder &b, Location l, Value j, ValueRange found) {
                    Value open = arith::CmpIOp::create(
                        b, l, arith::CmpIPredicate::eq, found[0], i);
                    auto test = scf::IfOp::create(b, l, TypeRange{index}, open,
                                                  /*withElse=*/true);
                    {
                      OpBuilder::InsertionGuard guard(b);
                      b.setInsertionPointToStart(test.thenBlock());
                      scf::YieldOp::create(
                          b, l,
                          ValueRange{arith::SelectOp::create(
                              b, l, rowsEqual(b, l, j, i), j, i)});
                      b.setInsertionPointToStart(test.elseBlock());
                      scf::YieldOp::create(b, l, found);
                    }
                    scf::YieldOp::create(b, l, test.getResults());
                  });
              scf::YieldOp::create(
                  b, l,
                  ValueRange{tensor::InsertOp::create(
                      b, l, search.getResult(0), carried[0], ValueRange{i})});
            })
            .getResult(0);
    auto isFirst = [&](OpBuilder &b, Location l, Value i) -> Value {
      Value f = tensor::ExtractOp::create(b, l, first, ValueRange{i});
      return arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, f, i);
    };
    // position[i] for first occurrences: appearance order, or the number of
    // distinct rows before row i when sorted; the count of distinct rows.
    auto positions = scf::ForOp::create(
        rewriter, loc, zero, rows, one, ValueRange{indexVector(rows), zero},
        [&](OpBuilder &b, Location l, Value i, ValueRange carried) {
          Value position = carried[1];
          if (op.getSorted())
            position =
                scf::ForOp::create(
                    b, l, zero, rows, one, ValueRange{zero},
                    [&](OpBuilder &b, Location l, Value j, ValueRange rank) {
                      auto test = scf::IfOp::create(b, l, TypeRange{index},
                                                    isFirst(b, l, j),
                                                    /*withElse=*/true);
                      {
                        OpBuilder::InsertionGuard guard(b);
                        b.setInsertionPointToStart(test.thenBlock());
                        Value before = rowLess(b, l, j, i);
                        scf::YieldOp::create(
                            b, l,
                            ValueRange{arith::SelectOp::create(
                                b, l, before,
                                arith::AddIOp::create(b, l, rank[0], one),
                                rank[0])});
                        b.setInsertionPointToStart(test.elseBlock());
                        scf::YieldOp::create(b, l, rank);
                      }
                      scf::YieldOp::create(b, l, test.getResults());
                    })
                    .getResult(0);
          Value firstHere = isFirst(b, l, i);
          Value table = tensor::InsertOp::create(b, l, position, carried[0],
                                                 ValueRange{i});
          Value counted = arith::SelectOp::create(
              b, l, firstHere, arith::AddIOp::create(b, l, carried[1], one),
              carried[1]);
          scf::YieldOp::create(b, l, ValueRange{table, counted});
        });
    Value position = positions.getResult(0);
    Value distinct = positions.getResult(1);
    Value length =
        boundLength(rewriter, loc, op, "unique", op.getLen().getValue(),
                    [&] { return distinct; });
    if (!length)
      return failure();
    // A length given for the result (--set) other than the count: the
    // positions past it are dropped, those missing stay zero.
    Value values = emptyResult(rewriter, loc, op, 0);
    Value indices = emptyResult(rewriter, loc, op, 1);
    Value inverse = emptyResult(rewriter, loc, op, 2);
    Value counts = emptyResult(rewriter, loc, op, 3);
    if (!values || !indices || !inverse || !counts)
      return unboundSize(rewriter, op);
    Value zeroI64 = arith::ConstantOp::create(rewriter, loc, i64,
                                              rewriter.getI64IntegerAttr(0));
    for (Value *tensor : {&indices, &counts})
      *tensor = linalg::FillOp::create(rewriter, loc, ValueRange{zeroI64},
                                       ValueRange{*tensor})
                    .getResult(0);
    values = linalg::FillOp::create(rewriter, loc,
                                    ValueRange{zeroOf(rewriter, loc, element)},
                                    ValueRange{values})
                 .getResult(0);
    auto asI64 = [&](OpBuilder &b, Location l, Value v) -> Value {
      return arith::IndexCastOp::create(b, l, i64, v);
    };
    auto fill = scf::ForOp::create(
        rewriter, loc, zero, rows, one,
        ValueRange{values, indices, inverse, counts},
        [&](OpBuilder &b, Location l, Value i, ValueRange carried) {
          Value f = tensor::ExtractOp::create(b, l, first, ValueRange{i});
          Value slot = tensor::ExtractOp::create(b, l, position, ValueRange{f});
          Value newInverse = tensor::InsertOp::create(
              b, l, asI64(b, l, slot), carried[2], ValueRange{i});
          Value inRange = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult,
                                                slot, length);
          auto update = scf::IfOp::create(b, l,
                                          TypeRange{carried[0].getType(),
                                                    carried[1].getType(),
                                                    carried[3].getType()},
                                          inRange, /*withElse=*/true);
          {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(update.thenBlock());
            Value count =
                tensor::ExtractOp::create(b, l, carried[3], ValueRange{slot});
            Value newCounts = tensor::InsertOp::create(
                b, l,
                arith::AddIOp::create(b, l, count,
                                      arith::ConstantOp::create(
                                          b, l, i64, b.getI64IntegerAttr(1))),
                carried[3], ValueRange{slot});
            auto firstTime = scf::IfOp::create(
                b, l, TypeRange{carried[0].getType(), carried[1].getType()},
                isFirst(b, l, i), /*withElse=*/true);
            {
              OpBuilder::InsertionGuard inner(b);
              b.setInsertionPointToStart(firstTime.thenBlock());
              Value row =
                  scf::ForOp::create(
                      b, l, zero, width, one, ValueRange{carried[0]},
                      [&](OpBuilder &b, Location l, Value s, ValueRange table) {
                        scf::YieldOp::create(
                            b, l,
                            ValueRange{tensor::InsertOp::create(
                                b, l, at(b, l, i, s), table[0],
                                ValueRange{slot, s})});
                      })
                      .getResult(0);
              Value newIndices = tensor::InsertOp::create(
                  b, l, asI64(b, l, i), carried[1], ValueRange{slot});
              scf::YieldOp::create(b, l, ValueRange{row, newIndices});
              b.setInsertionPointToStart(firstTime.elseBlock());
              scf::YieldOp::create(b, l, ValueRange{carried[0], carried[1]});
            }
            scf::YieldOp::create(b, l,
                                 ValueRange{firstTime.getResult(0),
                                            firstTime.getResult(1), newCounts});
            b.setInsertionPointToStart(update.elseBlock());
            scf::YieldOp::create(
                b, l, ValueRange{carried[0], carried[1], carried[3]});
          }
          scf::YieldOp::create(b, l,
                               ValueRange{update.getResult(0),
                                          update.getResult(1), newInverse,
                                          update.getResult(2)});
        });
    rewriter.replaceOp(op, fill.getResults());
    return success();
  }
};

/// For each batch and class, the next best candidate is found by a scan
/// (the best score after the previous one in the order of decreasing score,
/// then increasing index), checked against the boxes kept so far for that
/// batch and class, and appended to a buffer of B * C * N rows when kept.
/// The count binds the result's length; the result is the buffer's first
/// rows. Scores and coordinates are compared in f64.
struct NonMaxSuppressionLowering
    : public ArrayLoweringPattern<NonMaxSuppressionOp> {
  using ArrayLoweringPattern::ArrayLoweringPattern;

  LogicalResult lower(NonMaxSuppressionOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Shape boxShape = getShape(op.getBoxes());
    Shape scoreShape = getShape(op.getScores());
    Value batches = materializeDim(rewriter, loc, boxShape[0]);
    Value count = materializeDim(rewriter, loc, boxShape[1]);
    Value classes = materializeDim(rewriter, loc, scoreShape[1]);
    if (!batches || !count || !classes)
      return unboundSize(rewriter, op);
    Value boxes = adaptor.getBoxes(), scores = adaptor.getScores();
    Type f64 = rewriter.getF64Type(), i64 = rewriter.getI64Type();
    Type index = rewriter.getIndexType();
    auto toF64 = [&](OpBuilder &b, Location l, Value value) -> Value {
      return value.getType() == f64
                 ? value
                 : arith::ExtFOp::create(b, l, f64, value).getResult();
    };
    auto f64Constant = [&](OpBuilder &b, Location l, double value) -> Value {
      return arith::ConstantOp::create(b, l, f64, b.getF64FloatAttr(value));
    };
    // The single values, wherever their one element is.
    auto single = [&](Value tensor) -> Value {
      auto type = cast<RankedTensorType>(tensor.getType());
      SmallVector<Value> at(type.getRank(), indexConstant(rewriter, loc, 0));
      return tensor::ExtractOp::create(rewriter, loc, tensor, at);
    };
    Value maxOutput = arith::IndexCastOp::create(
        rewriter, loc, index, single(adaptor.getMaxOutput()));
    Value iouThreshold =
        toF64(rewriter, loc, single(adaptor.getIouThreshold()));
    Value scoreThreshold =
        toF64(rewriter, loc, single(adaptor.getScoreThreshold()));
    bool center = op.getCenterPointBox();

    Value zero = indexConstant(rewriter, loc, 0);
    Value one = indexConstant(rewriter, loc, 1);
    Value rows = arith::MulIOp::create(
        rewriter, loc, arith::MulIOp::create(rewriter, loc, batches, classes),
        count);
    // A length given for the result (--set) may exceed what was kept: the
    // rows past the count are zeros.
    Value given = materializeDim(rewriter, loc, op.getLen().getValue());
    if (given)
      rows = arith::MaxUIOp::create(rewriter, loc, rows, given);
    Value buffer = tensor::EmptyOp::create(
        rewriter, loc, ArrayRef<OpFoldResult>{rows, rewriter.getIndexAttr(3)},
        i64);
    buffer = linalg::FillOp::create(
                 rewriter, loc,
                 ValueRange{arith::ConstantOp::create(
                     rewriter, loc, i64, rewriter.getI64IntegerAttr(0))},
                 ValueRange{buffer})
                 .getResult(0);

    // The extents of box `i` of batch `batch`: x min/max, y min/max.
    auto extents = [&](OpBuilder &b, Location l, Value batch,
                       Value i) -> std::array<Value, 4> {
      std::array<Value, 4> c;
      for (int64_t k = 0; k < 4; ++k)
        c[k] = toF64(
            b, l,
            tensor::ExtractOp::create(
                b, l, boxes, ValueRange{batch, i, indexConstant(b, l, k)}));
      if (center) {
        Value half = f64Constant(b, l, 0.5);
        Value w = arith::MulFOp::create(b, l, c[2], half);
        Value h = arith::MulFOp::create(b, l, c[3], half);
        return {arith::SubFOp::create(b, l, c[0], w),
                arith::AddFOp::create(b, l, c[0], w),
                arith::SubFOp::create(b, l, c[1], h),
                arith::AddFOp::create(b, l, c[1], h)};
      }
      // y1, x1, y2, x2, either way round.
      return {arith::MinimumFOp::create(b, l, c[1], c[3]),
              arith::MaximumFOp::create(b, l, c[1], c[3]),
              arith::MinimumFOp::create(b, l, c[0], c[2]),
              arith::MaximumFOp::create(b, l, c[0], c[2])};
    };
    // Whether two boxes overlap by more than the threshold.
    auto overlaps = [&](OpBuilder &b, Location l, std::array<Value, 4> p,
                        std::array<Value, 4> q) -> Value {
      auto sub = [&](Value x, Value y) -> Value {
        return arith::SubFOp::create(b, l, x, y);
      };
      auto mul = [&](Value x, Value y) -> Value {
        return arith::MulFOp::create(b, l, x, y);
      };
      auto greater = [&](Value x, Value y) -> Value {
        return arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x, y);
      };
      Value xLow = arith::MaximumFOp::create(b, l, p[0], q[0]);
      Value xHigh = arith::MinimumFOp::create(b, l, p[1], q[1]);
      Value yLow = arith::MaximumFOp::create(b, l, p[2], q[2]);
      Value yHigh = arith::MinimumFOp::create(b, l, p[3], q[3]);
      Value intersection = mul(sub(xHigh, xLow), sub(yHigh, yLow));
      Value area1 = mul(sub(p[1], p[0]), sub(p[3], p[2]));
      Value area2 = mul(sub(q[1], q[0]), sub(q[3], q[2]));
      Value united =
          sub(arith::AddFOp::create(b, l, area1, area2), intersection);
      Value nonNegative = f64Constant(b, l, 0.0);
      Value valid = arith::AndIOp::create(
          b, l,
          arith::AndIOp::create(b, l, greater(xHigh, xLow),
                                greater(yHigh, yLow)),
          arith::AndIOp::create(
              b, l,
              arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, area1,
                                    nonNegative),
              arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, area2,
                                    nonNegative)));
      Value above = greater(arith::DivFOp::create(b, l, intersection, united),
                            iouThreshold);
      return arith::AndIOp::create(b, l, valid, above);
    };

    Value infinity =
        f64Constant(rewriter, loc, std::numeric_limits<double>::infinity());
    Value none = indexConstant(rewriter, loc, -1);
    auto perBatch = scf::ForOp::create(
        rewriter, loc, zero, batches, one, ValueRange{buffer, zero},
        [&](OpBuilder &b, Location l, Value batch, ValueRange carried) {
          auto perClass = scf::ForOp::create(
              b, l, zero, classes, one, carried,
              [&](OpBuilder &b, Location l, Value klass, ValueRange carried) {
                Value first = carried[1]; // this class's first row
                // Carried: previous score, previous box, kept in this
                // class, rows, buffer.
                SmallVector<Value> init{infinity, none, zero, carried[1],
                                        carried[0]};
                SmallVector<Type> types{f64, index, index, index,
                                        buffer.getType()};
                auto selection = scf::WhileOp::create(
                    b, l, types, init,
                    [&](OpBuilder &b, Location l, ValueRange state) {
                      Value previousScore = state[0], previous = state[1];
                      // The best candidate after the previous one.
                      auto scan = scf::ForOp::create(
                          b, l, zero, count, one,
                          ValueRange{
                              f64Constant(
                                  b, l,
                                  -std::numeric_limits<double>::infinity()),
                              none},
                          [&](OpBuilder &b, Location l, Value i,
                              ValueRange best) {
                            Value score = toF64(
                                b, l,
                                tensor::ExtractOp::create(
                                    b, l, scores, ValueRange{batch, klass, i}));
                            auto cmp = [&](arith::CmpFPredicate predicate,
                                           Value x, Value y) -> Value {
                              return arith::CmpFOp::create(b, l, predicate, x,
                                                           y);
                            };
                            Value after = arith::OrIOp::create(
                                b, l,
                                cmp(arith::CmpFPredicate::OLT, score,
                                    previousScore),
                                arith::AndIOp::create(
                                    b, l,
                                    cmp(arith::CmpFPredicate::OEQ, score,
                                        previousScore),
                                    arith::CmpIOp::create(
                                        b, l, arith::CmpIPredicate::sgt, i,
                                        previous)));
                            Value better = arith::AndIOp::create(
                                b, l,
                                arith::AndIOp::create(
                                    b, l,
                                    cmp(arith::CmpFPredicate::OGT, score,
                                        scoreThreshold),
                                    after),
                                arith::OrIOp::create(
                                    b, l,
                                    cmp(arith::CmpFPredicate::OGT, score,
                                        best[0]),
                                    arith::CmpIOp::create(
                                        b, l, arith::CmpIPredicate::slt,
                                        best[1], zero)));
                            scf::YieldOp::create(
                                b, l,
                                ValueRange{arith::SelectOp::create(
                                               b, l, better, score, best[0]),
                                           arith::SelectOp::create(
                                               b, l, better, i, best[1])});
                          });
                      Value found =
                          arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge,
                                                scan.getResult(1), zero);
                      Value room = arith::CmpIOp::create(
                          b, l, arith::CmpIPredicate::slt, state[2], maxOutput);
                      scf::ConditionOp::create(
                          b, l, arith::AndIOp::create(b, l, found, room),
                          ValueRange{scan.getResult(0), scan.getResult(1),
                                     state[2], state[3], state[4]});
                    },
                    [&](OpBuilder &b, Location l, ValueRange state) {
                      Value candidate = state[1];
                      Value kept = state[2], used = state[3], table = state[4];
                      std::array<Value, 4> box =
                          extents(b, l, batch, candidate);
                      // Against the boxes kept for this batch and class.
                      auto check = scf::ForOp::create(
                          b, l, first, used, one,
                          ValueRange{arith::ConstantIntOp::create(b, l, 0, 1)},
                          [&](OpBuilder &b, Location l, Value row,
                              ValueRange suppressed) {
                            Value other = arith::IndexCastOp::create(
                                b, l, index,
                                tensor::ExtractOp::create(
                                    b, l, table,
                                    ValueRange{row, indexConstant(b, l, 2)}));
                            Value hit = overlaps(b, l, box,
                                                 extents(b, l, batch, other));
                            scf::YieldOp::create(
                                b, l,
                                ValueRange{arith::OrIOp::create(
                                    b, l, suppressed[0], hit)});
                          });
                      auto keep = scf::IfOp::create(
                          b, l, TypeRange{index, index, table.getType()},
                          check.getResult(0), /*withElseRegion=*/true);
                      {
                        OpBuilder::InsertionGuard guard(b);
                        b.setInsertionPointToStart(keep.thenBlock());
                        scf::YieldOp::create(b, l,
                                             ValueRange{kept, used, table});
                        b.setInsertionPointToStart(keep.elseBlock());
                        Value written = table;
                        SmallVector<Value> entry{batch, klass, candidate};
                        for (auto [column, value] : llvm::enumerate(entry))
                          written = tensor::InsertOp::create(
                              b, l,
                              arith::IndexCastOp::create(b, l, i64, value),
                              written,
                              ValueRange{used, indexConstant(b, l, column)});
                        scf::YieldOp::create(
                            b, l,
                            ValueRange{arith::AddIOp::create(b, l, kept, one),
                                       arith::AddIOp::create(b, l, used, one),
                                       written});
                      }
                      scf::YieldOp::create(
                          b, l,
                          ValueRange{state[0], candidate, keep.getResult(0),
                                     keep.getResult(1), keep.getResult(2)});
                    });
                scf::YieldOp::create(
                    b, l,
                    ValueRange{selection.getResult(4), selection.getResult(3)});
              });
          scf::YieldOp::create(b, l, perClass.getResults());
        });
    Value total = perBatch.getResult(1);
    Value length = boundLength(rewriter, loc, op, "non_max_suppression",
                               op.getLen().getValue(), [&] { return total; });
    if (!length)
      return failure();
    Value result = tensor::ExtractSliceOp::create(
        rewriter, loc, plainType(op.getType()), perBatch.getResult(0),
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0),
                               rewriter.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{length, rewriter.getIndexAttr(3)},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1),
                               rewriter.getIndexAttr(1)});
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::tract::populateArrayLoweringPatterns(const TypeConverter &converter,
                                                RewritePatternSet &patterns) {
  patterns
      .add<AddAxisLowering, RmAxisLowering, MoveAxisLowering, ReshapeLowering,
           BroadcastLowering, TileLowering, SliceLowering, DownsampleLowering,
           PadLowering, ConcatLowering, GatherLowering, GatherElementsLowering,
           GatherNdLowering, DynSliceLowering, ScatterElementsLowering,
           ScatterNdLowering, OneHotLowering, TriluLowering, RangeLowering,
           ShapeOfLowering, ShapeValueLowering, BindDimsLowering, TopKLowering,
           NonZeroLowering, NonMaxSuppressionLowering, UniqueLowering>(
          converter, patterns.getContext());
}
