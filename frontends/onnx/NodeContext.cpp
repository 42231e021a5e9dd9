//===- NodeContext.cpp - what an ONNX op handler sees ---------------------===//

#include "frontends/onnx/NodeContext.h"

#include "dialects/tract/TractFolding.h"
#include "frontends/onnx/GraphImporter.h"
#include "frontends/onnx/onnx.pb.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::tract;
using namespace mlir::tract::onnx;

NodeContext::NodeContext(GraphImporter &graph, const ::onnx::NodeProto &node,
                         int64_t opset, OpBuilder &builder, Location loc)
    : graph(graph), node(node), opset(opset), builder(builder), loc(loc) {}

StringRef NodeContext::getOpType() const { return node.op_type(); }
StringRef NodeContext::getName() const { return node.name(); }

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

unsigned NodeContext::getNumInputs() const { return node.input_size(); }

bool NodeContext::hasInput(unsigned i) const {
  return i < static_cast<unsigned>(node.input_size()) && !node.input(i).empty();
}

Value NodeContext::input(unsigned i) const {
  if (!hasInput(i))
    return {};
  return graph.lookup(node.input(i));
}

const SmallVector<Value> *NodeContext::sequenceInput(unsigned i) const {
  if (!hasInput(i))
    return nullptr;
  return graph.lookupSequence(node.input(i));
}

unsigned NodeContext::getNumOutputs() const { return node.output_size(); }

bool NodeContext::hasOutput(unsigned i) const {
  return i < static_cast<unsigned>(node.output_size()) &&
         !node.output(i).empty();
}

DenseElementsAttr NodeContext::getConstant(unsigned i) const {
  Value value = input(i);
  if (!value)
    return {};
  if (auto op = value.getDefiningOp<ConstOp>())
    return dyn_cast<DenseElementsAttr>(op.getValue());
  return {};
}

ElementsAttr NodeContext::getConstantValue(unsigned i) const {
  Value value = input(i);
  if (!value)
    return {};
  if (auto op = value.getDefiningOp<ConstOp>())
    return dyn_cast<ElementsAttr>(op.getValue());
  return {};
}

std::optional<SmallVector<int64_t>>
NodeContext::getConstInts(unsigned i) const {
  DenseElementsAttr constant = getConstant(i);
  if (!constant || !isa<IntegerType>(constant.getElementType()))
    return std::nullopt;
  return readIntValues(constant);
}

std::optional<SmallVector<double>>
NodeContext::getConstFloats(unsigned i) const {
  DenseElementsAttr constant = getConstant(i);
  if (!constant)
    return std::nullopt;
  SmallVector<double> values;
  if (isa<FloatType>(constant.getElementType())) {
    for (const APFloat &value : constant.getValues<APFloat>())
      values.push_back(value.convertToDouble());
    return values;
  }
  std::optional<SmallVector<int64_t>> ints = getConstInts(i);
  if (!ints)
    return std::nullopt;
  for (int64_t value : *ints)
    values.push_back(static_cast<double>(value));
  return values;
}

std::optional<SmallVector<TDim>> NodeContext::getDims(Value value) const {
  if (!value)
    return std::nullopt;
  auto &dims = graph.getModel().dims;
  if (auto it = dims.find(value); it != dims.end())
    return it->second;
  auto op = value.getDefiningOp<ConstOp>();
  if (!op)
    return std::nullopt;
  auto constant = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!constant || !isa<IntegerType>(constant.getElementType()) ||
      constant.getType().getRank() > 1 ||
      constant.getNumElements() > kFoldElementBudget)
    return std::nullopt;
  SmallVector<TDim> result;
  for (int64_t value : readIntValues(constant))
    result.push_back(TDim(value));
  return result;
}

std::optional<SmallVector<TDim>> NodeContext::getDims(unsigned i) const {
  return getDims(input(i));
}

