//===- EntryChecks.cpp - the tract-entry-checks pass ----------------------===//
//
// Compiled code is called with memref descriptors that carry any sizes, by
// the JIT or by C code linking an AOT object. A lowered public function is
// therefore split, from the facts tract-lower-to-linalg recorded on it
// (EntryFacts.h): its body becomes private, and the public function checks
// every input dim against its expression, every assertion and scenario of
// the model, and the sizes the body will compute, then calls the body. A
// failed check records a message with the runtime's `tract_set_error` and
// returns a status, never running the body.
//
// The public function reads every dim of its inputs, binds the symbols as
// the body does, then evaluates one condition per check. The checks run in
// order (the symbols under the ceiling on a dim, each input's dims, the
// assertions, the scenarios, then the intermediate dims and sizes) and only
// the first that fails reports (`ok` before it, not after), so a message
// names the first problem, never a consequence of it. The body runs only
// when all hold. The checks compute in i64 whatever the width of index (32
// bits on 32-bit targets): their ranges and overflow checks are int64's.
//
//===----------------------------------------------------------------------===//

#include "conversion/EntryFacts.h"
#include "conversion/LoweringUtils.h"
#include "target/Passes.h"

#include "dialects/tract/TractDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SmallVectorExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTENTRYCHECKS
#include "target/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;
using namespace mlir::tract;

namespace {

/// The runtime's `tract_status tract_set_error(const char *format, ...)`.
constexpr llvm::StringLiteral kSetErrorName = "tract_set_error";
/// The runtime's `tract_status tract_fail(const char *format, ...)`, which
/// compiled code calls when a check inside the body fails, and
/// `int32_t tract_take_failure(void)`, which tells whether it did.
constexpr llvm::StringLiteral kFailName = "tract_fail";
constexpr llvm::StringLiteral kTakeFailureName = "tract_take_failure";
/// The runtime's `int64_t tract_memory_limit(void)`: the most bytes one
/// tensor may take.
constexpr llvm::StringLiteral kMemoryLimitName = "tract_memory_limit";
/// tract_status values.
constexpr int32_t kStatusOk = 0;
constexpr int32_t kStatusError = 1;

/// `type` with every dim dynamic: the public function reads the sizes the
/// caller gives instead of assuming them.
Type withDynamicDims(Type type) {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return type;
  return RankedTensorType::get(
      SmallVector<int64_t>(tensorType.getRank(), ShapedType::kDynamic),
      tensorType.getElementType());
}

/// The runtime function `name` of `type`, declared in `module` once.
LLVM::LLVMFuncOp getRuntimeFunction(ModuleOp module, Location loc,
                                    StringRef name,
                                    LLVM::LLVMFunctionType type) {
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return existing;
  OpBuilder moduleBuilder = OpBuilder::atBlockBegin(module.getBody());
  return LLVM::LLVMFuncOp::create(moduleBuilder, loc, name, type);
}

/// `!value` for an i1.
Value negate(OpBuilder &builder, Location loc, Value value) {
  return arith::XOrIOp::create(
      builder, loc, value,
      arith::ConstantIntOp::create(builder, loc, builder.getI1Type(), 1));
}

/// Emits checks one after the other at the builder's point; the first that
/// fails calls tract_set_error with its message.
class CheckSequence {
public:
  CheckSequence(OpBuilder &builder, Location loc, func::FuncOp entry)
      : builder(builder), loc(loc), entry(entry) {}

  /// Checks that `holds`; `format` is a printf format with one `%lld` per
  /// value of `values` (index values).
  void check(Value holds, const std::string &format, ValueRange values);

  /// Whether every check held; null if there was none.
  Value allHold() const { return ok; }

private:
  LLVM::LLVMFuncOp getSetError();
  LLVM::GlobalOp addMessage(const std::string &format);

