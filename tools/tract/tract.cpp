// tract: the user command line, compatible with tract's own.
#include "codegen/cpu/TargetInfo.h"
#include "conversion/LoweringUtils.h"
#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractOps.h"
#include "frontends/ModelLoader.h"
#include "frontends/nnef/NnefExporter.h"
#include "frontends/nnef/NnefImporter.h"
#include "passes/Passes.h"
#include "pipelines/Pipelines.h"
#include "runtime/tract_profile.h"
#include "target/Aot.h"
#include "target/Jit.h"
#include "target/Passes.h"
#include "tools/tract/Bundle.h"
#include "tools/tract/CliError.h"
#include "tools/tract/CommandLine.h"
#include "tools/tract/Dump.h"
#include "tools/tract/RunMemory.h"
#include "tools/tract/Streaming.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <set>

using namespace mlir;
using namespace mlir::tract;

namespace {

/// How run, bench and dump --profile compile: for --threads threads.
JitOptions jitOptions(const cli::Invocation &invocation) {
  JitOptions options;
  options.threads = invocation.threads.value_or(1);
  options.threadingThreshold = invocation.threadingThreshold.value_or(-1);
  options.gpu = invocation.gpu;
  options.spirvDir = invocation.spirvDir;
  options.mslDir = invocation.mslDir;
  options.ptxDir = invocation.ptxDir;
  options.cudaPath = invocation.cudaPath;
  return options;
}

int fail(const llvm::Twine &message) {
  llvm::errs() << "tract: error: " << message << "\n";
  return 1;
}

int fail(llvm::Error error) { return fail(llvm::toString(std::move(error))); }

/// Uniform values in [-1, 1) (or 0/1, or small integers), from a fixed seed
/// so that runs repeat.
llvm::Expected<cli::HostTensor> randomTensor(const TensorSignature &signature,
                                             const SymbolValues &values) {
  SmallVector<int64_t> shape;
  for (const TDim &dim : signature.shape) {
    std::optional<int64_t> size = dim.eval(values);
    if (!size)
      return cli::makeError(
          "cannot make up input '" + signature.name + "': its dim " +
          dim.toString() +
          " depends on a symbol no other input sets (give it a size "
          "with --set after the subcommand)");
    shape.push_back(*size);
  }
  auto tensor = cli::HostTensor::create(signature.name, signature.dtype, shape);
  if (!tensor)
    return tensor.takeError();
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&]() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int64_t count = tensor->getNumElements();
  auto fill = [&](auto *data, auto make) {
    for (int64_t i = 0; i < count; ++i)
      data[i] = make();
  };
  auto unit = [&]() { return (next() >> 11) * 0x1.0p-53 * 2.0 - 1.0; };
  uint8_t *raw = tensor->data();
  switch (signature.dtype) {
  case TRACT_DT_F32:
    fill(reinterpret_cast<float *>(raw), [&] { return float(unit()); });
    break;
  case TRACT_DT_F64:
    fill(reinterpret_cast<double *>(raw), unit);
    break;
  case TRACT_DT_BOOL:
    fill(raw, [&] { return uint8_t(next() & 1); });
    break;
  default: {
    // Small non-negative integers fit every integer type; f16 and bf16
    // get the bytes of small integers too, which are valid finite values.
    size_t size = tract_dtype_size(signature.dtype);
    for (int64_t i = 0; i < count; ++i) {
      uint64_t value = next() % 8;
      if (signature.dtype == TRACT_DT_F16)
        value = 0x3c00 + (value << 6);
      else if (signature.dtype == TRACT_DT_BF16)
        value = 0x3f80 + (value << 3);
      std::memcpy(raw + i * size, &value, size);
    }
    break;
  }
  }
  return tensor;
}

/// Finds the tensor for `name` (or position `index` when the bundle's
/// tensors have no names).
const cli::HostTensor *findTensor(llvm::ArrayRef<cli::HostTensor> tensors,
                                  llvm::StringRef name, size_t index) {
  for (const cli::HostTensor &tensor : tensors)
    if (tensor.getName() == name)
      return &tensor;
  if (index < tensors.size() && tensors[index].getName().empty())
    return &tensors[index];
  return nullptr;
}

/// ONNX test data stores bfloat16 tensors as their uint16 bits; seen
/// against a BF16 input or output, they are reinterpreted.
const cli::HostTensor *reinterpretBf16(const cli::HostTensor *tensor,
                                       tract_dtype wanted,
                                       std::vector<cli::HostTensor> &keep) {
  if (!tensor || wanted != TRACT_DT_BF16 || tensor->getDtype() != TRACT_DT_U16)
    return tensor;
  auto copy =
      cli::HostTensor::fromBytes(tensor->getName().str(), TRACT_DT_BF16,
                                 tensor->getShape(), tensor->getBytes());
  if (!copy) {
    llvm::consumeError(copy.takeError());
    return tensor;
  }
  keep.push_back(std::move(*copy));
  return &keep.back();
}

/// The tensors a model runs on, and what keeps them alive.
struct ModelInputs {
  std::vector<cli::HostTensor> made;
  /// The tensor of each input: the bundle's, or one of `made`.
  std::vector<const cli::HostTensor *> tensors;
  std::vector<tract_tensor> descriptors;
  std::vector<const tract_tensor *> arguments;
};

/// `bound` and the symbols that the dims of the `given` inputs set.
SymbolValues symbolsOfInputs(llvm::ArrayRef<TensorSignature> signatures,
                             llvm::ArrayRef<const cli::HostTensor *> given,
                             const SymbolValues &bound) {
  SymbolValues values = bound;
  for (auto [signature, tensor] : llvm::zip(signatures, given))
    if (tensor)
      for (auto [axis, dim] : llvm::enumerate(signature.shape))
        if (std::optional<std::string> symbol = dim.getSymbolName())
          values[*symbol] = tensor->getShape()[axis];
  return values;
}

/// Inputs from the bundle by name (or position), else made up when
/// `allowRandom`; states that no bundle gives start empty.
llvm::Error prepareInputs(const CompiledModel &model,
                          const std::optional<cli::Bundle> &bundle,
                          bool allowRandom, ModelInputs &inputs,
                          bool allowFloatCasts = false,
                          const SymbolValues &bound = {}) {
  std::vector<cli::HostTensor> &made = inputs.made;
  std::vector<const cli::HostTensor *> given;
  // Pointers into `made` must stay valid: room for every input, its bf16
  // copy and the outputs' bf16 copies.
  made.reserve(2 * model.getInputs().size() + model.getOutputs().size());
  llvm::ArrayRef<TensorSignature> signatures = model.getInputs();
  for (auto [index, signature] : llvm::enumerate(signatures)) {
    const cli::HostTensor *tensor =
        bundle ? findTensor(bundle->getInputs(), signature.name, index)
               : nullptr;
    tensor = reinterpretBf16(tensor, signature.dtype, made);
    if (tensor && allowFloatCasts && tensor->getDtype() != signature.dtype) {
      auto cast = cli::castFloats(*tensor, signature.dtype);
      if (!cast)
        return cli::makeError("--allow-float-casts: input '" + signature.name +
                              "': " + llvm::toString(cast.takeError()));
      made.push_back(std::move(*cast));
      tensor = &made.back();
    }
    if (!tensor && !allowRandom && signature.role != TRACT_IO_STATE)
      return cli::makeError(
          "no value for input '" + signature.name +
          "'; give --input-from-bundle, or --allow-random-input");
    given.push_back(tensor);
  }
  // A state nothing gives starts empty: zeros, its symbols that no input
  // sets at 0 (a key/value cache of no past).
  SymbolValues known = symbolsOfInputs(signatures, given, bound);
  for (auto [signature, tensor] : llvm::zip(signatures, given)) {
    if (tensor || signature.role != TRACT_IO_STATE)
      continue;
    SmallVector<int64_t> shape;
    for (const TDim &dim : signature.shape) {
      std::set<std::string> symbols;
      dim.collectSymbols(symbols);
      SymbolValues values = known;
      for (const std::string &symbol : symbols)
        values.try_emplace(symbol, 0);
      std::optional<int64_t> size = dim.eval(values);
      if (!size || *size < 0)
        return cli::makeError("state '" + signature.name + "' has no size");
      shape.push_back(*size);
    }
    auto state =
        cli::HostTensor::create(signature.name, signature.dtype, shape);
    if (!state)
      return state.takeError();
    made.push_back(std::move(*state));
    tensor = &made.back();
  }
  if (allowRandom) {
    // Symbols bound by --set after the subcommand and by the given inputs
    // size the made-up ones.
    SymbolValues values = symbolsOfInputs(signatures, given, bound);
    for (auto [signature, tensor] : llvm::zip(signatures, given))
      if (!tensor) {
        auto random = randomTensor(signature, values);
        if (!random)
          return random.takeError();
        made.push_back(std::move(*random));
        tensor = &made.back();
      }
  }
  inputs.tensors = given;
  for (const cli::HostTensor *tensor : given) {
    auto descriptor = const_cast<cli::HostTensor *>(tensor)->getRuntimeTensor();
    if (!descriptor)
      return descriptor.takeError();
    inputs.descriptors.push_back(*descriptor);
  }
  for (const tract_tensor &descriptor : inputs.descriptors)
    inputs.arguments.push_back(&descriptor);
  return llvm::Error::success();
}

