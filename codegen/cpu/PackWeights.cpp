//===- PackWeights.cpp - constant operands laid out for the kernels -------===//
//
// The contraction kernels read their vector operand along the lane dim. A
// constant operand (the weights) that holds that dim on another axis is
// transposed once, at compile time, so that the dim is its last axis: the
// kernels then load it contiguously instead of gathering lanes at each
// step.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/cpu/LaneChoice.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTCPUPACKWEIGHTS
#include "codegen/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

namespace {

/// The dense constant behind an operand, if it is one of a byte-sized type.
DenseElementsAttr constantOf(Value value) {
  auto constant = value.getDefiningOp<arith::ConstantOp>();
  if (!constant)
    return nullptr;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || dense.getElementType().getIntOrFloatBitWidth() % 8 != 0)
    return nullptr;
  return dense;
}

/// `value` with its axes in the order `permutation` (result axis i is
/// source axis permutation[i]).
DenseElementsAttr transpose(DenseElementsAttr value,
                            ArrayRef<int64_t> permutation) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape;
  for (int64_t axis : permutation)
    shape.push_back(type.getDimSize(axis));
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  if (value.isSplat())
    return value.resizeSplat(resultType);
  size_t element = type.getElementTypeBitWidth() / 8;
  ArrayRef<char> source = value.getRawData();
  SmallVector<int64_t> sourceStrides(type.getRank(), 1);
  for (int64_t axis = type.getRank() - 2; axis >= 0; --axis)
    sourceStrides[axis] = sourceStrides[axis + 1] * type.getDimSize(axis + 1);
  std::vector<char> result(source.size());
  int64_t count = type.getNumElements();
  SmallVector<int64_t> index(type.getRank(), 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t from = 0;
    for (auto [axis, at] : llvm::enumerate(index))
      from += at * sourceStrides[permutation[axis]];
    std::memcpy(result.data() + i * element, source.data() + from * element,
                element);
    for (int64_t axis = type.getRank() - 1; axis >= 0; --axis) {
      if (++index[axis] < shape[axis])
        break;
      index[axis] = 0;
    }
  }
  return DenseElementsAttr::getFromRawBuffer(resultType, result);
}

/// `value`, a (k, n) matrix, as (n / width, k, width) panels.
DenseElementsAttr intoPanels(DenseElementsAttr value, int64_t width) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t k = type.getDimSize(0), n = type.getDimSize(1);
  auto resultType =
      RankedTensorType::get({n / width, k, width}, type.getElementType());
  if (value.isSplat())
    return value.resizeSplat(resultType);
  size_t element = type.getElementTypeBitWidth() / 8;
  ArrayRef<char> source = value.getRawData();
  std::vector<char> result(source.size());
  for (int64_t row = 0; row < k; ++row)
    for (int64_t column = 0; column < n; column += width)
      std::memcpy(
          result.data() + ((column / width) * k + row) * width * element,
          source.data() + (row * n + column) * element, width * element);
  return DenseElementsAttr::getFromRawBuffer(resultType, result);
}

struct TractCpuPackWeights
    : public tract::impl::TractCpuPackWeightsBase<TractCpuPackWeights> {
  using Base::Base;

  /// Whether the operand of `op` that `choice` vectorizes, a constant read
  /// through `map`, is a matrix (k, n) to lay out in panels: n the lane
  /// dim, k a reduction dim, n a multiple of `panel` wider than one.
  bool inPanels(linalg::LinalgOp op, const tract::LaneChoice &choice,
                AffineMap map) {
    if (panel <= 0 || map.getNumResults() != 2 ||
        !map.isProjectedPermutation() ||
        !constantOf(op.getDpsInputOperand(choice.vectorInput)->get()))
      return false;
    auto type = dyn_cast<RankedTensorType>(
        op.getDpsInputOperand(choice.vectorInput)->get().getType());
    if (!type || !type.hasStaticShape())
      return false;
    unsigned other = 0;
    int64_t width = 0;
    for (auto [axis, expr] : llvm::enumerate(map.getResults())) {
      unsigned dim = cast<AffineDimExpr>(expr).getPosition();
      if (dim == choice.dim)
        width = type.getDimSize(axis);
      else
        other = dim;
    }
    return op.getIteratorTypesArray()[other] ==
               utils::IteratorType::reduction &&
           width > panel && width % panel == 0;
  }

  void runOnOperation() override {
    // A weight that is a slice of a constant (the gates of a recurrent
    // layer) becomes a constant of its own, which can then be packed.
    RewritePatternSet slices(&getContext());
    tensor::populateFoldConstantExtractSlicePatterns(
        slices, [](tensor::ExtractSliceOp slice) {
          return llvm::any_of(slice->getUsers(), [](Operation *user) {
            auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
            return linalgOp && tract::isMultiplyAccumulate(linalgOp);
          });
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(slices))))
      return signalPassFailure();

    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() && tract::isMultiplyAccumulate(op) &&
          getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType())
              .isF32())
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : candidates)
      pack(rewriter, op);
  }

  void pack(IRRewriter &rewriter, linalg::LinalgOp op) {
    auto packable = [&](unsigned input) {
      return static_cast<bool>(
          constantOf(op.getDpsInputOperand(input)->get()));
    };
    std::optional<tract::LaneChoice> choice =
        tract::chooseLaneDim(op, lanes, packable);
    if (!choice)
      return;
    OpOperand *operand = op.getDpsInputOperand(choice->vectorInput);
    AffineMap map = op.getMatchingIndexingMap(operand);
    bool paneled = inPanels(op, *choice, map);
    if (!choice->needsPacking && !paneled)
      return;
    // The axis of the lane dim moves last; the others keep their order.
    SmallVector<int64_t> permutation;
    int64_t laneAxis = -1;
    for (auto [axis, expr] : llvm::enumerate(map.getResults())) {
      if (cast<AffineDimExpr>(expr).getPosition() == choice->dim)
        laneAxis = axis;
      else
        permutation.push_back(axis);
    }
    permutation.push_back(laneAxis);
    DenseElementsAttr packed =
        transpose(constantOf(operand->get()), permutation);
    SmallVector<AffineExpr> results;
    for (int64_t axis : permutation)
      results.push_back(map.getResult(axis));
    if (paneled) {
      // (k, n) as (n / P, k, P), read at (n floordiv P, k, n mod P).
      AffineExpr n = results[1];
      packed = intoPanels(packed, panel);
      results = {n.floorDiv(panel), results[0], n % panel};
    }
    Operation *constant = operand->get().getDefiningOp();
    unsigned input = choice->vectorInput;

    rewriter.setInsertionPoint(op);
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic) {
      FailureOr<linalg::GenericOp> generalized =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generalized))
        return;
      generic = *generalized;
    }
    rewriter.setInsertionPointAfter(constant);
    Value weights = arith::ConstantOp::create(rewriter, constant->getLoc(),
                                              packed.getType(), packed);
    SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
    maps[input] = AffineMap::get(map.getNumDims(), 0, results,
                                 rewriter.getContext());
    rewriter.modifyOpInPlace(generic, [&] {
      generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
      generic->setOperand(input, weights);
    });
  }
};

} // namespace
