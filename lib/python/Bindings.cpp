//===- Bindings.cpp - the Python extension _tract_mlir --------------------===//
//
// The model life cycle of tract.hpp as Python classes, which
// tract_mlir/__init__.py re-exports: Nnef and Onnx load a Model, a Model
// compiles to a Runnable, a Runnable runs numpy arrays or spawns a State.
//
// Arrays cross without copies where they can: an input that is
// C-contiguous, aligned, in native byte order and of a type tract knows is
// lent to the library (tract_value_from_data) for the call, and an output
// is an array over the TractValue the run returned, which the array's base
// (a capsule) owns. A tract::Error becomes tract_mlir.TractError with the
// library's message.
//
// The GIL is released while the library works, so that runs on several
// Python threads overlap. tract.h lets one thread at a time use a Model or
// a State: each holds a mutex, taken once the GIL is released (never the
// other way round, so that a thread waiting on it cannot block the holder).
//
//===----------------------------------------------------------------------===//

#include "lib/tract.hpp"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace {

void check(TRACT_RESULT result) {
  if (result == TRACT_RESULT_OK)
    return;
  const char *message = tract_get_last_error();
  throw tract::Error(message ? message : "tract: unknown error");
}

std::string pathString(const std::filesystem::path &path) {
  return path.string();
}

/// Runs `work` without the GIL and with `mutex` held.
template <typename Work> auto locked(std::mutex &mutex, Work &&work) {
  py::gil_scoped_release release;
  std::lock_guard<std::mutex> lock(mutex);
  return work();
}

//===----------------------------------------------------------------------===//
// Arrays and values
//===----------------------------------------------------------------------===//

struct DatumType {
  TractDatumType type;
  char kind; // numpy's dtype.kind
  int size;  // bytes
  const char *numpy;
};

// bfloat16 has no numpy type: its outputs show their bits as uint16.
constexpr DatumType kDatumTypes[] = {
    {TRACT_DATUM_TYPE_BOOL, 'b', 1, "bool"},
    {TRACT_DATUM_TYPE_U8, 'u', 1, "uint8"},
    {TRACT_DATUM_TYPE_U16, 'u', 2, "uint16"},
    {TRACT_DATUM_TYPE_U32, 'u', 4, "uint32"},
    {TRACT_DATUM_TYPE_U64, 'u', 8, "uint64"},
    {TRACT_DATUM_TYPE_I8, 'i', 1, "int8"},
    {TRACT_DATUM_TYPE_I16, 'i', 2, "int16"},
    {TRACT_DATUM_TYPE_I32, 'i', 4, "int32"},
    {TRACT_DATUM_TYPE_I64, 'i', 8, "int64"},
    {TRACT_DATUM_TYPE_F16, 'f', 2, "float16"},
    {TRACT_DATUM_TYPE_F32, 'f', 4, "float32"},
    {TRACT_DATUM_TYPE_F64, 'f', 8, "float64"},
    {TRACT_DATUM_TYPE_BF16, 'u', 2, "uint16"},
};

std::optional<TractDatumType> datumTypeOf(const py::dtype &dtype) {
  for (const DatumType &known : kDatumTypes)
    if (known.kind == dtype.kind() && known.size == dtype.itemsize() &&
        known.type != TRACT_DATUM_TYPE_BF16)
      return known.type;
  return std::nullopt;
}

py::dtype numpyTypeOf(TractDatumType type) {
  for (const DatumType &known : kDatumTypes)
    if (known.type == type)
      return py::dtype(known.numpy);
  throw tract::Error("tract_mlir: an output has the unknown datum type " +
                     std::to_string(type));
}

// What tract_value_from_data needs of an array, beyond C order: numpy's
// NPY_ARRAY_ALIGNED (numpy/ndarraytypes.h); the byte order is checked apart
// (PyArray_FromAny does not heed NPY_ARRAY_NOTSWAPPED).
constexpr int kNumpyAligned = 0x0100;
constexpr int kLendable = py::array::c_style | kNumpyAligned;

