//===- TractOps.cpp - the generated op classes ----------------------------===//
//
// Op semantics live in the family files (TractElementwiseOps.cpp,
// TractArrayOps.cpp, TractNNOps.cpp, TractControlOps.cpp,
// TractStreamingOps.cpp); this file instantiates what ODS generates.
//
//===----------------------------------------------------------------------===//

#include "dialects/tract/TractOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::tract;

#include "dialects/tract/TractEnums.cpp.inc"
#include "dialects/tract/TractInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "dialects/tract/TractOps.cpp.inc"
