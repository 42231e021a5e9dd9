#include "tools/tract/CommandLine.h"
#include "lib/Error.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"

#include <cmath>

using namespace mlir::tract::cli;
using llvm::StringRef;
using mlir::tract::lib::makeError;

namespace {

enum class Scope { Global, Dump, Run, Bench, Compare, Compile };

struct Flag {
  Scope scope;
  StringRef longName;  // with its dashes
  StringRef shortName; // may be empty
  bool takesValue;
  StringRef help;
};

// NNEF extension switches of tract: tract-mlir reads every extension and
// writes those a model needs, so these are accepted and change nothing, but
// --no-nnef-tract-core, which writes the NNEF specification's forms only.
const StringRef kNnefExtensionFlags[] = {
    "--nnef-tract-core",         "--nnef-tract-onnx",
    "--nnef-tract-pulse",        "--nnef-tract-extra",
    "--nnef-tract-transformers", "--nnef-extended-identifier",
    "--no-nnef-tract-core",      "--no-nnef-tract-onnx",
    "--no-nnef-tract-pulse",     "--no-nnef-tract-extra",
    "--no-nnef-tract-transformers",
};

const Flag kFlags[] = {
    {Scope::Global, "--input-facts", "-i", true,
     "input fact, e.g. 1,S,64,f32 or name:1,S,f32; sr:i64=16000 or "
     "@input_1.pb make the input a constant (repeatable)"},
    {Scope::Global, "--input-facts-from-bundle", "", true,
     "each input's shape and type from the tensor of its name in an .npz "
     "file or test_data_set folder"},
    {Scope::Global, "--transform", "-t", true,
     "transform the loaded model: set_symbols(values:{\"S\":1}) "
     "concretizes symbols as --set does; export_scan_state makes the state "
     "of a one-iteration stateful scan an input and an output; block-quant "
     "stores the constant weights of products as Q4_0 blocks, f16-weights "
     "as f16; detect-kv-cache keeps a decoder's key/value caches inside it, "
     "unfold-kv-cache makes them inputs and outputs again, "
     "transformers-detect-all is detect-kv-cache after the declutter that "
     "finds rotary embeddings and attention ('-' or '_' alike; "
     "repeatable)"},
    {Scope::Global, "--llm", "", false,
     "a causal language model: the transform transformers-detect-all "
     "before the others, as tract's --llm"},
    {Scope::Global, "--output-node", "", true,
     "make this node (an op's name, an output or an input) an output of "
     "the model; repeatable, in order, replacing the model's outputs"},
    {Scope::Global, "--edge-left-context", "", true,
     "pad every input's first axis (frames) with N copies of its first "
     "frame"},
    {Scope::Global, "--edge-right-context", "", true,
     "pad every input's first axis with N copies of its last frame"},
    {Scope::Global, "--kaldi-left-context", "", true,
     "the same as --edge-left-context"},
    {Scope::Global, "--kaldi-right-context", "", true,
     "the same as --edge-right-context"},
    {Scope::Global, "--nnef-cycle", "", false,
     "write the decluttered model as NNEF, read it back and declutter it "
     "again before going on"},
    {Scope::Global, "--onnx-ignore-output-shapes", "", false,
     "accepted: the output shapes an ONNX model declares are never used "
     "here (they are inferred)"},
    {Scope::Global, "--set", "", true,
     "concretize a symbol, e.g. S=3 or S=2*T+1 (repeatable)"},
    {Scope::Global, "--assert", "", true,
     "add an assertion, e.g. S>=1, or to a scenario: tg: S==1 (repeatable)"},
    {Scope::Global, "--scenario", "", true, "declare a scenario (repeatable)"},
    {Scope::Global, "--pulse", "", true, "pulsify, e.g. S=8"},
    {Scope::Global, "--pass", "", true,
     "stop at a stage: load (as imported), declutter (the default), "
     "integers (quantized values as their integers, the products that run "
     "on them), linalg or llvm (the last three for dump --mlir); tract's "
     "type, before-optimize and optimize are load, declutter and declutter"},
    {Scope::Global, "--optimize", "-O", false,
     "optimize, as tract: the model is decluttered in any case and the "
     "code generator always optimizes, so this adds nothing"},
    {Scope::Global, "--threads", "", true,
     "threads to run on: large ops share their tiles (default: one per "
     "core for run, bench and dump --profile; 1 for compile)"},
    {Scope::Global, "--threading-threshold", "", true,
     "the work, in flops, from which an op runs on threads (0: every op "
     "with a loop to share; default: the cost model weighs each fork)"},
    {Scope::Global, "--gpu", "", true,
     "run the model's tensor ops on a GPU through this API: vulkan or cuda "
     "(run, bench, dump, which marks the ops on the device, compile; the "
     "shape arithmetic and control stay on the CPU), or metal (compile "
     "only: a Mac's program)"},
    {Scope::Global, "--runtime", "-r", true,
     "tract's runtimes: default (the CPU; -O or not), unoptimized (the "
     "same here), cuda, vulkan or metal (as --gpu); 'tract list-runtimes' "
     "lists them"},
    {Scope::Global, "--cuda", "", false, "as tract's: --runtime cuda"},
    {Scope::Global, "--metal", "", false, "as tract's: --runtime metal"},
    {Scope::Global, "--opl", "", false,
     "accepted, as tract's: every NNEF extension is read in any case, "
     "escaped identifiers (i\"a.b\") included"},
    {Scope::Global, "--spirv-dir", "", true,
     "with --gpu vulkan (run, compile): also write the kernels' SPIR-V "
     "modules into this "
     "folder (for spirv-val)"},
    {Scope::Global, "--ptx-dir", "", true,
     "with --gpu cuda (run, compile): also write the kernels' PTX into "
     "this folder (for ptxas)"},
    {Scope::Global, "--cuda-path", "", true,
     "with --gpu cuda: the CUDA toolkit whose libdevice the kernels' math "
     "links (default: CUDA_PATH, CUDA_HOME, /usr/local/cuda or ptxas's)"},
    {Scope::Global, "--msl-dir", "", true,
     "with --gpu vulkan: also write each kernel as Metal Shading Language "
     "(SPIRV-Cross) into this folder; f64 ops then stay on the CPU, as "
     "Metal has no doubles (with --gpu metal, where they go: default "
     "NAME_metal next to the object)"},
    {Scope::Global, "--timing", "", false,
     "time the stages: import, declutter, each compiler pass, LLVM"},
    {Scope::Global, "--no-cache", "", false,
     "compile the model even if the compile cache holds it, and do not "
     "store it there (the cache: TRACT_CACHE_DIR, else tract-mlir in the "
     "user's cache folder; an empty TRACT_CACHE_DIR also turns it off)"},
    {Scope::Global, "--help", "-h", false, "print this help"},
    {Scope::Global, "--version", "-V", false, "print the version"},
    {Scope::Dump, "--mlir", "", false, "print the tract-dialect IR"},
    {Scope::Dump, "--quiet", "-q", false, "print nothing"},
    {Scope::Dump, "--nnef", "", true,
     "write the model as NNEF: a .nnef.tgz, .tgz, .tar.gz or .tar archive"},
    {Scope::Dump, "--nnef-dir", "", true,
     "write the model as NNEF into a folder (graph.nnef and .dat files)"},
    {Scope::Dump, "--nnef-graph", "", true,
     "write the model's graph.nnef text only (no tensor files)"},
    {Scope::Dump, "--cost", "", false,
     "print each op's FLOPs and bytes moved, symbolic where shapes are"},
    {Scope::Dump, "--profile", "", false,
     "time each op of the compiled model (ms/i, %, GF/s), next to bench's "
     "figure"},
    {Scope::Dump, "--json", "", false, "print the listing as JSON"},
    {Scope::Dump, "--set", "", true,
     "with --profile: S=3 sizes the made-up inputs; the model stays "
     "symbolic (repeatable)"},
    {Scope::Dump, "--assert-op-count", "", true,
     "OP N: fail unless the model has N ops of tract's name OP (Scan, "
     "GatherElements, Sigmoid...) after the passes (repeatable)"},
    {Scope::Dump, "--input-from-bundle", "", true,
     "with --profile: inputs from an .npz file or test_data_set folder "
     "(default: made up)"},
    {Scope::Dump, "--allow-random-input", "-R", false,
     "with --profile: make up the inputs the bundle does not give (as run "
     "does; dump --profile always may)"},
    {Scope::Dump, "--allow-float-casts", "", false,
     "with --profile: cast bundle inputs of another float type to the "
     "model's (as run's)"},
    {Scope::Dump, "--max-loops", "", true,
     "with --profile: stop after this many runs (default 100000)"},
    {Scope::Dump, "--max-time", "", true,
     "with --profile: milliseconds of runs, instrumented and not (default "
     "1000 each)"},
    {Scope::Dump, "--warmup-loops", "", true,
     "with --profile: untimed runs first (default 1)"},
    {Scope::Dump, "--warmup-time", "", true,
     "with --profile: untimed milliseconds first (default 0)"},
    {Scope::Run, "--input-from-bundle", "", true,
     "inputs from an .npz file or an ONNX test_data_set folder"},
    {Scope::Run, "--assert-output-bundle", "", true,
     "check the outputs against an .npz file or test_data_set folder"},
    {Scope::Run, "--approx", "", true,
     "tolerance of the check: exact, close (default), approximate, very, "
     "super, ultra"},
    {Scope::Run, "--allow-random-input", "-R", false,
     "make up the inputs the bundle does not give"},
    {Scope::Run, "--save-outputs", "", true,
     "write the outputs to an .npz (as --save-outputs-npz)"},
    {Scope::Run, "--save-outputs-npz", "", true,
     "write the outputs to an .npz"},
    {Scope::Run, "--quiet", "-q", false, "print nothing"},
    {Scope::Run, "--allow-float-casts", "", false,
     "cast bundle inputs of another float type (f16, f32, f64) to the "
     "model's, and outputs to the bundle's before comparing"},
    {Scope::Run, "--set", "", true,
     "S=3 sizes the made-up inputs; the model stays symbolic, compiled once "
     "(repeatable)"},
    {Scope::Run, "--prompt-chunk-size", "", true,
     "a language model that keeps its caches (--llm) runs the prompt this "
     "many tokens at a time, each chunk on the caches the previous one "
     "left; the outputs over the tokens are joined"},
    {Scope::Run, "--allow-missing-outputs", "", false,
     "with --assert-output-bundle: outputs the bundle does not give are not "
     "checked (a note says which)"},
    {Scope::Run, "--assert-llm-rbo", "", true,
     "with --assert-output-bundle: the model's first output (a language "
     "model's logits) is checked by the rank-biased overlap of its tokens' "
     "rankings with the bundle's, at every position, instead of --approx: "
     "the lowest must be at least this (0 to 1)"},
    {Scope::Run, "--assert-llm-rbo-p", "", true,
     "the persistence of --assert-llm-rbo: the weight of each rank is p "
     "times the previous one's (default 0.9)"},
    {Scope::Run, "--assert-llm-rbo-depth", "", true,
     "the ranks --assert-llm-rbo compares (default 100)"},
    {Scope::Run, "--steps", "", false,
     "print every op's output (its fact and first values) as well"},
    {Scope::Run, "--assert-op-count", "", true,
     "OP N: as dump's, checked before running (repeatable)"},
    {Scope::Run, "--assert-output", "", true,
     "an output's fact, and optionally the value of all its elements: "
     "name:1,1,f32=0 (repeatable)"},
    {Scope::Bench, "--input-from-bundle", "", true,
     "inputs from an .npz file or test_data_set folder (default: made up)"},
    {Scope::Bench, "--allow-random-input", "-R", false,
     "accepted: bench makes up the inputs the bundle does not give"},
    {Scope::Bench, "--max-loops", "", true,
     "stop after this many runs (default 100000)"},
    {Scope::Bench, "--max-time", "", true,
     "stop after this many milliseconds (default 1000)"},
    {Scope::Bench, "--warmup-loops", "", true,
     "untimed runs first (default 1)"},
    {Scope::Bench, "--warmup-time", "", true,
     "untimed milliseconds first (default 0)"},
    {Scope::Bench, "--set", "", true,
     "S=3 sizes the made-up inputs, as run's (repeatable)"},
    {Scope::Bench, "--threads", "", true,
     "threads to run on (as the global --threads)"},
    {Scope::Compare, "--stage", "", true,
     "the stage the model is compared at against the model as loaded: "
     "load or declutter (the default)"},
    {Scope::Compare, "--stream", "", false,
     "with --pulse: stream the pulsified model pulse by pulse (it is "
     "always streamed)"},
    {Scope::Compare, "--input-from-bundle", "", true,
     "inputs from an .npz file or test_data_set folder"},
    {Scope::Compare, "--allow-random-input", "-R", false,
     "make up the inputs the bundle does not give (unset symbols: 32)"},
    {Scope::Compare, "--approx", "", true,
     "tolerance: exact, close, approximate (default), very, super, ultra"},
    {Scope::Compare, "--quiet", "-q", false, "print nothing"},
    {Scope::Compile, "--output", "-o", true,
     "the object file to write (model.o), or a shared library (model.so)"},
    {Scope::Compile, "--target", "", true,
     "x86_64, aarch64, armv7 or wasm32 (default: the host); vulkan or cuda: "
     "the host, with the tensor ops on that GPU API (as --gpu; for cuda, "
     "--cpu names the chip: sm_80 unless given); metal: a Mach-O object for "
     "Apple silicon (macOS 11+) with MSL kernels"},
    {Scope::Compile, "--cpu", "", true,
     "the CPU to generate code for, or native (default: a baseline CPU)"},
    {Scope::Compile, "--threads", "", true,
     "threads to make the code for (default 1: no thread library needed)"},
    {Scope::Compile, "--header", "", true,
     "also write the model's C header (model.h)"},
    {Scope::Compile, "--name", "", true,
     "prefix of the C symbols (default: the output's file name)"},
};

const StringRef kSubcommands[] = {"dump",    "run",     "bench",
                                  "compare", "compile", "llm-bench"};
/// tract's commands that take no model.
const StringRef kModelFreeCommands[] = {"list-ops", "list-runtimes"};

/// What --runtime NAME (or --cuda, --metal) sets --gpu to; null if unknown.
std::optional<StringRef> gpuOfRuntime(StringRef runtime) {
  if (runtime == "default" || runtime == "unoptimized" || runtime == "cpu")
    return StringRef();
  if (runtime == "cuda" || runtime == "vulkan" || runtime == "metal")
    return runtime;
  return std::nullopt;
}

const Flag *findFlag(Scope scope, StringRef name) {
  for (const Flag &flag : kFlags)
    if (flag.scope == scope &&
        (flag.longName == name ||
         (!flag.shortName.empty() && flag.shortName == name)))
      return &flag;
  return nullptr;
}

/// The known spelling closest to `name`, if any is close enough to be a typo.
std::optional<StringRef> closestFlag(Scope scope, StringRef name) {
  std::optional<StringRef> best;
  unsigned bestDistance = 3;
  auto consider = [&](StringRef candidate) {
    if (candidate == name)
      return;
    unsigned distance = name.edit_distance(candidate);
    if (distance < bestDistance) {
      bestDistance = distance;
      best = candidate;
    }
  };
  for (const Flag &flag : kFlags)
    if (flag.scope == scope || flag.scope == Scope::Global)
      consider(flag.longName);
  if (scope == Scope::Global)
    for (StringRef flag : kNnefExtensionFlags)
      consider(flag);
  return best;
}

std::string unknownFlagError(Scope scope, StringRef arg, StringRef subcommand) {
  std::string message = "unknown option '" + arg.str() + "'";
  if (scope != Scope::Global)
    message += " for '" + subcommand.str() + "'";
  if (std::optional<StringRef> hint = closestFlag(scope, arg))
    message += "; did you mean '" + hint->str() + "'?";
  else
    message += "; see 'tract --help'";
  return message;
}

} // namespace

