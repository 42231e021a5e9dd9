//===- ArrayLowering.cpp - tract axis, shape, slicing, indexing and generator
// ops ------===//

#include "lowering/LoweringUtils.h"

#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"

using namespace mlir;
using namespace mlir::tract;

void mlir::tract::populateArrayLoweringPatterns(const TypeConverter &converter,
                                                const SymbolValueMap &symbols,
                                                RewritePatternSet &patterns) {}
