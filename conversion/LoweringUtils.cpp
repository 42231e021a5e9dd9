//===- LoweringUtils.cpp - shared pieces of the tract lowering ------------===//

#include "conversion/LoweringUtils.h"

#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::tract;

Type mlir::tract::convertElementType(Type type) {
  if (auto intType = dyn_cast<IntegerType>(type))
    if (!intType.isSignless())
      return IntegerType::get(type.getContext(), intType.getWidth());
  return type;
}

Type mlir::tract::convertTractType(Type type) {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return type;
  return RankedTensorType::get(tensorType.getShape(),
                               convertElementType(tensorType.getElementType()));
}

bool mlir::tract::isUnsignedInteger(Type elementType) {
  auto intType = dyn_cast<IntegerType>(elementType);
  return intType && intType.isUnsigned();
}

TractTypeConverter::TractTypeConverter() {
  addConversion([](Type type) { return convertTractType(type); });
  auto cast = [](OpBuilder &builder, Type type, ValueRange inputs,
                 Location loc) -> Value {
    if (inputs.size() != 1)
      return {};
    return UnrealizedConversionCastOp::create(builder, loc, type, inputs)
        .getResult(0);
  };
  addSourceMaterialization(cast);
  addTargetMaterialization(cast);
}

Operation *mlir::tract::getEnclosingFunction(Operation *op) {
  if (isa<func::FuncOp>(op))
    return op;
  return op->getParentOfType<func::FuncOp>();
}

//===----------------------------------------------------------------------===//
// Symbols
//===----------------------------------------------------------------------===//

std::optional<LinearForm> mlir::tract::getLinearForm(const TDim &dim) {
  std::optional<LinearForm> form;
  int64_t offset = 0;
  for (const TDim::TermView &term : dim.getTerms()) {
    if (term.atoms.empty()) {
      offset = term.coefficient;
      continue;
    }
    if (form || term.atoms.size() != 1 ||
        term.atoms[0].kind != TDim::AtomKind::Symbol)
      return std::nullopt;
    form = LinearForm{term.atoms[0].name.str(), term.coefficient, 0};
  }
  if (form)
    form->offset = offset;
  return form;
}

SmallVector<SymbolSource>
mlir::tract::findSymbolSources(ArrayRef<Shape> inputShapes) {
  SmallVector<SymbolSource> sources;
  llvm::StringSet<> bound;
  for (auto [argument, shape] : llvm::enumerate(inputShapes))
    for (auto [axis, dim] : llvm::enumerate(shape)) {
      std::optional<LinearForm> form = getLinearForm(dim);
      if (form && bound.insert(form->symbol).second)
        sources.push_back({static_cast<unsigned>(argument),
                           static_cast<unsigned>(axis), *form});
    }
  return sources;
}

Value mlir::tract::readSymbol(OpBuilder &builder, Location loc, Value size,
                              const LinearForm &form) {
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantOp::create(
        builder, loc, builder.getIntegerAttr(size.getType(), value));
  };
  if (form.offset != 0)
    size = arith::SubIOp::create(builder, loc, size, constant(form.offset));
  if (form.coefficient != 1)
    size = arith::FloorDivSIOp::create(builder, loc, size,
                                       constant(form.coefficient));
  return size;
}

LogicalResult mlir::tract::bindInputSymbols(Operation *funcOp) {
  auto func = cast<func::FuncOp>(funcOp);
  if (func->hasAttr(kKernelFunctionAttrName))
    return success();
  Block &entry = func.getBody().front();
  OpBuilder builder = OpBuilder::atBlockBegin(&entry);
  Location loc = func.getLoc();
  SmallVector<Shape> shapes;
  for (BlockArgument argument : entry.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(argument.getType());
    if (!type) {
      shapes.emplace_back();
      continue;
    }
    if (!isTractTensorType(type))
      return func.emitError()
             << "argument " << argument.getArgNumber() << " has type " << type
             << ", not a tract tensor type (a dynamic dim "
                "needs its #tract.dims expression)";
    shapes.push_back(getShape(type));
  }
  // A function that tract-bind-symbols has seen is bound already.
  llvm::StringSet<> bound;
  for (auto bind : entry.getOps<BindSymbolOp>())
    bound.insert(bind.getSymbol());
  for (const SymbolSource &source : findSymbolSources(shapes)) {
    if (bound.contains(source.form.symbol))
      continue;
    Value size = tensor::DimOp::create(
        builder, loc, entry.getArgument(source.argument), source.axis);
    bindSymbol(builder, loc, source.form.symbol,
               readSymbol(builder, loc, size, source.form));
    bound.insert(source.form.symbol);
  }
  // Every symbol the function's types use must be bound, by an input or by
  // an op that computes it.
  std::set<std::string> used;
  func.walk([&](Operation *op) {
    for (Type type : op->getResultTypes())
      if (isa<RankedTensorType>(type) && isTractTensorType(type))
        for (const TDim &dim : getShape(type))
          dim.collectSymbols(used);
    for (const std::string &computed : getComputedSymbols(op))
      bound.insert(computed);
  });
  for (const Shape &shape : shapes)
    for (const TDim &dim : shape)
      dim.collectSymbols(used);
  for (const std::string &name : used)
    if (!bound.count(name))
      return func.emitError() << "symbol " << name
                              << " is not determined by the dims of the "
                                 "inputs; give its value with --set "
                              << name << "=N";
  return success();
}