llvm::Expected<Invocation>
mlir::tract::cli::parse(llvm::ArrayRef<StringRef> args) {
  Invocation invocation;
  bool haveModel = false, haveSubcommand = false, explicitRuntime = false;
  for (size_t i = 0; i < args.size(); ++i) {
    StringRef arg = args[i];
    if (!arg.starts_with("-") || arg == "-") {
      if (!haveModel && !haveSubcommand &&
          llvm::is_contained(kModelFreeCommands, arg) &&
          !llvm::sys::fs::exists(arg)) {
        invocation.subcommand = arg.str();
        haveSubcommand = true;
        continue;
      }
      if (!haveModel) {
        invocation.model = arg.str();
        haveModel = true;
      } else if (!haveSubcommand && llvm::is_contained(kSubcommands, arg)) {
        invocation.subcommand = arg.str();
        haveSubcommand = true;
      } else if (!haveSubcommand) {
        return makeError(
            "unknown subcommand '" + arg.str() +
            "'; expected one of dump, run, bench, compare, compile, "
            "llm-bench");
      } else {
        return makeError("unexpected argument '" + arg.str() + "'");
      }
      continue;
    }
    if (!haveSubcommand && llvm::is_contained(kNnefExtensionFlags, arg)) {
      // Reading takes every extension; writing leaves tract_core out when
      // told to, as tract does.
      if (arg == "--no-nnef-tract-core" || arg == "--nnef-tract-core")
        invocation.nnefTractCore = arg == "--nnef-tract-core";
      continue;
    }

    // As in tract, options before the subcommand are global, wherever the
    // model is; after it, they belong to the subcommand. After the model
    // and without a subcommand, dump's options mean dump, the default.
    auto [name, inlineValue] = arg.split('=');
    Scope scope = !haveSubcommand                        ? Scope::Global
                  : invocation.subcommand == "run"       ? Scope::Run
                  : invocation.subcommand == "bench"     ? Scope::Bench
                  : invocation.subcommand == "llm-bench" ? Scope::Bench
                  : invocation.subcommand == "compare"   ? Scope::Compare
                  : invocation.subcommand == "compile"   ? Scope::Compile
                                                         : Scope::Dump;
    if (scope == Scope::Global && haveModel && !findFlag(Scope::Global, name) &&
        findFlag(Scope::Dump, name))
      scope = Scope::Dump;
    bool hasInlineValue = arg.contains('=');
    const Flag *flag = findFlag(scope, name);
    if (!flag && scope != Scope::Global &&
        (findFlag(Scope::Dump, name) || findFlag(Scope::Run, name) ||
         findFlag(Scope::Bench, name) || findFlag(Scope::Compare, name) ||
         findFlag(Scope::Compile, name))) {
      return makeError("option '" + name.str() + "' does not apply to '" +
                       invocation.subcommand + "'");
    }
    if (!flag && scope != Scope::Global && findFlag(Scope::Global, name)) {
      return makeError("'" + name.str() +
                       "' is a global option: give it before '" +
                       invocation.subcommand + "'");
    }
    if (!flag) {
      return makeError(unknownFlagError(scope, name, invocation.subcommand));
    }
    if (scope == Scope::Dump && invocation.subcommand != "dump") {
      return makeError("option '" + name.str() + "' does not apply to '" +
                       invocation.subcommand + "'");
    }
    std::string value;
    if (flag->longName == "--assert-op-count") {
      // Two values: the op's name and the count.
      int64_t count;
      if (hasInlineValue || i + 2 >= args.size() ||
          args[i + 2].getAsInteger(10, count) || count < 0) {
        return makeError("option '--assert-op-count' expects an op name and a "
                         "non-negative count: --assert-op-count Scan 1");
      }
      invocation.opCounts.emplace_back(args[i + 1].str(), count);
      i += 2;
      continue;
    }
    if (flag->takesValue) {
      if (hasInlineValue) {
        value = inlineValue.str();
      } else if (i + 1 < args.size()) {
        value = args[++i].str();
      } else {
        return makeError("option '" + name.str() + "' expects a value");
      }
    } else if (hasInlineValue) {
      return makeError("option '" + name.str() + "' takes no value");
    }

    StringRef longName = flag->longName;
    if (longName == "--input-facts")
      invocation.inputFacts.push_back(value);
    else if (longName == "--input-facts-from-bundle")
      invocation.inputFactsBundle = value;
    else if (longName == "--transform")
      invocation.transforms.push_back(value);
    else if (longName == "--output-node")
      invocation.outputNodes.push_back(value);
    else if (longName == "--edge-left-context" ||
             longName == "--kaldi-left-context" ||
             longName == "--edge-right-context" ||
             longName == "--kaldi-right-context") {
      int64_t frames;
      if (StringRef(value).trim().getAsInteger(10, frames) || frames < 0) {
        return makeError("option '" + name.str() +
                         "' expects a number of frames, not '" + value + "'");
      }
      (longName.contains("left") ? invocation.edgeLeftContext
                                 : invocation.edgeRightContext) = frames;
    } else if (longName == "--nnef-cycle")
      invocation.nnefCycle = true;
    else if (longName == "--allow-float-casts")
      invocation.allowFloatCasts = true;
    else if (longName == "--set" && scope != Scope::Global) {
      auto [symbol, number] = StringRef(value).split('=');
      int64_t size;
      if (symbol.trim().empty() || number.trim().getAsInteger(10, size) ||
          size < 0) {
        return makeError(
            "after '" + invocation.subcommand +
            "', --set gives a symbol a size for the run: S=3, not '" + value +
            "'");
      }
      invocation.runSets.emplace_back(symbol.trim().str(), size);
    } else if (longName == "--set")
      invocation.sets.push_back(value);
    else if (longName == "--assert")
      invocation.assertions.push_back(value);
    else if (longName == "--scenario")
      invocation.scenarios.push_back(value);
    else if (longName == "--pulse")
      invocation.pulse = value;
    else if (longName == "--pass")
      invocation.stage = value;
    else if (longName == "--optimize")
      invocation.optimize = true;
    else if (longName == "--timing")
      invocation.timing = true;
    else if (longName == "--no-cache")
      invocation.noCache = true;
    else if (longName == "--help")
      invocation.help = true;
    else if (longName == "--version")
      invocation.version = true;
    else if (longName == "--mlir")
      invocation.dumpMlir = true;
    else if (longName == "--nnef")
      invocation.nnefArchive = value;
    else if (longName == "--nnef-dir")
      invocation.nnefDir = value;
    else if (longName == "--nnef-graph")
      invocation.nnefGraph = value;
    else if (longName == "--quiet")
      invocation.quiet = true;
    else if (longName == "--cost")
      invocation.dumpCost = true;
    else if (longName == "--profile")
      invocation.dumpProfile = true;
    else if (longName == "--json")
      invocation.dumpJson = true;
    else if (longName == "--input-from-bundle")
      invocation.inputBundle = value;
    else if (longName == "--assert-output-bundle")
      invocation.outputBundle = value;
    else if (longName == "--approx")
      invocation.approx = value;
    else if (longName == "--stage")
      invocation.compareStage = value;
    else if (longName == "--stream")
      invocation.stream = true;
    else if (longName == "--steps")
      invocation.steps = true;
    else if (longName == "--assert-output")
      invocation.outputFacts.push_back(value);
    else if (longName == "--allow-random-input")
      invocation.allowRandomInput = true;
    else if (longName == "--allow-missing-outputs")
      invocation.allowMissingOutputs = true;
    else if (longName == "--llm")
      invocation.llm = true;
    else if (longName == "--opl")
      continue;
    else if (longName == "--runtime" || longName == "--cuda" ||
             longName == "--metal") {
      StringRef runtime = longName == "--runtime" ? StringRef(value)
                                                  : longName.drop_front(2);
      std::optional<StringRef> gpu = gpuOfRuntime(runtime);
      if (!gpu)
        return makeError("runtime '" + runtime.str() +
                         "' not found; 'tract list-runtimes' lists them");
      // An explicit --runtime wins over --cuda and --metal, as in tract.
      if (longName == "--runtime" || !explicitRuntime)
        invocation.gpu = gpu->str();
      explicitRuntime |= longName == "--runtime";
    }
    else if (longName == "--assert-llm-rbo" ||
             longName == "--assert-llm-rbo-p") {
      double number;
      if (StringRef(value).trim().getAsDouble(number) || number < 0 ||
          number > 1)
        return makeError("option '" + name.str() +
                         "' expects a number from 0 to 1, not '" + value +
                         "'");
      if (longName == "--assert-llm-rbo")
        invocation.llmRbo = number;
      else
        invocation.llmRboP = number;
    } else if (longName == "--prompt-chunk-size") {
      int64_t number;
      if (StringRef(value).trim().getAsInteger(10, number) || number < 1)
        return makeError("option '" + name.str() +
                         "' expects a positive number of tokens, not '" +
                         value + "'");
      invocation.promptChunkSize = number;
    } else if (longName == "--assert-llm-rbo-depth") {
      int64_t number;
      if (StringRef(value).trim().getAsInteger(10, number) || number < 1)
        return makeError("option '" + name.str() +
                         "' expects a positive number of ranks, not '" +
                         value + "'");
      invocation.llmRboDepth = number;
    }
    else if (longName == "--save-outputs-npz" || longName == "--save-outputs")
      invocation.saveOutputs = value;
    else if (longName == "--max-loops" || longName == "--warmup-loops" ||
             longName == "--threads") {
      int64_t number;
      if (StringRef(value).getAsInteger(10, number) || number < 0 ||
          (longName == "--threads" && number == 0)) {
        return makeError(
            "option '" + name.str() + "' expects a " +
            (longName == "--threads" ? "positive" : "non-negative") +
            " integer, not '" + value + "'");
      }
      if (longName == "--threads")
        invocation.threads = number;
      else
        (longName == "--max-loops" ? invocation.maxLoops
                                   : invocation.warmupLoops) = number;
    } else if (longName == "--gpu") {
      if (value != "vulkan" && value != "cuda" && value != "metal")
        return makeError("option '" + name.str() +
                         "' expects a GPU API (vulkan, cuda, metal), not '" +
                         value + "'");
      invocation.gpu = value;
    } else if (longName == "--spirv-dir") {
      invocation.spirvDir = value;
    } else if (longName == "--msl-dir") {
      invocation.mslDir = value;
    } else if (longName == "--ptx-dir") {
      invocation.ptxDir = value;
    } else if (longName == "--cuda-path") {
      invocation.cudaPath = value;
    } else if (longName == "--threading-threshold") {
      double flops;
      if (StringRef(value).getAsDouble(flops) || !(flops >= 0) ||
          !std::isfinite(flops)) {
        return makeError("option '" + name.str() +
                         "' expects a non-negative number of flops, not '" +
                         value + "'");
      }
      invocation.threadingThreshold = flops;
    } else if (longName == "--max-time" || longName == "--warmup-time") {
      double milliseconds;
      if (StringRef(value).getAsDouble(milliseconds) || milliseconds < 0) {
        return makeError("option '" + name.str() +
                         "' expects milliseconds, not '" + value + "'");
      }
      (longName == "--max-time" ? invocation.maxTimeMs
                                : invocation.warmupTimeMs) = milliseconds;
    } else if (longName == "--output")
      invocation.output = value;
    else if (longName == "--target")
      invocation.target = value;
    else if (longName == "--cpu")
      invocation.cpu = value;
    else if (longName == "--header")
      invocation.header = value;
    else if (longName == "--name")
      invocation.name = value;
  }
  if (!haveModel && !invocation.help && !invocation.version &&
      !llvm::is_contained(kModelFreeCommands, invocation.subcommand)) {
    return makeError("no model given; see 'tract --help'");
  }
  if (invocation.llm)
    invocation.transforms.insert(invocation.transforms.begin(),
                                 "transformers-detect-all");
  if ((invocation.llmRbo || invocation.allowMissingOutputs) &&
      !invocation.outputBundle)
    return makeError(std::string(invocation.llmRbo ? "--assert-llm-rbo"
                                                   : "--allow-missing-outputs") +
                     " needs --assert-output-bundle");
  return invocation;
}