/// A run's inputs: the arrays, kept alive while the library reads them,
/// and the values lent over them.
struct Inputs {
  std::vector<py::array> arrays;
  std::vector<tract::Value> values;
};

/// How an input is named in messages: "input 1 ('state')".
std::string describeInput(size_t index, const std::vector<std::string> &names) {
  std::string text = "input " + std::to_string(index);
  if (index < names.size())
    text += " ('" + names[index] + "')";
  return text;
}

/// "input, state": the names for messages.
std::string joinNames(const std::vector<std::string> &names) {
  std::string text;
  for (const std::string &name : names)
    text += (text.empty() ? "" : ", ") + name;
  return text;
}

/// The values over `objects` (arrays, or what numpy makes arrays of),
/// checked against the `count` inputs the model takes. An array is copied
/// only if it is not C-contiguous, aligned and in native byte order.
Inputs lendInputs(const py::iterable &objects, size_t count,
                  const std::vector<std::string> &names) {
  // An array is iterable too, by rows: say what was meant.
  if (py::isinstance<py::array>(objects))
    throw tract::Error("tract_mlir: the inputs are a list of arrays (one per "
                       "input), not an array");
  Inputs inputs;
  for (py::handle object : objects) {
    size_t index = inputs.arrays.size();
    // A view when the array already is what kLendable asks, else a copy.
    py::array array = py::array::ensure(object, kLendable);
    if (!array)
      throw tract::Error("tract_mlir: " + describeInput(index, names) +
                         " is not an array, nor convertible to one (" +
                         py::str(py::type::of(object)).cast<std::string>() +
                         ")");
    if (!array.dtype().attr("isnative").cast<bool>())
      array = array.attr("astype")(array.dtype().attr("newbyteorder")("="));
    std::optional<TractDatumType> type = datumTypeOf(array.dtype());
    if (!type)
      throw tract::Error("tract_mlir: " + describeInput(index, names) +
                         " has the numpy type " +
                         py::str(array.dtype()).cast<std::string>() +
                         ", which tract does not know (bool, int8-64, "
                         "uint8-64, float16, float32, float64)");
    std::vector<size_t> shape(array.shape(), array.shape() + array.ndim());
    try {
      inputs.values.push_back(tract::Value::borrow(*type, shape, array.data()));
    } catch (const tract::Error &error) {
      throw tract::Error("tract_mlir: " + describeInput(index, names) + ": " +
                         error.what());
    }
    inputs.arrays.push_back(std::move(array));
  }
  if (inputs.arrays.size() != count)
    throw tract::Error("tract_mlir: the model takes " + std::to_string(count) +
                       " inputs" +
                       (names.empty() ? "" : " (" + joinNames(names) + ")") +
                       ", " + std::to_string(inputs.arrays.size()) + " given");
  return inputs;
}

/// An array over the value's data; its base owns the value.
py::array toArray(tract::Value value) {
  TractDatumType type = value.datumType();
  std::vector<py::ssize_t> shape;
  for (size_t dim : value.shape())
    shape.push_back(static_cast<py::ssize_t>(dim));
  auto *owner = new tract::Value(std::move(value));
  py::capsule base(owner, [](void *pointer) {
    delete static_cast<tract::Value *>(pointer);
  });
  // The run's outputs are new tensors the value alone owns: writable.
  return py::array(numpyTypeOf(type), shape, owner->bytes(), base);
}

py::list toArrays(std::vector<tract::Value> values) {
  py::list arrays;
  for (tract::Value &value : values)
    arrays.append(toArray(std::move(value)));
  return arrays;
}

/// The data pointer the library sees for an array lent as an input (the
/// array's own unless it had to be copied); for tests.
uintptr_t lentDataPointer(py::handle object) {
  Inputs inputs = lendInputs(py::make_tuple(object), 1, {});
  const void *data = nullptr;
  check(tract_value_as_bytes(inputs.values[0].get(), nullptr, nullptr, nullptr,
                             &data));
  return reinterpret_cast<uintptr_t>(data);
}

