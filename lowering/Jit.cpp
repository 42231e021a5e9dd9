//===- Jit.cpp - compile a tract model in process and run it --------------===//

#include "lowering/Jit.h"

#include "lowering/Passes.h"
#include "runtime/tract_profile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/TargetSelect.h"

#include <cstdlib>
#include <cstring>

using namespace mlir;
using namespace mlir::tract;

namespace {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// A memref descriptor, as the LLVM lowering lays it out: allocated and
/// aligned pointers, offset, sizes, strides; all 64-bit words.
void appendDescriptor(std::vector<int64_t> &words, void *data, int32_t rank,
                      const int64_t *dims) {
  words.push_back(reinterpret_cast<int64_t>(data));
  words.push_back(reinterpret_cast<int64_t>(data));
  words.push_back(0);
  for (int32_t i = 0; i < rank; ++i)
    words.push_back(dims[i]);
  int64_t stride = 1;
  std::vector<int64_t> strides(rank);
  for (int32_t i = rank - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= dims[i];
  }
  words.insert(words.end(), strides.begin(), strides.end());
}

} // namespace

CompiledModel::~CompiledModel() = default;

llvm::Expected<std::unique_ptr<CompiledModel>>
CompiledModel::compile(ModuleOp module, unsigned optLevel,
                       TimingScope *timing) {
  std::unique_ptr<CompiledModel> model(new CompiledModel());
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main)
    return makeError("the model has no main function");
  auto signature = describeFunction(main);
  if (!signature)
    return signature.takeError();
  model->inputs = std::move(signature->inputs);
  model->outputs = std::move(signature->outputs);
  TimingScope compileTiming = timing ? timing->nest("compile") : TimingScope();
  if (failed(lowerModelToLLVM(module, main, &compileTiming)))
    return makeError("the model could not be lowered");

  TimingScope jit = compileTiming.nest("LLVM translation, optimization, JIT");
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  std::function<llvm::Error(llvm::Module *)> optimize =
      makeOptimizingTransformer(optLevel, 0, nullptr);
  ExecutionEngineOptions options;
  options.transformer = optimize;
  auto engine = ExecutionEngine::create(module, options);
  if (!engine)
    return engine.takeError();
  model->engine = std::move(*engine);
  // The runtime functions compiled code calls.
  model->engine->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    symbols[interner("memrefCopy")] = {
        llvm::orc::ExecutorAddr::fromPtr(&memrefCopy),
        llvm::JITSymbolFlags::Exported};
    symbols[interner("tract_set_error")] = {
        llvm::orc::ExecutorAddr::fromPtr(&tract_set_error),
        llvm::JITSymbolFlags::Exported};
    // Called by models instrumented with tract-instrument-profile.
    symbols[interner("tract_profile_enter")] = {
        llvm::orc::ExecutorAddr::fromPtr(&tract_profile_enter),
        llvm::JITSymbolFlags::Exported};
    symbols[interner("tract_profile_exit")] = {
        llvm::orc::ExecutorAddr::fromPtr(&tract_profile_exit),
        llvm::JITSymbolFlags::Exported};
    return symbols;
  });
  // Code generation happens at the first lookup: do it here, timed.
  if (auto entry = model->engine->lookupPacked("_mlir_ciface_main"); !entry)
    return entry.takeError();
  return model;
}

llvm::Error
CompiledModel::checkInputs(llvm::ArrayRef<const tract_tensor *> args) const {
  if (args.size() != inputs.size())
    return makeError("the model takes " + llvm::Twine(inputs.size()) +
                     " inputs, " + llvm::Twine(args.size()) + " given");
  for (auto [signature, arg] : llvm::zip(inputs, args)) {
    if (arg->dtype != signature.dtype)
      return makeError("input '" + signature.name + "' is " +
                       tract_dtype_name(arg->dtype) + ", the model expects " +
                       tract_dtype_name(signature.dtype));
    if (arg->rank != static_cast<int32_t>(signature.shape.size()))
      return makeError("input '" + signature.name + "' has rank " +
                       llvm::Twine(arg->rank) + ", the model expects " +
                       llvm::Twine(signature.shape.size()));
  }
  return llvm::Error::success();
}

llvm::Expected<std::vector<tract_tensor *>>
CompiledModel::run(llvm::ArrayRef<const tract_tensor *> args) const {
  if (llvm::Error error = checkInputs(args))
    return std::move(error);
  std::vector<std::vector<int64_t>> descriptors(args.size());
  std::vector<void *> descriptorPointers(args.size());
  for (auto [i, arg] : llvm::enumerate(args)) {
    appendDescriptor(descriptors[i], arg->data, arg->rank, arg->dims);
    descriptorPointers[i] = descriptors[i].data();
  }
  // `main` returns the outputs' descriptors then an i32 status, all in one
  // struct behind the first argument; the status alone comes back as the
  // return value.
  size_t resultWords = 0;
  for (const TensorSignature &output : outputs)
    resultWords += 3 + 2 * output.shape.size();
  std::vector<int64_t> results(resultWords + 1, 0);
  void *resultPointer = results.data();
  int32_t status = TRACT_OK;
  SmallVector<void *> packed;
  if (!outputs.empty())
    packed.push_back(&resultPointer);
  for (void *&pointer : descriptorPointers)
    packed.push_back(&pointer);
  if (outputs.empty())
    packed.push_back(&status);
  if (llvm::Error error = engine->invokePacked("_mlir_ciface_main", packed))
    return std::move(error);
  if (!outputs.empty())
    std::memcpy(&status, &results[resultWords], sizeof(status));

  // Copy each result into a runtime tensor, then free the model's buffers
  // (results may share one: identical results are computed once). After a
  // failed check the results are empty buffers, freed all the same.
  std::vector<tract_tensor *> tensors;
  llvm::SmallPtrSet<void *, 4> buffers;
  auto fail = [&](const llvm::Twine &message) {
    for (tract_tensor *tensor : tensors)
      tract_tensor_free(tensor);
    for (void *buffer : buffers)
      std::free(buffer);
    return makeError(message);
  };
  size_t word = 0;
  for (const TensorSignature &output : outputs) {
    int32_t rank = output.shape.size();
    buffers.insert(reinterpret_cast<char *>(results[word]));
    word += 3 + 2 * rank;
  }
  if (status != TRACT_OK)
    return fail(tract_last_error());
  word = 0;
  for (const TensorSignature &output : outputs) {
    int32_t rank = output.shape.size();
    char *aligned = reinterpret_cast<char *>(results[word + 1]);
    int64_t offset = results[word + 2];
    const int64_t *sizes = &results[word + 3];
    const int64_t *strides = &results[word + 3 + rank];
    word += 3 + 2 * rank;
    tract_tensor *tensor = tract_tensor_new(output.dtype, rank, sizes);
    if (!tensor)
      return fail(llvm::Twine("output '") + output.name +
                  "': " + tract_last_error());
    tensors.push_back(tensor);
    size_t elementSize = tract_dtype_size(output.dtype);
    int64_t count = tract_tensor_len(tensor);
    char *destination = static_cast<char *>(tensor->data);
    for (int64_t index = 0; index < count; ++index) {
      int64_t rest = index, source = offset;
      for (int32_t axis = rank - 1; axis >= 0; --axis) {
        source += (rest % sizes[axis]) * strides[axis];
        rest /= sizes[axis];
      }
      std::memcpy(destination + index * elementSize,
                  aligned + source * elementSize, elementSize);
    }
  }
  for (void *buffer : buffers)
    std::free(buffer);
  return tensors;
}