  OpBuilder &builder;
  Location loc;
  func::FuncOp entry;
  Value ok;
  unsigned count = 0;
};

LLVM::LLVMFuncOp CheckSequence::getSetError() {
  MLIRContext *context = builder.getContext();
  return getRuntimeFunction(
      entry->getParentOfType<ModuleOp>(), loc, kSetErrorName,
      LLVM::LLVMFunctionType::get(IntegerType::get(context, 32),
                                  {LLVM::LLVMPointerType::get(context)},
                                  /*isVarArg=*/true));
}

LLVM::GlobalOp CheckSequence::addMessage(const std::string &format) {
  OpBuilder moduleBuilder(entry);
  std::string name =
      (entry.getSymName() + ".check" + llvm::Twine(count++)).str();
  // With its terminating NUL, as C reads it.
  StringRef text(format.c_str(), format.size() + 1);
  auto type = LLVM::LLVMArrayType::get(builder.getI8Type(), text.size());
  return LLVM::GlobalOp::create(moduleBuilder, loc, type, /*isConstant=*/true,
                                LLVM::Linkage::Internal, name,
                                builder.getStringAttr(text));
}

void CheckSequence::check(Value holds, const std::string &format,
                          ValueRange values) {
  Value failsFirst;
  if (!ok) {
    failsFirst = negate(builder, loc, holds);
    ok = holds;
  } else {
    Value stillOk = arith::AndIOp::create(builder, loc, ok, holds);
    failsFirst = arith::XOrIOp::create(builder, loc, ok, stillOk);
    ok = stillOk;
  }
  LLVM::GlobalOp message = addMessage(format);
  LLVM::LLVMFuncOp setError = getSetError();
  auto report = scf::IfOp::create(builder, loc, failsFirst,
                                  /*withElseRegion=*/false);
  OpBuilder reportBuilder = report.getThenBodyBuilder();
  SmallVector<Value> arguments = {
      LLVM::AddressOfOp::create(reportBuilder, loc, message)};
  for (Value value : values)
    arguments.push_back(
        value.getType().isIndex()
            ? arith::IndexCastOp::create(reportBuilder, loc,
                                         reportBuilder.getI64Type(), value)
                  .getResult()
            : value);
  LLVM::CallOp::create(reportBuilder, loc, setError, arguments);
}

/// The range of a dim's value, and of every sum and product on the way,
/// when each symbol is within the ceiling: invalid if one could leave int64.
struct DimRange {
  int64_t low = 0, high = 0;
  bool valid = false;
  explicit operator bool() const { return valid; }
};

struct RangeAlgebra : DimAlgebra<DimRange> {
  static DimRange of(std::optional<int64_t> low, std::optional<int64_t> high) {
    if (!low || !high)
      return {};
    return {*low, *high, true};
  }
  DimRange constant(int64_t value) override { return {value, value, true}; }
  DimRange symbol(StringRef) override {
    return {-kDimCeiling, kDimCeiling, true};
  }
  DimRange add(DimRange lhs, DimRange rhs) override {
    return of(llvm::checkedAdd(lhs.low, rhs.low),
              llvm::checkedAdd(lhs.high, rhs.high));
  }
  DimRange mul(DimRange lhs, DimRange rhs) override {
    DimRange result;
    for (int64_t a : {lhs.low, lhs.high})
      for (int64_t b : {rhs.low, rhs.high}) {
        std::optional<int64_t> product = llvm::checkedMul(a, b);
        if (!product)
          return {};
        result = !result ? DimRange{*product, *product, true}
                         : DimRange{std::min(result.low, *product),
                                    std::max(result.high, *product), true};
      }
    return result;
  }
  DimRange floorDiv(DimRange value, int64_t divisor) override {
    return {llvm::divideFloorSigned(value.low, divisor),
            llvm::divideFloorSigned(value.high, divisor), true};
  }
  DimRange min(DimRange lhs, DimRange rhs) override {
    return {std::min(lhs.low, rhs.low), std::min(lhs.high, rhs.high), true};
  }
  DimRange max(DimRange lhs, DimRange rhs) override {
    return {std::max(lhs.low, rhs.low), std::max(lhs.high, rhs.high), true};
  }
  DimRange broadcast(DimRange lhs, DimRange rhs) override {
    return {std::min(lhs.low, rhs.low), std::max(lhs.high, rhs.high), true};
  }
};

/// The range of `dim` for symbols within the ceiling; invalid if its
/// arithmetic could overflow.
DimRange rangeOf(const TDim &dim) {
  RangeAlgebra algebra;
  return buildDim(dim, algebra);
}

/// A scenario of the model (`tg: S == 1`): the inputs must fit one of them.
struct Scenario {
  std::string name;
  std::vector<std::string> assertions;
};

/// Turns `func` (lowered: plain signature, `tract.input_names` set) into
/// `<name>.body`, private, and adds in its place a public `<name>` that
/// takes the same tensors with every dim dynamic and checks, in order: that
/// every symbol the inputs give is at most kDimCeiling, their dims against
/// `inputShapes` (the tract shapes of the arguments), the module's
/// `assertions` over the symbols the inputs bind, that they fit one of the
/// `scenarios`, then the `guards`. Arithmetic that could wrap for symbols
/// under the ceiling is checked for overflow. It returns the body's results
/// (every dim dynamic; empty tensors if a check failed) followed by an i32
/// status: 0 (TRACT_OK), or 1 (TRACT_ERROR) with the message of the first
/// failed check in the runtime's `tract_last_error()`. The status of a
/// body that checks what it does (it calls `tract_fail`), or that
/// `bodyMayFail` says will (GPU launches), comes from `tract_take_failure`.
LogicalResult addEntryChecks(func::FuncOp func, ArrayRef<Shape> inputShapes,
                             ArrayRef<std::string> assertions,
                             ArrayRef<Scenario> scenarios,
                             const BodyGuards &guards, bool bodyMayFail) {
  MLIRContext *context = func.getContext();
  auto module = func->getParentOfType<ModuleOp>();
  Location loc = func.getLoc();
  FunctionType bodyType = func.getFunctionType();
  if (inputShapes.size() != bodyType.getNumInputs())
    return func.emitError() << "expected the shapes of its "
                            << bodyType.getNumInputs() << " inputs";
  for (Type type : bodyType.getResults())
    if (!isa<RankedTensorType>(type))
      return func.emitError() << "cannot check the inputs of a function that "
                                 "returns "
                              << type;

  // The body keeps the code under a private name; the checking function
  // takes its place, its attributes (names, C interface) and argument
  // attributes.
  std::string name = func.getSymName().str();
  std::string bodyName = name + ".body";
  SymbolTable symbolTable(module);
  if (symbolTable.lookup(bodyName))
    return func.emitError()
           << "cannot name its body '" << bodyName << "': the symbol exists";
  if (failed(symbolTable.rename(func, bodyName)))
    return failure();
  auto inputNames = func->getAttrOfType<ArrayAttr>("tract.input_names");
  auto inputName = [&](unsigned i) -> std::string {
    if (inputNames && i < inputNames.size())
      if (auto text = dyn_cast<StringAttr>(inputNames[i]);
          text && !text.getValue().empty())
        return text.str();
    return "input_" + std::to_string(i);
  };

  OpBuilder builder(context);
  builder.setInsertionPointAfter(func);
  SmallVector<Type> inputTypes =
      llvm::map_to_vector(bodyType.getInputs(), withDynamicDims);
  SmallVector<Type> resultTypes =
      llvm::map_to_vector(bodyType.getResults(), withDynamicDims);
  SmallVector<Type> entryResultTypes(resultTypes);
  entryResultTypes.push_back(builder.getI32Type());
  auto entry = func::FuncOp::create(
      builder, loc, name,
      builder.getFunctionType(inputTypes, entryResultTypes));
  symbolTable.insert(entry);
  entry->setDiscardableAttrs(func->getDiscardableAttrDictionary());
  func->setDiscardableAttrs(ArrayRef<NamedAttribute>{});
  if (ArrayAttr argAttrs = func.getArgAttrsAttr())
    entry.setArgAttrsAttr(argAttrs);
  func.setPrivate();
  func->setAttr("llvm.linkage",
                LLVM::LinkageAttr::get(context, LLVM::Linkage::Internal));

  Block *block = entry.addEntryBlock();
  builder.setInsertionPointToStart(block);
  // Every dim of every input, as the caller gave it, in i64.
  Type i64 = builder.getI64Type();
  SmallVector<SmallVector<Value>> sizes(block->getNumArguments());
  for (BlockArgument argument : block->getArguments()) {
    auto type = dyn_cast<RankedTensorType>(argument.getType());
    if (!type)
      continue;
    if (type.getRank() !=
        static_cast<int64_t>(inputShapes[argument.getArgNumber()].size()))
      return func.emitError()
             << "input " << argument.getArgNumber() << " has rank "
             << type.getRank() << ", its tract shape rank "
             << inputShapes[argument.getArgNumber()].size();
    for (int64_t axis = 0; axis < type.getRank(); ++axis)
      sizes[argument.getArgNumber()].push_back(arith::IndexCastOp::create(
          builder, loc, i64,
          tensor::DimOp::create(builder, loc, argument, axis)));
  }
  // The symbols, as the body binds them.
  llvm::StringMap<Value> bound;
  SmallVector<SymbolSource> sources = findSymbolSources(inputShapes);
  for (const SymbolSource &source : sources)
    bound[source.form.symbol] = readSymbol(
        builder, loc, sizes[source.argument][source.axis], source.form);
  auto isBound = [&](const std::string &symbol) { return bound.count(symbol); };
  // ` (S=%lld, P=%lld)` for the values of `names`, which go to `values`.
  auto symbolValues = [&](const std::set<std::string> &names,
                          SmallVectorImpl<Value> &values) -> std::string {
    if (names.empty())
      return "";
    SmallVector<std::string> parts;
    for (const std::string &symbol : names) {
      parts.push_back(symbol + "=%lld");
      values.push_back(bound.lookup(symbol));
    }
    return " (" + llvm::join(parts, ", ") + ")";
  };
  Value zero = arith::ConstantIntOp::create(builder, loc, i64, 0);

  CheckSequence checks(builder, loc, entry);
  // The value of `dim` from the bound symbols. Under the ceiling checked
  // first, most dims cannot overflow; where one could (a product of
  // symbols, a large coefficient), a check that it did not comes first,
  // naming `what`.
  auto materialize = [&](const TDim &dim, const std::string &what) -> Value {
    if (rangeOf(dim))
      return materializeDim(builder, loc, bound, dim, nullptr, i64);
    Value overflow;
    Value value = materializeDim(builder, loc, bound, dim, &overflow, i64);
    if (value && overflow) {
      std::set<std::string> names;
      dim.collectSymbols(names);
      SmallVector<Value> values;
      std::string format = what + " overflows 64-bit integers";
      format += symbolValues(names, values);
      checks.check(negate(builder, loc, overflow), format, values);
    }
    return value;
  };
  // Whether `expr >= 0` holds for each of `constraints` (a relation's).
  auto relationHolds = [&](ArrayRef<TDim> constraints,
                           const std::string &what) -> Value {
    Value holds;
    for (const TDim &constraint : constraints) {
      Value value = materialize(constraint, what);
      Value nonNegative = arith::CmpIOp::create(
          builder, loc, arith::CmpIPredicate::sge, value, zero);
      holds = holds ? arith::AndIOp::create(builder, loc, holds, nonNegative)
                          .getResult()
                    : nonNegative;
    }
    return holds;
  };
  // A relation's constraints, if every symbol in it is bound; `names` gets
  // its symbols.
  auto boundConstraints = [&](const std::string &text,
                              std::vector<TDim> &constraints,
                              std::set<std::string> &names) -> FailureOr<bool> {
    std::string error;
    if (!SymbolScope::parseAssertion(text, constraints, &error))
      return module.emitError() << "invalid assertion: " << error;
    for (const TDim &constraint : constraints)
      constraint.collectSymbols(names);
    return llvm::all_of(names, isBound);
  };

  // The symbols within the ceiling on a dim, which bounds the arithmetic
  // on them.
  Value ceiling = arith::ConstantIntOp::create(builder, loc, i64, kDimCeiling);
  for (const SymbolSource &source : sources) {
    const std::string &symbol = source.form.symbol;
    Value value = bound.lookup(symbol);
    checks.check(arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::sle,
                                       value, ceiling),
                 "input '" + escapeFormat(inputName(source.argument)) +
                     "' gives " + symbol + " = %lld (axis " +
                     std::to_string(source.axis) +
                     "), over the limit of 2^31 on a dim",
                 value);
  }
  // Each dim against its expression; a dim that is exactly its symbol is
  // its value.
  for (auto [argument, shape] : llvm::enumerate(inputShapes)) {
    std::string prefix =
        "input '" + escapeFormat(inputName(argument)) + "' is " +
        llvm::join(SmallVector<StringRef>(shape.size(), "%lld"), ",") +
        ", the model expects " + shapeToString(shape) + " (axis ";
    for (auto [axis, dim] : llvm::enumerate(shape)) {
      const SymbolSource *source = nullptr;
      for (const SymbolSource &candidate : sources)
        if (candidate.argument == argument && candidate.axis == axis)
          source = &candidate;
      if (source && source->form.coefficient == 1 && source->form.offset == 0)
        continue;
      Value size = sizes[argument][axis];
      std::string format =
          prefix + std::to_string(axis) + " should be " + dim.toString();
      std::string what = "input '" + escapeFormat(inputName(argument)) +
                         "' axis " + std::to_string(axis) + " (" +
                         escapeFormat(dim.toString()) + ")";
      SmallVector<Value> values(sizes[argument]);
      Value holds;
      if (source) {
        // `a*S+b` binds S: the size must have that form with S a size.
        Value symbol = bound.lookup(source->form.symbol);
        holds = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::sge,
                                      symbol, zero);
        if (source->form.coefficient != 1) {
          Value expected = materialize(dim, what);
          holds = arith::AndIOp::create(
              builder, loc,
              arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq,
                                    size, expected),
              holds);
        }
        format += " for some " + source->form.symbol + " >= 0)";
      } else {
        std::set<std::string> names;
        dim.collectSymbols(names);
        if (!llvm::all_of(names, isBound))
          return func.emitError()
                 << "input '" << inputName(argument) << "' axis " << axis
                 << " is " << dim.toString()
                 << ", which the inputs do not determine";
        Value expected = materialize(dim, what);
        holds = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq,
                                      size, expected);
        if (dim.isConstant()) {
          format += ")";
        } else {
          format += " = %lld)";
          values.push_back(expected);
        }
      }
      checks.check(holds, format, values);
    }
  }
  // The model's assertions over symbols the inputs bind (not those an op
  // computes later).
  for (const std::string &text : assertions) {
    std::vector<TDim> constraints;
    std::set<std::string> names;
    FailureOr<bool> decidable = boundConstraints(text, constraints, names);
    if (failed(decidable))
      return failure();
    if (!*decidable)
      continue;
    std::string what = "the model's assertion " + escapeFormat(text);
    Value holds = relationHolds(constraints, what);
    SmallVector<Value> values;
    std::string format = "the inputs violate " + what;
    format += symbolValues(names, values);
    checks.check(holds, format, values);
  }
  // The inputs fit one of the scenarios, when the model has some and the
  // inputs decide each (a scenario without assertions, or one over a
  // symbol an op computes, might always fit).
  bool scenariosDecidable = !scenarios.empty();
  std::vector<std::vector<TDim>> scenarioConstraints;
  std::set<std::string> scenarioNames;
  for (const Scenario &scenario : scenarios) {
    std::vector<TDim> constraints;
    for (const std::string &text : scenario.assertions) {
      FailureOr<bool> decidable =
          boundConstraints(text, constraints, scenarioNames);
      if (failed(decidable))
        return failure();
      scenariosDecidable &= *decidable;
    }
    scenariosDecidable &= !constraints.empty();
    scenarioConstraints.push_back(std::move(constraints));
  }
  if (scenariosDecidable) {
    Value fitsOne;
    SmallVector<std::string> described;
    for (auto [scenario, constraints] :
         llvm::zip(scenarios, scenarioConstraints)) {
      Value fits = relationHolds(constraints,
                                 "the scenario " + escapeFormat(scenario.name));
      fitsOne =
          fitsOne
              ? arith::OrIOp::create(builder, loc, fitsOne, fits).getResult()
              : fits;
      described.push_back(escapeFormat(
          scenario.name + " (" + llvm::join(scenario.assertions, ", ") + ")"));
    }
    SmallVector<Value> values;
    std::string format = "the inputs fit none of the model's scenarios " +
                         llvm::join(described, ", ");
    format += symbolValues(scenarioNames, values);
    checks.check(fitsOne, format, values);
  }
  // The intermediate dims nothing proves non-negative.
  for (const GuardedDim &guard : guards.dims) {
    std::set<std::string> names;
    guard.dim.collectSymbols(names);
    if (!llvm::all_of(names, isBound))
      continue;
    std::string dimText = escapeFormat(guard.dim.toString());
    Value value = materialize(guard.dim, "'" + escapeFormat(guard.node) +
                                             "''s dim " + dimText);
    Value holds = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::sge,
                                        value, zero);
    std::string format = "'" + escapeFormat(guard.node) +
                         "' would have the dim " + dimText +
                         " = %lld, which is negative";
    SmallVector<Value> values = {value};
    format += symbolValues(names, values);
    checks.check(holds, format, values);
  }
  // The results that could be larger than any input: within what a tensor
  // may take on this machine (the runtime says how much).
  Value memoryLimit;
  for (const GuardedSize &guard : guards.sizes) {
    std::set<std::string> names;
    guard.bytes.collectSymbols(names);
    if (!llvm::all_of(names, isBound))
      continue;
    std::string node = escapeFormat(guard.node);
    std::string bytesText = escapeFormat(guard.bytes.toString());
    Value bytes =
        materialize(guard.bytes, "the size of '" + node + "''s result");
    if (!memoryLimit)
      memoryLimit =
          LLVM::CallOp::create(
              builder, loc,
              getRuntimeFunction(module, loc, kMemoryLimitName,
                                 LLVM::LLVMFunctionType::get(i64, {})),
              ValueRange{})
              .getResult();
    Value holds = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::sle,
                                        bytes, memoryLimit);
    std::string format = "'" + node + "' would have a result of " + bytesText +
                         " = %lld bytes (" + escapeFormat(guard.type) +
                         "), more than the %lld a tensor may take here";
    SmallVector<Value> values = {bytes, memoryLimit};
    format += symbolValues(names, values);
    checks.check(holds, format, values);
  }

  // The body runs only if every check held. Returning from two blocks
  // (not yielding from an scf.if) keeps the results' buffers as the body
  // and tensor.empty allocate them: no copy at the function boundary.
  auto returnWithStatus = [&](OpBuilder &b, SmallVector<Value> results,
                              Value status) {
    results.push_back(status);
    func::ReturnOp::create(b, loc, results);
  };
  auto statusConstant = [&](OpBuilder &b, int32_t status) -> Value {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), status);
  };
  // A body that checks what it does (the assertions of an If branch) calls
  // tract_fail; the runtime then says whether it did.
  auto bodyStatus = [&](OpBuilder &b) -> Value {
    if (!bodyMayFail && !module.lookupSymbol(kFailName))
      return statusConstant(b, kStatusOk);
    LLVM::LLVMFuncOp takeFailure =
        getRuntimeFunction(module, loc, kTakeFailureName,
                           LLVM::LLVMFunctionType::get(b.getI32Type(), {}));
    return LLVM::CallOp::create(b, loc, takeFailure, ValueRange{}).getResult();
  };
  auto callBody = [&](OpBuilder &b) {
    SmallVector<Value> arguments;
    for (auto [argument, type] :
         llvm::zip(block->getArguments(), bodyType.getInputs()))
      arguments.push_back(
          argument.getType() == type
              ? Value(argument)
              : tensor::CastOp::create(b, loc, type, argument).getResult());
    auto call = func::CallOp::create(b, loc, func, arguments);
    SmallVector<Value> results;
    for (auto [result, type] : llvm::zip(call.getResults(), resultTypes))
      results.push_back(
          result.getType() == type
              ? Value(result)
              : tensor::CastOp::create(b, loc, type, result).getResult());
    returnWithStatus(b, results, bodyStatus(b));
  };
  Value ok = checks.allHold();
  if (!ok) {
    callBody(builder);
    return success();
  }
  Region &region = entry.getBody();
  Block *run = new Block();
  Block *fail = new Block();
  region.push_back(run);
  region.push_back(fail);
  cf::CondBranchOp::create(builder, loc, ok, run, fail);
  builder.setInsertionPointToStart(run);
  callBody(builder);
  // Empty results, which the caller frees as any other.
  builder.setInsertionPointToStart(fail);
  SmallVector<Value> empties;
  Value none = arith::ConstantIndexOp::create(builder, loc, 0);
  for (Type type : resultTypes) {
    auto tensorType = cast<RankedTensorType>(type);
    empties.push_back(tensor::EmptyOp::create(
        builder, loc, tensorType,
        SmallVector<Value>(tensorType.getRank(), none)));
  }
  returnWithStatus(builder, empties, statusConstant(builder, kStatusError));
  return success();
}

