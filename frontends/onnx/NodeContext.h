//===- NodeContext.h - what an ONNX op handler sees -------------*- C++ -*-===//
//
// Op handlers translate one ONNX node into tract ops. They read the node's
// inputs and attributes through a NodeContext, build ops whose result types
// the dialect infers, and return the values of the node's outputs. Handlers
// are registered by (op type, since-version) and split by op family.
//
//===----------------------------------------------------------------------===//

#ifndef FRONTENDS_ONNX_NODECONTEXT_H
#define FRONTENDS_ONNX_NODECONTEXT_H

#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"
#include "mlir/IR/Builders.h"

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace onnx {
class NodeProto;
class AttributeProto;
class TensorProto;
class GraphProto;
} // namespace onnx

namespace mlir::tract::onnx {

class GraphImporter;

class NodeContext {
public:
  NodeContext(GraphImporter &graph, const ::onnx::NodeProto &node,
              int64_t opset, OpBuilder &builder, Location loc);

  StringRef getOpType() const;
  StringRef getName() const;
  int64_t getOpset() const { return opset; }
  OpBuilder &getBuilder() { return builder; }
  Location getLoc() const { return loc; }
  MLIRContext *getContext() { return builder.getContext(); }
  GraphImporter &getGraph() { return graph; }
  const ::onnx::NodeProto &getNode() const { return node; }

  //===--------------------------------------------------------------------===//
  // Inputs
  //===--------------------------------------------------------------------===//

  /// The number of inputs as written, trailing empty names included.
  unsigned getNumInputs() const;
  /// Input `i` is given (present and not an empty name).
  bool hasInput(unsigned i) const;
  /// The value of input `i`; null if absent.
  Value input(unsigned i) const;
  /// The number of outputs the node declares.
  unsigned getNumOutputs() const;
  /// Output `i` is wanted (present and not an empty name).
  bool hasOutput(unsigned i) const;

  /// The tensors of input `i` when it is a sequence (ONNX sequences are
  /// lists of tensors known at import); null otherwise.
  const SmallVector<Value> *sequenceInput(unsigned i) const;
  /// Makes output `i` the sequence of `values`; the handler pushes a null
  /// value in its place.
  void setSequenceOutput(unsigned i, ArrayRef<Value> values) {
    sequenceOutputs[i] = SmallVector<Value>(values);
  }
  const std::map<unsigned, SmallVector<Value>> &getSequenceOutputs() const {
    return sequenceOutputs;
  }

  /// The constant behind input `i` (a `tract.const`), if any.
  DenseElementsAttr getConstant(unsigned i) const;
  /// The value of the constant behind input `i`: dense, or a resource (a
  /// large weight mapped from the model's file); null if none.
  ElementsAttr getConstantValue(unsigned i) const;
  /// The integer values of a constant input.
  std::optional<SmallVector<int64_t>> getConstInts(unsigned i) const;
  /// The float values of a constant input (any float or integer type).
  std::optional<SmallVector<double>> getConstFloats(unsigned i) const;
  /// The symbolic value of a 0-D or 1-D integer input: a shape computed by a
  /// shape subgraph, say `[1, S, 64]`, or a constant.
  std::optional<SmallVector<TDim>> getDims(unsigned i) const;
  std::optional<SmallVector<TDim>> getDims(Value value) const;
  /// Records the symbolic value of an integer tensor the handler produced.
  void setDims(Value value, ArrayRef<TDim> dims);

  //===--------------------------------------------------------------------===//
  // Attributes
  //===--------------------------------------------------------------------===//

  const ::onnx::AttributeProto *getAttr(StringRef name) const;
  bool hasAttr(StringRef name) const { return getAttr(name) != nullptr; }
  std::optional<int64_t> getOptInt(StringRef name) const;
  int64_t getInt(StringRef name, int64_t defaultValue) const;
  std::optional<float> getOptFloat(StringRef name) const;
  float getFloat(StringRef name, float defaultValue) const;
  std::optional<std::string> getOptString(StringRef name) const;
  std::string getString(StringRef name, StringRef defaultValue) const;
  std::optional<SmallVector<int64_t>> getInts(StringRef name) const;
  std::optional<SmallVector<float>> getFloats(StringRef name) const;
  std::optional<SmallVector<std::string>> getStrings(StringRef name) const;
  const ::onnx::TensorProto *getTensor(StringRef name) const;
  const ::onnx::GraphProto *getGraphAttr(StringRef name) const;

