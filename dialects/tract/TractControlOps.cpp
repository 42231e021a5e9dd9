//===- TractControlOps.cpp - scan and if ----------------------------------===//

#include "dialects/tract/TractOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::tract;

namespace {

/// Checks that a region's yield matches `types`.
LogicalResult verifyYield(Operation *op, Region &region, TypeRange types,
                          StringRef what) {
  auto yield = cast<YieldOp>(region.front().getTerminator());
  if (yield.getValues().getTypes() != types)
    return op->emitOpError()
           << what << " yields " << yield.getValues().size()
           << " values of types " << yield.getValues().getTypes()
           << ", expected " << types;
  return success();
}

} // namespace

LogicalResult ScanOp::verifyRegions() {
  int64_t numStates = getNumStates();
  ArrayRef<int64_t> scanAxes = getScanAxes(), chunks = getScanChunks();
  ArrayRef<int64_t> outputAxes = getOutputAxes();
  ValueRange inputs = getInputs();
  int64_t numScans = scanAxes.size();
  if (static_cast<int64_t>(chunks.size()) != numScans)
    return emitOpError("expected one chunk per scan axis, got ")
           << chunks.size() << " chunks for " << numScans << " axes";
  if (numStates + numScans > static_cast<int64_t>(inputs.size()))
    return emitOpError("has ")
           << inputs.size() << " inputs, fewer than its " << numStates
           << " states and " << numScans << " scanned inputs";
  Block &body = getBody().front();
  if (body.getNumArguments() != inputs.size())
    return emitOpError("body takes ")
           << body.getNumArguments() << " arguments, expected "
           << inputs.size();

  // The body sees states and full inputs as they are, scanned inputs as
  // chunks; every scanned input must give the same number of iterations.
  std::optional<TDim> iterations;
  for (auto [index, input] : llvm::enumerate(inputs)) {
    Type expected = input.getType();
    int64_t scan = static_cast<int64_t>(index) - numStates;
    if (scan >= 0 && scan < numScans) {
      Shape shape = getShape(input);
      int64_t axis = scanAxes[scan], chunk = std::abs(chunks[scan]);
      if (axis < 0 || axis >= static_cast<int64_t>(shape.size()))
        return emitOpError("scan axis ")
               << axis << " is out of range for input " << index;
      if (chunk == 0)
        return emitOpError("scan chunks must not be 0");
      TDim count = shape[axis].ceilDiv(chunk);
      if (iterations && *iterations != count)
        return emitOpError("scanned inputs disagree on the iteration count: ")
               << iterations->toString() << " and " << count.toString();
      iterations = count;
      shape[axis] = TDim(chunk);
      expected = getTensorTypeLike(input.getType(), shape);
    }
    if (body.getArgument(index).getType() != expected)
      return emitOpError("body argument ")
             << index << " has type " << body.getArgument(index).getType()
             << ", expected " << expected;
  }

  size_t numOutputs = numStates + outputAxes.size();
  if (getNumResults() != numOutputs)
    return emitOpError("has ")
           << getNumResults() << " results, expected " << numOutputs
           << " (states, then scanned "
              "outputs)";
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().size() != numOutputs)
    return emitOpError("body yields ")
           << yield.getValues().size() << " values, expected " << numOutputs;
  if (!outputAxes.empty() && !iterations)
    return emitOpError("scanned outputs need a scanned input");
  for (size_t i = 0; i < numOutputs; ++i) {
    Type yielded = yield.getValues()[i].getType();
    Type expected = yielded;
    if (i < static_cast<size_t>(numStates)) {
      if (yielded != inputs[i].getType())
        return emitOpError("state ")
               << i << " is yielded as " << yielded << " but starts as "
               << inputs[i].getType();
    } else {
      Shape shape = getShape(yielded);
      int64_t axis = outputAxes[i - numStates];
      if (axis < 0 || axis >= static_cast<int64_t>(shape.size()))
        return emitOpError("output axis ") << axis << " is out of range";
      shape[axis] = shape[axis] * *iterations;
      expected = getTensorTypeLike(yielded, shape);
    }
    if (getResult(i).getType() != expected)
      return emitOpError("result ")
             << i << " has type " << getResult(i).getType() << ", expected "
             << expected;
  }
  return success();
}

LogicalResult IfOp::verifyRegions() {
  if (volume(getShape(getCond())) != TDim(1))
    return emitOpError("condition must have one element");
  if (failed(verifyYield(*this, getThenRegion(), getResultTypes(),
                         "the then region")) ||
      failed(verifyYield(*this, getElseRegion(), getResultTypes(),
                         "the else region")))
    return failure();
  return success();
}

bool ScanOp::runsOnce() {
  if (getScanAxes().empty())
    return false;
  Block &body = getBody().front();
  for (auto [index, input] : llvm::enumerate(getInputs()))
    if (input.getType() != body.getArgument(index).getType())
      return false;
  return true;
}
