//===- ParallelLoops.cpp - share the ops the kernels leave among threads --===//
//
// The contraction kernels and the vector loops share their own tiles among
// threads. What they leave to the loop lowering (gathers, resizes, ops
// with regions or non-float reductions) would otherwise run on
// one thread: each such op that is large enough becomes loops, one of
// whose parallel dims is an `scf.parallel`.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/cpu/ParallelChoice.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTCPUPARALLELLOOPS
#define GEN_PASS_DEF_TRACTCPUFORKIF
#include "codegen/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

namespace {

/// The loop of `op`'s nest (one per dim, outermost first) to share among
/// `threads` threads, if any: a parallel dim, judged as the kernels judge
/// theirs. One dim, not all of them at once: a collapsed OpenMP loop
/// recomputes every index with divisions at each iteration.
std::optional<unsigned> chooseLoop(linalg::LinalgOp op, int64_t threads,
                                   double threshold) {
  // Loops inside the first reduction would race on the output.
  SmallVector<unsigned> dims;
  for (auto [dim, iterator] : llvm::enumerate(op.getIteratorTypesArray())) {
    if (iterator != utils::IteratorType::parallel)
      break;
    dims.push_back(dim);
  }
  tract::ParallelCost cost;
  cost.threads = threads;
  cost.threshold = threshold;
  // Scalar code is slower than this estimate of vector loops, which only
  // makes it cautious.
  cost.work = tract::memoryBoundWork(op);
  int64_t entries = 1;
  std::optional<unsigned> chosen = tract::chooseParallelLoop(
      tract::nestCandidates(op, dims, &entries), cost);
  if (!chosen)
    return std::nullopt;
  return dims[*chosen];
}

/// Replaces `loop` (no loop-carried values) by an `scf.parallel`.
void makeParallel(RewriterBase &rewriter, scf::ForOp loop) {
  rewriter.setInsertionPoint(loop);
  auto parallel = scf::ParallelOp::create(
      rewriter, loop.getLoc(), ValueRange{loop.getLowerBound()},
      ValueRange{loop.getUpperBound()}, ValueRange{loop.getStep()});
  Block *body = parallel.getBody();
  rewriter.eraseOp(body->getTerminator());
  Block *old = loop.getBody();
  rewriter.eraseOp(old->getTerminator());
  rewriter.inlineBlockBefore(old, body, body->end(),
                             {parallel.getInductionVars()[0]});
  rewriter.setInsertionPointToEnd(body);
  scf::ReduceOp::create(rewriter, loop.getLoc());
  rewriter.eraseOp(loop);
}

struct TractCpuParallelLoops
    : public tract::impl::TractCpuParallelLoopsBase<TractCpuParallelLoops> {
  using Base::Base;

  void runOnOperation() override {
    if (threads <= 1)
      return;
    SmallVector<std::pair<linalg::LinalgOp, unsigned>> work;
    getOperation().walk([&](linalg::LinalgOp op) {
      // Not inside a loop that already runs on threads.
      if (!op.hasPureBufferSemantics() ||
          op->getParentOfType<scf::ParallelOp>())
        return;
      if (std::optional<unsigned> dim =
              chooseLoop(op, threads, threadingThreshold))
        work.emplace_back(op, *dim);
    });
    IRRewriter rewriter(&getContext());
    for (auto [op, dim] : work) {
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::LinalgLoops> loops =
          linalg::linalgOpToLoops(rewriter, op);
      if (failed(loops))
        continue;
      rewriter.eraseOp(op);
      auto loop = dyn_cast_or_null<scf::ForOp>((*loops)[dim]);
      if (loop && loop.getNumRegionIterArgs() == 0)
        makeParallel(rewriter, loop);
    }
  }
};

struct TractCpuForkIf
    : public tract::impl::TractCpuForkIfBase<TractCpuForkIf> {
  void runOnOperation() override {
    SmallVector<omp::ParallelOp> regions;
    getOperation().walk([&](omp::ParallelOp region) {
      if (!region.getIfExpr())
        regions.push_back(region);
    });
    for (omp::ParallelOp region : regions) {
      SmallVector<omp::LoopNestOp> nests;
      region.walk([&](omp::LoopNestOp nest) { nests.push_back(nest); });
      if (nests.size() != 1 || nests[0].getLoopUpperBounds().size() != 1)
        continue;
      omp::LoopNestOp nest = nests[0];
      Value upper = nest.getLoopUpperBounds()[0];
      APInt lower, step;
      if (!matchPattern(nest.getLoopLowerBounds()[0], m_ConstantInt(&lower)) ||
          !matchPattern(nest.getLoopSteps()[0], m_ConstantInt(&step)) ||
          matchPattern(upper, m_Constant()) || step.isNonPositive() ||
          region.getRegion().isAncestor(upper.getParentRegion()) ||
          nest.getLoopInclusive())
        continue;
      OpBuilder b(region);
      Location loc = region.getLoc();
      Value second = arith::ConstantOp::create(
          b, loc, upper.getType(),
          b.getIntegerAttr(upper.getType(), (lower + step).getSExtValue()));
      Value several = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                            upper, second);
      region.getIfExprMutable().assign(several);
    }
  }
};

} // namespace
