//===- NnefImporter.cpp - NNEF to the tract dialect -----------------------===//
//
// Evaluates a parsed graph document. Tensors are SSA values of tract ops,
// integers are TDims (so `external(shape = [1, S, 64])` makes a symbolic
// input), and tract's extension lines become module attributes.
//
//===----------------------------------------------------------------------===//

#include "frontends/nnef/NnefImporter.h"

#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractFolding.h"
#include "dialects/tract/TractModule.h"
#include "frontends/nnef/NnefBuilder.h"
#include "frontends/nnef/NnefParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <functional>
#include <set>

using namespace mlir;
using namespace mlir::tract;
using namespace mlir::tract::nnef;

namespace mlir::tract::nnef {

using Scope = std::map<std::string, NValue, std::less<>>;

class ModelBuilder {
public:
  ModelBuilder(MLIRContext *context, const ModelFiles &files)
      : context(context), files(files), builder(context) {
    graphFile = files.origin + "/graph.nnef";
  }

  OwningOpRef<ModuleOp> build();

  Location loc(SourcePos pos) {
    return FileLineColLoc::get(context, graphFile, pos.line, pos.column);
  }
  std::nullopt_t error(SourcePos pos, const Twine &message) {
    emitError(loc(pos)) << message;
    return std::nullopt;
  }

  std::optional<NValue> eval(const Expr &expr, Scope &scope);
  std::optional<NValue> invoke(const Expr &expr, Scope &scope);
  std::optional<NValue>
  inlineFragment(const Fragment &fragment, const Expr &expr,
                 std::map<std::string, NValue, std::less<>> &args);
  bool assign(const Expr &lhs, NValue value, Scope &scope, StringRef name);
  bool runBody(const std::vector<Assignment> &body, Scope &scope,
               bool namesTensors);
  std::optional<NValue> arithmetic(const Expr &expr, NValue lhs, NValue rhs);

  /// Adds a graph input of `type` (from `external`).
  Value addInput(RankedTensorType type, Location location) {
    return func.getBody().front().addArgument(type, location);
  }
  /// The `.dat` file of a variable, by its label.
  std::optional<Invocation::TensorFile> findTensorFile(StringRef label) {
    std::string key = (label + ".dat").str();
    auto find = [&](auto &map) {
      auto it = map.find(key);
      return it != map.end() ? it : map.find(StringRef(key).ltrim('/'));
    };
    if (auto it = find(files.files); it != files.files.end())
      return Invocation::TensorFile{it->second, nullptr};
    auto it = find(files.tensors);
    if (it == files.tensors.end())
      return std::nullopt;
    // Read in place when only products and gathers read the variable.
    return Invocation::TensorFile{
        it->second->getBuffer(),
        inPlaceLabels.count(label.str()) ? it->second : nullptr};
  }
  /// The labels of the variables read in place (weightsReadInPlace).
  std::set<std::string> inPlaceLabels;

  MLIRContext *context;
  const ModelFiles &files;
  OpBuilder builder;
  std::string graphFile;
  Document document;
  func::FuncOp func;
  std::map<std::string, const Fragment *, std::less<>> fragments;
  std::set<std::string> symbols;
  /// How many array literals the expression being evaluated is inside.
  unsigned arrayDepth = 0;
  /// graph.quant's typed entries (tract's QU8, QI8, QI32), by tensor name.
  std::map<std::string, Type, std::less<>> quantizedTypes;
  /// The quantized type of the tensor the graph assignment being evaluated
  /// names; taken by the invocation it evaluates first.
  Type assignmentQuant;
  /// Bodies being run, one inside the other (fragments invoking fragments,
  /// scans running theirs), and whether that went past the limit.
  unsigned bodyNesting = 0;
  bool nestedTooDeep = false;
  /// Makes the invocation `call` of `op` compute on real values: its
  /// quantized tensor arguments are dequantized to f32, unless the op
  /// computes on quantized values itself.
  void dequantizeArguments(Invocation &call);
  /// Gives `tensor`, which a graph assignment `... = rhs` names, its
  /// graph.quant type `quantized`.
  bool applyQuantization(const Expr &rhs, Value &tensor, Type quantized);
  llvm::DenseMap<Value, SmallVector<TDim>> knownDims;
};

} // namespace mlir::tract::nnef

//===----------------------------------------------------------------------===//
// Invocation
//===----------------------------------------------------------------------===//

OpBuilder &Invocation::getBuilder() { return model.builder; }

std::nullopt_t Invocation::error(const Twine &message) {
  emitError(loc) << "'" << getName() << "': " << message;
  return std::nullopt;
}

/// `a op b` for NNEF's comparison operators; nullopt for another operator.
template <typename T>
static std::optional<bool> compare(StringRef op, T a, T b) {
  if (op == "<")
    return a < b;
  if (op == ">")
    return a > b;
  if (op == "<=")
    return a <= b;
  if (op == ">=")
    return a >= b;
  if (op == "==")
    return a == b;
  if (op == "!=")
    return a != b;
  return std::nullopt;
}

/// base^exponent for a non-negative exponent, or nullopt when it overflows
/// 64-bit integers.
static std::optional<int64_t> integerPower(int64_t base, int64_t exponent) {
  if (base == 0 || base == 1 || base == -1)
    return exponent == 0 || (base == -1 && exponent % 2 == 0) ? 1 : base;
  // |base| >= 2: an overflow comes within 63 steps.
  int64_t power = 1;
  for (int64_t i = 0; i < exponent; ++i)
    if (llvm::MulOverflow(power, base, power))
      return std::nullopt;
  return power;
}

static const char *kindName(NValue::Kind kind) {
  switch (kind) {
  case NValue::Kind::Tensor:
    return "a tensor";
  case NValue::Kind::Integer:
    return "an integer";
  case NValue::Kind::Scalar:
    return "a scalar";
  case NValue::Kind::Logical:
    return "a logical";
  case NValue::Kind::String:
    return "a string";
  case NValue::Kind::Array:
    return "an array";
  case NValue::Kind::Tuple:
    return "a tuple";
  }
  return "a value";
}

Value Invocation::constant(ElementsAttr value) {
  return ConstOp::create(getBuilder(), loc, cast<TensorType>(value.getType()),
                         value);
}

Value Invocation::scalarConstant(Type elementType, double value,
                                 unsigned rank) {
  auto type = RankedTensorType::get(SmallVector<int64_t>(rank, 1), elementType);
  if (auto floatType = dyn_cast<FloatType>(elementType))
    return constant(
        DenseElementsAttr::get(type, FloatAttr::get(floatType, value)));
  auto intType = cast<IntegerType>(elementType);
  return constant(DenseElementsAttr::get(
      type, IntegerAttr::get(intType, APInt(intType.getWidth(), int64_t(value),
                                            /*isSigned=*/true,
                                            /*implicitTrunc=*/true))));
}

Value Invocation::arrayConstant(const NValue &array, Type like,
                                std::string &why) {
  // A named literal is already a constant (see runBody).
  if (array.tensor && (!like || elementType(array.tensor) == like))
    return array.tensor;
  // A flat array of integers, some of them symbolic ([B, 2, P, 64]): their
  // values when the model runs.
  if (!array.items.empty() &&
      llvm::all_of(array.items,
                   [](const NValue &item) {
                     return item.kind == NValue::Kind::Integer;
                   }) &&
      llvm::any_of(array.items, [](const NValue &item) {
        return !item.integer.getConstant();
      })) {
    SmallVector<TDim> dims;
    for (const NValue &item : array.items)
      dims.push_back(item.integer);
    return create<ShapeValueOp>(ShapeAttr::get(getContext(), dims));
  }
  // The shape is the item counts along the first items; every item must
  // have that shape.
  SmallVector<int64_t> shape;
  for (const NValue *level = &array; level->kind == NValue::Kind::Array;
       level = &level->items.front()) {
    if (level->items.empty()) {
      why = "an empty array has no element type";
      return nullptr;
    }
    shape.push_back(level->items.size());
  }
  SmallVector<double> values;
  bool floats = false, logicals = false, integers = false;
  std::function<bool(const NValue &, size_t)> collect =
      [&](const NValue &item, size_t depth) {
        if (depth < shape.size()) {
          if (item.kind != NValue::Kind::Array ||
              int64_t(item.items.size()) != shape[depth]) {
            why = "the array is ragged";
            return false;
          }
          return llvm::all_of(item.items, [&](const NValue &inner) {
            return collect(inner, depth + 1);
          });
        }
        switch (item.kind) {
        case NValue::Kind::Scalar:
          floats = true;
          values.push_back(item.scalar);
          return true;
        case NValue::Kind::Logical:
          logicals = true;
          values.push_back(item.logical ? 1 : 0);
          return true;
        case NValue::Kind::Integer:
          if (auto c = item.integer.getConstant()) {
            integers = true;
            values.push_back(double(*c));
            return true;
          }
          why = "item " + item.integer.toString() + " is not a constant";
          return false;
        default:
          why = std::string("the array holds ") + kindName(item.kind) +
                " items, not numbers";
          return false;
        }
      };
  if (!collect(array, 0))
    return nullptr;
  if (logicals && (floats || integers)) {
    why = "the array mixes logical and numeric items";
    return nullptr;
  }
  Builder b(getContext());
  // The type the op expects when it says, else that of the items.
  Type elementType = like;
  if (logicals && like && !like.isInteger(1)) {
    why = "logical items where numbers are expected";
    return nullptr;
  }
  if (!elementType)
    elementType = logicals ? b.getI1Type()
                  : floats ? Type(b.getF32Type())
                           : Type(b.getI64Type());
  if (!elementType.isIntOrFloat()) {
    why = "the items are not numbers";
    return nullptr;
  }
  auto type = RankedTensorType::get(shape, elementType);
  SmallVector<Attribute> elements;
  for (double value : values) {
    if (auto floatType = dyn_cast<FloatType>(elementType))
      elements.push_back(FloatAttr::get(floatType, value));
    else
      elements.push_back(IntegerAttr::get(
          elementType,
          APInt(elementType.getIntOrFloatBitWidth(), int64_t(value),
                /*isSigned=*/!elementType.isInteger(1),
                /*implicitTrunc=*/true)));
  }
  return constant(DenseElementsAttr::get(type, elements));
}

Value Invocation::unsqueezeTo(Value value, int64_t target) {
  // A literal is rebuilt at the right rank rather than expanded.
  if (value && rank(value) < target)
    if (auto konst = value.getDefiningOp<ConstOp>())
      if (auto attr = dyn_cast<DenseElementsAttr>(konst.getValue());
          attr && attr.getNumElements() == 1) {
        SmallVector<int64_t> shape(target - rank(value), 1);
        llvm::append_range(shape, attr.getType().getShape());
        return constant(
            attr.reshape(RankedTensorType::get(shape, attr.getElementType())));
      }
  while (value && rank(value) < target)
    value = create<AddAxisOp>(value, int64_t(0));
  return value;
}