/// The host copies of what a compiled model returned, under its output
/// names.
llvm::Expected<std::vector<cli::HostTensor>>
outputsOf(const CompiledModel &model, llvm::ArrayRef<tract_tensor *> results) {
  std::vector<cli::HostTensor> outputs;
  for (auto [signature, result] : llvm::zip(model.getOutputs(), results)) {
    auto output = cli::HostTensor::fromRuntime(signature.name, result);
    if (!output)
      return output.takeError();
    outputs.push_back(std::move(*output));
  }
  return outputs;
}

/// The name of our op that tract calls `tractName` in its dumps: tract's
/// CamelCase in snake_case (GatherElements is gather_elements), but for
/// the few names tract spells otherwise; any template part (`Reduce<Sum>`)
/// is dropped. Empty when the dialect has no such op.
std::string opNameForTract(llvm::StringRef tractName, MLIRContext *context) {
  static const std::pair<llvm::StringRef, llvm::StringRef> kSpelledOtherwise[] =
      {{"EinSum", "einsum"},         {"TypedConcat", "concat"},
       {"MultiBroadcastTo", "broadcast"}, {"Iff", "select"},
       {"ElementWiseOp", ""},        {"TypedBinOp", ""}};
  llvm::StringRef base = tractName.split('<').first;
  std::string name;
  bool known = false;
  for (auto [tract, ours] : kSpelledOtherwise)
    if (base == tract) {
      name = ours.str();
      known = true;
    }
  if (!known)
    for (auto [index, c] : llvm::enumerate(base)) {
      if (llvm::isUpper(c) && index > 0 && !llvm::isUpper(base[index - 1]))
        name += '_';
      name += llvm::toLower(c);
    }
  if (name.empty() ||
      !RegisteredOperationName::lookup("tract." + name, context))
    return "";
  return "tract." + name;
}

/// --assert-op-count: the ops of the entry function, those of scan and if
/// bodies included as tract counts them, by tract's names; `Source` counts
/// the inputs, as tract's source nodes.
llvm::Error checkOpCounts(ModuleOp module, const cli::Invocation &invocation) {
  func::FuncOp main = cli::entryFunction(module);
  for (const auto &[tractName, expected] : invocation.opCounts) {
    int64_t count = 0;
    if (tractName == "Source") {
      count = main ? main.getNumArguments() : 0;
    } else {
      std::string ours = opNameForTract(tractName, module.getContext());
      if (ours.empty()) {
        return cli::makeError("--assert-op-count: tract's op '" + tractName +
                              "' has no counterpart in the tract dialect");
      }
      if (main)
        main.getBody().walk([&](Operation *op) {
          count += op->getName().getStringRef() == ours;
        });
    }
    if (count != expected) {
      return cli::makeError("--assert-op-count: expected " +
                            std::to_string(expected) + " " + tractName + " op" +
                            (expected == 1 ? "" : "s") + ", found " +
                            std::to_string(count));
    }
  }
  return llvm::Error::success();
}

/// --assert-output: `name:1,1,f32` or `name:1,1,f32=0` against the output
/// of that name (or position, without a name): its shape, its type and,
/// with `=V`, the value of every element (exactly).
llvm::Error checkOutputFact(llvm::StringRef fact,
                            llvm::ArrayRef<cli::HostTensor> outputs) {
  auto fail = [&](const llvm::Twine &why) {
    return cli::makeError("--assert-output '" + fact + "': " + why);
  };
  auto [spec, valueText] = fact.split('=');
  llvm::StringRef name;
  if (spec.contains(':'))
    std::tie(name, spec) = spec.split(':');
  const cli::HostTensor *output = nullptr;
  for (const cli::HostTensor &candidate : outputs)
    if (!name.empty() && candidate.getName() == name)
      output = &candidate;
  if (name.empty() && !outputs.empty())
    output = &outputs.front();
  if (!output)
    return fail("the model has no output '" + name + "'");
  std::string expected = spec.lower(), got = llvm::StringRef(output->summary()).lower();
  if (expected != got)
    return fail("the output is " + output->summary());
  if (!fact.contains('='))
    return llvm::Error::success();
  double value;
  if (valueText.trim().getAsDouble(value))
    return fail("'" + valueText + "' is not a number");
  if (output->getDtype() != TRACT_DT_F32 && output->getDtype() != TRACT_DT_F64 &&
      output->getDtype() != TRACT_DT_I64 && output->getDtype() != TRACT_DT_I32)
    return fail("values are checked on f32, f64, i32 and i64 outputs");
  for (int64_t i = 0, e = output->getNumElements(); i < e; ++i) {
    double element = 0;
    switch (output->getDtype()) {
    case TRACT_DT_F32:
      element = output->getValues<float>()[i];
      break;
    case TRACT_DT_F64:
      element = output->getValues<double>()[i];
      break;
    case TRACT_DT_I32:
      element = output->getValues<int32_t>()[i];
      break;
    default:
      element = double(output->getValues<int64_t>()[i]);
      break;
    }
    if (element != value)
      return fail("element " + llvm::Twine(i) + " is " +
                  std::to_string(element));
  }
  return llvm::Error::success();
}

/// Makes `module`'s entry function also return the tensor results of its
/// ops (constants aside), after its own outputs; returns their names as
/// the listing gives them (`3 einsum node`).
std::vector<std::string> returnEveryStep(ModuleOp module) {
  func::FuncOp main = cli::entryFunction(module);
  Block &body = main.getBody().front();
  Operation *terminator = body.getTerminator();
  SmallVector<Value> values(terminator->getOperands());
  size_t numOutputs = values.size();
  std::vector<std::string> names;
  unsigned id = main.getNumArguments();
  for (Operation &op : body.without_terminator()) {
    unsigned opId = id++;
    if (isa<tract::ConstOp>(op))
      continue;
    for (Value result : op.getResults())
      if (isa<RankedTensorType>(result.getType())) {
        values.push_back(result);
        std::string name = cli::nodeName(op.getLoc());
        names.push_back(std::to_string(opId) + " " +
                        op.getName().stripDialect().str() +
                        (name.empty() ? "" : " " + name));
      }
  }
  terminator->setOperands(values);
  main.setType(FunctionType::get(module.getContext(), main.getArgumentTypes(),
                                 ValueRange(values).getTypes()));
  for (size_t i = numOutputs; i < values.size(); ++i)
    main.setResultAttr(i, "tract.name",
                       StringAttr::get(module.getContext(),
                                       "step_" + std::to_string(i)));
  return names;
}

/// The first values of `tensor`, as `[0.5, -1, 2, …]`; "" for the types
/// --steps does not show (f16, bf16, the narrow integers).
std::string previewValues(const cli::HostTensor &tensor) {
  static const tract_dtype kShownTypes[] = {TRACT_DT_F32, TRACT_DT_F64,
                                            TRACT_DT_I32, TRACT_DT_I64,
                                            TRACT_DT_BOOL};
  if (!llvm::is_contained(kShownTypes, tensor.getDtype()))
    return "";
  constexpr int64_t kShown = 8;
  int64_t count = tensor.getNumElements();
  std::string text = "[";
  for (int64_t i = 0; i < std::min(count, kShown); ++i)
    text += (i ? ", " : "") + cli::elementText(tensor, i);
  return text + (count > kShown ? ", …]" : "]");
}

/// The sizes --set gives symbols after the subcommand.
SymbolValues runSymbols(const cli::Invocation &invocation) {
  SymbolValues values;
  for (const auto &[symbol, size] : invocation.runSets)
    values[symbol] = size;
  return values;
}

/// --approx, or `fallback` when it is not given; an unknown level is
/// reported (and nullopt returned).
std::optional<cli::Approximation>
approximationOf(const cli::Invocation &invocation, llvm::StringRef fallback) {
  std::string approx = invocation.approx.value_or(fallback.str());
  std::optional<cli::Approximation> level = cli::parseApproximation(approx);
  if (!level)
    fail("unknown --approx '" + approx +
         "'; expected exact, close, approximate, very, super or ultra");
  return level;
}

