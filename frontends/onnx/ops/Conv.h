//===- Conv.h - the ONNX convolution shared by its variants -----*- C++ -*-===//
//
// Conv, ConvInteger and QLinearConv share their attributes (strides,
// dilations, pads, auto_pad, group, kernel_shape); the quantized variants
// build their integer convolution through the same translation.
//
//===----------------------------------------------------------------------===//

#ifndef FRONTENDS_ONNX_OPS_CONV_H
#define FRONTENDS_ONNX_OPS_CONV_H

#include "frontends/onnx/NodeContext.h"

namespace mlir::tract::onnx {

/// The spatial attributes of a convolution or pool in tract's terms.
struct Window {
  SmallVector<int64_t> strides, dilations, before, after;
  Padding padding = Padding::Valid;
};

/// Reads strides, dilations, auto_pad and pads for `spatialRank` axes.
/// Zero explicit pads become valid padding unless `keepExplicit` (ceil
/// mode, where tract's valid padding does not round up).
FailureOr<Window> readWindow(NodeContext &ctx, int64_t spatialRank,
                             bool keepExplicit = false);

/// A `tract.conv` of `x` by kernel `w` (and optional bias `b`) with the
/// node's convolution attributes; null (with the reason recorded) when they
/// are invalid.
Value buildConv(NodeContext &ctx, Value x, Value w, Value b);

/// AveragePool's `tract.sum_pool` of `x` (N, C, spatial…) with the node's
/// attributes; null (with the reason recorded) when they are invalid.
Value buildAveragePool(NodeContext &ctx, Value x);

} // namespace mlir::tract::onnx

#endif // FRONTENDS_ONNX_OPS_CONV_H