std::string mlir::tract::cli::usage() {
  std::string text =
      "tract-mlir: load, optimize, compile and run neural network models\n"
      "\n"
      "USAGE: tract [OPTIONS] MODEL [SUBCOMMAND [OPTIONS]]\n"
      "\n"
      "MODEL is a .onnx file, an NNEF folder or .nnef.tgz archive, or\n"
      "tract-dialect IR (.mlir).\n"
      "\n"
      "SUBCOMMANDS:\n"
      "  dump     list the model's operators (default)\n"
      "  run      run the model\n"
      "  bench    time the model\n"
      "  compare  run the model after the passes (-O, --pulse) and as\n"
      "           loaded on the same inputs, and compare their outputs\n"
      "  compile  compile the model to an object file\n"
      "  llm-bench  time a causal language model as tract does: prompt\n"
      "           processing (PP512) and generation (TG128) in tokens/sec;\n"
      "           takes bench's options\n"
      "\n"
      "       tract list-ops       the ONNX and NNEF operators it reads\n"
      "       tract list-runtimes  the names --runtime takes\n"
      "\n"
      "OPTIONS:\n";
  auto describe = [&](Scope scope) {
    for (const Flag &flag : kFlags) {
      if (flag.scope != scope)
        continue;
      std::string names = flag.shortName.empty() ? "    " + flag.longName.str()
                                                 : flag.shortName.str() + ", " +
                                                       flag.longName.str();
      if (flag.takesValue)
        names += " VALUE";
      text += "  " + names +
              std::string(names.size() < 26 ? 26 - names.size() : 1, ' ') +
              flag.help.str() + "\n";
    }
  };
  describe(Scope::Global);
  text += "      --nnef-tract-core and the other --nnef-*/--no-nnef-*\n"
          "                            switches are accepted: reading takes "
          "every\n"
          "                            extension, writing those the model "
          "needs;\n"
          "      --no-nnef-tract-core  write NNEF without tract_core's "
          "forms\n"
          "\nDUMP OPTIONS:\n";
  describe(Scope::Dump);
  text += "\nRUN OPTIONS:\n";
  describe(Scope::Run);
  text += "\nBENCH AND LLM-BENCH OPTIONS:\n";
  describe(Scope::Bench);
  text += "\nCOMPARE OPTIONS:\n";
  describe(Scope::Compare);
  text += "\nCOMPILE OPTIONS:\n";
  describe(Scope::Compile);
  return text;
}
