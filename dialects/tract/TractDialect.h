#ifndef DIALECTS_TRACT_TRACTDIALECT_H
#define DIALECTS_TRACT_TRACTDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/tract/TractDialect.h.inc"

#endif // DIALECTS_TRACT_TRACTDIALECT_H
