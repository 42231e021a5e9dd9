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
  // An element-wise op on the result of a reduction (a product's bias and
  // activation) keeps its shape: the product's kernel runs it on its tiles.
  if (op.getNumReductionLoops() == 0)
    for (Value input : op.getDpsInputs())
      if (auto producer = input.getDefiningOp<linalg::LinalgOp>())
        if (producer.getNumReductionLoops() > 0)
          return runs;
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

struct TractCollapseDims
    : public tract::impl::TractCollapseDimsBase<TractCollapseDims> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateCollapseDimensions(patterns, contiguousRuns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
