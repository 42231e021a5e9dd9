//===- LoweringUtils.h - shared pieces of the tract lowering ----*- C++ -*-===//
//
// What every lowering pattern needs: the type converter (tract tensors carry
// their symbolic dims in an encoding and may be unsigned; upstream dialects
// want plain signless tensors), and the run-time values of the symbols, from
// which the dynamic sizes of results are computed.
//
//===----------------------------------------------------------------------===//

#ifndef CONVERSION_LOWERINGUTILS_H
#define CONVERSION_LOWERINGUTILS_H

#include "dialects/tdim/TDim.h"
#include "dialects/tract/TractShapes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::tract {

/// tract tensors to plain ones: the dims encoding is dropped and unsigned
/// integers become signless (their semantics are chosen per op from the
/// original type).
class TractTypeConverter : public TypeConverter {
public:
  TractTypeConverter();
};

/// The plain tensor type of a tract tensor type.
Type convertTractType(Type type);
/// The signless element type of a tract element type.
Type convertElementType(Type type);

/// `dim` as `coefficient * symbol + offset`, when it has that form: the
/// dims from which a symbol's value is read (`S`, `2*S+1`).
struct LinearForm {
  std::string symbol;
  int64_t coefficient;
  int64_t offset;
};
std::optional<LinearForm> getLinearForm(const TDim &dim);

/// Where a function's entry reads a symbol: the first input dim, in argument
/// then axis order, of the form `a*S+b`.
struct SymbolSource {
  unsigned argument;
  unsigned axis;
  LinearForm form;
};

/// The sources of the symbols that inputs of these shapes determine, in the
/// order they are bound (an argument that is not a tensor has no dims).
SmallVector<SymbolSource> findSymbolSources(ArrayRef<Shape> inputShapes);

/// The value of the symbol whose source dim `a*S+b` is `size`:
/// `(size - b) floordiv a`.
Value readSymbol(OpBuilder &builder, Location loc, Value size,
                 const LinearForm &form);

/// The run-time values of symbols live in the IR, as tract.bind_symbol ops:
/// `bindInputSymbols` binds those the inputs determine at the top of a
/// function before the conversion, and the lowering of an op that computes
/// a symbol binds it after computing it (`bindSymbol`). A dim is
/// materialized at a builder's insertion point from the nearest bindings
/// before it, in its block or an enclosing one.

/// Binds the symbols of `func` from its tensor arguments' dims, at the top
/// of its entry block: a dim that is exactly a symbol binds it; a dim
/// `a*S+b` binds S when it is the only unbound symbol. Fails with an error
/// naming a symbol that neither an input nor an op of `func` determines.
/// A kernel function (kKernelFunctionAttrName) has no symbols to bind.
LogicalResult bindInputSymbols(Operation *func);

/// Binds `symbol` to `value` (an index) at the builder's insertion point,
/// for what follows.
void bindSymbol(OpBuilder &builder, Location loc, StringRef symbol,
                Value value);

/// The value of `symbol` at `point` of `block`: that of the nearest
/// tract.bind_symbol before it in the block or an enclosing one, within
/// the function; null when none.
Value lookupSymbol(Block *block, Block::iterator point, StringRef symbol);
/// The same just before `op`.
inline Value lookupSymbol(Operation *op, StringRef symbol) {
  return lookupSymbol(op->getBlock(), Block::iterator(op), symbol);
}

/// Erases the bindings of `root`'s functions once they are lowered.
void eraseSymbolBindings(Operation *root);

/// The index value of `dim` at the builder's insertion point (constants
/// fold; symbols come from their bindings); null when a symbol is unbound.
Value materializeDim(OpBuilder &builder, Location loc, const TDim &dim);
/// The same with the symbols' values given by `bound`. With `overflow`,
/// every sum and product also tells whether it wrapped: `*overflow` becomes
/// an i1 that is true if one did (null when nothing can). The values are
/// of `type`, index if null (the bound values must be of it too).
Value materializeDim(OpBuilder &builder, Location loc,
                     const llvm::StringMap<Value> &bound, const TDim &dim,
                     Value *overflow = nullptr, Type type = {});

/// The dynamic sizes of `type` (a tract tensor type), in order, for
/// `tensor.empty`.
SmallVector<Value> dynamicSizes(OpBuilder &builder, Location loc, Type type);

/// A `tensor.empty` of the plain version of `type`, with `elementType` if
/// given; null when a symbol of its dims is unbound.
Value emptyTensor(OpBuilder &builder, Location loc, Type type,
                  Type elementType = {});

/// The symbol `op` computes at run time: its `len` when that is a lone
/// symbol.
std::optional<std::string> getComputedSymbol(Operation *op);
/// Every symbol `op` computes: its `len`, or the lone-symbol entries of a
/// tract.bind_dims.
SmallVector<std::string> getComputedSymbols(Operation *op);

/// `text` inside a printf format (its `%` doubled), for the messages that
/// compiled checks pass to the runtime.
std::string escapeFormat(StringRef text);

/// The name of the model node `op` comes from (its NameLoc), or its op
/// name, for the messages of compiled checks.
std::string nodeName(Operation *op);

