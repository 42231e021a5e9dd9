//===- LaneReductions.h - reductions along a contiguous axis ----*- C++ -*-===//
//
// A sum, max or min along the last axis of its input (a global average
// pool, the max and the sum of a softmax, the mean of a layer norm) walks
// memory contiguously along its reduction: the vector loops, which put an
// output axis on the lanes, leave it. Here the reduction goes on the lanes:
// a vector accumulator gathers `width` partial results per step, and one
// horizontal reduction at the end gives each output element.
//
//===----------------------------------------------------------------------===//

#ifndef CODEGEN_CPU_LANEREDUCTIONS_H
#define CODEGEN_CPU_LANEREDUCTIONS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tract {

/// Rewrites `op` (a linalg op on buffers whose innermost loop dim is a
/// reduction read contiguously, or not at all, by every input, and whose
/// body combines a lane-wise value into the output with an associative
/// float op: add, mul, max, min) into vector loops of `width` lanes;
/// failure, with the IR unchanged, for any other op. Made for `threads`
/// threads, an outer dim of a large enough op is an `scf.parallel`
/// (`threshold`: ParallelCost::threshold).
LogicalResult emitLaneReduction(RewriterBase &rewriter, linalg::LinalgOp op,
                                int64_t width, int64_t lanes, int64_t threads,
                                double threshold = -1);

} // namespace mlir::tract

#endif // CODEGEN_CPU_LANEREDUCTIONS_H