Type Invocation::commonSuperType(Type a, Type b) {
  if (a == b)
    return {};
  auto fa = dyn_cast<FloatType>(a), fb = dyn_cast<FloatType>(b);
  auto ia = dyn_cast<IntegerType>(a), ib = dyn_cast<IntegerType>(b);
  if ((!fa && !ia) || (!fb && !ib))
    return {}; // quantized, complex, strings: not promoted
  if (fa && fb) {
    if (fa.getWidth() != fb.getWidth())
      return fa.getWidth() > fb.getWidth() ? a : b;
    return Float32Type::get(a.getContext()); // f16 with bf16
  }
  if (fa || fb)
    return fa ? a : b;
  // Booleans rise to the other integer type.
  if (ia.getWidth() == 1 || ib.getWidth() == 1)
    return ia.getWidth() == 1 ? b : a;
  bool sa = !ia.isUnsigned(), sb = !ib.isUnsigned();
  if (sa == sb)
    return ia.getWidth() >= ib.getWidth() ? a : b;
  // Signed with unsigned: a signed type that holds both.
  unsigned unsignedWidth = sa ? ib.getWidth() : ia.getWidth();
  unsigned signedWidth = sa ? ia.getWidth() : ib.getWidth();
  unsigned width = std::max(signedWidth, 2 * unsignedWidth);
  if (width > 64)
    return {};
  return IntegerType::get(a.getContext(), width);
}

Value Invocation::dimValue(const TDim &dim) {
  Value value = create<ShapeValueOp>(
      ShapeAttr::get(getContext(), ArrayRef<TDim>{dim}));
  value = create<RmAxisOp>(value, int64_t(0));
  setKnownDims(value, {dim});
  return value;
}

Value Invocation::castTo(Value value, Type type) {
  if (!value || elementType(value) == type)
    return value;
  OpBuilder &b = getBuilder();
  auto op = CastOp::create(b, loc, value, type);
  return op.getResult();
}

std::optional<SmallVector<TDim>> Invocation::knownDims(Value value) {
  auto it = model.knownDims.find(value);
  if (it != model.knownDims.end())
    return it->second;
  if (auto konst = value.getDefiningOp<ConstOp>()) {
    auto attr = dyn_cast<DenseElementsAttr>(konst.getValue());
    if (!attr || !isa<IntegerType>(attr.getElementType()) ||
        attr.getType().getRank() > 1)
      return std::nullopt;
    SmallVector<TDim> dims;
    for (const APInt &v : attr.getValues<APInt>())
      dims.push_back(TDim(v.getSExtValue()));
    return dims;
  }
  // Shape arithmetic over known values (torch-to-nnef slices, casts and
  // combines shapes): 0-d and 1-d integer tensors only.
  auto type = dyn_cast<RankedTensorType>(value.getType());
  Operation *op = value.getDefiningOp();
  if (!op || !type || type.getRank() > 1 ||
      !isa<IntegerType>(type.getElementType()) ||
      type.getElementType().isInteger(1))
    return std::nullopt;
  if (isa<CastOp, RmAxisOp, AddAxisOp>(op)) {
    auto input = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
    if (!input || input.getRank() > 1 ||
        !isa<IntegerType>(input.getElementType()))
      return std::nullopt;
    return knownDims(op->getOperand(0));
  }
  if (auto slice = dyn_cast<SliceOp>(op)) {
    auto known = knownDims(slice.getInput());
    auto start = slice.getStart().getValue().getConstant();
    auto end = slice.getEnd().getValue().getConstant();
    if (!known || !start || !end || *start < 0 ||
        *end > int64_t(known->size()) || *start > *end)
      return std::nullopt;
    return SmallVector<TDim>(known->begin() + *start, known->begin() + *end);
  }
  if (auto gather = dyn_cast<GatherOp>(op)) {
    auto known = knownDims(gather.getInput());
    auto indices = knownDims(gather.getIndices());
    if (!known || !indices)
      return std::nullopt;
    SmallVector<TDim> out;
    int64_t n = known->size();
    for (const TDim &i : *indices) {
      auto c = i.getConstant();
      if (!c || *c < -n || *c >= n)
        return std::nullopt;
      out.push_back((*known)[*c < 0 ? *c + n : *c]);
    }
    return out;
  }
  if (auto concat = dyn_cast<ConcatOp>(op)) {
    SmallVector<TDim> out;
    for (Value input : concat.getInputs()) {
      auto known = knownDims(input);
      if (!known)
        return std::nullopt;
      out.append(known->begin(), known->end());
    }
    return out;
  }
  if (isa<AddOp, SubOp, MulOp, DivOp>(op)) {
    auto a = knownDims(op->getOperand(0)), b = knownDims(op->getOperand(1));
    if (!a || !b ||
        (a->size() != b->size() && a->size() != 1 && b->size() != 1))
      return std::nullopt;
    // An empty operand broadcasts the other's single value to nothing.
    size_t n = a->empty() || b->empty() ? 0 : std::max(a->size(), b->size());
    SmallVector<TDim> out;
    for (size_t i = 0; i < n; ++i) {
      const TDim &x = (*a)[a->size() == 1 ? 0 : i];
      const TDim &y = (*b)[b->size() == 1 ? 0 : i];
      if (isa<AddOp>(op))
        out.push_back(x + y);
      else if (isa<SubOp>(op))
        out.push_back(x - y);
      else if (isa<MulOp>(op))
        out.push_back(x * y);
      else if (auto d = y.getConstant(); d && *d > 0)
        out.push_back(x.floorDiv(*d));
      else
        return std::nullopt;
    }
    return out;
  }
  return std::nullopt;
}

void Invocation::setKnownDims(Value value, ArrayRef<TDim> dims) {
  model.knownDims[value] = SmallVector<TDim>(dims);
}

std::optional<Value> Invocation::tensor(StringRef name, Type like) {
  auto it = args.find(name);
  if (it == args.end())
    return error("missing argument '" + name + "'");
  const NValue &v = it->second;
  Builder b(getContext());
  switch (v.kind) {
  case NValue::Kind::Tensor:
    return v.tensor;
  case NValue::Kind::Scalar:
    // A named literal is already a constant (see runBody).
    if (v.tensor && (!like || elementType(v.tensor) == like))
      return v.tensor;
    return scalarConstant(like ? like : b.getF32Type(), v.scalar);
  case NValue::Kind::Integer:
    if (auto c = v.integer.getConstant())
      return scalarConstant(like ? like : b.getI64Type(), double(*c));
    // A symbol or a dim expression (`tract_core_range(0, T, 1)`): its
    // value when the model runs.
    return castTo(dimValue(v.integer), like ? like : b.getI64Type());
  case NValue::Kind::Logical:
    return scalarConstant(b.getI1Type(), v.logical ? 1 : 0);
  case NValue::Kind::Array: {
    std::string why;
    if (Value literal = arrayConstant(v, like, why))
      return literal;
    return error("argument '" + name + "' is an array literal that is not "
                 "a tensor: " + why);
  }
  default:
    break;
  }
  return error("argument '" + name + "' must be a tensor, not " +
               kindName(v.kind));
}

std::optional<std::vector<Value>> Invocation::tensors(StringRef name) {
  auto it = args.find(name);
  if (it == args.end())
    return error("missing argument '" + name + "'");
  if (it->second.kind != NValue::Kind::Array)
    return error("argument '" + name + "' must be an array of tensors");
  // Literal items (`concat([[1], h], axis = 0)`, as torch-to-nnef writes
  // shape arithmetic) take the element type of the first tensor item.
  Type like;
  for (const NValue &item : it->second.items)
    if (item.kind == NValue::Kind::Tensor) {
      like = elementType(item.tensor);
      break;
    }
  std::vector<Value> values;
  for (const NValue &item : it->second.items) {
    // A named literal is a constant too (see runBody).
    if (item.kind == NValue::Kind::Tensor ||
        (item.tensor && (!like || elementType(item.tensor) == like))) {
      values.push_back(item.tensor);
      continue;
    }
    std::string why;
    Value literal;
    if (item.kind == NValue::Kind::Array)
      literal = arrayConstant(item, like, why);
    if (!literal)
      return error("argument '" + name + "' must be an array of tensors");
    values.push_back(literal);
  }
  return values;
}

std::optional<TDim> Invocation::dim(StringRef name) {
  auto it = args.find(name);
  if (it == args.end())
    return error("missing argument '" + name + "'");
  const NValue &v = it->second;
  if (v.kind == NValue::Kind::Integer)
    return v.integer;
  if (v.kind == NValue::Kind::Tensor && rank(v.tensor) == 0) {
    auto dims = knownDims(v.tensor);
    // Computed from an input's values: a symbol bound when the model runs.
    if (!dims)
      dims = bindValuesAsDims(v.tensor, name);
    if (dims && dims->size() == 1)
      return (*dims)[0];
  }
  return error("argument '" + name + "' must be an integer, not " +
               kindName(v.kind));
}

std::optional<int64_t> Invocation::integer(StringRef name) {
  std::optional<TDim> d = dim(name);
  if (!d)
    return std::nullopt;
  if (auto c = d->getConstant())
    return *c;
  return error("argument '" + name + "' must be a constant integer, not " +
               d->toString());
}

std::optional<SmallVector<TDim>> Invocation::dims(StringRef name) {
  auto it = args.find(name);
  if (it == args.end())
    return error("missing argument '" + name + "'");
  const NValue &v = it->second;
  if (v.kind == NValue::Kind::Tensor) {
    if (auto known = knownDims(v.tensor))
      return *known;
    // Computed from an input's values (tract takes a tensor where NNEF has
    // an integer array): symbols bound to the values when the model runs,
    // as the shape inputs of ONNX.
    if (auto bound = bindValuesAsDims(v.tensor, name))
      return *bound;
    return error("argument '" + name +
                 "' is a tensor whose values are not known at import and "
                 "that is not a 0-d or 1-d integer tensor of known length");
  }
  if (v.kind != NValue::Kind::Array)
    return error("argument '" + name + "' must be an integer array, not " +
                 kindName(v.kind));
  SmallVector<TDim> out;
  // A nested array (`shape = [1, foo, 3]` with `foo = [1, 2]`) contributes
  // its items in place, as tract reads it.
  std::function<bool(const NValue &)> append = [&](const NValue &array) {
    for (const NValue &item : array.items) {
      // A tensor of known values counts as those integers.
      if (item.kind == NValue::Kind::Tensor && rank(item.tensor) <= 1) {
        auto known = knownDims(item.tensor);
        if (!known)
          known = bindValuesAsDims(item.tensor, name);
        if (known) {
          out.append(known->begin(), known->end());
          continue;
        }
      }
      if (item.kind == NValue::Kind::Array) {
        if (!append(item))
          return false;
        continue;
      }
      if (item.kind != NValue::Kind::Integer)
        return false;
      out.push_back(item.integer);
    }
    return true;
  };
  if (!append(v))
    return error("argument '" + name + "' must be an integer array");
  return out;
}

std::optional<SmallVector<int64_t>> Invocation::integers(StringRef name) {
  auto d = dims(name);
  if (!d)
    return std::nullopt;
  SmallVector<int64_t> out;
  for (const TDim &item : *d) {
    auto c = item.getConstant();
    if (!c)
      return error("argument '" + name + "' must hold constant integers, not " +
                   item.toString());
    out.push_back(*c);
  }
  return out;
}

