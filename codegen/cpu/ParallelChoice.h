//===- ParallelChoice.h - which loop of a kernel runs on threads -*- C++ -*-===//
//
// A kernel's loop nest shares its work among threads through one loop
// whose iterations are independent (they write disjoint parts of the
// output): an outer dim, the column tiles or the row tiles. The kernels
// run their whole nest once per thread, each on an equal contiguous run of
// that loop's iterations (the last run also takes the remainder tiles), so
// that an op forks and joins once. Each candidate is judged by the time of
// its slowest run. The choice is made at compile time, for the thread
// count the model is compiled for.
//
//===----------------------------------------------------------------------===//

#ifndef CODEGEN_CPU_PARALLELCHOICE_H
#define CODEGEN_CPU_PARALLELCHOICE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace mlir::tract {

/// One loop of a nest that could run on several threads.
struct ParallelCandidate {
  /// Its trip count (in tiles), when static.
  std::optional<int64_t> iterations;
  /// The part of the op's work done in the loop's iterations; the rest
  /// (remainder tiles) goes with the last run.
  double share = 1.0;
  /// How many times one run of the op forks and joins: 1 for a kernel's
  /// chunks, the trip counts of the loops around a parallel loop nested
  /// in serial ones.
  int64_t entries = 1;
  /// Among candidates about as fast, the lowest goes first: the output
  /// axis the loop walks, so that a thread keeps writing the same block of
  /// outer axes (the same channels) from op to op, where the next op on
  /// that thread reads them from its own cache.
  int64_t preference = 0;
};

/// What the choice weighs.
struct ParallelCost {
  int64_t threads = 1;
  /// The op's work, in flops (multiply-adds count two).
  double work = 0;
  /// The cost of entering a parallel loop (a fork and a join), in the flops
  /// a core does meanwhile: below a few of these an op stays serial. A
  /// fork and join of libomp's hot team takes about 0.65 µs on the 2-core
  /// machine the project measures on, about 60 kflop at the 100 GFLOP/s
  /// the kernels sustain in small ops (a recurrent layer's per-step
  /// products, which then share out: GRU speech 1.0× to 1.4× on two
  /// threads).
  double forkCost = 60000;
  /// The least speed-up worth a parallel loop.
  double minSpeedUp = 1.2;
  /// tract's --threading-threshold, when set (>= 0): an op of at least
  /// this much work (in flops, as `work`) is shared whatever a fork costs,
  /// a smaller one stays serial; 0 shares every op with a loop to share.
  /// Below zero, the fork cost and `minSpeedUp` decide.
  double threshold = -1;
};

/// The candidate to run in parallel (of those within 5% of the best, the
/// one of lowest preference, then the first), or nullopt when the op
/// should stay serial.
std::optional<unsigned> chooseParallelLoop(
    llvm::ArrayRef<ParallelCandidate> candidates, const ParallelCost &cost);

/// A loop size known only at run time counts as this many in estimates.
constexpr int64_t kUnknownTripCount = 16;

/// The work of `op` in flops: `perElement` times the number of points of
/// its iteration space.
double iterationWork(linalg::LinalgOp op, double perElement);

/// The work of an op bound by memory (maps, copies, reductions), in flops:
/// each element read or written costs what about 16 flops do (4 bytes at
/// a core's share of bandwidth against its FMA peak), plus one flop per op
/// of the body.
double memoryBoundWork(linalg::LinalgOp op);

/// The iteration points of `op` from which sharing it pays, when some of
/// its loop sizes are known only at run time: the choice took them as
/// kUnknownTripCount, and a kernel then shares its work only when the
/// points reach this (a decoding step's single token stays on one
/// thread). 0 when every size is static: the choice made is exact.
double breakEvenPoints(linalg::LinalgOp op, const ParallelCost &cost);

/// The axis of `op`'s first output that loop dim `dim` walks (the rank
/// when none does), for ParallelCandidate::preference.
int64_t outputAxisOf(linalg::LinalgOp op, unsigned dim);

/// Candidates for the loops over `dims` of `op`, nested in this order
/// (outermost first), each chunked (one fork per op). With `entries`, each
/// is instead a parallel loop nested in the ones before it, inside loops
/// entered `*entries` times; `*entries` becomes the number of times the
/// innermost of them runs its body.
llvm::SmallVector<ParallelCandidate>
nestCandidates(linalg::LinalgOp op, llvm::ArrayRef<unsigned> dims,
               int64_t *entries = nullptr);

} // namespace mlir::tract

#endif // CODEGEN_CPU_PARALLELCHOICE_H