struct TractEntryChecksPass
    : public tract::impl::TractEntryChecksBase<TractEntryChecksPass> {
  using TractEntryChecksBase::TractEntryChecksBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::vector<std::string> assertions;
    if (auto texts = module->getAttrOfType<ArrayAttr>(kAssertionsAttrName))
      for (StringRef text : texts.getAsValueRange<StringAttr>())
        assertions.push_back(text.str());
    std::vector<Scenario> scenarios;
    if (auto dict = module->getAttrOfType<DictionaryAttr>(kScenariosAttrName))
      for (NamedAttribute named : dict) {
        Scenario &scenario = scenarios.emplace_back();
        scenario.name = named.getName().str();
        if (auto texts = dyn_cast<ArrayAttr>(named.getValue()))
          for (StringRef text : texts.getAsValueRange<StringAttr>())
            scenario.assertions.push_back(text.str());
      }
    // Collected first: each check adds a function.
    SmallVector<func::FuncOp> entries;
    for (auto func : module.getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal())
        entries.push_back(func);
    for (func::FuncOp func : entries) {
      FailureOr<EntryFacts> facts = takeEntryFacts(func);
      if (failed(facts) ||
          failed(addEntryChecks(func, facts->inputShapes, assertions, scenarios,
                                facts->guards, bodyMayFail)))
        return signalPassFailure();
    }
  }
};

} // namespace