int run(ModuleOp module, const cli::Invocation &invocation,
        TimingScope &timing) {
  std::optional<cli::Approximation> approximation =
      approximationOf(invocation, "close");
  if (!approximation)
    return 1;
  std::optional<cli::Bundle> inputBundle, outputBundle;
  if (invocation.inputBundle) {
    auto bundle = cli::loadBundle(*invocation.inputBundle);
    if (!bundle)
      return fail(bundle.takeError());
    inputBundle = std::move(*bundle);
  }
  if (invocation.outputBundle) {
    auto bundle = cli::loadBundle(*invocation.outputBundle);
    if (!bundle)
      return fail(bundle.takeError());
    outputBundle = std::move(*bundle);
  }

  std::vector<cli::HostTensor> outputs;
  std::vector<cli::HostTensor> made;
  if (cli::isPulsified(module)) {
    // A streaming model runs pulse by pulse on the whole input.
    if (invocation.steps)
      return fail("--steps shows the ops of a batch model, not of a stream");
    if (!inputBundle)
      return fail("a pulsified model runs on --input-from-bundle");
    auto streamed = cli::runStreaming(module, inputBundle->getInputs(),
                                      jitOptions(invocation), timing);
    if (!streamed)
      return fail(streamed.takeError());
    outputs = std::move(*streamed);
  } else {
    // --steps: the model also returns every op's result, for printing.
    OwningOpRef<ModuleOp> withSteps;
    std::vector<std::string> stepNames;
    if (invocation.steps) {
      withSteps = module.clone();
      stepNames = returnEveryStep(*withSteps);
    }
    size_t numOutputs = cli::entryFunction(module).getNumResults();
    auto model = CompiledModel::compile(withSteps ? *withSteps : module,
                                        jitOptions(invocation), &timing);
    if (!model)
      return fail(model.takeError());
    cli::keepFreedBuffers();
    ModelInputs inputs;
    if (llvm::Error error =
            prepareInputs(**model, inputBundle, invocation.allowRandomInput,
                          inputs, invocation.allowFloatCasts,
                          runSymbols(invocation)))
      return fail(std::move(error));
    made = std::move(inputs.made);

    auto results = (*model)->run(inputs.arguments);
    if (!results) {
      // The model's checks name the input; say where it came from.
      if (!inputBundle)
        return fail(results.takeError());
      return fail(cli::makeError(llvm::toString(results.takeError()) +
                                 " (inputs from " +
                                 inputBundle->getPath().str() + ")"));
    }
    auto returned = outputsOf(**model, *results);
    if (!returned)
      return fail(returned.takeError());
    outputs = std::move(*returned);
    // The steps come after the model's own outputs.
    if (!invocation.quiet)
      for (auto [name, step] :
           llvm::zip(stepNames, llvm::drop_begin(outputs, numOutputs))) {
        std::string values = previewValues(step);
        llvm::outs() << "step " << name << ": " << step.summary()
                     << (values.empty() ? "" : " ") << values << "\n";
      }
    outputs.erase(outputs.begin() + numOutputs, outputs.end());
    // The caches a model keeps are states, not outputs (as in tract).
    for (size_t index = numOutputs; index-- > 0;)
      if ((*model)->getOutputs()[index].role == TRACT_IO_STATE)
        outputs.erase(outputs.begin() + index);
  }

  if (!invocation.quiet)
    for (const cli::HostTensor &output : outputs)
      llvm::outs() << "output '" << output.getName()
                   << "': " << output.summary() << "\n";
  if (invocation.saveOutputs)
    if (llvm::Error error = cli::writeNpz(*invocation.saveOutputs, outputs))
      return fail(std::move(error));
  for (const std::string &fact : invocation.outputFacts)
    if (llvm::Error error = checkOutputFact(fact, outputs))
      return fail(std::move(error));
  if (outputBundle) {
    int status = 0;
    for (auto [index, output] : llvm::enumerate(outputs)) {
      const cli::HostTensor *expected = reinterpretBf16(
          findTensor(outputBundle->getOutputs(), output.getName(), index),
          output.getDtype(), made);
      if (!expected) {
        llvm::errs() << "tract: error: the bundle has no value for output '"
                     << output.getName() << "'\n";
        status = 1;
        continue;
      }
      // --allow-float-casts: the output is compared in the bundle's type.
      std::optional<cli::HostTensor> cast;
      if (invocation.allowFloatCasts &&
          expected->getDtype() != output.getDtype()) {
        auto converted = cli::castFloats(output, expected->getDtype());
        if (!converted)
          return fail("--allow-float-casts: output '" +
                      output.getName().str() +
                      "': " + llvm::toString(converted.takeError()));
        cast = std::move(*converted);
      }
      const cli::HostTensor &compared = cast ? *cast : output;
      if (llvm::Error error =
              cli::compareTensors(*expected, compared, *approximation)) {
        llvm::errs() << "tract: error: output '" << output.getName()
                     << "': " << llvm::toString(std::move(error)) << "\n";
        status = 1;
      }
    }
    if (status)
      return status;
    if (!invocation.quiet)
      llvm::outs() << "outputs match the bundle ("
                   << cli::stringifyApproximation(*approximation) << ")\n";
  }
  return 0;
}

/// The value `compare` gives a symbol that no given input sets: a stream of
/// 32 frames is whole pulses for the usual pulse sizes.
constexpr int64_t kCompareSymbolValue = 32;

/// `compare`: `reference` is the model as loaded (after --set, -t and the
/// facts); `candidate` went through the passes (-O or --stage declutter,
/// --pulse). Both run on the same inputs (a pulsified candidate streamed
/// pulse by pulse), and each output must match the reference's at --approx
/// (approximate unless told).
int compare(ModuleOp reference, ModuleOp candidate,
            const cli::Invocation &invocation, TimingScope &timing) {
  std::optional<cli::Approximation> approximation =
      approximationOf(invocation, "approximate");
  if (!approximation)
    return 1;
  auto referenceModel =
      CompiledModel::compile(reference, jitOptions(invocation), &timing);
  if (!referenceModel)
    return fail(referenceModel.takeError());
  cli::keepFreedBuffers();

  // The inputs: the bundle's, then made up, the symbols no given input sets
  // at kCompareSymbolValue; the candidate runs on copies of them.
  std::optional<cli::Bundle> given;
  if (invocation.inputBundle) {
    auto bundle = cli::loadBundle(*invocation.inputBundle);
    if (!bundle)
      return fail(bundle.takeError());
    given = std::move(*bundle);
  }
  SymbolValues defaults;
  for (const TensorSignature &signature : (*referenceModel)->getInputs())
    for (const TDim &dim : signature.shape) {
      std::set<std::string> symbols;
      dim.collectSymbols(symbols);
      for (const std::string &symbol : symbols)
        defaults.try_emplace(symbol, kCompareSymbolValue);
    }
  ModelInputs referenceInputs;
  if (llvm::Error error = prepareInputs(
          **referenceModel, given, invocation.allowRandomInput,
          referenceInputs, /*allowFloatCasts=*/false, defaults))
    return fail(std::move(error));
  std::vector<cli::HostTensor> tensors;
  for (auto [signature, tensor] :
       llvm::zip((*referenceModel)->getInputs(), referenceInputs.tensors)) {
    auto copy = tensor->clone();
    if (!copy)
      return fail(copy.takeError());
    copy->setName(signature.name);
    tensors.push_back(std::move(*copy));
  }
  std::optional<cli::Bundle> inputs(
      std::in_place, cli::BundleKind::Npz, "the compared inputs",
      std::move(tensors), std::vector<cli::HostTensor>());

  auto runOn = [](const CompiledModel &model, const ModelInputs &arguments)
      -> llvm::Expected<std::vector<cli::HostTensor>> {
    auto results = model.run(arguments.arguments);
    if (!results)
      return results.takeError();
    return outputsOf(model, *results);
  };
  auto expected = runOn(**referenceModel, referenceInputs);
  if (!expected)
    return fail(expected.takeError());

  llvm::Expected<std::vector<cli::HostTensor>> got =
      std::vector<cli::HostTensor>();
  if (cli::isPulsified(candidate)) {
    got = cli::runStreaming(candidate, inputs->getInputs(),
                            jitOptions(invocation), timing);
  } else {
    auto candidateModel =
        CompiledModel::compile(candidate, jitOptions(invocation), &timing);
    if (!candidateModel)
      return fail(candidateModel.takeError());
    ModelInputs candidateInputs;
    if (llvm::Error error = prepareInputs(**candidateModel, inputs,
                                          /*allowRandom=*/false,
                                          candidateInputs))
      return fail(std::move(error));
    got = runOn(**candidateModel, candidateInputs);
  }
  if (!got)
    return fail(got.takeError());
  if (got->size() != expected->size())
    return fail("the compared model has " + llvm::Twine(got->size()) +
                " outputs, the model as loaded " +
                llvm::Twine(expected->size()));
  int status = 0;
  for (auto [index, output] : llvm::enumerate(*got)) {
    const cli::HostTensor &wanted = (*expected)[index];
    if (llvm::Error error =
            cli::compareTensors(wanted, output, *approximation)) {
      llvm::errs() << "tract: error: output '" << output.getName()
                   << "': " << llvm::toString(std::move(error)) << "\n";
      status = 1;
    } else if (!invocation.quiet) {
      llvm::outs() << "output '" << output.getName() << "': "
                   << output.summary() << " matches the model as loaded ("
                   << cli::stringifyApproximation(*approximation) << ")\n";
    }
  }
  return status;
}

using Clock = std::chrono::steady_clock;

double millisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

/// One run of the model, its outputs dropped.
llvm::Error runOnce(const CompiledModel &model, const ModelInputs &inputs) {
  auto results = model.run(inputs.arguments);
  if (!results)
    return results.takeError();
  for (tract_tensor *result : *results)
    tract_tensor_free(result);
  return llvm::Error::success();
}