std::optional<double> Invocation::scalar(StringRef name) {
  auto it = args.find(name);
  if (it == args.end())
    return error("missing argument '" + name + "'");
  const NValue &v = it->second;
  if (v.kind == NValue::Kind::Scalar)
    return v.scalar;
  if (v.kind == NValue::Kind::Integer)
    if (auto c = v.integer.getConstant())
      return double(*c);
  return error("argument '" + name + "' must be a scalar, not " +
               kindName(v.kind));
}

std::optional<bool> Invocation::logical(StringRef name) {
  auto it = args.find(name);
  if (it == args.end())
    return error("missing argument '" + name + "'");
  if (it->second.kind != NValue::Kind::Logical)
    return error("argument '" + name + "' must be a logical, not " +
                 kindName(it->second.kind));
  return it->second.logical;
}

std::optional<std::string> Invocation::string(StringRef name) {
  auto it = args.find(name);
  if (it == args.end())
    return error("missing argument '" + name + "'");
  if (it->second.kind != NValue::Kind::String)
    return error("argument '" + name + "' must be a string, not " +
                 kindName(it->second.kind));
  return it->second.string;
}

std::optional<std::vector<std::pair<int64_t, int64_t>>>
Invocation::pairs(StringRef name) {
  auto it = args.find(name);
  if (it == args.end())
    return error("missing argument '" + name + "'");
  std::vector<std::pair<int64_t, int64_t>> out;
  if (it->second.kind != NValue::Kind::Array)
    return error("argument '" + name + "' must be an array of pairs");
  // An item may be a 0-d tensor whose value the import knows (a size read
  // from tract_core_shape_of): tract takes those where they fold.
  auto constantOf = [&](const NValue &v) -> std::optional<int64_t> {
    if (v.kind == NValue::Kind::Integer)
      return v.integer.getConstant();
    if (v.kind == NValue::Kind::Tensor && rank(v.tensor) == 0)
      if (auto known = knownDims(v.tensor); known && known->size() == 1)
        return known->front().getConstant();
    return std::nullopt;
  };
  for (const NValue &item : it->second.items) {
    std::optional<int64_t> before, after;
    if (item.kind == NValue::Kind::Tuple && item.items.size() == 2) {
      before = constantOf(item.items[0]);
      after = constantOf(item.items[1]);
    }
    if (!before || !after)
      return error("argument '" + name +
                   "' must be an array of (integer, integer) pairs known "
                   "when the model is loaded");
    out.emplace_back(*before, *after);
  }
  return out;
}

bool Invocation::isLiteral(StringRef name, double value) const {
  auto it = args.find(name);
  if (it == args.end())
    return false;
  const NValue &v = it->second;
  return (v.kind == NValue::Kind::Scalar && v.scalar == value) ||
         (v.kind == NValue::Kind::Integer && v.integer == TDim(int64_t(value)));
}

Value Invocation::addInput(RankedTensorType type) {
  return model.addInput(type, loc);
}

std::optional<Invocation::TensorFile> Invocation::tensorFile(StringRef label) {
  return model.findTensorFile(label);
}

void Invocation::declareSymbols(ArrayRef<TDim> dims) {
  for (const TDim &d : dims)
    d.collectSymbols(model.symbols);
}

TDim Invocation::freshSymbol(StringRef hint) {
  std::string name = hint.str();
  for (int n = 1; model.symbols.count(name); ++n)
    name = (hint + "_" + Twine(n)).str();
  model.symbols.insert(name);
  return TDim::symbol(name);
}

std::optional<SmallVector<TDim>>
Invocation::bindValuesAsDims(Value values, StringRef hint) {
  auto type = dyn_cast<RankedTensorType>(values.getType());
  if (!type || type.getRank() > 1 || !isa<IntegerType>(type.getElementType()) ||
      type.getElementType().isInteger(1))
    return std::nullopt;
  // A concatenation of known and computed parts (`concat([[1], n])`): the
  // known values stay, each computed part gets its symbols.
  if (auto concat = values.getDefiningOp<ConcatOp>();
      concat && type.getRank() == 1) {
    SmallVector<TDim> dims;
    for (Value part : concat.getInputs()) {
      std::optional<SmallVector<TDim>> known = knownDims(part);
      if (!known)
        known = bindValuesAsDims(part, hint);
      if (!known)
        return std::nullopt;
      dims.append(known->begin(), known->end());
    }
    setKnownDims(values, dims);
    return dims;
  }
  Value vector = type.getRank() == 0 ? create<AddAxisOp>(values, int64_t(0))
                                     : values;
  std::optional<int64_t> count = getShape(vector)[0].getConstant();
  if (!count || *count > 64)
    return std::nullopt;
  SmallVector<TDim> dims;
  for (int64_t i = 0; i < *count; ++i)
    dims.push_back(freshSymbol(hint));
  BindDimsOp::create(getBuilder(), loc, vector,
                     ShapeAttr::get(getContext(), dims));
  setKnownDims(values, dims);
  setKnownDims(vector, dims);
  return dims;
}

//===----------------------------------------------------------------------===//
// Registry
//===----------------------------------------------------------------------===//

void OpRegistry::add(StringRef declarations, OpHandler handler) {
  std::string error;
  SourcePos pos;
  auto document = parseDocument(declarations, error, pos,
                                /*requireGraph=*/false);
  if (!document)
    llvm::report_fatal_error(llvm::Twine("bad NNEF op declarations: ") + error +
                             " at line " + llvm::Twine(pos.line));
  documents.push_back(std::make_unique<Document>(std::move(*document)));
  for (const Fragment &fragment : documents.back()->fragments)
    entries[fragment.name] = Entry{&fragment, handler};
}

const OpRegistry::Entry *OpRegistry::lookup(StringRef name) const {
  auto it = entries.find(name);
  return it == entries.end() ? nullptr : &it->second;
}

std::vector<std::string> OpRegistry::names() const {
  auto names = llvm::make_first_range(entries);
  return {names.begin(), names.end()};
}

const OpRegistry &OpRegistry::get() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    registerStandardOps(r);
    registerTractOps(r);
    return r;
  }();
  return registry;
}

Type mlir::tract::nnef::elementTypeFromName(MLIRContext *context,
                                            StringRef name) {
  Builder b(context);
  auto u = [&](unsigned w) {
    return IntegerType::get(context, w, IntegerType::Unsigned);
  };
  return llvm::StringSwitch<Type>(name)
      .Cases({"scalar", "f32"}, b.getF32Type())
      .Case("f16", b.getF16Type())
      .Case("f64", b.getF64Type())
      .Case("bf16", b.getBF16Type())
      .Cases({"integer", "i64"}, b.getI64Type())
      .Case("i32", b.getI32Type())
      .Case("i16", b.getI16Type())
      .Case("i8", b.getI8Type())
      .Case("u8", u(8))
      .Case("u16", u(16))
      .Case("u32", u(32))
      .Case("u64", u(64))
      .Cases({"logical", "bool"}, b.getI1Type())
      .Default(Type());
}

std::vector<std::string> mlir::tract::nnef::listSupportedNnefOps() {
  return OpRegistry::get().names();
}

//===----------------------------------------------------------------------===//
// Evaluation
//===----------------------------------------------------------------------===//

std::optional<NValue> ModelBuilder::arithmetic(const Expr &expr, NValue lhs,
                                               NValue rhs) {
  using K = NValue::Kind;
  StringRef op = expr.text;
  // Tensors: the operator is the element-wise operation.
  if (lhs.kind == K::Tensor || rhs.kind == K::Tensor) {
    static const std::map<std::string, std::string> names = {
        {"+", "add"}, {"-", "sub"},  {"*", "mul"}, {"/", "div"}, {"^", "pow"},
        {"<", "lt"},  {">", "gt"},   {"<=", "le"}, {">=", "ge"}, {"==", "eq"},
        {"!=", "ne"}, {"&&", "and"}, {"||", "or"}};
    auto it = names.find(op.str());
    const OpRegistry::Entry *entry =
        it == names.end() ? nullptr : OpRegistry::get().lookup(it->second);
    if (!entry)
      return error(expr.pos, "operator '" + op + "' does not apply to tensors");
    Invocation call(*this, expr, loc(expr.pos));
    call.name = it->second;
    call.args["x"] = lhs;
    call.args["y"] = rhs;
    assignmentQuant = {};
    dequantizeArguments(call);
    return entry->handler(call);
  }
  if (lhs.kind == K::Integer && rhs.kind == K::Integer) {
    const TDim &a = lhs.integer, &b = rhs.integer;
    if (op == "+")
      return NValue::ofInteger(a + b);
    if (op == "-")
      return NValue::ofInteger(a - b);
    if (op == "*")
      return NValue::ofInteger(a * b);
    if (op == "/") {
      auto d = b.getConstant();
      if (!d || *d <= 0)
        return error(expr.pos, "integer division by " + b.toString() +
                                   ": only positive constants divide dims");
      return NValue::ofInteger(a.floorDiv(*d));
    }
    auto ca = a.getConstant(), cb = b.getConstant();
    if (!ca || !cb)
      return error(expr.pos, "operator '" + op + "' on symbolic integers " +
                                 a.toString() + " and " + b.toString());
    if (std::optional<bool> holds = compare(op, *ca, *cb))
      return NValue::ofLogical(*holds);
    if (op == "^") {
      if (*cb < 0)
        return error(expr.pos,
                     "negative integer exponent " + std::to_string(*cb));
      if (std::optional<int64_t> power = integerPower(*ca, *cb))
        return NValue::ofInteger(TDim(*power));
      return error(expr.pos, std::to_string(*ca) + " ^ " + std::to_string(*cb) +
                                 " overflows 64-bit integers");
    }
  }
  auto number = [](const NValue &v) -> std::optional<double> {
    if (v.kind == K::Scalar)
      return v.scalar;
    if (v.kind == K::Integer)
      if (auto c = v.integer.getConstant())
        return double(*c);
    return std::nullopt;
  };
  if (auto a = number(lhs)) {
    if (auto b = number(rhs)) {
      if (op == "+")
        return NValue::ofScalar(*a + *b);
      if (op == "-")
        return NValue::ofScalar(*a - *b);
      if (op == "*")
        return NValue::ofScalar(*a * *b);
      if (op == "/")
        return NValue::ofScalar(*a / *b);
      if (op == "^")
        return NValue::ofScalar(std::pow(*a, *b));
      if (std::optional<bool> holds = compare(op, *a, *b))
        return NValue::ofLogical(*holds);
    }
  }
  if (lhs.kind == K::Logical && rhs.kind == K::Logical) {
    if (op == "&&")
      return NValue::ofLogical(lhs.logical && rhs.logical);
    if (op == "||")
      return NValue::ofLogical(lhs.logical || rhs.logical);
    if (op == "==")
      return NValue::ofLogical(lhs.logical == rhs.logical);
    if (op == "!=")
      return NValue::ofLogical(lhs.logical != rhs.logical);
  }
  if (lhs.kind == K::String && rhs.kind == K::String) {
    if (op == "==")
      return NValue::ofLogical(lhs.string == rhs.string);
    if (op == "!=")
      return NValue::ofLogical(lhs.string != rhs.string);
    if (op == "+")
      return NValue::ofString(lhs.string + rhs.string);
  }
  if (lhs.kind == K::Array && rhs.kind == K::Array && op == "+") {
    std::vector<NValue> items = lhs.items;
    items.insert(items.end(), rhs.items.begin(), rhs.items.end());
    return NValue::ofArray(std::move(items));
  }
  if (op == "in" && rhs.kind == K::Array) {
    for (const NValue &item : rhs.items)
      if (item.kind == lhs.kind &&
          ((item.kind == K::Integer && item.integer == lhs.integer) ||
           (item.kind == K::String && item.string == lhs.string)))
        return NValue::ofLogical(true);
    return NValue::ofLogical(false);
  }
  return error(expr.pos, std::string("operator '") + op.str() +
                             "' does not apply to " + kindName(lhs.kind) +
                             " and " + kindName(rhs.kind));
}

