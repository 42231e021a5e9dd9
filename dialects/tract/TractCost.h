//===- TractCost.h - what one run of a tract op costs -----------*- C++ -*-===//
//
// The cost model of `tract dump --cost`, of the GF/s of `--profile` and of
// the threading decisions:
// arithmetic operations and bytes moved per op, as TDims, so that costs stay
// symbolic where shapes are (`8192*S flops`).
//
//===----------------------------------------------------------------------===//

#ifndef DIALECTS_TRACT_TRACTCOST_H
#define DIALECTS_TRACT_TRACTCOST_H

#include "dialects/tdim/TDim.h"

#include "mlir/IR/Operation.h"

#include <optional>

namespace mlir::tract {

/// The cost of one run of an op.
///
/// `flops` counts arithmetic operations, a multiply-add being 2: a
/// contraction is 2 per point of its iteration space, a convolution
/// 2*output_volume*kernel_volume*in_channels/group, an element-wise op 1 per
/// output element (a transcendental counts as 1), a reduction 1 per input
/// element; ops that only move data (axes, slices, gathers, pads, concats)
/// count 0.
///
/// `bytes` is the size of the tensors the op reads and writes: its operands
/// and results, except that slices and gathers read only what they keep and
/// that add_axis, rm_axis and reshape, which the lowering turns into views,
/// and constants, which are compiled in, move nothing.
///
/// A scan costs its body times its iterations; an if, the more expensive of
/// its branches.
struct OpCost {
  TDim flops;
  TDim bytes;

  OpCost &operator+=(const OpCost &other) {
    flops += other.flops;
    bytes += other.bytes;
    return *this;
  }
};

/// The cost of `op`, or nullopt for an op outside the tract dialect: its
/// CostOpInterface's, else one operation per output element for an
/// element-wise op, else only the bytes it moves.
std::optional<OpCost> getOpCost(Operation *op);

} // namespace mlir::tract

#endif // DIALECTS_TRACT_TRACTCOST_H