/// bench's warm-up: --warmup-loops runs, and more until --warmup-time; a
/// run is one on each of `runs` (llm-bench's generation steps), in order.
llvm::Error warmUp(const CompiledModel &model, llvm::ArrayRef<ModelInputs> runs,
                   const cli::Invocation &invocation) {
  Clock::time_point start = Clock::now();
  for (int64_t loop = 0; loop < invocation.warmupLoops ||
                         millisecondsSince(start) < invocation.warmupTimeMs;
       ++loop)
    for (const ModelInputs &inputs : runs)
      if (llvm::Error error = runOnce(model, inputs))
        return error;
  return llvm::Error::success();
}

/// Runs the model until `runs` reaches `maxRuns` or, after a first run,
/// `budgetMs` has passed; adds to `runs` and `elapsedMs`.
llvm::Error timeRuns(const CompiledModel &model, const ModelInputs &inputs,
                     int64_t maxRuns, double budgetMs, int64_t &runs,
                     double &elapsedMs) {
  Clock::time_point start = Clock::now();
  int64_t first = runs;
  while (runs < maxRuns &&
         (runs == first || millisecondsSince(start) < budgetMs)) {
    if (llvm::Error error = runOnce(model, inputs))
      return error;
    ++runs;
  }
  elapsedMs += millisecondsSince(start);
  return llvm::Error::success();
}

/// bench's measure of `inputs`: the warm-up, then runs until --max-loops
/// or --max-time; their count and total time.
llvm::Error benchRuns(const CompiledModel &model, const ModelInputs &inputs,
                      const cli::Invocation &invocation, int64_t &loops,
                      double &elapsedMs) {
  loops = 0;
  elapsedMs = 0;
  if (llvm::Error error = warmUp(model, inputs, invocation))
    return error;
  return timeRuns(model, inputs, invocation.maxLoops, invocation.maxTimeMs,
                  loops, elapsedMs);
}

llvm::Expected<std::optional<cli::Bundle>>
loadInputBundle(const cli::Invocation &invocation) {
  if (!invocation.inputBundle)
    return std::nullopt;
  auto bundle = cli::loadBundle(*invocation.inputBundle);
  if (!bundle)
    return bundle.takeError();
  return std::optional<cli::Bundle>(std::move(*bundle));
}

/// Times the compiled model as tract's bench does: warm-up runs, then runs
/// until --max-loops or --max-time, whichever comes first.
int bench(ModuleOp module, const cli::Invocation &invocation,
          TimingScope &timing) {
  auto inputBundle = loadInputBundle(invocation);
  if (!inputBundle)
    return fail(inputBundle.takeError());
  auto model = CompiledModel::compile(module, jitOptions(invocation), &timing);
  if (!model)
    return fail(model.takeError());
  cli::keepFreedBuffers();
  ModelInputs inputs;
  if (llvm::Error error =
          prepareInputs(**model, *inputBundle, /*allowRandom=*/true, inputs,
                        /*allowFloatCasts=*/false, runSymbols(invocation)))
    return fail(std::move(error));
  int64_t loops;
  double elapsed;
  if (llvm::Error error =
          benchRuns(**model, inputs, invocation, loops, elapsed))
    return fail(std::move(error));
  llvm::outs() << "Bench ran " << loops << " times, "
               << llvm::format("%.3f", loops ? elapsed / loops : 0.0)
               << " ms/i.\n";
  return 0;
}

/// The symbols of a causal language model, found as tract's llm-bench
/// finds them: the first integer input holds the tokens and the first float
/// input is a key/value cache; the batch is the symbol both have, the new
/// tokens the one only the tokens have, the past the one only the cache has.
struct LlmSymbols {
  std::optional<std::string> batch;
  std::string tokens, past;
};

llvm::Expected<LlmSymbols> findLlmSymbols(const CompiledModel &model) {
  const TensorSignature *tokens = nullptr, *cache = nullptr;
  for (const TensorSignature &signature : model.getInputs()) {
    bool isFloat = cli::isFloat(signature.dtype);
    bool isInteger = !isFloat && signature.dtype != TRACT_DT_BOOL;
    if (!tokens && isInteger)
      tokens = &signature;
    if (!cache && isFloat)
      cache = &signature;
  }
  if (!tokens)
    return cli::makeError("llm-bench: the model has no integer input to "
                          "take the tokens");
  if (!cache)
    return cli::makeError(
        "llm-bench: the model has no float input to be its key/value cache");
  auto symbolsOf = [](const TensorSignature &signature) {
    std::set<std::string> names;
    for (const TDim &dim : signature.shape)
      dim.collectSymbols(names);
    return names;
  };
  std::set<std::string> tokenSymbols = symbolsOf(*tokens);
  std::set<std::string> cacheSymbols = symbolsOf(*cache);
  LlmSymbols symbols;
  std::vector<std::string> tokensOnly, cacheOnly;
  for (const std::string &name : tokenSymbols)
    if (cacheSymbols.count(name))
      symbols.batch = name;
    else
      tokensOnly.push_back(name);
  for (const std::string &name : cacheSymbols)
    if (!tokenSymbols.count(name))
      cacheOnly.push_back(name);
  if (tokensOnly.size() != 1 || cacheOnly.size() != 1)
    return cli::makeError(
        "llm-bench: cannot tell the new tokens and the past apart: input '" +
        tokens->name + "' is " + tokens->shapeString() + " and input '" +
        cache->name + "' is " + cache->shapeString() +
        " (expected one symbol each has alone)");
  symbols.tokens = tokensOnly.front();
  symbols.past = cacheOnly.front();
  return symbols;
}

/// tract's llm-bench: prompt processing of 512 tokens (S = 512, P = 0,
/// timed as bench times a run) and generation of 128 tokens (S = 1, P from
/// 0 to 127, one run each, their times summed), in tokens per second, with
/// made-up inputs and B = 1.
int llmBench(ModuleOp module, const cli::Invocation &invocation,
             TimingScope &timing) {
  constexpr int64_t kPrompt = 512, kGenerated = 128;
  if (invocation.inputBundle)
    return fail("llm-bench makes up its inputs at each length; "
                "--input-from-bundle does not apply");
  auto model = CompiledModel::compile(module, jitOptions(invocation), &timing);
  if (!model)
    return fail(model.takeError());
  auto symbols = findLlmSymbols(**model);
  if (!symbols)
    return fail(symbols.takeError());
  cli::keepFreedBuffers();
  auto inputsAt = [&](int64_t tokens, int64_t past,
                      ModelInputs &inputs) -> llvm::Error {
    SymbolValues values = runSymbols(invocation);
    if (symbols->batch)
      values[*symbols->batch] = 1;
    values[symbols->tokens] = tokens;
    values[symbols->past] = past;
    return prepareInputs(**model, std::nullopt, /*allowRandom=*/true, inputs,
                         /*allowFloatCasts=*/false, values);
  };

  ModelInputs prompt;
  if (llvm::Error error = inputsAt(kPrompt, 0, prompt))
    return fail(std::move(error));
  int64_t loops;
  double elapsed;
  if (llvm::Error error =
          benchRuns(**model, prompt, invocation, loops, elapsed))
    return fail(std::move(error));
  llvm::outs() << "PP" << kPrompt << ": "
               << llvm::format("%.1f", kPrompt * loops / (elapsed / 1e3))
               << " tokens/sec\n";
  llvm::outs().flush();

  // The generation's inputs are made before its clock starts, and so are
  // the warm-up's: one pass over the 128 steps per warm-up loop.
  std::vector<ModelInputs> steps(kGenerated);
  for (int64_t past = 0; past < kGenerated; ++past)
    if (llvm::Error error = inputsAt(1, past, steps[past]))
      return fail(std::move(error));
  if (llvm::Error error = warmUp(**model, steps, invocation))
    return fail(std::move(error));
  double generation = 0;
  for (const ModelInputs &step : steps) {
    Clock::time_point start = Clock::now();
    if (llvm::Error error = runOnce(**model, step))
      return fail(std::move(error));
    generation += millisecondsSince(start);
  }
  llvm::outs() << "TG" << kGenerated << ": "
               << llvm::format("%.1f", kGenerated / (generation / 1e3))
               << " tokens/sec\n";
  return 0;
}

/// The symbols' values for these inputs, read from their dims as the
/// compiled model's entry reads them.
SymbolValues bindSymbols(const CompiledModel &model,
                         const ModelInputs &inputs) {
  SmallVector<Shape> shapes;
  for (const TensorSignature &signature : model.getInputs())
    shapes.emplace_back(signature.shape.begin(), signature.shape.end());
  SymbolValues values;
  for (const SymbolSource &source : findSymbolSources(shapes)) {
    int64_t size = inputs.arguments[source.argument]->dims[source.axis];
    values[source.form.symbol] = llvm::divideFloorSigned(
        size - source.form.offset, source.form.coefficient);
  }
  return values;
}

