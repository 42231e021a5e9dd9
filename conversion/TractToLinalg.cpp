//===- TractToLinalg.cpp - the tract-lower-to-linalg pass -----------------===//
//
// Prepares each function (binds its symbols, strips its signature of tract
// encodings, copies its results) and runs the dialect conversion with the
// patterns of every op family.
//
//===----------------------------------------------------------------------===//

#include "conversion/EntryFacts.h"
#include "conversion/LoweringUtils.h"
#include "conversion/Passes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTBINDSYMBOLS
#define GEN_PASS_DEF_TRACTLOWERTOLINALG
#include "conversion/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;
using namespace mlir::tract;

namespace {

/// Gives `func` a plain signature: arguments change type in place (the
/// symbols read their dims) and tract ops see them through casts the
/// conversion removes; results are copied into fresh tensors.
LogicalResult prepareFunction(func::FuncOp func) {
  if (func.isExternal() || func->hasAttr(kKernelFunctionAttrName))
    return success();
  if (failed(bindInputSymbols(func)))
    return failure();
  Block &entry = func.getBody().front();
  OpBuilder builder(func.getContext());
  // After the symbol bindings at the top of the entry block.
  Operation *firstOp = &entry.front();
  for (auto bind : entry.getOps<BindSymbolOp>())
    firstOp = bind->getNextNode();
  for (BlockArgument argument : entry.getArguments()) {
    Type original = argument.getType();
    Type plain = convertTractType(original);
    if (plain == original)
      continue;
    // A kernel that lowered an op before this pass read the argument
    // through a cast to its plain type, which it is about to have.
    SmallVector<UnrealizedConversionCastOp> kernelCasts;
    for (Operation *user : argument.getUsers())
      if (auto cast = dyn_cast<UnrealizedConversionCastOp>(user);
          cast && cast->getNumResults() == 1 &&
          cast.getResult(0).getType() == plain)
        kernelCasts.push_back(cast);
    argument.setType(plain);
    builder.setInsertionPoint(firstOp);
    auto cast = UnrealizedConversionCastOp::create(builder, func.getLoc(),
                                                   original, argument);
    argument.replaceUsesWithIf(cast.getResult(0), [&](OpOperand &use) {
      Operation *user = use.getOwner();
      return user != cast && !isa<tensor::DimOp>(user) &&
             !llvm::is_contained(kernelCasts, user);
    });
    for (UnrealizedConversionCastOp kernelCast : kernelCasts) {
      kernelCast.getResult(0).replaceAllUsesWith(argument);
      kernelCast.erase();
    }
  }
  SmallVector<Type> resultTypes;
  SmallVector<UnrealizedConversionCastOp> kernelCasts;
  WalkResult walk = func.walk([&](func::ReturnOp ret) {
    if (ret->getParentOp() != func)
      return WalkResult::advance();
    builder.setInsertionPoint(ret);
    SmallVector<Value> copies;
    for (Value value : ret.getOperands()) {
      Type original = value.getType();
      Type plain = convertTractType(original);
      if (!isa<RankedTensorType>(plain)) {
        copies.push_back(value);
        continue;
      }
      Value input = value;
      // A kernel's result, lowered before this pass, is plain already.
      auto kernel = value.getDefiningOp<UnrealizedConversionCastOp>();
      if (kernel && kernel->getNumOperands() == 1 &&
          kernel->getOperand(0).getType() == plain) {
        input = kernel->getOperand(0);
        if (value.hasOneUse())
          kernelCasts.push_back(kernel);
      } else if (plain != original) {
        input = UnrealizedConversionCastOp::create(builder, ret.getLoc(), plain,
                                                   value)
                    .getResult(0);
      }
      // Sized from the value itself: a size may come from a symbol an op
      // computes at run time, not bound yet.
      auto plainType = cast<RankedTensorType>(plain);
      SmallVector<Value> sizes;
      for (auto [axis, size] : llvm::enumerate(plainType.getShape()))
        if (ShapedType::isDynamic(size))
          sizes.push_back(
              tensor::DimOp::create(builder, ret.getLoc(), input, axis));
      Value init =
          tensor::EmptyOp::create(builder, ret.getLoc(), plainType.getShape(),
                                  plainType.getElementType(), sizes);
      copies.push_back(
          linalg::CopyOp::create(builder, ret.getLoc(), input, init)
              .getResult(0));
    }
    ret->setOperands(copies);
    resultTypes.assign(ValueRange(copies).getTypes().begin(),
                       ValueRange(copies).getTypes().end());
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  for (UnrealizedConversionCastOp cast : kernelCasts)
    cast.erase();
  func.setFunctionType(FunctionType::get(
      func.getContext(), entry.getArgumentTypes(), resultTypes));
  // Argument and result names move to the function (LLVM has no place for
  // them on parameters): `tract.input_names`, `tract.output_names`.
  auto collectNames = [&](unsigned count, auto getName) {
    SmallVector<Attribute> names;
    for (unsigned i = 0; i < count; ++i) {
      StringAttr name = getName(i);
      names.push_back(name ? name : builder.getStringAttr(""));
    }
    return builder.getArrayAttr(names);
  };
  func->setAttr("tract.input_names",
                collectNames(func.getNumArguments(), [&](unsigned i) {
                  return func.getArgAttrOfType<StringAttr>(i, "tract.name");
                }));
  func->setAttr("tract.output_names",
                collectNames(func.getNumResults(), [&](unsigned i) {
                  return func.getResultAttrOfType<StringAttr>(i, "tract.name");
                }));
  // Other tract markers (a streaming model's tract.state and tract.symbol)
  // have served once the names are known.
  auto dropTractAttrs = [](DictionaryAttr attrs) {
    SmallVector<NamedAttribute> kept;
    if (attrs)
      for (NamedAttribute attr : attrs)
        if (!attr.getName().getValue().starts_with("tract."))
          kept.push_back(attr);
    return kept;
  };
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    func.setArgAttrs(i, dropTractAttrs(func.getArgAttrDict(i)));
    // Inputs belong to the caller: bufferization must not write into them.
    if (isa<RankedTensorType>(func.getArgument(i).getType()))
      func.setArgAttr(i, "bufferization.writable", builder.getBoolAttr(false));
  }
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    func.setResultAttrs(i, dropTractAttrs(func.getResultAttrDict(i)));
  return success();
}

/// tract.const → arith.constant of the plain type.
struct ConstLowering : public OpConversionPattern<ConstOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConstOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type =
        cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    // A large weight imported without a copy: the same blob, of the plain
    // type.
    if (auto resource = dyn_cast<DenseResourceElementsAttr>(op.getValue())) {
      if (resource.getType().getElementType() != type.getElementType())
        return rewriter.notifyMatchFailure(op, "a resource of another type");
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(
          op, type,
          DenseResourceElementsAttr::get(type, resource.getRawHandle()));
      return success();
    }
    auto value = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!value)
      return rewriter.notifyMatchFailure(op, "not a dense constant");
    if (value.getType() != type) {
      if (value.getElementType() == type.getElementType())
        value = value.reshape(type);
      else
        value = value.bitcast(type.getElementType()).reshape(type);
    }
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, type, value);
    return success();
  }
};

