//===- RecurrentOps.cpp - ONNX Recurrent operators
//---------------------------------===//

#include "frontends/onnx/NodeContext.h"

using namespace mlir;
using namespace mlir::tract;
using namespace mlir::tract::onnx;

void mlir::tract::onnx::registerRecurrentOps(OpRegistry &registry) {}