/// What an empty enter/exit pair of the profile's runtime measures, in ns:
/// the best average over batches, so that an interrupt does not count.
double measureInstrumentation(int64_t slot) {
  constexpr int kBatches = 20, kPairs = 2000;
  double best = 0;
  for (int batch = 0; batch < kBatches; ++batch) {
    int64_t before = tract_profile_nanoseconds(slot);
    for (int pair = 0; pair < kPairs; ++pair) {
      tract_profile_enter(slot);
      tract_profile_exit(slot);
    }
    double average =
        static_cast<double>(tract_profile_nanoseconds(slot) - before) / kPairs;
    if (batch == 0 || average < best)
      best = average;
  }
  return best;
}

/// Times each op of the entry function: the model compiled with
/// tract-instrument-profile runs as bench runs it, in turns with the model
/// compiled as is, so that both see the same machine load.
llvm::Expected<cli::ModelProfile>
profileModel(ModuleOp module, const cli::Invocation &invocation) {
  auto inputBundle = loadInputBundle(invocation);
  if (!inputBundle)
    return inputBundle.takeError();
  func::FuncOp entry = cli::entryFunction(module);
  if (!entry)
    return cli::makeError("the model has no function to profile");
  int64_t slots =
      llvm::range_size(entry.getBody().front().without_terminator());

  OwningOpRef<ModuleOp> plain = module.clone();
  OwningOpRef<ModuleOp> instrumented = module.clone();
  PassManager pm(module.getContext());
  TractInstrumentProfileOptions instrumentation;
  instrumentation.entry = entry.getName().str();
  pm.addPass(createTractInstrumentProfile(instrumentation));
  if (failed(pm.run(*instrumented)))
    return llvm::createStringError("the model could not be instrumented");
  auto plainModel = CompiledModel::compile(*plain, jitOptions(invocation));
  if (!plainModel)
    return plainModel.takeError();
  auto instrumentedModel =
      CompiledModel::compile(*instrumented, jitOptions(invocation));
  if (!instrumentedModel)
    return instrumentedModel.takeError();
  cli::keepFreedBuffers();

  ModelInputs inputs;
  if (llvm::Error error = prepareInputs(
          **plainModel, *inputBundle, /*allowRandom=*/true, inputs,
          /*allowFloatCasts=*/false, runSymbols(invocation)))
    return std::move(error);
  if (llvm::Error error = (*plainModel)->checkInputs(inputs.arguments))
    return std::move(error);
  cli::ModelProfile profile;
  profile.symbols = bindSymbols(**plainModel, inputs);

  // One more slot measures the instrumentation itself.
  if (tract_profile_start(slots + 1) != TRACT_OK)
    return llvm::createStringError(tract_last_error());
  llvm::scope_exit stop([] { tract_profile_stop(); });
  if (llvm::Error error = warmUp(**plainModel, inputs, invocation))
    return std::move(error);
  if (llvm::Error error = warmUp(**instrumentedModel, inputs, invocation))
    return std::move(error);
  tract_profile_reset();
  // Short turns, so that a change of machine load hits both models alike,
  // until each model has run for --max-time or --max-loops.
  double turnMs = std::min(20.0, invocation.maxTimeMs);
  double plainMs = 0, instrumentedMs = 0;
  do {
    if (llvm::Error error = timeRuns(**plainModel, inputs, invocation.maxLoops,
                                     turnMs, profile.benchRuns, plainMs))
      return std::move(error);
    if (llvm::Error error =
            timeRuns(**instrumentedModel, inputs, invocation.maxLoops, turnMs,
                     profile.runs, instrumentedMs))
      return std::move(error);
  } while (plainMs < invocation.maxTimeMs &&
           instrumentedMs < invocation.maxTimeMs &&
           profile.benchRuns < invocation.maxLoops &&
           profile.runs < invocation.maxLoops);
  profile.benchMs = plainMs / profile.benchRuns;
  profile.instrumentedMs = instrumentedMs / profile.runs;
  profile.instrumentationNs = measureInstrumentation(slots);
  for (int64_t slot = 0; slot < slots; ++slot) {
    double ns =
        static_cast<double>(tract_profile_nanoseconds(slot)) / profile.runs -
        profile.instrumentationNs;
    profile.opMs.push_back(std::max(ns, 0.0) / 1e6);
    profile.opKernels.push_back(
        static_cast<double>(tract_profile_launches(slot)) / profile.runs);
  }
  return profile;
}

/// dump --nnef, --nnef-dir, --nnef-graph: the model written as NNEF.
int exportNnef(ModuleOp module, const cli::Invocation &invocation) {
  nnef::ExportOptions options;
  options.tractCore = invocation.nnefTractCore;
  if (invocation.nnefArchive &&
      !nnef::isNnefArchivePath(*invocation.nnefArchive))
    return fail(
        "--nnef expects a .nnef.tgz, .tgz, .tar.gz or .tar path, not '" +
        *invocation.nnefArchive + "'; use --nnef-dir for a folder");
  for (const std::optional<std::string> &path :
       {invocation.nnefArchive, invocation.nnefDir})
    if (path && failed(nnef::exportNnefTo(module, *path, options)))
      return 1;
  if (invocation.nnefGraph) {
    nnef::ModelFiles files;
    if (failed(nnef::exportNnef(module, files, options)))
      return 1;
    std::string error;
    auto out = openOutputFile(*invocation.nnefGraph, &error);
    if (!out)
      return fail(error);
    out->os() << files.files["graph.nnef"];
    out->keep();
  }
  return 0;
}

int dump(ModuleOp module, const cli::Invocation &invocation) {
  if (invocation.nnefArchive || invocation.nnefDir || invocation.nnefGraph) {
    if (int status = exportNnef(module, invocation))
      return status;
    // Writing a model prints nothing more unless asked to.
    if (!invocation.dumpMlir && !invocation.dumpCost &&
        !invocation.dumpProfile && !invocation.dumpJson)
      return 0;
  }
  if (invocation.quiet)
    return 0;
  if (invocation.dumpMlir) {
    module.print(llvm::outs());
    llvm::outs() << "\n";
    return 0;
  }
  func::FuncOp entry = cli::entryFunction(module);
  if (!entry)
    return fail("the model has no function to list");
  cli::DumpOptions options;
  options.cost = invocation.dumpCost;
  options.json = invocation.dumpJson;
  std::optional<cli::ModelProfile> profile;
  if (invocation.dumpProfile) {
    auto measured = profileModel(module, invocation);
    if (!measured)
      return fail(measured.takeError());
    profile = std::move(*measured);
    options.profile = &*profile;
  }
  // Which ops run on the device (with --profile, how often is shown).
  std::vector<OpPlacement> placements;
  if (!invocation.gpu.empty() && !invocation.dumpProfile) {
    auto placed = placeOnGpu(module, entry.getName(), jitOptions(invocation));
    if (!placed)
      return fail(placed.takeError());
    placements = std::move(*placed);
    options.gpu = invocation.gpu;
    options.placements = &placements;
  }
  cli::printListing(entry, options, llvm::outs());
  return 0;
}

/// A runtime library next to the tools: <prefix>/runtime/<library>
/// for <prefix>/bin/tract.
std::string runtimeLibraryPath(const char *argv0, llvm::StringRef library) {
  std::string executable = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&runtimeLibraryPath));
  llvm::SmallString<256> path(
      llvm::sys::path::parent_path(llvm::sys::path::parent_path(executable)));
  llvm::sys::path::append(path, "runtime", library);
  return path.str().str();
}

/// LLVM's OpenMP runtime that code made for several threads links, as
/// found when tract was built; "" when it is gone.
std::string openmpLibraryPath() {
  llvm::StringRef path = TRACT_OPENMP_LIBRARY;
  return llvm::sys::fs::exists(path) ? path.str() : "";
}

/// A C identifier from a file name: `silero-vad.o` gives `silero_vad`.
std::string modelNameFor(llvm::StringRef output) {
  std::string name = llvm::sys::path::stem(output).str();
  for (char &c : name)
    if (!llvm::isAlnum(c))
      c = '_';
  if (name.empty() || llvm::isDigit(name.front()))
    name = "model_" + name;
  return name;
}

