//===- LoweringUtils.h - shared pieces of the tract lowering ----*- C++ -*-===//
//
// What every lowering pattern needs: the type converter (tract tensors carry
// their symbolic dims in an encoding and may be unsigned; upstream dialects
// want plain signless tensors), and the run-time values of the symbols, from
// which the dynamic sizes of results are computed.
//
//===----------------------------------------------------------------------===//

#ifndef LOWERING_LOWERINGUTILS_H
#define LOWERING_LOWERINGUTILS_H

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

/// The run-time values of a function's symbols, bound at its entry from the
/// dims of its arguments.
class SymbolValueMap {
public:
  /// Binds the symbols of `func` from its tensor arguments' dims: a dim that
  /// is exactly a symbol binds it; a dim `a*S+b` binds S when it is the only
  /// unbound symbol. Fails with an error naming a symbol no input determines.
  LogicalResult bindFunction(Operation *func);

  /// The index value of `dim` at the builder's insertion point, inside
  /// `func` (constants fold; symbols come from the entry).
  Value materialize(OpBuilder &builder, Location loc, Operation *func,
                    const TDim &dim) const;

  /// The dynamic sizes of `type` (a tract tensor type), in order, for
  /// `tensor.empty`.
  SmallVector<Value> dynamicSizes(OpBuilder &builder, Location loc,
                                  Operation *func, Type type) const;

  /// A `tensor.empty` of the plain version of `type`, with `elementType` if
  /// given.
  Value emptyTensor(OpBuilder &builder, Location loc, Operation *func,
                    Type type, Type elementType = {}) const;

  /// The symbols of `func`, as bound.
  const llvm::StringMap<Value> *lookup(Operation *func) const;

  /// Binds a symbol that no input determines but an op computes at run time
  /// (the `len` of tract.dyn_slice, tract.range, tract.topk), when that op is
  /// lowered; `value` must dominate the symbol's later uses. Patterns only
  /// hold a const map, hence the mutable state.
  void bindComputedSymbol(Operation *func, StringRef name, Value value) const;

  /// The symbol `op` computes at run time: its `len` when that is a lone
  /// symbol.
  static std::optional<std::string> getComputedSymbol(Operation *op);
  /// Every symbol `op` computes: its `len`, or the lone-symbol entries of a
  /// tract.bind_dims.
  static SmallVector<std::string> getComputedSymbols(Operation *op);

private:
  mutable llvm::DenseMap<Operation *, llvm::StringMap<Value>> symbols;
};

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

/// Pattern populators, one per op family; `symbols` outlives the patterns.
void populateElementwiseLoweringPatterns(const TypeConverter &converter,
                                         const SymbolValueMap &symbols,
                                         RewritePatternSet &patterns);
void populateArrayLoweringPatterns(const TypeConverter &converter,
                                   const SymbolValueMap &symbols,
                                   RewritePatternSet &patterns);
void populateNNLoweringPatterns(const TypeConverter &converter,
                                const SymbolValueMap &symbols,
                                RewritePatternSet &patterns);
void populateControlLoweringPatterns(const TypeConverter &converter,
                                     const SymbolValueMap &symbols,
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

#endif // LOWERING_LOWERINGUTILS_H