//===----------------------------------------------------------------------===//
// Runnable and State
//===----------------------------------------------------------------------===//

/// A stream through a runnable, which the Python object keeps alive.
class PyState {
public:
  PyState(tract::State state, size_t inputs, std::vector<std::string> names)
      : state(std::move(state)), inputs(inputs), names(std::move(names)) {}

  py::list run(const py::iterable &objects) {
    Inputs lent = lendInputs(objects, inputs, names);
    std::vector<tract::Value> outputs =
        locked(mutex, [&] { return state.run(lent.values); });
    return toArrays(std::move(outputs));
  }

private:
  tract::State state;
  size_t inputs;
  std::vector<std::string> names;
  std::mutex mutex;
};

/// A model compiled in process; runs from any number of threads at once.
class PyRunnable {
public:
  PyRunnable(tract::Runnable runnable, std::vector<std::string> names)
      : runnable(std::move(runnable)), names(std::move(names)) {
    inputs = this->runnable.inputCount();
    outputs = this->runnable.outputCount();
    if (this->names.size() != inputs)
      this->names.clear();
  }

  size_t inputCount() const { return inputs; }
  size_t outputCount() const { return outputs; }

  py::list run(const py::iterable &objects) const {
    Inputs lent = lendInputs(objects, inputs, names);
    std::vector<tract::Value> results;
    {
      py::gil_scoped_release release;
      results = runnable.run(lent.values);
    }
    return toArrays(std::move(results));
  }

  std::unique_ptr<PyState> spawnState(
      const std::optional<std::map<std::string, int64_t>> &symbols) const {
    py::gil_scoped_release release;
    return std::make_unique<PyState>(
        runnable.spawnState(symbols.value_or(std::map<std::string, int64_t>())),
        inputs, names);
  }

private:
  tract::Runnable runnable;
  std::vector<std::string> names;
  size_t inputs = 0, outputs = 0;
};

//===----------------------------------------------------------------------===//
// Model
//===----------------------------------------------------------------------===//

/// A model: facts, symbols, transforms, then a runnable or a file. The
/// methods that change it return it, for chains.
class PyModel {
public:
  explicit PyModel(TractModel *handle) : model(handle) {}

  size_t inputCount() {
    return locked(mutex, [&] { return model.inputCount(); });
  }
  size_t outputCount() {
    return locked(mutex, [&] { return model.outputCount(); });
  }
  std::string inputName(size_t input) {
    return locked(mutex, [&] { return model.inputName(input); });
  }
  std::string outputName(size_t output) {
    return locked(mutex, [&] { return model.outputName(output); });
  }
  std::string inputFact(size_t input) {
    return locked(mutex, [&] { return model.inputFact(input); });
  }
  std::string outputFact(size_t output) {
    return locked(mutex, [&] { return model.outputFact(output); });
  }
  /// The position of the input named `name`.
  size_t inputIndex(const std::string &name) {
    return locked(mutex, [&] {
      std::vector<std::string> names;
      for (size_t i = 0, e = model.inputCount(); i < e; ++i) {
        names.push_back(model.inputName(i));
        if (names.back() == name)
          return i;
      }
      throw tract::Error("the model has no input '" + name +
                         "' (inputs: " + joinNames(names) + ")");
    });
  }

