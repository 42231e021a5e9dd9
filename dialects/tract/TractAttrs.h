#ifndef DIALECTS_TRACT_TRACTATTRS_H
#define DIALECTS_TRACT_TRACTATTRS_H

#include "dialects/tdim/TDim.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "dialects/tract/TractEnums.h.inc"

namespace mlir::tract::detail {
/// The storage of DimsAttr and ShapeAttr (TractAttrs.cpp).
struct TDimListStorage;
} // namespace mlir::tract::detail

#define GET_ATTRDEF_CLASSES
#include "dialects/tract/TractAttrs.h.inc"

#endif // DIALECTS_TRACT_TRACTATTRS_H
