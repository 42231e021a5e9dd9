//===- NnefBuilder.h - what an NNEF op handler sees -------------*- C++ -*-===//
//
// The importer evaluates the graph body: literals and arithmetic on them are
// computed, integers are symbolic dims (TDim), and each invocation of a
// standard or tract operation is translated by a handler into tract ops.
// Compound fragments the document defines are inlined.
//
//===----------------------------------------------------------------------===//

#ifndef FRONTENDS_NNEF_NNEFBUILDER_H
#define FRONTENDS_NNEF_NNEFBUILDER_H

#include "dialects/tract/TractAttrs.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"
#include "frontends/nnef/NnefAst.h"
#include "mlir/IR/Builders.h"

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace mlir::tract::nnef {

/// A value of the NNEF language: a tensor, a literal, or a composite.
struct NValue {
  enum class Kind { Tensor, Integer, Scalar, Logical, String, Array, Tuple };
  Kind kind = Kind::Scalar;
  Value tensor;
  TDim integer;
  double scalar = 0;
  bool logical = false;
  std::string string;
  std::vector<NValue> items;

  static NValue ofTensor(Value v) {
    return with(Kind::Tensor, &NValue::tensor, v);
  }
  static NValue ofInteger(TDim d) {
    return with(Kind::Integer, &NValue::integer, std::move(d));
  }
  static NValue ofScalar(double d) {
    return with(Kind::Scalar, &NValue::scalar, d);
  }
  static NValue ofLogical(bool b) {
    return with(Kind::Logical, &NValue::logical, b);
  }
  static NValue ofString(std::string s) {
    return with(Kind::String, &NValue::string, std::move(s));
  }
  static NValue ofArray(std::vector<NValue> items, Kind kind = Kind::Array) {
    return with(kind, &NValue::items, std::move(items));
  }

private:
  /// A value of `kind` whose `field` holds `value`.
  template <typename T>
  static NValue with(Kind kind, T NValue::*field, T value) {
    NValue n;
    n.kind = kind;
    n.*field = std::move(value);
    return n;
  }
};

class ModelBuilder;

/// One invocation being translated: its resolved arguments (defaults
/// applied) and the means to build and report.
class Invocation {
public:
  Invocation(ModelBuilder &model, const Expr &expr, Location loc)
      : model(model), expr(expr), loc(loc), name(expr.text) {}

  /// The operation's name (the invoked name, or the one an operator such as
  /// `+` stands for).
  StringRef getName() const { return name; }
  /// The generic type given as `name<type>(...)`, or the fragment's default.
  std::string genericType;
  /// The quantized type graph.quant gives the tensor this invocation
  /// assigns, if any (what `tract_core_cast` without `to` casts to).
  Type quantizedResult;
  std::map<std::string, NValue, std::less<>> args;
  ModelBuilder &model;
  const Expr &expr;
  Location loc;
  std::string name;
  MLIRContext *getContext() const { return loc.getContext(); }
  OpBuilder &getBuilder();

  // Typed argument access; each reports a clear error and returns nullopt
  // when the argument has another type.
  std::optional<Value> tensor(StringRef name, Type likeElementType = {});
  std::optional<std::vector<Value>> tensors(StringRef name);
  std::optional<int64_t> integer(StringRef name);
  std::optional<TDim> dim(StringRef name);
  std::optional<SmallVector<int64_t>> integers(StringRef name);
  std::optional<SmallVector<TDim>> dims(StringRef name);
  std::optional<double> scalar(StringRef name);
  std::optional<bool> logical(StringRef name);
  std::optional<std::string> string(StringRef name);
  /// `(integer, integer)[]`
  std::optional<std::vector<std::pair<int64_t, int64_t>>> pairs(StringRef name);
  /// Whether the argument is the scalar literal `value` (the `0.0` default
  /// bias of conv and linear).
  bool isLiteral(StringRef name, double value) const;

  /// Builds a single-result tract op whose result type the dialect infers;
  /// null if invalid (the dialect reported why).
  template <typename OpTy, typename... Args> Value create(Args &&...args) {
    Operation *op = createOp<OpTy>(Type(), std::forward<Args>(args)...);
    return op ? op->getResult(0) : Value();
  }
  /// The same for ops of several results; `build`'s result types are given
  /// by the caller (as null types, one per result) and inferred. Without
  /// them, the generated `build` infers the types itself and aborts the
  /// process when it cannot.
  template <typename OpTy, typename... Args>
  Operation *createOp(Args &&...args) {
    OpBuilder &builder = getBuilder();
    OperationState state(loc, OpTy::getOperationName());
    OpTy::build(builder, state, std::forward<Args>(args)...);
    state.types.clear();
    if (llvm::any_of(state.operands, [](Value v) { return !v; }))
      return nullptr;
    SmallVector<Type, 2> types;
    if (failed(OpTy::inferReturnTypes(
            getContext(), loc, state.operands,
            state.attributes.getDictionary(getContext()),
            state.getRawProperties(), state.regions, types)))
      return nullptr;
    state.addTypes(types);
    return builder.create(state);
  }
  /// A binary element-wise op after aligning ranks with leading unit axes.
  template <typename OpTy> Value binary(Value lhs, Value rhs) {
    if (!lhs || !rhs)
      return {};
    if (Type common = commonSuperType(elementType(lhs), elementType(rhs))) {
      lhs = castTo(lhs, common);
      rhs = castTo(rhs, common);
    }
    int64_t r = std::max(rank(lhs), rank(rhs));
    return create<OpTy>(unsqueezeTo(lhs, r), unsqueezeTo(rhs, r));
  }
  Value unsqueezeTo(Value value, int64_t rank);
  Value constant(ElementsAttr value);
  Value scalarConstant(Type elementType, double value, unsigned rank = 0);
  /// A constant tensor from an array literal such as `[[0.0, 1.0]]`, which
  /// NNEF allows wherever a tensor is expected; null (with `why` set) when
  /// the array is ragged, empty, or holds non-constant items. A literal the
  /// graph named is already a constant: that one, when of the type asked.
  Value arrayConstant(const NValue &array, Type likeElementType,
                      std::string &why);
  Value castTo(Value value, Type elementType);
  /// A dim, symbolic or not, as a 0-d i64 tensor of its value when the
  /// model runs; the import keeps knowing the value.
  Value dimValue(const TDim &dim);
  /// The type two operands of different element types meet in, as tract
  /// promotes them (an f16 by an f32 is an f32, an integer by a float is the
  /// float, u8 by i8 is i16); null when they are equal or do not meet.
  static Type commonSuperType(Type a, Type b);
  static int64_t rank(Value value) {
    return cast<RankedTensorType>(value.getType()).getRank();
  }
  static Type elementType(Value value) {
    return cast<RankedTensorType>(value.getType()).getElementType();
  }
  DimAttr dimAttr(const TDim &d) { return DimAttr::get(getContext(), d); }
  ShapeAttr shapeAttr(ArrayRef<TDim> d) {
    return ShapeAttr::get(getContext(), d);
  }

  /// Reports `message` at the invocation; returns nullopt for chaining.
  std::nullopt_t error(const Twine &message);
  /// The known integer values of a 1-D integer tensor (a constant, or a
  /// shape from `tract_core_shape_of`).
  std::optional<SmallVector<TDim>> knownDims(Value value);
  void setKnownDims(Value value, ArrayRef<TDim> dims);

  /// A new graph input (`external`).
  Value addInput(RankedTensorType type);
  /// The tensor file of a variable, by label: its bytes and, when the
  /// import reads it in place, the buffer that holds them; nullopt if
  /// absent.
  struct TensorFile {
    StringRef bytes;
    std::shared_ptr<llvm::MemoryBuffer> inPlace;
  };
  std::optional<TensorFile> tensorFile(StringRef label);
  /// Declares a symbol met in a shape.
  void declareSymbols(ArrayRef<TDim> dims);
  /// A new symbol, `hint` or `hint_N`, for a size known when the model
  /// runs; declared.
  TDim freshSymbol(StringRef hint);
  /// The values of a 0-d or 1-d integer tensor of static length that the
  /// import cannot know (computed from an input's values): a fresh symbol
  /// per value, bound by tract.bind_dims when the model runs.
  std::optional<SmallVector<TDim>> bindValuesAsDims(Value values,
                                                    StringRef hint);
};

using OpHandler = std::function<std::optional<NValue>(Invocation &)>;

/// The translated operations, with their NNEF signatures (parameter names,
/// order and defaults) parsed from declarations.
class OpRegistry {
public:
  struct Entry {
    const Fragment *signature;
    OpHandler handler;
  };
  const Entry *lookup(StringRef name) const;
  std::vector<std::string> names() const;
  static const OpRegistry &get();

  /// Adds the operations whose declarations are in `declarations`; every
  /// declared fragment gets `handler`, which may look at the name. Without a
  /// handler, the fragments are compounds whose bodies are inlined.
  void add(StringRef declarations, OpHandler handler);

private:
  std::vector<std::unique_ptr<Document>> documents;
  std::map<std::string, Entry, std::less<>> entries;
};

void registerStandardOps(OpRegistry &registry);
/// `tract_core_scan`, which evaluates a fragment of the document as its body.
std::optional<NValue> scanOp(Invocation &call);
/// `tract_core_if`, whose branches are fragments of the document.
std::optional<NValue> ifOp(Invocation &call);
void registerTractOps(OpRegistry &registry);

/// The element type of an NNEF type name (`scalar`, `integer`, `logical`) or
/// a tract datum type (`f32`, `i64`, `bool`, ...); null if unknown.
Type elementTypeFromName(MLIRContext *context, StringRef name);

} // namespace mlir::tract::nnef

#endif // FRONTENDS_NNEF_NNEFBUILDER_H
