//===- NnefOps.cpp - NNEF operations to tract ops -------------------------===//
//
// The standard NNEF operations and tract's `tract_core_*` extensions, each
// registered with its declaration (the parameters, in order, with their
// defaults) and translated into tract ops. Layouts are NNEF's: `N, C,
// spatial…` inputs, `O, C/groups, k…` filters, pool sizes over every axis.
//
//===----------------------------------------------------------------------===//

#include "dialects/tract/TractFolding.h"
#include "frontends/nnef/NnefBuilder.h"
#include "frontends/nnef/NnefFiles.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <numeric>

using namespace mlir;
using namespace mlir::tract;
using namespace mlir::tract::nnef;

namespace {

using Result = std::optional<NValue>;

Result tensorResult(Invocation &call, Value value) {
  if (!value)
    return call.error("invalid operands");
  return NValue::ofTensor(value);
}

/// The first tensor among the named arguments fixes the element type of the
/// literals among the others (`add(x, 1.0)`).
std::optional<SmallVector<Value>> tensorArgs(Invocation &call,
                                             ArrayRef<StringRef> names) {
  Type like;
  for (StringRef name : names) {
    auto it = call.args.find(name);
    if (it != call.args.end() && it->second.kind == NValue::Kind::Tensor) {
      like = Invocation::elementType(it->second.tensor);
      break;
    }
  }
  SmallVector<Value> out;
  for (StringRef name : names) {
    auto v = call.tensor(name, like);
    if (!v)
      return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Tensor sources
//===----------------------------------------------------------------------===//

Result external(Invocation &call) {
  auto shape = call.dims("shape");
  if (!shape)
    return std::nullopt;
  std::string typeName = call.genericType.empty() ? "scalar" : call.genericType;
  if (call.args.count("datum_type")) {
    auto dt = call.string("datum_type");
    if (!dt)
      return std::nullopt;
    typeName = *dt;
  }
  Type elementType = elementTypeFromName(call.getContext(), typeName);
  if (!elementType)
    return call.error("unknown datum type '" + typeName + "'");
  call.declareSymbols(*shape);
  return NValue::ofTensor(
      call.addInput(getTensorType(call.getContext(), *shape, elementType)));
}

std::string datumText(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

Result variable(Invocation &call) {
  auto shape = call.integers("shape");
  auto label = call.string("label");
  if (!shape || !label)
    return std::nullopt;
  std::optional<Invocation::TensorFile> file = call.tensorFile(*label);
  if (!file)
    return call.error("no tensor file '" + *label + ".dat' in the model");
  ElementsAttr value;
  std::string error;
  SmallVector<int64_t> blockShape;
  if (!readDatTensor(file->bytes, *label + ".dat", call.getContext(), value,
                     error, &blockShape, file->inPlace))
    return call.error(error);
  if (!blockShape.empty()) {
    // tract's Q4_0 blocks stay as stored: declutter makes products read
    // them as they are (block_quant_matmul) and folds the other uses.
    if (blockShape != ArrayRef<int64_t>(*shape))
      return call.error("'" + *label + ".dat' holds Q4_0 blocks of another "
                        "shape than the graph declares");
    auto type = RankedTensorType::get(blockShape,
                                      Float32Type::get(call.getContext()));
    auto values = BlockDequantOp::create(call.getBuilder(), call.loc, type,
                                         call.constant(value));
    return NValue::ofTensor(values.getOutput());
  }
  auto valueType = cast<ShapedType>(value.getType());
  if (valueType.getShape() != ArrayRef<int64_t>(*shape)) {
    std::string declared, stored;
    llvm::raw_string_ostream d(declared), s(stored);
    llvm::interleaveComma(*shape, d);
    llvm::interleaveComma(valueType.getShape(), s);
    return call.error("'" + *label + ".dat' holds a tensor of shape [" +
                      stored + "], the graph declares [" + declared + "]");
  }
  // tract may give the datum type, which the tensor file must hold.
  auto dt = call.string("datum_type");
  if (!dt)
    return std::nullopt;
  if (!dt->empty()) {
    Type declared = elementTypeFromName(call.getContext(), *dt);
    if (!declared)
      return call.error("unknown datum type '" + *dt + "'");
    if (declared != value.getElementType())
      return call.error("'" + *label + ".dat' holds " +
                        datumText(value.getElementType()) +
                        " items, the graph declares '" + *dt + "'");
  }
  return NValue::ofTensor(call.constant(value));
}

Result constantOp(Invocation &call) {
  auto shape = call.integers("shape");
  if (!shape)
    return std::nullopt;
  Type elementType = elementTypeFromName(
      call.getContext(),
      call.genericType.empty() ? "scalar" : call.genericType);
  if (!elementType)
    return call.error("unknown type '" + call.genericType + "'");
  auto type = RankedTensorType::get(*shape, elementType);
  const NValue &value = call.args["value"];
  std::vector<NValue> items =
      value.kind == NValue::Kind::Array ? value.items : std::vector{value};
  if (items.size() != 1 && int64_t(items.size()) != type.getNumElements())
    return call.error(std::to_string(items.size()) + " values for " +
                      std::to_string(type.getNumElements()) + " elements");
  SmallVector<Attribute> attrs;
  for (const NValue &item : items) {
    double number =
        item.kind == NValue::Kind::Scalar    ? item.scalar
        : item.kind == NValue::Kind::Logical ? item.logical
        : item.kind == NValue::Kind::Integer && item.integer.getConstant()
            ? double(*item.integer.getConstant())
            : std::nan("");
    if (std::isnan(number) && item.kind != NValue::Kind::Scalar)
      return call.error("constant values must be numbers or logicals");
    if (auto f = dyn_cast<FloatType>(elementType))
      attrs.push_back(FloatAttr::get(f, number));
    else
      attrs.push_back(IntegerAttr::get(
          elementType,
          APInt(elementType.getIntOrFloatBitWidth(), int64_t(number),
                /*isSigned=*/true, /*implicitTrunc=*/true)));
  }
  if (attrs.size() == 1)
    return NValue::ofTensor(
        call.constant(DenseElementsAttr::get(type, attrs[0])));
  return NValue::ofTensor(call.constant(DenseElementsAttr::get(type, attrs)));
}

//===----------------------------------------------------------------------===//
// Element-wise
//===----------------------------------------------------------------------===//

Result unary(Invocation &call) {
  auto x = call.tensor("x");
  if (!x)
    return std::nullopt;
  StringRef name = call.getName();
  Value v = *x;
  auto like = [&](double c) {
    return call.scalarConstant(Invocation::elementType(v), c,
                               Invocation::rank(v));
  };
  Value y =
      llvm::StringSwitch<std::function<Value()>>(name)
          .Case("copy", [&] { return v; })
          .Case("neg", [&] { return call.create<NegOp>(v); })
          .Cases({"rcp", "recip"}, [&] { return call.create<RecipOp>(v); })
          .Case("exp", [&] { return call.create<ExpOp>(v); })
          .Case("log", [&] { return call.create<LnOp>(v); })
          .Case("log2",
                [&] {
                  return call.create<DivOp>(call.create<LnOp>(v),
                                            like(std::log(2.0)));
                })
          .Case("sin", [&] { return call.create<SinOp>(v); })
          .Case("cos", [&] { return call.create<CosOp>(v); })
          .Cases({"tan", "tract_core_tan"},
                 [&] { return call.create<TanOp>(v); })
          .Cases({"asin", "tract_core_asin"},
                 [&] { return call.create<AsinOp>(v); })
          .Cases({"acos", "tract_core_acos"},
                 [&] { return call.create<AcosOp>(v); })
          .Cases({"atan", "tract_core_atan"},
                 [&] { return call.create<AtanOp>(v); })
          .Cases({"sinh", "tract_core_sinh"},
                 [&] { return call.create<SinhOp>(v); })
          .Cases({"cosh", "tract_core_cosh"},
                 [&] { return call.create<CoshOp>(v); })
          .Case("tanh", [&] { return call.create<TanhOp>(v); })
          .Cases({"asinh", "tract_core_asinh"},
                 [&] { return call.create<AsinhOp>(v); })
          .Cases({"acosh", "tract_core_acosh"},
                 [&] { return call.create<AcoshOp>(v); })
          .Cases({"atanh", "tract_core_atanh"},
                 [&] { return call.create<AtanhOp>(v); })
          .Case("abs", [&] { return call.create<AbsOp>(v); })
          .Case("sign", [&] { return call.create<SignOp>(v); })
          .Case("not", [&] { return call.create<NotOp>(v); })
          .Case("floor", [&] { return call.create<FloorOp>(v); })
          .Case("ceil", [&] { return call.create<CeilOp>(v); })
          .Case("round", [&] { return call.create<RoundOp>(v); })
          .Cases({"sqr", "square"}, [&] { return call.create<SquareOp>(v); })
          .Case("sqrt", [&] { return call.create<SqrtOp>(v); })
          .Case("rsqr",
                [&] { return call.create<RecipOp>(call.create<SquareOp>(v)); })
          .Case("rsqrt", [&] { return call.create<RsqrtOp>(v); })
          .Case("relu", [&] { return call.create<MaxOp>(v, like(0)); })
          .Case("sigmoid", [&] { return call.create<SigmoidOp>(v); })
          .Case("tract_core_round_even",
                [&] { return call.create<RoundEvenOp>(v); })
          .Case("tract_core_bitnot", [&] { return call.create<BitNotOp>(v); })
          .Case("tract_core_is_nan", [&] { return call.create<IsNanOp>(v); })
          .Case("tract_core_hard_swish",
                [&] { return call.create<HardSwishOp>(v); })
          .Cases({"erf", "tract_core_erf"},
                 [&] { return call.create<ErfOp>(v); })
          .Cases({"silu", "tract_core_silu"},
                 [&] { return call.create<SiluOp>(v); })
          .Case("softplus",
                [&] {
                  return call.create<LnOp>(
                      call.create<AddOp>(call.create<ExpOp>(v), like(1)));
                })
          .Default([] { return Value(); })();
  return tensorResult(call, y);
}

/// `tract_core_gelu_approx(input, fast_impl)` (also under its older
/// `tract_transformers_` name): the power in the tanh is x^2 with
/// `fast_impl`, x^3 otherwise; `tract_transformers_gelu_fast_approx` is the
/// x^3 form despite its name, as in tract.
Result geluApprox(Invocation &call) {
  auto input = call.tensor("input");
  if (!input)
    return std::nullopt;
  bool fast = false;
  if (call.name != "tract_transformers_gelu_fast_approx") {
    auto fastImpl = call.logical("fast_impl");
    if (!fastImpl)
      return std::nullopt;
    fast = *fastImpl;
  }
  Value y = call.create<GeluApproxOp>(*input);
  if (auto gelu = y ? y.getDefiningOp<GeluApproxOp>() : GeluApproxOp())
    gelu.setFastImpl(fast);
  return tensorResult(call, y);
}

/// `tract_transformers_silu(input)`, tract's older name of `silu`.
Result transformersSilu(Invocation &call) {
  auto input = call.tensor("input");
  if (!input)
    return std::nullopt;
  return tensorResult(call, call.create<SiluOp>(*input));
}

/// `tract_transformers_scaled_masked_softmax(input, mask, scale,
/// post_softmax_mask)`: the softmax over the last axis of `input * scale`
/// plus a float mask, or where a boolean mask is true (-inf elsewhere); with
/// `post_softmax_mask` the masked-out probabilities are then zeros.
Result scaledMaskedSoftmax(Invocation &call) {
  auto x = call.tensor("input");
  auto mask = call.tensor("mask");
  auto scale = call.scalar("scale");
  auto post = call.logical("post_softmax_mask");
  if (!x || !mask || !scale || !post)
    return std::nullopt;
  if (*scale == 0)
    return call.error("scale must not be zero");
  Type element = Invocation::elementType(*x);
  unsigned rank = Invocation::rank(*x);
  if (rank == 0)
    return call.error("input must have at least one axis");
  Value scaled =
      call.create<MulOp>(*x, call.scalarConstant(element, *scale, rank));
  Value condition = *mask, masked;
  bool boolean = Invocation::elementType(*mask).isInteger(1);
  if (boolean) {
    if (Invocation::rank(*mask) > rank)
      return call.error("the mask has more axes than the input");
    while (Invocation::rank(condition) < rank)
      condition = call.create<AddAxisOp>(condition, uint64_t(0));
    masked = call.create<SelectOp>(
        condition, scaled, call.scalarConstant(element, -INFINITY, rank));
  } else {
    if (Invocation::elementType(*mask) != element ||
        Invocation::rank(*mask) != rank)
      return call.error("a float mask must have the input's type and rank");
    if (*post)
      return call.error("post_softmax_mask needs a boolean mask");
    masked = call.create<AddOp>(scaled, *mask);
  }
  Value y = call.create<SoftmaxOp>(masked, ArrayRef<int64_t>{rank - 1});
  if (*post)
    y = call.create<SelectOp>(condition, y,
                              call.scalarConstant(element, 0.0, rank));
  return tensorResult(call, y);
}

/// `tract_core_clamped_swiglu(gate, up, alpha, limit)` (GPT-OSS's expert
/// activation): with g = min(gate, limit) and u = clamp(up, -limit, limit),
/// (u + 1) * g * sigmoid(alpha * g), in f32.
Result clampedSwiglu(Invocation &call) {
  auto gate = call.tensor("gate");
  auto up = call.tensor("up");
  auto alpha = call.scalar("alpha");
  auto limit = call.scalar("limit");
  if (!gate || !up || !alpha || !limit)
    return std::nullopt;
  if (getShape(*gate) != getShape(*up) ||
      Invocation::elementType(*gate) != Invocation::elementType(*up))
    return call.error("gate and up must have the same shape and type");
  if (!std::isfinite(*alpha) || !std::isfinite(*limit) || *limit <= 0)
    return call.error("alpha must be finite and limit finite and positive");
  Type f32 = Float32Type::get(call.getContext());
  auto toF32 = [&](Value v) -> Value {
    return Invocation::elementType(v) == f32 ? v : call.castTo(v, f32);
  };
  unsigned rank = Invocation::rank(*gate);
  auto c = [&](double value) { return call.scalarConstant(f32, value, rank); };
  Value g = call.create<MinOp>(toF32(*gate), c(*limit));
  Value u = call.create<MaxOp>(call.create<MinOp>(toF32(*up), c(*limit)),
                               c(-*limit));
  Value y = call.create<MulOp>(
      call.create<MulOp>(call.create<AddOp>(u, c(1.0)), g),
      call.create<SigmoidOp>(call.create<MulOp>(g, c(*alpha))));
  return tensorResult(call, y);
}

/// `elu` and `leaky_relu`: `x < 0 ? f(x) : x`.
Result alphaUnary(Invocation &call) {
  auto x = call.tensor("x");
  auto alpha = call.scalar("alpha");
  if (!x || !alpha)
    return std::nullopt;
  Value v = *x;
  Type type = Invocation::elementType(v);
  unsigned rank = Invocation::rank(v);
  Value a = call.scalarConstant(type, *alpha, rank);
  Value negative;
  if (call.getName() == "leaky_relu")
    negative = call.create<MulOp>(v, a);
  else
    negative = call.create<MulOp>(
        call.create<SubOp>(call.create<ExpOp>(v),
                           call.scalarConstant(type, 1, rank)),
        a);
  Value isNegative = call.create<LtOp>(v, call.scalarConstant(type, 0, rank));
  return tensorResult(call, call.create<SelectOp>(isNegative, negative, v));
}

Result binary(Invocation &call) {
  auto xy = tensorArgs(call, {"x", "y"});
  if (!xy)
    return std::nullopt;
  Value x = (*xy)[0], y = (*xy)[1];
  StringRef name = call.getName();
  Value z =
      llvm::StringSwitch<std::function<Value()>>(name)
          .Case("add", [&] { return call.binary<AddOp>(x, y); })
          .Case("sub", [&] { return call.binary<SubOp>(x, y); })
          .Case("mul", [&] { return call.binary<MulOp>(x, y); })
          .Case("div", [&] { return call.binary<DivOp>(x, y); })
          .Case("pow", [&] { return call.binary<PowOp>(x, y); })
          .Case("min", [&] { return call.binary<MinOp>(x, y); })
          .Case("max", [&] { return call.binary<MaxOp>(x, y); })
          .Case("lt", [&] { return call.binary<LtOp>(x, y); })
          .Case("gt", [&] { return call.binary<GtOp>(x, y); })
          .Case("le", [&] { return call.binary<LeOp>(x, y); })
          .Case("ge", [&] { return call.binary<GeOp>(x, y); })
          .Case("eq", [&] { return call.binary<EqOp>(x, y); })
          .Case("ne", [&] { return call.binary<NeOp>(x, y); })
          .Case("and", [&] { return call.binary<AndOp>(x, y); })
          .Case("or", [&] { return call.binary<OrOp>(x, y); })
          .Case("tract_core_rem", [&] { return call.binary<RemOp>(x, y); })
          .Case("tract_core_xor", [&] { return call.binary<XorOp>(x, y); })
          .Case("tract_core_bitand",
                [&] { return call.binary<BitAndOp>(x, y); })
          .Case("tract_core_bitor", [&] { return call.binary<BitOrOp>(x, y); })
          .Case("tract_core_bitxor",
                [&] { return call.binary<BitXorOp>(x, y); })
          .Cases({"tract_core_shl", "tract_shl"},
                 [&] { return call.binary<ShlOp>(x, y); })
          .Cases({"tract_core_shr", "tract_shr"},
                 [&] { return call.binary<ShrOp>(x, y); })
          .Default([] { return Value(); })();
  return tensorResult(call, z);
}

Result selectOp(Invocation &call) {
  auto cond = call.tensor("condition");
  auto values = tensorArgs(call, {"true_value", "false_value"});
  if (!cond || !values)
    return std::nullopt;
  int64_t rank =
      std::max({Invocation::rank(*cond), Invocation::rank((*values)[0]),
                Invocation::rank((*values)[1])});
  // Branches of different types meet in tract's common type.
  Value a = (*values)[0], b = (*values)[1];
  if (Type common = Invocation::commonSuperType(Invocation::elementType(a),
                                                Invocation::elementType(b))) {
    a = call.castTo(a, common);
    b = call.castTo(b, common);
  }
  return tensorResult(
      call, call.create<SelectOp>(call.unsqueezeTo(*cond, rank),
                                  call.unsqueezeTo(a, rank),
                                  call.unsqueezeTo(b, rank)));
}

Result clamp(Invocation &call) {
  auto xab = tensorArgs(call, {"x", "a", "b"});
  if (!xab)
    return std::nullopt;
  Value low = call.binary<MaxOp>((*xab)[0], (*xab)[1]);
  return tensorResult(call, call.binary<MinOp>(low, (*xab)[2]));
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// The product of the dims of `x` on `axes`, as a constant of `x`'s type.
Value axesVolume(Invocation &call, Value x, ArrayRef<int64_t> axes) {
  Shape shape = getShape(x);
  int64_t volume = 1;
  for (int64_t axis : axes) {
    auto c = shape[axis].getConstant();
    if (!c) {
      call.error("averaging over the symbolic dim " + shape[axis].toString() +
                 " is not supported");
      return {};
    }
    volume *= *c;
  }
  return call.scalarConstant(Invocation::elementType(x), double(volume),
                             Invocation::rank(x));
}

Result reduce(Invocation &call) {
  auto input = call.tensor("input");
  auto axesArg = call.integers("axes");
  if (!input || !axesArg)
    return std::nullopt;
  SmallVector<int64_t> axes;
  for (int64_t axis : *axesArg) {
    if (axis < 0)
      axis += Invocation::rank(*input);
    axes.push_back(axis);
  }
  llvm::sort(axes);
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  StringRef name = call.getName();
  // tract's extensions: tract_core_{product,mean_of_squares}_reduce and
  // tract_core_arg{max,min}_reduce_last.
  bool last = name.consume_back("_last");
  name.consume_front("tract_core_");
  StringRef kind = name == "mean_of_squares_reduce" ? "mean_of_squares"
                                                    : name.split('_').first;
  std::optional<Reducer> reducer =
      llvm::StringSwitch<std::optional<Reducer>>(kind)
          .Case("product", Reducer::Prod)
          .Case("mean_of_squares", Reducer::MeanOfSquares)
          .Cases({"sum", "mean"}, Reducer::Sum)
          .Case("max", Reducer::Max)
          .Case("min", Reducer::Min)
          .Case("argmax", Reducer::ArgMax)
          .Case("argmin", Reducer::ArgMin)
          .Case("any", Reducer::Any)
          .Case("all", Reducer::All)
          .Default(std::nullopt);
  if (!reducer)
    return call.error("unknown reduction");
  Value y =
      call.create<ReduceOp>(*input, *reducer, ArrayRef<int64_t>(axes), last);
  bool normalize = kind == "mean";
  if (kind == "sum") {
    auto n = call.logical("normalize");
    if (!n)
      return std::nullopt;
    normalize = *n;
  }
  if (normalize && y)
    y = call.create<DivOp>(y, axesVolume(call, *input, axes));
  return tensorResult(call, y);
}

//===----------------------------------------------------------------------===//
// Shapes and axes
//===----------------------------------------------------------------------===//

Result reshape(Invocation &call) {
  auto input = call.tensor("input");
  auto target = call.dims("shape");
  auto start = call.integer("axis_start");
  auto countArg = call.integer("axis_count");
  if (!input || !target || !start || !countArg)
    return std::nullopt;
  Shape shape = getShape(*input);
  int64_t rank = shape.size();
  int64_t count = *countArg == -1 ? rank - *start : *countArg;
  if (*start < 0 || count < 0 || *start + count > rank)
    return call.error("axis_start and axis_count do not fit the input rank");
  SmallVector<TDim> to(*target);
  std::optional<size_t> inferred;
  // tract-mlir's tract_core_reshape takes the dims as they are (a 0 is an
  // empty axis).
  bool literal = call.getName() == "tract_core_reshape";
  for (size_t i = 0; i < to.size() && !literal; ++i) {
    if (to[i] == TDim(0)) {
      if (*start + int64_t(i) >= rank)
        return call.error("shape item 0 copies an axis the input lacks");
      to[i] = shape[*start + i];
    } else if (to[i] == TDim(-1)) {
      if (inferred)
        return call.error("more than one -1 in the shape");
      inferred = i;
    }
  }
  call.declareSymbols(to);
  if (inferred) {
    // Dims found on both sides cancel out; what remains of the known side
    // must be a constant dividing the rest.
    SmallVector<TDim> remaining(shape.begin() + *start,
                                shape.begin() + *start + count);
    TDim known(1), total(1);
    for (size_t i = 0; i < to.size(); ++i) {
      if (i == *inferred)
        continue;
      auto same = llvm::find(remaining, to[i]);
      if (same != remaining.end())
        remaining.erase(same);
      else
        known *= to[i];
    }
    for (const TDim &d : remaining)
      total *= d;
    auto c = known.getConstant();
    if (!c || *c <= 0 || total.floorDiv(*c) * TDim(*c) != total)
      return call.error("cannot infer the -1 dim: " + total.toString() +
                        " over " + known.toString());
    to[*inferred] = total.floorDiv(*c);
  }
  return tensorResult(
      call, call.create<ReshapeOp>(*input, *start, count, call.shapeAttr(to)));
}

Result squeezeOrUnsqueeze(Invocation &call) {
  auto input = call.tensor("input");
  auto axes = call.integers("axes");
  if (!input || !axes)
    return std::nullopt;
  SmallVector<int64_t> sorted(*axes);
  llvm::sort(sorted);
  Value v = *input;
  if (call.getName() == "squeeze") {
    for (int64_t axis : llvm::reverse(sorted))
      v = v ? call.create<RmAxisOp>(v, axis) : v;
  } else {
    for (int64_t axis : sorted)
      v = v ? call.create<AddAxisOp>(v, axis) : v;
  }
  return tensorResult(call, v);
}

/// Output axis i is input axis perm[i].
Value transposeBy(Invocation &call, Value input, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> order(perm.size());
  std::iota(order.begin(), order.end(), 0);
  // A permutation that moves one axis is one move_axis (the exporter writes
  // move_axis so); a swap of neighbours moves the later axis back.
  for (bool backward : {true, false})
    for (int64_t from = 0; from < int64_t(perm.size()); ++from)
      for (int64_t to = 0; to < int64_t(perm.size()); ++to) {
        if (from == to || (from > to) != backward)
          continue;
        SmallVector<int64_t> moved(order);
        moved.erase(moved.begin() + from);
        moved.insert(moved.begin() + to, from);
        if (ArrayRef<int64_t>(moved) == perm)
          return call.create<MoveAxisOp>(input, from, to);
      }
  Value v = input;
  for (size_t i = 0; i < perm.size() && v; ++i) {
    auto at = llvm::find(order, perm[i]) - order.begin();
    if (at == int64_t(i))
      continue;
    v = call.create<MoveAxisOp>(v, int64_t(at), int64_t(i));
    int64_t moved = order[at];
    order.erase(order.begin() + at);
    order.insert(order.begin() + i, moved);
  }
  return v;
}

Result transpose(Invocation &call) {
  auto input = call.tensor("input");
  auto axes = call.integers("axes");
  if (!input || !axes)
    return std::nullopt;
  SmallVector<int64_t> perm(*axes);
  // Axes past the permutation stay in place.
  for (int64_t i = perm.size(); i < Invocation::rank(*input); ++i)
    perm.push_back(i);
  SmallVector<int64_t> check(perm);
  llvm::sort(check);
  for (auto [i, axis] : llvm::enumerate(check))
    if (axis != int64_t(i))
      return call.error("axes are not a permutation of the input axes");
  return tensorResult(call, transposeBy(call, *input, perm));
}

Result concat(Invocation &call) {
  auto values = call.tensors("values");
  auto axis = call.integer("axis");
  if (!values || !axis)
    return std::nullopt;
  if (values->empty())
    return call.error("nothing to concatenate");
  if (values->size() == 1)
    return NValue::ofTensor((*values)[0]);
  return tensorResult(call, call.create<ConcatOp>(ValueRange(*values), *axis));
}

Result stack(Invocation &call) {
  auto values = call.tensors("values");
  auto axis = call.integer("axis");
  if (!values || !axis)
    return std::nullopt;
  SmallVector<Value> expanded;
  for (Value v : *values)
    expanded.push_back(call.create<AddAxisOp>(v, *axis));
  if (expanded.size() == 1)
    return tensorResult(call, expanded[0]);
  return tensorResult(call, call.create<ConcatOp>(ValueRange(expanded), *axis));
}

Result unstack(Invocation &call) {
  auto value = call.tensor("value");
  auto axis = call.integer("axis");
  if (!value || !axis)
    return std::nullopt;
  Shape shape = getShape(*value);
  if (*axis < 0 || *axis >= int64_t(shape.size()))
    return call.error("axis out of range");
  auto n = shape[*axis].getConstant();
  if (!n)
    return call.error("cannot unstack the symbolic axis " +
                      shape[*axis].toString());
  std::vector<NValue> items;
  for (int64_t i = 0; i < *n; ++i) {
    Value slice = call.create<SliceOp>(*value, *axis, call.dimAttr(TDim(i)),
                                       call.dimAttr(TDim(i + 1)));
    Value item = slice ? call.create<RmAxisOp>(slice, *axis) : Value();
    if (!item)
      return std::nullopt;
    items.push_back(NValue::ofTensor(item));
  }
  return NValue::ofArray(std::move(items));
}

Result split(Invocation &call) {
  auto value = call.tensor("value");
  auto axis = call.integer("axis");
  auto ratios = call.integers("ratios");
  if (!value || !axis || !ratios)
    return std::nullopt;
  Shape shape = getShape(*value);
  if (*axis < 0 || *axis >= int64_t(shape.size()))
    return call.error("axis out of range");
  int64_t total = std::accumulate(ratios->begin(), ratios->end(), int64_t(0));
  if (total <= 0)
    return call.error("ratios must sum to a positive number");
  TDim unit = shape[*axis].floorDiv(total);
  if (unit * TDim(total) != shape[*axis])
    return call.error("the axis (" + shape[*axis].toString() +
                      ") does not divide by the ratios' sum");
  std::vector<NValue> items;
  TDim start(0);
  for (int64_t ratio : *ratios) {
    TDim end = start + unit * TDim(ratio);
    Value slice = call.create<SliceOp>(*value, *axis, call.dimAttr(start),
                                       call.dimAttr(end));
    if (!slice)
      return std::nullopt;
    items.push_back(NValue::ofTensor(slice));
    start = end;
  }
  return NValue::ofArray(std::move(items));
}

/// Element `i` of a 0-d or 1-d integer tensor, as a 0-d i64 tensor.
Value elementAt(Invocation &call, Value values, int64_t i) {
  if (Invocation::rank(values) == 1)
    values = call.create<RmAxisOp>(
        call.create<SliceOp>(values, int64_t(0), call.dimAttr(TDim(i)),
                             call.dimAttr(TDim(i + 1))),
        int64_t(0));
  return call.castTo(values, call.getBuilder().getI64Type());
}

/// A slice whose begin or end tensor holds values only known when the model
/// runs (computed from an input's values): per axis, the bounds are read as
/// the constant ones are (negative from the end, an end of 0 or less from
/// the end too), clamped into the axis, and sliced by tract.dyn_slice, so a
/// value past the axis cannot read outside it.
Result sliceOfValues(Invocation &call, Value input, ArrayRef<int64_t> axes,
                     Value beginValues, Value endValues) {
  auto strides = call.integers("stride");
  if (!strides)
    return std::nullopt;
  if (llvm::any_of(*strides, [](int64_t s) { return s != 1; }))
    return call.error("strides other than 1 with begin or end known only "
                      "when the model runs");
  std::optional<SmallVector<TDim>> begins, ends;
  if (!beginValues && !(begins = call.dims("begin")))
    return std::nullopt;
  if (!endValues && !(ends = call.dims("end")))
    return std::nullopt;
  Type i64 = call.getBuilder().getI64Type();
  Value zero = call.scalarConstant(i64, 0);
  Value v = input;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = axes[i] < 0 ? axes[i] + Invocation::rank(v) : axes[i];
    if (axis < 0 || axis >= Invocation::rank(v))
      return call.error("axis out of range");
    Value dim = call.dimValue(getShape(v)[axis]);
    auto bound = [&](Value values, std::optional<SmallVector<TDim>> &dims,
                     bool isEnd) -> Value {
      Value b = values ? elementAt(call, values, i)
                       : call.dimValue((*dims)[i]);
      Value fromEnd = isEnd ? call.binary<LeOp>(b, zero)
                            : call.binary<LtOp>(b, zero);
      b = call.create<SelectOp>(fromEnd, call.binary<AddOp>(b, dim), b);
      return call.binary<MinOp>(call.binary<MaxOp>(b, zero), dim);
    };
    Value start = bound(beginValues, begins, false);
    Value end = call.binary<MaxOp>(bound(endValues, ends, true), start);
    TDim len = call.freshSymbol("slice");
    v = call.create<DynSliceOp>(v, start, end, axis, call.dimAttr(len));
  }
  return tensorResult(call, v);
}

Result slice(Invocation &call) {
  auto input = call.tensor("input");
  auto axes = call.integers("axes");
  if (!input || !axes)
    return std::nullopt;
  // Bounds computed from an input's values: clamped when the model runs.
  auto runtimeValues = [&](StringRef name) -> Value {
    const NValue &v = call.args[name.str()];
    if (v.kind == NValue::Kind::Tensor && !call.knownDims(v.tensor))
      return v.tensor;
    return {};
  };
  Value beginValues = runtimeValues("begin"), endValues = runtimeValues("end");
  if (beginValues || endValues)
    return sliceOfValues(call, *input, *axes, beginValues, endValues);
  auto begins = call.dims("begin");
  auto ends = call.dims("end");
  auto strides = call.integers("stride");
  if (!begins || !ends || !strides)
    return std::nullopt;
  if (begins->size() != axes->size() || ends->size() != axes->size() ||
      (!strides->empty() && strides->size() != axes->size()))
    return call.error("axes, begin, end and stride differ in length");
  Value v = *input;
  for (size_t i = 0; i < axes->size() && v; ++i) {
    int64_t axis = (*axes)[i];
    Shape shape = getShape(v);
    if (axis < 0)
      axis += shape.size();
    if (axis < 0 || axis >= int64_t(shape.size()))
      return call.error("axis out of range");
    const TDim &dim = shape[axis];
    TDim begin = (*begins)[i], end = (*ends)[i];
    // Negative constants count from the end; an end of 0 is the end of the
    // axis, as tract reads it.
    if (auto c = begin.getConstant(); c && *c < 0)
      begin = dim + begin;
    if (auto c = end.getConstant(); c && *c <= 0)
      end = dim + end;
    if (auto c = end.getConstant(), d = dim.getConstant(); c && d && *c > *d)
      end = dim;
    int64_t stride = strides->empty() ? 1 : (*strides)[i];
    if (stride <= 0)
      return call.error("only positive strides are supported");
    if (!(begin == TDim(0) && end == dim))
      v = call.create<SliceOp>(v, axis, call.dimAttr(begin), call.dimAttr(end));
    if (v && stride != 1)
      v = call.create<DownsampleOp>(v, axis, stride, int64_t(0));
  }
  return tensorResult(call, v);
}

Result broadcast(Invocation &call) {
  auto input = call.tensor("input");
  auto shape = call.dims("shape");
  if (!input || !shape)
    return std::nullopt;
  call.declareSymbols(*shape);
  // As tract's multi-broadcast: a lower-rank input (a scalar) gains leading
  // unit axes.
  Value source = call.unsqueezeTo(*input, shape->size());
  return tensorResult(call,
                      call.create<BroadcastOp>(source, call.shapeAttr(*shape)));
}

Result tile(Invocation &call) {
  auto input = call.tensor("input");
  auto repeats = call.dims("repeats");
  if (!input || !repeats)
    return std::nullopt;
  return tensorResult(call,
                      call.create<TileOp>(*input, call.shapeAttr(*repeats)));
}

Result pad(Invocation &call) {
  auto input = call.tensor("input");
  auto padding = call.pairs("padding");
  auto border = call.string("border");
  auto value = call.scalar("value");
  if (!input || !padding || !border || !value)
    return std::nullopt;
  SmallVector<int64_t> before, after;
  for (auto [b, a] : *padding) {
    before.push_back(b);
    after.push_back(a);
  }
  while (int64_t(before.size()) < Invocation::rank(*input)) {
    before.push_back(0);
    after.push_back(0);
  }
  std::optional<PadMode> mode =
      llvm::StringSwitch<std::optional<PadMode>>(*border)
          .Case("constant", PadMode::Constant)
          .Case("replicate", PadMode::Edge)
          .Case("replicated", PadMode::Edge)
          .Case("reflect", PadMode::Reflect)
          .Default(std::nullopt);
  if (!mode)
    return call.error("unsupported border '" + *border + "'");
  Type type = Invocation::elementType(*input);
  TypedAttr fill;
  if (*mode == PadMode::Constant) {
    if (auto f = dyn_cast<FloatType>(type))
      fill = FloatAttr::get(f, *value);
    else
      fill = IntegerAttr::get(type, APInt(type.getIntOrFloatBitWidth(),
                                          int64_t(*value), true, true));
  }
  return tensorResult(call, call.create<PadOp>(*input, ArrayRef(before),
                                               ArrayRef(after), *mode, fill));
}

//===----------------------------------------------------------------------===//
// Neural-network operations
//===----------------------------------------------------------------------===//

struct Window {
  SmallVector<int64_t> strides, dilations, before, after;
  Padding padding = Padding::SameUpper;
};

/// Reads padding, stride and dilation; `spatialOnly` for conv (NNEF gives
/// spatial values), otherwise (pools) every axis is given and the first two
/// must be neutral.
std::optional<Window> readWindow(Invocation &call, int64_t rank,
                                 bool spatialOnly) {
  auto padding = call.pairs("padding");
  auto stride = call.integers("stride");
  auto dilation = call.integers("dilation");
  auto border = call.string("border");
  if (!padding || !stride || !dilation || !border)
    return std::nullopt;
  int64_t spatial = rank - 2;
  size_t skip = spatialOnly ? 0 : 2;
  auto take = [&](ArrayRef<int64_t> all, StringRef what,
                  int64_t neutral) -> std::optional<SmallVector<int64_t>> {
    if (all.empty())
      return SmallVector<int64_t>();
    if (int64_t(all.size()) != spatial + int64_t(skip)) {
      call.error(what + " has " + std::to_string(all.size()) +
                 " values, expected " + std::to_string(spatial + skip));
      return std::nullopt;
    }
    for (size_t i = 0; i < skip; ++i)
      if (all[i] != neutral) {
        call.error(what + " on the batch or channel axis is not supported");
        return std::nullopt;
      }
    SmallVector<int64_t> out(all.drop_front(skip));
    if (llvm::all_of(out, [&](int64_t v) { return v == neutral; }))
      out.clear();
    return out;
  };
  Window window;
  auto strides = take(*stride, "stride", 1);
  auto dilations = take(*dilation, "dilation", 1);
  if (!strides || !dilations)
    return std::nullopt;
  window.strides = *strides;
  window.dilations = *dilations;
  if (!padding->empty()) {
    if (int64_t(padding->size()) != spatial + int64_t(skip)) {
      call.error("padding has " + std::to_string(padding->size()) +
                 " pairs, expected " + std::to_string(spatial + skip));
      return std::nullopt;
    }
    for (size_t i = 0; i < padding->size(); ++i) {
      if (i < skip) {
        if ((*padding)[i] != std::pair<int64_t, int64_t>(0, 0)) {
          call.error("padding the batch or channel axis is not supported");
          return std::nullopt;
        }
        continue;
      }
      window.before.push_back((*padding)[i].first);
      window.after.push_back((*padding)[i].second);
    }
    window.padding = Padding::Explicit;
    if (llvm::all_of(window.before, [](int64_t v) { return v == 0; }) &&
        llvm::all_of(window.after, [](int64_t v) { return v == 0; })) {
      window.padding = Padding::Valid;
      window.before.clear();
      window.after.clear();
    }
  }
  return window;
}

Result conv(Invocation &call) {
  auto input = call.tensor("input");
  auto filter = call.tensor("filter");
  auto groupsArg = call.integer("groups");
  auto border = call.string("border");
  if (!input || !filter || !groupsArg || !border)
    return std::nullopt;
  if (*border != "constant" && *border != "ignore")
    return call.error("border '" + *border + "' is not supported");
  Shape filterShape = getShape(*filter);
  int64_t groups = *groupsArg;
  if (groups == 0) {
    auto o = filterShape.empty() ? std::nullopt : filterShape[0].getConstant();
    if (!o)
      return call.error("groups = 0 needs a constant output channel count");
    groups = *o;
  }
  auto window = readWindow(call, Invocation::rank(*input), true);
  if (!window)
    return std::nullopt;
  Value bias;
  Value addAfter;
  if (!call.isLiteral("bias", 0.0)) {
    auto b = call.tensor("bias", Invocation::elementType(*input));
    if (!b)
      return std::nullopt;
    bias = *b;
    // NNEF biases are [1, O]; tract's conv takes O values.
    if (Invocation::rank(bias) == 2 && getShape(bias)[0] == TDim(1))
      bias = call.create<RmAxisOp>(bias, int64_t(0));
    if (bias && Invocation::rank(bias) == 0) {
      addAfter = bias;
      bias = Value();
    }
  }
  Value y = call.create<ConvOp>(
      *input, *filter, bias, static_cast<uint64_t>(groups),
      ArrayRef(window->strides), ArrayRef(window->dilations), window->padding,
      ArrayRef(window->before), ArrayRef(window->after));
  if (y && addAfter)
    y = call.binary<AddOp>(y, addAfter);
  return tensorResult(call, y);
}

/// A deconv; `outputShape` (if not empty) fixes the sizes the strides leave
/// ambiguous, as adjustments. nullopt once an error is reported.
std::optional<Value> buildDeconv(Invocation &call, Value input, Value filter,
                                 Value bias, int64_t groups,
                                 const Window &window,
                                 ArrayRef<TDim> outputShape) {
  auto build = [&](ArrayRef<int64_t> adjustments) {
    return call.create<DeconvOp>(
        input, filter, bias, static_cast<uint64_t>(groups), adjustments,
        ArrayRef(window.strides), ArrayRef(window.dilations), window.padding,
        ArrayRef(window.before), ArrayRef(window.after));
  };
  Value y = build({});
  if (!y)
    return call.error("invalid operands");
  if (outputShape.empty())
    return y;
  Shape computed = getShape(y);
  // tract writes the spatial dims only.
  SmallVector<TDim> full(outputShape);
  if (full.size() + 2 == computed.size())
    full.insert(full.begin(), computed.begin(), computed.begin() + 2);
  outputShape = full;
  if (outputShape.size() != computed.size())
    return call.error("output_shape has " + std::to_string(outputShape.size()) +
                      " dims, the output has " +
                      std::to_string(computed.size()));
  SmallVector<int64_t> adjustments;
  for (size_t i = 2; i < computed.size(); ++i) {
    auto extra = (outputShape[i] - computed[i]).getConstant();
    if (!extra || *extra < 0)
      return call.error("output_shape dim " + outputShape[i].toString() +
                        " does not extend the computed " +
                        computed[i].toString());
    adjustments.push_back(*extra);
  }
  if (llvm::any_of(adjustments, [](int64_t a) { return a != 0; })) {
    y.getDefiningOp()->erase();
    y = build(adjustments);
    if (!y)
      return call.error("invalid operands");
  }
  return y;
}

/// `debox`, the transpose of `box`: a depthwise deconv by a filter of ones
/// (divided by the window size with `normalize`).
Result debox(Invocation &call) {
  auto input = call.tensor("input");
  auto size = call.integers("size");
  auto border = call.string("border");
  auto outputShape = call.dims("output_shape");
  auto normalize = call.logical("normalize");
  if (!input || !size || !border || !outputShape || !normalize)
    return std::nullopt;
  if (*border != "constant" && !(*border == "ignore" && !*normalize))
    return call.error("border '" + *border + "' is not supported");
  int64_t rank = Invocation::rank(*input);
  if (int64_t(size->size()) != rank || rank < 3 || (*size)[0] != 1 ||
      (*size)[1] != 1)
    return call.error("size must give every axis, 1 on the batch and "
                      "channel axes");
  auto channels = getShape(*input)[1].getConstant();
  if (!channels)
    return call.error("needs a constant channel count");
  auto window = readWindow(call, rank, false);
  if (!window)
    return std::nullopt;
  SmallVector<int64_t> filterShape{*channels, 1};
  filterShape.append(size->begin() + 2, size->end());
  int64_t volume = 1;
  for (int64_t k : ArrayRef(*size).drop_front(2))
    volume *= k;
  Type type = Invocation::elementType(*input);
  auto filterType = RankedTensorType::get(filterShape, type);
  auto floatType = dyn_cast<FloatType>(type);
  if (!floatType)
    return call.error("the input must be floating point");
  Value filter = call.constant(DenseElementsAttr::get(
      filterType,
      FloatAttr::get(floatType, *normalize ? 1.0 / double(volume) : 1.0)));
  SmallVector<TDim> shape(*outputShape);
  auto y =
      buildDeconv(call, *input, filter, Value(), *channels, *window, shape);
  if (!y)
    return std::nullopt;
  return tensorResult(call, *y);
}

Result deconv(Invocation &call) {
  auto input = call.tensor("input");
  auto filter = call.tensor("filter");
  auto groupsArg = call.integer("groups");
  auto border = call.string("border");
  auto outputShape = call.dims("output_shape");
  if (!input || !filter || !groupsArg || !border || !outputShape)
    return std::nullopt;
  if (*border != "constant" && *border != "ignore")
    return call.error("border '" + *border + "' is not supported");
  int64_t groups = *groupsArg;
  if (groups == 0) {
    // Depthwise: one group per input channel.
    Shape inputShape = getShape(*input);
    auto c = inputShape.size() < 2 ? std::nullopt : inputShape[1].getConstant();
    if (!c)
      return call.error("groups = 0 needs a constant input channel count");
    groups = *c;
  }
  auto window = readWindow(call, Invocation::rank(*input), true);
  if (!window)
    return std::nullopt;
  Value bias, addAfter;
  if (!call.isLiteral("bias", 0.0)) {
    auto b = call.tensor("bias", Invocation::elementType(*input));
    if (!b)
      return std::nullopt;
    bias = *b;
    if (Invocation::rank(bias) == 2 && getShape(bias)[0] == TDim(1))
      bias = call.create<RmAxisOp>(bias, int64_t(0));
    if (bias && Invocation::rank(bias) == 0) {
      addAfter = bias;
      bias = Value();
    }
  }
  auto y =
      buildDeconv(call, *input, *filter, bias, groups, *window, *outputShape);
  if (!y)
    return std::nullopt;
  if (*y && addAfter)
    *y = call.binary<AddOp>(*y, addAfter);
  return tensorResult(call, *y);
}

Result pool(Invocation &call) {
  auto input = call.tensor("input");
  auto size = call.integers("size");
  auto border = call.string("border");
  if (!input || !size || !border)
    return std::nullopt;
  int64_t rank = Invocation::rank(*input);
  if (int64_t(size->size()) != rank || rank < 3 || (*size)[0] != 1 ||
      (*size)[1] != 1)
    return call.error("size must give every axis, 1 on the batch and "
                      "channel axes");
  SmallVector<int64_t> kernel(size->begin() + 2, size->end());
  auto window = readWindow(call, rank, false);
  if (!window)
    return std::nullopt;
  StringRef name = call.getName();
  // tract-mlir's extensions add ceil mode (and max_pool's indices).
  bool ceilMode = false, withIndex = false;
  if (name.starts_with("tract_core_")) {
    auto ceil = call.logical("ceil_mode");
    if (!ceil)
      return std::nullopt;
    ceilMode = *ceil;
    // In ceil mode, explicit zero padding rounds up where valid does not.
    if (ceilMode && window->padding == Padding::Valid &&
        !call.args["padding"].items.empty())
      window->padding = Padding::Explicit;
  }
  if (name == "max_pool" || name == "tract_core_max_pool") {
    if (*border != "ignore" && *border != "constant")
      return call.error("border '" + *border + "' is not supported");
    if (name == "tract_core_max_pool") {
      auto index = call.logical("with_index");
      if (!index)
        return std::nullopt;
      withIndex = *index;
    }
    Operation *op = call.createOp<MaxPoolOp>(
        Type(), Type(), *input, ArrayRef(kernel), ceilMode, withIndex,
        ArrayRef(window->strides), ArrayRef(window->dilations), window->padding,
        ArrayRef(window->before), ArrayRef(window->after));
    if (!op)
      return call.error("invalid operands");
    if (!withIndex)
      return NValue::ofTensor(op->getResult(0));
    return NValue::ofArray({NValue::ofTensor(op->getResult(0)),
                            NValue::ofTensor(op->getResult(1))},
                           NValue::Kind::Tuple);
  }
  bool normalize = name == "avg_pool";
  if (name == "box" || name == "tract_core_sum_pool") {
    auto n = call.logical("normalize");
    if (!n)
      return std::nullopt;
    normalize = *n;
  }
  if (*border != "ignore" && *border != "constant")
    return call.error("border '" + *border + "' is not supported");
  // 'constant' pads with zeros that count in the average; 'ignore' leaves
  // the padding out.
  bool countIncludePad = *border == "constant";
  return tensorResult(call,
                      call.create<SumPoolOp>(
                          *input, ArrayRef(kernel), ceilMode, normalize,
                          countIncludePad, ArrayRef(window->strides),
                          ArrayRef(window->dilations), window->padding,
                          ArrayRef(window->before), ArrayRef(window->after)));
}

/// numpy's matmul as an einsum, after aligning ranks.
Value matmul(Invocation &call, Value a, Value b, bool transposeA,
             bool transposeB) {
  int64_t ra = Invocation::rank(a), rb = Invocation::rank(b);
  if (ra < 2 || rb < 2) {
    call.error("matmul operands must have rank 2 or more");
    return {};
  }
  int64_t rank = std::max(ra, rb);
  // A weight's leading unit axes keep its location: its name says what it
  // is (tract's block-quant leaves an output head's weights in f32).
  auto widen = [&](Value x) {
    auto constant = x.getDefiningOp<ConstOp>();
    if (!constant)
      return call.unsqueezeTo(x, rank);
    while (Invocation::rank(x) < rank)
      x = AddAxisOp::create(call.getBuilder(), constant.getLoc(), x,
                            uint64_t(0));
    return x;
  };
  a = widen(a);
  b = widen(b);
  std::string batch = std::string("abcdefgh").substr(0, rank - 2);
  std::string expr = batch + (transposeA ? "km" : "mk") + "," + batch +
                     (transposeB ? "nk" : "kn") + "->" + batch + "mn";
  return call.create<EinsumOp>(ValueRange{a, b}, expr);
}

Result matmulOp(Invocation &call) {
  auto ab = tensorArgs(call, {"A", "B"});
  auto ta = call.logical("transposeA");
  auto tb = call.logical("transposeB");
  if (!ab || !ta || !tb)
    return std::nullopt;
  return tensorResult(call, matmul(call, (*ab)[0], (*ab)[1], *ta, *tb));
}

Result linear(Invocation &call) {
  auto xw = tensorArgs(call, {"input", "filter"});
  if (!xw)
    return std::nullopt;
  Value y = matmul(call, (*xw)[0], (*xw)[1], false, true);
  if (y && !call.isLiteral("bias", 0.0)) {
    auto bias = call.tensor("bias", Invocation::elementType(y));
    if (!bias)
      return std::nullopt;
    y = call.binary<AddOp>(y, *bias);
  }
  return tensorResult(call, y);
}

Result softmax(Invocation &call) {
  auto x = call.tensor("x");
  auto axesArg = call.integers("axes");
  if (!x || !axesArg)
    return std::nullopt;
  SmallVector<int64_t> axes(*axesArg);
  for (int64_t &axis : axes)
    if (axis < 0)
      axis += Invocation::rank(*x);
  llvm::sort(axes);
  if (call.getName() == "tract_core_log_softmax")
    return tensorResult(call, call.create<LogSoftmaxOp>(*x, ArrayRef(axes)));
  return tensorResult(call, call.create<SoftmaxOp>(*x, ArrayRef(axes)));
}

/// Per-channel parameters `[1, C]` against an `N, C, …` input: NNEF extends
/// shapes with trailing unit axes.
Value channelParam(Invocation &call, Value param, int64_t rank) {
  while (param && Invocation::rank(param) < rank)
    param = call.create<AddAxisOp>(param, Invocation::rank(param));
  return param;
}

Result batchNormalization(Invocation &call) {
  auto args =
      tensorArgs(call, {"input", "mean", "variance", "offset", "scale"});
  auto epsilon = call.scalar("epsilon");
  if (!args || !epsilon)
    return std::nullopt;
  Value x = (*args)[0];
  int64_t rank = Invocation::rank(x);
  Value mean = channelParam(call, (*args)[1], rank);
  Value variance = channelParam(call, (*args)[2], rank);
  Value offset = channelParam(call, (*args)[3], rank);
  Value scale = channelParam(call, (*args)[4], rank);
  Value eps = call.scalarConstant(Invocation::elementType(x), *epsilon, rank);
  Value y = call.binary<DivOp>(
      call.binary<SubOp>(x, mean),
      call.create<SqrtOp>(call.binary<AddOp>(variance, eps)));
  y = call.binary<AddOp>(call.binary<MulOp>(y, scale), offset);
  return tensorResult(call, y);
}

//===----------------------------------------------------------------------===//
// tract's extensions
//===----------------------------------------------------------------------===//

/// `tract_core_cast(x, to = 'u8')`, or without `to` when graph.quant types
/// the result (tract's quantizing casts); `to` then names the quantized
/// type's integers.
Result castOp(Invocation &call) {
  auto input = call.tensor("input");
  auto to = call.string("to");
  if (!input || !to)
    return std::nullopt;
  Type quantized = call.quantizedResult;
  if (to->empty()) {
    if (!quantized)
      return call.error("needs 'to', or a graph.quant entry for its result");
    return tensorResult(call, call.castTo(*input, quantized));
  }
  Type type = elementTypeFromName(call.getContext(), *to);
  if (!type)
    return call.error("unknown datum type '" + *to + "'");
  if (quantized) {
    if (getStorageType(quantized) != type)
      return call.error(
          "casts to '" + *to + "' but graph.quant makes its result " +
          quantizedTypeName(cast<quant::UniformQuantizedType>(quantized)));
    type = quantized;
  }
  // A constant cast is a constant: tract writes small integer constants as
  // `tract_core_cast([1, 2], to = "i32")`.
  if (auto konst = input->getDefiningOp<ConstOp>(); konst && !quantized)
    if (auto folded = dyn_cast_or_null<DenseElementsAttr>(
            foldCast(konst.getValue(),
                     getTensorType(call.getContext(), getShape(*input), type))))
      return tensorResult(call, call.constant(folded));
  return tensorResult(call, call.castTo(*input, type));
}

/// An `indices` operand: integers, as declared; float indices (an array
/// literal written `[0.0, 7.0]`, or a tensor computed from one) are cast,
/// as tract casts them.
std::optional<Value> indexTensor(Invocation &call) {
  Builder b(call.getContext());
  auto indices = call.tensor("indices", b.getI64Type());
  if (indices && isa<FloatType>(call.elementType(*indices)))
    return call.castTo(*indices, b.getI64Type());
  return indices;
}

Result gather(Invocation &call) {
  auto input = call.tensor("input");
  auto indices = indexTensor(call);
  auto axis = call.integer("axis");
  if (!input || !indices || !axis)
    return std::nullopt;
  return tensorResult(call, call.create<GatherOp>(*input, *indices, *axis));
}

Result isInf(Invocation &call) {
  auto x = call.tensor("x");
  auto positive = call.logical("detect_positive");
  auto negative = call.logical("detect_negative");
  if (!x || !positive || !negative)
    return std::nullopt;
  return tensorResult(call, call.create<IsInfOp>(*x, *positive, *negative));
}

Result gatherElements(Invocation &call) {
  auto input = call.tensor("input");
  auto indices = indexTensor(call);
  auto axis = call.integer("axis");
  if (!input || !indices || !axis)
    return std::nullopt;
  return tensorResult(call,
                      call.create<GatherElementsOp>(*input, *indices, *axis));
}

Result gatherNd(Invocation &call) {
  auto input = call.tensor("input");
  auto indices = indexTensor(call);
  auto batchDims = call.integer("batch_dims");
  if (!input || !indices || !batchDims)
    return std::nullopt;
  return tensorResult(call,
                      call.create<GatherNdOp>(*input, *indices, *batchDims));
}

Result scatter(Invocation &call) {
  auto args = tensorArgs(call, {"input", "indices", "updates"});
  auto reductionName = call.string("reduction");
  if (!args || !reductionName)
    return std::nullopt;
  std::optional<ScatterReduction> reduction =
      symbolizeScatterReduction(*reductionName);
  if (!reduction)
    return call.error("unknown reduction '" + *reductionName + "'");
  auto [input, indices, updates] =
      std::tuple((*args)[0], (*args)[1], (*args)[2]);
  if (call.getName() == "tract_core_scatter_nd")
    return tensorResult(
        call, call.create<ScatterNdOp>(input, indices, updates, *reduction));
  auto axis = call.integer("axis");
  if (!axis)
    return std::nullopt;
  return tensorResult(call, call.create<ScatterElementsOp>(
                                input, indices, updates, *axis, *reduction));
}

Result trilu(Invocation &call) {
  auto input = call.tensor("input");
  auto k = call.tensor("k");
  auto upper = call.logical("upper");
  if (!input || !k || !upper)
    return std::nullopt;
  return tensorResult(call, call.create<TriluOp>(*input, *k, *upper));
}

Result oneHot(Invocation &call) {
  auto indices = call.tensor("input");
  auto axis = call.integer("axis");
  auto dim = call.integer("dim");
  auto off = call.scalar("value_off");
  auto on = call.scalar("value_on");
  auto dt = call.string("datum_type");
  if (!indices || !axis || !dim || !off || !on || !dt)
    return std::nullopt;
  Type type = elementTypeFromName(call.getContext(), *dt);
  if (!type)
    return call.error("unknown datum type '" + *dt + "'");
  auto attr = [&](double v) -> TypedAttr {
    if (auto f = dyn_cast<FloatType>(type))
      return FloatAttr::get(f, v);
    return IntegerAttr::get(
        type, APInt(type.getIntOrFloatBitWidth(), int64_t(v), true, true));
  };
  return tensorResult(call, call.create<OneHotOp>(*indices, *axis, *dim,
                                                  attr(*off), attr(*on)));
}

Result shapeOf(Invocation &call) {
  auto input = call.tensor("input");
  if (!input)
    return std::nullopt;
  Value shape = call.create<ShapeOfOp>(*input);
  if (shape)
    call.setKnownDims(shape, getShape(*input));
  return tensorResult(call, shape);
}

/// The numbers of a constant tensor or of an array literal.
std::optional<SmallVector<double>> numbers(Invocation &call, StringRef name) {
  const NValue &v = call.args[std::string(name)];
  SmallVector<double> out;
  auto number = [](const NValue &item) -> std::optional<double> {
    if (item.kind == NValue::Kind::Scalar)
      return item.scalar;
    if (item.kind == NValue::Kind::Integer)
      if (auto c = item.integer.getConstant())
        return double(*c);
    return std::nullopt;
  };
  if (v.kind == NValue::Kind::Tensor) {
    auto konst = v.tensor.getDefiningOp<ConstOp>();
    auto attr = konst ? dyn_cast<DenseElementsAttr>(konst.getValue()) : nullptr;
    if (!attr)
      return call.error("'" + name + "' must be a constant");
    if (isa<FloatType>(attr.getElementType()))
      for (const APFloat &f : attr.getValues<APFloat>())
        out.push_back(f.convertToDouble());
    else
      for (const APInt &i : attr.getValues<APInt>())
        out.push_back(double(i.getSExtValue()));
    return out;
  }
  std::vector<NValue> items =
      v.kind == NValue::Kind::Array ? v.items : std::vector{v};
  for (const NValue &item : items) {
    auto n = number(item);
    if (!n)
      return call.error("'" + name + "' must hold numbers");
    out.push_back(*n);
  }
  return out;
}

Result range(Invocation &call) {
  bool literal = llvm::all_of(
      std::initializer_list<StringRef>{"start", "end", "step"},
      [&](StringRef n) {
        const NValue &v = call.args[std::string(n)];
        return v.kind == NValue::Kind::Integer && v.integer.getConstant();
      });
  if (!literal) {
    // Tensors: tract.range, of the given or a computable length.
    auto operands = tensorArgs(call, {"start", "end", "step"});
    auto len = call.dim("len");
    if (!operands || !len)
      return std::nullopt;
    TDim length = *len;
    // Integer bounds known at import, symbolic or not (an end read from a
    // shape, `S`): the length is ceil((end - start) / step).
    if (length == TDim(-1)) {
      auto from = call.knownDims((*operands)[0]),
           to = call.knownDims((*operands)[1]),
           by = call.knownDims((*operands)[2]);
      if (from && to && by && from->size() == 1 && to->size() == 1 &&
          by->size() == 1)
        if (std::optional<int64_t> step = by->front().getConstant();
            step && *step > 0)
          length = (to->front() - from->front() + TDim(*step - 1))
                       .floorDiv(*step);
    }
    if (length == TDim(-1)) {
      auto from = numbers(call, "start"), to = numbers(call, "end"),
           by = numbers(call, "step");
      if (!from || !to || !by || from->size() != 1 || to->size() != 1 ||
          by->size() != 1)
        return call.error("'len' is needed when the bounds are not constant");
      if (by->front() == 0)
        return call.error("step is 0");
      double count = std::ceil((to->front() - from->front()) / by->front());
      if (!(count < double(kDimCeiling))) // NaN and infinities too
        return call.error("the range from " + std::to_string(from->front()) +
                          " to " + std::to_string(to->front()) + " by " +
                          std::to_string(by->front()) +
                          " has more than 2^31 elements");
      length = TDim(std::max<int64_t>(0, int64_t(count)));
    }
    call.declareSymbols({length});
    return tensorResult(
        call, call.create<RangeOp>((*operands)[0], (*operands)[1],
                                   (*operands)[2], call.dimAttr(length)));
  }
  auto start = call.integer("start");
  auto end = call.integer("end");
  auto step = call.integer("step");
  if (!start || !end || !step)
    return std::nullopt;
  if (*step == 0)
    return call.error("step is 0");
  SmallVector<int64_t> values;
  for (int64_t v = *start; *step > 0 ? v < *end : v > *end; v += *step)
    values.push_back(v);
  auto type = RankedTensorType::get({int64_t(values.size())},
                                    IntegerType::get(call.getContext(), 64));
  return NValue::ofTensor(
      call.constant(DenseElementsAttr::get(type, ArrayRef(values))));
}

Result downsampleAxis(Invocation &call) {
  auto input = call.tensor("input");
  auto axis = call.integer("axis");
  auto stride = call.integer("stride");
  auto modulo = call.integer("modulo");
  if (!input || !axis || !stride || !modulo)
    return std::nullopt;
  if (*stride <= 0)
    return call.error("only positive strides are supported");
  return tensorResult(
      call, call.create<DownsampleOp>(*input, *axis, *stride, *modulo));
}

Result topK(Invocation &call) {
  auto input = call.tensor("input");
  auto k = call.tensor("k", IntegerType::get(call.getContext(), 64));
  auto axis = call.integer("axis");
  auto largest = call.logical("largest");
  auto len = call.dim("len");
  if (!input || !k || !axis || !largest || !len)
    return std::nullopt;
  TDim length = *len;
  if (length == TDim(-1)) {
    auto known = call.knownDims(*k);
    if (!known || known->size() != 1)
      return call.error("'len' is needed when k is not constant");
    length = known->front();
  }
  call.declareSymbols({length});
  Operation *op = call.createOp<TopKOp>(Type(), Type(), *input, *k, *axis,
                                        *largest, call.dimAttr(length));
  if (!op)
    return call.error("invalid operands");
  return NValue::ofArray(
      {NValue::ofTensor(op->getResult(0)), NValue::ofTensor(op->getResult(1))},
      NValue::Kind::Tuple);
}

/// `tract_onnx_unique(input, sorted, count_symbol)`: tract.unique, whose
/// count of distinct rows is the symbol, bound when the model runs (tract
/// has no such op: tract-mlir writes and reads it).
Result unique(Invocation &call) {
  auto input = call.tensor("input");
  auto sorted = call.logical("sorted");
  auto name = call.string("count_symbol");
  if (!input || !sorted || !name)
    return std::nullopt;
  if (name->empty())
    return call.error("count_symbol must name a symbol");
  TDim count = TDim::symbol(*name);
  call.declareSymbols({count});
  Operation *op = call.createOp<UniqueOp>(Type(), Type(), Type(), Type(),
                                          *input, *sorted, call.dimAttr(count));
  if (!op)
    return call.error("invalid operands");
  return NValue::ofArray(
      {NValue::ofTensor(op->getResult(0)), NValue::ofTensor(op->getResult(1)),
       NValue::ofTensor(op->getResult(2)), NValue::ofTensor(op->getResult(3))},
      NValue::Kind::Tuple);
}

/// `tract_onnx_random(like, distribution, a, b, seed, datum_type)`:
/// tract.random of `like`'s shape (tract has no such op: tract-mlir writes
/// it for ONNX's random ops and reads it back).
Result randomDraws(Invocation &call) {
  auto like = call.tensor("like");
  auto distribution = call.string("distribution");
  auto a = call.scalar("a");
  auto b = call.scalar("b");
  auto seed = call.integer("seed");
  auto datum = call.string("datum_type");
  if (!like || !distribution || !a || !b || !seed || !datum)
    return std::nullopt;
  std::optional<RandomDistribution> kind =
      symbolizeRandomDistribution(*distribution);
  if (!kind)
    return call.error("unknown distribution '" + *distribution + "'");
  if (*datum != "f32" && *datum != "f64")
    return call.error("datum_type must be f32 or f64");
  OpBuilder &builder = call.getBuilder();
  Type element =
      *datum == "f64" ? Type(builder.getF64Type()) : Type(builder.getF32Type());
  auto op = RandomOp::create(
      builder, call.loc,
      getTensorType(builder.getContext(), getShape(*like), element), *like,
      *kind, APFloat(double(*a)), APFloat(double(*b)), *seed);
  return tensorResult(call, op.getResult());
}

/// `tract_onnx_bind_dims(values, dims)`: tract.bind_dims, binding the
/// symbols of `dims` to the values when the model runs; the result is the
/// values (tract has no such op: tract-mlir writes and reads it).
Result bindValueDims(Invocation &call) {
  auto values = call.tensor("values");
  auto dims = call.dims("dims");
  if (!values || !dims)
    return std::nullopt;
  Shape shape = getShape(*values);
  Type type = cast<RankedTensorType>(values->getType()).getElementType();
  if (shape.size() != 1 ||
      shape[0] != TDim(static_cast<int64_t>(dims->size())) ||
      !isa<IntegerType>(type))
    return call.error("values must be a 1-D integer tensor of one value per "
                      "dim");
  call.declareSymbols(*dims);
  BindDimsOp::create(call.getBuilder(), call.loc, *values,
                     call.shapeAttr(*dims));
  return NValue::ofTensor(*values);
}

/// `tract_onnx_non_zero(input, count_symbol)`: the count of non-zero
/// elements is the symbol, bound when the model runs.
Result nonZero(Invocation &call) {
  auto input = call.tensor("input");
  auto name = call.string("count_symbol");
  if (!input || !name)
    return std::nullopt;
  if (name->empty())
    return call.error("count_symbol must name a symbol");
  TDim count = TDim::symbol(*name);
  call.declareSymbols({count});
  return tensorResult(call,
                      call.create<NonZeroOp>(*input, call.dimAttr(count)));
}

/// `tract_onnx_non_max_suppression(boxes, scores, max_output_boxes_per_class,
/// iou_threshold, score_threshold, center_point_box)`: the count of kept
/// boxes is a new symbol (tract names it `n`), bound when the model runs.
Result nonMaxSuppression(Invocation &call) {
  auto boxes = call.tensor("boxes");
  auto scores = call.tensor("scores");
  auto maxOutput = call.tensor("max_output_boxes_per_class");
  auto iou = call.tensor("iou_threshold");
  auto score = call.tensor("score_threshold");
  auto center = call.integer("center_point_box");
  if (!boxes || !scores || !maxOutput || !iou || !score || !center)
    return std::nullopt;
  if (*center != 0 && *center != 1)
    return call.error("center_point_box must be 0 or 1");
  Type type = Invocation::elementType(*boxes);
  TDim count = call.freshSymbol("n");
  return tensorResult(
      call, call.create<NonMaxSuppressionOp>(
                *boxes, call.castTo(*scores, type),
                call.castTo(*maxOutput, call.getBuilder().getI64Type()),
                call.castTo(*iou, type), call.castTo(*score, type),
                *center == 1, call.dimAttr(count)));
}

Result dynSlice(Invocation &call) {
  auto input = call.tensor("input");
  auto start = call.tensor("start");
  auto end = call.tensor("end");
  auto axis = call.integer("axis");
  auto len = call.dim("len");
  if (!input || !start || !end || !axis || !len)
    return std::nullopt;
  call.declareSymbols({*len});
  return tensorResult(call, call.create<DynSliceOp>(*input, *start, *end, *axis,
                                                    call.dimAttr(*len)));
}

/// `tract_onnx_roi_align`: tract.roi_align (tract has no such op:
/// tract-mlir writes it for ONNX's RoiAlign and reads it back).
Result roiAlign(Invocation &call) {
  auto input = call.tensor("input");
  auto rois = call.tensor("rois");
  auto batch = call.tensor("batch_indices");
  auto mode = call.string("mode");
  auto height = call.integer("output_height");
  auto width = call.integer("output_width");
  auto sampling = call.integer("sampling_ratio");
  auto scale = call.scalar("spatial_scale");
  auto transform = call.string("coordinate_transformation_mode");
  if (!input || !rois || !batch || !mode || !height || !width || !sampling ||
      !scale || !transform)
    return std::nullopt;
  if (*mode != "avg" && *mode != "max")
    return call.error("unknown mode '" + *mode + "'");
  if (*transform != "half_pixel" && *transform != "output_half_pixel")
    return call.error("unknown coordinate_transformation_mode '" + *transform +
                      "'");
  return tensorResult(call,
                      call.create<RoiAlignOp>(
                          *input, *rois,
                          call.castTo(*batch, call.getBuilder().getI64Type()),
                          *mode == "max", *height, *width, *sampling,
                          APFloat(*scale), *transform == "half_pixel"));
}

/// tract's grid sample (`tract_core_grid_sample`, formerly
/// `tract_onnx_grid_sample`): modes bilinear, nearest and bicubic.
Result gridSample(Invocation &call) {
  auto input = call.tensor("input");
  auto grid = call.tensor("grid");
  auto mode = call.string("mode");
  auto padding = call.string("padding_mode");
  auto align = call.logical("align_corners");
  if (!input || !grid || !mode || !padding || !align)
    return std::nullopt;
  std::optional<Interpolator> interpolator =
      llvm::StringSwitch<std::optional<Interpolator>>(*mode)
          .Case("nearest", Interpolator::Nearest)
          .Case("bilinear", Interpolator::Linear)
          .Case("bicubic", Interpolator::Cubic)
          .Default(std::nullopt);
  if (!interpolator)
    return call.error("unknown mode '" + *mode + "'");
  std::optional<GridPadding> paddingMode = symbolizeGridPadding(*padding);
  if (!paddingMode)
    return call.error("unknown padding_mode '" + *padding + "'");
  return tensorResult(call,
                      call.create<GridSampleOp>(*input, *grid, *interpolator,
                                                *paddingMode, *align));
}

Result resize(Invocation &call) {
  auto input = call.tensor("input");
  // Scales are numbers, or a tensor read when the model runs (tract-mlir's
  // form for scales that are graph inputs; sizes are then given).
  Value scaleValues;
  const NValue &scalesArg = call.args["scales"];
  if (scalesArg.kind == NValue::Kind::Tensor &&
      !scalesArg.tensor.getDefiningOp<ConstOp>())
    scaleValues = scalesArg.tensor;
  // So is the roi.
  Value roiValues;
  const NValue &roiArg = call.args["roi"];
  if (roiArg.kind == NValue::Kind::Tensor &&
      !roiArg.tensor.getDefiningOp<ConstOp>())
    roiValues = roiArg.tensor;
  auto scales = scaleValues
                    ? std::optional<SmallVector<double>>(SmallVector<double>{})
                    : numbers(call, "scales");
  auto sizesArg = call.dims("sizes");
  auto coord = call.string("coord_transformer");
  auto interp = call.string("interpolator");
  auto nearest = call.string("nearest_mode");
  auto cubic = call.scalar("cubic_coeff_a");
  auto exclude = call.logical("exclude_outside");
  auto roi = roiValues
                 ? std::optional<SmallVector<double>>(SmallVector<double>{})
                 : numbers(call, "roi");
  auto extrapolation = call.scalar("extrapolation_value");
  if (!input || !scales || !sizesArg || !coord || !interp || !nearest ||
      !cubic || !exclude || !roi || !extrapolation)
    return std::nullopt;
  auto coordTransform = symbolizeCoordTransform(*coord);
  if (!coordTransform)
    return call.error("unknown coord_transformer '" + *coord + "'");
  auto interpolator = symbolizeInterpolator(*interp);
  if (!interpolator)
    return call.error("unknown interpolator '" + *interp + "'");
  auto nearestMode = symbolizeNearestMode(*nearest);
  if (!nearestMode)
    return call.error("unknown nearest_mode '" + *nearest + "'");
  Shape shape = getShape(*input);
  SmallVector<TDim> sizes(*sizesArg);
  if (scaleValues && sizes.size() != shape.size())
    return call.error("scales read when the model runs need the sizes");
  if (sizes.empty()) {
    // tract's form: the output shape from the scales.
    if (scales->size() != shape.size())
      return call.error("scales must give every axis");
    for (auto [dim, scale] : llvm::zip(shape, *scales)) {
      std::optional<TDim> size = floorScaled(dim, scale);
      if (!size)
        return call.error("cannot scale the dim " + dim.toString() + " by " +
                          std::to_string(scale) +
                          ": a size is an integer from 0 to 2^31");
      sizes.push_back(*size);
    }
  }
  call.declareSymbols(sizes);
  return tensorResult(call,
                      call.create<ResizeOp>(
                          *input, scaleValues, roiValues, call.shapeAttr(sizes),
                          *coordTransform, *interpolator, *nearestMode,
                          ArrayRef<double>(*scales), APFloat(*cubic), *exclude,
                          ArrayRef<double>(*roi), APFloat(*extrapolation)));
}

/// A scalar argument as an attribute of `type`.
TypedAttr numberAttr(Type type, double value) {
  if (auto f = dyn_cast<FloatType>(type))
    return FloatAttr::get(f, value);
  return IntegerAttr::get(
      type, APInt(type.getIntOrFloatBitWidth(), int64_t(value), true, true));
}

Result pulseDelay(Invocation &call) {
  auto input = call.tensor("input");
  auto axis = call.integer("axis");
  auto delay = call.integer("delay");
  auto overlap = call.integer("overlap");
  if (!input || !axis || !delay || !overlap)
    return std::nullopt;
  return tensorResult(call,
                      call.create<DelayOp>(*input, *axis, *delay, *overlap));
}

Result pulsePad(Invocation &call) {
  auto input = call.tensor("input");
  auto axis = call.integer("axis");
  auto before = call.integer("before");
  auto after = call.dim("after");
  auto beginInput = call.integer("begin_input");
  auto endInput = call.dim("end_input");
  auto border = call.string("border");
  auto value = call.scalar("value");
  auto overlap = call.integer("overlap");
  if (!input || !axis || !before || !after || !beginInput || !endInput ||
      !border || !value || !overlap)
    return std::nullopt;
  std::optional<PadMode> mode =
      llvm::StringSwitch<std::optional<PadMode>>(*border)
          .Case("constant", PadMode::Constant)
          .Cases({"replicate", "replicated", "edge"}, PadMode::Edge)
          .Case("reflect", PadMode::Reflect)
          .Default(std::nullopt);
  if (!mode)
    return call.error("unsupported border '" + *border + "'");
  // The value is kept only when the document gives it.
  TypedAttr fill;
  if (llvm::any_of(call.expr.args,
                   [](const Argument &a) { return a.name == "value"; }))
    fill = numberAttr(Invocation::elementType(*input), *value);
  call.declareSymbols({*after, *endInput});
  return tensorResult(call, call.create<PulsePadOp>(
                                *input, *axis, *before, call.dimAttr(*after),
                                *beginInput, call.dimAttr(*endInput), *mode,
                                fill, *overlap));
}

Result pulseMask(Invocation &call) {
  auto input = call.tensor("input");
  auto axis = call.integer("axis");
  auto begin = call.integer("begin");
  auto end = call.dim("end");
  auto value = call.scalar("value");
  if (!input || !axis || !begin || !end || !value)
    return std::nullopt;
  call.declareSymbols({*end});
  return tensorResult(call,
                      call.create<PulseMaskOp>(
                          *input, *axis, *begin, call.dimAttr(*end),
                          numberAttr(Invocation::elementType(*input), *value)));
}

Result einsum(Invocation &call) {
  auto inputs = call.tensors("inputs");
  auto expr = call.string("expr");
  if (!inputs || !expr)
    return std::nullopt;
  return tensorResult(call, call.create<EinsumOp>(ValueRange(*inputs), *expr));
}

Result rmsNorm(Invocation &call) {
  auto input = call.tensor("input");
  auto axis = call.integer("axis");
  auto eps = call.scalar("eps");
  if (!input || !axis || !eps)
    return std::nullopt;
  return tensorResult(call,
                      call.create<RmsNormOp>(*input, *axis, APFloat(*eps)));
}

/// `tract_transformers_apply_rope(input, cos, sin)`: input * cos +
/// rotate_half(input) * sin.
Result applyRope(Invocation &call) {
  auto input = call.tensor("input");
  auto cos = call.tensor("cos");
  auto sin = call.tensor("sin");
  if (!input || !cos || !sin)
    return std::nullopt;
  return tensorResult(call, call.create<ApplyRopeOp>(*input, *cos, *sin));
}

/// `tract_transformers_dyn_kv_cache(input, name, axis, datum_type,
/// past_sequence_shape, input_sequence_shape)`: tract's
/// DynamicKeyValueCache, the past's length on `axis` of the past's shape.
Result dynKvCache(Invocation &call) {
  auto input = call.tensor("input");
  auto name = call.string("name");
  auto axis = call.integer("axis");
  auto past = call.dims("past_sequence_shape");
  if (!input || !name || !axis || !past)
    return std::nullopt;
  if (*axis < 0 || *axis >= static_cast<int64_t>(past->size()))
    return call.error("axis " + std::to_string(*axis) +
                      " is not an axis of the past's shape");
  return tensorResult(call,
                      call.create<DynKvCacheOp>(
                          *input, call.getBuilder().getStringAttr(*name), *axis,
                          DimAttr::get(call.getContext(), (*past)[*axis])));
}

/// `tract_core_stft(input, axis, frame, stride, window)`: the short-time
/// Fourier transform of a complex signal `[..., T, 2]` (real and imaginary
/// parts on the last axis) along `axis` (the T axis), in frames of `frame`
/// samples every `stride`, each weighted by the window (ones when none; a
/// shorter window is centred in the frame). The result is `[..., frames,
/// frame, 2]`: the frame axis after the time axis, then the frequencies.
/// It is a strided convolution whose kernels are the windowed DFT matrix
/// (output channel 2k + o, o the real or imaginary part), built at import.
Result stft(Invocation &call) {
  auto input = call.tensor("input");
  auto axis = call.integer("axis");
  auto frame = call.integer("frame");
  auto stride = call.integer("stride");
  if (!input || !axis || !frame || !stride)
    return std::nullopt;
  int64_t rank = Invocation::rank(*input);
  Shape shape = getShape(input->getType());
  if (rank < 2 || shape.back() != TDim(2))
    return call.error("the input must be complex: [..., 2]");
  if (*axis != rank - 2)
    return call.error("only the axis before the complex one is supported "
                      "(axis " + std::to_string(rank - 2) + ")");
  if (*frame < 1 || *stride < 1)
    return call.error("frame and stride must be positive");
  SmallVector<double> window(*frame, 1.0);
  if (call.args["window"].kind == NValue::Kind::Tensor) {
    auto given = call.tensor("window");
    if (!given)
      return std::nullopt;
    auto konst = given->getDefiningOp<ConstOp>();
    auto values =
        konst ? dyn_cast<DenseElementsAttr>(konst.getValue()) : nullptr;
    if (!values || Invocation::rank(*given) != 1 ||
        values.getNumElements() > *frame)
      return call.error("the window must be a constant of at most 'frame' "
                        "values");
    int64_t offset = (*frame - values.getNumElements()) / 2;
    window.assign(*frame, 0.0);
    for (auto [i, v] : llvm::enumerate(values.getValues<APFloat>()))
      window[offset + i] = v.convertToDouble();
  }
  Type elementType = Invocation::elementType(*input);
  if (!isa<FloatType>(elementType))
    return call.error("the input must be floats");
  // Kernel [2K, 2, frame]: re = Σ (re·cos + im·sin) w, im = Σ (im·cos −
  // re·sin) w, with the angle 2πkn/frame.
  int64_t k = *frame;
  SmallVector<float> kernel;
  for (int64_t f = 0; f < k; ++f)
    for (int64_t o = 0; o < 2; ++o)
      for (int64_t c = 0; c < 2; ++c)
        for (int64_t n = 0; n < k; ++n) {
          double angle = 2 * M_PI * double((f * n) % k) / double(k);
          double cosine = std::cos(angle), sine = std::sin(angle);
          double weight = o == 0 ? (c == 0 ? cosine : sine)
                                 : (c == 0 ? -sine : cosine);
          kernel.push_back(float(weight * window[n]));
        }
  auto kernelType =
      RankedTensorType::get({2 * k, 2, k}, call.getBuilder().getF32Type());
  Value filter = call.castTo(
      call.constant(DenseElementsAttr::get(kernelType, ArrayRef(kernel))),
      elementType);
  // [B..., T, 2] -> [N, 2, T]: the batch axes as one.
  Value x = *input;
  if (rank == 2)
    x = call.create<AddAxisOp>(x, uint64_t(0));
  else if (rank > 3)
    x = call.create<ReshapeOp>(
        x, uint64_t(0), uint64_t(rank - 2),
        call.shapeAttr({std::accumulate(shape.begin(), shape.end() - 2,
                                        TDim(1),
                                        [](TDim a, const TDim &b) {
                                          return a * b;
                                        })}));
  x = call.create<MoveAxisOp>(x, uint64_t(2), uint64_t(1));
  SmallVector<int64_t> strides{*stride}, none;
  Value y = call.create<ConvOp>(x, filter, Value(), uint64_t(1),
                                ArrayRef(strides), ArrayRef(none),
                                Padding::Valid, ArrayRef(none),
                                ArrayRef(none));
  // [N, 2K, F] -> [N, K, 2, F] -> [N, F, K, 2] -> [B..., F, K, 2].
  y = call.create<ReshapeOp>(y, uint64_t(1), uint64_t(1),
                             call.shapeAttr({TDim(k), TDim(2)}));
  y = call.create<MoveAxisOp>(y, uint64_t(3), uint64_t(1));
  if (rank == 2)
    y = call.create<RmAxisOp>(y, uint64_t(0));
  else if (rank > 3)
    y = call.create<ReshapeOp>(
        y, uint64_t(0), uint64_t(1),
        call.shapeAttr(SmallVector<TDim>(shape.begin(), shape.end() - 2)));
  return tensorResult(call, y);
}

/// `tract_core_gru_epilogue(x_h, r_h, h, hidden)`: the gates of a GRU step
/// (tract's GruEpilogue), `hidden` being the state's width.
Result gruEpilogue(Invocation &call) {
  auto x = call.tensor("x_h");
  auto r = call.tensor("r_h");
  auto h = call.tensor("h");
  auto hidden = call.integer("hidden");
  if (!x || !r || !h || !hidden)
    return std::nullopt;
  Shape state = getShape(*h);
  if (state.empty() || state.back() != TDim(*hidden))
    return call.error("h must have `hidden` = " + std::to_string(*hidden) +
                      " values on its last axis");
  return tensorResult(call, call.create<GruEpilogueOp>(*x, *r, *h));
}

/// `tract_transformers_gdn_recurrent(query, key, value, log_decay, beta,
/// initial_state)` (also by its older name `tract_qwen35_gdn_recurrent`):
/// the output and the final state.
Result gdnRecurrent(Invocation &call) {
  SmallVector<Value> operands;
  for (const char *name :
       {"query", "key", "value", "log_decay", "beta", "initial_state"}) {
    auto tensor = call.tensor(name);
    if (!tensor)
      return std::nullopt;
    operands.push_back(*tensor);
  }
  Operation *op = call.createOp<GdnRecurrentOp>(
      Type(), Type(), operands[0], operands[1], operands[2], operands[3],
      operands[4], operands[5]);
  if (!op)
    return call.error("invalid operands");
  return NValue::ofArray({NValue::ofTensor(op->getResult(0)),
                          NValue::ofTensor(op->getResult(1))},
                         NValue::Kind::Tuple);
}

/// `tract_transformers_causal_conv1d_update(input, weight, initial_state)`
/// (also `tract_qwen35_causal_conv1d_update`): the output and the final
/// state.
Result causalConv1dUpdate(Invocation &call) {
  auto input = call.tensor("input");
  auto weight = call.tensor("weight");
  auto state = call.tensor("initial_state");
  if (!input || !weight || !state)
    return std::nullopt;
  Operation *op = call.createOp<CausalConv1dUpdateOp>(Type(), Type(), *input,
                                                      *weight, *state);
  if (!op)
    return call.error("invalid operands");
  return NValue::ofArray({NValue::ofTensor(op->getResult(0)),
                          NValue::ofTensor(op->getResult(1))},
                         NValue::Kind::Tuple);
}

/// `tract_transformers_sdpa(q, k, v, mask, scale, is_causal, datum_type,
/// acc_datum_type)`: a mask is given as a tensor (the declared default, the
/// scalar 0.0, means none) and a scale of 0 means the default 1/sqrt(d).
/// The datum types are those of q, k and v and of the accumulation; the
/// lowering accumulates in f32 whatever they say.
Result sdpa(Invocation &call) {
  auto q = call.tensor("q");
  auto k = call.tensor("k");
  auto v = call.tensor("v");
  auto scale = call.scalar("scale");
  auto causal = call.logical("is_causal");
  auto datumType = call.string("datum_type");
  auto accDatumType = call.string("acc_datum_type");
  if (!q || !k || !v || !scale || !causal || !datumType || !accDatumType)
    return std::nullopt;
  for (const std::string &type : {*datumType, *accDatumType})
    if (type != "f32" && type != "f16")
      return call.error("datum type '" + type +
                        "' is not supported (f32 and f16 are)");
  Value mask;
  if (call.args["mask"].kind == NValue::Kind::Tensor) {
    auto given = call.tensor("mask");
    if (!given)
      return std::nullopt;
    mask = *given;
  }
  Builder b(call.getContext());
  FloatAttr scaleAttr =
      *scale == 0.0 ? FloatAttr() : b.getF64FloatAttr(*scale);
  return tensorResult(call, call.create<SdpaOp>(*q, *k, *v, mask, scaleAttr,
                                                b.getBoolAttr(*causal)));
}

/// `local_response_normalization`: `input / (bias + alpha * box(sqr(input),
/// size, normalize = true)) ^ beta`, the box centred (same padding) and
/// allowed over the channel axis, which becomes a spatial one.
Result localResponseNormalization(Invocation &call) {
  auto input = call.tensor("input");
  auto size = call.integers("size");
  auto alpha = call.scalar("alpha");
  auto beta = call.scalar("beta");
  auto bias = call.scalar("bias");
  if (!input || !size || !alpha || !beta || !bias)
    return std::nullopt;
  int64_t rank = Invocation::rank(*input);
  if (int64_t(size->size()) != rank || rank < 2 || (*size)[0] != 1)
    return call.error("size must give every axis, 1 on the batch axis");
  Value x = *input;
  Type type = Invocation::elementType(x);
  Value squared = call.create<AddAxisOp>(call.create<SquareOp>(x), int64_t(1));
  SmallVector<int64_t> kernel(size->begin() + 1, size->end());
  Value sum = call.create<SumPoolOp>(squared, ArrayRef(kernel), false, true,
                                     true, ArrayRef<int64_t>{},
                                     ArrayRef<int64_t>{}, Padding::SameUpper,
                                     ArrayRef<int64_t>{}, ArrayRef<int64_t>{});
  if (!sum)
    return call.error("invalid operands");
  sum = call.create<RmAxisOp>(sum, int64_t(1));
  Value sigma = call.create<AddOp>(
      call.create<MulOp>(sum, call.scalarConstant(type, *alpha, rank)),
      call.scalarConstant(type, *bias, rank));
  return tensorResult(
      call,
      call.create<DivOp>(x, call.create<PowOp>(sigma, call.scalarConstant(
                                                          type, *beta, rank))));
}

/// `nearest_upsample` and `multilinear_upsample` are resizes by integer
/// factors of the spatial axes, as tract reads them.
Result upsample(Invocation &call) {
  auto input = call.tensor("input");
  auto factor = call.integers("factor");
  if (!input || !factor)
    return std::nullopt;
  int64_t rank = Invocation::rank(*input);
  if (int64_t(factor->size()) + 2 != rank)
    return call.error("factor must give every spatial axis");
  CoordTransform coord = CoordTransform::Asymmetric;
  Interpolator interpolator = Interpolator::Nearest;
  if (call.getName() == "multilinear_upsample") {
    auto method = call.string("method");
    auto border = call.string("border");
    if (!method || !border)
      return std::nullopt;
    if (*border != "replicate")
      return call.error("border '" + *border +
                        "' is not supported (only 'replicate')");
    std::optional<CoordTransform> c =
        llvm::StringSwitch<std::optional<CoordTransform>>(*method)
            .Case("symmetric", CoordTransform::HalfPixel)
            .Case("asymmetric", CoordTransform::Asymmetric)
            .Case("aligned", CoordTransform::AlignCorners)
            .Default(std::nullopt);
    if (!c)
      return call.error("unknown method '" + *method + "'");
    coord = *c;
    interpolator = Interpolator::Linear;
  }
  Shape shape = getShape(*input);
  SmallVector<TDim> sizes(shape.begin(), shape.end());
  SmallVector<double> scales(2, 1.0);
  for (auto [i, f] : llvm::enumerate(*factor)) {
    if (f < 1)
      return call.error("factors must be positive");
    sizes[2 + i] = sizes[2 + i] * TDim(f);
    scales.push_back(double(f));
  }
  return tensorResult(call, call.create<ResizeOp>(
                                *input, Value(), Value(), call.shapeAttr(sizes),
                                coord, interpolator, NearestMode::Floor,
                                ArrayRef<double>(scales), APFloat(-0.75), false,
                                ArrayRef<double>{}, APFloat(0.0)));
}

/// `nearest_downsample` keeps every factor-th element; `area_downsample`
/// averages factor-sized blocks.
Result downsample(Invocation &call) {
  auto input = call.tensor("input");
  auto factor = call.integers("factor");
  if (!input || !factor)
    return std::nullopt;
  int64_t rank = Invocation::rank(*input);
  if (int64_t(factor->size()) + 2 != rank)
    return call.error("factor must give every spatial axis");
  if (llvm::any_of(*factor, [](int64_t f) { return f < 1; }))
    return call.error("factors must be positive");
  if (call.getName() == "area_downsample")
    return tensorResult(
        call, call.create<SumPoolOp>(*input, ArrayRef(*factor), false, true,
                                     false, ArrayRef(*factor),
                                     ArrayRef<int64_t>{}, Padding::Valid,
                                     ArrayRef<int64_t>{}, ArrayRef<int64_t>{}));
  Value v = *input;
  for (auto [i, f] : llvm::enumerate(*factor))
    if (v && f != 1)
      v = call.create<DownsampleOp>(v, int64_t(2 + i), f, int64_t(0));
  return tensorResult(call, v);
}

Result addN(Invocation &call) {
  auto values = call.tensors("x");
  if (!values)
    return std::nullopt;
  if (values->empty())
    return call.error("nothing to add");
  Value sum = (*values)[0];
  for (Value v : ArrayRef(*values).drop_front())
    sum = call.binary<AddOp>(sum, v);
  return tensorResult(call, sum);
}

Result copyN(Invocation &call) {
  auto x = call.tensor("x");
  auto times = call.integer("times");
  if (!x || !times)
    return std::nullopt;
  if (*times < 0)
    return call.error("times must not be negative");
  return NValue::ofArray(std::vector<NValue>(*times, NValue::ofTensor(*x)));
}

/// Operations of the specification the reader has no translation for.
Result unsupportedOp(Invocation &call) {
  StringRef why =
      llvm::StringSwitch<StringRef>(call.getName())
          .Cases({"argmax_pool", "sample", "desample", "max_pool_with_index"},
                 "the specification's window-relative indices have no tract "
                 "equivalent (tract_core_max_pool gives ONNX's indices)")
          .Case("update", "variables are not updated by tract")
          .Default("region-of-interest operations have no tract equivalent");
  return call.error("is not supported: " + why);
}

} // namespace

void mlir::tract::nnef::registerStandardOps(OpRegistry &registry) {
  registry.add(R"(
    fragment external<? = scalar>(shape: integer[]) -> (output: tensor<?>);
  )",
               external);
  registry.add(R"(
    fragment variable<? = scalar>(shape: integer[], label: string,
                                  datum_type: string = '')
      -> (output: tensor<?>);
  )",
               variable);
  registry.add(R"(
    fragment constant<? = scalar>(shape: integer[], value: ?[])
      -> (output: tensor<?>);
  )",
               constantOp);
  std::string unaries;
  for (const char *name : {"copy",
                           "neg",
                           "rcp",
                           "exp",
                           "log",
                           "log2",
                           "sin",
                           "cos",
                           "tan",
                           "asin",
                           "acos",
                           "atan",
                           "sinh",
                           "cosh",
                           "tanh",
                           "asinh",
                           "acosh",
                           "atanh",
                           "abs",
                           "sign",
                           "not",
                           "floor",
                           "ceil",
                           "round",
                           "sqr",
                           "sqrt",
                           "rsqr",
                           "rsqrt",
                           "relu",
                           "sigmoid",
                           "erf",
                           "silu",
                           "softplus",
                           "tract_core_erf",
                           "tract_core_silu",
                           "tract_core_round_even",
                           "tract_core_bitnot",
                           "tract_core_is_nan",
                           "tract_core_hard_swish",
                           "recip",
                           "square",
                           "tract_core_tan",
                           "tract_core_asin",
                           "tract_core_acos",
                           "tract_core_atan",
                           "tract_core_sinh",
                           "tract_core_cosh",
                           "tract_core_asinh",
                           "tract_core_acosh",
                           "tract_core_atanh"})
    unaries += std::string("fragment ") + name +
               "<?>(x: tensor<?>) -> (y: tensor<?>);\n";
  registry.add(unaries, unary);
  registry.add(R"(
    fragment tract_core_gelu_approx(input: tensor<scalar>,
                                    fast_impl: logical = false)
      -> (output: tensor<scalar>);
    fragment tract_transformers_gelu_approx(input: tensor<scalar>,
                                            fast_impl: logical = false)
      -> (output: tensor<scalar>);
    fragment tract_transformers_gelu_fast_approx(input: tensor<scalar>)
      -> (output: tensor<scalar>);
  )",
               geluApprox);
  registry.add(R"(
    fragment tract_transformers_scaled_masked_softmax(
        input: tensor<scalar>, mask: tensor<?>, scale: scalar,
        post_softmax_mask: logical = false) -> (output: tensor<scalar>);
  )",
               scaledMaskedSoftmax);
  registry.add(R"(
    fragment tract_core_clamped_swiglu(gate: tensor<scalar>,
                                       up: tensor<scalar>, alpha: scalar,
                                       limit: scalar)
      -> (output: tensor<scalar>);
  )",
               clampedSwiglu);
  registry.add(R"(
    fragment tract_transformers_silu(input: tensor<scalar>)
      -> (output: tensor<scalar>);
  )",
               transformersSilu);
  registry.add(R"(
    fragment elu(x: tensor<scalar>, alpha: scalar = 1.0) -> (y: tensor<scalar>);
    fragment leaky_relu(x: tensor<scalar>, alpha: scalar) -> (y: tensor<scalar>);
  )",
               alphaUnary);
  std::string binaries;
  for (const char *name : {"add",
                           "sub",
                           "mul",
                           "div",
                           "pow",
                           "min",
                           "max",
                           "lt",
                           "gt",
                           "le",
                           "ge",
                           "eq",
                           "ne",
                           "and",
                           "or",
                           "tract_core_rem",
                           "tract_core_xor",
                           "tract_core_bitand",
                           "tract_core_bitor",
                           "tract_core_bitxor",
                           "tract_core_shl",
                           "tract_core_shr",
                           "tract_shl",
                           "tract_shr"})
    binaries += std::string("fragment ") + name +
                "<?>(x: tensor<?>, y: tensor<?>) -> (z: tensor<?>);\n";
  registry.add(binaries, binary);
  registry.add(R"(
    fragment select<?>(condition: tensor<logical>, true_value: tensor<?>,
                       false_value: tensor<?>) -> (output: tensor<?>);
  )",
               selectOp);
  registry.add(R"(
    fragment clamp(x: tensor<scalar>, a: tensor<scalar>, b: tensor<scalar>)
      -> (y: tensor<scalar>);
  )",
               clamp);
  registry.add(R"(
    fragment sum_reduce(input: tensor<scalar>, axes: integer[],
                        normalize: logical = false) -> (output: tensor<scalar>);
    fragment mean_reduce(input: tensor<scalar>, axes: integer[])
      -> (output: tensor<scalar>);
    fragment max_reduce(input: tensor<scalar>, axes: integer[])
      -> (output: tensor<scalar>);
    fragment min_reduce(input: tensor<scalar>, axes: integer[])
      -> (output: tensor<scalar>);
    fragment argmax_reduce(input: tensor<scalar>, axes: integer[])
      -> (output: tensor<integer>);
    fragment argmin_reduce(input: tensor<scalar>, axes: integer[])
      -> (output: tensor<integer>);
    fragment any_reduce(input: tensor<logical>, axes: integer[])
      -> (output: tensor<logical>);
    fragment all_reduce(input: tensor<logical>, axes: integer[])
      -> (output: tensor<logical>);
    fragment tract_core_product_reduce(input: tensor<scalar>, axes: integer[])
      -> (output: tensor<scalar>);
    fragment tract_core_mean_of_squares_reduce(input: tensor<scalar>,
                                               axes: integer[])
      -> (output: tensor<scalar>);
    fragment tract_core_argmax_reduce_last(input: tensor<scalar>,
                                           axes: integer[])
      -> (output: tensor<integer>);
    fragment tract_core_argmin_reduce_last(input: tensor<scalar>,
                                           axes: integer[])
      -> (output: tensor<integer>);
  )",
               reduce);
  registry.add(R"(
    fragment reshape<?>(input: tensor<?>, shape: integer[],
                        axis_start: integer = 0, axis_count: integer = -1)
      -> (output: tensor<?>);
    fragment tract_core_reshape<?>(input: tensor<?>, shape: integer[],
                                   axis_start: integer = 0,
                                   axis_count: integer = -1)
      -> (output: tensor<?>);
  )",
               reshape);
  registry.add(R"(
    fragment squeeze<?>(input: tensor<?>, axes: integer[]) -> (output: tensor<?>);
    fragment unsqueeze<?>(input: tensor<?>, axes: integer[]) -> (output: tensor<?>);
  )",
               squeezeOrUnsqueeze);
  registry.add(R"(
    fragment transpose<?>(input: tensor<?>, axes: integer[]) -> (output: tensor<?>);
  )",
               transpose);
  registry.add(R"(
    fragment concat<?>(values: tensor<?>[], axis: integer) -> (value: tensor<?>);
  )",
               concat);
  registry.add(R"(
    fragment stack<?>(values: tensor<?>[], axis: integer) -> (value: tensor<?>);
  )",
               stack);
  registry.add(R"(
    fragment unstack<?>(value: tensor<?>, axis: integer) -> (values: tensor<?>[]);
  )",
               unstack);
  registry.add(R"(
    fragment split<?>(value: tensor<?>, axis: integer, ratios: integer[])
      -> (values: tensor<?>[]);
  )",
               split);
  registry.add(R"(
    fragment slice<?>(input: tensor<?>, axes: integer[], begin: integer[],
                      end: integer[], stride: integer[] = [])
      -> (output: tensor<?>);
  )",
               slice);
  registry.add(R"(
    fragment tile<?>(input: tensor<?>, repeats: integer[]) -> (output: tensor<?>);
  )",
               tile);
  registry.add(R"(
    fragment pad(input: tensor<scalar>, padding: (integer, integer)[],
                 border: string = 'constant', value: scalar = 0.0)
      -> (output: tensor<scalar>);
  )",
               pad);
  registry.add(R"(
    fragment conv(input: tensor<scalar>, filter: tensor<scalar>,
                  bias: tensor<scalar> = 0.0, border: string = 'constant',
                  padding: (integer, integer)[] = [], stride: integer[] = [],
                  dilation: integer[] = [], groups: integer = 1)
      -> (output: tensor<scalar>);
  )",
               conv);
  registry.add(R"(
    fragment max_pool(input: tensor<scalar>, size: integer[],
                      border: string = 'constant',
                      padding: (integer, integer)[] = [],
                      stride: integer[] = [], dilation: integer[] = [])
      -> (output: tensor<scalar>);
    fragment avg_pool(input: tensor<scalar>, size: integer[],
                      border: string = 'constant',
                      padding: (integer, integer)[] = [],
                      stride: integer[] = [], dilation: integer[] = [])
      -> (output: tensor<scalar>);
    fragment box(input: tensor<scalar>, size: integer[],
                 border: string = 'constant',
                 padding: (integer, integer)[] = [], stride: integer[] = [],
                 dilation: integer[] = [], normalize: logical = false)
      -> (output: tensor<scalar>);
  )",
               pool);
  registry.add(R"(
    fragment deconv(input: tensor<scalar>, filter: tensor<scalar>,
                    bias: tensor<scalar> = 0.0, border: string = 'constant',
                    padding: (integer, integer)[] = [], stride: integer[] = [],
                    dilation: integer[] = [], output_shape: integer[] = [],
                    groups: integer = 1)
      -> (output: tensor<scalar>);
  )",
               deconv);
  registry.add(R"(
    fragment debox(input: tensor<scalar>, size: integer[],
                   border: string = 'constant',
                   padding: (integer, integer)[] = [], stride: integer[] = [],
                   dilation: integer[] = [], output_shape: integer[] = [],
                   normalize: logical = false) -> (output: tensor<scalar>);
  )",
               debox);
  registry.add(R"(
    fragment matmul(A: tensor<scalar>, B: tensor<scalar>,
                    transposeA: logical = false, transposeB: logical = false)
      -> (C: tensor<scalar>);
  )",
               matmulOp);
  registry.add(R"(
    fragment linear(input: tensor<scalar>, filter: tensor<scalar>,
                    bias: tensor<scalar> = 0.0) -> (output: tensor<scalar>);
  )",
               linear);
  registry.add(R"(
    fragment softmax(x: tensor<scalar>, axes: integer[] = [1])
      -> (y: tensor<scalar>);
  )",
               softmax);
  registry.add(R"(
    fragment batch_normalization(input: tensor<scalar>, mean: tensor<scalar>,
                                 variance: tensor<scalar>,
                                 offset: tensor<scalar>, scale: tensor<scalar>,
                                 epsilon: scalar) -> (output: tensor<scalar>);
  )",
               batchNormalization);
  registry.add(R"(
    fragment local_response_normalization(input: tensor<scalar>,
                                          size: integer[], alpha: scalar = 1.0,
                                          beta: scalar = 0.5,
                                          bias: scalar = 1.0)
      -> (output: tensor<scalar>);
  )",
               localResponseNormalization);
  registry.add(R"(
    fragment nearest_upsample(input: tensor<scalar>, factor: integer[])
      -> (output: tensor<scalar>);
    fragment multilinear_upsample(input: tensor<scalar>, factor: integer[],
                                  method: string = 'symmetric',
                                  border: string = 'replicate')
      -> (output: tensor<scalar>);
  )",
               upsample);
  registry.add(R"(
    fragment nearest_downsample(input: tensor<scalar>, factor: integer[])
      -> (output: tensor<scalar>);
    fragment area_downsample(input: tensor<scalar>, factor: integer[])
      -> (output: tensor<scalar>);
  )",
               downsample);
  registry.add(R"(
    fragment add_n(x: tensor<scalar>[]) -> (y: tensor<scalar>);
  )",
               addN);
  registry.add(R"(
    fragment copy_n<?>(x: tensor<?>, times: integer) -> (y: tensor<?>[]);
  )",
               copyN);
  registry.add(R"(
    fragment argmax_pool(input: tensor<scalar>, size: integer[],
                         border: string = 'constant',
                         padding: (integer, integer)[] = [],
                         stride: integer[] = [], dilation: integer[] = [])
      -> (index: tensor<integer>);
    fragment sample(input: tensor<scalar>, index: tensor<integer>,
                    size: integer[], border: string = 'constant',
                    padding: (integer, integer)[] = [], stride: integer[] = [],
                    dilation: integer[] = []) -> (output: tensor<scalar>);
    fragment desample(input: tensor<scalar>, index: tensor<integer>,
                      size: integer[], border: string = 'constant',
                      padding: (integer, integer)[] = [],
                      stride: integer[] = [], dilation: integer[] = [],
                      output_shape: integer[] = []) -> (output: tensor<scalar>);
    fragment max_pool_with_index(input: tensor<scalar>, size: integer[],
                                 border: string = 'constant',
                                 padding: (integer, integer)[] = [],
                                 stride: integer[] = [],
                                 dilation: integer[] = [])
      -> (output: tensor<scalar>, index: tensor<integer>);
    fragment update<?>(variable: tensor<?>, value: tensor<?>)
      -> (result: tensor<?>);
    fragment avg_roi_pool(input: tensor<scalar>, rois: tensor<scalar>,
                          batch_index: tensor<integer>,
                          output_size: integer[]) -> (output: tensor<scalar>);
    fragment max_roi_pool(input: tensor<scalar>, rois: tensor<scalar>,
                          batch_index: tensor<integer>,
                          output_size: integer[]) -> (output: tensor<scalar>);
    fragment roi_resample(input: tensor<scalar>, rois: tensor<scalar>,
                          batch_index: tensor<integer>, output_size: integer[],
                          method: string = 'symmetric')
      -> (output: tensor<scalar>);
    fragment avg_roi_align(input: tensor<scalar>, rois: tensor<scalar>,
                           batch_index: tensor<integer>,
                           output_size: integer[], sampling_rate: integer[],
                           resize_method: string = 'symmetric')
      -> (output: tensor<scalar>);
    fragment max_roi_align(input: tensor<scalar>, rois: tensor<scalar>,
                           batch_index: tensor<integer>,
                           output_size: integer[], sampling_rate: integer[],
                           resize_method: string = 'symmetric')
      -> (output: tensor<scalar>);
  )",
               unsupportedOp);
  // The specification's compound operations, inlined.
  registry.add(R"(
    fragment rms_pool(input: tensor<scalar>, size: integer[],
                      border: string = 'constant',
                      padding: (integer, integer)[] = [],
                      stride: integer[] = [], dilation: integer[] = [])
      -> (output: tensor<scalar>)
    {
      output = sqrt(avg_pool(sqr(input), size = size, border = border,
                             padding = padding, stride = stride,
                             dilation = dilation));
    }
    fragment l1_normalization(input: tensor<scalar>, axes: integer[],
                              bias: scalar = 0.0, epsilon: scalar = 0.0)
      -> (output: tensor<scalar>)
    {
      sigma = bias + sum_reduce(abs(input), axes = axes);
      output = input / max(sigma, epsilon);
    }
    fragment l2_normalization(input: tensor<scalar>, axes: integer[],
                              bias: scalar = 0.0, epsilon: scalar = 0.0)
      -> (output: tensor<scalar>)
    {
      sigma = sqrt(bias + sum_reduce(sqr(input), axes = axes));
      output = input / max(sigma, epsilon);
    }
    fragment moments(input: tensor<scalar>, axes: integer[])
      -> (mean: tensor<scalar>, variance: tensor<scalar>)
    {
      mean = mean_reduce(input, axes = axes);
      variance = mean_reduce(sqr(input - mean), axes = axes);
    }
    fragment local_mean_normalization(input: tensor<scalar>, size: integer[])
      -> (output: tensor<scalar>)
    {
      mean = box(input, size = size, normalize = true);
      output = input - mean;
    }
    fragment local_variance_normalization(input: tensor<scalar>,
                                          size: integer[], bias: scalar = 0.0,
                                          epsilon: scalar = 0.0)
      -> (output: tensor<scalar>)
    {
      sigma = sqrt(box(sqr(input), size = size, normalize = true));
      output = input / max(sigma + bias, epsilon);
    }
    fragment local_contrast_normalization(input: tensor<scalar>,
                                          size: integer[], bias: scalar = 0.0,
                                          epsilon: scalar = 0.0)
      -> (output: tensor<scalar>)
    {
      centered = local_mean_normalization(input, size = size);
      output = local_variance_normalization(centered, size = size,
                                            bias = bias, epsilon = epsilon);
    }
    fragment prelu(x: tensor<scalar>, alpha: tensor<scalar>)
      -> (y: tensor<scalar>)
    {
      y = select(x < 0.0, alpha * x, x);
    }
    fragment softabs(x: tensor<scalar>, epsilon: scalar)
      -> (y: tensor<scalar>)
    {
      y = sqrt(sqr(x) + epsilon);
    }
    fragment separable_conv(input: tensor<scalar>,
                            plane_filter: tensor<scalar>,
                            point_filter: tensor<scalar>,
                            bias: tensor<scalar> = 0.0,
                            border: string = 'constant',
                            padding: (integer, integer)[] = [],
                            stride: integer[] = [], dilation: integer[] = [],
                            groups: integer = 1)
      -> (output: tensor<scalar>)
    {
      filtered = conv(input, plane_filter, border = border, padding = padding,
                      stride = stride, dilation = dilation, groups = 0);
      output = conv(filtered, point_filter, bias, groups = groups);
    }
    fragment linear_quantize(x: tensor<scalar>, min: tensor<scalar>,
                             max: tensor<scalar>, bits: integer)
      -> (y: tensor<scalar>)
    {
      z = clamp(x, min, max);
      r = (2.0 ^ bits - 1.0) / (max - min);
      y = round((z - min) * r) / r + min;
    }
    fragment logarithmic_quantize(x: tensor<scalar>, max: tensor<scalar>,
                                  bits: integer) -> (y: tensor<scalar>)
    {
      m = ceil(log2(max));
      r = 2.0 ^ bits - 1.0;
      q = round(clamp(log2(abs(x)), m - r, m));
      y = sign(x) * 2.0 ^ q;
    }
  )",
               nullptr);
}

