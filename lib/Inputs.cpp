//===- Inputs.cpp - the inputs of run, bench and profile ------------------===//

#include "lib/Inputs.h"
#include "lib/Error.h"

#include "conversion/LoweringUtils.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cstring>
#include <set>

using namespace mlir;
using namespace mlir::tract;
using namespace mlir::tract::lib;

namespace {

/// Uniform values in [-1, 1) (or 0/1, or small integers), from a fixed seed
/// so that runs repeat.
llvm::Expected<HostTensor> randomTensor(const TensorSignature &signature,
                                        const SymbolValues &values) {
  SmallVector<int64_t> shape;
  for (const TDim &dim : signature.shape) {
    std::optional<int64_t> size = dim.eval(values);
    if (!size)
      return makeError(
          "cannot make up input '" + signature.name + "': its dim " +
          dim.toString() +
          " depends on a symbol no other input sets (give it a size "
          "with --set after the subcommand)");
    shape.push_back(*size);
  }
  auto tensor = HostTensor::create(signature.name, signature.dtype, shape);
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

/// `bound` and the symbols that the dims of the `given` inputs set.
SymbolValues symbolsOfInputs(llvm::ArrayRef<TensorSignature> signatures,
                             llvm::ArrayRef<const HostTensor *> given,
                             const SymbolValues &bound) {
  SymbolValues values = bound;
  for (auto [signature, tensor] : llvm::zip(signatures, given))
    if (tensor)
      for (auto [axis, dim] : llvm::enumerate(signature.shape))
        if (std::optional<std::string> symbol = dim.getSymbolName())
          values[*symbol] = tensor->getShape()[axis];
  return values;
}

} // namespace

/// Finds the tensor for `name` (or position `index` when the bundle's
/// tensors have no names).
const HostTensor *
mlir::tract::lib::findTensor(llvm::ArrayRef<HostTensor> tensors,
                             llvm::StringRef name, size_t index) {
  for (const HostTensor &tensor : tensors)
    if (tensor.getName() == name)
      return &tensor;
  if (index < tensors.size() && tensors[index].getName().empty())
    return &tensors[index];
  return nullptr;
}

/// ONNX test data stores bfloat16 tensors as their uint16 bits; seen
/// against a BF16 input or output, they are reinterpreted.
const HostTensor *
mlir::tract::lib::reinterpretBf16(const HostTensor *tensor, tract_dtype wanted,
                                  std::vector<HostTensor> &keep) {
  if (!tensor || wanted != TRACT_DT_BF16 || tensor->getDtype() != TRACT_DT_U16)
    return tensor;
  auto copy = HostTensor::fromBytes(tensor->getName().str(), TRACT_DT_BF16,
                                    tensor->getShape(), tensor->getBytes());
  if (!copy) {
    llvm::consumeError(copy.takeError());
    return tensor;
  }
  keep.push_back(std::move(*copy));
  return &keep.back();
}

/// Inputs from the bundle by name (or position), else made up when
/// `allowRandom`; states that no bundle gives start empty.
llvm::Error mlir::tract::lib::prepareInputs(
    llvm::ArrayRef<TensorSignature> signatures,
    const std::optional<Bundle> &bundle, bool allowRandom, ModelInputs &inputs,
    bool allowFloatCasts, const SymbolValues &bound) {
  std::vector<HostTensor> &made = inputs.made;
  std::vector<const HostTensor *> given;
  // Pointers into `made` must stay valid: room for every input, its bf16
  // copy and the outputs' bf16 copies.
  made.reserve(3 * signatures.size() + 16);
  for (auto [index, signature] : llvm::enumerate(signatures)) {
    const HostTensor *tensor =
        bundle ? findTensor(bundle->getInputs(), signature.name, index)
               : nullptr;
    tensor = reinterpretBf16(tensor, signature.dtype, made);
    if (tensor && allowFloatCasts && tensor->getDtype() != signature.dtype) {
      auto cast = castFloats(*tensor, signature.dtype);
      if (!cast)
        return makeError("--allow-float-casts: input '" + signature.name +
                         "': " + llvm::toString(cast.takeError()));
      made.push_back(std::move(*cast));
      tensor = &made.back();
    }
    if (!tensor && !allowRandom && signature.role != TRACT_IO_STATE)
      return makeError("no value for input '" + signature.name +
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
        return makeError("state '" + signature.name + "' has no size");
      shape.push_back(*size);
    }
    auto state = HostTensor::create(signature.name, signature.dtype, shape);
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
  for (const HostTensor *tensor : given) {
    auto descriptor = const_cast<HostTensor *>(tensor)->getRuntimeTensor();
    if (!descriptor)
      return descriptor.takeError();
    inputs.descriptors.push_back(*descriptor);
  }
  for (const tract_tensor &descriptor : inputs.descriptors)
    inputs.arguments.push_back(&descriptor);
  return llvm::Error::success();
}

llvm::Expected<LlmSymbols>
mlir::tract::lib::findLlmSymbols(llvm::ArrayRef<TensorSignature> inputs) {
  const TensorSignature *tokens = nullptr, *cache = nullptr;
  for (const TensorSignature &signature : inputs) {
    bool floats = isFloat(signature.dtype);
    bool isInteger = !floats && signature.dtype != TRACT_DT_BOOL;
    if (!tokens && isInteger)
      tokens = &signature;
    if (!cache && floats)
      cache = &signature;
  }
  if (!tokens)
    return makeError("llm-bench: the model has no integer input to "
                     "take the tokens");
  if (!cache)
    return makeError(
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
    return makeError(
        "llm-bench: cannot tell the new tokens and the past apart: input '" +
        tokens->name + "' is " + tokens->shapeString() + " and input '" +
        cache->name + "' is " + cache->shapeString() +
        " (expected one symbol each has alone)");
  symbols.tokens = tokensOnly.front();
  symbols.past = cacheOnly.front();
  return symbols;
}

llvm::Expected<std::optional<Bundle>>
mlir::tract::lib::llmStepInputs(llvm::ArrayRef<TensorSignature> inputs,
                                int64_t batch, int64_t tokens, int64_t past) {
  std::vector<HostTensor> made;
  for (const TensorSignature &signature : inputs) {
    bool mask = signature.name == "attention_mask";
    if ((!mask && signature.name != "position_ids") ||
        signature.shape.size() != 2 || isFloat(signature.dtype) ||
        signature.dtype == TRACT_DT_BOOL)
      continue;
    int64_t width = mask ? past + tokens : tokens;
    auto tensor = HostTensor::create(signature.name, signature.dtype,
                                     {batch, width});
    if (!tensor)
      return tensor.takeError();
    for (int64_t row = 0; row < batch; ++row)
      for (int64_t i = 0; i < width; ++i) {
        int64_t value = mask ? 1 : past + i;
        int64_t at = row * width + i;
        switch (signature.dtype) {
        case TRACT_DT_I64:
          tensor->getMutableValues<int64_t>()[at] = value;
          break;
        case TRACT_DT_I32:
          tensor->getMutableValues<int32_t>()[at] = int32_t(value);
          break;
        default:
          return makeError("llm-bench: input '" + signature.name +
                           "' must hold 32- or 64-bit integers");
        }
      }
    made.push_back(std::move(*tensor));
  }
  if (made.empty())
    return std::nullopt;
  return Bundle(BundleKind::Npz, "language-model step", std::move(made), {});
}

/// --input-facts-from-bundle: the inputs' symbols take the values that the
/// bundle's tensors (matched by name, else by position) give their dims, as
/// --set would; ranks, known dims and types must agree.
llvm::Error mlir::tract::lib::setsFromBundle(const ModelSignature &signature,
                                             llvm::StringRef path,
                                             std::vector<std::string> &sets) {
  auto bundle = loadBundle(path);
  if (!bundle)
    return bundle.takeError();
  SmallVector<Shape> shapes;
  SmallVector<const HostTensor *> tensors;
  for (size_t position = 0; position < signature.inputs.size(); ++position) {
    const TensorSignature &input = signature.inputs[position];
    const HostTensor *tensor = bundle->findInput(input.name);
    if (!tensor && input.role == TRACT_IO_DATA)
      tensor = bundle->getInput(position);
    shapes.emplace_back(input.shape.begin(), input.shape.end());
    tensors.push_back(tensor);
    if (!tensor)
      continue;
    auto mismatch = [&](const llvm::Twine &what) {
      return makeError("--input-facts-from-bundle: input '" + input.name +
                       "' is " + input.shapeString() + ", but '" + path +
                       "' holds " + tensor->summary() + " (" + what + ")");
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
    const HostTensor *tensor = tensors[source.argument];
    if (!tensor)
      continue;
    int64_t size = tensor->getShape()[source.axis];
    int64_t value = llvm::divideFloorSigned(size - source.form.offset,
                                            source.form.coefficient);
    sets.push_back(source.form.symbol + "=" + std::to_string(value));
  }
  return llvm::Error::success();
}
