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
#include "dialects/tract/TractFolding.h"

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

/// `value`, (k…, n), as (ceil(n / width), k…, width) panels, the last one
/// padded with zeros where n is not a multiple of `width`.
DenseElementsAttr intoPanels(DenseElementsAttr value, int64_t width) {
  auto type = cast<RankedTensorType>(value.getType());
  ArrayRef<int64_t> shape = type.getShape();
  int64_t n = shape.back();
  int64_t k = type.getNumElements() / n;
  int64_t count = llvm::divideCeil(n, width);
  SmallVector<int64_t> panels{count};
  llvm::append_range(panels, shape.drop_back());
  panels.push_back(width);
  auto resultType = RankedTensorType::get(panels, type.getElementType());
  if (value.isSplat() && n % width == 0)
    return value.resizeSplat(resultType);
  size_t element = type.getElementTypeBitWidth() / 8;
  ArrayRef<char> source = value.getRawData();
  std::vector<char> result(count * k * width * element, 0);
  for (int64_t row = 0; row < k; ++row)
    for (int64_t column = 0; column < n; column += width) {
      int64_t from = value.isSplat() ? 0 : (row * n + column) * element;
      int64_t taken = std::min(width, n - column);
      char *to = result.data() + ((column / width) * k + row) * width * element;
      if (value.isSplat())
        for (int64_t i = 0; i < taken; ++i)
          std::memcpy(to + i * element, source.data(), element);
      else
        std::memcpy(to, source.data() + from, taken * element);
    }
  return DenseElementsAttr::getFromRawBuffer(resultType, result);
}

struct TractCpuPackWeights
    : public tract::impl::TractCpuPackWeightsBase<TractCpuPackWeights> {
  using Base::Base;

  /// Whether the operand of `op` that `choice` vectorizes, a constant read
  /// through `map`, is a matrix (k, n) or a kernel (k…, n) to lay out in
  /// panels: n the lane dim, the k reduction dims, n wider than one panel
  /// (the last one padded when n is not a multiple: a classifier's 1000
  /// outputs read without panels strided 4000 bytes per step of k). (A channels-last convolution's kernel (kh, kw, c, f)
  /// read without panels strides 4·f bytes per step of c: on 512 output
  /// channels, a new page every other step.)
  bool inPanels(linalg::LinalgOp op, const tract::LaneChoice &choice,
                AffineMap map) {
    if (panel <= 0 || map.getNumResults() < 2 ||
        !map.isProjectedPermutation() ||
        !constantOf(op.getDpsInputOperand(choice.vectorInput)->get()))
      return false;
    auto type = dyn_cast<RankedTensorType>(
        op.getDpsInputOperand(choice.vectorInput)->get().getType());
    if (!type || !type.hasStaticShape())
      return false;
    int64_t width = 0;
    bool reductions = true;
    for (auto [axis, expr] : llvm::enumerate(map.getResults())) {
      unsigned dim = cast<AffineDimExpr>(expr).getPosition();
      if (dim == choice.dim)
        width = type.getDimSize(axis);
      else
        reductions &= op.getIteratorTypesArray()[dim] ==
                      utils::IteratorType::reduction;
    }
    return reductions && width > panel;
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
        tract::transposeDense(constantOf(operand->get()), permutation);
    SmallVector<AffineExpr> results;
    for (int64_t axis : permutation)
      results.push_back(map.getResult(axis));
    if (paneled) {
      // (k…, n) as (n / P, k…, P), read at (n floordiv P, k…, n mod P).
      AffineExpr n = results.back();
      packed = intoPanels(packed, panel);
      results.pop_back();
      results.insert(results.begin(), n.floorDiv(panel));
      results.push_back(n % panel);
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
