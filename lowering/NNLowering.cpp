//===- NNLowering.cpp - tract einsum, convolutions, pools, reductions and
// normalizations ------===//

#include "lowering/LoweringUtils.h"

#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"

using namespace mlir;
using namespace mlir::tract;

void mlir::tract::populateNNLoweringPatterns(const TypeConverter &converter,
                                             const SymbolValueMap &symbols,
                                             RewritePatternSet &patterns) {}
