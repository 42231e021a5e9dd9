//===- ValueShapes.h - shapes that only run-time values decide --*- C++ -*-===//
//
// ONNX passes some shapes and axes as tensors; when such a tensor is a graph
// input, its values are only known when the model runs. The output shape is
// then computed on the values with tract ops, bound to fresh symbols by
// tract.bind_dims, and the ops downstream compile once for all values. The
// helpers here build those computations for the handlers that need them
// (Reshape, Unsqueeze, Squeeze, the reductions).
//
//===----------------------------------------------------------------------===//

#ifndef FRONTENDS_ONNX_OPS_VALUESHAPES_H
#define FRONTENDS_ONNX_OPS_VALUESHAPES_H

#include "frontends/onnx/NodeContext.h"

namespace mlir::tract::onnx {

/// The positions 0, 1, ... of axis `axis` of `input` (i64), laid along
/// axis `at` of a tensor of rank `rank` whose other dims are 1: a constant
/// when the dim is known, a tract.range of it otherwise.
Value axisPositions(NodeContext &ctx, Value input, int64_t axis, int64_t at,
                    int64_t rank);

/// The `rank` flags (a 1-D i1 tensor) of the axes that `axes`, a 1-D integer
/// tensor of run-time values, names; negative axes count from the end.
Value axisFlags(NodeContext &ctx, Value axes, int64_t rank);

/// The elements of `dims` (a 1-D i64 tensor) whose flag is off, in order:
/// a 1-D i64 tensor of `count` elements (the model promises that many).
Value unflaggedDims(NodeContext &ctx, Value dims, Value flags, int64_t count);

/// The dims of `input` with unit dims inserted where `flags` (one per
/// output axis) is on: the output shape of an Unsqueeze.
Value dimsWithUnitsAt(NodeContext &ctx, Value input, Value flags);

/// The axis a split node (Split, SplitToSequence) cuts its input 0 along
/// (`axis`, 0 by default), with the input's dim there.
struct SplitAxis {
  Value input;
  int64_t axis;
  TDim dim;
};
FailureOr<SplitAxis> getSplitAxis(NodeContext &ctx);

/// The sizes of the parts a split of `dim` into `sizes` (a 1-D integer
/// tensor of run-time values, of static length) makes: bound dims, the
/// last part taking what the others leave (the model promises they add
/// up); parts of 0 for an empty dim. Null when `sizes` has no static
/// length.
std::optional<SmallVector<TDim>>
splitSizesFromValues(NodeContext &ctx, Value sizes, const TDim &dim);

/// `input` reshaped to `dims`, which only run-time values decide: flattened,
/// taken as the volume of `dims` (the model's promise, recorded as an
/// assertion), and split.
Value reshapeToBoundDims(NodeContext &ctx, Value input, ArrayRef<TDim> dims);

} // namespace mlir::tract::onnx

#endif // FRONTENDS_ONNX_OPS_VALUESHAPES_H
