#ifndef DIALECTS_TRACT_TRACTOPS_H
#define DIALECTS_TRACT_TRACTOPS_H

#include "dialects/tract/TractAttrs.h"
#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractShapes.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tract {

/// Result type of an element-wise binary operator: numpy broadcasting over
/// operands of equal rank. Emits an error at `location` when the operands
/// cannot broadcast.
LogicalResult inferBroadcastResultType(std::optional<Location> location,
                                       Value lhs, Value rhs,
                                       SmallVectorImpl<Type> &results);

} // namespace mlir::tract

#define GET_OP_CLASSES
#include "dialects/tract/TractOps.h.inc"

#endif // DIALECTS_TRACT_TRACTOPS_H
