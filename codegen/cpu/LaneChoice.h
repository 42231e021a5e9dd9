//===- LaneChoice.h - which loop of a product goes on vector lanes -*- C++ -*-===//
//
// A multiply-accumulate op (out += a * b) becomes register tiles with one
// loop dim on the vector lanes. The output's innermost dim is the natural
// choice (contiguous stores), but when it is short (a 7×7 feature map)
// most lanes idle; another output dim (the output channels) that one
// operand holds contiguously fills them. Weight packing and the kernels
// decide with this one rule so that they agree.
//
//===----------------------------------------------------------------------===//

#ifndef CODEGEN_CPU_LANECHOICE_H
#define CODEGEN_CPU_LANECHOICE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::tract {

/// Whether the body of `op` computes `out + in0 * in1`, in any order.
bool isMultiplyAccumulate(linalg::LinalgOp op);

struct LaneChoice {
  unsigned dim;           ///< the loop dim on the lanes
  unsigned vectorInput;   ///< the input that walks it (the other does not)
  bool needsPacking;      ///< that input must be laid out with `dim` last
};

/// The lane dim of a multiply-accumulate `op` on `lanes` lanes; inputs for
/// which `packable` is true (constants) count as laid out at will.
std::optional<LaneChoice>
chooseLaneDim(linalg::LinalgOp op, int64_t lanes,
              llvm::function_ref<bool(unsigned input)> packable);

} // namespace mlir::tract

#endif // CODEGEN_CPU_LANECHOICE_H