/// Calls the runtime's `tract_fail(format, values...)` at the builder's
/// point (declaring it, and the message as a global of `op`'s module): a
/// check inside compiled code failed; the model's entry then returns an
/// error status with that message. `values` are i64.
void callFail(OpBuilder &builder, Operation *op, const std::string &format,
              ValueRange values);

/// The function an op is lowered within.
Operation *getEnclosingFunction(Operation *op);

/// Whether the tract element type is an unsigned integer.
bool isUnsignedInteger(Type elementType);

/// The first symbol of `op`'s operand and result types that has no value
/// where `op` stands, leaving out those `op` computes itself.
std::optional<std::string> findUnboundSymbol(Operation *op);

/// The base of the lowering patterns of every op family: `lower` builds the
/// replacement of an op whose symbols have values where it stands (an op
/// using a symbol that an op computes at run time waits for that op's
/// lowering to bind it), with the helpers that size results from symbolic
/// dims.
template <typename OpTy>
class TractLoweringPattern : public OpConversionPattern<OpTy> {
public:
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpTy::Adaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const final {
    if (requiresBoundSymbols())
      if (std::optional<std::string> name = findUnboundSymbol(op))
        return rewriter.notifyMatchFailure(op, "symbol " + *name +
                                                   " has no value here");
    return lower(op, adaptor, rewriter);
  }

  virtual LogicalResult lower(OpTy op, OpAdaptor adaptor,
                              ConversionPatternRewriter &rewriter) const = 0;

  /// False for a pattern that sizes what it can without every symbol (an
  /// if whose results take their sizes in its branches).
  virtual bool requiresBoundSymbols() const { return true; }

  /// `dim` as an attribute when constant, else its value at the builder's
  /// point; failure when a symbol is unbound.
  static FailureOr<OpFoldResult> size(OpBuilder &b, Location loc,
                                      const TDim &dim) {
    if (std::optional<int64_t> value = dim.getConstant())
      return OpFoldResult(b.getIndexAttr(*value));
    if (Value value = materializeDim(b, loc, dim))
      return OpFoldResult(value);
    return failure();
  }
  static FailureOr<SmallVector<OpFoldResult>> sizes(OpBuilder &b, Location loc,
                                                    ArrayRef<TDim> dims) {
    SmallVector<OpFoldResult> result;
    for (const TDim &dim : dims) {
      FailureOr<OpFoldResult> one = size(b, loc, dim);
      if (failed(one))
        return failure();
      result.push_back(*one);
    }
    return result;
  }
};

/// Pattern populators, one per op family.
void populateElementwiseLoweringPatterns(const TypeConverter &converter,
                                         RewritePatternSet &patterns);
void populateArrayLoweringPatterns(const TypeConverter &converter,
                                   RewritePatternSet &patterns);
void populateNNLoweringPatterns(const TypeConverter &converter,
                                RewritePatternSet &patterns);
void populateControlLoweringPatterns(const TypeConverter &converter,
                                     RewritePatternSet &patterns);

/// Scalar helpers shared by the op families.
bool isFloat(Type type);
Value floatConstant(OpBuilder &b, Location loc, Type type, double value);
Value intConstant(OpBuilder &b, Location loc, Type type, int64_t value);
/// An element converted from tract element type `from` to `to` with the
/// semantics of tract.cast.
Value castScalar(OpBuilder &b, Location loc, Value value, Type from, Type to);
/// The same from the element's own type (a plain, non-quantized one).
inline Value castScalar(OpBuilder &b, Location loc, Value value, Type to) {
  return castScalar(b, loc, value, value.getType(), to);
}
/// The single element of a tensor of volume 1 (any rank).
Value extractScalar(OpBuilder &b, Location loc, Value tensor);
/// A linalg.generic over the whole of `init` (all loops parallel), with
/// `inputs` read through `inputMaps`; `body` gets the input elements and
/// returns the result element.
Value buildGeneric(OpBuilder &b, Location loc, Value init, ValueRange inputs,
                   ArrayRef<AffineMap> inputMaps,
                   function_ref<Value(OpBuilder &, Location, ValueRange)> body);

/// A tract constant `value` of element type `type` (float or integer) with
/// `rank` unit dims, which broadcasts against any tensor of that rank.
Value splat(OpBuilder &b, Location loc, Type type, double value, size_t rank);

/// Rewrites the ops of `module` that compute on quantized tensors (casts
/// and arithmetic) into integer and f32 tract ops, and gives every
/// quantized value the integer type holding it; an error on an op that
/// computes on quantized values otherwise.
LogicalResult lowerQuantizedTypes(ModuleOp module);

/// Rewrites the composite ops of `module` (tract.sdpa, tract.gru_epilogue)
/// into the tract ops that compute them (einsums, softmax, element-wise
/// ops), before the conversion to linalg; an error on the op when its
/// shapes rule that out.
LogicalResult decomposeCompositeOps(ModuleOp module);

} // namespace mlir::tract

#endif // CONVERSION_LOWERINGUTILS_H
