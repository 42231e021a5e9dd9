#ifndef DIALECTS_TRACT_TRACTOPS_H
#define DIALECTS_TRACT_TRACTOPS_H

#include "dialects/tract/TractAttrs.h"
#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractInterfaces.h"
#include "dialects/tract/TractQuant.h"
#include "dialects/tract/TractShapes.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <map>

namespace mlir::tract {

/// Result type of a broadcasting element-wise operator: numpy broadcasting
/// over operands of equal rank. The element type is the last operand's, or
/// i1 for predicates. Emits an error at `location` (when given) otherwise.
LogicalResult inferBroadcastResultType(std::optional<Location> location,
                                       ValueRange operands, bool boolResult,
                                       SmallVectorImpl<Type> &results);

} // namespace mlir::tract

#define GET_OP_CLASSES
#include "dialects/tract/TractOps.h.inc"

#endif // DIALECTS_TRACT_TRACTOPS_H
