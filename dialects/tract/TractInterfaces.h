//===- TractInterfaces.h - what passes need to know of an op ---*- C++ -*-===//
//
// The C++ side of TractInterfaces.td: the traits' classes, the generated
// interfaces, and the questions passes ask of any op.
//
//===----------------------------------------------------------------------===//

#ifndef DIALECTS_TRACT_TRACTINTERFACES_H
#define DIALECTS_TRACT_TRACTINTERFACES_H

#include "dialects/tract/TractCost.h"
#include "dialects/tract/TractPulse.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir::tract::TractTrait {

/// See Tract_Elementwise in TractInterfaces.td.
template <typename ConcreteType>
class Elementwise
    : public ::mlir::OpTrait::TraitBase<ConcreteType, Elementwise> {};

/// See Tract_Stateful in TractInterfaces.td.
template <typename ConcreteType>
class Stateful : public ::mlir::OpTrait::TraitBase<ConcreteType, Stateful> {};

} // namespace mlir::tract::TractTrait

namespace mlir::tract {
/// Renumbers the work axes of a WorkAxesOpInterface op that reads its
/// operand unpermuted instead of permuted by `perm` (the default of
/// AxisTrackingOpInterface::readUnpermuted).
void readWorkAxesUnpermuted(Operation *op, llvm::ArrayRef<int64_t> perm);
} // namespace mlir::tract

#include "dialects/tract/TractInterfaces.h.inc"

namespace mlir::tract {

/// Whether `op` is element-wise (Tract_Elementwise).
inline bool isElementwise(Operation *op) {
  return op->hasTrait<TractTrait::Elementwise>();
}

/// Whether `op` keeps a state across the calls of a streaming model.
inline bool isStateful(Operation *op) {
  return op->hasTrait<TractTrait::Stateful>();
}

} // namespace mlir::tract

#endif // DIALECTS_TRACT_TRACTINTERFACES_H