std::optional<NValue> ModelBuilder::eval(const Expr &expr, Scope &scope) {
  using K = NValue::Kind;
  switch (expr.kind) {
  case Expr::Kind::Integer: {
    int64_t value;
    if (StringRef(expr.text).getAsInteger(10, value))
      return error(expr.pos, "integer '" + expr.text + "' is out of range");
    return NValue::ofInteger(TDim(value));
  }
  case Expr::Kind::Scalar: {
    double value;
    if (StringRef(expr.text).getAsDouble(value))
      return error(expr.pos, "invalid number '" + expr.text + "'");
    return NValue::ofScalar(value);
  }
  case Expr::Kind::String:
    return NValue::ofString(expr.text);
  case Expr::Kind::Logical:
    return NValue::ofLogical(expr.text == "true");
  case Expr::Kind::Identifier: {
    auto it = scope.find(expr.text);
    if (it != scope.end())
      return it->second;
    if (symbols.count(expr.text))
      return NValue::ofInteger(TDim::symbol(expr.text));
    // As in tract, an identifier nothing defines is a symbol where it is
    // an item of an array (`shape = [S, 1]` without `extension
    // tract_symbol S;`), from then on; elsewhere it is a mistake.
    if (std::optional<TDim> parsed = TDim::parse(expr.text);
        arrayDepth > 0 && parsed && parsed->getSymbolName() == expr.text) {
      symbols.insert(expr.text);
      return NValue::ofInteger(*parsed);
    }
    return error(expr.pos, "undefined identifier '" + expr.text + "'");
  }
  case Expr::Kind::Array:
  case Expr::Kind::Tuple: {
    std::vector<NValue> items;
    ++arrayDepth;
    llvm::scope_exit leave([&] { --arrayDepth; });
    for (const ExprPtr &item : expr.items) {
      auto v = eval(*item, scope);
      if (!v)
        return std::nullopt;
      items.push_back(std::move(*v));
    }
    return NValue::ofArray(
        std::move(items), expr.kind == Expr::Kind::Array ? K::Array : K::Tuple);
  }
  case Expr::Kind::Invocation:
    return invoke(expr, scope);
  case Expr::Kind::Unary: {
    auto v = eval(*expr.items[0], scope);
    if (!v)
      return std::nullopt;
    if (expr.text == "!") {
      if (v->kind == K::Logical)
        return NValue::ofLogical(!v->logical);
      if (v->kind == K::Tensor) {
        Invocation call(*this, expr, loc(expr.pos));
        call.name = "not";
        call.args["x"] = *v;
        return OpRegistry::get().lookup("not")->handler(call);
      }
      return error(expr.pos, "'!' applies to logicals");
    }
    if (v->kind == K::Integer)
      return NValue::ofInteger(-v->integer);
    if (v->kind == K::Scalar)
      return NValue::ofScalar(-v->scalar);
    if (v->kind == K::Tensor) {
      Invocation call(*this, expr, loc(expr.pos));
      call.name = "neg";
      call.args["x"] = *v;
      return OpRegistry::get().lookup("neg")->handler(call);
    }
    return error(expr.pos, "'-' applies to numbers and tensors");
  }
  case Expr::Kind::Binary: {
    auto lhs = eval(*expr.items[0], scope);
    if (!lhs)
      return std::nullopt;
    // Short-circuit logic, as the spec defines it.
    if (lhs->kind == K::Logical && (expr.text == "&&" || expr.text == "||")) {
      if (expr.text == "&&" && !lhs->logical)
        return lhs;
      if (expr.text == "||" && lhs->logical)
        return lhs;
    }
    auto rhs = eval(*expr.items[1], scope);
    if (!rhs)
      return std::nullopt;
    return arithmetic(expr, std::move(*lhs), std::move(*rhs));
  }
  case Expr::Kind::Conditional: {
    auto cond = eval(*expr.items[1], scope);
    if (!cond)
      return std::nullopt;
    if (cond->kind != K::Logical)
      return error(expr.items[1]->pos, "the condition must be a logical");
    return eval(*expr.items[cond->logical ? 0 : 2], scope);
  }
  case Expr::Kind::Subscript: {
    auto base = eval(*expr.items[0], scope);
    if (!base)
      return std::nullopt;
    // A 1-d integer tensor whose values are known at load (a shape, as
    // tract_core_shape_of gives it) subscripts as the array of its values.
    if (base->kind == K::Tensor) {
      Invocation lookup(*this, expr, loc(expr.pos));
      std::optional<SmallVector<TDim>> values = lookup.knownDims(base->tensor);
      if (!values || getShape(base->tensor).size() != 1)
        return error(expr.pos, "cannot subscript a tensor whose values are "
                               "not known when the model loads");
      std::vector<NValue> items;
      for (const TDim &value : *values)
        items.push_back(NValue::ofInteger(value));
      base = NValue::ofArray(std::move(items), K::Array);
    }
    bool isString = base->kind == K::String;
    if (base->kind != K::Array && base->kind != K::Tuple && !isString)
      return error(expr.pos,
                   std::string("cannot subscript ") + kindName(base->kind));
    int64_t size = isString ? base->string.size() : base->items.size();
    auto index = [&](const ExprPtr &e,
                     int64_t otherwise) -> std::optional<int64_t> {
      if (!e)
        return otherwise;
      auto v = eval(*e, scope);
      if (!v)
        return std::nullopt;
      if (v->kind != K::Integer || !v->integer.getConstant())
        return error(e->pos, "an index must be a constant integer");
      int64_t i = *v->integer.getConstant();
      return i < 0 ? i + size : i;
    };
    auto begin = index(expr.items[1], 0);
    if (!begin)
      return std::nullopt;
    if (!expr.range) {
      if (*begin < 0 || *begin >= size)
        return error(expr.pos, "index out of range");
      if (isString)
        return NValue::ofString(base->string.substr(*begin, 1));
      return base->items[*begin];
    }
    auto end = index(expr.items[2], size);
    if (!end)
      return std::nullopt;
    int64_t b = std::clamp<int64_t>(*begin, 0, size);
    int64_t e = std::clamp<int64_t>(*end, b, size);
    if (isString)
      return NValue::ofString(base->string.substr(b, e - b));
    return NValue::ofArray(
        std::vector<NValue>(base->items.begin() + b, base->items.begin() + e),
        base->kind);
  }
  case Expr::Kind::Comprehension: {
    std::vector<NValue> iterables;
    size_t length = 0;
    for (auto [i, item] : llvm::enumerate(expr.items)) {
      auto v = eval(*item, scope);
      if (!v)
        return std::nullopt;
      if (v->kind != K::Array)
        return error(item->pos, "a comprehension iterates over arrays");
      if (i > 0 && v->items.size() != length)
        return error(item->pos, "comprehension arrays differ in length");
      length = v->items.size();
      iterables.push_back(std::move(*v));
    }
    std::vector<NValue> out;
    for (size_t i = 0; i < length; ++i) {
      Scope inner = scope;
      for (auto [var, iterable] : llvm::zip(expr.loopVars, iterables))
        inner[var] = iterable.items[i];
      if (expr.cond) {
        auto c = eval(*expr.cond, inner);
        if (!c)
          return std::nullopt;
        if (c->kind != K::Logical)
          return error(expr.cond->pos, "the condition must be a logical");
        if (!c->logical)
          continue;
      }
      auto v = eval(*expr.yield, inner);
      if (!v)
        return std::nullopt;
      out.push_back(std::move(*v));
    }
    return NValue::ofArray(std::move(out));
  }
  }
  return error(expr.pos, "unsupported expression");
}

/// The NNEF names of the operators that tract::isQuantizedArithmetic
/// accepts, before any op is built.
static bool isQuantizedArithmeticName(StringRef op) {
  return llvm::is_contained({"add", "sub", "mul", "div", "min", "max"}, op);
}

void ModelBuilder::dequantizeArguments(Invocation &call) {
  StringRef op = call.getName();
  if (op == "tract_core_cast" || op == "copy")
    return;
  if (isQuantizedArithmeticName(op)) {
    auto x = call.args.find("x"), y = call.args.find("y");
    if (x != call.args.end() && y != call.args.end() &&
        x->second.kind == NValue::Kind::Tensor &&
        y->second.kind == NValue::Kind::Tensor &&
        Invocation::elementType(x->second.tensor) ==
            Invocation::elementType(y->second.tensor))
      return;
  }
  // The integer bias of a product of quantized values (torch-to-nnef's and
  // tract's quantized conv and linear) counts in units of the accumulator,
  // input scale times weight scale: its real value, for the product on
  // dequantized operands.
  if (llvm::is_contained({"conv", "deconv", "linear"}, op)) {
    auto input = call.args.find("input"), filter = call.args.find("filter"),
         bias = call.args.find("bias");
    if (input != call.args.end() && filter != call.args.end() &&
        bias != call.args.end() && bias->second.kind == NValue::Kind::Tensor &&
        input->second.kind == NValue::Kind::Tensor &&
        filter->second.kind == NValue::Kind::Tensor) {
      auto x = getQuantizedElement(input->second.tensor.getType());
      auto w = getQuantizedElement(filter->second.tensor.getType());
      Value b = bias->second.tensor;
      if (x && w && isa<IntegerType>(Invocation::elementType(b))) {
        Value real = call.castTo(b, builder.getF32Type());
        Value scale = call.constant(DenseElementsAttr::get(
            RankedTensorType::get({}, builder.getF32Type()),
            float(x.getScale() * w.getScale())));
        bias->second.tensor = call.binary<MulOp>(real, scale);
      }
    }
  }
  std::function<void(NValue &)> dequantize = [&](NValue &value) {
    if (value.kind == NValue::Kind::Tensor &&
        isQuantized(value.tensor.getType()))
      value.tensor = call.castTo(value.tensor, builder.getF32Type());
    for (NValue &item : value.items)
      dequantize(item);
  };
  for (auto &[name, value] : call.args)
    dequantize(value);
}

