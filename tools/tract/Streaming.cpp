//===- Streaming.cpp - run a pulsified model pulse by pulse ---------------===//

#include "tools/tract/Streaming.h"
#include "tools/tract/CliError.h"
#include "tools/tract/RunMemory.h"

#include "dialects/tract/TractDialect.h"
#include "pipelines/Pipelines.h"
#include "target/Jit.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/PassManager.h"

#include <cstring>

using namespace mlir;
using namespace mlir::tract;
using namespace mlir::tract::cli;

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

llvm::Expected<HostTensor> scalarI64(std::string name, int64_t value) {
  auto tensor = HostTensor::create(std::move(name), TRACT_DT_I64, {});
  if (!tensor)
    return tensor.takeError();
  tensor->getMutableValues<int64_t>()[0] = value;
  return tensor;
}

/// The shape of `signature` under `values`.
llvm::Expected<SmallVector<int64_t>> evalShape(const TensorSignature &signature,
                                               const SymbolValues &values) {
  SmallVector<int64_t> shape;
  for (const TDim &dim : signature.shape) {
    std::optional<int64_t> value = dim.eval(values);
    if (!value)
      return makeError("the size of '" + signature.name + "' (" +
                       signature.shapeString() +
                       ") depends on a symbol no input gives");
    shape.push_back(*value);
  }
  return shape;
}

enum class ArgKind { Input, Symbol, State };

} // namespace

bool mlir::tract::cli::isPulsified(ModuleOp module) {
  return getPulseProperties(module).has_value();
}

