//===- ModelSignature.cpp - a model's inputs and outputs ------------------===//

#include "target/ModelSignature.h"

#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractQuant.h"
#include "dialects/tract/TractShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::tract;

std::string TensorSignature::shapeString() const {
  std::string text;
  for (auto [i, dim] : llvm::enumerate(shape))
    text += (i ? "," : "") + dim.toString();
  return text;
}

bool mlir::tract::getRuntimeDtype(Type type, tract_dtype &dtype) {
  // A quantized tensor travels as the integers holding it.
  type = getStorageType(type);
  if (type.isInteger(1)) {
    dtype = TRACT_DT_BOOL;
    return true;
  }
  if (auto integer = dyn_cast<IntegerType>(type)) {
    // 8, 16, 32 and 64 bits, signed or not.
    static constexpr tract_dtype kSigned[] = {TRACT_DT_I8, TRACT_DT_I16,
                                              TRACT_DT_I32, TRACT_DT_I64};
    static constexpr tract_dtype kUnsigned[] = {TRACT_DT_U8, TRACT_DT_U16,
                                                TRACT_DT_U32, TRACT_DT_U64};
    unsigned width = integer.getWidth();
    if (width < 8 || width > 64 || !llvm::isPowerOf2_32(width))
      return false;
    unsigned index = llvm::Log2_32(width) - 3;
    dtype = integer.isUnsigned() ? kUnsigned[index] : kSigned[index];
    return true;
  }
  if (type.isF16())
    dtype = TRACT_DT_F16;
  else if (type.isBF16())
    dtype = TRACT_DT_BF16;
  else if (type.isF32())
    dtype = TRACT_DT_F32;
  else if (type.isF64())
    dtype = TRACT_DT_F64;
  else
    return false;
  return true;
}

namespace {

llvm::Expected<TensorSignature> describe(Type type, const llvm::Twine &name) {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  TensorSignature signature;
  signature.name = name.str();
  if (!tensorType ||
      !getRuntimeDtype(tensorType.getElementType(), signature.dtype))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "'" + name +
                                       "' has a type the runtime cannot hold");
  Shape shape = getShape(type);
  signature.shape.assign(shape.begin(), shape.end());
  return signature;
}

tract_io_role roleOf(DictionaryAttr attrs) {
  if (!attrs)
    return TRACT_IO_DATA;
  if (attrs.get("tract.state"))
    return TRACT_IO_STATE;
  if (attrs.get("tract.symbol"))
    return TRACT_IO_SYMBOL;
  return TRACT_IO_DATA;
}

} // namespace

llvm::Expected<ModelSignature>
mlir::tract::describeFunction(func::FuncOp func) {
  ModelSignature model;
  FunctionType type = func.getFunctionType();
  // The inputs, then the outputs.
  auto describeAll = [&](bool outputs,
                         std::vector<TensorSignature> &into) -> llvm::Error {
    unsigned count = outputs ? type.getNumResults() : type.getNumInputs();
    for (unsigned i = 0; i < count; ++i) {
      DictionaryAttr attrs =
          outputs ? func.getResultAttrDict(i) : func.getArgAttrDict(i);
      auto name = attrs ? attrs.getAs<StringAttr>("tract.name") : StringAttr();
      auto signature =
          describe(outputs ? type.getResult(i) : type.getInput(i),
                   name ? llvm::Twine(name.getValue())
                        : (outputs ? "output_" : "input_") + llvm::Twine(i));
      if (!signature)
        return signature.takeError();
      signature->role = roleOf(attrs);
      into.push_back(std::move(*signature));
    }
    return llvm::Error::success();
  };
  if (llvm::Error error = describeAll(/*outputs=*/false, model.inputs))
    return std::move(error);
  if (llvm::Error error = describeAll(/*outputs=*/true, model.outputs))
    return std::move(error);
  if (auto module = func->getParentOfType<ModuleOp>())
    if (std::optional<PulseProperties> pulsed = getPulseProperties(module)) {
      model.pulse = pulsed->pulse;
      model.outputDelays.assign(pulsed->delays.begin(), pulsed->delays.end());
    }
  return model;
}

llvm::Expected<ModelSignature> mlir::tract::describeMain(ModuleOp module,
                                                         func::FuncOp *main) {
  auto found = module.lookupSymbol<func::FuncOp>("main");
  if (!found)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the model has no main function");
  if (main)
    *main = found;
  return describeFunction(found);
}