std::optional<NValue> ModelBuilder::invoke(const Expr &expr, Scope &scope) {
  // graph.quant types this invocation's result, not the arguments'.
  Type quantizedResult = assignmentQuant;
  assignmentQuant = {};
  const OpRegistry::Entry *entry = OpRegistry::get().lookup(expr.text);
  auto userIt = fragments.find(expr.text);
  const Fragment *user = userIt == fragments.end() ? nullptr : userIt->second;
  // A document's own definition of a compound the registry also defines
  // (without a handler) takes precedence.
  if (entry && !entry->handler && user && user->body)
    entry = nullptr;
  const Fragment *signature = entry ? entry->signature : user;
  if (!signature)
    return error(expr.pos, "unknown operation '" + expr.text + "'");
  if (!entry && !user->body)
    return error(expr.pos,
                 "operation '" + expr.text + "' is declared but not supported");
  std::map<std::string, NValue, std::less<>> args;
  size_t position = 0;
  for (const Argument &argument : expr.args) {
    const Parameter *param = nullptr;
    if (argument.name.empty()) {
      if (position >= signature->params.size())
        return error(argument.value->pos,
                     "too many arguments for '" + expr.text + "'");
      param = &signature->params[position++];
    } else {
      for (const Parameter &p : signature->params)
        if (p.name == argument.name)
          param = &p;
      if (!param) {
        // tract reads the arguments an operation declares and passes over
        // the others unevaluated; so do we, and say so.
        emitWarning(loc(argument.value->pos))
            << "'" << expr.text << "' has no parameter '" << argument.name
            << "'; the argument is ignored";
        continue;
      }
    }
    auto value = eval(*argument.value, scope);
    if (!value)
      return std::nullopt;
    if (!args.emplace(param->name, std::move(*value)).second)
      return error(argument.value->pos,
                   "argument '" + param->name + "' given twice");
  }
  for (const Parameter &p : signature->params) {
    if (args.count(p.name))
      continue;
    if (!p.defaultValue)
      return error(expr.pos,
                   "'" + expr.text + "' needs argument '" + p.name + "'");
    Scope empty;
    auto value = eval(*p.defaultValue, empty);
    if (!value)
      return std::nullopt;
    args.emplace(p.name, std::move(*value));
  }
  if (entry && !entry->handler)
    return inlineFragment(*entry->signature, expr, args);
  if (entry) {
    Invocation call(*this, expr, loc(expr.pos));
    call.genericType =
        expr.generic.empty() ? signature->genericDefault : expr.generic;
    call.args = std::move(args);
    call.quantizedResult = quantizedResult;
    dequantizeArguments(call);
    // An array literal given for a tensor parameter is a constant of the
    // declared item type (`indices: tensor<integer>` takes [[0.0, 7.0]] as
    // integers, as tract reads it).
    for (const Parameter &p : signature->params) {
      auto it = call.args.find(p.name);
      if (p.type.kind != TypeSpec::Kind::Tensor || it == call.args.end() ||
          it->second.kind != NValue::Kind::Array)
        continue;
      Builder b(builder.getContext());
      Type like = p.type.name == "integer"  ? Type(b.getI64Type())
                  : p.type.name == "scalar" ? Type(b.getF32Type())
                  : p.type.name == "logical" ? Type(b.getI1Type())
                                             : Type();
      std::string why;
      Value literal = call.arrayConstant(it->second, like, why);
      if (!literal)
        return error(expr.pos, "argument '" + p.name + "' of '" + expr.text +
                                   "' is an array literal that is not a "
                                   "tensor: " + why);
      it->second = NValue::ofTensor(literal);
    }
    return entry->handler(call);
  }
  return inlineFragment(*user, expr, args);
}

std::optional<NValue>
ModelBuilder::inlineFragment(const Fragment &fragment, const Expr &expr,
                             std::map<std::string, NValue, std::less<>> &args) {
  Scope inner(args.begin(), args.end());
  if (!runBody(*fragment.body, inner, /*namesTensors=*/false)) {
    // Past the nesting limit, one message says it all.
    if (nestedTooDeep)
      return std::nullopt;
    return error(expr.pos, "in fragment '" + fragment.name + "' invoked here");
  }
  std::vector<NValue> results;
  for (const Parameter &result : fragment.results) {
    auto it = inner.find(result.name);
    if (it == inner.end())
      return error(fragment.pos, "fragment '" + fragment.name +
                                     "' does not assign its result '" +
                                     result.name + "'");
    results.push_back(it->second);
  }
  if (results.size() == 1)
    return results[0];
  return NValue::ofArray(std::move(results), NValue::Kind::Tuple);
}

bool ModelBuilder::assign(const Expr &lhs, NValue value, Scope &scope,
                          StringRef name) {
  if (lhs.kind == Expr::Kind::Identifier) {
    // NNEF assigns each name once; tract's reader, and the files written
    // for it, rebind a name (`s = slice(s, ...); s = squeeze(s, ...)`):
    // what follows sees the latest value.
    scope[lhs.text] = std::move(value);
    return true;
  }
  if (lhs.kind != Expr::Kind::Array && lhs.kind != Expr::Kind::Tuple) {
    error(lhs.pos, "the left side of an assignment must be identifiers");
    return false;
  }
  if ((value.kind != NValue::Kind::Array &&
       value.kind != NValue::Kind::Tuple) ||
      value.items.size() != lhs.items.size()) {
    error(lhs.pos, "cannot destructure " + std::string(kindName(value.kind)) +
                       " into " + std::to_string(lhs.items.size()) + " names");
    return false;
  }
  for (auto [item, v] : llvm::zip(lhs.items, value.items))
    if (!assign(*item, v, scope, name))
      return false;
  return true;
}

/// As tract reads graph.quant: an `external` is declared with the type, a
/// binary operator on quantized values requantizes its result to it
/// (tract::isQuantizedArithmetic), and any other value is cast to it
/// (`copy` of a QU8 input named as QI8 is one cast).
bool ModelBuilder::applyQuantization(const Expr &rhs, Value &tensor,
                                     Type quantized) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (type.getElementType() == quantized)
    return true;
  RankedTensorType retyped = type.clone(quantized);
  if (auto input = dyn_cast<BlockArgument>(tensor);
      input && rhs.kind == Expr::Kind::Invocation && rhs.text == "external") {
    input.setType(retyped);
    return true;
  }
  Operation *op = tensor.getDefiningOp();
  // A variable whose file holds the quantized type's integers is those
  // integers (tract reinterprets them): its real values, which the cast
  // below quantizes back to the same integers exactly.
  if (auto konst = dyn_cast_or_null<ConstOp>(op);
      konst && rhs.kind == Expr::Kind::Invocation && rhs.text == "variable" &&
      type.getElementType() == getStorageType(quantized)) {
    DenseElementsAttr stored = denseOf(konst.getValue());
    auto q = cast<quant::UniformQuantizedType>(quantized);
    if (!stored)
      return false;
    SmallVector<float> real;
    real.reserve(stored.getNumElements());
    for (int64_t value : readIntValues(stored))
      real.push_back(float(q.getScale() * double(value - q.getZeroPoint())));
    tensor = ConstOp::create(
        builder, loc(rhs.pos),
        DenseElementsAttr::get(type.clone(builder.getF32Type()),
                               ArrayRef(real)));
  }
  if (op && tensor.use_empty() && tract::isQuantizedArithmetic(op) &&
      isQuantized(op->getOperand(0).getType())) {
    tensor.setType(retyped);
    return true;
  }
  tensor = CastOp::create(builder, loc(rhs.pos), tensor, quantized);
  return true;
}