llvm::Expected<std::vector<HostTensor>> mlir::tract::cli::runStreaming(
    ModuleOp module, llvm::ArrayRef<HostTensor> bundle,
    const JitOptions &options, TimingScope &timing) {
  std::optional<PulseProperties> pulsed = getPulseProperties(module);
  if (!pulsed)
    return makeError("the model has no pulse properties");
  PassManager pm(module.getContext());
  buildStepFunctionPipeline(pm);
  if (failed(pm.run(module)))
    return makeError("the streaming model's state cannot be externalized");

  auto main = module.lookupSymbol<func::FuncOp>("main");
  SmallVector<ArgKind> argKinds;
  for (unsigned i = 0; i < main.getNumArguments(); ++i)
    argKinds.push_back(main.getArgAttr(i, "tract.state")    ? ArgKind::State
                       : main.getArgAttr(i, "tract.symbol") ? ArgKind::Symbol
                                                            : ArgKind::Input);
  unsigned numOutputs = 0;
  for (unsigned i = 0; i < main.getNumResults(); ++i)
    numOutputs += !main.getResultAttr(i, "tract.state");
  if (numOutputs != pulsed->outputAxes.size())
    return makeError("the pulse properties describe " +
                     llvm::Twine(pulsed->outputAxes.size()) +
                     " outputs, the model has " + llvm::Twine(numOutputs));

  auto compiled = CompiledModel::compile(module, options, &timing);
  if (!compiled)
    return compiled.takeError();
  keepFreedBuffers();
  const CompiledModel &model = **compiled;
  llvm::ArrayRef<TensorSignature> inputs = model.getInputs();

  // The inputs from the bundle, and the symbols their dims give: the stream
  // length from the streamed axis, the others from the pulsed shapes.
  SymbolValues values;
  std::vector<const HostTensor *> given(inputs.size(), nullptr);
  std::optional<int64_t> length;
  unsigned inputIndex = 0;
  for (auto [index, signature] : llvm::enumerate(inputs)) {
    if (argKinds[index] != ArgKind::Input)
      continue;
    const HostTensor *tensor = nullptr;
    for (const HostTensor &candidate : bundle)
      if (candidate.getName() == signature.name)
        tensor = &candidate;
    if (!tensor && inputIndex < bundle.size())
      tensor = &bundle[inputIndex];
    if (!tensor)
      return makeError("no value for input '" + signature.name + "'");
    if (tensor->getRank() != static_cast<int64_t>(signature.shape.size()))
      return makeError("input '" + signature.name + "' has rank " +
                       llvm::Twine(tensor->getRank()) + ", the model " +
                       llvm::Twine(signature.shape.size()));
    int64_t axis = inputIndex < pulsed->inputAxes.size()
                       ? pulsed->inputAxes[inputIndex]
                       : -1;
    for (auto [a, dim] : llvm::enumerate(signature.shape)) {
      if (static_cast<int64_t>(a) == axis) {
        int64_t frames = tensor->getShape()[a];
        if (length && *length != frames)
          return makeError("the streamed inputs have different lengths");
        length = frames;
      } else if (std::optional<std::string> name = dim.getSymbolName()) {
        values[*name] = tensor->getShape()[a];
      }
    }
    given[index] = tensor;
    ++inputIndex;
  }
  if (!length)
    return makeError("no input streams over " + pulsed->symbol);
  values[pulsed->symbol] = *length;

  // Enough pulses for every output to reach the end of its batch value.
  int64_t steps = 0;
  std::vector<HostTensor> joined;
  llvm::ArrayRef<TensorSignature> outputs = model.getOutputs();
  SmallVector<int64_t> outputLengths;
  for (unsigned o = 0; o < numOutputs; ++o) {
    std::optional<int64_t> frames = pulsed->outputLengths[o].eval(values);
    if (!frames || *frames < 0)
      return makeError("output '" + outputs[o].name + "' has " +
                       pulsed->outputLengths[o].toString() +
                       " frames, which this input does not make positive");
    outputLengths.push_back(*frames);
    int64_t axis = pulsed->outputAxes[o];
    std::optional<int64_t> outputPulse = outputs[o].shape[axis].getConstant();
    if (!outputPulse || *outputPulse <= 0)
      return makeError("output '" + outputs[o].name +
                       "' has no constant pulse");
    int64_t need = pulsed->delays[o] + *frames;
    steps = std::max(steps, (need + *outputPulse - 1) / *outputPulse);
  }

  // States start at zero.
  std::vector<HostTensor> states;
  std::vector<HostTensor> symbolInputs;
  for (auto [index, signature] : llvm::enumerate(inputs)) {
    if (argKinds[index] == ArgKind::Input)
      continue;
    auto shape = evalShape(signature, values);
    if (!shape)
      return shape.takeError();
    if (argKinds[index] == ArgKind::Symbol) {
      auto it = values.find(signature.name);
      if (it == values.end())
        return makeError("no value for the symbol '" + signature.name + "'");
      auto scalar = scalarI64(signature.name, it->second);
      if (!scalar)
        return scalar.takeError();
      symbolInputs.push_back(std::move(*scalar));
      continue;
    }
    auto state = HostTensor::create(signature.name, signature.dtype, *shape);
    if (!state)
      return state.takeError();
    states.push_back(std::move(*state));
  }

  std::vector<std::vector<HostTensor>> pulses(numOutputs);
  for (int64_t step = 0; step < steps; ++step) {
    std::vector<HostTensor> chunks;
    chunks.reserve(inputs.size());
    std::vector<tract_tensor> descriptors;
    descriptors.reserve(inputs.size());
    unsigned stateIndex = 0, symbolIndex = 0, streamIndex = 0;
    for (auto [index, signature] : llvm::enumerate(inputs)) {
      HostTensor *argument = nullptr;
      if (argKinds[index] == ArgKind::State) {
        argument = &states[stateIndex++];
      } else if (argKinds[index] == ArgKind::Symbol) {
        argument = &symbolInputs[symbolIndex++];
      } else {
        const HostTensor &tensor = *given[index];
        int64_t axis = pulsed->inputAxes[streamIndex++];
        if (axis < 0) {
          auto copy = tensor.clone();
          if (!copy)
            return copy.takeError();
          chunks.push_back(std::move(*copy));
        } else {
          SmallVector<int64_t> shape(tensor.getShape());
          shape[axis] = pulsed->pulse;
          auto chunk =
              HostTensor::create(signature.name, tensor.getDtype(), shape);
          if (!chunk)
            return chunk.takeError();
          copyFrames(tensor, axis, step * pulsed->pulse, pulsed->pulse, *chunk,
                     0);
          chunks.push_back(std::move(*chunk));
        }
        argument = &chunks.back();
      }
      auto descriptor = argument->getRuntimeTensor();
      if (!descriptor)
        return descriptor.takeError();
      descriptors.push_back(*descriptor);
    }
    std::vector<const tract_tensor *> arguments;
    for (const tract_tensor &descriptor : descriptors)
      arguments.push_back(&descriptor);
    auto results = model.run(arguments);
    if (!results)
      return results.takeError();
    for (auto [index, result] : llvm::enumerate(*results)) {
      std::string name = index < numOutputs
                             ? outputs[index].name
                             : states[index - numOutputs].getName().str();
      auto tensor = HostTensor::fromRuntime(name, result);
      if (!tensor)
        return tensor.takeError();
      if (index < numOutputs)
        pulses[index].push_back(std::move(*tensor));
      else
        states[index - numOutputs] = std::move(*tensor);
    }
  }

  // The joined stream, from each output's delay, for its batch length.
  std::vector<HostTensor> batch;
  for (unsigned o = 0; o < numOutputs; ++o) {
    int64_t axis = pulsed->outputAxes[o];
    const HostTensor &first = pulses[o].front();
    SmallVector<int64_t> shape(first.getShape());
    shape[axis] = outputLengths[o];
    auto output = HostTensor::create(outputs[o].name, first.getDtype(), shape);
    if (!output)
      return output.takeError();
    int64_t outputPulse = first.getShape()[axis];
    for (auto [step, chunk] : llvm::enumerate(pulses[o]))
      copyFrames(chunk, axis, 0, outputPulse, *output,
                 static_cast<int64_t>(step) * outputPulse - pulsed->delays[o]);
    batch.push_back(std::move(*output));
  }
  return batch;
}