  PyModel &setInputFact(size_t input, const std::string &fact) {
    locked(mutex, [&] { model.setInputFact(input, fact); });
    return *this;
  }
  PyModel &setOutputNames(const std::vector<std::string> &names) {
    locked(mutex, [&] { model.setOutputNames(names); });
    return *this;
  }
  PyModel &addAssertion(const std::string &assertion) {
    locked(mutex, [&] { model.addAssertion(assertion); });
    return *this;
  }
  PyModel &concretizeSymbols(const std::map<std::string, int64_t> &values) {
    locked(mutex, [&] { model.concretizeSymbols(values); });
    return *this;
  }
  PyModel &transform(const std::string &transform) {
    locked(mutex, [&] { model.transform(transform); });
    return *this;
  }
  PyModel &declutter() {
    locked(mutex, [&] { model.declutter(); });
    return *this;
  }
  PyModel &optimize() {
    locked(mutex, [&] { check(tract_model_optimize(model.get())); });
    return *this;
  }
  PyModel &pulse(const std::string &symbol, int64_t frames) {
    locked(mutex, [&] { model.pulse(symbol, frames); });
    return *this;
  }
  std::string mlir() {
    return locked(mutex, [&] { return model.mlir(); });
  }
  std::string profileJson(const py::iterable &objects) {
    size_t count = inputCount();
    Inputs lent = lendInputs(objects, count, inputNames());
    return locked(mutex, [&] { return model.profileJson(lent.values); });
  }
  void compile(const std::filesystem::path &path,
               const std::optional<std::string> &target,
               const std::optional<std::filesystem::path> &header) {
    locked(mutex, [&] {
      model.compile(pathString(path), target.value_or(""),
                    header ? pathString(*header) : "");
    });
  }
  PyRunnable intoRunnable(int32_t threads,
                          const std::optional<std::string> &gpu) {
    std::vector<std::string> names = inputNames();
    tract::Runnable runnable = locked(
        mutex, [&] { return model.intoRunnable(threads, gpu.value_or("")); });
    return PyRunnable(std::move(runnable), std::move(names));
  }
  void writeNnef(const TractNnef *nnef, const std::filesystem::path &path,
                 bool archive) {
    locked(mutex, [&] {
      std::string where = pathString(path);
      check(archive ? tract_nnef_write_model_to_tar(nnef, where.c_str(),
                                                    model.get())
                    : tract_nnef_write_model_to_dir(nnef, where.c_str(),
                                                    model.get()));
    });
  }

private:
  /// The inputs' names, or none if the model cannot tell them yet.
  std::vector<std::string> inputNames() {
    return locked(mutex, [&] {
      std::vector<std::string> names;
      try {
        for (size_t i = 0, e = model.inputCount(); i < e; ++i)
          names.push_back(model.inputName(i));
      } catch (const tract::Error &) {
        names.clear();
      }
      return names;
    });
  }

  tract::Model model;
  std::mutex mutex;
};

//===----------------------------------------------------------------------===//
// Loaders
//===----------------------------------------------------------------------===//

/// Bytes from any contiguous buffer (bytes, bytearray, memoryview, numpy).
class Bytes {
public:
  explicit Bytes(py::handle object) {
    if (PyObject_GetBuffer(object.ptr(), &view, PyBUF_SIMPLE) != 0)
      throw py::error_already_set();
  }
  ~Bytes() { PyBuffer_Release(&view); }
  Bytes(const Bytes &) = delete;
  Bytes &operator=(const Bytes &) = delete;
  const void *data() const { return view.buf; }
  size_t size() const { return static_cast<size_t>(view.len); }

private:
  Py_buffer view{};
};

/// A loader that holds its C handle: TractNnef or TractOnnx.
template <typename Handle, TRACT_RESULT (*create)(Handle **),
          TRACT_RESULT (*destroy)(Handle **)>
class Loader {
public:
  Loader() { check(create(&handle)); }
  ~Loader() { destroy(&handle); }
  Loader(const Loader &) = delete;
  Loader &operator=(const Loader &) = delete;
  Handle *get() const { return handle; }