void mlir::tract::bindSymbol(OpBuilder &builder, Location loc, StringRef symbol,
                             Value value) {
  BindSymbolOp::create(builder, loc, symbol, value);
}

Value mlir::tract::lookupSymbol(Block *block, Block::iterator point,
                                StringRef symbol) {
  while (block) {
    for (Block::iterator it = point; it != block->begin();) {
      --it;
      if (auto bind = dyn_cast<BindSymbolOp>(&*it);
          bind && bind.getSymbol() == symbol)
        return bind.getValue();
    }
    Operation *parent = block->getParentOp();
    if (!parent || isa<func::FuncOp>(parent) || !parent->getBlock())
      return {};
    point = Block::iterator(parent);
    block = parent->getBlock();
  }
  return {};
}

void mlir::tract::eraseSymbolBindings(Operation *root) {
  root->walk([](BindSymbolOp bind) { bind.erase(); });
}

std::optional<std::string> mlir::tract::getComputedSymbol(Operation *op) {
  DimAttr len;
  if (auto slice = dyn_cast<DynSliceOp>(op))
    len = slice.getLenAttr();
  else if (auto range = dyn_cast<RangeOp>(op))
    len = range.getLenAttr();
  else if (auto topk = dyn_cast<TopKOp>(op))
    len = topk.getLenAttr();
  else if (auto nonZero = dyn_cast<NonZeroOp>(op))
    len = nonZero.getLenAttr();
  else if (auto nms = dyn_cast<NonMaxSuppressionOp>(op))
    len = nms.getLenAttr();
  else if (auto unique = dyn_cast<UniqueOp>(op))
    len = unique.getLenAttr();
  if (!len)
    return std::nullopt;
  return len.getValue().getSymbolName();
}

SmallVector<std::string> mlir::tract::getComputedSymbols(Operation *op) {
  SmallVector<std::string> names;
  if (auto bind = dyn_cast<BindDimsOp>(op)) {
    for (const TDim &dim : bind.getDims().getDims())
      if (std::optional<std::string> name = dim.getSymbolName())
        names.push_back(*name);
  } else if (std::optional<std::string> name = getComputedSymbol(op)) {
    names.push_back(*name);
  }
  return names;
}

std::optional<std::string> mlir::tract::findUnboundSymbol(Operation *op) {
  std::set<std::string> used;
  for (TypeRange types :
       {TypeRange(op->getOperandTypes()), TypeRange(op->getResultTypes())})
    for (Type type : types)
      if (isa<RankedTensorType>(type) && isTractTensorType(type))
        for (const TDim &dim : getShape(type))
          dim.collectSymbols(used);
  for (const std::string &computed : getComputedSymbols(op))
    used.erase(computed);
  for (const std::string &name : used)
    if (!lookupSymbol(op, name))
      return name;
  return std::nullopt;
}

std::string mlir::tract::nodeName(Operation *op) {
  if (auto name = dyn_cast<NameLoc>(op->getLoc()))
    return name.getName().str();
  return op->getName().getStringRef().str();
}

void mlir::tract::callFail(OpBuilder &b, Operation *op,
                           const std::string &format, ValueRange values) {
  constexpr llvm::StringLiteral kFailName = "tract_fail";
  Location loc = op->getLoc();
  auto module = op->getParentOfType<ModuleOp>();
  MLIRContext *context = b.getContext();
  OpBuilder moduleBuilder = OpBuilder::atBlockBegin(module.getBody());
  auto failFunc = module.lookupSymbol<LLVM::LLVMFuncOp>(kFailName);
  if (!failFunc)
    failFunc = LLVM::LLVMFuncOp::create(
        moduleBuilder, loc, kFailName,
        LLVM::LLVMFunctionType::get(IntegerType::get(context, 32),
                                    {LLVM::LLVMPointerType::get(context)},
                                    /*isVarArg=*/true));
  std::string name;
  for (unsigned i = 0;; ++i) {
    name = "tract.check" + std::to_string(i);
    if (!module.lookupSymbol(name))
      break;
  }
  // With its terminating NUL, as C reads it.
  StringRef text(format.c_str(), format.size() + 1);
  auto message = LLVM::GlobalOp::create(
      moduleBuilder, loc, LLVM::LLVMArrayType::get(b.getI8Type(), text.size()),
      /*isConstant=*/true, LLVM::Linkage::Internal, name,
      b.getStringAttr(text));
  SmallVector<Value> arguments = {LLVM::AddressOfOp::create(b, loc, message)};
  arguments.append(values.begin(), values.end());
  LLVM::CallOp::create(b, loc, failFunc, arguments);
}

