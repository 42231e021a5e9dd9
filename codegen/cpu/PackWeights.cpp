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
#include "mlir/IR/Threading.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cstring>

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTCPUPACKWEIGHTS
#include "codegen/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

namespace {

/// The constant behind an operand, if it is one of a byte-sized type:
/// dense, or a resource (a large weight imported without a copy).
ElementsAttr constantOf(Value value) {
  auto constant = value.getDefiningOp<arith::ConstantOp>();
  if (!constant)
    return nullptr;
  if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
    return dense.getElementType().getIntOrFloatBitWidth() % 8 == 0 ? dense
                                                                  : nullptr;
  auto resource = dyn_cast<DenseResourceElementsAttr>(constant.getValue());
  if (!resource || !tract::constantBytes(resource) ||
      !resource.getElementType().isIntOrFloat() ||
      resource.getElementType().getIntOrFloatBitWidth() % 8 != 0)
    return nullptr;
  return resource;
}

/// `value` with its axes permuted (result axis i is source axis
/// `permutation[i]`), (k…, n), and with `width` > 0 laid out as
/// (ceil(n / width), k…, width) panels, the last one padded with zeros
/// where n is not a multiple of `width`. One pass over the bytes, into
/// memory of its own from `ownMemoryBytes` (see tract::allocateWeights).
ElementsAttr layOut(ElementsAttr value, ArrayRef<int64_t> permutation,
                    int64_t width, int64_t ownMemoryBytes) {
  auto type = cast<RankedTensorType>(value.getType());
  auto dense = dyn_cast<DenseElementsAttr>(value);
  int64_t rank = type.getRank();
  SmallVector<int64_t> shape;
  for (int64_t axis : permutation)
    shape.push_back(type.getDimSize(axis));
  int64_t n = shape.back();
  int64_t k = type.getNumElements() / std::max<int64_t>(n, 1);
  SmallVector<int64_t> resultShape;
  int64_t columns = width > 0 ? width : n;
  int64_t count = width > 0 ? llvm::divideCeil(n, width) : 1;
  if (width > 0)
    resultShape.push_back(count);
  resultShape.append(shape.begin(), shape.end() - 1);
  resultShape.push_back(columns);
  auto resultType = RankedTensorType::get(resultShape, type.getElementType());
  if (dense && dense.isSplat() && n % columns == 0)
    return dense.resizeSplat(resultType);
  if (width <= 0 && llvm::equal(permutation, llvm::seq<int64_t>(0, rank)))
    return value;
  size_t element = type.getElementTypeBitWidth() / 8;
  size_t bytes = count * k * columns * element;
  if (dense && (static_cast<int64_t>(bytes) < ownMemoryBytes ||
                dense.isSplat())) {
    // Small: an attribute, as before (the packing tests read it).
    DenseElementsAttr moved = tract::transposeDense(dense, permutation);
    if (width <= 0)
      return moved;
    ArrayRef<char> source = moved.getRawData();
    std::vector<char> result(bytes, 0);
    for (int64_t row = 0; row < k; ++row)
      for (int64_t column = 0; column < n; column += width) {
        int64_t from = moved.isSplat() ? 0 : (row * n + column) * element;
        int64_t taken = std::min(width, n - column);
        char *to =
            result.data() + ((column / width) * k + row) * width * element;
        if (moved.isSplat())
          for (int64_t i = 0; i < taken; ++i)
            std::memcpy(to + i * element, source.data(), element);
        else
          std::memcpy(to, source.data() + from, taken * element);
      }
    return DenseElementsAttr::getFromRawBuffer(resultType, result);
  }

  // Row r of the permuted value starts at the source offset of its index
  // and walks the source axis that became the last one.
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t axis = rank - 2; axis >= 0; --axis)
    strides[axis] = strides[axis + 1] * type.getDimSize(axis + 1);
  int64_t step = strides[permutation.back()];
  AsmResourceBlob blob = tract::allocateWeights(bytes);
  char *out = blob.getMutableData().data();
  const char *source = tract::constantBytes(value)->data();
  SmallVector<int64_t> index(rank - 1, 0);
  for (int64_t row = 0; row < k; ++row) {
    int64_t base = 0;
    for (auto [axis, at] : llvm::enumerate(index))
      base += at * strides[permutation[axis]];
    for (int64_t column = 0; column < n; column += columns) {
      int64_t taken = std::min(columns, n - column);
      char *to = out + ((column / columns) * k + row) * columns * element;
      const char *from = source + (base + column * step) * element;
      if (step == 1)
        std::memcpy(to, from, taken * element);
      else
        for (int64_t i = 0; i < taken; ++i)
          std::memcpy(to + i * element, from + i * step * element, element);
      // The padding is zero already: the mapped memory starts zeroed.
    }
    for (int64_t axis = rank - 2; axis >= 0; --axis) {
      if (++index[axis] < shape[axis])
        break;
      index[axis] = 0;
    }
  }
  return DenseResourceElementsAttr::get(resultType, "tract_packed_weights",
                                        std::move(blob));
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
    // What each product's weights become, then their new layouts, made
    // in parallel (a language model's are gigabytes: the time goes into
    // the first touch of fresh pages and the copy), then the IR changes.
    SmallVector<Packing> packings;
    for (linalg::LinalgOp op : candidates)
      if (std::optional<Packing> packing = plan(op))
        packings.push_back(std::move(*packing));
    parallelForEach(&getContext(), packings, [&](Packing &packing) {
      ElementsAttr weights =
          constantOf(packing.op.getDpsInputOperand(packing.input)->get());
      packing.packed =
          layOut(weights, packing.permutation,
                 packing.paneled ? int64_t(panel) : 0, ownMemoryBytes);
      // Weights read in place from the model file: their pages go back to
      // the system now that the packed copy holds them.
      tract::dropMappedPages(weights);
    });
    IRRewriter rewriter(&getContext());
    for (Packing &packing : packings)
      apply(rewriter, packing);
  }

  /// A product's constant operand to lay out: the axes in their new order
  /// (the lane dim's last), in panels or not, and the result.
  struct Packing {
    linalg::LinalgOp op;
    unsigned input;
    AffineMap map;
    SmallVector<int64_t> permutation;
    bool paneled;
    ElementsAttr packed;
  };

  std::optional<Packing> plan(linalg::LinalgOp op) {
    auto packable = [&](unsigned input) {
      return static_cast<bool>(
          constantOf(op.getDpsInputOperand(input)->get()));
    };
    std::optional<tract::LaneChoice> choice =
        tract::chooseLaneDim(op, lanes, packable);
    if (!choice)
      return std::nullopt;
    OpOperand *operand = op.getDpsInputOperand(choice->vectorInput);
    AffineMap map = op.getMatchingIndexingMap(operand);
    bool paneled = inPanels(op, *choice, map);
    if (!choice->needsPacking && !paneled)
      return std::nullopt;
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
    return Packing{op, choice->vectorInput, map, permutation, paneled,
                   nullptr};
  }

  void apply(IRRewriter &rewriter, const Packing &packing) {
    linalg::LinalgOp op = packing.op;
    unsigned input = packing.input;
    AffineMap map = packing.map;
    SmallVector<AffineExpr> results;
    for (int64_t axis : packing.permutation)
      results.push_back(map.getResult(axis));
    if (packing.paneled) {
      // (k…, n) as (n / P, k…, P), read at (n floordiv P, k…, n mod P).
      AffineExpr n = results.back();
      results.pop_back();
      results.insert(results.begin(), n.floorDiv(panel));
      results.push_back(n % panel);
    }
    Operation *constant = op.getDpsInputOperand(input)->get().getDefiningOp();

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
    Value weights = arith::ConstantOp::create(
        rewriter, constant->getLoc(), packing.packed.getType(), packing.packed);
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
