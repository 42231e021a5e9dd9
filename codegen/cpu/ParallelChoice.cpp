//===- ParallelChoice.cpp - which loop of a kernel runs on threads --------===//

#include "codegen/cpu/ParallelChoice.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <limits>

using namespace mlir;

/// The time of `candidate` on `cost.threads` threads, relative to one
/// thread running the whole op.
static double parallelTime(const tract::ParallelCandidate &candidate,
                           const tract::ParallelCost &cost) {
  int64_t threads = cost.threads;
  // A trip count known only at run time is taken as long enough to share
  // evenly.
  double slowest = candidate.share / static_cast<double>(threads) +
                   (1.0 - candidate.share);
  if (candidate.iterations) {
    // Runs of ceil(n / threads), the last one shorter and with the rest.
    int64_t iterations = *candidate.iterations;
    int64_t run = (iterations + threads - 1) / threads;
    int64_t lastRun = std::max<int64_t>(iterations - (threads - 1) * run, 0);
    double perIteration = candidate.share / static_cast<double>(iterations);
    slowest = std::max(run * perIteration,
                       lastRun * perIteration + (1.0 - candidate.share));
  }
  double forks = static_cast<double>(candidate.entries) * cost.forkCost;
  return slowest + forks / std::max(cost.work, 1.0);
}

std::optional<unsigned>
tract::chooseParallelLoop(llvm::ArrayRef<ParallelCandidate> candidates,
                          const ParallelCost &cost) {
  if (cost.threads <= 1)
    return std::nullopt;
  bool thresholdSet = cost.threshold >= 0;
  if (thresholdSet && cost.work < cost.threshold)
    return std::nullopt;
  // Past a threshold the forks are taken as worth it: the candidates are
  // ranked by their slowest run alone.
  ParallelCost ranking = cost;
  if (thresholdSet)
    ranking.forkCost = 0;
  constexpr double kUnusable = std::numeric_limits<double>::infinity();
  llvm::SmallVector<double> times;
  double best = thresholdSet ? kUnusable : 1.0 / cost.minSpeedUp;
  for (const ParallelCandidate &candidate : candidates) {
    bool usable = !candidate.iterations || *candidate.iterations >= 2;
    times.push_back(usable ? parallelTime(candidate, ranking) : kUnusable);
    best = std::min(best, times.back());
  }
  if (thresholdSet ? best == kUnusable : best > 1.0 / cost.minSpeedUp)
    return std::nullopt;
  // Among the nearly best, a loop of known trip count first: one known
  // only at run time is taken as long, but is often a batch of 1 (or a
  // decoding step's single token) at run time, which would leave every
  // thread but one idle. Then the outermost output axis.
  auto rank = [&](unsigned index) {
    return std::make_pair(!candidates[index].iterations.has_value(),
                          candidates[index].preference);
  };
  std::optional<unsigned> chosen;
  for (auto [index, time] : llvm::enumerate(times))
    if (time <= best * 1.05 && (!chosen || rank(index) < rank(*chosen)))
      chosen = static_cast<unsigned>(index);
  return chosen;
}

double tract::iterationWork(linalg::LinalgOp op, double perElement) {
  double work = perElement;
  for (int64_t size : op.getStaticLoopRanges())
    work *= ShapedType::isDynamic(size) ? kUnknownTripCount : size;
  return work;
}

double tract::breakEvenPoints(linalg::LinalgOp op, const ParallelCost &cost) {
  if (llvm::none_of(op.getStaticLoopRanges(), ShapedType::isDynamic) ||
      cost.threads <= 1)
    return 0;
  double perPoint = cost.work / std::max(iterationWork(op, 1.0), 1.0);
  double work = cost.threshold;
  if (work < 0) {
    // The time of an evenly shared op with one fork against the least
    // speed-up worth it: work / threads + forkCost <= work / minSpeedUp.
    double gain = 1.0 / cost.minSpeedUp - 1.0 / cost.threads;
    if (gain <= 0)
      return std::numeric_limits<double>::infinity();
    work = cost.forkCost / gain;
  }
  return work / std::max(perPoint, 1e-9);
}

double tract::memoryBoundWork(linalg::LinalgOp op) {
  return iterationWork(
      op, static_cast<double>(op.getBlock()->getOperations().size()) +
              16.0 * op->getNumOperands());
}

llvm::SmallVector<tract::ParallelCandidate>
tract::nestCandidates(linalg::LinalgOp op, llvm::ArrayRef<unsigned> dims,
                      int64_t *entries) {
  llvm::SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  llvm::SmallVector<ParallelCandidate> candidates;
  for (unsigned dim : dims) {
    std::optional<int64_t> known;
    if (!ShapedType::isDynamic(sizes[dim]))
      known = sizes[dim];
    candidates.push_back(
        {known, 1.0, entries ? *entries : 1, outputAxisOf(op, dim)});
    if (entries)
      *entries *= known.value_or(kUnknownTripCount);
  }
  return candidates;
}

int64_t tract::outputAxisOf(linalg::LinalgOp op, unsigned dim) {
  AffineMap map = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  for (auto [axis, expr] : llvm::enumerate(map.getResults()))
    if (expr.isFunctionOfDim(dim))
      return static_cast<int64_t>(axis);
  return map.getNumResults();
}
