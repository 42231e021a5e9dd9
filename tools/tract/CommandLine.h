#ifndef TOOLS_TRACT_COMMANDLINE_H
#define TOOLS_TRACT_COMMANDLINE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::tract::cli {

/// What `tract [GLOBAL OPTIONS] MODEL [SUBCOMMAND [OPTIONS]]` asked for,
/// following the conventions of tract's own command line.
struct Invocation {
  // Global options, before the model.
  std::vector<std::string> inputFacts; ///< -i / --input-facts, repeatable
  /// --input-facts-from-bundle: each input's shape and type from a bundle.
  std::optional<std::string> inputFactsBundle;
  /// -t / --transform, repeatable, in order: set_symbols(values:{"S":1}).
  std::vector<std::string> transforms;
  /// --output-node NAME (repeatable): these nodes are the model's outputs.
  std::vector<std::string> outputNodes;
  bool nnefCycle = false; ///< --nnef-cycle: through NNEF and back
  /// --edge-left-context / --edge-right-context (tract's Kaldi options):
  /// frames of edge padding added to every input's first axis.
  int64_t edgeLeftContext = 0, edgeRightContext = 0;
  /// --no-nnef-tract-core: NNEF is written without tract_core's forms.
  bool nnefTractCore = true;
  std::vector<std::string> sets;       ///< --set S=3, repeatable
  std::vector<std::string> assertions; ///< --assert EXPR, repeatable
  std::vector<std::string> scenarios;  ///< --scenario NAME, repeatable
  std::optional<std::string> pulse;    ///< --pulse S=8
  std::optional<std::string> stage;    ///< --pass STAGE
  bool optimize = false;               ///< -O
  bool timing = false;                 ///< --timing
  bool noCache = false;                ///< --no-cache
  bool help = false;
  bool version = false;

  std::string model;
  /// dump (the default, as in tract), run, bench, compare or compile.
  std::string subcommand = "dump";

  // dump options (--profile also takes bench's options and
  // --input-from-bundle).
  bool dumpMlir = false;
  bool dumpCost = false;                  ///< --cost
  bool dumpProfile = false;               ///< --profile
  bool dumpJson = false;                  ///< --json
  bool quiet = false;                     ///< -q, for dump and run
  /// --assert-op-count OP N (dump and run, repeatable): the model has N
  /// ops of tract's name OP (Scan, GatherElements...), after the passes.
  std::vector<std::pair<std::string, int64_t>> opCounts;
  std::optional<std::string> nnefArchive; ///< dump --nnef out.nnef.tgz
  std::optional<std::string> nnefDir;     ///< dump --nnef-dir D
  std::optional<std::string> nnefGraph;   ///< dump --nnef-graph F

  // run options.
  std::optional<std::string> inputBundle;  ///< --input-from-bundle
  std::optional<std::string> outputBundle; ///< --assert-output-bundle
  /// --approx; unset, run checks at close and compare at approximate.
  std::optional<std::string> approx;
  bool allowRandomInput = false;           ///< --allow-random-input
  bool allowMissingOutputs = false;        ///< --allow-missing-outputs
  std::optional<int64_t> promptChunkSize; ///< run --prompt-chunk-size N
  /// --assert-llm-rbo: the lowest rank-biased overlap the first output's
  /// rankings may have with the bundle's; its persistence and depth.
  std::optional<double> llmRbo;
  double llmRboP = 0.9;
  int64_t llmRboDepth = 100;
  std::optional<std::string> saveOutputs;  ///< --save-outputs-npz
  bool steps = false; ///< run --steps: print every op's output too
  /// --set S=3 after dump, run or bench: the symbol's value for the made-up
  /// inputs of the compiled symbolic model (before the subcommand, --set
  /// concretizes the model instead).
  std::vector<std::pair<std::string, int64_t>> runSets;
  /// run --allow-float-casts: bundle floats of another width are cast.
  bool allowFloatCasts = false;
  /// --llm: transformers-detect-all goes first among the transforms.
  bool llm = false;
  /// --assert-output FACT (repeatable): an output's shape and type, and
  /// optionally the one value of all its elements: `name:1,1,f32=0`.
  std::vector<std::string> outputFacts;

  // compare options (with run's --input-from-bundle, --allow-random-input,
  // --approx and -q).
  std::optional<std::string> compareStage; ///< --stage load|declutter
  bool stream = false;                     ///< --stream

  // bench options (with --input-from-bundle of run).
  int64_t maxLoops = 100000; ///< --max-loops
  double maxTimeMs = 1000;   ///< --max-time, in ms
  int64_t warmupLoops = 1;   ///< --warmup-loops
  double warmupTimeMs = 0;   ///< --warmup-time, in ms
  /// --threads, global or of bench; main() settles the default.
  std::optional<int64_t> threads;
  /// --threading-threshold: the work, in flops, from which an op runs on
  /// threads (TargetInfo::threadingThreshold); unset, the cost model
  /// decides.
  std::optional<double> threadingThreshold;
  /// --gpu: the GPU API the model's linalg ops run through ("vulkan"), or
  /// empty for the CPU alone.
  std::string gpu;
  /// --spirv-dir: where --gpu vulkan writes its kernels' SPIR-V modules.
  std::string spirvDir;
  /// --msl-dir: where --gpu vulkan writes its kernels' MSL (for Metal).
  std::string mslDir;
  /// --ptx-dir: where --gpu cuda writes its kernels' PTX.
  std::string ptxDir;
  /// --cuda-path: the CUDA toolkit (libdevice) for --gpu cuda.
  std::string cudaPath;

  // compile options.
  std::optional<std::string> output; ///< -o: model.o, or model.so
  std::optional<std::string> target; ///< --target x86_64|aarch64|armv7|wasm32
  std::optional<std::string> cpu;    ///< --cpu NAME, or native
  std::optional<std::string> header; ///< --header model.h
  std::optional<std::string> name;   ///< --name: prefix of the C symbols
};

/// Parses the arguments after the program name. The error is one line naming
/// the offending argument, with a hint when a known flag is close.
llvm::Expected<Invocation> parse(llvm::ArrayRef<llvm::StringRef> args);

/// The text of `tract --help`.
std::string usage();

} // namespace mlir::tract::cli

#endif // TOOLS_TRACT_COMMANDLINE_H
