// tract.hpp - the C++ API of libtract: RAII types over tract.h.
//
//   auto model = tract::Model::nnef("silero_vad.nnef.tgz");
//   model.transform("pulse(S=512)");
//   auto runnable = model.intoRunnable();
//   auto state = runnable.spawnState();
//   std::vector<tract::Value> out = state.run({tract::Value::borrow(pcm)});
//
// Header only, over the C functions of tract.h, so that it is compiled by
// the program that uses it (with its own C++ library and exceptions). A
// failure throws tract::Error with the library's message. Threads: as in
// tract.h (a Model or a State on one thread at a time, a Runnable from any
// number at once).
#ifndef TRACT_HPP
#define TRACT_HPP

#include "tract.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tract {

class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

namespace detail {

inline void check(TRACT_RESULT result) {
  if (result == TRACT_RESULT_OK)
    return;
  const char *message = tract_get_last_error();
  throw Error(message ? message : "tract: unknown error");
}

inline std::string take(char *text) {
  std::string copy = text ? text : "";
  tract_free_cstring(text);
  return copy;
}

template <typename T> struct DatumTypeOf;
#define TRACT_HPP_DATUM(type, value)                                           \
  template <> struct DatumTypeOf<type> {                                       \
    static constexpr TractDatumType datumType = value;                        \
  };
TRACT_HPP_DATUM(bool, TRACT_DATUM_TYPE_BOOL)
TRACT_HPP_DATUM(uint8_t, TRACT_DATUM_TYPE_U8)
TRACT_HPP_DATUM(uint16_t, TRACT_DATUM_TYPE_U16)
TRACT_HPP_DATUM(uint32_t, TRACT_DATUM_TYPE_U32)
TRACT_HPP_DATUM(uint64_t, TRACT_DATUM_TYPE_U64)
TRACT_HPP_DATUM(int8_t, TRACT_DATUM_TYPE_I8)
TRACT_HPP_DATUM(int16_t, TRACT_DATUM_TYPE_I16)
TRACT_HPP_DATUM(int32_t, TRACT_DATUM_TYPE_I32)
TRACT_HPP_DATUM(int64_t, TRACT_DATUM_TYPE_I64)
TRACT_HPP_DATUM(float, TRACT_DATUM_TYPE_F32)
TRACT_HPP_DATUM(double, TRACT_DATUM_TYPE_F64)
#undef TRACT_HPP_DATUM

} // namespace detail

/// A tensor: a copy of the caller's data, a view of it, or a run's output.
class Value {
public:
  Value() = default;
  explicit Value(TractValue *handle) : handle(handle, &destroy) {}

  /// A copy of `data`, dense and row-major.
  static Value fromBytes(TractDatumType type, const std::vector<size_t> &shape,
                         const void *data) {
    TractValue *value = nullptr;
    detail::check(
        tract_value_from_bytes(type, shape.size(), shape.data(), data, &value));
    return Value(value);
  }
  template <typename T>
  static Value fromData(const std::vector<size_t> &shape, const T *data) {
    return fromBytes(detail::DatumTypeOf<T>::datumType, shape, data);
  }
  /// A view of `data`, which must outlive the value.
  static Value borrow(TractDatumType type, const std::vector<size_t> &shape,
                      const void *data) {
    TractValue *value = nullptr;
    detail::check(
        tract_value_from_data(type, shape.size(), shape.data(), data, &value));
    return Value(value);
  }
  template <typename T>
  static Value borrow(const std::vector<size_t> &shape, const T *data) {
    return borrow(detail::DatumTypeOf<T>::datumType, shape, data);
  }

  TractDatumType datumType() const {
    TractDatumType type;
    detail::check(
        tract_value_as_bytes(get(), &type, nullptr, nullptr, nullptr));
    return type;
  }
  std::vector<size_t> shape() const {
    size_t rank = 0;
    const size_t *dims = nullptr;
    detail::check(tract_value_as_bytes(get(), nullptr, &rank, &dims, nullptr));
    return std::vector<size_t>(dims, dims + rank);
  }
  size_t size() const {
    size_t count = 1;
    for (size_t dim : shape())
      count *= dim;
    return count;
  }
  const void *bytes() const {
    const void *data = nullptr;
    detail::check(tract_value_as_bytes(get(), nullptr, nullptr, nullptr, &data));
    return data;
  }
  /// The elements, read in place; T must match the datum type.
  template <typename T> const T *data() const {
    if (datumType() != detail::DatumTypeOf<T>::datumType)
      throw Error("tract::Value::data: the value holds another type");
    return static_cast<const T *>(bytes());
  }

