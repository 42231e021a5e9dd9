//===- CollapseDims.cpp - merge loop dims contiguous in every operand -----===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTCOLLAPSEDIMS
#include "codegen/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

namespace {

/// Runs of neighbouring loop dims of one iterator type that every operand
/// reads together, in order, or not at all. Only static dims merge: the
/// buffers of a dynamic expand_shape crash expand-strided-metadata (LLVM 22).
SmallVector<ReassociationIndices> contiguousRuns(linalg::LinalgOp op) {
  SmallVector<ReassociationIndices> runs;
  if (!op.hasPureTensorSemantics() || op.hasIndexSemantics() ||
      !isa<linalg::GenericOp>(op) || op.getNumLoops() < 2)
    return runs;
  // An op writing into the interior of a padded tensor (tract-fuse-pads)
  // keeps its shape: the interior is not contiguous, and a collapsed
  // result would be computed elsewhere and copied in.
  for (Operation *user : op->getUsers())
    if (isa<tensor::InsertSliceOp>(user))
      return runs;
  // An element-wise op on the result of a reduction (a product's bias and
  // activation) takes the product's shape, so that the product's kernel
  // can run it on its tiles: once the product has collapsed, the op reads
  // it through an expand_shape and collapses exactly its groups; otherwise
  // it keeps its shape.
  if (op.getNumReductionLoops() == 0)
    for (OpOperand *input : op.getDpsInputOperands()) {
      Value source = input->get();
      auto expand = source.getDefiningOp<tensor::ExpandShapeOp>();
      while (source.getDefiningOp<tensor::ExpandShapeOp>() ||
             source.getDefiningOp<tensor::CollapseShapeOp>())
        source = source.getDefiningOp()->getOperand(0);
      auto producer = source.getDefiningOp<linalg::LinalgOp>();
      if (!producer || producer.getNumReductionLoops() == 0)
        continue;
      if (!expand || expand.getSrc() != source ||
          !op.getMatchingIndexingMap(input).isIdentity())
        return runs;
      SmallVector<int64_t> sizes = op.getStaticLoopRanges();
      for (const ReassociationIndices &group :
           expand.getReassociationIndices())
        if (group.size() > 1 && llvm::none_of(group, [&](int64_t dim) {
              return ShapedType::isDynamic(sizes[dim]);
            }))
          runs.push_back(group);
      if (!linalg::areDimSequencesPreserved(op.getIndexingMapsArray(), runs))
        runs.clear();
      return runs;
    }
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (AffineMap map : maps)
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/false))
      return runs;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  ReassociationIndices run{0};
  auto close = [&]() {
    if (run.size() > 1)
      runs.push_back(run);
  };
  for (int64_t dim = 1, e = op.getNumLoops(); dim < e; ++dim) {
    ReassociationIndices longer = run;
    longer.push_back(dim);
    if (iterators[dim] == iterators[run.back()] &&
        !ShapedType::isDynamic(sizes[dim]) &&
        !ShapedType::isDynamic(sizes[run.back()]) &&
        linalg::areDimSequencesPreserved(maps, {longer})) {
      run = longer;
      continue;
    }
    close();
    run = {dim};
  }
  close();
  return runs;
}

/// An input broadcast along unit dims (a bias of shape 1×C×1×1 read as
/// (n, c, h, w) -> (n, c, 0, 0)) is read through a collapse_shape without
/// those dims, so that its indexing map becomes a projected permutation
/// ((n, c, h, w) -> (n, c)) and the op's other dims can merge.
struct DropBroadcastUnitDims : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    bool changed = false;
    SmallVector<Value> inputs(op.getDpsInputs());
    for (unsigned index = 0; index < inputs.size(); ++index) {
      Value input = inputs[index];
      auto type = dyn_cast<RankedTensorType>(input.getType());
      AffineMap map = maps[index];
      if (!type || !type.hasStaticShape())
        continue;
      auto isDropped = [&](unsigned result) {
        auto constant = dyn_cast<AffineConstantExpr>(map.getResult(result));
        return constant && constant.getValue() == 0 &&
               type.getDimSize(result) == 1;
      };
      // Each kept dim starts a group; a dropped dim joins the group before
      // it, or the first group when it leads.
      SmallVector<ReassociationIndices> groups;
      ReassociationIndices leading;
      SmallVector<int64_t> shape;
      SmallVector<AffineExpr> results;
      for (unsigned dim = 0; dim < map.getNumResults(); ++dim) {
        if (!isDropped(dim)) {
          groups.push_back({dim});
          shape.push_back(type.getDimSize(dim));
          results.push_back(map.getResult(dim));
        } else if (groups.empty()) {
          leading.push_back(dim);
        } else {
          groups.back().push_back(dim);
        }
      }
      if (results.size() == map.getNumResults())
        continue;
      if (!groups.empty())
        groups.front().insert(groups.front().begin(), leading.begin(),
                              leading.end());
      auto collapsed = RankedTensorType::get(shape, type.getElementType());
      Value view = tensor::CollapseShapeOp::create(rewriter, op.getLoc(),
                                                   collapsed, input, groups);
      rewriter.modifyOpInPlace(op, [&] {
        op.getDpsInputOperand(index)->set(view);
      });
      maps[index] = AffineMap::get(map.getNumDims(), 0, results,
                                   op.getContext());
      changed = true;
    }
    if (!changed)
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
    return success();
  }
};

struct TractCollapseDims
    : public tract::impl::TractCollapseDimsBase<TractCollapseDims> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<DropBroadcastUnitDims>(&getContext());
    linalg::populateCollapseDimensions(patterns, contiguousRuns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
