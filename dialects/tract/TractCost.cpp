//===- TractCost.cpp - what one run of a tract op costs -------------------===//
//
// The helpers the ops' CostOpInterface implementations share, then the
// implementations, family by family.
//

#include "dialects/tract/TractCost.h"

#include "dialects/tract/EinsumExpr.h"
#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"

#include <map>

using namespace mlir;
using namespace mlir::tract;

namespace {

/// The number of elements of a value (1 for a non-tensor).
TDim elementCount(Value value) {
  if (!isTractTensorType(value.getType()))
    return TDim(1);
  return volume(getShape(value));
}

int64_t elementBytes(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    type = tensor.getElementType();
  type = getStorageType(type); // quantized values are their integers
  if (type.isIntOrFloat())
    return (type.getIntOrFloatBitWidth() + 7) / 8;
  return 8;
}

TDim byteCount(Value value) {
  return elementCount(value) * TDim(elementBytes(value.getType()));
}

TDim totalBytes(ValueRange values) {
  TDim total;
  for (Value value : values)
    total += byteCount(value);
  return total;
}

/// Reads every operand, writes every result.
TDim operandAndResultBytes(Operation *op) {
  return totalBytes(op->getOperands()) + totalBytes(op->getResults());
}

/// Ops that keep part of their first operand read only what they keep,
/// plus their other operands (indices, bounds).
TDim selectionBytes(Operation *op) {
  return totalBytes(op->getOperands().drop_front()) +
         TDim(2) * totalBytes(op->getResults());
}

OpCost elementwise(Operation *op) {
  return {elementCount(op->getResult(0)), operandAndResultBytes(op)};
}

OpCost dataMovement(Operation *op) {
  return {TDim(0), operandAndResultBytes(op)};
}

/// 2 per point of the iteration space of a two-operand contraction; in
/// general, one multiplication per extra operand and one addition when
/// some axis is summed.
OpCost einsumCost(EinsumOp op) {
  EinsumExpr parsed = EinsumExpr::parse(op.getExpr());
  std::map<char, TDim> dims = op.getLetterSizes();
  TDim points(1);
  for (auto &[letter, dim] : dims)
    points *= dim;
  int64_t perPoint = static_cast<int64_t>(parsed.inputs.size()) - 1 +
                     (parsed.hasSummedAxes() ? 1 : 0);
  return {points * TDim(perPoint), operandAndResultBytes(op)};
}

/// The kernel's volume per output channel: in_channels/group * spatial.
TDim kernelVolumePerChannel(Value kernel) {
  Shape shape = getShape(kernel);
  return volume(ArrayRef<TDim>(shape).drop_front());
}

OpCost convCost(ConvOp op) {
  TDim outputs = elementCount(op.getOutput());
  // A channels-last kernel (k…, C/group, O) has its output channels last.
  Shape kernel = getShape(op.getKernel());
  TDim perChannel = op.getChannelsLast()
                        ? volume(ArrayRef<TDim>(kernel).drop_back())
                        : volume(ArrayRef<TDim>(kernel).drop_front());
  TDim flops = TDim(2) * outputs * perChannel;
  if (op.getBias())
    flops += outputs;
  return {flops, operandAndResultBytes(op)};
}

OpCost deconvCost(DeconvOp op) {
  // Each input element scatters into out_channels/group * spatial outputs.
  TDim flops = TDim(2) * elementCount(op.getInput()) *
               kernelVolumePerChannel(op.getKernel());
  if (op.getBias())
    flops += elementCount(op.getOutput());
  return {flops, operandAndResultBytes(op)};
}

TDim windowVolume(ArrayRef<int64_t> kernelShape) {
  int64_t volume = 1;
  for (int64_t size : kernelShape)
    volume *= size;
  return TDim(volume);
}

OpCost reduceCost(ReduceOp op) {
  TDim inputs = elementCount(op.getInput());
  TDim flops =
      op.getReducer() == Reducer::MeanOfSquares ? TDim(2) * inputs : inputs;
  return {flops, operandAndResultBytes(op)};
}

/// Per output element, 2 per interpolation point: 2^k points for linear and
/// 4^k for cubic over the k resized axes; nearest only gathers.
OpCost resizeCost(ResizeOp op) {
  if (op.getInterpolator() == Interpolator::Nearest)
    return {TDim(0), operandAndResultBytes(op)};
  int64_t pointsPerAxis = op.getInterpolator() == Interpolator::Linear ? 2 : 4;
  int64_t points = 1;
  for (auto [in, out] :
       llvm::zip(getShape(op.getInput()), getShape(op.getOutput())))
    if (in != out)
      points *= pointsPerAxis;
  return {TDim(2 * points) * elementCount(op.getOutput()),
          operandAndResultBytes(op)};
}

/// Per output element, the coordinates (about 10 per spatial axis), then
/// 2 per cell read: 2^r for linear, 4^r for cubic, 1 for nearest.
OpCost gridSampleCost(GridSampleOp op) {
  int64_t spatial = static_cast<int64_t>(getShape(op.getInput()).size()) - 2;
  int64_t perAxis = op.getInterpolator() == Interpolator::Nearest  ? 1
                    : op.getInterpolator() == Interpolator::Linear ? 2
                                                                   : 4;
  int64_t cells = 1;
  for (int64_t i = 0; i < spatial; ++i)
    cells *= perAxis;
  return {TDim(10 * spatial + 2 * cells) * elementCount(op.getOutput()),
          operandAndResultBytes(op)};
}

/// Scores (2*d per query-key pair), scaling and masking, softmax (5 per
/// score), then the weighted sum of values (2*d_v per pair).
OpCost sdpaCost(SdpaOp op) {
  Shape q = getShape(op.getQ()), k = getShape(op.getK()),
        v = getShape(op.getV());
  TDim queries = volume(ArrayRef<TDim>(q).drop_back());
  TDim pairs = queries * k[k.size() - 2];
  TDim perPair = TDim(2) * q.back() + TDim(2) * v.back() + TDim(6);
  if (op.getMask())
    perPair += TDim(1);
  return {pairs * perPair, operandAndResultBytes(op)};
}

std::optional<OpCost> blockCost(Block &block) {
  OpCost total{TDim(0), TDim(0)};
  for (Operation &op : block.without_terminator())
    if (std::optional<OpCost> cost = getOpCost(&op))
      total += *cost;
  return total;
}

OpCost scanCost(ScanOp op) {
  OpCost body = *blockCost(op.getBody().front());
  TDim iterations(1);
  if (!op.getScanAxes().empty()) {
    Value first = op.getInputs()[op.getNumStates()];
    iterations = getShape(first)[op.getScanAxes()[0]].ceilDiv(
        std::abs(op.getScanChunks()[0]));
  }
  return {iterations * body.flops, iterations * body.bytes};
}

OpCost ifCost(IfOp op) {
  OpCost thenCost = *blockCost(op.getThenRegion().front());
  OpCost elseCost = *blockCost(op.getElseRegion().front());
  return {TDim::max({thenCost.flops, elseCost.flops}),
          byteCount(op.getCond()) +
              TDim::max({thenCost.bytes, elseCost.bytes})};
}

/// Scatters with a reduction combine each update with the data.
template <typename OpTy> OpCost scatterCost(OpTy op) {
  bool combines = op.getReduction() != ScatterReduction::None;
  return {combines ? elementCount(op.getUpdates()) : TDim(0),
          operandAndResultBytes(op)};
}

} // namespace

