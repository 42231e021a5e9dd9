//===- Runnable.cpp - compiled models: run, stream, bench, profile --------===//

#include "lib/Error.h"
#include "lib/Inputs.h"
#include "lib/Model.h"

#include "dialects/tract/TractDialect.h"
#include "conversion/LoweringUtils.h"
#include "pipelines/Pipelines.h"
#include "target/Passes.h"
#include "passes/Passes.h"
#include "runtime/tract_profile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/MathExtras.h"

#include <chrono>
#include <cstring>
#include <set>

using namespace mlir;
using namespace mlir::tract;
using namespace mlir::tract::lib;

namespace {

using Clock = std::chrono::steady_clock;

double millisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

/// A tensor's fact as tract prints it: `1,3,224,224,F32`.
std::string factOf(const tract_tensor &tensor) {
  std::string text;
  for (int32_t axis = 0; axis < tensor.rank; ++axis)
    text += std::to_string(tensor.dims[axis]) + ",";
  const char *dtype = tract_dtype_name(tensor.dtype);
  return text + (dtype ? dtype : "?");
}

std::string factOf(const TensorSignature &signature) {
  std::string shape = signature.shapeString();
  const char *dtype = tract_dtype_name(signature.dtype);
  return shape + (shape.empty() ? "" : ",") + (dtype ? dtype : "?");
}

/// Checks the data inputs against their signatures: count, type and rank
/// (the compiled code checks the dims).
llvm::Error checkDataInputs(llvm::ArrayRef<TensorSignature> signatures,
                            llvm::ArrayRef<const tract_tensor *> inputs) {
  if (inputs.size() != signatures.size()) {
    std::string expected;
    for (const TensorSignature &signature : signatures)
      expected += (expected.empty() ? "" : ", ") + signature.name + " (" +
                  factOf(signature) + ")";
    return makeError("the model takes " + llvm::Twine(signatures.size()) +
                     " input" + (signatures.size() == 1 ? "" : "s") + ", " +
                     llvm::Twine(inputs.size()) + " given; expected " +
                     expected);
  }
  for (auto [signature, input] : llvm::zip(signatures, inputs)) {
    if (!input)
      return makeError("input '" + signature.name + "' is missing");
    if (input->dtype != signature.dtype ||
        input->rank != static_cast<int32_t>(signature.shape.size()))
      return makeError("input '" + signature.name + "' is " + factOf(*input) +
                       ", the model expects " + factOf(signature));
  }
  return llvm::Error::success();
}

/// Code made for several threads calls LLVM's OpenMP runtime, which the JIT
/// looks up among the process's global symbols. A program that opened
/// libtract privately (as Python opens extensions) has the runtime loaded
/// but not global: it is made global once.
void exposeOpenmp() {
  static const bool exposed = [] {
    std::string error;
    return !llvm::sys::DynamicLibrary::LoadLibraryPermanently(
        TRACT_OPENMP_LIBRARY, &error);
  }();
  (void)exposed;
}

} // namespace

SymbolValues
mlir::tract::lib::bindSymbols(llvm::ArrayRef<TensorSignature> signatures,
                              llvm::ArrayRef<const tract_tensor *> inputs) {
  SmallVector<Shape> shapes;
  for (const TensorSignature &signature : signatures)
    shapes.emplace_back(signature.shape.begin(), signature.shape.end());
  SymbolValues values;
  for (const SymbolSource &source : findSymbolSources(shapes)) {
    if (source.argument >= inputs.size() || !inputs[source.argument] ||
        static_cast<int32_t>(source.axis) >= inputs[source.argument]->rank)
      continue;
    int64_t size = inputs[source.argument]->dims[source.axis];
    values[source.form.symbol] = llvm::divideFloorSigned(
        size - source.form.offset, source.form.coefficient);
  }
  return values;
}

//===----------------------------------------------------------------------===//
// Compiling
//===----------------------------------------------------------------------===//

