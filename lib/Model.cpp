//===- Model.cpp - the model life cycle: load, facts, transforms ----------===//

#include "lib/Model.h"
#include "lib/Error.h"

#include "codegen/cpu/TargetInfo.h"
#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractModule.h"
#include "dialects/tract/TractOps.h"
#include "frontends/ModelLoader.h"
#include "frontends/nnef/NnefExporter.h"
#include "frontends/nnef/NnefFiles.h"
#include "frontends/nnef/NnefImporter.h"
#include "frontends/onnx/OnnxImporter.h"
#include "target/Aot.h"
#include "conversion/LoweringUtils.h"
#include "conversion/Passes.h"
#include "pipelines/Pipelines.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/ToolOutputFile.h"

#include <dlfcn.h>
#include <set>

using namespace mlir;
using namespace mlir::tract;
using namespace mlir::tract::lib;

JitOptions RunOptions::toJit() const {
  JitOptions options;
  options.threads = threads > 0
                        ? threads
                        : llvm::hardware_concurrency().compute_thread_count();
  options.threadingThreshold = threadingThreshold;
  options.gpu = gpu;
  options.spirvDir = spirvDir;
  options.mslDir = mslDir;
  options.ptxDir = ptxDir;
  options.cudaPath = cudaPath;
  if (cache)
    options.cacheDir = cacheDir.empty() ? defaultCacheDirectory() : cacheDir;
  return options;
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

namespace {

/// The format of bytes in memory, from their first bytes: gzip or tar is an
/// NNEF archive, text starting like MLIR is MLIR, anything else ONNX.
SourceFormat sniffFormat(llvm::StringRef bytes) {
  if (bytes.starts_with("\x1f\x8b") ||
      (bytes.size() > 262 && bytes.substr(257, 5) == "ustar"))
    return SourceFormat::Nnef;
  llvm::StringRef text = bytes.ltrim();
  if (text.starts_with("module") || text.starts_with("func.func") ||
      text.starts_with("#") || text.starts_with("//"))
    return SourceFormat::Mlir;
  return SourceFormat::Onnx;
}

} // namespace

Model::Model() {
  DialectRegistry registry;
  registerLoweringDialects(registry);
  context = std::make_shared<MLIRContext>(registry);
  context->loadDialect<TractDialect, func::FuncDialect>();
  // Errors are one line about the model, not a dump of its IR.
  context->printOpOnDiagnostic(false);
  captureDiagnostics();
}

Model::Model(std::shared_ptr<MLIRContext> context,
             std::shared_ptr<DiagnosticCapture> diagnostics)
    : context(std::move(context)), diagnosticHandler(std::move(diagnostics)) {}

Model::~Model() = default;

void Model::captureDiagnostics() {
  diagnosticHandler = std::make_shared<DiagnosticCapture>(*context);
}

llvm::Expected<std::unique_ptr<Model>> Model::load(llvm::StringRef path,
                                                   SourceFormat format) {
  std::unique_ptr<Model> model(new Model());
  model->name = path.str();
  model->path = path.str();
  if (format == SourceFormat::Auto) {
    std::string error;
    FailureOr<ModelFormat> detected = detectModelFormat(path, error);
    if (failed(detected)) {
      emitError(FileLineColLoc::get(model->context.get(), path, 0, 0)) << error;
      return model->diagnosticHandler->takeError(error);
    }
    format = *detected == ModelFormat::Onnx   ? SourceFormat::Onnx
             : *detected == ModelFormat::Mlir ? SourceFormat::Mlir
                                              : SourceFormat::Nnef;
  } else if (!llvm::sys::fs::exists(path)) {
    emitError(FileLineColLoc::get(model->context.get(), path, 0, 0))
        << "model '" << path << "' does not exist";
    return model->diagnosticHandler->takeError("");
  }
  model->format = format;
  // Read when first needed: ONNX input facts may come first.
  return model;
}

llvm::Expected<std::unique_ptr<Model>> Model::loadBytes(llvm::StringRef bytes,
                                                        SourceFormat format,
                                                        llvm::StringRef name) {
  std::unique_ptr<Model> model(new Model());
  model->name = name.str();
  model->bytes = bytes.str();
  model->fromBytes = true;
  model->format = format == SourceFormat::Auto ? sniffFormat(bytes) : format;
  return model;
}

llvm::Error Model::materialize() {
  if (module)
    return llvm::Error::success();
  TimingScope scope = timing ? timing->nest("import") : TimingScope();
  MLIRContext *ctx = context.get();
  diagnosticHandler->clear();
  switch (format) {
  case SourceFormat::Onnx: {
    onnx::ImportOptions options;
    options.inputFacts = inputFacts;
    module = fromBytes ? onnx::importOnnxBytes(bytes, name, ctx, options)
                       : onnx::importOnnxFile(path, ctx, options);
    break;
  }
  case SourceFormat::Mlir:
    module = fromBytes ? parseSourceString<ModuleOp>(bytes, ctx, name)
                       : parseSourceFile<ModuleOp>(path, ctx);
    break;
  case SourceFormat::Nnef:
  case SourceFormat::Auto:
    if (fromBytes) {
      nnef::ModelFiles files;
      std::string error;
      if (!nnef::readModelArchiveBytes(bytes, name, files, error)) {
        emitError(FileLineColLoc::get(ctx, name, 0, 0)) << error;
        return diagnosticHandler->takeError(error);
      }
      module = nnef::importNnefFiles(files, ctx);
    } else {
      module = nnef::importNnef(path, ctx);
    }
    break;
  }
  if (!module)
    return diagnosticHandler->takeError("the model could not be read");
  diagnosticHandler->flush();
  // The bytes are not needed any more (the constants were copied), but for
  // ONNX, whose facts may still change.
  if (format != SourceFormat::Onnx) {
    bytes.clear();
    bytes.shrink_to_fit();
  }
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<Model>> Model::clone() {
  if (llvm::Error error = materialize())
    return std::move(error);
  // The copy shares the context, whose attributes (the weights) both use,
  // and so its diagnostics: a model and its copies go on one thread.
  std::unique_ptr<Model> copy(new Model(context, diagnosticHandler));
  copy->module = module->clone();
  copy->name = name;
  copy->format = format;
  copy->decluttered = decluttered;
  copy->changed = changed;
  copy->timing = timing;
  return copy;
}

llvm::Expected<ModuleOp> Model::getModule() {
  if (llvm::Error error = materialize())
    return std::move(error);
  return *module;
}

llvm::Error Model::setInputFact(size_t index, llvm::StringRef fact) {
  if (format != SourceFormat::Onnx)
    return makeError("input facts apply to ONNX models; " + name +
                     " declares its input shapes");
  if (changed)
    return makeError("input facts are set before the model is changed "
                     "(set, transforms, outputs)");
  if (inputFacts.size() <= index)
    inputFacts.resize(index + 1);
  inputFacts[index] = fact.str();
  // Imported again with the facts, when next needed.
  module = nullptr;
  return llvm::Error::success();
}

llvm::Expected<ModelSignature> Model::getSignature() {
  if (llvm::Error error = materialize())
    return std::move(error);
  func::FuncOp main = entryFunction(*module);
  if (!main)
    return makeError("the model has no function");
  return describeFunction(main);
}

//===----------------------------------------------------------------------===//
// Edits of the IR
//===----------------------------------------------------------------------===//

namespace {

/// An input's name as dump lists it: its tract.name, else input_N.
std::string inputName(func::FuncOp main, unsigned index) {
  auto given = main.getArgAttrOfType<StringAttr>(index, "tract.name");
  return given ? given.str() : "input_" + std::to_string(index);
}

} // namespace

llvm::Expected<func::FuncOp> Model::entryToEdit() {
  if (llvm::Error error = materialize())
    return std::move(error);
  func::FuncOp main = entryFunction(*module);
  if (!main)
    return makeError("the model has no function");
  changed = true;
  return main;
}

llvm::Error Model::selectOutputs(llvm::ArrayRef<std::string> names) {
  llvm::Expected<func::FuncOp> entry = entryToEdit();
  if (!entry)
    return entry.takeError();
  func::FuncOp main = *entry;
  Block &body = main.getBody().front();
  Operation *terminator = body.getTerminator();
  auto find = [&](llvm::StringRef wanted) -> Value {
    for (unsigned i = 0; i < main.getNumResults(); ++i)
      if (auto given = main.getResultAttrOfType<StringAttr>(i, "tract.name");
          given && given.getValue() == wanted)
        return terminator->getOperand(i);
    for (BlockArgument argument : body.getArguments())
      if (inputName(main, argument.getArgNumber()) == wanted)
        return argument;
    for (Operation &op : body.without_terminator())
      if (op.getNumResults() == 1 && nodeName(op.getLoc()) == wanted)
        return op.getResult(0);
    return nullptr;
  };
  SmallVector<Value> values;
  for (const std::string &wanted : names) {
    Value value = find(wanted);
    if (!value)
      return makeError("the model has no node named '" + wanted + "'");
    values.push_back(value);
  }
  MLIRContext *ctx = context.get();
  terminator->setOperands(values);
  main.setType(FunctionType::get(ctx, main.getArgumentTypes(),
                                 ValueRange(values).getTypes()));
  SmallVector<DictionaryAttr> attributes;
  for (const std::string &wanted : names)
    attributes.push_back(DictionaryAttr::get(
        ctx, {NamedAttribute(StringAttr::get(ctx, "tract.name"),
                             StringAttr::get(ctx, wanted))}));
  main.setAllResultAttrs(attributes);
  return llvm::Error::success();
}

llvm::Error Model::addAssertions(llvm::ArrayRef<std::string> assertions,
                                 llvm::ArrayRef<std::string> scenarioNames) {
  if (assertions.empty() && scenarioNames.empty())
    return llvm::Error::success();
  if (llvm::Error error = materialize())
    return error;
  changed = true;
  Builder builder(context.get());
  std::set<std::string> symbols = collectModuleSymbols(*module);

  SmallVector<Attribute> global;
  if (auto existing = (*module)->getAttrOfType<ArrayAttr>(kAssertionsAttrName))
    llvm::append_range(global, existing);
  // Scenario names in order, each with its assertions.
  SmallVector<std::pair<std::string, SmallVector<Attribute>>> scenarios;
  if (auto existing =
          (*module)->getAttrOfType<DictionaryAttr>(kScenariosAttrName))
    for (NamedAttribute scenario : existing)
      scenarios.emplace_back(
          scenario.getName().str(),
          llvm::to_vector(cast<ArrayAttr>(scenario.getValue()).getValue()));
  auto scenarioNamed = [&](StringRef wanted) -> SmallVector<Attribute> & {
    for (auto &[existing, relations] : scenarios)
      if (existing == wanted)
        return relations;
    scenarios.emplace_back(wanted.str(), SmallVector<Attribute>());
    return scenarios.back().second;
  };
  auto isIdentifier = [](StringRef text) {
    std::optional<TDim> parsed = TDim::parse(text);
    return parsed && parsed->getSymbolName() == text.str();
  };

  for (StringRef scenario : scenarioNames) {
    if (!isIdentifier(scenario.trim()))
      return makeError("--scenario expects a name, not '" + scenario.str() +
                       "'");
    scenarioNamed(scenario.trim());
  }
  for (StringRef text : assertions) {
    auto [scenario, rule] = text.split(':');
    if (rule.empty())
      std::swap(scenario, rule);
    scenario = scenario.trim();
    rule = rule.trim();
    if (!scenario.empty() && !isIdentifier(scenario))
      return makeError("--assert '" + text.str() + "': '" + scenario.str() +
                       "' is not a scenario name");
    std::string reason;
    std::optional<DimRelation> relation = DimRelation::parse(rule, &reason);
    if (!relation)
      return makeError("--assert '" + text.str() + "': " + reason);
    std::set<std::string> used;
    relation->lhs.collectSymbols(used);
    relation->rhs.collectSymbols(used);
    for (const std::string &symbol : used)
      if (!symbols.count(symbol))
        return makeError("--assert '" + text.str() +
                         "': the model has no symbol '" + symbol + "'");
    Attribute attr = builder.getStringAttr(relation->toString());
    if (scenario.empty())
      global.push_back(attr);
    else
      scenarioNamed(scenario).push_back(attr);
  }
  if (!global.empty())
    (*module)->setAttr(kAssertionsAttrName, builder.getArrayAttr(global));
  if (!scenarios.empty()) {
    SmallVector<NamedAttribute> entries;
    for (auto &[scenario, relations] : scenarios)
      entries.push_back(
          builder.getNamedAttr(scenario, builder.getArrayAttr(relations)));
    (*module)->setAttr(kScenariosAttrName, builder.getDictionaryAttr(entries));
  }
  return llvm::Error::success();
}

llvm::Error Model::addEdgeContext(int64_t left, int64_t right) {
  if (!left && !right)
    return llvm::Error::success();
  llvm::Expected<func::FuncOp> entry = entryToEdit();
  if (!entry)
    return entry.takeError();
  func::FuncOp main = *entry;
  Block &body = main.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&body);
  for (BlockArgument input : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(input.getType());
    if (!type || type.getRank() != 2)
      return makeError(
          "--edge-left-context and --edge-right-context pad inputs of "
          "rank 2 (frames, features); input '" +
          inputName(main, input.getArgNumber()) + "' has " +
          (type ? "rank " + std::to_string(type.getRank())
                : std::string("no rank")));
    // Named as tract names it, after the input.
    Location loc = NameLoc::get(
        b.getStringAttr(inputName(main, input.getArgNumber()) + "-pad"),
        input.getLoc());
    auto pad =
        PadOp::create(b, loc, input, ArrayRef<int64_t>{left, 0},
                      ArrayRef<int64_t>{right, 0}, PadMode::Edge, TypedAttr());
    input.replaceAllUsesExcept(pad, pad);
  }
  return llvm::Error::success();
}

llvm::Error Model::runPasses(llvm::StringRef what,
                             llvm::function_ref<void(OpPassManager &)> build) {
  if (llvm::Error error = materialize())
    return error;
  changed = true;
  PassManager pm(context.get());
  build(pm);
  TimingScope scope = timing ? timing->nest(what) : TimingScope();
  if (scope)
    pm.enableTiming(scope);
  diagnosticHandler->clear();
  if (failed(pm.run(*module)))
    return diagnosticHandler->takeError("");
  diagnosticHandler->flush();
  return llvm::Error::success();
}

llvm::Error Model::setSymbols(llvm::ArrayRef<std::string> values) {
  if (values.empty())
    return llvm::Error::success();
  TractSetOptions options;
  options.values.assign(values.begin(), values.end());
  return runPasses(
      "set", [&](OpPassManager &pm) { pm.addPass(createTractSet(options)); });
}

llvm::Error Model::declutter() {
  if (llvm::Error error = runPasses(
          "declutter", [](OpPassManager &pm) { buildDeclutterPipeline(pm); }))
    return error;
  decluttered = true;
  return llvm::Error::success();
}

namespace {

/// `S=8`, or `8` for a model with one symbol or a symbol S.
llvm::Expected<TractPulsifyOptions> parsePulse(llvm::StringRef text) {
  TractPulsifyOptions options;
  auto [symbol, value] = text.split('=');
  if (value.empty() && !text.contains('='))
    std::swap(symbol, value);
  if (value.trim().getAsInteger(10, options.pulse) || options.pulse <= 0)
    return makeError(
        "pulse '" + text.str() +
        "': expected SYMBOL=FRAMES (S=8), or FRAMES for a model with "
        "one symbol or a symbol S");
  options.symbol = symbol.trim().str();
  return options;
}

} // namespace

llvm::Error mlir::tract::lib::parseSetSymbols(llvm::StringRef transform,
                                              std::vector<std::string> &sets) {
  llvm::StringRef text = transform.trim();
  if (!text.consume_front("set_symbols"))
    return makeError("transform '" + transform +
                     "': expected set_symbols(values:{...})");
  auto unsupported = [&](const llvm::Twine &why) {
    return makeError("transform '" + transform + "': " + why);
  };
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

llvm::ArrayRef<llvm::StringRef> Model::transformNames() {
  static const llvm::StringRef kNames[] = {
      "declutter",         "pulse(S=8)",  "set_symbols(values:{\"S\":1})",
      "export_scan_state", "block-quant", "f16-weights",
      "detect-kv-cache",   "unfold-kv-cache", "transformers-detect-all",
      "nnef-cycle"};
  return kNames;
}

std::vector<std::pair<std::string, std::vector<std::string>>>
Model::supportedOps() {
  std::set<std::string> onnxOps;
  for (const auto &[op, version] : onnx::listSupportedOnnxOps())
    onnxOps.insert(op);
  std::vector<std::string> nnefOps = nnef::listSupportedNnefOps();
  llvm::sort(nnefOps);
  return {{"Onnx", {onnxOps.begin(), onnxOps.end()}}, {"Nnef", nnefOps}};
}

llvm::Error Model::transform(llvm::StringRef spec) {
  llvm::StringRef text = spec.trim();
  if (text == "declutter" || text == "optimize")
    return declutter();
  if (text == "export_scan_state")
    return runPasses("export-scan-state", [](OpPassManager &pm) {
      pm.addPass(createTractExportScanState());
    });
  if (text == "block-quant" || text == "f16-weights") {
    std::string format = text == "block-quant" ? "q4_0" : "f16";
    if (!decluttered)
      if (llvm::Error error = declutter())
        return error;
    return runPasses("block-quant", [&](OpPassManager &pm) {
      pm.addPass(createTractBlockQuant({format}));
    });
  }
  // tract's names take '-' and '_' alike; transformers_detect_all is
  // detect_kv_cache after the declutter that finds rotary embeddings and
  // attention.
  std::string name = text.str();
  std::replace(name.begin(), name.end(), '_', '-');
  if (name == "detect-kv-cache" || name == "transformers-detect-all") {
    if (!decluttered)
      if (llvm::Error error = declutter())
        return error;
    return runPasses("detect-kv-cache", [](OpPassManager &pm) {
      pm.addPass(createTractDetectKvCache());
    });
  }
  if (name == "unfold-kv-cache") {
    if (!decluttered)
      if (llvm::Error error = declutter())
        return error;
    return runPasses("unfold-kv-cache", [](OpPassManager &pm) {
      pm.addPass(createTractUnfoldKvCache());
    });
  }
  if (text == "nnef-cycle") {
    if (llvm::Error error = materialize())
      return error;
    nnef::ModelFiles files;
    files.origin = "the model written as NNEF";
    diagnosticHandler->clear();
    if (failed(nnef::exportNnef(*module, files)))
      return diagnosticHandler->takeError("");
    OwningOpRef<ModuleOp> cycled = nnef::importNnefFiles(files, context.get());
    if (!cycled)
      return diagnosticHandler->takeError("");
    module = std::move(cycled);
    changed = true;
    decluttered = false;
    return llvm::Error::success();
  }
  if (text.consume_front("pulse")) {
    text = text.trim();
    if (!text.consume_front("(") || !text.consume_back(")"))
      return makeError("transform '" + spec + "': expected pulse(S=8)");
    return pulse(text);
  }
  if (text.starts_with("set_symbols")) {
    std::vector<std::string> sets;
    if (llvm::Error error = parseSetSymbols(spec, sets))
      return error;
    return setSymbols(sets);
  }
  std::string known;
  for (llvm::StringRef name : transformNames())
    known += (known.empty() ? "" : ", ") + name.str();
  return makeError("transform '" + spec +
                   "': not supported; the transforms "
                   "are " +
                   known);
}

llvm::Error Model::pulse(llvm::StringRef spec) {
  llvm::Expected<TractPulsifyOptions> options = parsePulse(spec);
  if (!options)
    return options.takeError();
  if (!decluttered)
    if (llvm::Error error = declutter())
      return error;
  return runPasses("pulsify", [&](OpPassManager &pm) {
    pm.addPass(createTractPulsify(*options));
  });
}

bool Model::isPulsified() {
  return module && getPulseProperties(*module).has_value();
}

StateKinds mlir::tract::lib::stateKindsOf(ModuleOp module) {
  StateKinds kinds;
  kinds.inside = getPulseProperties(module).has_value();
  module->walk([&](DynKvCacheOp) { kinds.inside = true; });
  if (func::FuncOp main = entryFunction(module))
    for (unsigned i = 0; i < main.getNumArguments(); ++i)
      kinds.asInputs |= bool(main.getArgAttr(i, "tract.state"));
  return kinds;
}

bool Model::isStateful() {
  if (!module)
    return false;
  StateKinds kinds = stateKindsOf(*module);
  return kinds.inside || kinds.asInputs;
}

llvm::Error Model::externalizeState() {
  if (llvm::Error error = materialize())
    return error;
  StateKinds kinds = stateKindsOf(*module);
  if (!kinds.inside || kinds.asInputs)
    return llvm::Error::success();
  return runPasses("step function",
                   [](OpPassManager &pm) { buildStepFunctionPipeline(pm); });
}

llvm::Error Model::lowerTo(llvm::StringRef stage, const RunOptions &options) {
  if (stage != "integers" && stage != "linalg" && stage != "llvm")
    return makeError("unknown stage '" + stage +
                     "'; expected integers, linalg or llvm");
  bool pulsified = isPulsified();
  return runPasses("lower", [&](OpPassManager &pm) {
    if (pulsified)
      buildStepFunctionPipeline(pm);
    if (stage == "integers") {
      // The lowering's first step: quantized values as their integers, and
      // the products that run on them (tract's quantized NNEF).
      pm.addPass(createTractLowerQuantizedTypes());
      return;
    }
    if (stage == "linalg") {
      // As the llvm pipeline lowers it: behind its entry checks.
      buildLowerToLinalgPipeline(pm);
      return;
    }
    TargetInfo target = TargetInfo::host();
    target.threads = options.toJit().threads;
    target.threadingThreshold = options.threadingThreshold;
    buildLowerToLLVMPipeline(pm, target);
  });
}

std::string Model::getMlir() {
  if (llvm::Error error = materialize()) {
    llvm::consumeError(std::move(error));
    return "";
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return text;
}

llvm::Error Model::exportNnef(llvm::StringRef path, bool tractCore) {
  if (llvm::Error error = materialize())
    return error;
  nnef::ExportOptions options;
  options.tractCore = tractCore;
  diagnosticHandler->clear();
  if (failed(nnef::exportNnefTo(*module, path, options)))
    return diagnosticHandler->takeError("");
  return llvm::Error::success();
}

llvm::Expected<std::string> Model::getNnefGraph(bool tractCore) {
  if (llvm::Error error = materialize())
    return std::move(error);
  nnef::ExportOptions options;
  options.tractCore = tractCore;
  nnef::ModelFiles files;
  diagnosticHandler->clear();
  if (failed(nnef::exportNnef(*module, files, options)))
    return diagnosticHandler->takeError("");
  return files.files["graph.nnef"];
}

llvm::Expected<std::string> Model::listing(const DumpOptions &options) {
  if (llvm::Error error = materialize())
    return std::move(error);
  func::FuncOp entry = entryFunction(*module);
  if (!entry)
    return makeError("the model has no function to list");
  std::string text;
  llvm::raw_string_ostream os(text);
  printListing(entry, options, os);
  return text;
}

llvm::Expected<std::vector<std::string>> Model::returnEveryStep() {
  llvm::Expected<func::FuncOp> entry = entryToEdit();
  if (!entry)
    return entry.takeError();
  func::FuncOp main = *entry;
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
        std::string node = nodeName(op.getLoc());
        names.push_back(std::to_string(opId) + " " +
                        op.getName().stripDialect().str() +
                        (node.empty() ? "" : " " + node));
      }
  }
  terminator->setOperands(values);
  main.setType(FunctionType::get(context.get(), main.getArgumentTypes(),
                                 ValueRange(values).getTypes()));
  for (size_t i = numOutputs; i < values.size(); ++i)
    main.setResultAttr(
        i, "tract.name",
        StringAttr::get(context.get(), "step_" + std::to_string(i)));
  return names;
}

namespace {

/// The name of our op that tract calls `tractName` in its dumps: tract's
/// CamelCase in snake_case (GatherElements is gather_elements), but for
/// the few names tract spells otherwise; any template part (`Reduce<Sum>`)
/// is dropped. Empty when the dialect has no such op.
std::string opNameForTract(llvm::StringRef tractName, MLIRContext *context) {
  static const std::pair<llvm::StringRef, llvm::StringRef> kSpelledOtherwise[] =
      {{"EinSum", "einsum"},
       {"TypedConcat", "concat"},
       {"MultiBroadcastTo", "broadcast"},
       {"Iff", "select"},
       // Comparisons, as tract names them.
       {"Less", "lt"},
       {"LessEqual", "le"},
       {"Greater", "gt"},
       {"GreaterEqual", "ge"},
       {"Equals", "eq"},
       {"NotEquals", "ne"},
       // Bitwise ops and shifts.
       {"BitAnd", "bitand"},
       {"BitOr", "bitor"},
       {"BitXor", "bitxor"},
       {"BitNot", "bitnot"},
       {"ShiftLeft", "shl"},
       {"ShiftRight", "shr"},
       {"RoundHalfToEven", "round_even"},
       // tract's specialised forms of ours: a power by a constant is
       // Square, Sqrt, Rsqrt or Recip in both (snake_case finds them); a
       // product after tract's optimizer is an OptMatMul (here an einsum
       // until the lowering); its scan after codegen an OptScan.
       {"OptMatMul", "einsum"},
       {"OptScan", "scan"},
       {"LirScan", "scan"},
       {"DynamicKeyValueCache", "dyn_kv_cache"},
       {"DynKeyValueCache", "dyn_kv_cache"},
       {"GeluApproximate", "gelu_approx"},
       {"GatedDeltaNetRecurrent", "gdn_recurrent"},
       {"Topk", "topk"},
       {"ElementWiseOp", ""},
       {"TypedBinOp", ""}};
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

} // namespace

llvm::Expected<int64_t> Model::countOps(llvm::StringRef tractName) {
  if (llvm::Error error = materialize())
    return std::move(error);
  func::FuncOp main = entryFunction(*module);
  if (tractName == "Source")
    return main ? int64_t(main.getNumArguments()) : 0;
  std::string ours = opNameForTract(tractName, context.get());
  if (ours.empty())
    return makeError("tract's op '" + tractName +
                     "' has no counterpart in the tract dialect");
  int64_t count = 0;
  if (main)
    main.getBody().walk(
        [&](Operation *op) { count += op->getName().getStringRef() == ours; });
  return count;
}

//===----------------------------------------------------------------------===//
// Compiling to a file
//===----------------------------------------------------------------------===//

namespace {

/// LLVM's OpenMP runtime that code made for several threads links, as
/// found when the library was built; "" when it is gone.
std::string openmpLibraryPath() {
  llvm::StringRef library = TRACT_OPENMP_LIBRARY;
  return llvm::sys::fs::exists(library) ? library.str() : "";
}

/// The folder holding the runtime archives, near `binaryDir` (or this
/// library's folder); "" when none has them.
std::string findRuntimeDir(llvm::StringRef binaryDir) {
  std::string near = binaryDir.str();
  if (near.empty()) {
    Dl_info info;
    if (dladdr(reinterpret_cast<void *>(&findRuntimeDir), &info) &&
        info.dli_fname)
      near = llvm::sys::path::parent_path(info.dli_fname).str();
  }
  for (const char *relative : {"../runtime", ".", "../lib"}) {
    llvm::SmallString<256> folder(near);
    llvm::sys::path::append(folder, relative);
    llvm::SmallString<256> archive(folder);
    llvm::sys::path::append(archive, "libtract_runtime.a");
    if (llvm::sys::fs::exists(archive)) {
      llvm::sys::path::remove_dots(folder, /*remove_dot_dot=*/true);
      return folder.str().str();
    }
  }
  return "";
}

/// A C identifier from a file name: `silero-vad.o` gives `silero_vad`.
std::string modelNameFor(llvm::StringRef output) {
  std::string result = llvm::sys::path::stem(output).str();
  for (char &c : result)
    if (!llvm::isAlnum(c))
      c = '_';
  if (result.empty() || llvm::isDigit(result.front()))
    result = "model_" + result;
  return result;
}

} // namespace

llvm::Error Model::compile(llvm::StringRef output,
                           const CompileOptions &request) {
  if (llvm::Error error = materialize())
    return error;
  bool shared = output.ends_with(".so");
  // --target vulkan: the host's CPU, the tensor ops on a Vulkan device (as
  // --gpu vulkan).
  std::string gpu = request.gpu;
  llvm::StringRef targetName = request.target;
  bool onGpu =
      targetName == "vulkan" || targetName == "cuda" || targetName == "metal";
  if (onGpu)
    gpu = targetName.str();
  // Metal's host is a Mac, whatever this one is.
  const CpuTarget *target = gpu == "metal" ? &metalHostTarget()
                            : !targetName.empty() && !onGpu
                                ? lookupCpuTarget(targetName)
                                : hostCpuTarget();
  if (!target) {
    std::string names;
    for (const CpuTarget &known : cpuTargets())
      names += (names.empty() ? "" : ", ") + known.name.str();
    return makeError(
        !targetName.empty()
            ? "unknown --target '" + targetName + "'; expected one of " +
                  names + ", vulkan, cuda, metal"
            : "the host is none of the targets (" + names + "); give --target");
  }
  if (shared && target != hostCpuTarget())
    return makeError("a shared library is built for the host only; for " +
                     target->name + ", write an object file (-o model.o)");
  if (gpu == "metal" && !targetName.empty() && !onGpu)
    return makeError("--gpu metal compiles for a Mac (" + target->triple +
                     "), not " + targetName);
  if (gpu == "metal" && request.threads > 1)
    return makeError("--threads " + llvm::Twine(request.threads) +
                     ": a Mac has no OpenMP runtime by default; compile "
                     "Metal models for one thread");
  if (!gpu.empty() && gpu != "metal" && target != hostCpuTarget())
    return makeError("--gpu " + gpu + " compiles for the host's CPU, not " +
                     target->name);
  AotOptions options;
  options.target = target;
  options.gpu = gpu;
  options.spirvDir = request.spirvDir;
  options.mslDir = request.mslDir;
  options.ptxDir = request.ptxDir;
  options.cudaPath = request.cudaPath;
  options.cpu = request.cpu;
  // For CUDA, --cpu names the chip; the host's CPU is its baseline.
  if (gpu == "cuda") {
    options.gpuChip = request.cpu.empty() ? "sm_80" : request.cpu;
    if (!llvm::StringRef(options.gpuChip).starts_with("sm_"))
      return makeError("--cpu '" + options.gpuChip +
                       "' for cuda: expected a chip such as sm_80 or sm_90");
    options.cpu = "";
    // Code for the chip, where a toolkit can assemble it; else the driver
    // compiles the PTX when the program loads it.
    llvm::Expected<std::string> toolkit = resolveCudaToolkit(request.cudaPath);
    if (!toolkit)
      return toolkit.takeError();
    options.cudaPath = *toolkit;
    options.cudaFatbin = hasCudaAssembler(*toolkit);
    if (!options.cudaFatbin && diagnosticHandler->getEcho())
      *diagnosticHandler->getEcho()
          << "tract: note: no CUDA toolkit with ptxas and fatbinary: the "
             "object holds PTX, which the driver compiles when the program "
             "starts\n";
  }
  options.threads = request.threads > 0 ? request.threads : 1;
  options.threadingThreshold = request.threadingThreshold;
  options.timing = timing;
  options.name = request.name.empty() ? modelNameFor(output) : request.name;
  if (!isValidModelName(options.name))
    return makeError("--name '" + options.name +
                     "' is not a C identifier (letters, digits and _)");
  // The MSL is in the object, and in files for Xcode's tools.
  if (gpu == "metal" && options.mslDir.empty()) {
    llvm::SmallString<128> folder = llvm::sys::path::parent_path(output);
    llvm::sys::path::append(folder, options.name + "_metal");
    options.mslDir = folder.str().str();
  }

  // A shared library links the object with the runtime.
  llvm::SmallString<128> objectPath(output);
  if (shared)
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile(options.name, "o", objectPath))
      return makeError("cannot create a temporary object file: " +
                       ec.message());
  std::error_code ec;
  llvm::ToolOutputFile object(objectPath, ec, llvm::sys::fs::OF_None);
  if (ec)
    return makeError("cannot write " + objectPath + ": " + ec.message());
  // The model stays as it is: a copy is lowered.
  OwningOpRef<ModuleOp> lowered = module->clone();
  diagnosticHandler->clear();
  auto signature = compileToObject(*lowered, options, object.os());
  if (!signature)
    return diagnosticHandler->wrap(signature.takeError());
  diagnosticHandler->flush();
  object.os().close();
  if (object.os().has_error())
    return makeError("cannot write " + objectPath);
  object.keep();

  if (!request.header.empty()) {
    llvm::ToolOutputFile header(request.header, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return makeError("cannot write " + request.header + ": " + ec.message());
    header.os() << generateHeader(
        *signature, options, request.source.empty() ? name : request.source);
    header.keep();
  }
  if (!shared)
    return llvm::Error::success();

  auto cc = llvm::sys::findProgramByName("cc");
  if (!cc)
    return makeError("linking a shared library needs a C compiler driver "
                     "'cc' on the PATH");
  std::string runtimeDir = findRuntimeDir(request.binaryDir);
  if (runtimeDir.empty())
    return makeError("the runtime library (libtract_runtime.a) is not "
                     "installed near " +
                     (request.binaryDir.empty() ? std::string("libtract")
                                                : request.binaryDir));
  llvm::SmallString<256> runtime(runtimeDir);
  llvm::sys::path::append(runtime, "libtract_runtime.a");
  llvm::SmallVector<llvm::StringRef> command = {
      *cc, "-shared", "-o", output, objectPath, "-Wl,--whole-archive"};
  // The GPU runtime, which opens the device's driver at run time.
  llvm::SmallString<256> gpuRuntime(runtimeDir);
  if (!gpu.empty()) {
    llvm::sys::path::append(gpuRuntime, "libtract_runtime_" + gpu + ".a");
    if (!llvm::sys::fs::exists(gpuRuntime))
      return makeError("the GPU runtime library is not at " + gpuRuntime);
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
      return makeError("--threads " + llvm::Twine(options.threads) +
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
    return makeError("linking " + output + " failed" +
                     (message.empty() ? "" : ": " + message));
  return llvm::Error::success();
}