  //===--------------------------------------------------------------------===//
  // Building
  //===--------------------------------------------------------------------===//

  /// Builds a single-result tract op whose result type the dialect infers,
  /// and folds it when its operands are constant. Returns null when the op
  /// is invalid; the reason is recorded for the node's error message.
  template <typename OpTy, typename... Args> Value create(Args &&...args) {
    OperationState state(loc, OpTy::getOperationName());
    OpTy::build(builder, state, Type(), std::forward<Args>(args)...);
    state.types.clear();
    if (llvm::any_of(state.operands, [](Value v) { return !v; }))
      return fail();
    SmallVector<Type, 1> types;
    if (failed(OpTy::inferReturnTypes(
            getContext(), loc, state.operands,
            state.attributes.getDictionary(getContext()),
            state.getRawProperties(), state.regions, types)))
      return fail();
    state.addTypes(types);
    return finish(state);
  }

  /// A binary element-wise op, after aligning the operands' ranks with
  /// leading unit axes (ONNX's multidirectional broadcasting).
  template <typename OpTy> Value binary(Value lhs, Value rhs) {
    int64_t targetRank = std::max(rank(lhs), rank(rhs));
    lhs = unsqueezeTo(lhs, targetRank);
    rhs = unsqueezeTo(rhs, targetRank);
    if (lhs && rhs && failed(alignBroadcast(lhs, rhs)))
      return Value();
    return create<OpTy>(lhs, rhs);
  }

  /// Two symbolic dims of the operands of a broadcasting op that are
  /// neither equal nor 1 are assumed equal (assumeDim on `rhs`): the op
  /// takes the broadcast of equal dims, and the assertion is checked when
  /// the model runs, where a `dim#dim` broadcast could not be lowered.
  LogicalResult alignBroadcast(Value lhs, Value &rhs);

  /// Builds a tract op with explicit result types (multi-result ops, or ops
  /// with regions), verifying it; returns null when invalid.
  Operation *createWithTypes(OperationState &state);

  /// A constant tensor.
  Value constant(ElementsAttr value);
  /// A scalar (rank 0) or rank-`rank` all-ones-shape constant of `type`.
  Value scalar(Type elementType, double value, unsigned rank = 0);
  Value intScalar(Type elementType, int64_t value, unsigned rank = 0);
  /// A constant of `like`'s element type and rank, all dims 1.
  Value scalarLike(Value like, double value) {
    return like ? scalar(elementType(like), value, rank(like)) : Value();
  }

  /// The product of the dims of `x` on `axes`, as a constant of `x`'s
  /// element type and rank (all dims 1); computed from `tract.shape_of` at
  /// run time when a dim is symbolic.
  Value axesVolume(Value x, ArrayRef<int64_t> axes);

  /// Casts `value` to `elementType` unless it already is.
  Value castTo(Value value, Type elementType);
  /// Inserts leading unit axes so that `value` has rank `rank`.
  Value unsqueezeTo(Value value, int64_t rank);

  /// A fresh symbol for a dim the model leaves unknown (data-dependent
  /// sizes), declared in the module.
  TDim freshSymbol(StringRef hint);

  /// Dims that only the values of `values` decide (a 1-D integer tensor of
  /// static length, such as a shape given as a graph input): one fresh
  /// symbol per element, bound to the elements by a tract.bind_dims when the
  /// model runs. Null when `values` has no static length.
  std::optional<SmallVector<TDim>> bindValuesAsDims(Value values,
                                                    StringRef hint);

  /// `value` with dim `expected` on `axis`: as it is when its dim is that;
  /// an error when both are constants and differ; otherwise the model
  /// relies on their being equal, which becomes an assertion checked when
  /// the model runs (as tract records it), and `value` is sliced to
  /// `expected` (all of it, once the assertion holds).
  FailureOr<Value> assumeDim(Value value, int64_t axis, const TDim &expected,
                             const Twine &what);

  //===--------------------------------------------------------------------===//
  // Errors
  //===--------------------------------------------------------------------===//

  /// Records `message` as the reason the node failed; returns failure.
  LogicalResult error(const Twine &message);
  /// An attribute value, input combination or dtype the importer does not
  /// translate.
  LogicalResult unsupported(const Twine &what) {
    return error("unsupported: " + what);
  }
  /// Fails, naming `what`, unless every value is a size a tensor can have
  /// on one axis, negative or not: below 2^31 in magnitude (the ceiling of
  /// dims read from a model, so that arithmetic on them cannot overflow).
  LogicalResult checkSizes(ArrayRef<int64_t> values, StringRef what);