llvm::Expected<std::unique_ptr<Runnable>>
Model::intoRunnable(const RunOptions &options, bool declutterFirst) {
  if (llvm::Error error = materialize())
    return std::move(error);
  if (declutterFirst && !decluttered)
    if (llvm::Error error = declutter())
      return std::move(error);
  std::unique_ptr<Runnable> runnable(new Runnable());
  runnable->context = context;
  runnable->module = module->clone();
  runnable->pulse = getPulseProperties(*runnable->module);
  ModuleOp copy = *runnable->module;
  // Compiled code takes the state as inputs and returns it.
  StateKinds kinds = stateKindsOf(copy);
  bool stateful = kinds.inside || kinds.asInputs;
  if (kinds.inside && !kinds.asInputs) {
    PassManager pm(context.get());
    buildStepFunctionPipeline(pm);
    diagnosticHandler->clear();
    if (failed(pm.run(copy)))
      return diagnosticHandler->takeError(
          "the model's state cannot be externalized");
  }
  JitOptions jit = options.toJit();
  runnable->threads = jit.threads;
  if (jit.threads > 1)
    exposeOpenmp();
  diagnosticHandler->clear();
  auto compiled = CompiledModel::compile(copy, jit, timing);
  if (!compiled)
    return diagnosticHandler->wrap(compiled.takeError());
  diagnosticHandler->flush();
  runnable->compiled = std::move(*compiled);
  runnable->stateful = stateful;
  for (const TensorSignature &signature : runnable->compiled->getInputs())
    if (signature.role == TRACT_IO_DATA)
      runnable->dataInputs.push_back(signature);
  for (const TensorSignature &signature : runnable->compiled->getOutputs())
    if (signature.role == TRACT_IO_DATA)
      runnable->dataOutputs.push_back(signature);
  return runnable;
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

Runnable::~Runnable() {
  // The compiled code goes before the weights it reads.
  compiled.reset();
}

llvm::Expected<std::vector<tract_tensor *>>
Runnable::run(llvm::ArrayRef<const tract_tensor *> inputs) const {
  if (llvm::Error error = checkDataInputs(dataInputs, inputs))
    return std::move(error);
  if (tract_set_threads(threads) != TRACT_OK)
    return makeError(tract_last_error());
  if (!stateful)
    return compiled->run(inputs);
  auto state = spawnState();
  if (!state)
    return state.takeError();
  return (*state)->run(inputs);
}

llvm::Expected<std::unique_ptr<State>>
Runnable::spawnState(const SymbolValues &symbols) const {
  return std::unique_ptr<State>(new State(*this, symbols));
}

State::~State() { tract_stream_free(stream); }

llvm::Expected<std::vector<tract_tensor *>>
State::run(llvm::ArrayRef<const tract_tensor *> inputs) {
  const Runnable &model = runnable;
  if (llvm::Error error = checkDataInputs(model.dataInputs, inputs))
    return std::move(error);
  if (tract_set_threads(model.threads) != TRACT_OK)
    return makeError(tract_last_error());
  const tract_model *compiled = &model.compiled->getRuntimeModel();
  if (!stream) {
    // The state's symbols: given, else read from these inputs' dims, else
    // 0 (a cache of no past).
    SymbolValues values = bindSymbols(model.dataInputs, inputs);
    for (const auto &[symbol, value] : symbols)
      values[symbol] = value;
    for (const TensorSignature &signature : model.compiled->getInputs()) {
      if (signature.role != TRACT_IO_STATE)
        continue;
      std::set<std::string> used;
      for (const TDim &dim : signature.shape)
        dim.collectSymbols(used);
      for (const std::string &symbol : used)
        values.try_emplace(symbol, 0);
    }
    // A stream length no one gave stays unbounded.
    for (const TensorSignature &signature : model.compiled->getInputs())
      if (signature.role == TRACT_IO_SYMBOL && !symbols.count(signature.name))
        values.erase(signature.name);
    std::vector<const char *> names;
    std::vector<int64_t> numbers;
    for (const auto &[symbol, value] : values) {
      names.push_back(symbol.c_str());
      numbers.push_back(value);
    }
    stream =
        tract_stream_new(compiled, names.size(), names.data(), numbers.data());
    if (!stream)
      return makeError(tract_last_error());
  }
  std::vector<tract_tensor *> outputs(model.dataOutputs.size() + 1, nullptr);
  if (tract_stream_run(stream, inputs.data(), outputs.data()) != TRACT_OK)
    return makeError(tract_last_error());
  outputs.pop_back();
  return outputs;
}

//===----------------------------------------------------------------------===//
// Streaming a batch
//===----------------------------------------------------------------------===//

namespace {

/// Frames [start, start + count) of `axis` of `tensor` into `target` at frame
/// `at`; frames outside `tensor` are left as they are in `target`.
void copyFrames(const HostTensor &tensor, int64_t axis, int64_t start,
                int64_t count, HostTensor &target, int64_t at) {
  int64_t frames = tensor.getShape()[axis];
  int64_t targetFrames = target.getShape()[axis];
  int64_t outer = 1;
  for (int64_t dim : tensor.getShape().take_front(axis))
    outer *= dim;
  if (tensor.getNumElements() == 0)
    return;
  // The bytes of one frame: the dims after `axis`.
  size_t row = tensor.getNumBytes() / (outer * frames);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t f = 0; f < count; ++f) {
      int64_t from = start + f, to = at + f;
      if (from < 0 || from >= frames || to < 0 || to >= targetFrames)
        continue;
      std::memcpy(target.data() + (o * targetFrames + to) * row,
                  tensor.data() + (o * frames + from) * row, row);
    }
}

} // namespace