  TractValue *get() const { return handle.get(); }

private:
  static void destroy(TractValue *value) { tract_value_destroy(&value); }
  std::shared_ptr<TractValue> handle;
};

namespace detail {
inline std::vector<TractValue *> handles(const std::vector<Value> &values) {
  std::vector<TractValue *> result;
  for (const Value &value : values)
    result.push_back(value.get());
  return result;
}
inline std::vector<Value> adopt(std::vector<TractValue *> &outputs) {
  std::vector<Value> values;
  for (TractValue *output : outputs)
    values.emplace_back(output);
  return values;
}
} // namespace detail

class Runnable;

/// A stream through a runnable (which must outlive it).
class State {
public:
  explicit State(TractState *handle, size_t outputs)
      : handle(handle, &destroy), outputs(outputs) {}
  std::vector<Value> run(const std::vector<Value> &inputs) {
    std::vector<TractValue *> in = detail::handles(inputs);
    std::vector<TractValue *> out(outputs, nullptr);
    detail::check(tract_state_run(handle.get(), in.data(), out.data()));
    return detail::adopt(out);
  }

private:
  static void destroy(TractState *state) { tract_state_destroy(&state); }
  std::unique_ptr<TractState, void (*)(TractState *)> handle;
  size_t outputs;
};

/// A model compiled in process.
class Runnable {
public:
  explicit Runnable(TractRunnable *handle) : handle(handle, &destroy) {}
  size_t inputCount() const {
    size_t count = 0;
    detail::check(tract_runnable_input_count(handle.get(), &count));
    return count;
  }
  size_t outputCount() const {
    size_t count = 0;
    detail::check(tract_runnable_output_count(handle.get(), &count));
    return count;
  }
  std::vector<Value> run(const std::vector<Value> &inputs) const {
    if (inputs.size() != inputCount())
      throw Error("the model takes " + std::to_string(inputCount()) +
                  " inputs, " + std::to_string(inputs.size()) + " given");
    std::vector<TractValue *> in = detail::handles(inputs);
    std::vector<TractValue *> out(outputCount(), nullptr);
    detail::check(tract_runnable_run(handle.get(), in.data(), out.data()));
    return detail::adopt(out);
  }
  State spawnState(const std::map<std::string, int64_t> &symbols = {}) const {
    std::vector<const char *> names;
    std::vector<int64_t> values;
    for (const auto &[name, value] : symbols) {
      names.push_back(name.c_str());
      values.push_back(value);
    }
    TractState *state = nullptr;
    detail::check(tract_runnable_spawn_state_with_symbols(
        handle.get(), names.size(), names.data(), values.data(), &state));
    return State(state, outputCount());
  }

private:
  static void destroy(TractRunnable *runnable) {
    tract_runnable_release(&runnable);
  }
  std::unique_ptr<TractRunnable, void (*)(TractRunnable *)> handle;
};

/// A model of the tract dialect: facts, symbols, transforms, then a
/// runnable or a compiled file.
class Model {
public:
  explicit Model(TractModel *handle) : handle(handle, &destroy) {}

  /// Any format, told from the path (.onnx, NNEF folder or archive, .mlir).
  static Model load(const std::string &path) {
    TractModel *model = nullptr;
    detail::check(tract_model_load(path.c_str(), &model));
    return Model(model);
  }
  static Model nnef(const std::string &path) {
    TractNnef *nnef = nullptr;
    detail::check(tract_nnef_create(&nnef));
    TractModel *model = nullptr;
    TRACT_RESULT result = tract_nnef_load(nnef, path.c_str(), &model);
    tract_nnef_destroy(&nnef);
    detail::check(result);
    return Model(model);
  }
  static Model onnx(const std::string &path) {
    TractOnnx *onnx = nullptr;
    detail::check(tract_onnx_create(&onnx));
    TractModel *model = nullptr;
    TRACT_RESULT result = tract_onnx_load(onnx, path.c_str(), &model);
    tract_onnx_destroy(&onnx);
    detail::check(result);
    return Model(model);
  }

