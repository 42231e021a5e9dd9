//===- FusePads.cpp - producers write into the interior of padded tensors -===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTFUSEPADS
#include "codegen/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

namespace {

/// Whether `copy` computes what `op` does: the same op on the same
/// inputs, with the same attributes and body, neither reading its output
/// (whose buffers differ: `copy` writes into a padded tensor).
bool computesTheSame(linalg::LinalgOp op, linalg::LinalgOp copy) {
  if (op == copy || op->getName() != copy->getName() ||
      op.getNumDpsInits() != 1 || copy.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 || copy->getNumResults() != 1 ||
      op.payloadUsesValueFromOperand(op.getDpsInitOperand(0)) ||
      copy.payloadUsesValueFromOperand(copy.getDpsInitOperand(0)) ||
      op->getResult(0).getType() != copy->getResult(0).getType())
    return false;
  Value opInit = op.getDpsInitOperand(0)->get();
  Value copyInit = copy.getDpsInitOperand(0)->get();
  // The values of the bodies (block arguments, results) that correspond.
  DenseMap<Value, Value> same;
  return OperationEquivalence::isEquivalentTo(
      op, copy,
      [&](Value a, Value b) {
        return success(a == b || (a == opInit && b == copyInit) ||
                       same.lookup(a) == b);
      },
      [&](Value a, Value b) { same[a] = b; },
      OperationEquivalence::IgnoreLocations);
}

/// The producer of a padded tensor's interior is a copy of an op whose
/// result has other readers (BlazeFace's residual blocks: the sum feeds
/// the next block's padded convolution and its residual add): the fusion
/// cloned it, and both ran, the second reading the same inputs again.
/// The other readers now read the interior of the padded tensor, and the
/// original goes.
void readInteriors(func::FuncOp function) {
  SmallVector<tensor::InsertSliceOp> inserts;
  function.walk([&](tensor::InsertSliceOp insert) { inserts.push_back(insert); });
  for (tensor::InsertSliceOp insert : inserts) {
    auto copy = insert.getSource().getDefiningOp<linalg::LinalgOp>();
    if (!copy || !copy->hasOneUse() || copy.getNumDpsInits() != 1)
      continue;
    auto interior = copy.getDpsInitOperand(0)
                        ->get()
                        .getDefiningOp<tensor::ExtractSliceOp>();
    if (!interior || interior.getSource() != insert.getDest() ||
        interior.getMixedOffsets() != insert.getMixedOffsets() ||
        interior.getMixedSizes() != insert.getMixedSizes() ||
        interior.getMixedStrides() != insert.getMixedStrides())
      continue;
    // The original: an op of the same block that reads the same inputs.
    linalg::LinalgOp original;
    for (Value input : copy.getDpsInputs())
      for (Operation *user : input.getUsers())
        if (auto candidate = dyn_cast<linalg::LinalgOp>(user);
            candidate && candidate->getBlock() == insert->getBlock() &&
            candidate->isBeforeInBlock(insert) &&
            computesTheSame(candidate, copy))
          original = candidate;
    if (!original ||
        llvm::any_of(original->getUsers(), [&](Operation *user) {
          return user->getBlock() != insert->getBlock() ||
                 user->isBeforeInBlock(insert);
        }))
      continue;
    OpBuilder builder(insert->getContext());
    builder.setInsertionPointAfter(insert);
    Value read = tensor::ExtractSliceOp::create(
        builder, insert.getLoc(),
        cast<RankedTensorType>(original->getResult(0).getType()),
        insert.getResult(), insert.getMixedOffsets(), insert.getMixedSizes(),
        insert.getMixedStrides());
    original->getResult(0).replaceAllUsesWith(read);
    original->erase();
  }
}

struct TractFusePads : public tract::impl::TractFusePadsBase<TractFusePads> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateFuseTensorPadWithProducerLinalgOpPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    readInteriors(getOperation());
  }
};

} // namespace