struct TractLowerToLinalgPass
    : public tract::impl::TractLowerToLinalgBase<TractLowerToLinalgPass> {
  using TractLowerToLinalgBase::TractLowerToLinalgBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    // A scan still skipping iterations is a batch model's: the skip counts
    // iterations across calls, which only a streaming model's state keeps.
    WalkResult skipping = module.walk([](ScanOp scan) {
      if (auto skip = scan->getAttrOfType<IntegerAttr>("pulse.skip")) {
        scan.emitError("skips its first ")
            << skip.getInt()
            << " iterations, which only a streaming model (with pulse "
               "properties) can run";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (skipping.wasInterrupted())
      return signalPassFailure();
    // Composite ops first, as the tract ops their lowerings are made of.
    if (failed(decomposeCompositeOps(module)) ||
        failed(lowerQuantizedTypes(module)))
      return signalPassFailure();
    for (auto func : module.getOps<func::FuncOp>()) {
      // What the callers' inputs must satisfy, for the entry checks.
      if (func.isPublic() && !func.isExternal())
        recordEntryFacts(func, findEntryFacts(func));
      if (failed(prepareFunction(func)))
        return signalPassFailure();
    }

    TractTypeConverter converter;
    RewritePatternSet patterns(context);
    patterns.add<ConstLowering>(converter, context);
    populateElementwiseLoweringPatterns(converter, patterns);
    populateArrayLoweringPatterns(converter, patterns);
    populateNNLoweringPatterns(converter, patterns);
    populateControlLoweringPatterns(converter, patterns);
    populateReturnOpTypeConversionPattern(patterns, converter);

    ConversionTarget target(*context);
    target.addIllegalDialect<TractDialect>();
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, scf::SCFDialect,
                           tensor::TensorDialect>();
    target.addLegalOp<ModuleOp, UnrealizedConversionCastOp, BindSymbolOp>();
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp func) {
      return converter.isSignatureLegal(func.getFunctionType());
    });
    target.addDynamicallyLegalOp<func::ReturnOp>(
        [&](func::ReturnOp ret) { return converter.isLegal(ret); });
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    eraseSymbolBindings(module);
  }
};

struct TractBindSymbolsPass
    : public tract::impl::TractBindSymbolsBase<TractBindSymbolsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && failed(bindInputSymbols(func)))
        return signalPassFailure();
  }
};

} // namespace
