//===- NNLowering.cpp - tract contractions, windows and reductions --------===//
//
// Einsum becomes linalg.matmul / batch_matmul when it is exactly one, and a
// linalg.generic over one loop per axis letter otherwise. The scalar
// semantics follow the folders: sums and products stay in the element type
// (integers wrap), float min/max propagate NaN, and integers compare by the
// signedness of their tract type.
//
//===----------------------------------------------------------------------===//

#include "lowering/LoweringUtils.h"

#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <map>

using namespace mlir;
using namespace mlir::tract;

namespace {

//===----------------------------------------------------------------------===//
// Building blocks
//===----------------------------------------------------------------------===//

/// What lowering one op builds with: the insertion point, and the values of
/// the symbols of its function.
struct Builder {
  Builder(OpBuilder &b, Operation *op, const SymbolValueMap &symbols)
      : b(b), loc(op->getLoc()), func(getEnclosingFunction(op)),
        symbols(symbols) {}

  /// The index value of `dim`.
  Value index(const TDim &dim) const {
    return symbols.materialize(b, loc, func, dim);
  }
  Value index(int64_t value) const {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  /// `dim` as an attribute when it is constant, a value otherwise.
  OpFoldResult size(const TDim &dim) const {
    if (std::optional<int64_t> value = dim.getConstant())
      return b.getIndexAttr(*value);
    return index(dim);
  }
  SmallVector<OpFoldResult> sizes(ArrayRef<TDim> dims) const {
    return llvm::map_to_vector(dims,
                               [&](const TDim &dim) { return size(dim); });
  }
  /// The plain tensor type of `shape`.
  RankedTensorType type(ArrayRef<TDim> shape, Type element) const {
    return cast<RankedTensorType>(
        convertTractType(getTensorType(b.getContext(), shape, element)));
  }
  Value empty(ArrayRef<TDim> shape, Type element) const {
    return symbols.emptyTensor(b, loc, func,
                               getTensorType(b.getContext(), shape, element),
                               convertElementType(element));
  }
  Value fill(Value init, Value scalar) const {
    return linalg::FillOp::create(b, loc, ValueRange{scalar}, ValueRange{init})
        .getResult(0);
  }
  /// A tensor of `shape` filled with `scalar`.
  Value filled(ArrayRef<TDim> shape, Type element, Value scalar) const {
    return fill(empty(shape, element), scalar);
  }
  /// `value` reshaped to `shape` by splitting axes as `groups` says.
  Value expand(Value value, ArrayRef<TDim> shape,
               ArrayRef<ReassociationIndices> groups) const {
    Type element = cast<RankedTensorType>(value.getType()).getElementType();
    return tensor::ExpandShapeOp::create(b, loc, type(shape, element), value,
                                         groups, sizes(shape));
  }
  Value collapse(Value value, ArrayRef<ReassociationIndices> groups) const {
    return tensor::CollapseShapeOp::create(b, loc, value, groups);
  }

  OpBuilder &b;
  Location loc;
  Operation *func;
  const SymbolValueMap &symbols;
};

template <typename OpTy> struct NNPattern : public OpConversionPattern<OpTy> {
  NNPattern(const TypeConverter &converter, const SymbolValueMap &symbols,
            MLIRContext *context)
      : OpConversionPattern<OpTy>(converter, context), symbols(symbols) {}

  const SymbolValueMap &symbols;
};

bool isFloat(Type type) { return isa<FloatType>(type); }

/// A scalar of the plain version of the tract element type `element`.
Value scalar(OpBuilder &b, Location loc, Type element, double value) {
  Type type = convertElementType(element);
  if (isFloat(type))
    return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
  return arith::ConstantOp::create(
      b, loc, type, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

Value add(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  if (isFloat(lhs.getType()))
    return arith::AddFOp::create(b, loc, lhs, rhs);
  return arith::AddIOp::create(b, loc, lhs, rhs);
}

Value mul(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  if (isFloat(lhs.getType()))
    return arith::MulFOp::create(b, loc, lhs, rhs);
  return arith::MulIOp::create(b, loc, lhs, rhs);
}

SmallVector<utils::IteratorType> iterators(size_t parallel, size_t reduction) {
  SmallVector<utils::IteratorType> result(parallel,
                                          utils::IteratorType::parallel);
  result.append(reduction, utils::IteratorType::reduction);
  return result;
}

//===----------------------------------------------------------------------===//
// Einsum
//===----------------------------------------------------------------------===//

/// Whether the two-operand einsum `specs -> output` is exactly a matrix
/// product (`mk,kn->mn`) or a batched one (`bmk,bkn->bmn`).
bool isPlainMatmul(ArrayRef<StringRef> specs, StringRef output, bool batch) {
  if (specs.size() != 2)
    return false;
  StringRef a = specs[0], b = specs[1];
  size_t rank = batch ? 3 : 2;
  if (a.size() != rank || b.size() != rank || output.size() != rank)
    return false;
  if (batch) {
    if (a[0] != b[0] || a[0] != output[0])
      return false;
    a = a.drop_front();
    b = b.drop_front();
    output = output.drop_front();
  }
  std::string letters{a[0], a[1], b[1]};
  if (batch)
    letters.push_back(specs[0][0]);
  llvm::sort(letters);
  return a[1] == b[0] && output[0] == a[0] && output[1] == b[1] &&
         std::unique(letters.begin(), letters.end()) == letters.end();
}

struct EinsumLowering : public NNPattern<EinsumOp> {
  using NNPattern::NNPattern;

  LogicalResult
  matchAndRewrite(EinsumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type element = getElementTypeOrSelf(op.getType());
    if (!isFloat(element) &&
        (!isa<IntegerType>(element) || element.isInteger(1)))
      return op.emitError() << "cannot lower einsum of " << element
                            << ": it multiplies and adds numbers";
    StringRef expr = op.getExpr();
    auto [inputsPart, outputPart] = expr.split("->");
    SmallVector<StringRef> specs;
    inputsPart.split(specs, ',');
    // The size of each letter is the broadcast of its dims.
    std::map<char, TDim> sizes;
    std::map<char, int> occurrences;
    for (auto [spec, input] : llvm::zip(specs, op.getInputs()))
      for (auto [letter, dim] : llvm::zip(spec, getShape(input))) {
        ++occurrences[letter];
        auto [it, inserted] = sizes.try_emplace(letter, dim);
        if (!inserted)
          it->second = TDim::broadcast(it->second, dim).value_or(dim);
      }
    std::string output = outputPart.str();
    if (!expr.contains("->")) {
      output.clear();
      for (auto [letter, count] : occurrences)
        if (count == 1)
          output.push_back(letter);
    }
    // One loop per letter: the result's, then the summed ones.
    std::string loops = output;
    for (const auto &entry : sizes)
      if (!llvm::is_contained(output, entry.first))
        loops.push_back(entry.first);

    MLIRContext *context = rewriter.getContext();
    SmallVector<AffineMap> maps;
    bool broadcasts = false;
    for (auto [spec, input] : llvm::zip(specs, op.getInputs())) {
      SmallVector<AffineExpr> exprs;
      for (auto [letter, dim] : llvm::zip(spec, getShape(input))) {
        const TDim &size = sizes.at(letter);
        if (dim == size) {
          exprs.push_back(getAffineDimExpr(loops.find(letter), context));
        } else if (dim == TDim(1)) {
          exprs.push_back(getAffineConstantExpr(0, context));
          broadcasts = true;
        } else {
          return op.emitError()
                 << "cannot lower einsum '" << expr << "': axis '" << letter
                 << "' of dim " << dim.toString() << " broadcasts to "
                 << size.toString() << " only at run time";
        }
      }
      maps.push_back(AffineMap::get(loops.size(), 0, exprs, context));
    }
    SmallVector<AffineExpr> resultExprs;
    for (size_t i = 0; i < output.size(); ++i)
      resultExprs.push_back(getAffineDimExpr(i, context));
    maps.push_back(AffineMap::get(loops.size(), 0, resultExprs, context));

    Builder builder(rewriter, op, symbols);
    Value init = builder.filled(getShape(op.getType()), element,
                                scalar(rewriter, op.getLoc(), element, 0));
    ValueRange inputs = adaptor.getInputs();
    Value result;
    if (!broadcasts && isPlainMatmul(specs, output, /*batch=*/false))
      result = linalg::MatmulOp::create(rewriter, op.getLoc(), inputs, init)
                   .getResult(0);
    else if (!broadcasts && isPlainMatmul(specs, output, /*batch=*/true))
      result =
          linalg::BatchMatmulOp::create(rewriter, op.getLoc(), inputs, init)
              .getResult(0);
    else
      result = linalg::GenericOp::create(
                   rewriter, op.getLoc(), init.getType(), inputs, init, maps,
                   iterators(output.size(), loops.size() - output.size()),
                   [&](OpBuilder &b, Location loc, ValueRange args) {
                     Value product = args.front();
                     for (Value arg : args.drop_front().drop_back())
                       product = mul(b, loc, product, arg);
                     linalg::YieldOp::create(b, loc,
                                             add(b, loc, args.back(), product));
                   })
                   .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::tract::populateNNLoweringPatterns(const TypeConverter &converter,
                                             const SymbolValueMap &symbols,
                                             RewritePatternSet &patterns) {
  patterns.add<EinsumLowering>(converter, symbols, patterns.getContext());
}
