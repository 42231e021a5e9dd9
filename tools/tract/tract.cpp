// tract: the user command line, compatible with tract's own. It parses the
// arguments, drives libtract (lib/Model.h) and prints what it returns.
#include "dialects/tract/TractOps.h"
#include "frontends/nnef/NnefExporter.h"
#include "lib/Bundle.h"
#include "lib/Dump.h"
#include "lib/Error.h"
#include "lib/Inputs.h"
#include "lib/Model.h"
#include "conversion/LoweringUtils.h"
#include "tools/tract/CommandLine.h"
#include "tools/tract/RunMemory.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <set>

using namespace mlir;
using namespace mlir::tract;

namespace {

/// How run, bench and dump --profile compile: for --threads threads.
lib::RunOptions runOptions(const cli::Invocation &invocation) {
  lib::RunOptions options;
  options.threads = invocation.threads.value_or(1);
  options.threadingThreshold = invocation.threadingThreshold.value_or(-1);
  options.gpu = invocation.gpu;
  options.spirvDir = invocation.spirvDir;
  options.mslDir = invocation.mslDir;
  options.ptxDir = invocation.ptxDir;
  options.cudaPath = invocation.cudaPath;
  options.cache = !invocation.noCache;
  return options;
}

/// bench's loop, from its options.
lib::BenchOptions benchOptions(const cli::Invocation &invocation) {
  lib::BenchOptions options;
  options.maxLoops = invocation.maxLoops;
  options.maxTimeMs = invocation.maxTimeMs;
  options.warmupLoops = invocation.warmupLoops;
  options.warmupTimeMs = invocation.warmupTimeMs;
  return options;
}

int fail(const llvm::Twine &message) {
  llvm::errs() << "tract: error: " << message << "\n";
  return 1;
}

/// An error of libtract: MLIR's diagnostics as they are, then its own line.
int fail(llvm::Error error) {
  int status = 1;
  llvm::handleAllErrors(
      std::move(error),
      [&](const lib::DiagnosedError &diagnosed) {
        llvm::errs() << diagnosed.getDiagnostics();
        if (!diagnosed.getMessage().empty())
          fail(diagnosed.getMessage());
      },
      [&](const llvm::ErrorInfoBase &other) { fail(other.message()); });
  return status;
}

/// --assert-op-count: the model has that many ops of each of tract's names.
llvm::Error checkOpCounts(lib::Model &model,
                          const cli::Invocation &invocation) {
  for (const auto &[tractName, expected] : invocation.opCounts) {
    llvm::Expected<int64_t> count = model.countOps(tractName);
    if (!count)
      return lib::makeError("--assert-op-count: " +
                            llvm::toString(count.takeError()));
    if (*count != expected)
      return lib::makeError("--assert-op-count: expected " +
                            std::to_string(expected) + " " + tractName + " op" +
                            (expected == 1 ? "" : "s") + ", found " +
                            std::to_string(*count));
  }
  return llvm::Error::success();
}

/// --assert-output: `name:1,1,f32` or `name:1,1,f32=0` against the output
/// of that name (or position, without a name): its shape, its type and,
/// with `=V`, the value of every element (exactly).
llvm::Error checkOutputFact(llvm::StringRef fact,
                            llvm::ArrayRef<lib::HostTensor> outputs) {
  auto fail = [&](const llvm::Twine &why) {
    return lib::makeError("--assert-output '" + fact + "': " + why);
  };
  auto [spec, valueText] = fact.split('=');
  llvm::StringRef name;
  if (spec.contains(':'))
    std::tie(name, spec) = spec.split(':');
  const lib::HostTensor *output = nullptr;
  for (const lib::HostTensor &candidate : outputs)
    if (!name.empty() && candidate.getName() == name)
      output = &candidate;
  if (name.empty() && !outputs.empty())
    output = &outputs.front();
  if (!output)
    return fail("the model has no output '" + name + "'");
  std::string expected = spec.lower(),
              got = llvm::StringRef(output->summary()).lower();
  if (expected != got)
    return fail("the output is " + output->summary());
  if (!fact.contains('='))
    return llvm::Error::success();
  double value;
  if (valueText.trim().getAsDouble(value))
    return fail("'" + valueText + "' is not a number");
  if (output->getDtype() != TRACT_DT_F32 &&
      output->getDtype() != TRACT_DT_F64 &&
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

/// The first values of `tensor`, as `[0.5, -1, 2, …]`; "" for the types
/// --steps does not show (f16, bf16, the narrow integers).
std::string previewValues(const lib::HostTensor &tensor) {
  static const tract_dtype kShownTypes[] = {
      TRACT_DT_F32, TRACT_DT_F64, TRACT_DT_I32, TRACT_DT_I64, TRACT_DT_BOOL};
  if (!llvm::is_contained(kShownTypes, tensor.getDtype()))
    return "";
  constexpr int64_t kShown = 8;
  int64_t count = tensor.getNumElements();
  std::string text = "[";
  for (int64_t i = 0; i < std::min(count, kShown); ++i)
    text += (i ? ", " : "") + lib::elementText(tensor, i);
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
std::optional<lib::Approximation>
approximationOf(const cli::Invocation &invocation, llvm::StringRef fallback) {
  std::string approx = invocation.approx.value_or(fallback.str());
  std::optional<lib::Approximation> level = lib::parseApproximation(approx);
  if (!level)
    fail("unknown --approx '" + approx +
         "'; expected exact, close, approximate, very, super or ultra");
  return level;
}

/// The host copies of what a runnable's data outputs are.
llvm::Expected<std::vector<lib::HostTensor>>
hostOutputs(llvm::ArrayRef<TensorSignature> signatures,
            llvm::ArrayRef<tract_tensor *> results) {
  std::vector<lib::HostTensor> outputs;
  for (auto [signature, result] : llvm::zip(signatures, results)) {
    auto output = lib::HostTensor::fromRuntime(signature.name, result);
    if (!output)
      return output.takeError();
    outputs.push_back(std::move(*output));
  }
  return outputs;
}

llvm::Expected<std::optional<lib::Bundle>>
loadInputBundle(const cli::Invocation &invocation) {
  if (!invocation.inputBundle)
    return std::nullopt;
  auto bundle = lib::loadBundle(*invocation.inputBundle);
  if (!bundle)
    return bundle.takeError();
  return std::optional<lib::Bundle>(std::move(*bundle));
}

int run(lib::Model &model, const cli::Invocation &invocation) {
  std::optional<lib::Approximation> approximation =
      approximationOf(invocation, "close");
  if (!approximation)
    return 1;
  auto inputBundle = loadInputBundle(invocation);
  if (!inputBundle)
    return fail(inputBundle.takeError());
  std::optional<lib::Bundle> outputBundle;
  if (invocation.outputBundle) {
    auto bundle = lib::loadBundle(*invocation.outputBundle);
    if (!bundle)
      return fail(bundle.takeError());
    outputBundle = std::move(*bundle);
  }

  std::vector<lib::HostTensor> outputs;
  std::vector<lib::HostTensor> made;
  if (model.isPulsified()) {
    // A streaming model runs pulse by pulse on the whole input.
    if (invocation.steps)
      return fail("--steps shows the ops of a batch model, not of a stream");
    if (!*inputBundle)
      return fail("a pulsified model runs on --input-from-bundle");
    auto runnable = model.intoRunnable(runOptions(invocation), false);
    if (!runnable)
      return fail(runnable.takeError());
    cli::keepFreedBuffers();
    auto streamed = (*runnable)->streamBatch((*inputBundle)->getInputs());
    if (!streamed)
      return fail(streamed.takeError());
    outputs = std::move(*streamed);
  } else {
    // --steps: the model also returns every op's result, for printing.
    lib::Model *compiled = &model;
    std::unique_ptr<lib::Model> withSteps;
    std::vector<std::string> stepNames;
    auto signature = model.getSignature();
    if (!signature)
      return fail(signature.takeError());
    size_t numOutputs = signature->outputs.size();
    if (invocation.steps) {
      auto copy = model.clone();
      if (!copy)
        return fail(copy.takeError());
      withSteps = std::move(*copy);
      auto names = withSteps->returnEveryStep();
      if (!names)
        return fail(names.takeError());
      stepNames = std::move(*names);
      compiled = withSteps.get();
    }
    auto runnable = compiled->intoRunnable(runOptions(invocation), false);
    if (!runnable)
      return fail(runnable.takeError());
    const CompiledModel &code = (*runnable)->getCompiled();
    cli::keepFreedBuffers();
    lib::ModelInputs inputs;
    if (llvm::Error error = lib::prepareInputs(
            code.getInputs(), *inputBundle, invocation.allowRandomInput, inputs,
            invocation.allowFloatCasts, runSymbols(invocation)))
      return fail(std::move(error));
    made = std::move(inputs.made);

    if (invocation.promptChunkSize) {
      if (invocation.steps)
        return fail("--steps shows one run, not a prompt in chunks");
      auto chunked = (*runnable)->runPromptInChunks(inputs.arguments,
                                                    *invocation.promptChunkSize);
      if (!chunked)
        return fail(chunked.takeError());
      outputs = std::move(*chunked);
    }
    auto results = invocation.promptChunkSize
                       ? llvm::Expected<std::vector<tract_tensor *>>(
                             std::vector<tract_tensor *>())
                       : code.run(inputs.arguments);
    if (!results) {
      // The model's checks name the input; say where it came from.
      if (!*inputBundle)
        return fail(results.takeError());
      return fail(lib::makeError(llvm::toString(results.takeError()) +
                                 " (inputs from " +
                                 (*inputBundle)->getPath().str() + ")"));
    }
    if (!invocation.promptChunkSize) {
      auto returned = hostOutputs(code.getOutputs(), *results);
      if (!returned)
        return fail(returned.takeError());
      outputs = std::move(*returned);
    }
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
      if (code.getOutputs()[index].role == TRACT_IO_STATE)
        outputs.erase(outputs.begin() + index);
  }

  if (!invocation.quiet)
    for (const lib::HostTensor &output : outputs)
      llvm::outs() << "output '" << output.getName()
                   << "': " << output.summary() << "\n";
  if (invocation.saveOutputs)
    if (llvm::Error error = lib::writeNpz(*invocation.saveOutputs, outputs))
      return fail(std::move(error));
  for (const std::string &fact : invocation.outputFacts)
    if (llvm::Error error = checkOutputFact(fact, outputs))
      return fail(std::move(error));
  if (outputBundle) {
    int status = 0;
    for (auto [index, output] : llvm::enumerate(outputs)) {
      const lib::HostTensor *expected = lib::reinterpretBf16(
          lib::findTensor(outputBundle->getOutputs(), output.getName(), index),
          output.getDtype(), made);
      if (!expected && invocation.allowMissingOutputs) {
        llvm::errs() << "tract: note: the bundle has no value for output '"
                     << output.getName() << "': not checked\n";
        continue;
      }
      if (!expected) {
        llvm::errs() << "tract: error: the bundle has no value for output '"
                     << output.getName() << "'\n";
        status = 1;
        continue;
      }
      if (index == 0 && invocation.llmRbo) {
        auto overlap = lib::rankBiasedOverlap(*expected, output,
                                              invocation.llmRboP,
                                              invocation.llmRboDepth);
        if (!overlap)
          return fail(overlap.takeError());
        bool holds = overlap->lowest >= *invocation.llmRbo;
        if (!invocation.quiet || !holds)
          (holds ? llvm::outs() : llvm::errs())
              << (holds ? "" : "tract: error: ") << "output '"
              << output.getName() << "': rank-biased overlap "
              << llvm::format("%.4f", overlap->lowest) << " at worst, "
              << llvm::format("%.4f", overlap->mean) << " on average over "
              << overlap->vectors << " position(s) (p "
              << llvm::format("%g", invocation.llmRboP) << ", depth "
              << invocation.llmRboDepth << "; at least "
              << llvm::format("%g", *invocation.llmRbo) << " asked)\n";
        if (!holds)
          status = 1;
        continue;
      }
      // --allow-float-casts: the output is compared in the bundle's type.
      std::optional<lib::HostTensor> cast;
      if (invocation.allowFloatCasts &&
          expected->getDtype() != output.getDtype()) {
        auto converted = lib::castFloats(output, expected->getDtype());
        if (!converted)
          return fail("--allow-float-casts: output '" + output.getName().str() +
                      "': " + llvm::toString(converted.takeError()));
        cast = std::move(*converted);
      }
      const lib::HostTensor &compared = cast ? *cast : output;
      if (llvm::Error error =
              lib::compareTensors(*expected, compared, *approximation)) {
        llvm::errs() << "tract: error: output '" << output.getName()
                     << "': " << llvm::toString(std::move(error)) << "\n";
        status = 1;
      }
    }
    if (status)
      return status;
    if (!invocation.quiet)
      llvm::outs() << "outputs match the bundle ("
                   << lib::stringifyApproximation(*approximation) << ")\n";
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
int compare(lib::Model &reference, lib::Model &candidate,
            const cli::Invocation &invocation) {
  std::optional<lib::Approximation> approximation =
      approximationOf(invocation, "approximate");
  if (!approximation)
    return 1;
  auto referenceRunnable =
      reference.intoRunnable(runOptions(invocation), false);
  if (!referenceRunnable)
    return fail(referenceRunnable.takeError());
  const CompiledModel &referenceModel = (*referenceRunnable)->getCompiled();
  cli::keepFreedBuffers();

  // The inputs: the bundle's, then made up, the symbols no given input sets
  // at kCompareSymbolValue; the candidate runs on copies of them.
  auto given = loadInputBundle(invocation);
  if (!given)
    return fail(given.takeError());
  SymbolValues defaults;
  for (const TensorSignature &signature : referenceModel.getInputs())
    for (const TDim &dim : signature.shape) {
      std::set<std::string> symbols;
      dim.collectSymbols(symbols);
      for (const std::string &symbol : symbols)
        defaults.try_emplace(symbol, kCompareSymbolValue);
    }
  lib::ModelInputs referenceInputs;
  if (llvm::Error error = lib::prepareInputs(
          referenceModel.getInputs(), *given, invocation.allowRandomInput,
          referenceInputs, /*allowFloatCasts=*/false, defaults))
    return fail(std::move(error));
  std::vector<lib::HostTensor> tensors;
  for (auto [signature, tensor] :
       llvm::zip(referenceModel.getInputs(), referenceInputs.tensors)) {
    auto copy = tensor->clone();
    if (!copy)
      return fail(copy.takeError());
    copy->setName(signature.name);
    tensors.push_back(std::move(*copy));
  }
  std::optional<lib::Bundle> inputs(std::in_place, lib::BundleKind::Npz,
                                    "the compared inputs", std::move(tensors),
                                    std::vector<lib::HostTensor>());

  auto runOn = [](const CompiledModel &model, const lib::ModelInputs &arguments)
      -> llvm::Expected<std::vector<lib::HostTensor>> {
    auto results = model.run(arguments.arguments);
    if (!results)
      return results.takeError();
    return hostOutputs(model.getOutputs(), *results);
  };
  auto expected = runOn(referenceModel, referenceInputs);
  if (!expected)
    return fail(expected.takeError());

  auto candidateRunnable =
      candidate.intoRunnable(runOptions(invocation), false);
  if (!candidateRunnable)
    return fail(candidateRunnable.takeError());
  llvm::Expected<std::vector<lib::HostTensor>> got =
      std::vector<lib::HostTensor>();
  if ((*candidateRunnable)->getPulse()) {
    got = (*candidateRunnable)->streamBatch(inputs->getInputs());
  } else {
    const CompiledModel &candidateModel = (*candidateRunnable)->getCompiled();
    lib::ModelInputs candidateInputs;
    if (llvm::Error error =
            lib::prepareInputs(candidateModel.getInputs(), inputs,
                               /*allowRandom=*/false, candidateInputs))
      return fail(std::move(error));
    got = runOn(candidateModel, candidateInputs);
  }
  if (!got)
    return fail(got.takeError());
  if (got->size() != expected->size())
    return fail("the compared model has " + llvm::Twine(got->size()) +
                " outputs, the model as loaded " +
                llvm::Twine(expected->size()));
  int status = 0;
  for (auto [index, output] : llvm::enumerate(*got)) {
    const lib::HostTensor &wanted = (*expected)[index];
    if (llvm::Error error =
            lib::compareTensors(wanted, output, *approximation)) {
      llvm::errs() << "tract: error: output '" << output.getName()
                   << "': " << llvm::toString(std::move(error)) << "\n";
      status = 1;
    } else if (!invocation.quiet) {
      llvm::outs() << "output '" << output.getName()
                   << "': " << output.summary()
                   << " matches the model as loaded ("
                   << lib::stringifyApproximation(*approximation) << ")\n";
    }
  }
  return status;
}

/// bench's measure of `inputs`: the warm-up, then runs until --max-loops
/// or --max-time; their count and total time.
llvm::Error benchRuns(const CompiledModel &model,
                      const lib::ModelInputs &inputs,
                      const cli::Invocation &invocation, int64_t &loops,
                      double &elapsedMs) {
  loops = 0;
  elapsedMs = 0;
  if (llvm::Error error =
          lib::warmUp(model, {inputs.arguments}, benchOptions(invocation)))
    return error;
  return lib::timeRuns(model, inputs.arguments, invocation.maxLoops,
                       invocation.maxTimeMs, loops, elapsedMs);
}

/// Times the compiled model as tract's bench does: warm-up runs, then runs
/// until --max-loops or --max-time, whichever comes first.
int bench(lib::Model &model, const cli::Invocation &invocation) {
  auto inputBundle = loadInputBundle(invocation);
  if (!inputBundle)
    return fail(inputBundle.takeError());
  auto runnable = model.intoRunnable(runOptions(invocation), false);
  if (!runnable)
    return fail(runnable.takeError());
  const CompiledModel &code = (*runnable)->getCompiled();
  cli::keepFreedBuffers();
  lib::ModelInputs inputs;
  if (llvm::Error error = lib::prepareInputs(
          code.getInputs(), *inputBundle, /*allowRandom=*/true, inputs,
          /*allowFloatCasts=*/false, runSymbols(invocation)))
    return fail(std::move(error));
  int64_t loops;
  double elapsed;
  if (llvm::Error error = benchRuns(code, inputs, invocation, loops, elapsed))
    return fail(std::move(error));
  llvm::outs() << "Bench ran " << loops << " times, "
               << llvm::format("%.3f", loops ? elapsed / loops : 0.0)
               << " ms/i.\n";
  return 0;
}

using Clock = std::chrono::steady_clock;

/// tract's llm-bench: prompt processing of 512 tokens (S = 512, P = 0,
/// timed as bench times a run) and generation of 128 tokens (S = 1, P from
/// 0 to 127, one run each, their times summed), in tokens per second, with
/// made-up inputs and B = 1.
int llmBench(lib::Model &model, const cli::Invocation &invocation) {
  constexpr int64_t kPrompt = 512, kGenerated = 128;
  if (invocation.inputBundle)
    return fail("llm-bench makes up its inputs at each length; "
                "--input-from-bundle does not apply");
  auto runnable = model.intoRunnable(runOptions(invocation), false);
  if (!runnable)
    return fail(runnable.takeError());
  const CompiledModel &code = (*runnable)->getCompiled();
  auto symbols = lib::findLlmSymbols(code.getInputs());
  if (!symbols)
    return fail(symbols.takeError());
  cli::keepFreedBuffers();
  auto inputsAt = [&](int64_t tokens, int64_t past,
                      lib::ModelInputs &inputs) -> llvm::Error {
    SymbolValues values = runSymbols(invocation);
    if (symbols->batch)
      values[*symbols->batch] = 1;
    values[symbols->tokens] = tokens;
    values[symbols->past] = past;
    auto given = lib::llmStepInputs(code.getInputs(), 1, tokens, past);
    if (!given)
      return given.takeError();
    inputs.given = std::move(*given);
    return lib::prepareInputs(code.getInputs(), inputs.given,
                              /*allowRandom=*/true, inputs,
                              /*allowFloatCasts=*/false, values);
  };

  {
    lib::ModelInputs prompt;
    if (llvm::Error error = inputsAt(kPrompt, 0, prompt))
      return fail(std::move(error));
    int64_t loops;
    double elapsed;
    if (llvm::Error error = benchRuns(code, prompt, invocation, loops, elapsed))
      return fail(std::move(error));
    llvm::outs() << "PP" << kPrompt << ": "
                 << llvm::format("%.1f", kPrompt * loops / (elapsed / 1e3))
                 << " tokens/sec\n";
    llvm::outs().flush();
  }

  // Each step's inputs are made before its clock starts, one step's at a
  // time (all 128 pasts of a real model's cache would take more memory
  // than its weights); the warm-up passes over the 128 steps the same way.
  auto generate = [&](double *elapsed) -> llvm::Error {
    for (int64_t past = 0; past < kGenerated; ++past) {
      lib::ModelInputs step;
      if (llvm::Error error = inputsAt(1, past, step))
        return error;
      Clock::time_point start = Clock::now();
      if (llvm::Error error = lib::runOnce(code, step.arguments))
        return error;
      if (elapsed)
        *elapsed += std::chrono::duration<double, std::milli>(Clock::now() -
                                                              start)
                        .count();
    }
    return llvm::Error::success();
  };
  lib::BenchOptions warmup = benchOptions(invocation);
  Clock::time_point warmupStart = Clock::now();
  for (int64_t loop = 0;
       loop < warmup.warmupLoops ||
       std::chrono::duration<double, std::milli>(Clock::now() - warmupStart)
               .count() < warmup.warmupTimeMs;
       ++loop)
    if (llvm::Error error = generate(nullptr))
      return fail(std::move(error));
  double generation = 0;
  if (llvm::Error error = generate(&generation))
    return fail(std::move(error));
  llvm::outs() << "TG" << kGenerated << ": "
               << llvm::format("%.1f", kGenerated / (generation / 1e3))
               << " tokens/sec\n";
  return 0;
}

/// dump --profile: every op timed on the bundle's inputs or made-up ones.
llvm::Expected<lib::ModelProfile> profile(lib::Model &model,
                                          const cli::Invocation &invocation) {
  auto inputBundle = loadInputBundle(invocation);
  if (!inputBundle)
    return inputBundle.takeError();
  auto signature = model.getSignature();
  if (!signature)
    return signature.takeError();
  lib::ModelInputs inputs;
  if (llvm::Error error = lib::prepareInputs(
          signature->inputs, *inputBundle, /*allowRandom=*/true, inputs,
          invocation.allowFloatCasts, runSymbols(invocation)))
    return std::move(error);
  auto measured = model.profile(inputs.arguments, runOptions(invocation),
                                benchOptions(invocation));
  cli::keepFreedBuffers();
  return measured;
}

/// dump --nnef, --nnef-dir, --nnef-graph: the model written as NNEF.
int exportNnef(lib::Model &model, const cli::Invocation &invocation) {
  if (invocation.nnefArchive &&
      !nnef::isNnefArchivePath(*invocation.nnefArchive))
    return fail(
        "--nnef expects a .nnef.tgz, .tgz, .tar.gz or .tar path, not '" +
        *invocation.nnefArchive + "'; use --nnef-dir for a folder");
  for (const std::optional<std::string> &path :
       {invocation.nnefArchive, invocation.nnefDir})
    if (path)
      if (llvm::Error error = model.exportNnef(*path, invocation.nnefTractCore))
        return fail(std::move(error));
  if (invocation.nnefGraph) {
    auto graph = model.getNnefGraph(invocation.nnefTractCore);
    if (!graph)
      return fail(graph.takeError());
    std::string error;
    auto out = openOutputFile(*invocation.nnefGraph, &error);
    if (!out)
      return fail(error);
    out->os() << *graph;
    out->keep();
  }
  return 0;
}

int dump(lib::Model &model, const cli::Invocation &invocation) {
  if (invocation.nnefArchive || invocation.nnefDir || invocation.nnefGraph) {
    if (int status = exportNnef(model, invocation))
      return status;
    // Writing a model prints nothing more unless asked to.
    if (!invocation.dumpMlir && !invocation.dumpCost &&
        !invocation.dumpProfile && !invocation.dumpJson)
      return 0;
  }
  if (invocation.quiet)
    return 0;
  if (invocation.dumpMlir) {
    llvm::outs() << model.getMlir() << "\n";
    return 0;
  }
  lib::DumpOptions options;
  options.cost = invocation.dumpCost;
  options.json = invocation.dumpJson;
  std::optional<lib::ModelProfile> measured;
  if (invocation.dumpProfile) {
    auto timed = profile(model, invocation);
    if (!timed)
      return fail(timed.takeError());
    measured = std::move(*timed);
    options.profile = &*measured;
  }
  // Which ops run on the device (with --profile, how often is shown).
  std::vector<OpPlacement> placements;
  if (!invocation.gpu.empty() && !invocation.dumpProfile) {
    auto module = model.getModule();
    if (!module)
      return fail(module.takeError());
    func::FuncOp entry = lib::entryFunction(*module);
    if (!entry)
      return fail("the model has no function to list");
    auto placed =
        placeOnGpu(*module, entry.getName(), runOptions(invocation).toJit());
    if (!placed)
      return fail(model.getDiagnostics().wrap(placed.takeError()));
    placements = std::move(*placed);
    options.gpu = invocation.gpu;
    options.placements = &placements;
  }
  auto listing = model.listing(options);
  if (!listing)
    return fail(listing.takeError());
  llvm::outs() << *listing;
  return 0;
}

/// The folder of this program, near which the runtime libraries are.
std::string programDir(const char *argv0) {
  std::string executable = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&programDir));
  return llvm::sys::path::parent_path(executable).str();
}

int compile(lib::Model &model, const cli::Invocation &invocation,
            const char *argv0) {
  if (!invocation.output)
    return fail("compile needs -o FILE: an object file (model.o) or a shared "
                "library (model.so)");
  lib::CompileOptions options;
  options.target = invocation.target.value_or("");
  options.cpu = invocation.cpu.value_or("");
  options.name = invocation.name.value_or("");
  options.header = invocation.header.value_or("");
  options.source = invocation.model;
  options.threads = *invocation.threads;
  options.threadingThreshold = invocation.threadingThreshold.value_or(-1);
  options.gpu = invocation.gpu;
  options.spirvDir = invocation.spirvDir;
  options.mslDir = invocation.mslDir;
  options.ptxDir = invocation.ptxDir;
  options.cudaPath = invocation.cudaPath;
  options.binaryDir = programDir(argv0);
  if (llvm::Error error = model.compile(*invocation.output, options))
    return fail(std::move(error));
  return 0;
}

/// -t / --transform: set_symbols(values:{"S":1}) joins --set (the sets go
/// in one step, after the facts); export_scan_state follows the sets, and
/// the others follow declutter.
llvm::Error splitTransforms(llvm::ArrayRef<std::string> transforms,
                            std::vector<std::string> &sets,
                            std::vector<std::string> &afterSets,
                            std::vector<std::string> &afterDeclutter) {
  for (const std::string &transform : transforms) {
    llvm::StringRef text = llvm::StringRef(transform).trim();
    // tract spells its transforms with '-' or '_'.
    std::string name = text.str();
    std::replace(name.begin(), name.end(), '_', '-');
    if (text.starts_with("set_symbols")) {
      if (llvm::Error error = lib::parseSetSymbols(transform, sets))
        return error;
    } else if (text == "export_scan_state") {
      afterSets.push_back(transform);
    } else if (text == "block-quant" || text == "f16-weights" ||
               name == "detect-kv-cache" || name == "unfold-kv-cache" ||
               name == "transformers-detect-all") {
      afterDeclutter.push_back(transform);
    } else {
      return lib::makeError(
          "transform '" + transform +
          "': not supported; the transforms are "
          "set_symbols(values:{\"S\":1}), export_scan_state, block-quant, "
          "f16-weights, detect-kv-cache, unfold-kv-cache and "
          "transformers-detect-all (- or _ alike)");
    }
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
  // tract's commands without a model.
  if (invocation->subcommand == "list-ops") {
    // As tract prints them: per format, the names joined by commas.
    for (const auto &[format, ops] : lib::Model::supportedOps())
      llvm::outs() << format << ":\n\n" << llvm::join(ops, ", ") << "\n\n";
    return 0;
  }
  if (invocation->subcommand == "list-runtimes") {
    for (llvm::StringRef runtime :
         {"default", "unoptimized", "cuda", "vulkan", "metal"})
      llvm::outs() << " * " << runtime << "\n";
    return 0;
  }
  // tract's stage names mean the stage they fall in here: the typing
  // stages come before declutter, before-optimize and optimize after.
  static const std::pair<llvm::StringRef, llvm::StringRef> kStages[] = {
      {"load", "load"},
      {"analyse", "load"},
      {"incorporate", "load"},
      {"type", "load"},
      {"declutter", "declutter"},
      {"before-optimize", "declutter"},
      {"optimize", "declutter"},
      {"integers", "integers"},
      {"linalg", "linalg"},
      {"llvm", "llvm"}};
  llvm::StringRef stage;
  if (invocation->stage) {
    for (auto [name, ours] : kStages)
      if (*invocation->stage == name)
        stage = ours;
    if (stage.empty())
      return fail("unknown --pass '" + *invocation->stage +
                  "'; expected load, declutter, integers, linalg or llvm (or "
                  "tract's type, before-optimize, optimize)");
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
  bool lowered = stage == "integers" || stage == "linalg" || stage == "llvm";
  // The integers stage is still tract ops: dump lists it too.
  if (lowered && (invocation->subcommand != "dump" ||
                  (!invocation->dumpMlir && stage != "integers") ||
                  invocation->dumpProfile))
    return fail("--pass " + stage + " stops after lowering, where only 'dump" +
                (stage == "integers" ? "" : " --mlir") + "' applies");
  if (invocation->subcommand == "compare" && invocation->compareStage &&
      *invocation->compareStage != "load" &&
      *invocation->compareStage != "declutter")
    return fail("unknown compare --stage '" + *invocation->compareStage +
                "'; expected load or declutter");

  // --timing: the stages, printed to stderr when the manager goes away.
  DefaultTimingManager timingManager;
  timingManager.setEnabled(invocation->timing);
  TimingScope timing = timingManager.getRootScope();

  auto loaded = lib::Model::load(invocation->model);
  if (!loaded)
    return fail(loaded.takeError());
  lib::Model &model = **loaded;
  model.setEcho(&llvm::errs());
  model.setTiming(&timing);
  for (auto [index, fact] : llvm::enumerate(invocation->inputFacts))
    if (llvm::Error error = model.setInputFact(index, fact))
      return fail(std::move(error));
  if (auto module = model.getModule(); !module)
    return fail(module.takeError());

  // --assert and --scenario add to the model's facts before --set, which
  // checks them.
  if (llvm::Error error =
          model.addAssertions(invocation->assertions, invocation->scenarios))
    return fail(std::move(error));
  std::vector<std::string> afterSets, afterDeclutter;
  if (llvm::Error error = splitTransforms(
          invocation->transforms, invocation->sets, afterSets, afterDeclutter))
    return fail(std::move(error));
  if (invocation->inputFactsBundle) {
    auto signature = model.getSignature();
    if (!signature)
      return fail(signature.takeError());
    if (llvm::Error error = lib::setsFromBundle(
            *signature, *invocation->inputFactsBundle, invocation->sets))
      return fail(std::move(error));
  }
  if (llvm::Error error = model.addEdgeContext(invocation->edgeLeftContext,
                                               invocation->edgeRightContext))
    return fail(std::move(error));
  if (!invocation->outputNodes.empty())
    if (llvm::Error error = model.selectOutputs(invocation->outputNodes))
      return fail("--output-node: " + llvm::toString(std::move(error)));
  if (llvm::Error error = model.setSymbols(invocation->sets))
    return fail(std::move(error));
  for (const std::string &transform : afterSets)
    if (llvm::Error error = model.transform(transform))
      return fail(std::move(error));
  // compare runs the model as loaded against what the passes make of it.
  std::unique_ptr<lib::Model> reference;
  if (invocation->subcommand == "compare") {
    auto copy = model.clone();
    if (!copy)
      return fail(copy.takeError());
    reference = std::move(*copy);
    if (invocation->compareStage == "load")
      stage = "load";
  }

  // As in tract, the model is decluttered unless --pass stops before
  // (load); -O asks for nothing more, since the code generator always
  // optimizes. --pulse declutters and pulsifies; --pass linalg and llvm go
  // on to the lowered IR.
  if (invocation->pulse && stage == "load")
    return fail("--pulse works on the decluttered model, not at --pass "
                "load");
  if (stage != "load") {
    // --nnef-cycle: the decluttered model goes through NNEF and back, and
    // is decluttered again below.
    if (invocation->nnefCycle) {
      if (llvm::Error error = model.declutter())
        return fail(std::move(error));
      if (llvm::Error error = model.transform("nnef-cycle"))
        return fail(std::move(error));
    }
    if (llvm::Error error = model.declutter())
      return fail(std::move(error));
    for (const std::string &transform : afterDeclutter)
      if (llvm::Error error = model.transform(transform))
        return fail(std::move(error));
    if (invocation->pulse)
      if (llvm::Error error = model.pulse(*invocation->pulse)) {
        // The library names the transform, the command line its flag.
        std::string message = llvm::toString(std::move(error));
        return fail(llvm::StringRef(message).starts_with("pulse '")
                        ? "--" + message
                        : message);
      }
    if (lowered)
      if (llvm::Error error = model.lowerTo(stage, runOptions(*invocation)))
        return fail(std::move(error));
  }
  // Compiled objects take the state as inputs and outputs.
  if (!lowered && invocation->subcommand == "compile")
    if (llvm::Error error = model.externalizeState())
      return fail(std::move(error));

  if (llvm::Error error = checkOpCounts(model, *invocation))
    return fail(std::move(error));
  if (invocation->subcommand == "dump")
    return dump(model, *invocation);
  if (invocation->subcommand == "run")
    return run(model, *invocation);
  if (invocation->subcommand == "bench")
    return bench(model, *invocation);
  if (invocation->subcommand == "llm-bench")
    return llmBench(model, *invocation);
  if (invocation->subcommand == "compile")
    return compile(model, *invocation, argv[0]);
  if (invocation->subcommand == "compare")
    return compare(*reference, model, *invocation);
  return fail("'" + invocation->subcommand + "' is not implemented yet");
}
