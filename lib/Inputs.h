//===- Inputs.h - the inputs of run, bench and profile ----------*- C++ -*-===//
//
// What `tract run`, `bench`, `llm-bench` and `dump --profile` feed a
// compiled model: the tensors of a bundle matched to its inputs by name or
// position, made-up values where allowed, empty states, and the symbol
// values that a bundle's shapes give.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_INPUTS_H
#define LIB_INPUTS_H

#include "lib/Bundle.h"
#include "target/ModelSignature.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::tract::lib {

/// The tensors a model runs on, and what keeps them alive.
struct ModelInputs {
  /// Tensors the caller gives without a bundle file (llm-bench's masks).
  std::optional<Bundle> given;
  std::vector<HostTensor> made;
  /// The tensor of each input: the bundle's, or one of `made`.
  std::vector<const HostTensor *> tensors;
  std::vector<tract_tensor> descriptors;
  std::vector<const tract_tensor *> arguments;
};

/// The inputs of `signatures`: the bundle's by name (or position); else,
/// with `allowRandom`, made up from a fixed seed (their sizes from `bound`
/// and from the given inputs' dims); states no bundle gives start empty
/// (zeros, their symbols at 0). With `allowFloatCasts`, bundle floats of
/// another width are cast.
llvm::Error prepareInputs(llvm::ArrayRef<TensorSignature> signatures,
                          const std::optional<Bundle> &bundle, bool allowRandom,
                          ModelInputs &inputs, bool allowFloatCasts = false,
                          const SymbolValues &bound = {});

/// The tensor for `name`, or at `index` when the tensors have no names.
const HostTensor *findTensor(llvm::ArrayRef<HostTensor> tensors,
                             llvm::StringRef name, size_t index);

/// ONNX test data stores bfloat16 tensors as their uint16 bits; seen
/// against a BF16 input or output (`wanted`), they are reinterpreted into
/// a copy kept in `keep`.
const HostTensor *reinterpretBf16(const HostTensor *tensor, tract_dtype wanted,
                                  std::vector<HostTensor> &keep);

/// tract's --input-facts-from-bundle: `S=N` for the symbols that the
/// bundle's tensors give the inputs' dims; ranks, known dims and types must
/// agree.
llvm::Error setsFromBundle(const ModelSignature &signature,
                           llvm::StringRef path,
                           std::vector<std::string> &sets);

/// The symbols of a causal language model, found as tract's llm-bench
/// finds them: the first integer input holds the tokens and the first float
/// input is a key/value cache; the batch is the symbol both have, the new
/// tokens the one only the tokens have, the past the one only the cache has.
struct LlmSymbols {
  std::optional<std::string> batch;
  std::string tokens, past;
};
llvm::Expected<LlmSymbols>
findLlmSymbols(llvm::ArrayRef<TensorSignature> inputs);

/// The inputs of a language-model step (a batch of `batch`, `tokens` new
/// tokens after `past`) that made-up values would get wrong, as onnxruntime's
/// generative-AI exports take them: `attention_mask` (batch, past + tokens),
/// all ones, and `position_ids` (batch, tokens), past .. past + tokens - 1,
/// for the integer inputs of rank 2 so named; none when the model has
/// neither.
llvm::Expected<std::optional<Bundle>>
llmStepInputs(llvm::ArrayRef<TensorSignature> inputs, int64_t batch,
              int64_t tokens, int64_t past);

} // namespace mlir::tract::lib

#endif // LIB_INPUTS_H