int compile(ModuleOp module, const cli::Invocation &invocation,
            const char *argv0, TimingScope &timing) {
  if (!invocation.output)
    return fail("compile needs -o FILE: an object file (model.o) or a shared "
                "library (model.so)");
  llvm::StringRef output = *invocation.output;
  bool shared = output.ends_with(".so");
  // --target vulkan: the host's CPU, the tensor ops on a Vulkan device (as
  // --gpu vulkan).
  std::string gpu = invocation.gpu;
  bool onGpu = invocation.target &&
               (*invocation.target == "vulkan" ||
                *invocation.target == "cuda" || *invocation.target == "metal");
  if (onGpu)
    gpu = *invocation.target;
  // Metal's host is a Mac, whatever this one is.
  const CpuTarget *target = gpu == "metal" ? &metalHostTarget()
                            : invocation.target && !onGpu
                                ? lookupCpuTarget(*invocation.target)
                                : hostCpuTarget();
  if (!target) {
    std::string names;
    for (const CpuTarget &known : cpuTargets())
      names += (names.empty() ? "" : ", ") + known.name.str();
    return fail(
        invocation.target
            ? "unknown --target '" + *invocation.target +
                  "'; expected one of " + names + ", vulkan, cuda, metal"
            : "the host is none of the targets (" + names + "); give --target");
  }
  if (shared && target != hostCpuTarget())
    return fail("a shared library is built for the host only; for " +
                target->name + ", write an object file (-o model.o)");
  if (gpu == "metal" && invocation.target && !onGpu)
    return fail("--gpu metal compiles for a Mac (" + target->triple.str() +
                "), not " + *invocation.target);
  if (gpu == "metal" && *invocation.threads > 1)
    return fail("--threads " + llvm::Twine(*invocation.threads) +
                ": a Mac has no OpenMP runtime by default; compile Metal "
                "models for one thread");
  if (!gpu.empty() && gpu != "metal" && target != hostCpuTarget())
    return fail("--gpu " + gpu + " compiles for the host's CPU, not " +
                target->name);
  AotOptions options;
  options.target = target;
  options.gpu = gpu;
  options.spirvDir = invocation.spirvDir;
  options.mslDir = invocation.mslDir;
  options.ptxDir = invocation.ptxDir;
  options.cudaPath = invocation.cudaPath;
  options.cpu = invocation.cpu.value_or("");
  // For CUDA, --cpu names the chip; the host's CPU is its baseline.
  if (gpu == "cuda") {
    options.gpuChip = invocation.cpu.value_or("sm_80");
    if (!llvm::StringRef(options.gpuChip).starts_with("sm_"))
      return fail("--cpu '" + options.gpuChip +
                  "' for cuda: expected a chip such as sm_80 or sm_90");
    options.cpu = "";
    // Code for the chip, where a toolkit can assemble it; else the driver
    // compiles the PTX when the program loads it.
    llvm::Expected<std::string> toolkit =
        resolveCudaToolkit(invocation.cudaPath);
    if (!toolkit)
      return fail(toolkit.takeError());
    // The toolkit found, so that the compiler does not look again.
    options.cudaPath = *toolkit;
    options.cudaFatbin = hasCudaAssembler(*toolkit);
    if (!options.cudaFatbin)
      llvm::errs() << "tract: note: no CUDA toolkit with ptxas and "
                      "fatbinary: the object holds PTX, which the driver "
                      "compiles when the program starts\n";
  }
  options.threads = *invocation.threads;
  options.threadingThreshold = invocation.threadingThreshold.value_or(-1);
  options.timing = &timing;
  options.name = invocation.name ? *invocation.name : modelNameFor(output);
  if (!isValidModelName(options.name))
    return fail("--name '" + options.name +
                "' is not a C identifier (letters, digits and _)");
  // The MSL is in the object, and in files for Xcode's tools.
  if (gpu == "metal" && options.mslDir.empty()) {
    llvm::SmallString<128> folder = llvm::sys::path::parent_path(output);
    llvm::sys::path::append(folder, options.name + "_metal");
    options.mslDir = folder.str().str();
  }

  // A shared library links the object with the runtime.
  llvm::SmallString<128> objectPath(output);
  if (shared) {
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile(options.name, "o", objectPath))
      return fail("cannot create a temporary object file: " + ec.message());
  }
  std::error_code ec;
  llvm::ToolOutputFile object(objectPath, ec, llvm::sys::fs::OF_None);
  if (ec)
    return fail("cannot write " + objectPath + ": " + ec.message());
  auto signature = compileToObject(module, options, object.os());
  if (!signature)
    return fail(signature.takeError());
  object.os().close();
  if (object.os().has_error())
    return fail("cannot write " + objectPath);
  object.keep();

  if (invocation.header) {
    llvm::ToolOutputFile header(*invocation.header, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return fail("cannot write " + *invocation.header + ": " + ec.message());
    header.os() << generateHeader(*signature, options, invocation.model);
    header.keep();
  }
  if (!shared)
    return 0;

  auto cc = llvm::sys::findProgramByName("cc");
  if (!cc)
    return fail("linking a shared library needs a C compiler driver 'cc' on "
                "the PATH");
  std::string runtime = runtimeLibraryPath(argv0, "libtract_runtime.a");
  if (!llvm::sys::fs::exists(runtime))
    return fail("the runtime library is not at " + runtime);
  llvm::SmallVector<llvm::StringRef> command = {
      *cc, "-shared", "-o", output, objectPath, "-Wl,--whole-archive"};
  // The GPU runtime, which opens the Vulkan loader at run time.
  std::string gpuRuntime;
  if (!gpu.empty()) {
    gpuRuntime = runtimeLibraryPath(argv0, "libtract_runtime_" + gpu + ".a");
    if (!llvm::sys::fs::exists(gpuRuntime))
      return fail("the GPU runtime library is not at " + gpuRuntime);
    command.push_back(gpuRuntime);
  }
  command.append({runtime, "-Wl,--no-whole-archive", "-lm"});
  if (!gpu.empty())
    command.append({"-ldl", "-lpthread"});
  // Code made for several threads calls LLVM's OpenMP runtime.
  std::string openmp, rpath;
  if (options.threads > 1) {
    openmp = openmpLibraryPath();
    if (openmp.empty())
      return fail("--threads " + llvm::Twine(options.threads) +
                  ": LLVM's OpenMP runtime (libomp) is not installed");
    rpath = "-Wl,-rpath," + llvm::sys::path::parent_path(openmp).str();
    command.push_back(openmp);
    command.push_back(rpath);
  }
  std::string message;
  int status =
      llvm::sys::ExecuteAndWait(*cc, command, std::nullopt, {}, 0, 0, &message);
  llvm::sys::fs::remove(objectPath);
  if (status != 0)
    return fail("linking " + output + " failed" +
                (message.empty() ? "" : ": " + message));
  return 0;
}

/// Adds --scenario and --assert to the model's scenarios and assertions, as
/// tract does: `name: rule` asserts in a scenario, anything else always.
/// Fails with the message in `error`.
llvm::Error addAssertions(ModuleOp module, const cli::Invocation &invocation) {
  if (invocation.scenarios.empty() && invocation.assertions.empty())
    return llvm::Error::success();
  Builder builder(module.getContext());
  std::set<std::string> symbols = collectModuleSymbols(module);

  SmallVector<Attribute> global;
  if (auto existing = module->getAttrOfType<ArrayAttr>(kAssertionsAttrName))
    llvm::append_range(global, existing);
  // Scenario names in order, each with its assertions.
  SmallVector<std::pair<std::string, SmallVector<Attribute>>> scenarios;
  if (auto existing = module->getAttrOfType<DictionaryAttr>(kScenariosAttrName))
    for (NamedAttribute scenario : existing)
      scenarios.emplace_back(
          scenario.getName().str(),
          llvm::to_vector(cast<ArrayAttr>(scenario.getValue()).getValue()));
  auto scenarioNamed = [&](StringRef name) -> SmallVector<Attribute> & {
    for (auto &[existing, relations] : scenarios)
      if (existing == name)
        return relations;
    scenarios.emplace_back(name.str(), SmallVector<Attribute>());
    return scenarios.back().second;
  };
  auto isIdentifier = [](StringRef name) {
    std::optional<TDim> parsed = TDim::parse(name);
    return parsed && parsed->getSymbolName() == name.str();
  };

  for (StringRef name : invocation.scenarios) {
    if (!isIdentifier(name.trim())) {
      return cli::makeError("--scenario expects a name, not '" + name.str() +
                            "'");
    }
    scenarioNamed(name.trim());
  }
  for (StringRef text : invocation.assertions) {
    auto [scenario, rule] = text.split(':');
    if (rule.empty())
      std::swap(scenario, rule);
    scenario = scenario.trim();
    rule = rule.trim();
    if (!scenario.empty() && !isIdentifier(scenario)) {
      return cli::makeError("--assert '" + text.str() + "': '" +
                            scenario.str() + "' is not a scenario name");
    }
    std::string reason;
    std::optional<DimRelation> relation = DimRelation::parse(rule, &reason);
    if (!relation) {
      return cli::makeError("--assert '" + text.str() + "': " + reason);
    }
    std::set<std::string> used;
    relation->lhs.collectSymbols(used);
    relation->rhs.collectSymbols(used);
    for (const std::string &symbol : used)
      if (!symbols.count(symbol)) {
        return cli::makeError("--assert '" + text.str() +
                              "': the model has no symbol '" + symbol + "'");
      }
    Attribute attr = builder.getStringAttr(relation->toString());
    if (scenario.empty())
      global.push_back(attr);
    else
      scenarioNamed(scenario).push_back(attr);
  }
  if (!global.empty())
    module->setAttr(kAssertionsAttrName, builder.getArrayAttr(global));
  if (!scenarios.empty()) {
    SmallVector<NamedAttribute> entries;
    for (auto &[name, relations] : scenarios)
      entries.push_back(
          builder.getNamedAttr(name, builder.getArrayAttr(relations)));
    module->setAttr(kScenariosAttrName, builder.getDictionaryAttr(entries));
  }
  return llvm::Error::success();
}

