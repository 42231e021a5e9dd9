//===- CApi.cpp - tract.h over lib/Model.h
//---------------------------------===//
//
// Each entry point checks its pointers, calls libtract and turns an
// llvm::Error into TRACT_RESULT_KO with the message kept for
// tract_get_last_error. The library is built without C++ exceptions, and
// none of its code throws; allocation failures abort as in any LLVM tool.
//
//===----------------------------------------------------------------------===//

#include "lib/tract.h"

#include "lib/Model.h"

#include "llvm/Support/Threading.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::tract;

struct TractNnef {
  bool tractCore = true;
};
struct TractOnnx {};
struct TractModel {
  std::unique_ptr<lib::Model> model;
};
struct TractRunnable {
  std::unique_ptr<lib::Runnable> runnable;
};
struct TractState {
  std::unique_ptr<lib::State> state;
};
struct TractValue {
  /// The descriptor runs take; its data is `owned`'s or the caller's.
  tract_tensor tensor = {};
  /// A tensor the runtime allocated (a copy, or a run's output).
  tract_tensor *owned = nullptr;
  std::vector<size_t> shape;
  ~TractValue() { tract_tensor_free(owned); }
};

namespace {

thread_local std::string lastError;
thread_local bool hasLastError = false;

TRACT_RESULT ko(const llvm::Twine &message) {
  lastError = message.str();
  hasLastError = true;
  return TRACT_RESULT_KO;
}

TRACT_RESULT ko(llvm::Error error) {
  return ko(llvm::toString(std::move(error)));
}

TRACT_RESULT ok() {
  hasLastError = false;
  return TRACT_RESULT_OK;
}

#define TRACT_CHECK_ARG(arg)                                                   \
  do {                                                                         \
    if (!(arg))                                                                \
      return ko(llvm::Twine(__func__) + ": " #arg " is NULL");                 \
  } while (false)

char *copyString(llvm::StringRef text) {
  char *copy = static_cast<char *>(std::malloc(text.size() + 1));
  if (!copy)
    return nullptr;
  std::memcpy(copy, text.data(), text.size());
  copy[text.size()] = 0;
  return copy;
}

TRACT_RESULT giveString(llvm::StringRef text, char **out) {
  *out = copyString(text);
  if (!*out)
    return ko("out of memory");
  return ok();
}

constexpr std::pair<TractDatumType, tract_dtype> kDatumTypes[] = {
    {TRACT_DATUM_TYPE_BOOL, TRACT_DT_BOOL},
    {TRACT_DATUM_TYPE_U8, TRACT_DT_U8},
    {TRACT_DATUM_TYPE_U16, TRACT_DT_U16},
    {TRACT_DATUM_TYPE_U32, TRACT_DT_U32},
    {TRACT_DATUM_TYPE_U64, TRACT_DT_U64},
    {TRACT_DATUM_TYPE_I8, TRACT_DT_I8},
    {TRACT_DATUM_TYPE_I16, TRACT_DT_I16},
    {TRACT_DATUM_TYPE_I32, TRACT_DT_I32},
    {TRACT_DATUM_TYPE_I64, TRACT_DT_I64},
    {TRACT_DATUM_TYPE_F16, TRACT_DT_F16},
    {TRACT_DATUM_TYPE_F32, TRACT_DT_F32},
    {TRACT_DATUM_TYPE_F64, TRACT_DT_F64},
    {TRACT_DATUM_TYPE_BF16, TRACT_DT_BF16}};

bool toRuntimeDtype(TractDatumType type, tract_dtype &dtype) {
  for (auto [ours, runtime] : kDatumTypes)
    if (ours == type) {
      dtype = runtime;
      return true;
    }
  return false;
}

TractDatumType fromRuntimeDtype(tract_dtype dtype) {
  for (auto [ours, runtime] : kDatumTypes)
    if (runtime == dtype)
      return ours;
  return TRACT_DATUM_TYPE_F32;
}

/// A value made from a runtime tensor, which it now owns.
TractValue *adopt(tract_tensor *tensor) {
  auto *value = new TractValue();
  value->owned = tensor;
  value->tensor = *tensor;
  for (int32_t axis = 0; axis < tensor->rank; ++axis)
    value->shape.push_back(static_cast<size_t>(tensor->dims[axis]));
  return value;
}

/// The descriptor of a value: checks the type and rank.
TRACT_RESULT makeDescriptor(TractDatumType datumType, size_t rank,
                            const size_t *shape, tract_tensor &tensor) {
  tract_dtype dtype;
  if (!toRuntimeDtype(datumType, dtype))
    return ko("tract_value: unknown datum type " + llvm::Twine(datumType));
  if (rank > TRACT_MAX_RANK)
    return ko("tract_value: rank " + llvm::Twine(rank) + " is over " +
              llvm::Twine(TRACT_MAX_RANK));
  if (rank && !shape)
    return ko("tract_value: shape is NULL");
  tensor.dtype = dtype;
  tensor.rank = static_cast<int32_t>(rank);
  for (size_t axis = 0; axis < rank; ++axis) {
    if (shape[axis] > size_t(INT64_MAX))
      return ko("tract_value: dim " + llvm::Twine(axis) + " is too large");
    tensor.dims[axis] = static_cast<int64_t>(shape[axis]);
  }
  return TRACT_RESULT_OK;
}

template <typename Handle> TRACT_RESULT destroy(Handle **handle) {
  TRACT_CHECK_ARG(handle);
  delete *handle;
  *handle = nullptr;
  return ok();
}

TRACT_RESULT giveModel(llvm::Expected<std::unique_ptr<lib::Model>> loaded,
                       TractModel **model) {
  if (!loaded)
    return ko(loaded.takeError());
  // Read now, so that a broken file fails here (ONNX waits for facts, but
  // its bytes are checked).
  if (auto module = (*loaded)->getModule(); !module)
    return ko(module.takeError());
  *model = new TractModel{std::move(*loaded)};
  return ok();
}

TRACT_RESULT
giveLazyModel(llvm::Expected<std::unique_ptr<lib::Model>> loaded,
              TractModel **model) {
  if (!loaded)
    return ko(loaded.takeError());
  *model = new TractModel{std::move(*loaded)};
  return ok();
}

/// A model from a file or folder: NNEF is read now, so that a broken one
/// fails here; ONNX and the formats told from the path when first needed.
TRACT_RESULT loadPath(const char *path, lib::SourceFormat format,
                      TractModel **model) {
  *model = nullptr;
  auto loaded = lib::Model::load(path, format);
  return format == lib::SourceFormat::Nnef
             ? giveModel(std::move(loaded), model)
             : giveLazyModel(std::move(loaded), model);
}

/// A model from bytes in memory; ONNX is read when first needed (facts).
TRACT_RESULT loadBuffer(const void *data, size_t length,
                        lib::SourceFormat format, llvm::StringRef name,
                        TractModel **model) {
  *model = nullptr;
  auto loaded = lib::Model::loadBytes(
      llvm::StringRef(static_cast<const char *>(data), length), format, name);
  return format == lib::SourceFormat::Onnx
             ? giveLazyModel(std::move(loaded), model)
             : giveModel(std::move(loaded), model);
}

/// The descriptors of `count` values.
TRACT_RESULT descriptorsOf(TractValue **values, size_t count,
                           std::vector<const tract_tensor *> &descriptors) {
  if (count && !values)
    return ko("inputs is NULL");
  for (size_t i = 0; i < count; ++i) {
    if (!values[i])
      return ko("input " + llvm::Twine(i) + " is NULL");
    descriptors.push_back(&values[i]->tensor);
  }
  return TRACT_RESULT_OK;
}

TRACT_RESULT giveOutputs(llvm::Expected<std::vector<tract_tensor *>> results,
                         TractValue **outputs) {
  if (!results)
    return ko(results.takeError());
  for (auto [index, result] : llvm::enumerate(*results))
    outputs[index] = adopt(result);
  return ok();
}

llvm::Expected<TensorSignature> signatureAt(TractModel *model, size_t index,
                                            bool input) {
  auto signature = model->model->getSignature();
  if (!signature)
    return signature.takeError();
  std::vector<TensorSignature> &list =
      input ? signature->inputs : signature->outputs;
  if (index >= list.size())
    return lib::makeError("the model has " + llvm::Twine(list.size()) +
                          (input ? " inputs" : " outputs") + "; no " +
                          llvm::Twine(index));
  return list[index];
}

std::string factOf(const TensorSignature &signature) {
  std::string shape = signature.shapeString();
  std::string dtype =
      llvm::StringRef(tract_dtype_name(signature.dtype)).lower();
  return shape + (shape.empty() ? "" : ",") + dtype;
}

} // namespace

extern "C" {

const char *tract_get_last_error(void) {
  return hasLastError ? lastError.c_str() : nullptr;
}

const char *tract_version(void) {
  return "tract-mlir " TRACT_VERSION " (MLIR " TRACT_LLVM_VERSION ")";
}

void tract_free_cstring(char *string) { std::free(string); }

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

TRACT_RESULT tract_nnef_create(TractNnef **nnef) {
  TRACT_CHECK_ARG(nnef);
  *nnef = new TractNnef();
  return ok();
}

TRACT_RESULT tract_nnef_destroy(TractNnef **nnef) { return destroy(nnef); }

TRACT_RESULT tract_nnef_enable_tract_core(TractNnef *nnef) {
  TRACT_CHECK_ARG(nnef);
  nnef->tractCore = true;
  return ok();
}

TRACT_RESULT tract_nnef_enable_onnx(TractNnef *nnef) {
  TRACT_CHECK_ARG(nnef);
  return ok();
}

TRACT_RESULT tract_nnef_enable_pulse(TractNnef *nnef) {
  TRACT_CHECK_ARG(nnef);
  return ok();
}

TRACT_RESULT tract_nnef_load(const TractNnef *nnef, const char *path,
                             TractModel **model) {
  TRACT_CHECK_ARG(nnef);
  TRACT_CHECK_ARG(path);
  TRACT_CHECK_ARG(model);
  return loadPath(path, lib::SourceFormat::Nnef, model);
}

TRACT_RESULT tract_nnef_load_buffer(const TractNnef *nnef, const void *data,
                                    size_t length, TractModel **model) {
  TRACT_CHECK_ARG(nnef);
  TRACT_CHECK_ARG(data);
  TRACT_CHECK_ARG(model);
  return loadBuffer(data, length, lib::SourceFormat::Nnef,
                    "the NNEF archive in memory", model);
}

static TRACT_RESULT writeNnef(const TractNnef *nnef, const char *path,
                              TractModel *model) {
  TRACT_CHECK_ARG(nnef);
  TRACT_CHECK_ARG(path);
  TRACT_CHECK_ARG(model);
  if (llvm::Error error = model->model->exportNnef(path, nnef->tractCore))
    return ko(std::move(error));
  return ok();
}

TRACT_RESULT tract_nnef_write_model_to_tar(const TractNnef *nnef,
                                           const char *path,
                                           TractModel *model) {
  return writeNnef(nnef, path, model);
}

TRACT_RESULT tract_nnef_write_model_to_dir(const TractNnef *nnef,
                                           const char *path,
                                           TractModel *model) {
  return writeNnef(nnef, path, model);
}

TRACT_RESULT tract_onnx_create(TractOnnx **onnx) {
  TRACT_CHECK_ARG(onnx);
  *onnx = new TractOnnx();
  return ok();
}

TRACT_RESULT tract_onnx_destroy(TractOnnx **onnx) { return destroy(onnx); }

TRACT_RESULT tract_onnx_load(const TractOnnx *onnx, const char *path,
                             TractModel **model) {
  TRACT_CHECK_ARG(onnx);
  TRACT_CHECK_ARG(path);
  TRACT_CHECK_ARG(model);
  return loadPath(path, lib::SourceFormat::Onnx, model);
}

TRACT_RESULT tract_onnx_load_buffer(const TractOnnx *onnx, const void *data,
                                    size_t length, TractModel **model) {
  TRACT_CHECK_ARG(onnx);
  TRACT_CHECK_ARG(data);
  TRACT_CHECK_ARG(model);
  return loadBuffer(data, length, lib::SourceFormat::Onnx,
                    "the ONNX model in memory", model);
}

TRACT_RESULT tract_model_load(const char *path, TractModel **model) {
  TRACT_CHECK_ARG(path);
  TRACT_CHECK_ARG(model);
  return loadPath(path, lib::SourceFormat::Auto, model);
}

TRACT_RESULT tract_model_destroy(TractModel **model) { return destroy(model); }

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

TRACT_RESULT tract_model_input_count(TractModel *model, size_t *count) {
  TRACT_CHECK_ARG(model);
  TRACT_CHECK_ARG(count);
  auto signature = model->model->getSignature();
  if (!signature)
    return ko(signature.takeError());
  *count = signature->inputs.size();
  return ok();
}

TRACT_RESULT tract_model_output_count(TractModel *model, size_t *count) {
  TRACT_CHECK_ARG(model);
  TRACT_CHECK_ARG(count);
  auto signature = model->model->getSignature();
  if (!signature)
    return ko(signature.takeError());
  *count = signature->outputs.size();
  return ok();
}

static TRACT_RESULT describe(TractModel *model, size_t index, bool input,
                             bool fact, char **out) {
  TRACT_CHECK_ARG(model);
  TRACT_CHECK_ARG(out);
  *out = nullptr;
  auto signature = signatureAt(model, index, input);
  if (!signature)
    return ko(signature.takeError());
  return giveString(fact ? factOf(*signature) : signature->name, out);
}

TRACT_RESULT tract_model_input_name(TractModel *model, size_t input,
                                    char **name) {
  return describe(model, input, true, false, name);
}

TRACT_RESULT tract_model_output_name(TractModel *model, size_t output,
                                     char **name) {
  return describe(model, output, false, false, name);
}

TRACT_RESULT tract_model_input_fact(TractModel *model, size_t input,
                                    char **fact) {
  return describe(model, input, true, true, fact);
}

TRACT_RESULT tract_model_output_fact(TractModel *model, size_t output,
                                     char **fact) {
  return describe(model, output, false, true, fact);
}

TRACT_RESULT tract_model_set_input_fact(TractModel *model, size_t input,
                                        const char *fact) {
  TRACT_CHECK_ARG(model);
  TRACT_CHECK_ARG(fact);
  // The model is read again with its facts when next needed, so that
  // facts that only work together can be given one by one.
  if (llvm::Error error = model->model->setInputFact(input, fact))
    return ko(std::move(error));
  return ok();
}

TRACT_RESULT tract_model_set_output_names(TractModel *model, size_t count,
                                          const char *const *names) {
  TRACT_CHECK_ARG(model);
  if (count)
    TRACT_CHECK_ARG(names);
  std::vector<std::string> wanted;
  for (size_t i = 0; i < count; ++i) {
    if (!names[i])
      return ko("tract_model_set_output_names: name " + llvm::Twine(i) +
                " is NULL");
    wanted.push_back(names[i]);
  }
  if (llvm::Error error = model->model->selectOutputs(wanted))
    return ko(std::move(error));
  return ok();
}

TRACT_RESULT tract_model_add_assertion(TractModel *model,
                                       const char *assertion) {
  TRACT_CHECK_ARG(model);
  TRACT_CHECK_ARG(assertion);
  if (llvm::Error error = model->model->addAssertions({std::string(assertion)}))
    return ko(std::move(error));
  return ok();
}

TRACT_RESULT tract_model_concretize_symbols(TractModel *model, size_t count,
                                            const char *const *symbols,
                                            const int64_t *values) {
  TRACT_CHECK_ARG(model);
  if (count) {
    TRACT_CHECK_ARG(symbols);
    TRACT_CHECK_ARG(values);
  }
  std::vector<std::string> sets;
  for (size_t i = 0; i < count; ++i) {
    if (!symbols[i])
      return ko("tract_model_concretize_symbols: symbol " + llvm::Twine(i) +
                " is NULL");
    sets.push_back(std::string(symbols[i]) + "=" + std::to_string(values[i]));
  }
  if (llvm::Error error = model->model->setSymbols(sets))
    return ko(std::move(error));
  return ok();
}

TRACT_RESULT tract_model_transform(TractModel *model, const char *transform) {
  TRACT_CHECK_ARG(model);
  TRACT_CHECK_ARG(transform);
  if (llvm::Error error = model->model->transform(transform))
    return ko(std::move(error));
  return ok();
}

TRACT_RESULT tract_model_declutter(TractModel *model) {
  TRACT_CHECK_ARG(model);
  if (llvm::Error error = model->model->declutter())
    return ko(std::move(error));
  return ok();
}

TRACT_RESULT tract_model_optimize(TractModel *model) {
  return tract_model_declutter(model);
}

TRACT_RESULT tract_model_pulse_simple(TractModel *model, const char *symbol,
                                      const char *pulse) {
  TRACT_CHECK_ARG(model);
  TRACT_CHECK_ARG(symbol);
  TRACT_CHECK_ARG(pulse);
  if (llvm::Error error =
          model->model->pulse(std::string(symbol) + "=" + pulse))
    return ko(std::move(error));
  return ok();
}

TRACT_RESULT tract_model_dump_mlir(TractModel *model, char **text) {
  TRACT_CHECK_ARG(model);
  TRACT_CHECK_ARG(text);
  *text = nullptr;
  if (auto module = model->model->getModule(); !module)
    return ko(module.takeError());
  return giveString(model->model->getMlir(), text);
}

TRACT_RESULT tract_model_profile_json(TractModel *model, TractValue **inputs,
                                      char **json) {
  TRACT_CHECK_ARG(model);
  TRACT_CHECK_ARG(json);
  *json = nullptr;
  auto signature = model->model->getSignature();
  if (!signature)
    return ko(signature.takeError());
  std::vector<const tract_tensor *> descriptors;
  if (TRACT_RESULT result =
          descriptorsOf(inputs, signature->inputs.size(), descriptors))
    return result;
  lib::RunOptions options;
  options.threads = 0;
  lib::BenchOptions bench;
  bench.maxTimeMs = 200;
  auto profile = model->model->profile(descriptors, options, bench);
  if (!profile)
    return ko(profile.takeError());
  lib::DumpOptions dump;
  dump.json = true;
  dump.profile = &*profile;
  auto listing = model->model->listing(dump);
  if (!listing)
    return ko(listing.takeError());
  return giveString(*listing, json);
}

TRACT_RESULT tract_model_compile(TractModel *model, const char *path,
                                 const char *target, const char *header) {
  TRACT_CHECK_ARG(model);
  TRACT_CHECK_ARG(path);
  lib::CompileOptions options;
  options.target = target ? target : "";
  options.header = header ? header : "";
  if (llvm::Error error = model->model->externalizeState())
    return ko(std::move(error));
  if (llvm::Error error = model->model->compile(path, options))
    return ko(std::move(error));
  return ok();
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

TRACT_RESULT tract_model_compile_runnable(TractModel *model, int32_t threads,
                                          const char *gpu,
                                          TractRunnable **runnable) {
  TRACT_CHECK_ARG(model);
  TRACT_CHECK_ARG(runnable);
  *runnable = nullptr;
  if (threads < 0)
    return ko("tract_model_compile_runnable: threads is negative");
  lib::RunOptions options;
  options.threads = threads;
  options.gpu = gpu ? gpu : "";
  auto compiled = model->model->intoRunnable(options);
  if (!compiled)
    return ko(compiled.takeError());
  *runnable = new TractRunnable{std::move(*compiled)};
  return ok();
}

TRACT_RESULT tract_model_into_runnable(TractModel **model,
                                       TractRunnable **runnable) {
  TRACT_CHECK_ARG(model);
  TRACT_CHECK_ARG(*model);
  TRACT_RESULT result =
      tract_model_compile_runnable(*model, 0, nullptr, runnable);
  if (result == TRACT_RESULT_OK)
    tract_model_destroy(model);
  return result;
}

TRACT_RESULT tract_runnable_release(TractRunnable **runnable) {
  return destroy(runnable);
}

TRACT_RESULT tract_runnable_input_count(const TractRunnable *runnable,
                                        size_t *count) {
  TRACT_CHECK_ARG(runnable);
  TRACT_CHECK_ARG(count);
  *count = runnable->runnable->getInputs().size();
  return ok();
}

TRACT_RESULT tract_runnable_output_count(const TractRunnable *runnable,
                                         size_t *count) {
  TRACT_CHECK_ARG(runnable);
  TRACT_CHECK_ARG(count);
  *count = runnable->runnable->getOutputs().size();
  return ok();
}

static TRACT_RESULT describeRunnable(const TractRunnable *runnable,
                                     size_t index, bool input, bool fact,
                                     char **out) {
  TRACT_CHECK_ARG(runnable);
  TRACT_CHECK_ARG(out);
  *out = nullptr;
  llvm::ArrayRef<TensorSignature> list = input
                                             ? runnable->runnable->getInputs()
                                             : runnable->runnable->getOutputs();
  if (index >= list.size())
    return ko("the runnable has " + llvm::Twine(list.size()) +
              (input ? " inputs" : " outputs") + "; no " + llvm::Twine(index));
  return giveString(fact ? factOf(list[index]) : list[index].name, out);
}

TRACT_RESULT tract_runnable_input_name(const TractRunnable *runnable,
                                       size_t input, char **name) {
  return describeRunnable(runnable, input, true, false, name);
}

TRACT_RESULT tract_runnable_output_name(const TractRunnable *runnable,
                                        size_t output, char **name) {
  return describeRunnable(runnable, output, false, false, name);
}

TRACT_RESULT tract_runnable_input_fact(const TractRunnable *runnable,
                                       size_t input, char **fact) {
  return describeRunnable(runnable, input, true, true, fact);
}

TRACT_RESULT tract_runnable_output_fact(const TractRunnable *runnable,
                                        size_t output, char **fact) {
  return describeRunnable(runnable, output, false, true, fact);
}

TRACT_RESULT tract_runnable_run(TractRunnable *runnable, TractValue **inputs,
                                TractValue **outputs) {
  TRACT_CHECK_ARG(runnable);
  TRACT_CHECK_ARG(outputs);
  std::vector<const tract_tensor *> descriptors;
  if (TRACT_RESULT result = descriptorsOf(
          inputs, runnable->runnable->getInputs().size(), descriptors))
    return result;
  return giveOutputs(runnable->runnable->run(descriptors), outputs);
}

TRACT_RESULT tract_runnable_spawn_state_with_symbols(TractRunnable *runnable,
                                                     size_t count,
                                                     const char *const *symbols,
                                                     const int64_t *values,
                                                     TractState **state) {
  TRACT_CHECK_ARG(runnable);
  TRACT_CHECK_ARG(state);
  *state = nullptr;
  if (count) {
    TRACT_CHECK_ARG(symbols);
    TRACT_CHECK_ARG(values);
  }
  SymbolValues given;
  for (size_t i = 0; i < count; ++i) {
    if (!symbols[i])
      return ko("tract_runnable_spawn_state: symbol " + llvm::Twine(i) +
                " is NULL");
    given[symbols[i]] = values[i];
  }
  auto spawned = runnable->runnable->spawnState(given);
  if (!spawned)
    return ko(spawned.takeError());
  *state = new TractState{std::move(*spawned)};
  return ok();
}

TRACT_RESULT tract_runnable_spawn_state(TractRunnable *runnable,
                                        TractState **state) {
  return tract_runnable_spawn_state_with_symbols(runnable, 0, nullptr, nullptr,
                                                 state);
}

TRACT_RESULT tract_state_run(TractState *state, TractValue **inputs,
                             TractValue **outputs) {
  TRACT_CHECK_ARG(state);
  TRACT_CHECK_ARG(outputs);
  std::vector<const tract_tensor *> descriptors;
  if (TRACT_RESULT result = descriptorsOf(
          inputs, state->state->getRunnable().getInputs().size(), descriptors))
    return result;
  return giveOutputs(state->state->run(descriptors), outputs);
}

TRACT_RESULT tract_state_destroy(TractState **state) { return destroy(state); }

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

TRACT_RESULT tract_value_from_bytes(TractDatumType datumType, size_t rank,
                                    const size_t *shape, const void *data,
                                    TractValue **value) {
  TRACT_CHECK_ARG(value);
  *value = nullptr;
  tract_tensor descriptor = {};
  if (TRACT_RESULT result = makeDescriptor(datumType, rank, shape, descriptor))
    return result;
  tract_tensor *tensor =
      tract_tensor_new(descriptor.dtype, descriptor.rank, descriptor.dims);
  if (!tensor)
    return ko(tract_last_error());
  size_t bytes = tract_tensor_nbytes(tensor);
  if (bytes && !data) {
    tract_tensor_free(tensor);
    return ko("tract_value_from_bytes: data is NULL");
  }
  if (bytes)
    std::memcpy(tensor->data, data, bytes);
  *value = adopt(tensor);
  return ok();
}

TRACT_RESULT tract_value_from_data(TractDatumType datumType, size_t rank,
                                   const size_t *shape, const void *data,
                                   TractValue **value) {
  TRACT_CHECK_ARG(value);
  *value = nullptr;
  auto made = std::make_unique<TractValue>();
  if (TRACT_RESULT result =
          makeDescriptor(datumType, rank, shape, made->tensor))
    return result;
  if (!data && tract_tensor_nbytes(&made->tensor))
    return ko("tract_value_from_data: data is NULL");
  made->tensor.data = const_cast<void *>(data);
  made->shape.assign(shape, shape + rank);
  *value = made.release();
  return ok();
}

TRACT_RESULT tract_value_as_bytes(const TractValue *value,
                                  TractDatumType *datumType, size_t *rank,
                                  const size_t **shape, const void **data) {
  TRACT_CHECK_ARG(value);
  if (datumType)
    *datumType = fromRuntimeDtype(value->tensor.dtype);
  if (rank)
    *rank = value->shape.size();
  if (shape)
    *shape = value->shape.data();
  if (data)
    *data = value->tensor.data;
  return ok();
}

TRACT_RESULT tract_value_destroy(TractValue **value) { return destroy(value); }

} // extern "C"
