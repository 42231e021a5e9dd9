//===- ParallelChoice.h - which loop of a kernel runs on threads -*- C++ -*-===//
//
// A kernel's loop nest shares its work among threads through one loop
// whose iterations are independent (they write disjoint parts of the
// output): an outer dim, the column tiles or the row tiles. Each candidate
// is judged by the time it would take on the threads: its iterations are
// dealt out in equal contiguous runs (OpenMP's static schedule), the
// remainder tiles after it stay serial, and every entry into the loop pays
// a fork and a join. The choice is made at compile time, for the thread
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
  /// (remainder tiles after it) runs on one thread.
  double share = 1.0;
  /// How many times one run of the op enters the loop: the trip counts of
  /// the loops around it.
  int64_t entries = 1;
};

/// What the choice weighs.
struct ParallelCost {
  int64_t threads = 1;
  /// The op's work, in flops (multiply-adds count two).
  double work = 0;
  /// The cost of entering a parallel loop (a fork and a join), in the flops
  /// a core does meanwhile: below a few of these an op stays serial.
  double forkCost = 200000;
  /// The least speed-up worth a parallel loop.
  double minSpeedUp = 1.2;
};

/// The candidate to run in parallel (the outermost of those within 5% of
/// the best), or nullopt when the op should stay serial.
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

/// Candidates for the loops over `dims` of `op`, nested in this order
/// (outermost first) inside loops entered `entries` times; `entries`
/// becomes the number of times the innermost of them runs its body.
llvm::SmallVector<ParallelCandidate>
nestCandidates(linalg::LinalgOp op, llvm::ArrayRef<unsigned> dims,
               int64_t &entries);

} // namespace mlir::tract

#endif // CODEGEN_CPU_PARALLELCHOICE_H