/// `--pulse S=8`, or `--pulse 8` for a model with one symbol or a symbol S.
llvm::Expected<TractPulsifyOptions> parsePulse(llvm::StringRef text) {
  TractPulsifyOptions options;
  auto [name, value] = text.split('=');
  if (value.empty() && !text.contains('='))
    std::swap(name, value);
  if (value.getAsInteger(10, options.pulse) || options.pulse <= 0) {
    return cli::makeError(
        "--pulse '" + text.str() +
        "': expected SYMBOL=FRAMES (S=8), or FRAMES for a model with "
        "one symbol or a symbol S");
  }
  options.symbol = name.str();
  return options;
}

int notImplemented(llvm::StringRef what) {
  return fail(what + " is not implemented yet");
}

} // namespace

namespace {

/// The model's entry function, or failure with `error` said.
llvm::Expected<func::FuncOp> entryOrError(ModuleOp module) {
  func::FuncOp main = cli::entryFunction(module);
  if (!main) {
    return cli::makeError("the model has no function");
  }
  return main;
}

/// An input's name as dump lists it: its tract.name, else input_N.
std::string inputName(func::FuncOp main, unsigned index) {
  auto given = main.getArgAttrOfType<StringAttr>(index, "tract.name");
  return given ? given.str() : "input_" + std::to_string(index);
}

/// --output-node: the named values become the entry function's results, in
/// order; a name is an op's (its location), an output's or an input's.
llvm::Error selectOutputs(ModuleOp module, llvm::ArrayRef<std::string> names) {
  llvm::Expected<func::FuncOp> entry = entryOrError(module);
  if (!entry)
    return entry.takeError();
  func::FuncOp main = *entry;
  Block &body = main.getBody().front();
  Operation *terminator = body.getTerminator();
  auto find = [&](llvm::StringRef name) -> Value {
    for (unsigned i = 0; i < main.getNumResults(); ++i)
      if (auto given = main.getResultAttrOfType<StringAttr>(i, "tract.name");
          given && given.getValue() == name)
        return terminator->getOperand(i);
    for (BlockArgument argument : body.getArguments())
      if (inputName(main, argument.getArgNumber()) == name)
        return argument;
    for (Operation &op : body.without_terminator())
      if (op.getNumResults() == 1 && cli::nodeName(op.getLoc()) == name)
        return op.getResult(0);
    return nullptr;
  };
  SmallVector<Value> values;
  for (const std::string &name : names) {
    Value value = find(name);
    if (!value) {
      return cli::makeError("--output-node: the model has no node named '" +
                            name + "'");
    }
    values.push_back(value);
  }
  MLIRContext *context = module.getContext();
  terminator->setOperands(values);
  main.setType(FunctionType::get(context, main.getArgumentTypes(),
                                 ValueRange(values).getTypes()));
  SmallVector<DictionaryAttr> attributes;
  for (const std::string &name : names)
    attributes.push_back(DictionaryAttr::get(
        context, {NamedAttribute(StringAttr::get(context, "tract.name"),
                                 StringAttr::get(context, name))}));
  main.setAllResultAttrs(attributes);
  return llvm::Error::success();
}

/// --edge-left-context / --edge-right-context: every input of the model,
/// frames by features, is padded along its frames with copies of its first
/// and last frame before anything uses it, as tract does for Kaldi models
/// trained with context.
llvm::Error addEdgeContext(ModuleOp module, int64_t left, int64_t right) {
  llvm::Expected<func::FuncOp> main = entryOrError(module);
  if (!main)
    return main.takeError();
  Block &body = main->getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&body);
  for (BlockArgument input : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(input.getType());
    if (!type || type.getRank() != 2) {
      return cli::makeError(
          "--edge-left-context and --edge-right-context pad inputs of "
          "rank 2 (frames, features); input '" +
          inputName(*main, input.getArgNumber()) + "' has " +
          (type ? "rank " + std::to_string(type.getRank())
                : std::string("no rank")));
    }
    // Named as tract names it, after the input.
    Location loc = NameLoc::get(
        b.getStringAttr(inputName(*main, input.getArgNumber()) + "-pad"),
        input.getLoc());
    auto pad =
        PadOp::create(b, loc, input, ArrayRef<int64_t>{left, 0},
                      ArrayRef<int64_t>{right, 0}, PadMode::Edge, TypedAttr());
    input.replaceAllUsesExcept(pad, pad);
  }
  return llvm::Error::success();
}

/// --nnef-cycle: `module` written as NNEF (in memory) and read back.
OwningOpRef<ModuleOp> nnefCycle(ModuleOp module) {
  nnef::ModelFiles files;
  files.origin = "the model written as NNEF";
  if (failed(nnef::exportNnef(module, files)))
    return nullptr;
  return nnef::importNnefFiles(files, module.getContext());
}

/// --input-facts-from-bundle: the inputs' symbols take the values that the
/// bundle's tensors (matched by name, else by position) give their dims, as
/// --set would; ranks, known dims and types must agree.
llvm::Error setsFromBundle(ModuleOp module, llvm::StringRef path,
                           std::vector<std::string> &sets) {
  auto bundle = cli::loadBundle(path);
  if (!bundle)
    return bundle.takeError();
  llvm::Expected<func::FuncOp> main = entryOrError(module);
  if (!main)
    return main.takeError();
  auto signature = describeFunction(*main);
  if (!signature)
    return signature.takeError();
  SmallVector<Shape> shapes;
  SmallVector<const cli::HostTensor *> tensors;
  for (size_t position = 0; position < signature->inputs.size(); ++position) {
    const TensorSignature &input = signature->inputs[position];
    const cli::HostTensor *tensor = bundle->findInput(input.name);
    if (!tensor && input.role == TRACT_IO_DATA)
      tensor = bundle->getInput(position);
    shapes.emplace_back(input.shape.begin(), input.shape.end());
    tensors.push_back(tensor);
    if (!tensor)
      continue;
    auto mismatch = [&](const llvm::Twine &what) {
      return cli::makeError(("--input-facts-from-bundle: input '" + input.name +
                             "' is " + input.shapeString() + ", but '" + path +
                             "' holds " + tensor->summary() + " (" + what + ")")
                                .str());
    };
    if (tensor->getDtype() != input.dtype)
      return mismatch("another type");
    if (tensor->getRank() != int64_t(input.shape.size()))
      return mismatch("another rank");
    for (auto [dim, size] : llvm::zip(input.shape, tensor->getShape()))
      if (dim.isConstant() && dim.eval({}) != size)
        return mismatch("another size");
  }
  for (const SymbolSource &source : findSymbolSources(shapes)) {
    const cli::HostTensor *tensor = tensors[source.argument];
    if (!tensor)
      continue;
    int64_t size = tensor->getShape()[source.axis];
    int64_t value = llvm::divideFloorSigned(size - source.form.offset,
                                            source.form.coefficient);
    sets.push_back(source.form.symbol + "=" + std::to_string(value));
  }
  return llvm::Error::success();
}

/// The transforms of -t that are passes.
struct ModelTransforms {
  bool exportScanState = false; ///< tract-export-scan-state after the sets
  /// tract-block-quant after declutter, in this format (q4_0, f16).
  std::string blockQuant;
  bool detectKvCache = false;   ///< tract-detect-kv-cache after declutter
};