llvm::Expected<std::vector<HostTensor>>
Runnable::streamBatch(llvm::ArrayRef<HostTensor> bundle) const {
  if (!pulse)
    return makeError("the model has no pulse properties");
  const PulseProperties &pulsed = *pulse;
  if (dataOutputs.size() != pulsed.outputAxes.size())
    return makeError("the pulse properties describe " +
                     llvm::Twine(pulsed.outputAxes.size()) +
                     " outputs, the model has " +
                     llvm::Twine(dataOutputs.size()));

  // The inputs from the bundle, by name else position, and the symbols
  // their dims give: the stream length from the streamed axis, the others
  // from the pulsed shapes.
  SymbolValues values;
  std::vector<const HostTensor *> given;
  std::optional<int64_t> length;
  for (auto [index, signature] : llvm::enumerate(dataInputs)) {
    const HostTensor *tensor = nullptr;
    for (const HostTensor &candidate : bundle)
      if (candidate.getName() == signature.name)
        tensor = &candidate;
    if (!tensor && index < bundle.size())
      tensor = &bundle[index];
    if (!tensor)
      return makeError("no value for input '" + signature.name + "'");
    if (tensor->getRank() != static_cast<int64_t>(signature.shape.size()))
      return makeError("input '" + signature.name + "' has rank " +
                       llvm::Twine(tensor->getRank()) + ", the model " +
                       llvm::Twine(signature.shape.size()));
    int64_t axis =
        index < pulsed.inputAxes.size() ? pulsed.inputAxes[index] : -1;
    for (auto [a, dim] : llvm::enumerate(signature.shape)) {
      if (static_cast<int64_t>(a) == axis) {
        int64_t frames = tensor->getShape()[a];
        if (length && *length != frames)
          return makeError("the streamed inputs have different lengths");
        length = frames;
      } else if (std::optional<std::string> symbol = dim.getSymbolName()) {
        values[*symbol] = tensor->getShape()[a];
      }
    }
    given.push_back(tensor);
  }
  if (!length)
    return makeError("no input streams over " + pulsed.symbol);
  values[pulsed.symbol] = *length;

  // Enough pulses for every output to reach the end of its batch value.
  int64_t steps = 0;
  SmallVector<int64_t> outputLengths;
  for (auto [o, signature] : llvm::enumerate(dataOutputs)) {
    std::optional<int64_t> frames = pulsed.outputLengths[o].eval(values);
    if (!frames || *frames < 0)
      return makeError("output '" + signature.name + "' has " +
                       pulsed.outputLengths[o].toString() +
                       " frames, which this input does not make positive");
    outputLengths.push_back(*frames);
    int64_t axis = pulsed.outputAxes[o];
    std::optional<int64_t> outputPulse = signature.shape[axis].getConstant();
    if (!outputPulse || *outputPulse <= 0)
      return makeError("output '" + signature.name + "' has no constant pulse");
    int64_t need = pulsed.delays[o] + *frames;
    steps = std::max(steps, (need + *outputPulse - 1) / *outputPulse);
  }

  auto state = spawnState(values);
  if (!state)
    return state.takeError();
  std::vector<std::vector<HostTensor>> pulses(dataOutputs.size());
  for (int64_t step = 0; step < steps; ++step) {
    std::vector<HostTensor> chunks;
    chunks.reserve(given.size());
    std::vector<tract_tensor> descriptors;
    descriptors.reserve(given.size());
    for (auto [index, tensor] : llvm::enumerate(given)) {
      int64_t axis =
          index < pulsed.inputAxes.size() ? pulsed.inputAxes[index] : -1;
      if (axis < 0) {
        auto copy = tensor->clone();
        if (!copy)
          return copy.takeError();
        chunks.push_back(std::move(*copy));
      } else {
        SmallVector<int64_t> shape(tensor->getShape());
        shape[axis] = pulsed.pulse;
        auto chunk = HostTensor::create(dataInputs[index].name,
                                        tensor->getDtype(), shape);
        if (!chunk)
          return chunk.takeError();
        copyFrames(*tensor, axis, step * pulsed.pulse, pulsed.pulse, *chunk, 0);
        chunks.push_back(std::move(*chunk));
      }
      auto descriptor = chunks.back().getRuntimeTensor();
      if (!descriptor)
        return descriptor.takeError();
      descriptors.push_back(*descriptor);
    }
    std::vector<const tract_tensor *> arguments;
    for (const tract_tensor &descriptor : descriptors)
      arguments.push_back(&descriptor);
    auto results = (*state)->run(arguments);
    if (!results)
      return results.takeError();
    for (auto [index, result] : llvm::enumerate(*results)) {
      auto tensor = HostTensor::fromRuntime(dataOutputs[index].name, result);
      if (!tensor)
        return tensor.takeError();
      pulses[index].push_back(std::move(*tensor));
    }
  }

  // The joined stream, from each output's delay, for its batch length.
  std::vector<HostTensor> batch;
  for (auto [o, signature] : llvm::enumerate(dataOutputs)) {
    int64_t axis = pulsed.outputAxes[o];
    const HostTensor &first = pulses[o].front();
    SmallVector<int64_t> shape(first.getShape());
    shape[axis] = outputLengths[o];
    auto output = HostTensor::create(signature.name, first.getDtype(), shape);
    if (!output)
      return output.takeError();
    int64_t outputPulse = first.getShape()[axis];
    for (auto [step, chunk] : llvm::enumerate(pulses[o]))
      copyFrames(chunk, axis, 0, outputPulse, *output,
                 static_cast<int64_t>(step) * outputPulse - pulsed.delays[o]);
    batch.push_back(std::move(*output));
  }
  return batch;
}

