//===- SignalOps.cpp - ONNX signal-processing operators -------------------===//
//
// The window generators (Hann, Hamming, Blackman): a range over the window
// length, then cosine terms. The length is a runtime scalar, so the window's
// size is a symbol unless the length is known at import.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/NodeContext.h"

#include "frontends/onnx/GraphImporter.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tract;
using namespace mlir::tract::onnx;

namespace {

using Outputs = SmallVectorImpl<Value>;

/// a0 - a1 cos(2πn/N) + a2 cos(4πn/N), n in [0, size), N = size when
/// periodic, size - 1 otherwise.
OpHandler cosineWindow(double a0, double a1, double a2) {
  return [=](NodeContext &ctx, Outputs &outputs) -> LogicalResult {
    Value size = ctx.input(0);
    if (!size)
      return failure();
    if (NodeContext::rank(size) != 0)
      return ctx.error("the window size must be a scalar");
    std::string dtypeName;
    Type type = convertDataType(ctx.getContext(),
                                ctx.getInt("output_datatype", 1), dtypeName);
    if (!type || !isa<FloatType>(type))
      return ctx.unsupported("output_datatype " +
                             (type ? NodeContext::typeName(type) : dtypeName));
    TDim length = ctx.freshSymbol("window");
    if (std::optional<SmallVector<TDim>> dims = ctx.getDims(0);
        dims && dims->size() == 1)
      length = dims->front();
    Type indexType = NodeContext::elementType(size);
    Value n = ctx.create<RangeOp>(ctx.intScalar(indexType, 0), size,
                                  ctx.intScalar(indexType, 1),
                                  DimAttr::get(ctx.getContext(), length));
    n = ctx.castTo(n, type);
    Value period = ctx.castTo(size, type);
    if (!ctx.getInt("periodic", 1))
      period = ctx.binary<SubOp>(period, ctx.scalar(type, 1.0));
    // phase = 2πn / N
    Value phase =
        ctx.binary<DivOp>(ctx.binary<MulOp>(n, ctx.scalar(type, 2 * M_PI, 1)),
                          ctx.create<AddAxisOp>(period, int64_t(0)));
    Value window = ctx.binary<SubOp>(
        ctx.scalar(type, a0, 1),
        ctx.binary<MulOp>(ctx.scalar(type, a1, 1), ctx.create<CosOp>(phase)));
    if (a2 != 0)
      window = ctx.binary<AddOp>(
          window, ctx.binary<MulOp>(ctx.scalar(type, a2, 1),
                                    ctx.create<CosOp>(ctx.binary<MulOp>(
                                        phase, ctx.scalar(type, 2.0, 1)))));
    outputs.push_back(window);
    return success();
  };
}

} // namespace

void mlir::tract::onnx::registerSignalOps(OpRegistry &registry) {
  registry.add("HannWindow", 17, cosineWindow(0.5, 0.5, 0));
  registry.add("HammingWindow", 17, cosineWindow(25.0 / 46, 21.0 / 46, 0));
  registry.add("BlackmanWindow", 17, cosineWindow(0.42, 0.5, 0.08));
}