void NodeContext::setDims(Value value, ArrayRef<TDim> dims) {
  if (value)
    graph.getModel().dims[value] = SmallVector<TDim>(dims);
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

const ::onnx::AttributeProto *NodeContext::getAttr(StringRef name) const {
  for (const auto &attribute : node.attribute())
    if (attribute.name() == name)
      return &attribute;
  return nullptr;
}

/// What `read` takes from the attribute `name` of `node`, or nullopt when
/// the node has no such attribute or one of another type than `type`.
template <typename Read>
static auto readAttr(const NodeContext &node, StringRef name,
                     ::onnx::AttributeProto::AttributeType type, Read read)
    -> std::optional<
        decltype(read(std::declval<const ::onnx::AttributeProto &>()))> {
  const auto *attribute = node.getAttr(name);
  if (attribute && node.hasAttrType(*attribute, type))
    return read(*attribute);
  return std::nullopt;
}

bool NodeContext::hasAttrType(const ::onnx::AttributeProto &attribute,
                              int expected) const {
  if (attribute.type() == expected ||
      attribute.type() == ::onnx::AttributeProto::UNDEFINED)
    return true;
  if (failure.empty())
    failure = "attribute '" + attribute.name() + "' is " +
              ::onnx::AttributeProto::AttributeType_Name(attribute.type()) +
              ", not " +
              ::onnx::AttributeProto::AttributeType_Name(
                  static_cast<::onnx::AttributeProto::AttributeType>(expected));
  poisoned = true;
  return false;
}

/// The elements of a repeated attribute field.
template <typename T, typename Repeated>
static SmallVector<T> toVector(const Repeated &values) {
  return SmallVector<T>(values.begin(), values.end());
}

std::optional<int64_t> NodeContext::getOptInt(StringRef name) const {
  return readAttr(*this, name, ::onnx::AttributeProto::INT,
                  [](const auto &a) { return a.i(); });
}

int64_t NodeContext::getInt(StringRef name, int64_t defaultValue) const {
  return getOptInt(name).value_or(defaultValue);
}

std::optional<float> NodeContext::getOptFloat(StringRef name) const {
  return readAttr(*this, name, ::onnx::AttributeProto::FLOAT,
                  [](const auto &a) { return a.f(); });
}

float NodeContext::getFloat(StringRef name, float defaultValue) const {
  return getOptFloat(name).value_or(defaultValue);
}

std::optional<std::string> NodeContext::getOptString(StringRef name) const {
  return readAttr(*this, name, ::onnx::AttributeProto::STRING,
                  [](const auto &a) { return a.s(); });
}

std::string NodeContext::getString(StringRef name,
                                   StringRef defaultValue) const {
  return getOptString(name).value_or(defaultValue.str());
}

std::optional<SmallVector<int64_t>> NodeContext::getInts(StringRef name) const {
  return readAttr(*this, name, ::onnx::AttributeProto::INTS,
                  [](const auto &a) { return toVector<int64_t>(a.ints()); });
}

std::optional<SmallVector<float>> NodeContext::getFloats(StringRef name) const {
  return readAttr(*this, name, ::onnx::AttributeProto::FLOATS,
                  [](const auto &a) { return toVector<float>(a.floats()); });
}

std::optional<SmallVector<std::string>>
NodeContext::getStrings(StringRef name) const {
  return readAttr(
      *this, name, ::onnx::AttributeProto::STRINGS,
      [](const auto &a) { return toVector<std::string>(a.strings()); });
}

const ::onnx::TensorProto *NodeContext::getTensor(StringRef name) const {
  const auto *attribute = getAttr(name);
  return attribute && attribute->has_t() ? &attribute->t() : nullptr;
}

const ::onnx::GraphProto *NodeContext::getGraphAttr(StringRef name) const {
  const auto *attribute = getAttr(name);
  return attribute && attribute->has_g() ? &attribute->g() : nullptr;
}

//===----------------------------------------------------------------------===//
// Building
//===----------------------------------------------------------------------===//

Value NodeContext::fail() {
  poisoned = true;
  return {};
}

/// A result type with a negative dim (a size computed from the model's
/// values, say) is no type at all: no fold or verifier may see it.
static bool hasNegativeDim(Operation *op) {
  return llvm::any_of(op->getResultTypes(), [](Type type) {
    auto shaped = dyn_cast<RankedTensorType>(type);
    return shaped && llvm::any_of(shaped.getShape(), [](int64_t dim) {
             return dim < 0 && !ShapedType::isDynamic(dim);
           });
  });
}

bool NodeContext::erasedForNegativeDims(Operation *op) {
  if (!hasNegativeDim(op))
    return false;
  (void)error("'" + op->getName().getStringRef() +
              "' would have a negative dim");
  op->erase();
  return true;
}

Value NodeContext::finish(OperationState &state) {
  Operation *op = builder.create(state);
  if (erasedForNegativeDims(op))
    return {};
  SmallVector<Value, 1> folded;
  if (succeeded(builder.tryFold(op, folded)) && !folded.empty()) {
    op->erase();
    return folded.front();
  }
  return op->getResult(0);
}

Operation *NodeContext::createWithTypes(OperationState &state) {
  if (llvm::any_of(state.operands, [](Value v) { return !v; })) {
    fail();
    return nullptr;
  }
  Operation *op = builder.create(state);
  if (erasedForNegativeDims(op))
    return nullptr;
  if (mlir::failed(mlir::verify(op))) {
    op->erase();
    fail();
    return nullptr;
  }
  return op;
}

Value NodeContext::constant(ElementsAttr value) {
  return ConstOp::create(builder, loc, cast<TensorType>(value.getType()),
                         value);
}

Value NodeContext::scalar(Type elementType, double value, unsigned rank) {
  auto type = RankedTensorType::get(SmallVector<int64_t>(rank, 1), elementType);
  if (auto floatType = dyn_cast<FloatType>(elementType))
    return constant(
        DenseElementsAttr::get(type, FloatAttr::get(floatType, value)));
  return intScalar(elementType, static_cast<int64_t>(value), rank);
}

Value NodeContext::intScalar(Type elementType, int64_t value, unsigned rank) {
  auto type = RankedTensorType::get(SmallVector<int64_t>(rank, 1), elementType);
  if (isa<FloatType>(elementType))
    return scalar(elementType, static_cast<double>(value), rank);
  return constant(
      DenseElementsAttr::get(type, IntegerAttr::get(elementType, value)));
}

Value NodeContext::axesVolume(Value x, ArrayRef<int64_t> axes) {
  if (!x)
    return {};
  Shape shape = getShape(x);
  TDim count(1);
  for (int64_t axis : axes)
    count *= shape[axis];
  Type type = elementType(x);
  if (std::optional<int64_t> value = count.getConstant())
    return scalar(type, static_cast<double>(*value), rank(x));
  auto indicesType = RankedTensorType::get({static_cast<int64_t>(axes.size())},
                                           builder.getI64Type());
  Value indices = constant(DenseElementsAttr::get(indicesType, axes));
  Value dims =
      create<GatherOp>(create<ShapeOfOp>(x), indices, static_cast<uint64_t>(0));
  Value product = axes.size() == 1 ? dims
                                   : create<ReduceOp>(dims, Reducer::Prod,
                                                      ArrayRef<int64_t>{0});
  return unsqueezeTo(castTo(product, type), rank(x));
}

Value NodeContext::castTo(Value value, Type elementType) {
  if (!value || elementType == NodeContext::elementType(value))
    return value;
  // The element type comes from another input, which may be missing.
  if (!elementType)
    return fail();
  OperationState state(loc, CastOp::getOperationName());
  Type type = getTensorType(getContext(), getShape(value), elementType);
  CastOp::build(builder, state, type, value);
  return finish(state);
}

Value NodeContext::unsqueezeTo(Value value, int64_t targetRank) {
  while (value && rank(value) < targetRank)
    value = create<AddAxisOp>(value, int64_t(0));
  return value;
}

TDim NodeContext::freshSymbol(StringRef hint) {
  return graph.freshSymbol(hint);
}

std::optional<SmallVector<TDim>> NodeContext::bindValuesAsDims(Value values,
                                                               StringRef hint) {
  if (!values || rank(values) != 1 || !isa<IntegerType>(elementType(values)) ||
      elementType(values).isInteger(1))
    return std::nullopt;
  std::optional<int64_t> count = getShape(values)[0].getConstant();
  if (!count)
    return std::nullopt;
  SmallVector<TDim> dims;
  for (int64_t i = 0; i < *count; ++i)
    dims.push_back(freshSymbol(hint));
  BindDimsOp::create(builder, loc, values, ShapeAttr::get(getContext(), dims));
  setDims(values, dims);
  return dims;
}

LogicalResult NodeContext::alignBroadcast(Value lhs, Value &rhs) {
  Shape left = getShape(lhs), right = getShape(rhs);
  if (left.size() != right.size())
    return success();
  for (auto [axis, dims] : llvm::enumerate(llvm::zip(left, right))) {
    auto [a, b] = dims;
    if (a == b || a == TDim(1) || b == TDim(1) ||
        (a.getConstant() && b.getConstant()))
      continue;
    FailureOr<Value> aligned = assumeDim(rhs, axis, a, "the right operand");
    if (mlir::failed(aligned))
      return mlir::failure();
    rhs = *aligned;
  }
  return mlir::success();
}

FailureOr<Value> NodeContext::assumeDim(Value value, int64_t axis,
                                        const TDim &expected,
                                        const Twine &what) {
  TDim actual = getShape(value)[axis];
  if (actual == expected)
    return value;
  if (actual.getConstant() && expected.getConstant())
    return error(what + " has dim " + actual.toString() + " on axis " +
                 Twine(axis) + ", expected " + expected.toString());
  graph.assumeEqual(actual, expected);
  return create<SliceOp>(value, uint64_t(axis),
                         DimAttr::get(getContext(), TDim(0)),
                         DimAttr::get(getContext(), expected));
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

LogicalResult NodeContext::error(const Twine &message) {
  if (failure.empty())
    failure = message.str();
  poisoned = true;
  return LogicalResult::failure();
}

LogicalResult NodeContext::checkSizes(ArrayRef<int64_t> values,
                                      StringRef what) {
  for (int64_t value : values)
    if (value <= -kDimCeiling || value >= kDimCeiling)
      return error(Twine(what) + " " + Twine(value) +
                   " is beyond the ceiling of 2^31 on one axis");
  return success();
}

FailureOr<int64_t> NodeContext::normalizeAxis(int64_t axis, int64_t rank) {
  int64_t normalized = axis < 0 ? axis + rank : axis;
  if (normalized < 0 || normalized >= rank) {
    (void)error("axis " + Twine(axis) + " is out of range for rank " +
                Twine(rank));
    return LogicalResult::failure();
  }
  return normalized;
}

std::string mlir::tract::onnx::dimsToString(ArrayRef<TDim> dims) {
  return "[" + shapeToString(dims) + "]";
}

FailureOr<SmallVector<int64_t>>
NodeContext::normalizeAxes(ArrayRef<int64_t> axes, int64_t rank,
                           bool sortedUnique) {
  SmallVector<int64_t> result;
  for (int64_t axis : axes) {
    FailureOr<int64_t> normalized = normalizeAxis(axis, rank);
    if (failed(normalized))
      return LogicalResult::failure();
    result.push_back(*normalized);
  }
  if (!sortedUnique)
    return result;
  llvm::sort(result);
  if (std::adjacent_find(result.begin(), result.end()) != result.end()) {
    (void)error("repeated axis in " +
                dimsToString(llvm::to_vector_of<TDim>(axes)));
    return LogicalResult::failure();
  }
  return result;
}

Type NodeContext::elementType(Value value) {
  return value ? getElementTypeOrSelf(value.getType()) : Type();
}

std::string NodeContext::typeName(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

int64_t NodeContext::rank(Value value) {
  if (!value)
    return -1;
  return cast<RankedTensorType>(value.getType()).getRank();
}

//===----------------------------------------------------------------------===//
// OpRegistry
//===----------------------------------------------------------------------===//

void OpRegistry::add(StringRef opType, int sinceVersion, OpHandler handler) {
  handlers[opType.str()][sinceVersion] = std::move(handler);
}

void OpRegistry::add(StringRef opType, std::initializer_list<int> versions,
                     OpHandler handler) {
  for (int version : versions)
    add(opType, version, handler);
}

const OpHandler *OpRegistry::lookup(StringRef opType, int64_t opset) const {
  auto it = handlers.find(opType.str());
  if (it == handlers.end())
    return nullptr;
  auto version = it->second.upper_bound(static_cast<int>(opset));
  if (version == it->second.begin())
    return nullptr;
  return &std::prev(version)->second;
}

std::vector<std::pair<std::string, int>> OpRegistry::list() const {
  std::vector<std::pair<std::string, int>> result;
  for (const auto &[op, versions] : handlers)
    for (const auto &[version, handler] : versions)
      result.emplace_back(op, version);
  return result;
}

const OpRegistry &OpRegistry::get() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    registerElementwiseOps(r);
    registerArrayOps(r);
    registerNNOps(r);
    registerReduceOps(r);
    registerControlOps(r);
    registerRecurrentOps(r);
    registerQuantOps(r);
    registerSignalOps(r);
    registerSequenceOps(r);
    registerMlOps(r);
    registerMicrosoftOps(r);
    registerTransformerOps(r);
    return r;
  }();
  return registry;
}