llvm::Expected<std::vector<HostTensor>>
Runnable::runPromptInChunks(llvm::ArrayRef<const tract_tensor *> inputs,
                            int64_t chunk) const {
  ArrayRef<TensorSignature> inputSignatures = compiled->getInputs(),
                            outputSignatures = compiled->getOutputs();
  if (chunk < 1)
    return makeError("the prompt chunk size must be positive");
  if (inputs.size() != inputSignatures.size())
    return makeError("expected " + llvm::Twine(inputSignatures.size()) +
                     " inputs, got " + llvm::Twine(inputs.size()));
  if (llvm::none_of(inputSignatures, [](const TensorSignature &signature) {
        return signature.role == TRACT_IO_STATE;
      }))
    return makeError("the prompt is cut into chunks for a model that keeps "
                     "its key/value caches (--llm or -t detect-kv-cache)");
  auto symbols = findLlmSymbols(inputSignatures);
  if (!symbols)
    return symbols.takeError();
  TDim tokens = TDim::symbol(symbols->tokens);
  auto axisOf = [&](const TensorSignature &signature) -> int64_t {
    for (auto [axis, dim] : llvm::enumerate(signature.shape))
      if (dim == tokens)
        return axis;
    return -1;
  };
  std::optional<size_t> tokenInput;
  for (auto [index, signature] : llvm::enumerate(inputSignatures)) {
    std::set<std::string> used;
    for (const TDim &dim : signature.shape)
      dim.collectSymbols(used);
    if (!used.count(symbols->tokens))
      continue;
    if (tokenInput || axisOf(signature) < 0)
      return makeError("input '" + signature.name + "' (" +
                       signature.shapeString() +
                       ") depends on the number of new tokens " +
                       symbols->tokens +
                       "; only the tokens are cut into chunks");
    tokenInput = index;
  }
  const TensorSignature &tokenSignature = inputSignatures[*tokenInput];
  int64_t axis = axisOf(tokenSignature);
  const tract_tensor *prompt = inputs[*tokenInput];
  llvm::ArrayRef<int64_t> promptShape(prompt->dims, prompt->rank);
  int64_t promptElements = 1;
  for (int64_t dim : promptShape)
    promptElements *= dim;
  auto whole = HostTensor::fromBytes(
      tokenSignature.name, prompt->dtype, promptShape,
      llvm::StringRef(static_cast<const char *>(prompt->data),
                      promptElements * tract_dtype_size(prompt->dtype)));
  if (!whole)
    return whole.takeError();
  int64_t length = whole->getShape()[axis];

  std::vector<const tract_tensor *> arguments(inputs.begin(), inputs.end());
  std::vector<HostTensor> states, outputs;
  std::vector<tract_tensor> stateDescriptors;
  std::vector<std::vector<HostTensor>> pieces(outputSignatures.size());
  for (int64_t start = 0; start < length || start == 0; start += chunk) {
    int64_t count = std::min(chunk, length - start);
    SmallVector<int64_t> shape(whole->getShape());
    shape[axis] = count;
    auto piece =
        HostTensor::create(tokenSignature.name, whole->getDtype(), shape);
    if (!piece)
      return piece.takeError();
    copyFrames(*whole, axis, start, count, *piece, 0);
    auto descriptor = piece->getRuntimeTensor();
    if (!descriptor)
      return descriptor.takeError();
    arguments[*tokenInput] = &*descriptor;
    auto results = compiled->run(arguments);
    if (!results)
      return results.takeError();
    outputs.clear();
    for (auto [signature, result] : llvm::zip(outputSignatures, *results)) {
      auto tensor = HostTensor::fromRuntime(signature.name, result);
      if (!tensor)
        return tensor.takeError();
      outputs.push_back(std::move(*tensor));
    }
    // The next chunk starts from the caches this one left.
    std::vector<HostTensor> next;
    for (const TensorSignature &signature : inputSignatures) {
      if (signature.role != TRACT_IO_STATE)
        continue;
      const std::string &name = signature.name;
      auto found = llvm::find_if(outputs, [&](const HostTensor &output) {
        return output.getName() == name;
      });
      if (found == outputs.end())
        return makeError("no output carries state '" + name + "'");
      auto copy = found->clone();
      if (!copy)
        return copy.takeError();
      next.push_back(std::move(*copy));
    }
    states = std::move(next);
    stateDescriptors.clear();
    stateDescriptors.reserve(states.size());
    size_t state = 0;
    for (auto [index, signature] : llvm::enumerate(inputSignatures)) {
      if (signature.role != TRACT_IO_STATE)
        continue;
      auto stateDescriptor = states[state++].getRuntimeTensor();
      if (!stateDescriptor)
        return stateDescriptor.takeError();
      stateDescriptors.push_back(*stateDescriptor);
      arguments[index] = &stateDescriptors.back();
    }
    for (auto [index, signature] : llvm::enumerate(outputSignatures))
      if (signature.role != TRACT_IO_STATE && axisOf(signature) >= 0) {
        auto copy = outputs[index].clone();
        if (!copy)
          return copy.takeError();
        pieces[index].push_back(std::move(*copy));
      }
    if (length == 0)
      break;
  }
  // The outputs over the tokens, joined.
  for (auto [index, signature] : llvm::enumerate(outputSignatures)) {
    int64_t outputAxis = axisOf(signature);
    if (signature.role == TRACT_IO_STATE || outputAxis < 0 ||
        pieces[index].size() < 2)
      continue;
    SmallVector<int64_t> shape(pieces[index].front().getShape());
    shape[outputAxis] = 0;
    for (const HostTensor &piece : pieces[index])
      shape[outputAxis] += piece.getShape()[outputAxis];
    auto joined = HostTensor::create(signature.name,
                                     pieces[index].front().getDtype(), shape);
    if (!joined)
      return joined.takeError();
    int64_t at = 0;
    for (const HostTensor &piece : pieces[index]) {
      int64_t frames = piece.getShape()[outputAxis];
      copyFrames(piece, outputAxis, 0, frames, *joined, at);
      at += frames;
    }
    outputs[index] = std::move(*joined);
  }
  return outputs;
}

