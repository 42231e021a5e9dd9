//===- TractInference.cpp - re-inferring result types ---------------------===//
//
// An op's result types recomputed from its operands' (after an input fact
// changed, or a pass rewrote its operands): each op's own inference, and
// for scan and if the inference of their regions.
//
//===----------------------------------------------------------------------===//

#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"

#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

using namespace mlir;
using namespace mlir::tract;

namespace {

/// Gives `op`'s results the types `types`.
void setResultTypes(Operation *op, TypeRange types) {
  for (auto [result, type] : llvm::zip_equal(op->getResults(), types))
    result.setType(keepQuantization(type, result.getType()));
}

/// A scan's body sees its states and full inputs as they are and a chunk
/// of each scanned input; its results are the final states and the
/// scanned outputs stacked over the iterations.
LogicalResult inferScan(ScanOp scan) {
  int64_t numStates = scan.getNumStates();
  ArrayRef<int64_t> scanAxes = scan.getScanAxes(),
                    chunks = scan.getScanChunks();
  ArrayRef<int64_t> outputAxes = scan.getOutputAxes();
  Block &body = scan.getBody().front();
  int64_t numScans = scanAxes.size();
  if (chunks.size() != scanAxes.size() ||
      body.getNumArguments() != scan.getInputs().size() ||
      numStates + numScans > static_cast<int64_t>(body.getNumArguments()))
    return scan.emitOpError("is malformed");

  std::optional<TDim> iterations;
  for (auto [index, input] : llvm::enumerate(scan.getInputs())) {
    Type type = input.getType();
    int64_t scanIndex = static_cast<int64_t>(index) - numStates;
    if (scanIndex >= 0 && scanIndex < numScans) {
      Shape shape = getShape(input);
      int64_t axis = scanAxes[scanIndex], chunk = std::abs(chunks[scanIndex]);
      if (failed(checkAxis(scan.getLoc(), axis, shape.size(), "scan axis")))
        return failure();
      if (chunk == 0)
        return scan.emitOpError("scan chunks must not be 0");
      TDim count = shape[axis].ceilDiv(chunk);
      if (iterations && *iterations != count)
        return scan.emitOpError("scanned inputs disagree on the iteration "
                                "count: ")
               << iterations->toString() << " and " << count.toString();
      iterations = count;
      shape[axis] = TDim(chunk);
      type = getTensorTypeLike(input.getType(), shape);
    }
    body.getArgument(index).setType(type);
  }
  if (failed(inferBlockResultTypes(body)))
    return failure();

  auto yield = cast<YieldOp>(body.getTerminator());
  size_t numOutputs = numStates + outputAxes.size();
  if (yield.getValues().size() != numOutputs ||
      scan.getNumResults() != numOutputs)
    return scan.emitOpError("is malformed");
  SmallVector<Type> types;
  for (auto [index, yielded] : llvm::enumerate(yield.getValues())) {
    if (static_cast<int64_t>(index) < numStates) {
      // A state keeps its shape from one iteration to the next.
      if (yielded.getType() != scan.getInputs()[index].getType())
        return scan.emitOpError("state ")
               << index << " starts as " << scan.getInputs()[index].getType()
               << " but the body yields " << yielded.getType();
      types.push_back(yielded.getType());
      continue;
    }
    Shape shape = getShape(yielded);
    int64_t axis = outputAxes[index - numStates];
    if (failed(checkAxis(scan.getLoc(), axis, shape.size(), "output axis")))
      return failure();
    if (!iterations)
      return scan.emitOpError("scanned outputs need a scanned input");
    shape[axis] = shape[axis] * *iterations;
    types.push_back(getTensorTypeLike(yielded, shape));
  }
  setResultTypes(scan, types);
  return success();
}

/// Both regions of an if must yield the same types, which become the
/// results'.
LogicalResult inferIf(IfOp op) {
  if (failed(inferBlockResultTypes(op.getThenRegion().front())) ||
      failed(inferBlockResultTypes(op.getElseRegion().front())))
    return failure();
  auto thenYield = cast<YieldOp>(op.getThenRegion().front().getTerminator());
  auto elseYield = cast<YieldOp>(op.getElseRegion().front().getTerminator());
  TypeRange thenTypes = thenYield.getValues().getTypes();
  TypeRange elseTypes = elseYield.getValues().getTypes();
  if (thenTypes.size() != op.getNumResults() ||
      elseTypes.size() != op.getNumResults())
    return op.emitOpError("is malformed");
  for (auto [index, types] : llvm::enumerate(llvm::zip(thenTypes, elseTypes)))
    if (std::get<0>(types) != std::get<1>(types))
      return op.emitOpError("result ")
             << index << " is " << std::get<0>(types)
             << " in the then region but " << std::get<1>(types)
             << " in the else region";
  setResultTypes(op, thenTypes);
  return success();
}

} // namespace

LogicalResult mlir::tract::inferOpResultTypes(Operation *op) {
  if (auto scan = dyn_cast<ScanOp>(op))
    return inferScan(scan);
  if (auto ifOp = dyn_cast<IfOp>(op))
    return inferIf(ifOp);
  // A cast changes the element type only.
  if (auto cast = dyn_cast<CastOp>(op)) {
    cast.getOutput().setType(
        getTensorType(op->getContext(), getShape(cast.getInput()),
                      getElementTypeOrSelf(cast.getOutput().getType())));
    return success();
  }
  auto inference = dyn_cast<InferTypeOpInterface>(op);
  if (!inference)
    return success();
  SmallVector<Type> types;
  if (failed(inference.inferReturnTypes(
          op->getContext(), op->getLoc(), op->getOperands(),
          op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
          op->getRegions(), types)))
    return failure();
  setResultTypes(op, types);
  return success();
}

LogicalResult mlir::tract::inferBlockResultTypes(Block &block) {
  for (Operation &op : block)
    if (failed(inferOpResultTypes(&op)))
      return failure();
  return success();
}
