#include "dialects/tract/TractDialect.h"

#include "dialects/tract/TractOps.h"

using namespace mlir;
using namespace mlir::tract;

#include "dialects/tract/TractDialect.cpp.inc"

void TractDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "dialects/tract/TractOps.cpp.inc"
      >();
}

Operation *TractDialect::materializeConstant(OpBuilder &builder,
                                             Attribute value, Type type,
                                             Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstOp::create(builder, loc, type, elements);
}
