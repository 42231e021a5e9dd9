//===- QdqFusion.h - quantize-dequantize pairs as integer ops ---*- C++ -*-===//
//
// onnxruntime's quantizer writes a quantized model as float ops between
// DequantizeLinear and QuantizeLinear nodes (the QDQ form). Run as written,
// such a model computes in float: right-looking numbers at float speed.
// Before the import, each float product whose inputs are dequantized and
// whose result is quantized becomes the QOperator node that means the same
// (QLinearConv, QLinearMatMul), which the import lowers to integer kernels.
//
//===----------------------------------------------------------------------===//

#ifndef FRONTENDS_ONNX_QDQFUSION_H
#define FRONTENDS_ONNX_QDQFUSION_H

namespace onnx {
class GraphProto;
} // namespace onnx

namespace mlir::tract::onnx {

/// Rewrites in `graph` (not its subgraphs) each
///   DequantizeLinear(x), DequantizeLinear(w) [, DequantizeLinear(b)]
///     -> Conv [-> Relu or Clip] -> QuantizeLinear
/// into a QLinearConv, then the activation on the quantized values
/// (quantizing is monotonic: the quantized max(y, lo) is the maximum of y
/// quantized and lo quantized; Relu's floor is the zero point),
/// the same around MatMul into a QLinearMatMul, and around Gemm (beta 1,
/// A not transposed, an int32 bias if any) into com.microsoft's QGemm. A pattern is left as it
/// is when a value inside it is used elsewhere or is a graph output, when
/// the bias is not dequantized int32, when the weights' per-channel axis is
/// not the output channel's, or when a dequantization is blocked. Returns
/// the number of nodes fused. And DequantizeLinear -> MaxPool ->
/// QuantizeLinear of the same parameters becomes the MaxPool on the
/// quantized tensor.
int fuseQdqProducts(::onnx::GraphProto &graph);

} // namespace mlir::tract::onnx

#endif // FRONTENDS_ONNX_QDQFUSION_H