std::string mlir::tract::escapeFormat(StringRef text) {
  std::string escaped;
  for (char c : text) {
    escaped += c;
    if (c == '%')
      escaped += '%';
  }
  return escaped;
}

namespace {

/// Index arithmetic over the symbols' values: those of `bound` when given,
/// else their bindings before the builder's insertion point.
struct IndexAlgebra : DimAlgebra<Value> {
  IndexAlgebra(OpBuilder &builder, Location loc,
               const llvm::StringMap<Value> *bound, Value *overflow = nullptr,
               Type type = {})
      : builder(builder), loc(loc), bound(bound), overflow(overflow),
        type(type ? type : builder.getIndexType()) {}
  Value constant(int64_t value) override {
    return arith::ConstantOp::create(builder, loc,
                                     builder.getIntegerAttr(type, value));
  }
  Value symbol(StringRef name) override {
    if (bound)
      return bound->lookup(name);
    return lookupSymbol(builder.getInsertionBlock(),
                        builder.getInsertionPoint(), name);
  }
  Value add(Value lhs, Value rhs) override {
    Value sum = arith::AddIOp::create(builder, loc, lhs, rhs);
    if (overflow) {
      // Two's complement: the sum wrapped if its sign differs from both
      // operands' signs.
      Value both = arith::AndIOp::create(
          builder, loc, arith::XOrIOp::create(builder, loc, lhs, sum),
          arith::XOrIOp::create(builder, loc, rhs, sum));
      record(arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::slt,
                                   both, constant(0)));
    }
    return sum;
  }
  Value mul(Value lhs, Value rhs) override {
    if (!overflow)
      return arith::MulIOp::create(builder, loc, lhs, rhs);
    // The full 128-bit product: it fits when its high half is the sign
    // extension of the low half.
    Type i64 = builder.getI64Type();
    auto toI64 = [&](Value value) -> Value {
      return value.getType() == i64
                 ? value
                 : arith::IndexCastOp::create(builder, loc, i64, value);
    };
    auto wide =
        arith::MulSIExtendedOp::create(builder, loc, toI64(lhs), toI64(rhs));
    Value sign = arith::ShRSIOp::create(
        builder, loc, wide.getLow(),
        arith::ConstantIntOp::create(builder, loc, i64, 63));
    record(arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ne,
                                 wide.getHigh(), sign));
    if (type == i64)
      return wide.getLow();
    return arith::IndexCastOp::create(builder, loc, type, wide.getLow());
  }
  Value floorDiv(Value value, int64_t divisor) override {
    return arith::FloorDivSIOp::create(builder, loc, value, constant(divisor));
  }
  Value min(Value lhs, Value rhs) override {
    return arith::MinSIOp::create(builder, loc, lhs, rhs);
  }
  Value max(Value lhs, Value rhs) override {
    return arith::MaxSIOp::create(builder, loc, lhs, rhs);
  }
  Value broadcast(Value lhs, Value rhs) override {
    Value isOne = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq,
                                        lhs, constant(1));
    return arith::SelectOp::create(builder, loc, isOne, rhs, lhs);
  }
  void record(Value wrapped) {
    *overflow =
        *overflow
            ? arith::OrIOp::create(builder, loc, *overflow, wrapped).getResult()
            : wrapped;
  }
  OpBuilder &builder;
  Location loc;
  const llvm::StringMap<Value> *bound;
  Value *overflow;
  Type type;
};

} // namespace

Value mlir::tract::materializeDim(OpBuilder &builder, Location loc,
                                  const TDim &dim) {
  IndexAlgebra algebra(builder, loc, nullptr);
  return buildDim(dim, algebra);
}

Value mlir::tract::materializeDim(OpBuilder &builder, Location loc,
                                  const llvm::StringMap<Value> &bound,
                                  const TDim &dim, Value *overflow, Type type) {
  IndexAlgebra algebra(builder, loc, &bound, overflow, type);
  return buildDim(dim, algebra);
}