//===----------------------------------------------------------------------===//
// Benchmarks and profiles
//===----------------------------------------------------------------------===//

llvm::Error
mlir::tract::lib::runOnce(const CompiledModel &model,
                          llvm::ArrayRef<const tract_tensor *> inputs) {
  auto results = model.run(inputs);
  if (!results)
    return results.takeError();
  for (tract_tensor *result : *results)
    tract_tensor_free(result);
  return llvm::Error::success();
}

llvm::Error
mlir::tract::lib::warmUp(const CompiledModel &model,
                         llvm::ArrayRef<std::vector<const tract_tensor *>> runs,
                         const BenchOptions &options) {
  Clock::time_point start = Clock::now();
  for (int64_t loop = 0; loop < options.warmupLoops ||
                         millisecondsSince(start) < options.warmupTimeMs;
       ++loop)
    for (const std::vector<const tract_tensor *> &inputs : runs)
      if (llvm::Error error = runOnce(model, inputs))
        return error;
  return llvm::Error::success();
}

llvm::Error mlir::tract::lib::timeRuns(
    const CompiledModel &model, llvm::ArrayRef<const tract_tensor *> inputs,
    int64_t maxRuns, double budgetMs, int64_t &runs, double &elapsedMs) {
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

namespace {

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

} // namespace

llvm::Expected<ModelProfile>
Model::profile(llvm::ArrayRef<const tract_tensor *> inputs,
               const RunOptions &options, const BenchOptions &bench) {
  if (llvm::Error error = materialize())
    return std::move(error);
  func::FuncOp entry = entryFunction(*module);
  if (!entry)
    return makeError("the model has no function to profile");
  int64_t slots =
      llvm::range_size(entry.getBody().front().without_terminator());

  // The model compiled as is and instrumented, each in turn, so that both
  // see the same machine load.
  OwningOpRef<ModuleOp> plain = module->clone();
  OwningOpRef<ModuleOp> instrumented = module->clone();
  PassManager pm(context.get());
  TractInstrumentProfileOptions instrumentation;
  instrumentation.entry = entry.getName().str();
  pm.addPass(createTractInstrumentProfile(instrumentation));
  diagnosticHandler->clear();
  if (failed(pm.run(*instrumented)))
    return diagnosticHandler->takeError("the model could not be instrumented");
  JitOptions jit = options.toJit();
  if (jit.threads > 1)
    exposeOpenmp();
  auto plainModel = CompiledModel::compile(*plain, jit);
  if (!plainModel)
    return diagnosticHandler->wrap(plainModel.takeError());
  auto instrumentedModel = CompiledModel::compile(*instrumented, jit);
  if (!instrumentedModel)
    return diagnosticHandler->wrap(instrumentedModel.takeError());
  diagnosticHandler->flush();
  if (tract_set_threads(jit.threads) != TRACT_OK)
    return makeError(tract_last_error());

  if (llvm::Error error = (*plainModel)->checkInputs(inputs))
    return std::move(error);
  ModelProfile profile;
  profile.symbols = bindSymbols((*plainModel)->getInputs(), inputs);

  // One more slot measures the instrumentation itself.
  if (tract_profile_start(slots + 1) != TRACT_OK)
    return makeError(tract_last_error());
  llvm::scope_exit stop([] { tract_profile_stop(); });
  std::vector<const tract_tensor *> arguments(inputs.begin(), inputs.end());
  std::vector<std::vector<const tract_tensor *>> runs = {arguments};
  if (llvm::Error error = warmUp(**plainModel, runs, bench))
    return std::move(error);
  if (llvm::Error error = warmUp(**instrumentedModel, runs, bench))
    return std::move(error);
  tract_profile_reset();
  // The copies of the GPU runtimes, counted from here on.
  auto transfers = [](tract_profile_transfer kind) {
    std::pair<int64_t, int64_t> counted;
    tract_profile_transfers(kind, &counted.first, &counted.second);
    return counted;
  };
  // Those of the plain runs: the instrumented model's calls around each op
  // end its batches there, so that each op's time holds its kernels.
  auto weightsBefore = transfers(TRACT_TRANSFER_WEIGHTS);
  int64_t uploads = 0, uploadBytes = 0, downloads = 0, downloadBytes = 0;
  // Short turns, so that a change of machine load hits both models alike,
  // until each model has run for maxTimeMs or maxLoops.
  double turnMs = std::min(20.0, bench.maxTimeMs);
  double plainMs = 0, instrumentedMs = 0;
  do {
    auto uploadsBefore = transfers(TRACT_TRANSFER_UPLOADS);
    auto downloadsBefore = transfers(TRACT_TRANSFER_DOWNLOADS);
    if (llvm::Error error = timeRuns(**plainModel, inputs, bench.maxLoops,
                                     turnMs, profile.benchRuns, plainMs))
      return std::move(error);
    auto uploadsAfter = transfers(TRACT_TRANSFER_UPLOADS);
    auto downloadsAfter = transfers(TRACT_TRANSFER_DOWNLOADS);
    uploads += uploadsAfter.first - uploadsBefore.first;
    uploadBytes += uploadsAfter.second - uploadsBefore.second;
    downloads += downloadsAfter.first - downloadsBefore.first;
    downloadBytes += downloadsAfter.second - downloadsBefore.second;
    if (llvm::Error error =
            timeRuns(**instrumentedModel, inputs, bench.maxLoops, turnMs,
                     profile.runs, instrumentedMs))
      return std::move(error);
  } while (plainMs < bench.maxTimeMs && instrumentedMs < bench.maxTimeMs &&
           profile.benchRuns < bench.maxLoops && profile.runs < bench.maxLoops);
  profile.benchMs = plainMs / profile.benchRuns;
  profile.instrumentedMs = instrumentedMs / profile.runs;
  if (!jit.gpu.empty()) {
    auto weights = transfers(TRACT_TRANSFER_WEIGHTS);
    double runs = static_cast<double>(profile.benchRuns);
    ModelProfile::Transfers counted;
    counted.uploads = uploads / runs;
    counted.uploadBytes = uploadBytes / runs;
    counted.downloads = downloads / runs;
    counted.downloadBytes = downloadBytes / runs;
    counted.weights = weights.first;
    counted.weightBytes = weights.second;
    counted.weightsAfterWarmUp = weights.first - weightsBefore.first;
    profile.transfers = counted;
  }
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