//===----------------------------------------------------------------------===//
// The ops' costs
//===----------------------------------------------------------------------===//

// add_axis, rm_axis and reshape become views, constants are compiled in.
OpCost ConstOp::getCost() { return {TDim(0), TDim(0)}; }
OpCost AddAxisOp::getCost() { return {TDim(0), TDim(0)}; }
OpCost RmAxisOp::getCost() { return {TDim(0), TDim(0)}; }
OpCost ReshapeOp::getCost() { return {TDim(0), TDim(0)}; }

OpCost SliceOp::getCost() { return {TDim(0), selectionBytes(*this)}; }
OpCost DynSliceOp::getCost() { return {TDim(0), selectionBytes(*this)}; }
OpCost DownsampleOp::getCost() { return {TDim(0), selectionBytes(*this)}; }
OpCost GatherOp::getCost() { return {TDim(0), selectionBytes(*this)}; }
OpCost GatherElementsOp::getCost() { return {TDim(0), selectionBytes(*this)}; }
OpCost GatherNdOp::getCost() { return {TDim(0), selectionBytes(*this)}; }

OpCost ScatterElementsOp::getCost() { return scatterCost(*this); }
OpCost ScatterNdOp::getCost() { return scatterCost(*this); }

OpCost EinsumOp::getCost() { return einsumCost(*this); }
OpCost ConvOp::getCost() { return convCost(*this); }
OpCost DeconvOp::getCost() { return deconvCost(*this); }