  template <TRACT_RESULT (*load)(const Handle *, const char *, TractModel **)>
  std::unique_ptr<PyModel> fromPath(const std::filesystem::path &path) const {
    std::string where = pathString(path);
    TractModel *model = nullptr;
    {
      py::gil_scoped_release release;
      check(load(handle, where.c_str(), &model));
    }
    return std::make_unique<PyModel>(model);
  }
  template <TRACT_RESULT (*load)(const Handle *, const void *, size_t,
                                 TractModel **)>
  std::unique_ptr<PyModel> fromBytes(py::handle object) const {
    Bytes bytes(object);
    TractModel *model = nullptr;
    {
      py::gil_scoped_release release;
      check(load(handle, bytes.data(), bytes.size(), &model));
    }
    return std::make_unique<PyModel>(model);
  }

private:
  Handle *handle = nullptr;
};

using Nnef = Loader<TractNnef, tract_nnef_create, tract_nnef_destroy>;
using Onnx = Loader<TractOnnx, tract_onnx_create, tract_onnx_destroy>;

std::unique_ptr<PyModel> loadAny(const std::filesystem::path &path) {
  std::string where = pathString(path);
  TractModel *model = nullptr;
  {
    py::gil_scoped_release release;
    check(tract_model_load(where.c_str(), &model));
  }
  return std::make_unique<PyModel>(model);
}

} // namespace