/// -t / --transform: tract's model transforms, as far as they are
/// implemented here: set_symbols(values:{"S":1, ...}) becomes --set S=1;
/// export_scan_state, block-quant, f16-weights and detect-kv-cache are
/// passes
/// (ModelTransforms).
llvm::Error setsFromTransform(llvm::StringRef transform,
                              std::vector<std::string> &sets,
                              ModelTransforms &passes) {
  llvm::StringRef text = transform.trim();
  auto unsupported = [&](const llvm::Twine &why) {
    return cli::makeError(("transform '" + transform + "': " + why).str());
  };
  if (text == "export_scan_state") {
    passes.exportScanState = true;
    return llvm::Error::success();
  }
  if (text == "block-quant" || text == "f16-weights") {
    passes.blockQuant = text == "block-quant" ? "q4_0" : "f16";
    return llvm::Error::success();
  }
  if (text == "detect-kv-cache") {
    passes.detectKvCache = true;
    return llvm::Error::success();
  }
  if (!text.consume_front("set_symbols"))
    return unsupported("not supported; the transforms are "
                       "set_symbols(values:{\"S\":1}), export_scan_state, "
                       "block-quant, f16-weights and detect-kv-cache");
  text = text.trim();
  if (!text.consume_front("(") || !text.consume_back(")"))
    return unsupported("expected set_symbols(values:{...})");
  text = text.trim();
  if (!text.consume_front("values"))
    return unsupported("expected the parameter 'values'");
  text = text.ltrim();
  if (!text.consume_front(":"))
    return unsupported("expected 'values:'");
  text = text.trim();
  if (!text.consume_front("{") || !text.consume_back("}"))
    return unsupported("expected a map {\"S\": 1, ...}");
  SmallVector<llvm::StringRef> entries;
  text.split(entries, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (llvm::StringRef entry : entries) {
    auto [key, value] = entry.split(':');
    key = key.trim();
    value = value.trim();
    if (!key.consume_front("\"") || !key.consume_back("\"") || key.empty())
      return unsupported("symbol names are quoted strings");
    int64_t number;
    if (value.getAsInteger(10, number))
      return unsupported("the value of '" + key + "' is not an integer");
    sets.push_back((key + "=" + llvm::Twine(number)).str());
  }
  return llvm::Error::success();
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::SmallVector<llvm::StringRef> args(argv + 1, argv + argc);
  llvm::Expected<cli::Invocation> invocation = cli::parse(args);
  if (!invocation) {
    fail(invocation.takeError());
    return 2;
  }
  if (invocation->help) {
    llvm::outs() << cli::usage();
    return 0;
  }
  if (invocation->version) {
    llvm::outs() << "tract-mlir " TRACT_VERSION " (MLIR " TRACT_LLVM_VERSION
                    ")\n";
    return 0;
  }
  // tract's stage names mean the stage they fall in here: the typing
  // stages come before declutter, before-optimize and optimize after.
  static const std::pair<llvm::StringRef, llvm::StringRef> kStages[] = {
      {"load", "load"},           {"analyse", "load"},
      {"incorporate", "load"},    {"type", "load"},
      {"declutter", "declutter"}, {"before-optimize", "declutter"},
      {"optimize", "declutter"},  {"linalg", "linalg"},
      {"llvm", "llvm"}};
  llvm::StringRef stage;
  if (invocation->stage) {
    for (auto [name, ours] : kStages)
      if (*invocation->stage == name)
        stage = ours;
    if (stage.empty())
      return fail("unknown --pass '" + *invocation->stage +
                  "'; expected load, declutter, linalg or llvm (or tract's "
                  "type, before-optimize, optimize)");
  }
  // Models run on one thread per core unless told; objects are made for
  // one thread (no thread library needed) unless told, and so is the IR
  // that dump prints.
  bool runs = invocation->subcommand == "run" ||
              invocation->subcommand == "bench" ||
              invocation->subcommand == "llm-bench" ||
              invocation->subcommand == "compare" ||
              (invocation->subcommand == "dump" && invocation->dumpProfile);
  if (!invocation->threads)
    invocation->threads =
        runs ? llvm::hardware_concurrency().compute_thread_count() : 1;
  if (runs && tract_set_threads(*invocation->threads) != TRACT_OK)
    return fail("--threads " + llvm::Twine(*invocation->threads) + ": " +
                tract_last_error());
  bool lowered = stage == "linalg" || stage == "llvm";
  if (lowered && (invocation->subcommand != "dump" || !invocation->dumpMlir))
    return fail("--pass " + stage +
                " stops after lowering, where only 'dump --mlir' applies");

  // --timing: the stages, printed to stderr when the manager goes away.
  DefaultTimingManager timingManager;
  timingManager.setEnabled(invocation->timing);
  TimingScope timing = timingManager.getRootScope();

  DialectRegistry registry;
  registerLoweringDialects(registry);
  MLIRContext context(registry);
  // Errors are one line about the model, not a dump of its IR.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  LoadOptions loadOptions;
  loadOptions.inputFacts.assign(invocation->inputFacts.begin(),
                                invocation->inputFacts.end());
  TimingScope importTiming = timing.nest("import");
  OwningOpRef<ModuleOp> module =
      loadModel(invocation->model, &context, loadOptions);
  if (!module)
    return 1;
  importTiming.stop();

  // --assert and --scenario add to the model's facts before --set, which
  // checks them.
  if (llvm::Error e = addAssertions(*module, *invocation))
    return fail(std::move(e));
  ModelTransforms transforms;
  for (const std::string &transform : invocation->transforms)
    if (llvm::Error e =
            setsFromTransform(transform, invocation->sets, transforms))
      return fail(std::move(e));
  if (invocation->inputFactsBundle)
    if (llvm::Error e = setsFromBundle(*module, *invocation->inputFactsBundle,
                                       invocation->sets))
      return fail(std::move(e));
  if (invocation->edgeLeftContext || invocation->edgeRightContext)
    if (llvm::Error e = addEdgeContext(*module, invocation->edgeLeftContext,
                                       invocation->edgeRightContext))
      return fail(std::move(e));
  if (!invocation->outputNodes.empty())
    if (llvm::Error e = selectOutputs(*module, invocation->outputNodes))
      return fail(std::move(e));
  if (!invocation->sets.empty()) {
    PassManager pm(&context);
    TractSetOptions options;
    options.values.assign(invocation->sets.begin(), invocation->sets.end());
    pm.addPass(createTractSet(options));
    TimingScope setTiming = timing.nest("set");
    if (failed(pm.run(*module)))
      return 1;
  }
  if (transforms.exportScanState) {
    PassManager pm(&context);
    pm.addPass(createTractExportScanState());
    if (failed(pm.run(*module)))
      return 1;
  }
  // compare runs the model as loaded against what the passes make of it.
  OwningOpRef<ModuleOp> reference;
  if (invocation->subcommand == "compare") {
    reference = module->clone();
    if (invocation->compareStage &&
        *invocation->compareStage != "load" &&
        *invocation->compareStage != "declutter")
      return fail("unknown compare --stage '" + *invocation->compareStage +
                  "'; expected load or declutter");
    if (invocation->compareStage == "load")
      stage = "load";
  }

  // As in tract, the model is decluttered unless --pass stops before
  // (load); -O asks for nothing more, since the code generator always
  // optimizes. --pulse declutters and pulsifies; --pass linalg and llvm go
  // on to the lowered IR.
  std::optional<TractPulsifyOptions> pulseOptions;
  if (invocation->pulse) {
    llvm::Expected<TractPulsifyOptions> parsed = parsePulse(*invocation->pulse);
    if (!parsed)
      return fail(parsed.takeError());
    pulseOptions = *parsed;
    if (stage == "load")
      return fail("--pulse works on the decluttered model, not at --pass "
                  "load");
  }
  bool declutter = stage != "load";
  // --nnef-cycle: the decluttered model goes through NNEF and back, and is
  // decluttered again below.
  if (declutter && invocation->nnefCycle) {
    PassManager pm(&context);
    buildDeclutterPipeline(pm);
    if (failed(pm.run(*module)))
      return 1;
    module = nnefCycle(*module);
    if (!module)
      return 1;
  }
  if (declutter) {
    PassManager pm(&context);
    TimingScope passTiming = timing.nest("declutter");
    buildDeclutterPipeline(pm);
    if (!transforms.blockQuant.empty())
      pm.addPass(createTractBlockQuant({transforms.blockQuant}));
    if (transforms.detectKvCache)
      pm.addPass(createTractDetectKvCache());
    if (pulseOptions)
      pm.addPass(createTractPulsify(*pulseOptions));
    if (lowered && pulseOptions)
      buildStepFunctionPipeline(pm);
    if (stage == "linalg")
      // As the llvm pipeline lowers it: behind its entry checks.
      buildLowerToLinalgPipeline(pm);
    else if (stage == "llvm") {
      TargetInfo target = TargetInfo::host();
      target.threads = *invocation->threads;
      target.threadingThreshold = invocation->threadingThreshold.value_or(-1);
      buildLowerToLLVMPipeline(pm, target);
    }
    if (passTiming)
      pm.enableTiming(passTiming);
    if (failed(pm.run(*module)))
      return 1;
  }
  // Compiled code and benchmarks take the state as inputs and outputs; so
  // does a run of a model that keeps key/value caches (one call, from the
  // caches the bundle gives or empty ones).
  bool keepsCaches = false;
  module->walk([&](DynKvCacheOp) { keepsCaches = true; });
  bool pulsified = cli::isPulsified(*module);
  if (!lowered &&
      ((pulsified && (invocation->subcommand == "compile" ||
                      invocation->subcommand == "bench")) ||
       (keepsCaches && !pulsified && invocation->subcommand != "dump"))) {
    PassManager pm(&context);
    buildStepFunctionPipeline(pm);
    if (failed(pm.run(*module)))
      return 1;
  }

  if (llvm::Error e = checkOpCounts(*module, *invocation))
    return fail(std::move(e));
  if (invocation->subcommand == "dump")
    return dump(*module, *invocation);
  if (invocation->subcommand == "run")
    return run(*module, *invocation, timing);
  if (invocation->subcommand == "bench")
    return bench(*module, *invocation, timing);
  if (invocation->subcommand == "llm-bench")
    return llmBench(*module, *invocation, timing);
  if (invocation->subcommand == "compile")
    return compile(*module, *invocation, argv[0], timing);
  if (invocation->subcommand == "compare")
    return compare(*reference, *module, *invocation, timing);
  return notImplemented("'" + invocation->subcommand + "'");
}
