//===- ControlLowering.cpp - tract scan and if ------===//

#include "lowering/LoweringUtils.h"

#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"

using namespace mlir;
using namespace mlir::tract;

void mlir::tract::populateControlLoweringPatterns(
    const TypeConverter &converter, const SymbolValueMap &symbols,
    RewritePatternSet &patterns) {}
