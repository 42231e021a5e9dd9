//===- Attention.h - onnxruntime's packed attention -------------*- C++ -*-===//
//
// com.microsoft's Attention and QAttention (BERT-style encoders as
// onnxruntime's transformer optimizer fuses them) project the input to
// queries, keys and values packed on one axis, then attend; the two differ
// only in the projection, float or 8-bit.
//
//===----------------------------------------------------------------------===//

#ifndef FRONTENDS_ONNX_OPS_ATTENTION_H
#define FRONTENDS_ONNX_OPS_ATTENTION_H

#include "frontends/onnx/NodeContext.h"

namespace mlir::tract::onnx {

/// Attends with the projection `qkv` (B, S, Dq + Dk + Dv, f32; the sizes
/// from `qkv_hidden_sizes`, else three equal thirds) split into
/// `num_heads` heads: `maskIndex` (null, or the node's mask_index: 1-D
/// right-padding ends (B), a raw 2-D (B, S) or 3-D (B, S, S) mask of ones
/// to attend, the others masked with `mask_filter_value`), an additive
/// `attentionBias` (null, or broadcasting to (B, N, S, S)), `unidirectional`
/// for causal attention and `scale`. Pushes the output (B, S, Dv); a past
/// or present (key-value cache) is refused by the caller.
LogicalResult attendPacked(NodeContext &ctx, Value qkv, Value maskIndex,
                           Value attentionBias,
                           SmallVectorImpl<Value> &outputs);

} // namespace mlir::tract::onnx

#endif // FRONTENDS_ONNX_OPS_ATTENTION_H
