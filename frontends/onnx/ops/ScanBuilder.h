//===- ScanBuilder.h - tract.scan for ONNX loops and recurrences -*- C++
//-*-===//
//
// Scan, Loop, LSTM, GRU and RNN all become `tract.scan`. The scan's result
// types follow from its body, so the body is built first and the types are
// derived from what it yields.
//
//===----------------------------------------------------------------------===//

#ifndef FRONTENDS_ONNX_OPS_SCANBUILDER_H
#define FRONTENDS_ONNX_OPS_SCANBUILDER_H

#include "frontends/onnx/NodeContext.h"

namespace mlir::tract::onnx {

/// An input a scan iterates over: `chunk` elements of `axis` per iteration,
/// from the end when `chunk` is negative.
struct ScannedInput {
  Value value;
  int64_t axis;
  int64_t chunk;
};

/// Builds a scan body at the builder's insertion point from the block
/// arguments (states, chunks of the scanned inputs, full inputs) and returns
/// the next states followed by one chunk per scanned output; failure when a
/// node failed (the reason is recorded in the NodeContext or the
/// diagnostics).
using ScanBodyBuilder = llvm::function_ref<FailureOr<SmallVector<Value>>(
    ValueRange states, ValueRange chunks, ValueRange full)>;

/// Builds a `tract.scan`. A negative output axis counts from the end of the
/// yielded chunk's axes. States keep their types; a scanned output's axis
/// grows to the chunk's dim times the iteration count. Returns the results:
/// final states, then scanned outputs.
FailureOr<SmallVector<Value>>
buildScan(NodeContext &ctx, ValueRange states, ArrayRef<ScannedInput> scanned,
          ValueRange full, ArrayRef<int64_t> outputAxes, ScanBodyBuilder body);

/// `value` with `axis` reversed: a gather of the indices n-1, ..., 0.
Value reverseAxis(NodeContext &ctx, Value value, int64_t axis);

} // namespace mlir::tract::onnx

#endif // FRONTENDS_ONNX_OPS_SCANBUILDER_H
