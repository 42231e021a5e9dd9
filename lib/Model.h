//===- Model.h - the model life cycle as a library --------------*- C++ -*-===//
//
// libtract's C++ core: what happens between reading a model and running it,
// as types that the `tract` command line, the C API (tract.h) and the
// Python package all use.
//
//   Model     a model of the tract dialect, in its own MLIR context: loaded
//             from a path or from bytes (ONNX, NNEF folder or archive,
//             .mlir), given input facts, outputs, assertions and symbol
//             values, transformed by name (declutter, pulse, block-quant…),
//             exported as NNEF, compiled to an object or a shared library.
//   Runnable  the model compiled in process (JIT) for a number of threads
//             and a CPU or GPU runtime; runs on runtime tensors.
//   State     a stream through a runnable whose model keeps state (a
//             pulsified model, a key/value cache): each run takes the data
//             inputs and returns the data outputs, the state goes on.
//
// Errors are llvm::Error values whose message names the model element;
// the MLIR diagnostics a step emits are part of that message. A Model is
// used by one thread at a time; a Runnable may run from several threads at
// once, and several States may stream through one Runnable at once.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_MODEL_H
#define LIB_MODEL_H

#include "dialects/tdim/TDim.h"
#include "dialects/tract/TractDialect.h"
#include "lib/Bundle.h"
#include "lib/Dump.h"
#include "lib/Error.h"
#include "target/Jit.h"
#include "target/ModelSignature.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::tract::lib {

/// The container a model comes in; Auto tells it from the path (or, for
/// bytes, from their first bytes).
enum class SourceFormat { Auto, Onnx, Nnef, Mlir };

/// How a model is compiled in process: tract's run options.
struct RunOptions {
  /// Threads the code is made for and runs on; 0: one per core.
  int64_t threads = 1;
  /// tract's --threading-threshold, in flops; negative: the cost model.
  double threadingThreshold = -1;
  /// The GPU API the tensor ops run through ("vulkan", "cuda"), or "".
  std::string gpu;
  /// Where a GPU build writes its kernels (SPIR-V, MSL, PTX), and the CUDA
  /// toolkit to use; all optional.
  std::string spirvDir, mslDir, ptxDir, cudaPath;
  /// Whether compiled code is kept in and taken from the compile cache
  /// (target/CompileCache.h), in `cacheDir` or, when that is empty, the
  /// default folder (defaultCacheDirectory).
  bool cache = true;
  std::string cacheDir;

  JitOptions toJit() const;
};

/// How `tract compile` (Model::compile) writes an object or a library.
struct CompileOptions {
  /// A CPU target (x86_64, aarch64, armv7, wasm32), a GPU API for the host
  /// (vulkan, cuda, metal), or "" for the host.
  std::string target;
  /// The CPU to tune for ("native" is the host's); for CUDA, the chip.
  std::string cpu;
  /// The prefix of the C symbols; "" makes one from the output's name.
  std::string name;
  /// Where to write the C header that describes the model, or "".
  std::string header;
  /// The model's name in the header's comment.
  std::string source;
  int64_t threads = 1;
  double threadingThreshold = -1;
  /// The GPU API for a CPU target ("" for none), and its kernel folders.
  std::string gpu, spirvDir, mslDir, ptxDir, cudaPath;
  /// For a shared library (an output ending in .so): the folder of the
  /// program or library that links it, near which libtract_runtime.a (and
  /// the GPU runtimes) are, in ../runtime (a build), or beside it or in
  /// ../lib (an installation). "": libtract's own folder.
  std::string binaryDir;
};

/// bench's loop: warm-up runs, then runs until maxLoops or maxTimeMs.
struct BenchOptions {
  int64_t maxLoops = 100000;
  double maxTimeMs = 1000;
  int64_t warmupLoops = 1;
  double warmupTimeMs = 0;
};

class Runnable;
class State;

class Model {
public:
  ~Model();

  /// The model at `path`, read when first needed (getModule), so that
  /// setInputFact may come first.
  static llvm::Expected<std::unique_ptr<Model>>
  load(llvm::StringRef path, SourceFormat format = SourceFormat::Auto);
  /// The same from bytes in memory: an ONNX file, an NNEF archive (tar,
  /// gzipped or not) or MLIR text. `name` names the model in messages.
  static llvm::Expected<std::unique_ptr<Model>>
  loadBytes(llvm::StringRef bytes, SourceFormat format,
            llvm::StringRef name = "the model in memory");
  /// An independent copy, in a context of its own.
  llvm::Expected<std::unique_ptr<Model>> clone();

  /// The model's IR (importing it first if need be).
  llvm::Expected<ModuleOp> getModule();
  MLIRContext &getContext() { return *context; }
  DiagnosticCapture &getDiagnostics() { return *diagnosticHandler; }
  llvm::StringRef getName() const { return name; }

  /// tract's -i: the shape and type of an input (`1,S,64,f32`, `NAME:...`,
  /// `sr:i64=16000` for a constant), by position. ONNX models only, before
  /// anything else changes the model.
  llvm::Error setInputFact(size_t index, llvm::StringRef fact);
  /// The inputs and outputs as they are now.
  llvm::Expected<ModelSignature> getSignature();