bool ModelBuilder::runBody(const std::vector<Assignment> &body, Scope &scope,
                           bool namesTensors) {
  // A fragment that invokes itself, directly or not, would nest without
  // end; models nest a few levels.
  static constexpr unsigned kMaxBodyNesting = 64;
  if (bodyNesting >= kMaxBodyNesting && !body.empty()) {
    error(body.front().pos,
          "fragments nest deeper than " + std::to_string(kMaxBodyNesting) +
              " invocations (does a fragment invoke itself?)");
    nestedTooDeep = true;
    return false;
  }
  ++bodyNesting;
  llvm::scope_exit leave([&] { --bodyNesting; });
  for (const Assignment &assignment : body) {
    Type quantized;
    if (namesTensors && assignment.lhs->kind == Expr::Kind::Identifier)
      if (auto q = quantizedTypes.find(assignment.lhs->text);
          q != quantizedTypes.end())
        quantized = q->second;
    assignmentQuant = quantized;
    auto value = eval(*assignment.rhs, scope);
    assignmentQuant = {};
    if (!value)
      return false;
    if (quantized && value->kind == NValue::Kind::Tensor &&
        !applyQuantization(*assignment.rhs, value->tensor, quantized))
      return false;
    // A literal given a name in the graph (tract writes small constants
    // so) is a constant from there on, where tract's would be; it stays a
    // literal for the parameters that take one, and is dropped if no
    // tensor uses it.
    if (namesTensors && assignment.lhs->kind == Expr::Kind::Identifier &&
        (assignment.rhs->kind == Expr::Kind::Array ||
         assignment.rhs->kind == Expr::Kind::Scalar) &&
        (value->kind == NValue::Kind::Array ||
         value->kind == NValue::Kind::Scalar)) {
      Invocation literal(*this, *assignment.rhs, loc(assignment.rhs->pos));
      std::string why;
      value->tensor =
          value->kind == NValue::Kind::Scalar
              ? literal.scalarConstant(builder.getF32Type(), value->scalar)
              : literal.arrayConstant(*value, nullptr, why);
      if (Operation *konst =
              value->tensor ? value->tensor.getDefiningOp() : nullptr)
        konst->setLoc(NameLoc::get(
            StringAttr::get(context, assignment.lhs->text), konst->getLoc()));
    }
    // The graph's names name its nodes, as in tract: the op computing
    // `name = …` gets the name (the first one, when a value is renamed).
    if (assignment.lhs->kind == Expr::Kind::Identifier &&
        value->kind == NValue::Kind::Tensor) {
      auto name = StringAttr::get(context, assignment.lhs->text);
      Operation *op = value->tensor.getDefiningOp();
      if (namesTensors && op && !isa<NameLoc>(op->getLoc()))
        op->setLoc(NameLoc::get(name, op->getLoc()));
      // An `external` takes the name it is first given, wherever it is.
      if (auto input = dyn_cast<BlockArgument>(value->tensor);
          input && input.getOwner() == &func.getBody().front() &&
          !isa<NameLoc>(input.getLoc()))
        input.setLoc(NameLoc::get(name, input.getLoc()));
    }
    if (!assign(*assignment.lhs, std::move(*value), scope, ""))
      return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// tract_core_scan
//===----------------------------------------------------------------------===//

/// `tract_core_scan(body, scan, full, state, output)`: the body fragment
/// becomes the region of a tract.scan. Its block takes the states (in the
/// order of `state`), the scanned chunks (`scan`), then the full inputs
/// (`full`); it yields the next states then the `full` outputs.
std::optional<NValue> mlir::tract::nnef::scanOp(Invocation &call) {
  ModelBuilder &model = call.model;
  auto bodyName = call.string("body");
  auto skip = call.integer("skip");
  auto seqLength = call.integer("seq_length");
  if (!bodyName || !skip || !seqLength)
    return std::nullopt;
  auto resetEveryTurn = call.logical("reset_every_turn");
  auto externalState = call.logical("external_state");
  if (!resetEveryTurn || !externalState)
    return std::nullopt;
  // external_state = true: tract's export_scan_state made the state the
  // caller's (model inputs and outputs); the scan starts from the state it
  // is given at each call.
  if (*skip < 0)
    return call.error("skip must not be negative");
  if (*seqLength != -1)
    return call.error("seq_length is not supported");
  auto fragmentIt = model.fragments.find(*bodyName);
  if (fragmentIt == model.fragments.end() || !fragmentIt->second->body)
    return call.error("no fragment '" + *bodyName + "' with a body");
  const Fragment &fragment = *fragmentIt->second;

  // Each list is an array of tuples of the given item kinds.
  auto tuples = [&](StringRef name, ArrayRef<NValue::Kind> kinds,
                    size_t minItems) -> std::optional<std::vector<NValue>> {
    NValue &list = call.args[std::string(name)];
    if (list.kind != NValue::Kind::Array)
      return call.error("'" + name + "' must be an array of tuples");
    for (NValue &t : list.items) {
      bool ok =
          (t.kind == NValue::Kind::Tuple || t.kind == NValue::Kind::Array) &&
          t.items.size() >= minItems && t.items.size() <= kinds.size();
      for (size_t i = 0; ok && i < t.items.size(); ++i) {
        // A literal where a tensor goes (a zero initial state) is one.
        if (kinds[i] == NValue::Kind::Tensor &&
            t.items[i].kind == NValue::Kind::Array) {
          std::string why;
          if (Value literal = call.arrayConstant(t.items[i], Type(), why))
            t.items[i] = NValue::ofTensor(literal);
        }
        ok = t.items[i].kind == kinds[i];
        // Names refer to the body's parameters and results, identifiers:
        // tract writes them as the model's names ("Y.Xt_WT") and means
        // their identifier form (Y_Xt_WT).
        if (ok && kinds[i] == NValue::Kind::String)
          for (char &c : t.items[i].string)
            if (!llvm::isAlnum(c) && c != '_')
              c = '_';
      }
      if (!ok)
        return call.error("'" + name + "' holds a malformed tuple");
    }
    return list.items;
  };
  using K = NValue::Kind;
  auto scans =
      tuples("scan", {K::String, K::Tensor, K::Integer, K::Integer}, 4);
  auto fulls = tuples("full", {K::String, K::Tensor}, 2);
  auto states = tuples("state", {K::String, K::Tensor, K::String}, 3);
  auto outputs =
      tuples("output", {K::String, K::String, K::Integer, K::Integer}, 3);
  if (!scans || !fulls || !states || !outputs)
    return std::nullopt;

  SmallVector<Value> operands;
  SmallVector<std::pair<std::string, Type>> params;
  SmallVector<int64_t> scanAxes, chunks;
  std::optional<TDim> iterations;
  for (const NValue &st : *states) {
    operands.push_back(st.items[1].tensor);
    params.push_back({st.items[0].string, st.items[1].tensor.getType()});
  }
  for (const NValue &sc : *scans) {
    Value input = sc.items[1].tensor;
    auto axis = sc.items[2].integer.getConstant();
    auto chunk = sc.items[3].integer.getConstant();
    Shape shape = getShape(input);
    if (!axis || !chunk || *axis < 0 || *axis >= int64_t(shape.size()) ||
        *chunk == 0)
      return call.error("scanned input '" + sc.items[0].string +
                        "' has an invalid axis or chunk");
    if (!iterations)
      iterations = shape[*axis].ceilDiv(std::abs(*chunk));
    shape[*axis] = TDim(std::abs(*chunk));
    operands.push_back(input);
    params.push_back(
        {sc.items[0].string, getTensorTypeLike(input.getType(), shape)});
    scanAxes.push_back(*axis);
    chunks.push_back(*chunk);
  }
  for (const NValue &f : *fulls) {
    operands.push_back(f.items[1].tensor);
    params.push_back({f.items[0].string, f.items[1].tensor.getType()});
  }
  for (const Parameter &p : fragment.params)
    if (!llvm::any_of(params, [&](auto &q) { return q.first == p.name; }))
      return call.error("the body parameter '" + p.name +
                        "' is bound by no scan, full or state input");

  // The body.
  auto block = std::make_unique<Block>();
  Scope inner;
  for (const auto &param : params) {
    if (!llvm::any_of(fragment.params, [&](const Parameter &p) {
          return p.name == param.first;
        }))
      return call.error("'" + *bodyName + "' has no parameter '" + param.first +
                        "'");
    inner[param.first] =
        NValue::ofTensor(block->addArgument(param.second, call.loc));
  }
  SmallVector<Value> yielded;
  {
    OpBuilder::InsertionGuard guard(model.builder);
    model.builder.setInsertionPointToEnd(block.get());
    if (!model.runBody(*fragment.body, inner, false))
      return call.error("in the scan body '" + *bodyName + "'");
    auto result = [&](const std::string &name) -> Value {
      auto it = inner.find(name);
      if (it == inner.end() || it->second.kind != K::Tensor) {
        call.error("the scan body does not compute '" + name + "'");
        return {};
      }
      return it->second.tensor;
    };
    for (const NValue &st : *states)
      if (Value v = result(st.items[2].string))
        yielded.push_back(v);
      else
        return std::nullopt;
    for (const NValue &out : *outputs) {
      if (out.items[1].string == "full") {
        if (Value v = result(out.items[0].string))
          yielded.push_back(v);
        else
          return std::nullopt;
      } else if (out.items[1].string != "last") {
        return call.error("output '" + out.items[0].string +
                          "' must be \"full\" or \"last\"");
      }
    }
    YieldOp::create(model.builder, call.loc, yielded);
  }

  // Results: the final states, then the scanned outputs; `output` lists
  // them in the invocation's order.
  SmallVector<Type> types;
  for (const NValue &st : *states)
    types.push_back(st.items[1].tensor.getType());
  SmallVector<int64_t> outputAxes;
  std::vector<int64_t> resultOf;
  for (const NValue &out : *outputs) {
    const std::string &name = out.items[0].string;
    if (out.items[1].string == "last") {
      auto st = llvm::find_if(
          *states, [&](const NValue &s) { return s.items[2].string == name; });
      if (st == states->end())
        return call.error("output '" + name + "' is \"last\" but not a state");
      resultOf.push_back(st - states->begin());
      continue;
    }
    Value chunk = yielded[types.size()];
    auto axis = out.items[2].integer.getConstant();
    Shape shape = getShape(chunk);
    if (!axis || *axis < 0 || *axis >= int64_t(shape.size()) || !iterations)
      return call.error("output '" + name + "' has an invalid axis");
    if (out.items.size() > 3 && out.items[3].integer != TDim(1))
      return call.error("output '" + name +
                        "': only chunks of 1 are supported");
    shape[*axis] = shape[*axis] * *iterations;
    resultOf.push_back(types.size());
    types.push_back(getTensorTypeLike(chunk.getType(), shape));
    outputAxes.push_back(*axis);
  }

  OperationState state(call.loc, ScanOp::getOperationName());
  ScanOp::build(model.builder, state, types, operands, int64_t(states->size()),
                scanAxes, chunks, outputAxes);
  state.regions.front()->push_back(block.release());
  Operation *op = model.builder.create(state);
  if (failed(mlir::verify(op)))
    return std::nullopt;
  // A scan that keeps its states from one call to the next: a streaming
  // model's, or a batch model's stateful scan (decided once the model's
  // properties are read).
  if (!*resetEveryTurn && !*externalState)
    op->setAttr("pulse.skip", model.builder.getI64IntegerAttr(*skip));
  else if (*skip != 0)
    return call.error("skip = " + std::to_string(*skip) +
                      " needs a scan carried across calls "
                      "(reset_every_turn = false)");
  std::vector<NValue> items;
  for (int64_t index : resultOf)
    items.push_back(NValue::ofTensor(op->getResult(index)));
  if (items.size() == 1)
    return items[0];
  return NValue::ofArray(std::move(items), K::Tuple);
}

/// `tract_core_if(cond, then_branch, else_branch, inputs)`: each branch
/// fragment, its parameters bound to `inputs` (values from outside), becomes
/// a region of a tract.if.
std::optional<NValue> mlir::tract::nnef::ifOp(Invocation &call) {
  ModelBuilder &model = call.model;
  auto cond = call.tensor("cond");
  auto thenName = call.string("then_branch");
  auto elseName = call.string("else_branch");
  auto inputs = call.tensors("inputs");
  if (!cond || !thenName || !elseName || !inputs)
    return std::nullopt;
  SmallVector<std::unique_ptr<Block>> blocks;
  SmallVector<SmallVector<Value>> yields;
  for (const std::string &name : {*thenName, *elseName}) {
    auto it = model.fragments.find(name);
    if (it == model.fragments.end() || !it->second->body)
      return call.error("no fragment '" + name + "' with a body");
    const Fragment &fragment = *it->second;
    if (fragment.params.size() != inputs->size())
      return call.error(
          "'" + name + "' takes " + std::to_string(fragment.params.size()) +
          " parameters for " + std::to_string(inputs->size()) + " inputs");
    Scope inner;
    for (auto [param, value] : llvm::zip(fragment.params, *inputs))
      inner[param.name] = NValue::ofTensor(value);
    auto block = std::make_unique<Block>();
    SmallVector<Value> yielded;
    {
      OpBuilder::InsertionGuard guard(model.builder);
      model.builder.setInsertionPointToEnd(block.get());
      if (!model.runBody(*fragment.body, inner, false))
        return call.error("in the branch '" + name + "'");
      for (const Parameter &result : fragment.results) {
        auto r = inner.find(result.name);
        if (r == inner.end() || r->second.kind != NValue::Kind::Tensor)
          return call.error("the branch '" + name + "' does not compute '" +
                            result.name + "'");
        yielded.push_back(r->second.tensor);
      }
      YieldOp::create(model.builder, call.loc, yielded);
    }
    blocks.push_back(std::move(block));
    yields.push_back(yielded);
  }
  if (yields[0].size() != yields[1].size())
    return call.error("the branches return different numbers of results");
  SmallVector<Type> types;
  for (Value v : yields[0])
    types.push_back(v.getType());
  OperationState state(call.loc, IfOp::getOperationName());
  IfOp::build(model.builder, state, types, *cond, ArrayAttr(), ArrayAttr());
  state.regions[0]->push_back(blocks[0].release());
  state.regions[1]->push_back(blocks[1].release());
  Operation *op = model.builder.create(state);
  if (failed(mlir::verify(op)))
    return std::nullopt;
  std::vector<NValue> items;
  for (Value v : op->getResults())
    items.push_back(NValue::ofTensor(v));
  if (items.size() == 1)
    return items[0];
  return NValue::ofArray(std::move(items), NValue::Kind::Tuple);
}

//===----------------------------------------------------------------------===//
// The module
//===----------------------------------------------------------------------===//

/// Converts a property value to an attribute.
static Attribute propertyAttr(Builder &b, const NValue &v) {
  switch (v.kind) {
  case NValue::Kind::String:
    return b.getStringAttr(v.string);
  case NValue::Kind::Integer:
    if (auto c = v.integer.getConstant())
      return b.getI64IntegerAttr(*c);
    return b.getStringAttr(v.integer.toString());
  case NValue::Kind::Scalar:
    return b.getF64FloatAttr(v.scalar);
  case NValue::Kind::Logical:
    return b.getBoolAttr(v.logical);
  case NValue::Kind::Array:
  case NValue::Kind::Tuple: {
    SmallVector<Attribute> items;
    for (const NValue &item : v.items) {
      Attribute a = propertyAttr(b, item);
      if (!a)
        return {};
      items.push_back(a);
    }
    return b.getArrayAttr(items);
  }
  case NValue::Kind::Tensor:
    if (auto konst = v.tensor.getDefiningOp<ConstOp>())
      return konst.getValue();
    return {};
  }
  return {};
}

/// Reads `graph.quant`: lines `"tensor": op(param = literal, …);`, each
/// kept as a dictionary `{op = "op", param = value, …}` by tensor name.
/// The entries are rewritten as the assignments of a graph (same lines) for
/// the parser.
static bool
readQuantization(ModelBuilder &model, StringRef text,
                 std::vector<std::pair<std::string, Attribute>> &entries) {
  MLIRContext *context = model.context;
  std::string quantFile = model.files.origin + "/graph.quant";
  auto fail = [&](SourcePos pos, const Twine &message) {
    emitError(FileLineColLoc::get(context, quantFile, pos.line, pos.column))
        << message;
    return false;
  };
  std::string graph = "graph quant() -> () { ";
  std::vector<std::string> names;
  bool entryStart = true;
  unsigned line = 1;
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (c == '\n')
      ++line;
    if (c == '#') {
      size_t end = text.find('\n', i);
      i = end == StringRef::npos ? text.size() : end;
      continue;
    }
    if (c == '"' || c == '\'') {
      size_t close = text.find(c, i + 1);
      if (close == StringRef::npos)
        return fail({line, 1}, "unterminated string");
      if (!entryStart) {
        graph += text.slice(i, close + 1).str();
        i = close + 1;
        continue;
      }
      size_t colon = close + 1;
      while (colon < text.size() && (text[colon] == ' ' || text[colon] == '\t'))
        ++colon;
      if (colon >= text.size() || text[colon] != ':')
        return fail({line, 1}, "expected ':' after the tensor name");
      names.push_back(text.slice(i + 1, close).str());
      graph += "q_" + std::to_string(names.size() - 1) + " =";
      i = colon + 1;
      entryStart = false;
      continue;
    }
    if (c == ';')
      entryStart = true;
    else if (!llvm::isSpace(c))
      entryStart = false;
    graph += c;
    ++i;
  }
  graph += "\n}\n";
  std::string message;
  SourcePos pos;
  auto parsed = parseDocument(graph, message, pos, /*requireGraph=*/false);
  if (!parsed)
    return fail(pos, message);
  Builder b(context);
  for (auto [index, assignment] : llvm::enumerate(parsed->body)) {
    // Each entry starts with its tensor's quoted name; an assignment of
    // the text's own (`x = ...`) is not one.
    if (index >= names.size())
      return fail(assignment.pos, "expected a quoted tensor name and ':'");
    const Expr &rhs = *assignment.rhs;
    if (rhs.kind != Expr::Kind::Invocation)
      return fail(assignment.pos, "expected a quantization operation");
    SmallVector<NamedAttribute> params{
        b.getNamedAttr("op", b.getStringAttr(rhs.text))};
    for (const Argument &argument : rhs.args) {
      if (argument.name.empty())
        return fail(argument.value->pos,
                    "quantization parameters must be named");
      Scope empty;
      auto value = model.eval(*argument.value, empty);
      if (!value)
        return false;
      Attribute attr = value->kind == NValue::Kind::Tensor
                           ? Attribute()
                           : propertyAttr(b, *value);
      if (!attr)
        return fail(argument.value->pos, "quantization parameter '" +
                                             argument.name +
                                             "' must be a literal");
      params.push_back(b.getNamedAttr(argument.name, attr));
    }
    entries.push_back({names[index], b.getDictionaryAttr(params)});
  }
  return true;
}

/// The type of tract's quantized datum a graph.quant entry describes:
/// `zero_point_linear_quantize(zero_point, scale, bits, signed, ...)`, or
/// NNEF's `linear_quantize(min, max, bits)` (unsigned integers spanning
/// [min, max]). Null for other entries, and with a message in `why` for
/// parameters tract has no type for.
static Type quantizedTypeOf(DictionaryAttr entry, std::string &why) {
  auto op = entry.getAs<StringAttr>("op");
  auto number = [&](StringRef name) -> std::optional<double> {
    Attribute attr = entry.get(name);
    if (auto f = dyn_cast_if_present<FloatAttr>(attr))
      return f.getValueAsDouble();
    if (auto i = dyn_cast_if_present<IntegerAttr>(attr))
      return double(i.getValue().getSExtValue());
    if (auto b = dyn_cast_if_present<BoolAttr>(attr))
      return b.getValue() ? 1.0 : 0.0;
    return std::nullopt;
  };
  auto required = [&](StringRef name) {
    auto value = number(name);
    if (!value && why.empty())
      why = ("'" + op.getValue() + "' needs a numeric '" + name + "'").str();
    return value.value_or(0);
  };
  // A parameter converted to an integer: the fuzzers reach here with
  // bits = 1e300 or a NaN zero point, which a plain cast makes undefined.
  auto integral = [&](StringRef name, double value) -> std::optional<int64_t> {
    if (!why.empty())
      return std::nullopt;
    if (!(std::fabs(value) <= double(INT32_MAX)) ||
        value != std::trunc(value)) {
      why = ("'" + op.getValue() + "' needs an integer '" + name +
             "' within 32 bits")
                .str();
      return std::nullopt;
    }
    return int64_t(value);
  };
  if (!op)
    return {};
  MLIRContext *context = entry.getContext();
  if (op.getValue() == "zero_point_linear_quantize") {
    double zeroPoint = required("zero_point"), scale = required("scale");
    double bits = required("bits");
    bool isSigned = number("signed").value_or(0) != 0;
    std::optional<int64_t> zero = integral("zero_point", zeroPoint);
    std::optional<int64_t> width = integral("bits", bits);
    if (!why.empty() || !zero || !width)
      return {};
    if (*width < 1 || *width > 64) {
      why = std::to_string(*width) + "-bit quantized integers are not supported";
      return {};
    }
    return getQuantizedType(context, unsigned(*width), isSigned, scale, *zero,
                            why);
  }
  if (op.getValue() == "linear_quantize") {
    double min = required("min"), max = required("max");
    double bits = required("bits");
    std::optional<int64_t> width = integral("bits", bits);
    if (!why.empty() || !width)
      return {};
    if (!(max > min) || !std::isfinite(max - min)) {
      why = "'linear_quantize' needs finite min and max with max > min";
      return {};
    }
    if (*width < 1 || *width > 32) {
      why = std::to_string(*width) + "-bit quantized integers are not supported";
      return {};
    }
    double scale = (max - min) / (std::ldexp(1.0, int(*width)) - 1);
    double zero = std::round(-min / scale);
    if (!(std::fabs(zero) <= double(INT32_MAX))) {
      why = "'linear_quantize' puts the zero point outside 32 bits";
      return {};
    }
    return getQuantizedType(context, unsigned(*width), /*isSigned=*/false,
                            scale, int64_t(zero), why);
  }
  return {};
}

/// The labels of the variables that only products and gathers read:
/// `matmul`'s B, `linear`'s filter and `tract_core_gather`'s input, directly
/// or through a `tract_core_cast` (weights stored as f16). Nothing computes
/// on those before the kernels, so their tensor files are read in place
/// (ModelFiles::tensors), not copied into the module.
/// The variables named in `quantized` (graph.quant) are not: their files
/// may hold the integers of another type.
static std::set<std::string>
weightsReadInPlace(const Document &document,
                   const std::set<std::string> &quantized) {
  using Kind = Expr::Kind;
  std::map<std::string, std::string> labels; // variable → its label
  std::map<std::string, std::string> casts;  // cast of a variable → it
  std::set<const Expr *> castExprs;
  for (const Assignment &assignment : document.body) {
    const Expr &lhs = *assignment.lhs, &rhs = *assignment.rhs;
    if (lhs.kind != Kind::Identifier || rhs.kind != Kind::Invocation)
      continue;
    if (rhs.text == "variable") {
      for (const Argument &argument : rhs.args)
        if (argument.name == "label" && argument.value->kind == Kind::String)
          labels[lhs.text] = argument.value->text;
    } else if (rhs.text == "tract_core_cast" && !rhs.args.empty() &&
               rhs.args[0].value->kind == Kind::Identifier &&
               labels.count(rhs.args[0].value->text)) {
      casts[lhs.text] = rhs.args[0].value->text;
      castExprs.insert(&rhs);
    }
  }
  auto isWeight = [](const Expr &invocation, size_t index,
                     const std::string &name) {
    auto at = [&](size_t position, StringRef parameter) {
      return name.empty() ? index == position : name == parameter;
    };
    return (invocation.text == "matmul" && at(1, "B")) ||
           (invocation.text == "linear" && at(1, "filter")) ||
           (invocation.text == "tract_core_gather" && at(0, "input"));
  };
  std::set<std::string> refused;
  // Every read of a variable, or of a cast of one, anywhere but a weight's
  // place (or a cast's own read of it) refuses the variable.
  std::function<void(const Expr &)> walk;
  auto read = [&](const Expr &item, bool weight, bool castInput) {
    if (item.kind != Kind::Identifier)
      return walk(item);
    if (auto cast = casts.find(item.text); cast != casts.end()) {
      if (!weight)
        refused.insert(cast->second);
    } else if (labels.count(item.text) && !weight && !castInput) {
      refused.insert(item.text);
    }
  };
  walk = [&](const Expr &expr) {
    for (auto [index, argument] : llvm::enumerate(expr.args)) {
      const Expr &value = *argument.value;
      // An einsum's operands, an array, are all products' operands.
      bool einsumOperands =
          expr.text == "tract_core_einsum" && value.kind == Kind::Array &&
          (argument.name.empty() ? index == 0 : argument.name == "inputs");
      if (einsumOperands) {
        for (const ExprPtr &item : value.items)
          read(*item, /*weight=*/true, false);
        continue;
      }
      read(value, isWeight(expr, index, argument.name),
           castExprs.count(&expr) && index == 0);
    }
    for (const ExprPtr &item : expr.items)
      if (item)
        read(*item, false, false);
    for (const Expr *part : {expr.cond.get(), expr.yield.get()})
      if (part)
        read(*part, false, false);
  };
  for (const Assignment &assignment : document.body) {
    if (assignment.rhs->kind == Kind::Identifier)
      refused.insert(assignment.rhs->text); // an alias: whatever it is
    walk(*assignment.rhs);
  }
  for (const std::string &output : document.outputs) {
    refused.insert(output);
    if (auto cast = casts.find(output); cast != casts.end())
      refused.insert(cast->second);
  }
  std::set<std::string> inPlace;
  for (const auto &[name, label] : labels)
    if (!refused.count(name) && !quantized.count(name))
      inPlace.insert(label);
  return inPlace;
}

OwningOpRef<ModuleOp> ModelBuilder::build() {
  Location fileLoc = FileLineColLoc::get(context, graphFile, 0, 0);
  auto graphText = files.files.find("graph.nnef");
  if (graphText == files.files.end()) {
    emitError(FileLineColLoc::get(context, files.origin, 0, 0))
        << "'" << files.origin << "' holds no graph.nnef";
    return {};
  }
  std::string message;
  SourcePos pos;
  auto parsed = parseDocument(graphText->second, message, pos);
  if (!parsed) {
    error(pos, message);
    return {};
  }
  document = std::move(*parsed);

  // Extensions: tract's symbols, assertions and scenarios.
  SmallVector<Attribute> assertions;
  std::map<std::string, SmallVector<Attribute>> scenarios;
  for (const Extension &extension : document.extensions) {
    auto [keyword, rest] = StringRef(extension.text).split(' ');
    rest = rest.trim();
    if (keyword == "tract_symbol") {
      std::optional<TDim> parsedSymbol = TDim::parse(rest);
      if (!parsedSymbol || parsedSymbol->getSymbolName() != rest.str()) {
        error(extension.pos, "'" + rest + "' is not a valid symbol name");
        return {};
      }
      symbols.insert(rest.str());
    } else if (keyword == "tract_assert") {
      // `name: rule` is an assertion of scenario `name`.
      size_t colon = rest.find(':');
      std::string scenario;
      StringRef rule = rest;
      if (colon != StringRef::npos) {
        StringRef head = rest.take_front(colon).trim();
        if (!head.empty() && llvm::all_of(head, [](char c) {
              return llvm::isAlnum(c) || c == '_';
            })) {
          scenario = head.str();
          rule = rest.drop_front(colon + 1).trim();
        }
      }
      SymbolScope check;
      std::string why;
      if (!check.addAssertion(rule, &why)) {
        error(extension.pos, "invalid assertion '" + rule + "': " + why);
        return {};
      }
      std::set<std::string> used;
      std::vector<TDim> constraints;
      SymbolScope::parseAssertion(rule, constraints);
      for (const TDim &c : constraints)
        c.collectSymbols(used);
      symbols.insert(used.begin(), used.end());
      Attribute text = StringAttr::get(context, rule);
      if (scenario.empty())
        assertions.push_back(text);
      else
        scenarios[scenario].push_back(text);
    }
    // tract's streaming symbol, S, is declared by this extension alone.
    if (keyword == "tract_pulse_streaming_symbol")
      symbols.insert(rest.empty() ? "S" : rest.str());
    // Other extensions (KHR_enable_*, tract_registry) need nothing.
  }
  for (const Fragment &fragment : document.fragments)
    fragments[fragment.name] = &fragment;

  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  builder.setInsertionPointToEnd(module->getBody());
  func = func::FuncOp::create(builder, loc(document.graphPos), "main",
                              builder.getFunctionType({}, {}));
  Block *entry = func.addEntryBlock();
  builder.setInsertionPointToEnd(entry);

  Scope scope;
  // graph.quant: tract's quantized types become the types of the tensors
  // they name, as the body is built; other entries are kept as attributes
  // on the op computing each named tensor, or on the input.
  std::vector<std::pair<std::string, Attribute>> quantEntries;
  if (auto quant = files.files.find("graph.quant");
      quant != files.files.end()) {
    if (!readQuantization(*this, quant->second, quantEntries))
      return {};
    for (auto &[name, attr] : quantEntries) {
      std::string why;
      auto type = quantizedTypeOf(cast<DictionaryAttr>(attr), why);
      if (!why.empty()) {
        emitError(
            FileLineColLoc::get(context, files.origin + "/graph.quant", 0, 0))
            << "quantization of '" << name << "': " << why;
        return {};
      }
      if (type)
        quantizedTypes[name] = type;
    }
  }

  std::set<std::string> quantized;
  for (auto &[name, attr] : quantEntries)
    quantized.insert(name);
  inPlaceLabels = weightsReadInPlace(document, quantized);
  if (!runBody(document.body, scope, /*namesTensors=*/true))
    return {};

  std::map<std::string, Attribute> inputQuant;
  for (auto &[name, attr] : quantEntries) {
    auto it = scope.find(name);
    if (it == scope.end() || it->second.kind != NValue::Kind::Tensor) {
      emitError(
          FileLineColLoc::get(context, files.origin + "/graph.quant", 0, 0))
          << "quantization of '" << name
          << "', which is not a tensor of the graph";
      return {};
    }
    if (quantizedTypes.count(name))
      continue; // the tensor's type already says it
    Value v = it->second.tensor;
    if (Operation *op = v.getDefiningOp())
      op->setAttr(kQuantAttrName, attr);
    else
      inputQuant[name] = attr;
  }

  SmallVector<Value> results;
  for (const std::string &name : document.outputs) {
    auto it = scope.find(name);
    if (it == scope.end() || it->second.kind != NValue::Kind::Tensor) {
      error(document.graphPos,
            "graph output '" + name + "' is not a tensor the graph computes");
      return {};
    }
    results.push_back(it->second.tensor);
  }
  auto ret = func::ReturnOp::create(builder, loc(document.graphPos), results);
  // Graph inputs, in the order the graph declares them.
  unsigned created = entry->getNumArguments();
  SmallVector<Type> inputTypes;
  for (const std::string &name : document.inputs) {
    auto it = scope.find(name);
    auto argument = it == scope.end() || it->second.kind != NValue::Kind::Tensor
                        ? BlockArgument()
                        : dyn_cast<BlockArgument>(it->second.tensor);
    if (!argument || argument.getOwner() != entry ||
        argument.getArgNumber() >= created) {
      error(document.graphPos,
            "graph input '" + name + "' is not defined by 'external'");
      return {};
    }
    BlockArgument fresh =
        entry->addArgument(argument.getType(), argument.getLoc());
    argument.replaceAllUsesWith(fresh);
    inputTypes.push_back(argument.getType());
  }
  // An `external` the graph does not list (one in a fragment, say) is an
  // input all the same, as in tract: it follows the listed ones, in the
  // order of appearance, named by the identifier it was assigned to.
  SmallVector<std::string> inputNames(document.inputs.begin(),
                                      document.inputs.end());
  for (unsigned i = 0; i < created; ++i) {
    BlockArgument argument = entry->getArgument(i);
    if (argument.use_empty())
      continue;
    auto name = dyn_cast<NameLoc>(argument.getLoc());
    inputNames.push_back(name ? name.getName().str()
                              : "external_" + std::to_string(i));
    BlockArgument fresh =
        entry->addArgument(argument.getType(), argument.getLoc());
    argument.replaceAllUsesWith(fresh);
    inputTypes.push_back(argument.getType());
  }
  entry->eraseArguments(0, created);

  func.setFunctionType(
      // From the return: an output that is an input was renumbered above.
      builder.getFunctionType(inputTypes, ret.getOperandTypes()));
  for (auto [i, name] : llvm::enumerate(inputNames)) {
    func.setArgAttr(i, "tract.name", builder.getStringAttr(name));
    if (auto q = inputQuant.find(name); q != inputQuant.end())
      func.setArgAttr(i, kQuantAttrName, q->second);
  }
  for (auto [i, name] : llvm::enumerate(document.outputs))
    func.setResultAttr(i, "tract.name", builder.getStringAttr(name));

  // Properties: the `tract_core_properties` fragment's array of pairs.
  if (auto it = fragments.find("tract_core_properties");
      it != fragments.end() && it->second->body) {
    Scope inner;
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(entry);
    if (!runBody(*it->second->body, inner, false))
      return {};
    auto props = inner.find("properties");
    SmallVector<NamedAttribute> entries;
    if (props != inner.end())
      for (const NValue &pair : props->second.items) {
        if (pair.kind != NValue::Kind::Tuple || pair.items.size() != 2 ||
            pair.items[0].kind != NValue::Kind::String) {
          error(it->second->pos, "properties must be (string, value) pairs");
          return {};
        }
        Attribute value = propertyAttr(builder, pair.items[1]);
        if (!value) {
          error(it->second->pos, "property '" + pair.items[0].string +
                                     "' has a value that is not constant");
          return {};
        }
        // The writer's version and format describe the file, not the
        // model: the exporter writes its own.
        if (pair.items[0].string == "tract_nnef_ser_version" ||
            pair.items[0].string == "tract_nnef_format_version")
          continue;
        // The original names of renamed inputs and outputs.
        if (pair.items[0].string == kIoNamesProperty) {
          for (const NValue &names : pair.items[1].items) {
            if (names.items.size() != 2 ||
                names.items[0].kind != NValue::Kind::String ||
                names.items[1].kind != NValue::Kind::String) {
              error(it->second->pos, "'" + kIoNamesProperty +
                                         "' must hold [nnef, original] "
                                         "name pairs");
              return {};
            }
            StringAttr original = builder.getStringAttr(names.items[1].string);
            for (auto [i, name] : llvm::enumerate(document.inputs))
              if (name == names.items[0].string)
                func.setArgAttr(i, "tract.name", original);
            for (auto [i, name] : llvm::enumerate(document.outputs))
              if (name == names.items[0].string)
                func.setResultAttr(i, "tract.name", original);
          }
          continue;
        }
        entries.push_back(builder.getNamedAttr(pair.items[0].string, value));
      }
    if (!entries.empty())
      (*module)->setAttr(kPropertiesAttrName,
                         builder.getDictionaryAttr(entries));
  }

  if (!assertions.empty())
    (*module)->setAttr(kAssertionsAttrName, builder.getArrayAttr(assertions));
  if (!scenarios.empty()) {
    SmallVector<NamedAttribute> named;
    for (auto &[name, rules] : scenarios)
      named.push_back(builder.getNamedAttr(name, builder.getArrayAttr(rules)));
    (*module)->setAttr(kScenariosAttrName, builder.getDictionaryAttr(named));
  }
  // The symbols the file declares stay, used or not.
  finishImport(*module, symbols);
  // Scans that go on across calls: a streaming model's keep their skip; a
  // batch model's are marked stateful, as tract keeps them, and keep a skip
  // other than 0 (which the lowering refuses: only a streaming model's
  // state says which iterations are the first).
  if (!getPulseProperties(*module))
    module->walk([&](ScanOp scan) {
      auto skip = scan->getAttrOfType<IntegerAttr>("pulse.skip");
      if (!skip)
        return;
      if (skip.getInt() == 0)
        scan->removeAttr("pulse.skip");
      scan->setAttr(kStatefulScanAttrName, builder.getUnitAttr());
    });
  if (failed(verify(*module)))
    return {};
  return module;
}

OwningOpRef<ModuleOp>
mlir::tract::nnef::importNnefFiles(const ModelFiles &files,
                                   MLIRContext *context) {
  context->loadDialect<TractDialect, func::FuncDialect>();
  ModelBuilder builder(context, files);
  return builder.build();
}

OwningOpRef<ModuleOp> mlir::tract::nnef::importNnef(StringRef path,
                                                    MLIRContext *context) {
  context->loadDialect<TractDialect, func::FuncDialect>();
  ModelFiles files;
  std::string error;
  bool ok = llvm::sys::fs::is_directory(path)
                ? readModelFolder(path, files, error)
                : readModelArchive(path, files, error);
  if (!ok) {
    emitError(FileLineColLoc::get(context, path, 0, 0)) << error;
    return {};
  }
  return importNnefFiles(files, context);
}
