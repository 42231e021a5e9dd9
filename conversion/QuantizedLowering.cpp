//===- QuantizedLowering.cpp - tract's quantized types as integers --------===//
//
// Before the conversion to linalg, values of quantized types (QU8, QI8,
// QI32: `!quant.uniform<u8:f32, scale:zero_point>`) become the integers
// holding them, and the ops that give the types their meaning are
// rewritten into plain tract ops:
//
//   * a cast from a real value (float or integer) quantizes it:
//     round(x / scale) + zero_point, saturated, to the storage integers;
//   * a cast to a real value dequantizes: scale * (q - zero_point);
//   * a cast between two quantized types of one scale moves the zero point
//     in i32, saturated; of two scales, it goes through f32;
//   * add, sub, mul, div, min and max dequantize their operands, compute
//     in f32 and quantize to their result's type (tract's results agree
//     with this to the rounding of the last step).
//
// The frontends dequantize the operands of every other op, so any other op
// meeting a quantized value is refused here, naming it.
//
//===----------------------------------------------------------------------===//

#include "conversion/LoweringUtils.h"

#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractQuant.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::tract;

namespace {

using QType = quant::UniformQuantizedType;

int64_t rankOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getRank();
}

Value castElements(OpBuilder &b, Location loc, Value value, Type element) {
  if (getElementTypeOrSelf(value) == element)
    return value;
  return CastOp::create(b, loc, value, element);
}

/// scale * (q - zero_point) in f32, from `storage`, the integers of `type`.
Value dequantize(OpBuilder &b, Location loc, Value storage, QType type) {
  Type f32 = b.getF32Type();
  int64_t rank = rankOf(storage);
  Value x = castElements(b, loc, storage, f32);
  if (type.getZeroPoint() != 0)
    x = SubOp::create(b, loc, x,
                      splat(b, loc, f32, double(type.getZeroPoint()), rank));
  return MulOp::create(b, loc, x, splat(b, loc, f32, type.getScale(), rank));
}

/// Saturates `x` (of i32 or f32 elements, integral values) to the range of
/// `type`'s integers and casts it to them.
Value saturate(OpBuilder &b, Location loc, Value x, QType type) {
  Type element = getElementTypeOrSelf(x);
  int64_t rank = rankOf(x);
  x = MaxOp::create(
      b, loc, x,
      splat(b, loc, element, double(type.getStorageTypeMin()), rank));
  x = MinOp::create(
      b, loc, x,
      splat(b, loc, element, double(type.getStorageTypeMax()), rank));
  return castElements(b, loc, x, getStorageType(type));
}

/// round(x / scale) + zero_point, saturated, from a real value `x`.
Value quantize(OpBuilder &b, Location loc, Value x, QType type) {
  Type f32 = b.getF32Type();
  int64_t rank = rankOf(x);
  x = castElements(b, loc, x, f32);
  x = DivOp::create(b, loc, x, splat(b, loc, f32, type.getScale(), rank));
  x = RoundOp::create(b, loc, x);
  if (type.getZeroPoint() != 0)
    x = AddOp::create(b, loc, x,
                      splat(b, loc, f32, double(type.getZeroPoint()), rank));
  return saturate(b, loc, x, type);
}

/// `tract.cast` of `input` (now holding integers when `from` is set) from
/// element type `from` to `to`, either of them quantized.
Value lowerCast(OpBuilder &b, Location loc, Value input, Type from, Type to) {
  auto qFrom = dyn_cast<QType>(from), qTo = dyn_cast<QType>(to);
  if (qFrom && qTo && qFrom.getScale() == qTo.getScale()) {
    Type i32 = b.getI32Type();
    Value x = castElements(b, loc, input, i32);
    int64_t shift = qTo.getZeroPoint() - qFrom.getZeroPoint();
    if (shift != 0)
      x = AddOp::create(b, loc, x,
                        splat(b, loc, i32, double(shift), rankOf(x)));
    return saturate(b, loc, x, qTo);
  }
  Value real = qFrom ? dequantize(b, loc, input, qFrom) : input;
  if (qTo)
    return quantize(b, loc, real, qTo);
  return castElements(b, loc, real, to);
}

/// What an op to rewrite computed on: its operands' and result's element
/// types before the values became integers.
struct Rewrite {
  Operation *op;
  SmallVector<Type> operandElements;
  Type resultElement;
};

void rewrite(const Rewrite &work) {
  Operation *op = work.op;
  OpBuilder b(op);
  Location loc = op->getLoc();
  Value result;
  if (isa<CastOp>(op)) {
    result = lowerCast(b, loc, op->getOperand(0), work.operandElements[0],
                       work.resultElement);
  } else {
    SmallVector<Value> operands;
    for (auto [operand, element] :
         llvm::zip(op->getOperands(), work.operandElements))
      operands.push_back(isa<QType>(element)
                             ? dequantize(b, loc, operand, cast<QType>(element))
                             : operand);
    OperationState state(loc, op->getName(), operands,
                         {cast<RankedTensorType>(op->getResult(0).getType())
                              .clone(b.getF32Type())},
                         op->getAttrs());
    result = b.create(state)->getResult(0);
    if (auto quantized = dyn_cast<QType>(work.resultElement))
      result = quantize(b, loc, result, quantized);
    else
      result = castElements(b, loc, result, work.resultElement);
  }
  op->getResult(0).replaceAllUsesWith(result);
  op->erase();
}

} // namespace

LogicalResult mlir::tract::lowerQuantizedTypes(ModuleOp module) {
  auto quantizedType = [](Type type) { return isQuantized(type); };
  SmallVector<Rewrite> work;
  WalkResult walk = module.walk([&](Operation *op) {
    bool touches = llvm::any_of(op->getOperandTypes(), quantizedType) ||
                   llvm::any_of(op->getResultTypes(), quantizedType);
    if (!touches || isa<func::ReturnOp>(op))
      return WalkResult::advance();
    if (!isa<CastOp>(op) && !isQuantizedArithmetic(op)) {
      op->emitError("computes on quantized tensors, which only casts and "
                    "add, sub, mul, div, min and max do in tract-mlir; "
                    "dequantize its operands (cast them to f32) first");
      return WalkResult::interrupt();
    }
    Rewrite item{op, {}, getElementTypeOrSelf(op->getResult(0))};
    for (Value operand : op->getOperands())
      item.operandElements.push_back(getElementTypeOrSelf(operand));
    work.push_back(std::move(item));
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  bool any = !work.empty();
  for (auto func : module.getOps<func::FuncOp>())
    any |= llvm::any_of(func.getFunctionType().getInputs(), quantizedType) ||
           llvm::any_of(func.getFunctionType().getResults(), quantizedType);
  if (!any)
    return success();

  // Every quantized value becomes its integers; the rewrites then read
  // them as such.
  module.walk([&](Operation *op) {
    for (Value result : op->getResults())
      result.setType(getStorageType(result.getType()));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument argument : block.getArguments())
          argument.setType(getStorageType(argument.getType()));
  });
  for (auto func : module.getOps<func::FuncOp>()) {
    auto storage = [](TypeRange types) {
      return llvm::map_to_vector(types, getStorageType);
    };
    FunctionType type = func.getFunctionType();
    func.setFunctionType(FunctionType::get(module.getContext(),
                                           storage(type.getInputs()),
                                           storage(type.getResults())));
  }
  for (const Rewrite &item : work)
    rewrite(item);
  return success();
}