  /// tract's --output-node: these nodes (an op's name, an output's or an
  /// input's) become the outputs, in order.
  llvm::Error selectOutputs(llvm::ArrayRef<std::string> names);
  /// tract's --assert and --scenario: `S >= 1`, or `tg: S == 1` in a
  /// scenario.
  llvm::Error addAssertions(llvm::ArrayRef<std::string> assertions,
                            llvm::ArrayRef<std::string> scenarios = {});
  /// tract's --edge-left-context / --edge-right-context.
  llvm::Error addEdgeContext(int64_t left, int64_t right);
  /// tract's --set: `S=3`, each symbol replaced by its value.
  llvm::Error setSymbols(llvm::ArrayRef<std::string> values);

  /// A transform by name, as tract's -t and its model API name them:
  /// declutter (or optimize), pulse(S=8) (or pulse(8)), set_symbols(
  /// values:{"S":1}), export_scan_state, block-quant, f16-weights,
  /// detect-kv-cache, nnef-cycle.
  llvm::Error transform(llvm::StringRef spec);
  llvm::Error declutter();
  /// `S=8`, or `8` for a model with one symbol or a symbol S.
  llvm::Error pulse(llvm::StringRef spec);
  /// The transform names transform() knows, for messages and docs.
  static llvm::ArrayRef<llvm::StringRef> transformNames();
  /// The operators the importers read, by format ("Onnx": op types, with
  /// their domain when not the default one; "Nnef": fragment names), each
  /// list sorted.
  static std::vector<std::pair<std::string, std::vector<std::string>>>
  supportedOps();

  bool isDecluttered() const { return decluttered; }
  /// Whether the model streams (it has pulse properties).
  bool isPulsified();
  /// Whether the model keeps a state between calls: pulsified, or with
  /// key/value caches.
  bool isStateful();

  /// Lowers the model in place to `linalg` or `llvm` (dump --pass).
  llvm::Error lowerTo(llvm::StringRef stage, const RunOptions &options);
  /// The model with its state as inputs and outputs (the step function
  /// that compiled code is).
  llvm::Error externalizeState();

  /// The IR as text.
  std::string getMlir();
  /// Writes NNEF: a folder, or an archive for a .nnef.tgz, .tgz, .tar.gz or
  /// .tar path.
  llvm::Error exportNnef(llvm::StringRef path, bool tractCore = true);
  /// The graph.nnef text alone.
  llvm::Expected<std::string> getNnefGraph(bool tractCore = true);

  /// Compiles the model as it is now (after declutter, unless
  /// `declutterFirst` is false); the model stays usable.
  llvm::Expected<std::unique_ptr<Runnable>>
  intoRunnable(const RunOptions &options = {}, bool declutterFirst = true);

  /// Compiles to an object file, or a shared library when `output` ends in
  /// .so (linked with the runtime, for the host).
  llvm::Error compile(llvm::StringRef output, const CompileOptions &options);

  /// Times every op of the entry function on `inputs` (all of the model's
  /// inputs, in order), as `dump --profile` does.
  llvm::Expected<ModelProfile>
  profile(llvm::ArrayRef<const tract_tensor *> inputs,
          const RunOptions &options, const BenchOptions &bench = {});
  /// The listing of `dump`, as text or JSON, with a profile if given.
  llvm::Expected<std::string> listing(const DumpOptions &options);

  /// The ops of the entry function (scan and if bodies included, as tract
  /// counts them) that tract calls `tractName` (Scan, GatherElements...);
  /// `Source` counts the inputs, as tract's source nodes.
  llvm::Expected<int64_t> countOps(llvm::StringRef tractName);

  /// Makes the model also return every op's result after its own outputs
  /// (run --steps); returns their names as the listing shows them.
  llvm::Expected<std::vector<std::string>> returnEveryStep();

  /// When set, stages are timed under it (tract's --timing).
  void setTiming(TimingScope *scope) { timing = scope; }
  /// Where the warnings of steps that succeed go (none by default).
  void setEcho(llvm::raw_ostream *stream) {
    diagnosticHandler->setEcho(stream);
  }

private:
  Model();
  /// A model in `context`, whose diagnostics `diagnostics` catches.
  Model(std::shared_ptr<MLIRContext> context,
        std::shared_ptr<DiagnosticCapture> diagnostics);
  llvm::Error materialize();
  /// The entry function, the model read; the model counts as changed.
  llvm::Expected<func::FuncOp> entryToEdit();
  /// Runs `build`'s passes on the module; the diagnostics become the error.
  llvm::Error runPasses(llvm::StringRef what,
                        llvm::function_ref<void(OpPassManager &)> build);
  /// Catches the diagnostics of the context from now on.
  void captureDiagnostics();