SmallVector<Value> mlir::tract::dynamicSizes(OpBuilder &builder, Location loc,
                                             Type type) {
  SmallVector<Value> sizes;
  auto tensorType = cast<RankedTensorType>(type);
  Shape shape = getShape(type);
  for (auto [axis, size] : llvm::enumerate(tensorType.getShape()))
    if (ShapedType::isDynamic(size))
      sizes.push_back(materializeDim(builder, loc, shape[axis]));
  return sizes;
}

Value mlir::tract::emptyTensor(OpBuilder &builder, Location loc, Type type,
                               Type elementType) {
  auto tensorType = cast<RankedTensorType>(type);
  SmallVector<Value> sizes = dynamicSizes(builder, loc, type);
  if (llvm::any_of(sizes, [](Value v) { return !v; }))
    return {};
  Type element = elementType ? elementType
                             : convertElementType(tensorType.getElementType());
  return tensor::EmptyOp::create(builder, loc, tensorType.getShape(), element,
                                 sizes);
}

Value mlir::tract::splat(OpBuilder &b, Location loc, Type type, double value,
                         size_t rank) {
  auto tensorType = RankedTensorType::get(SmallVector<int64_t>(rank, 1), type);
  Attribute element =
      isa<FloatType>(type)
          ? Attribute(FloatAttr::get(type, value))
          : Attribute(IntegerAttr::get(
                type, APInt(type.getIntOrFloatBitWidth(), int64_t(value),
                            /*isSigned=*/true, /*implicitTrunc=*/true)));
  return ConstOp::create(b, loc, tensorType,
                         DenseElementsAttr::get(tensorType, element));
}

//===----------------------------------------------------------------------===//
// Scalar helpers
//===----------------------------------------------------------------------===//

bool mlir::tract::isFloat(Type type) { return isa<FloatType>(type); }

Value mlir::tract::floatConstant(OpBuilder &b, Location loc, Type type,
                                 double value) {
  return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
}

Value mlir::tract::intConstant(OpBuilder &b, Location loc, Type type,
                               int64_t value) {
  return arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, value));
}

Value mlir::tract::castScalar(OpBuilder &b, Location loc, Value value,
                              Type from, Type to) {
  Type target = convertElementType(to);
  if (from == to)
    return value;
  bool fromFloat = isFloat(from), toFloat = isFloat(to);
  bool fromBool = from.isInteger(1), toBool = to.isInteger(1);
  if (toBool) {
    if (fromFloat)
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, value,
                                   floatConstant(b, loc, from, 0.0));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, value,
                                 intConstant(b, loc, value.getType(), 0));
  }
  if (fromFloat && toFloat) {
    if (from.getIntOrFloatBitWidth() < target.getIntOrFloatBitWidth())
      return arith::ExtFOp::create(b, loc, target, value);
    if (from.getIntOrFloatBitWidth() > target.getIntOrFloatBitWidth())
      return arith::TruncFOp::create(b, loc, target, value);
    // f16 <-> bf16: through f32.
    Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
    return arith::TruncFOp::create(b, loc, target, wide);
  }
  if (fromFloat) {
    if (isUnsignedInteger(to))
      return arith::FPToUIOp::create(b, loc, target, value);
    return arith::FPToSIOp::create(b, loc, target, value);
  }
  bool sourceUnsigned = fromBool || isUnsignedInteger(from);
  if (toFloat) {
    if (sourceUnsigned)
      return arith::UIToFPOp::create(b, loc, target, value);
    return arith::SIToFPOp::create(b, loc, target, value);
  }
  unsigned fromWidth = from.getIntOrFloatBitWidth();
  unsigned toWidth = target.getIntOrFloatBitWidth();
  if (fromWidth < toWidth) {
    if (sourceUnsigned)
      return arith::ExtUIOp::create(b, loc, target, value);
    return arith::ExtSIOp::create(b, loc, target, value);
  }
  if (fromWidth > toWidth)
    return arith::TruncIOp::create(b, loc, target, value);
  return value;
}

Value mlir::tract::extractScalar(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<Value> zeros(type.getRank(),
                           arith::ConstantIndexOp::create(b, loc, 0));
  return tensor::ExtractOp::create(b, loc, tensor, zeros);
}

Value mlir::tract::buildGeneric(
    OpBuilder &b, Location loc, Value init, ValueRange inputs,
    ArrayRef<AffineMap> inputMaps,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  auto type = cast<RankedTensorType>(init.getType());
  int64_t rank = type.getRank();
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, type, inputs, init, maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value result = body(nested, nestedLoc, args.drop_back());
        linalg::YieldOp::create(nested, nestedLoc, result);
      });
  return generic.getResult(0);
}