OpCost MaxPoolOp::getCost() {
  return {elementCount(getOutput()) * windowVolume(getKernelShape()),
          operandAndResultBytes(*this)};
}

OpCost SumPoolOp::getCost() {
  TDim outputs = elementCount(getOutput());
  TDim flops = outputs * windowVolume(getKernelShape());
  if (getNormalize())
    flops += outputs;
  return {flops, operandAndResultBytes(*this)};
}

OpCost ReduceOp::getCost() { return reduceCost(*this); }

// max, subtract, exp, sum, then divide (or subtract the log).
OpCost SoftmaxOp::getCost() {
  return {TDim(5) * elementCount(getInput()), operandAndResultBytes(*this)};
}
OpCost LogSoftmaxOp::getCost() {
  return {TDim(5) * elementCount(getInput()), operandAndResultBytes(*this)};
}

OpCost RmsNormOp::getCost() {
  return {TDim(3) * elementCount(getInput()), operandAndResultBytes(*this)};
}

// A multiply-add per input row and weight, and the weights' bytes once.
OpCost BlockQuantMatmulOp::getCost() {
  return {TDim(2) * elementCount(getInput()) * getShape(getWeights())[0],
          operandAndResultBytes(*this)};
}

// A multiply-add per input value and channel.
OpCost QuantMatmulOp::getCost() {
  Shape weights = getShape(getWeights());
  return {TDim(2) * elementCount(getInput()) *
              weights[getWeightsLeft() ? 0 : 1],
          operandAndResultBytes(*this)};
}

// A multiply-add per output, tap and input channel.
OpCost QuantConvOp::getCost() {
  Shape weights = getShape(getWeights());
  TDim perOutput = getChannelsLast() ? weights[0] * weights[1] * weights[2]
                                     : weights[1] * weights[2] * weights[3];
  return {TDim(2) * elementCount(getOutput()) * perOutput,
          operandAndResultBytes(*this)};
}

// A multiply-add per output and tap.
OpCost QuantDepthwiseOp::getCost() {
  Shape weights = getShape(getWeights());
  return {TDim(2) * elementCount(getOutput()) * weights[1] * weights[2],
          operandAndResultBytes(*this)};
}

// Per state value: three adds and a mul for the gates, two sigmoids and a
// tanh, and the update's sub, two muls and an add.
OpCost GruEpilogueOp::getCost() {
  return {TDim(11) * elementCount(getOutput()), operandAndResultBytes(*this)};
}

// Per step and value head, over its w x w state: the decay, the key's
// product, the rank-one update and the query's product (2 each per state
// value), plus the normalizations.
OpCost GdnRecurrentOp::getCost() {
  Shape state = getShape(getInitialState());
  Shape value = getShape(getValue());
  TDim steps = value[0] * value[1] * value[2];
  return {steps * state[2] * state[3] * TDim(7), operandAndResultBytes(*this)};
}

OpCost CausalConv1dUpdateOp::getCost() {
  // A product and a sum per tap, then the SiLU.
  TDim width = getShape(getInitialState()).back();
  return {elementCount(getOutput()) * (TDim(2) * width + TDim(4)),
          operandAndResultBytes(*this)};
}

OpCost ApplyRopeOp::getCost() {
  return {TDim(3) * elementCount(getOutput()), operandAndResultBytes(*this)};
}

OpCost TopKOp::getCost() {
  return {elementCount(getInput()), operandAndResultBytes(*this)};
}

OpCost ResizeOp::getCost() { return resizeCost(*this); }
OpCost GridSampleOp::getCost() { return gridSampleCost(*this); }
OpCost SdpaOp::getCost() { return sdpaCost(*this); }
OpCost ScanOp::getCost() { return scanCost(*this); }
OpCost IfOp::getCost() { return ifCost(*this); }

std::optional<OpCost> mlir::tract::getOpCost(Operation *op) {
  if (!isa<TractDialect>(op->getDialect()))
    return std::nullopt;
  if (auto costed = dyn_cast<CostOpInterface>(op))
    return costed.getCost();
  if (isElementwise(op))
    return elementwise(op);
  return dataMovement(op);
}