void mlir::tract::nnef::registerTractOps(OpRegistry &registry) {
  registry.add(R"(
    fragment tract_core_external(shape: integer[], datum_type: string = 'f32')
      -> (output: tensor<?>);
  )",
               external);
  registry.add(R"(
    fragment tract_core_cast(input: tensor<?>, to: string = '')
      -> (output: tensor<?>);
  )",
               castOp);
  registry.add(R"(
    fragment tract_core_gather(input: tensor<?>, indices: tensor<integer>,
                               axis: integer) -> (output: tensor<?>);
  )",
               gather);
  registry.add(R"(
    fragment tract_core_is_inf(x: tensor<scalar>, detect_positive: logical = true,
                               detect_negative: logical = true)
      -> (y: tensor<logical>);
  )",
               isInf);
  registry.add(R"(
    fragment tract_core_gather_elements(input: tensor<?>,
                                        indices: tensor<integer>,
                                        axis: integer) -> (output: tensor<?>);
  )",
               gatherElements);
  registry.add(R"(
    fragment tract_core_gather_nd(input: tensor<?>, indices: tensor<integer>,
                                  batch_dims: integer = 0)
      -> (output: tensor<?>);
  )",
               gatherNd);
  registry.add(R"(
    fragment tract_core_scatter_elements(input: tensor<?>,
                                         indices: tensor<integer>,
                                         updates: tensor<?>, axis: integer,
                                         reduction: string = 'none')
      -> (output: tensor<?>);
    fragment tract_core_scatter_nd(input: tensor<?>, indices: tensor<integer>,
                                   updates: tensor<?>,
                                   reduction: string = 'none')
      -> (output: tensor<?>);
  )",
               scatter);
  registry.add(R"(
    fragment tract_core_trilu(input: tensor<?>, k: tensor<integer>,
                              upper: logical) -> (output: tensor<?>);
  )",
               trilu);
  registry.add(R"(
    fragment tract_core_one_hot(input: tensor<integer>, axis: integer,
                                dim: integer, value_off: scalar = 0.0,
                                value_on: scalar = 1.0,
                                datum_type: string = 'f32')
      -> (output: tensor<?>);
  )",
               oneHot);
  registry.add(R"(
    fragment tract_core_shape_of(input: tensor<?>) -> (output: tensor<integer>);
  )",
               shapeOf);
  registry.add(R"(
    fragment tract_onnx_random(like: tensor<?>, distribution: string,
                               a: scalar, b: scalar, seed: integer,
                               datum_type: string = 'f32')
      -> (output: tensor<scalar>);
  )",
               randomDraws);
  registry.add(R"(
    fragment tract_onnx_bind_dims(values: tensor<integer>, dims: integer[])
      -> (output: tensor<integer>);
  )",
               bindValueDims);
  registry.add(R"(
    fragment tract_core_range<?>(start: tensor<?>, end: tensor<?>,
                                 step: tensor<?>, len: integer = -1)
      -> (output: tensor<?>);
  )",
               range);
  registry.add(R"(
    fragment tract_core_scan(body: string,
                             scan: (string, tensor<scalar>, integer, integer)[],
                             full: (string, tensor<scalar>)[],
                             state: (string, tensor<scalar>, string)[],
                             output: (string, string, integer, integer)[],
                             seq_length: integer = -1, skip: integer = 0,
                             reset_every_turn: logical = false,
                             external_state: logical = false)
      -> (outputs: tensor<scalar>[]);
  )",
               scanOp);
  registry.add(R"(
    fragment tract_core_if(cond: tensor<logical>, then_branch: string,
                           else_branch: string, inputs: tensor<?>[] = [])
      -> (outputs: tensor<?>[]);
  )",
               ifOp);
  registry.add(R"(
    fragment tract_core_downsample<?>(input: tensor<?>, axis: integer,
                                      stride: integer, modulo: integer = 0)
      -> (output: tensor<?>);
  )",
               downsampleAxis);
  registry.add(R"(
    fragment tract_pulse_delay<?>(input: tensor<?>, axis: integer,
                                  delay: integer, overlap: integer = 0)
      -> (output: tensor<?>);
  )",
               pulseDelay);
  registry.add(R"(
    fragment tract_pulse_pulse_pad<?>(input: tensor<?>, axis: integer,
                                      before: integer, after: integer,
                                      begin_input: integer, end_input: integer,
                                      border: string = 'constant',
                                      value: scalar = 0.0, overlap: integer = 0)
      -> (output: tensor<?>);
    fragment tract_pulse_pad<?>(input: tensor<?>, axis: integer,
                                before: integer, after: integer,
                                begin_input: integer, end_input: integer,
                                border: string = 'constant',
                                value: scalar = 0.0, overlap: integer = 0)
      -> (output: tensor<?>);
  )",
               pulsePad);
  registry.add(R"(
    fragment tract_pulse_mask<?>(input: tensor<?>, axis: integer,
                                 begin: integer, end: integer,
                                 value: scalar = 0.0) -> (output: tensor<?>);
  )",
               pulseMask);
  registry.add(R"(
    fragment tract_core_topk<?>(input: tensor<?>, k: tensor<integer>,
                                axis: integer, largest: logical = true,
                                len: integer = -1)
      -> (values: tensor<?>, indices: tensor<integer>);
  )",
               topK);
  registry.add(R"(
    fragment tract_onnx_non_zero<?>(input: tensor<?>, count_symbol: string)
      -> (output: tensor<integer>);
  )",
               nonZero);
  registry.add(R"(
    fragment tract_onnx_unique<?>(input: tensor<?>, sorted: logical = true,
                                  count_symbol: string)
      -> (values: tensor<?>, indices: tensor<integer>,
          inverse: tensor<integer>, counts: tensor<integer>);
  )",
               unique);
  // Without a score threshold, every score is above -inf.
  registry.add(R"(
    fragment tract_onnx_non_max_suppression(
        boxes: tensor<scalar>, scores: tensor<scalar>,
        max_output_boxes_per_class: tensor<integer> = 0,
        iou_threshold: tensor<scalar> = 0.0,
        score_threshold: tensor<scalar> = -1.0 / 0.0,
        center_point_box: integer = 0) -> (output: tensor<integer>);
  )",
               nonMaxSuppression);
  registry.add(R"(
    fragment tract_core_dyn_slice<?>(input: tensor<?>, start: tensor<integer>,
                                     end: tensor<integer>, axis: integer,
                                     len: integer) -> (output: tensor<?>);
  )",
               dynSlice);
  registry.add(R"(
    fragment tract_onnx_roi_align(
        input: tensor<scalar>, rois: tensor<scalar>,
        batch_indices: tensor<integer>, mode: string = 'avg',
        output_height: integer = 1, output_width: integer = 1,
        sampling_ratio: integer = 0, spatial_scale: scalar = 1.0,
        coordinate_transformation_mode: string = 'half_pixel')
      -> (output: tensor<scalar>);
  )",
               roiAlign);
  for (const char *name : {"tract_core_grid_sample", "tract_onnx_grid_sample"})
    registry.add(std::string("fragment ") + name + R"((
        input: tensor<scalar>, grid: tensor<scalar>,
        mode: string = 'bilinear', padding_mode: string = 'zeros',
        align_corners: logical = false) -> (output: tensor<scalar>);
    )",
                 gridSample);
  registry.add(R"(
    fragment tract_core_resize(input: tensor<scalar>, scales: scalar[] = [],
                               sizes: integer[] = [],
                               coord_transformer: string = 'half_pixel',
                               interpolator: string = 'nearest',
                               nearest_mode: string = 'floor',
                               cubic_coeff_a: scalar = -0.75,
                               exclude_outside: logical = false,
                               roi: scalar[] = [],
                               extrapolation_value: scalar = 0.0)
      -> (output: tensor<scalar>);
  )",
               resize);
  registry.add(R"(
    fragment tract_core_max_pool(input: tensor<scalar>, size: integer[],
                                 border: string = 'constant',
                                 padding: (integer, integer)[] = [],
                                 stride: integer[] = [],
                                 dilation: integer[] = [],
                                 ceil_mode: logical = false,
                                 with_index: logical = false)
      -> (output: tensor<scalar>, index: tensor<integer>);
    fragment tract_core_sum_pool(input: tensor<scalar>, size: integer[],
                                 border: string = 'constant',
                                 padding: (integer, integer)[] = [],
                                 stride: integer[] = [],
                                 dilation: integer[] = [],
                                 normalize: logical = false,
                                 ceil_mode: logical = false)
      -> (output: tensor<scalar>);
  )",
               pool);
  registry.add(R"(
    fragment tract_core_einsum(inputs: tensor<?>[], expr: string,
                               acc: string = 'f32', output: string = '')
      -> (output: tensor<?>);
  )",
               einsum);
  registry.add(R"(
    fragment tract_core_softmax(x: tensor<scalar>, axes: integer[],
                                exp: string = '') -> (y: tensor<scalar>);
  )",
               softmax);
  registry.add(R"(
    fragment tract_core_log_softmax(x: tensor<scalar>, axes: integer[])
      -> (y: tensor<scalar>);
  )",
               softmax);
  registry.add(R"(
    fragment tract_core_broadcast<?>(input: tensor<?>, shape: integer[])
      -> (output: tensor<?>);
  )",
               broadcast);
  registry.add(R"(
    fragment tract_core_stft(input: tensor<scalar>, axis: integer,
                             frame: integer, stride: integer,
                             window: tensor<scalar> = 0.0)
      -> (output: tensor<scalar>);
  )",
               stft);
  registry.add(R"(
    fragment tract_core_gru_epilogue(x_h: tensor<scalar>, r_h: tensor<scalar>,
                                     h: tensor<scalar>, hidden: integer)
      -> (output: tensor<scalar>);
  )",
               gruEpilogue);
  registry.add(R"(
    fragment tract_transformers_sdpa(q: tensor<scalar>, k: tensor<scalar>,
                                     v: tensor<scalar>,
                                     mask: tensor<?> = 0.0,
                                     scale: scalar = 0.0,
                                     is_causal: logical = false,
                                     datum_type: string = 'f32',
                                     acc_datum_type: string = 'f32')
      -> (output: tensor<scalar>);
  )",
               sdpa);
  registry.add(R"(
    fragment tract_transformers_gdn_recurrent(
        query: tensor<scalar>, key: tensor<scalar>, value: tensor<scalar>,
        log_decay: tensor<scalar>, beta: tensor<scalar>,
        initial_state: tensor<scalar>)
      -> (output: tensor<scalar>, final_state: tensor<scalar>);
    fragment tract_qwen35_gdn_recurrent(
        query: tensor<scalar>, key: tensor<scalar>, value: tensor<scalar>,
        log_decay: tensor<scalar>, beta: tensor<scalar>,
        initial_state: tensor<scalar>)
      -> (output: tensor<scalar>, final_state: tensor<scalar>);
  )",
               gdnRecurrent);
  registry.add(R"(
    fragment tract_transformers_causal_conv1d_update(
        input: tensor<scalar>, weight: tensor<scalar>,
        initial_state: tensor<scalar>)
      -> (output: tensor<scalar>, final_state: tensor<scalar>);
    fragment tract_qwen35_causal_conv1d_update(
        input: tensor<scalar>, weight: tensor<scalar>,
        initial_state: tensor<scalar>)
      -> (output: tensor<scalar>, final_state: tensor<scalar>);
  )",
               causalConv1dUpdate);
  registry.add(R"(
    fragment tract_core_rms_norm(input: tensor<scalar>, axis: integer,
                                 eps: scalar = 1e-6) -> (output: tensor<scalar>);
    fragment tract_transformers_rms_norm(input: tensor<scalar>, axis: integer,
                                         eps: scalar = 1e-6)
      -> (output: tensor<scalar>);
  )",
               rmsNorm);
  registry.add(R"(
    fragment tract_transformers_apply_rope(input: tensor<scalar>,
                                           cos: tensor<scalar>,
                                           sin: tensor<scalar>)
      -> (output: tensor<scalar>);
  )",
               applyRope);
  registry.add(R"(
    fragment tract_transformers_dyn_kv_cache(input: tensor<scalar>,
                                             name: string, axis: integer,
                                             datum_type: string,
                                             past_sequence_shape: integer[],
                                             input_sequence_shape: integer[])
      -> (output: tensor<scalar>);
  )",
               dynKvCache);
}