  /// Shared with the runnables compiled from the model: compiled code reads
  /// the weights from the context's attributes.
  std::shared_ptr<MLIRContext> context;
  std::shared_ptr<DiagnosticCapture> diagnosticHandler;
  OwningOpRef<ModuleOp> module;
  std::string name;
  /// The source, kept until the model is imported (ONNX facts).
  SourceFormat format = SourceFormat::Auto;
  std::string path, bytes;
  bool fromBytes = false;
  std::vector<std::string> inputFacts;
  bool changed = false;
  bool decluttered = false;
  TimingScope *timing = nullptr;
  friend class Runnable;
};

class Runnable {
public:
  ~Runnable();

  /// The data inputs and outputs (states, which a State keeps, are not
  /// among them).
  llvm::ArrayRef<TensorSignature> getInputs() const { return dataInputs; }
  llvm::ArrayRef<TensorSignature> getOutputs() const { return dataOutputs; }

  /// Runs the model once on its data inputs, in order. A model that keeps
  /// state starts from an empty one (zeros; a cache of no past). Outputs
  /// are new tensors the caller frees (tract_tensor_free). A wrong count,
  /// type, rank or dim is an error naming the input and its fact.
  llvm::Expected<std::vector<tract_tensor *>>
  run(llvm::ArrayRef<const tract_tensor *> inputs) const;

  /// A stream through the model: `symbols` gives values the state's shapes
  /// need (others come from the first inputs' dims, or are 0).
  llvm::Expected<std::unique_ptr<State>>
  spawnState(const SymbolValues &symbols = {}) const;

  /// For a pulsified model: cuts whole batch inputs into pulses, streams
  /// them and joins the outputs, shifted by their delays.
  llvm::Expected<std::vector<HostTensor>>
  streamBatch(llvm::ArrayRef<HostTensor> inputs) const;

  /// tract's run --prompt-chunk-size: a language model that keeps its
  /// key/value caches runs its prompt `chunk` tokens at a time, each chunk
  /// on the caches the previous one left. `inputs` are the compiled
  /// model's (getCompiled().getInputs(): states included, the caches the
  /// first chunk starts from); the token input (the first integer one, as
  /// llm-bench finds it) is cut along its tokens axis. The outputs are the
  /// compiled model's: those over the tokens joined along that axis, the
  /// others and the states as the last chunk left them.
  llvm::Expected<std::vector<HostTensor>>
  runPromptInChunks(llvm::ArrayRef<const tract_tensor *> inputs,
                    int64_t chunk) const;

  /// The compiled model, all inputs and outputs included.
  const CompiledModel &getCompiled() const { return *compiled; }
  int64_t getThreads() const { return threads; }
  const std::optional<PulseProperties> &getPulse() const { return pulse; }

private:
  Runnable() = default;
  friend class Model;
  friend class State;
  /// The context and the lowered module hold the weights compiled code
  /// reads: they go last.
  std::shared_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
  std::unique_ptr<CompiledModel> compiled;
  std::vector<TensorSignature> dataInputs, dataOutputs;
  std::optional<PulseProperties> pulse;
  bool stateful = false;
  int64_t threads = 1;
};

class State {
public:
  ~State();
  /// One call: the data inputs (a pulse, or the new tokens), in order.
  llvm::Expected<std::vector<tract_tensor *>>
  run(llvm::ArrayRef<const tract_tensor *> inputs);
  const Runnable &getRunnable() const { return runnable; }

private:
  State(const Runnable &runnable, SymbolValues symbols)
      : runnable(runnable), symbols(std::move(symbols)) {}
  friend class Runnable;
  const Runnable &runnable;
  SymbolValues symbols;
  struct tract_stream *stream = nullptr;
};

/// Whether `module` keeps state inside (pulse delays, key/value caches),
/// and whether its entry takes state as inputs already (the step function
/// that compiled code is).
struct StateKinds {
  bool inside = false, asInputs = false;
};
StateKinds stateKindsOf(ModuleOp module);

/// The `S=1` sets of a `set_symbols(values:{"S":1, ...})` transform.
llvm::Error parseSetSymbols(llvm::StringRef transform,
                            std::vector<std::string> &sets);

/// The values `inputs` give the symbols of `signatures`' dims (a dim that is
/// a symbol, or a linear form of one).
SymbolValues bindSymbols(llvm::ArrayRef<TensorSignature> signatures,
                         llvm::ArrayRef<const tract_tensor *> inputs);

/// bench's measure: warm-up runs of `runs` (each a set of all inputs, run
/// in order), then runs of the last until a budget; their count and time.
llvm::Error warmUp(const CompiledModel &model,
                   llvm::ArrayRef<std::vector<const tract_tensor *>> runs,
                   const BenchOptions &options);
llvm::Error timeRuns(const CompiledModel &model,
                     llvm::ArrayRef<const tract_tensor *> inputs,
                     int64_t maxRuns, double budgetMs, int64_t &runs,
                     double &elapsedMs);
llvm::Error runOnce(const CompiledModel &model,
                    llvm::ArrayRef<const tract_tensor *> inputs);

} // namespace mlir::tract::lib

#endif // LIB_MODEL_H
