//===- TractStreamingOps.cpp - pulse and transformer operators ------------===//

#include "dialects/tract/TractOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::tract;

namespace {

LogicalResult checkValueType(std::optional<Location> location,
                             std::optional<TypedAttr> value, Value input) {
  Type elementType = getElementTypeOrSelf(input.getType());
  if (value && value->getType() != elementType)
    return emitOptionalError(location, "value of type ", value->getType(),
                             " does not match the element type ", elementType);
  return success();
}

} // namespace

LogicalResult DelayOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> location,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  if (failed(checkAxis(location, adaptor.getAxis(),
                       getShape(adaptor.getInput()).size())))
    return failure();
  Shape shape = getShape(adaptor.getInput());
  shape[adaptor.getAxis()] += TDim(adaptor.getOverlap());
  results.push_back(getTensorTypeLike(adaptor.getInput(), shape));
  return success();
}

LogicalResult PulsePadOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> location,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &results) {
  if (failed(checkAxis(location, adaptor.getAxis(),
                       getShape(adaptor.getInput()).size())) ||
      failed(checkValueType(location, adaptor.getValue(), adaptor.getInput())))
    return failure();
  if (adaptor.getValue() && adaptor.getMode() != PadMode::Constant)
    return emitOptionalError(location,
                             "a pad value only applies to constant padding");
  results.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult PulseMaskOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  if (failed(checkAxis(location, adaptor.getAxis(),
                       getShape(adaptor.getInput()).size())) ||
      failed(checkValueType(location, adaptor.getValue(), adaptor.getInput())))
    return failure();
  results.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult StreamSliceOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  Shape shape = getShape(adaptor.getInput());
  if (failed(checkAxis(location, adaptor.getAxis(), shape.size())))
    return failure();
  shape[adaptor.getAxis()] = TDim(adaptor.getPulse());
  results.push_back(getTensorTypeLike(adaptor.getInput(), shape));
  return success();
}

LogicalResult StreamPositionOp::verify() {
  Shape shape = getShape(getOutput().getType());
  if (shape.size() != 1 || shape[0] != TDim(getPulse()))
    return emitOpError("the result must be 1-D of the pulse's ")
           << getPulse() << " frames";
  return success();
}

LogicalResult SdpaOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> location,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &results) {
  Shape q = getShape(adaptor.getQ()), k = getShape(adaptor.getK()),
        v = getShape(adaptor.getV());
  size_t rank = q.size();
  if ((rank != 3 && rank != 4) || k.size() != rank || v.size() != rank)
    return emitOptionalError(location,
                             "q, k and v must all have rank 3 or "
                             "4, got ",
                             q.size(), ", ", k.size(), " and ", v.size());
  if (q.back() != k.back())
    return emitOptionalError(location, "q and k have head sizes ",
                             q.back().toString(), " and ", k.back().toString());
  if (k[rank - 2] != v[rank - 2])
    return emitOptionalError(location, "k and v have sequence lengths ",
                             k[rank - 2].toString(), " and ",
                             v[rank - 2].toString());
  if (rank == 4) {
    std::optional<int64_t> qHeads = q[1].getConstant(),
                           kvHeads = k[1].getConstant();
    if (k[1] != v[1] || (qHeads && kvHeads && *qHeads % *kvHeads))
      return emitOptionalError(location, "query heads ", q[1].toString(),
                               " must be a multiple of key/value heads ",
                               k[1].toString());
  }
  if (adaptor.getCausal() && adaptor.getMask())
    return emitOptionalError(location, "a causal sdpa takes no mask");
  Shape output(q.begin(), q.end() - 1);
  output.push_back(v.back());
  results.push_back(getTensorType(adaptor.getQ().getContext(), output,
                                  getElementTypeOrSelf(adaptor.getQ())));
  return success();
}

LogicalResult GdnRecurrentOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  Shape q = getShape(adaptor.getQuery()), k = getShape(adaptor.getKey()),
        v = getShape(adaptor.getValue()),
        decay = getShape(adaptor.getLogDecay()),
        beta = getShape(adaptor.getBeta()),
        state = getShape(adaptor.getInitialState());
  if (q.size() != 4 || k != q)
    return emitOptionalError(location,
                             "query and key must be b, S, hk, w alike");
  if (v.size() != 4 || v[0] != q[0] || v[1] != q[1] || v[3] != q[3])
    return emitOptionalError(location, "value must be b, S, hv, w with the "
                                       "query's b, S and w");
  std::optional<int64_t> keyHeads = q[2].getConstant(),
                         valueHeads = v[2].getConstant();
  if (keyHeads && valueHeads && (*keyHeads == 0 || *valueHeads % *keyHeads))
    return emitOptionalError(location, "value heads ", v[2].toString(),
                             " are not a multiple of key heads ",
                             q[2].toString());
  Shape perHead(v.begin(), v.end() - 1);
  if (decay != perHead || beta != perHead)
    return emitOptionalError(location,
                             "log_decay and beta must be b, S, hv");
  if (state.size() != 4 || state[0] != v[0] || state[1] != v[2] ||
      state[2] != q[3] || state[3] != q[3])
    return emitOptionalError(location, "initial_state must be b, hv, w, w");
  results.push_back(getTensorType(context, v,
                                  getElementTypeOrSelf(adaptor.getQuery())));
  results.push_back(adaptor.getInitialState().getType());
  return success();
}

LogicalResult CausalConv1dUpdateOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  Shape input = getShape(adaptor.getInput()),
        weight = getShape(adaptor.getWeight()),
        state = getShape(adaptor.getInitialState());
  if (input.size() != 3)
    return emitOptionalError(location, "input must be b, C, S");
  if (weight.empty())
    return emitOptionalError(location, "weight must end with the kernel axis");
  TDim values(1);
  for (const TDim &dim : weight)
    values = values * dim;
  TDim width = weight.back();
  if (values != input[1] * width)
    return emitOptionalError(location, "weight must hold C x k = ",
                             input[1].toString(), " x ", width.toString(),
                             " values");
  if (state.size() != 3 || state[0] != input[0] || state[1] != input[1] ||
      state[2] != width)
    return emitOptionalError(location, "initial_state must be b, C, k = ",
                             input[0].toString(), ", ", input[1].toString(),
                             ", ", width.toString());
  results.push_back(adaptor.getInput().getType());
  results.push_back(adaptor.getInitialState().getType());
  return success();
}

LogicalResult ApplyRopeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  Shape input = getShape(adaptor.getInput());
  if (input.empty())
    return emitOptionalError(location, "apply_rope needs rank >= 1");
  if (std::optional<int64_t> last = input.back().getConstant();
      last && *last % 2)
    return emitOptionalError(location, "the rotated axis has odd size ", *last);
  for (Value table : {adaptor.getCos(), adaptor.getSin()})
    if (getShape(table).size() != input.size())
      return emitOptionalError(location,
                               "cos and sin must have the input's rank");
  results.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult DynKvCacheOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> location,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &results) {
  if (failed(checkAxis(location, adaptor.getAxis(),
                       getShape(adaptor.getInput()).size())))
    return failure();
  Shape shape = getShape(adaptor.getInput());
  shape[adaptor.getAxis()] += adaptor.getPast().getValue();
  results.push_back(getTensorTypeLike(adaptor.getInput(), shape));
  return success();
}