PYBIND11_MODULE(_tract_mlir, m) {
  m.doc() = "tract-mlir's C API (tract.h) for Python; use the tract_mlir "
            "package, which re-exports it.";
  py::register_exception<tract::Error>(m, "TractError", PyExc_RuntimeError);

  constexpr auto self = py::return_value_policy::reference;

  py::class_<PyState>(m, "State",
                      "A stream through a runnable: a pulse (or the new "
                      "tokens) per run. Used by one thread at a time.")
      .def("run", &PyState::run, py::arg("inputs"),
           "Runs one step on the data inputs; returns the outputs.");

  py::class_<PyRunnable>(m, "Runnable",
                         "A model compiled in process; runs from any number "
                         "of threads at once.")
      .def("input_count", &PyRunnable::inputCount)
      .def("output_count", &PyRunnable::outputCount)
      .def("run", &PyRunnable::run, py::arg("inputs"),
           "Runs the model on a list of arrays (one per data input); "
           "returns the outputs as arrays. A model that keeps state starts "
           "from an empty one.")
      .def("spawn_state", &PyRunnable::spawnState,
           py::arg("symbols") = py::none(),
           // The state reads the runnable: it keeps it alive.
           py::keep_alive<0, 1>(),
           "A stream through the model; `symbols` gives values its state "
           "needs (the stream's length...).");

  py::class_<PyModel>(m, "Model",
                      "A model: facts, symbols, transforms, then "
                      "into_runnable() or compile(). Methods that change it "
                      "return it.")
      .def("input_count", &PyModel::inputCount)
      .def("output_count", &PyModel::outputCount)
      .def("input_name", &PyModel::inputName, py::arg("input"))
      .def("output_name", &PyModel::outputName, py::arg("output"))
      .def("input_fact", &PyModel::inputFact, py::arg("input"),
           "The input's fact in tract's notation: '1,S,64,f32'.")
      .def(
          "input_fact",
          [](PyModel &model, const std::string &name) {
            return model.inputFact(model.inputIndex(name));
          },
          py::arg("input"))
      .def("output_fact", &PyModel::outputFact, py::arg("output"))
      .def("set_input_fact", &PyModel::setInputFact, py::arg("input"),
           py::arg("fact"), self,
           "tract's -i: '1,3,224,224,f32', '1,S,64', 'i64=16000' (a "
           "constant). ONNX models, before anything else changes them.")
      .def(
          "set_input_fact",
          [](PyModel &model, const std::string &name,
             const std::string &fact) -> PyModel & {
            return model.setInputFact(model.inputIndex(name), fact);
          },
          py::arg("input"), py::arg("fact"), self)
      .def("set_output_names", &PyModel::setOutputNames, py::arg("names"), self,
           "These nodes (op, output or input names) become the outputs.")
      .def("add_assertion", &PyModel::addAssertion, py::arg("assertion"), self,
           "tract's --assert: 'S >= 1'.")
      .def("concretize_symbols", &PyModel::concretizeSymbols, py::arg("values"),
           self, "tract's --set: {'S': 3}.")
      .def("transform", &PyModel::transform, py::arg("transform"), self,
           "A transform by name: 'declutter', 'pulse(S=8)', "
           "'set_symbols(values:{\"S\":1})', 'export_scan_state', "
           "'block-quant', 'f16-weights', 'detect-kv-cache', "
           "'unfold-kv-cache', 'transformers-detect-all', 'nnef-cycle'.")
      .def("declutter", &PyModel::declutter, self)
      .def("into_optimized", &PyModel::optimize, self,
           "Declutters the model (the code generator does the rest of "
           "tract's optimize).")
      .def("pulse", &PyModel::pulse, py::arg("symbol"), py::arg("pulse"), self,
           "Streams the model over `symbol` by `pulse` frames.")
      .def("into_runnable", &PyModel::intoRunnable, py::arg("threads") = 0,
           py::arg("gpu") = py::none(),
           "Compiles the model in process (decluttered first) for `threads` "
           "threads (0: one per core), on the CPU or on `gpu` ('vulkan', "
           "'cuda'); the model stays usable.")
      .def("profile_json", &PyModel::profileJson, py::arg("inputs"),
           "Times every op on these inputs; tract's profile as JSON.")
      .def("compile", &PyModel::compile, py::arg("path"),
           py::arg("target") = py::none(), py::arg("header") = py::none(),
           "Compiles ahead of time: an object file (.o, with a C header if "
           "`header` is given) or a shared library (.so).")
      .def("dump_mlir", &PyModel::mlir, "The model's IR (the tract dialect).")
      .def("__str__", &PyModel::mlir);

  py::class_<Nnef>(m, "Nnef", "The NNEF reader and writer.")
      .def(py::init<>())
      .def("load", &Nnef::fromPath<tract_nnef_load>, py::arg("path"),
           "An NNEF folder or archive (.tgz, .nnef.tgz, .tar.gz, .tar).")
      .def("load_bytes", &Nnef::fromBytes<tract_nnef_load_buffer>,
           py::arg("data"), "An NNEF archive in memory (tar, gzipped or not).")
      .def(
          "write_model_to_tar",
          [](const Nnef &nnef, const std::filesystem::path &path,
             PyModel &model) { model.writeNnef(nnef.get(), path, true); },
          py::arg("path"), py::arg("model"))
      .def(
          "write_model_to_dir",
          [](const Nnef &nnef, const std::filesystem::path &path,
             PyModel &model) { model.writeNnef(nnef.get(), path, false); },
          py::arg("path"), py::arg("model"))
      // tract's reader needs these for its extensions; ours always reads
      // them, and writes tract_core forms.
      .def(
          "with_tract_core",
          [](Nnef &nnef) -> Nnef & {
            check(tract_nnef_enable_tract_core(nnef.get()));
            return nnef;
          },
          self)
      .def(
          "with_onnx",
          [](Nnef &nnef) -> Nnef & {
            check(tract_nnef_enable_onnx(nnef.get()));
            return nnef;
          },
          self)
      .def(
          "with_pulse",
          [](Nnef &nnef) -> Nnef & {
            check(tract_nnef_enable_pulse(nnef.get()));
            return nnef;
          },
          self);

  py::class_<Onnx>(m, "Onnx", "The ONNX reader.")
      .def(py::init<>())
      .def("load", &Onnx::fromPath<tract_onnx_load>, py::arg("path"))
      .def("load_bytes", &Onnx::fromBytes<tract_onnx_load_buffer>,
           py::arg("data"));

  m.def("load", &loadAny, py::arg("path"),
        "Any model, its format told from the path: .onnx, an NNEF folder or "
        "archive, .mlir.");
  m.def("version", [] { return std::string(tract_version()); });
  m.def("_lent_data_pointer", &lentDataPointer, py::arg("array"),
        "The data pointer the library sees for this array as an input.");
}