  size_t inputCount() {
    size_t count = 0;
    detail::check(tract_model_input_count(get(), &count));
    return count;
  }
  size_t outputCount() {
    size_t count = 0;
    detail::check(tract_model_output_count(get(), &count));
    return count;
  }
  std::string inputName(size_t input) {
    char *name = nullptr;
    detail::check(tract_model_input_name(get(), input, &name));
    return detail::take(name);
  }
  std::string outputName(size_t output) {
    char *name = nullptr;
    detail::check(tract_model_output_name(get(), output, &name));
    return detail::take(name);
  }
  std::string inputFact(size_t input) {
    char *fact = nullptr;
    detail::check(tract_model_input_fact(get(), input, &fact));
    return detail::take(fact);
  }
  std::string outputFact(size_t output) {
    char *fact = nullptr;
    detail::check(tract_model_output_fact(get(), output, &fact));
    return detail::take(fact);
  }

  Model &setInputFact(size_t input, const std::string &fact) {
    detail::check(tract_model_set_input_fact(get(), input, fact.c_str()));
    return *this;
  }
  Model &setOutputNames(const std::vector<std::string> &names) {
    std::vector<const char *> pointers;
    for (const std::string &name : names)
      pointers.push_back(name.c_str());
    detail::check(
        tract_model_set_output_names(get(), pointers.size(), pointers.data()));
    return *this;
  }
  Model &addAssertion(const std::string &assertion) {
    detail::check(tract_model_add_assertion(get(), assertion.c_str()));
    return *this;
  }
  Model &concretizeSymbols(const std::map<std::string, int64_t> &values) {
    std::vector<const char *> names;
    std::vector<int64_t> numbers;
    for (const auto &[name, value] : values) {
      names.push_back(name.c_str());
      numbers.push_back(value);
    }
    detail::check(tract_model_concretize_symbols(get(), names.size(),
                                                 names.data(), numbers.data()));
    return *this;
  }
  Model &transform(const std::string &transform) {
    detail::check(tract_model_transform(get(), transform.c_str()));
    return *this;
  }
  Model &declutter() {
    detail::check(tract_model_declutter(get()));
    return *this;
  }
  Model &pulse(const std::string &symbol, int64_t frames) {
    detail::check(tract_model_pulse_simple(get(), symbol.c_str(),
                                           std::to_string(frames).c_str()));
    return *this;
  }
  std::string mlir() {
    char *text = nullptr;
    detail::check(tract_model_dump_mlir(get(), &text));
    return detail::take(text);
  }
  std::string profileJson(const std::vector<Value> &inputs) {
    std::vector<TractValue *> in = detail::handles(inputs);
    char *json = nullptr;
    detail::check(tract_model_profile_json(get(), in.data(), &json));
    return detail::take(json);
  }
  void writeNnef(const std::string &path) {
    TractNnef *nnef = nullptr;
    detail::check(tract_nnef_create(&nnef));
    TRACT_RESULT result =
        tract_nnef_write_model_to_tar(nnef, path.c_str(), get());
    tract_nnef_destroy(&nnef);
    detail::check(result);
  }
  /// An object file (.o) or a shared library (.so); `target` "" is the
  /// host.
  void compile(const std::string &path, const std::string &target = "",
               const std::string &header = "") {
    detail::check(tract_model_compile(get(), path.c_str(),
                                      target.empty() ? nullptr : target.c_str(),
                                      header.empty() ? nullptr
                                                     : header.c_str()));
  }
  /// Compiled in process for `threads` threads (0: one per core) on the
  /// CPU, or on `gpu` ("vulkan", "cuda"); the model stays usable.
  Runnable intoRunnable(int32_t threads = 0, const std::string &gpu = "") {
    TractRunnable *runnable = nullptr;
    detail::check(tract_model_compile_runnable(
        get(), threads, gpu.empty() ? nullptr : gpu.c_str(), &runnable));
    return Runnable(runnable);
  }

  TractModel *get() const { return handle.get(); }

private:
  static void destroy(TractModel *model) { tract_model_destroy(&model); }
  std::unique_ptr<TractModel, void (*)(TractModel *)> handle;
};

} // namespace tract

#endif // TRACT_HPP