  /// Normalizes a possibly negative axis against `rank`.
  FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank);
  /// Normalizes each axis against `rank`, in order; with `sortedUnique`,
  /// sorted, and a repeated axis is an error.
  FailureOr<SmallVector<int64_t>> normalizeAxes(ArrayRef<int64_t> axes,
                                                int64_t rank,
                                                bool sortedUnique = false);

  /// The element type of `value`.
  static Type elementType(Value value);
  static int64_t rank(Value value);
  /// A type as the IR prints it, for messages.
  static std::string typeName(Type type);

  /// Whether `attribute` has the type `expected` (or none, as some old
  /// models write); if not, the node fails naming both, and the getter
  /// that asked returns no value.
  /// (`expected` is an `AttributeProto::AttributeType`.)
  bool hasAttrType(const ::onnx::AttributeProto &attribute, int expected) const;

  /// Whether building or a handler failed, and the reason if one was given
  /// (otherwise the dialect's diagnostic is the reason).
  bool hasFailed() const { return poisoned; }
  const std::string &getFailure() const { return failure; }

private:
  Value fail();
  Value finish(OperationState &state);
  /// Erases `op`, recording why, when a result type has a negative dim.
  bool erasedForNegativeDims(Operation *op);

  GraphImporter &graph;
  const ::onnx::NodeProto &node;
  int64_t opset;
  OpBuilder &builder;
  Location loc;
  // Reporting does not change what the node means: const getters may fail
  // it (an attribute of the wrong type).
  mutable std::string failure;
  mutable bool poisoned = false;
  std::map<unsigned, SmallVector<Value>> sequenceOutputs;
};

/// `dims` in brackets, for messages: `[S,4]`.
std::string dimsToString(ArrayRef<TDim> dims);

/// `value` as the node's next output; failure when it is null (building it
/// failed, with an error reported).
inline LogicalResult pushOutput(SmallVectorImpl<Value> &outputs, Value value) {
  if (!value)
    return failure();
  outputs.push_back(value);
  return success();
}

/// Translates one node; pushes one value per node output (null for outputs
/// that are not wanted).
using OpHandler =
    std::function<LogicalResult(NodeContext &, SmallVectorImpl<Value> &)>;

/// The handlers, keyed by op type and the opset version since which each
/// translation applies.
class OpRegistry {
public:
  void add(StringRef opType, int sinceVersion, OpHandler handler);
  /// Several versions sharing one handler.
  void add(StringRef opType, std::initializer_list<int> sinceVersions,
           OpHandler handler);
  /// The handler for `opType` at `opset`: the newest with since <= opset.
  const OpHandler *lookup(StringRef opType, int64_t opset) const;
  /// Whether any version of `opType` is registered.
  bool knows(StringRef opType) const { return handlers.count(opType.str()); }
  std::vector<std::pair<std::string, int>> list() const;

  static const OpRegistry &get();

private:
  std::map<std::string, std::map<int, OpHandler>> handlers;
};

// Registration, one function per op family.
void registerElementwiseOps(OpRegistry &registry);
void registerArrayOps(OpRegistry &registry);
void registerNNOps(OpRegistry &registry);
void registerReduceOps(OpRegistry &registry);
void registerControlOps(OpRegistry &registry);
void registerRecurrentOps(OpRegistry &registry);
void registerQuantOps(OpRegistry &registry);
void registerSignalOps(OpRegistry &registry);
void registerSequenceOps(OpRegistry &registry);
/// The `ai.onnx.ml` domain, registered as `ai.onnx.ml.OP` at its own opset.
void registerMlOps(OpRegistry &registry);
/// onnxruntime's contrib ops of the `com.microsoft` domain, registered as
/// `com.microsoft.OP` at that domain's opset (NNOps.cpp).
void registerMicrosoftOps(OpRegistry &registry);
/// RotaryEmbedding (both domains) and com.microsoft's GroupQueryAttention
/// (TransformerOps.cpp).
void registerTransformerOps(OpRegistry &registry);

} // namespace mlir::tract::onnx

#endif // FRONTENDS_ONNX_NODECONTEXT_H
