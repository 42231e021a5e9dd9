//===- Bundle.h - Host tensors, .npy/.npz and ONNX test data ----*- C++ -*-===//
//
// The host side of `tract MODEL run`: tensors read from `--input-from-bundle`
// and `--assert-output-bundle` (a `.npz` file or an ONNX `test_data_set_N`
// folder), written by `--save-outputs-npz`, and compared at the levels of
// `--approx`.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_BUNDLE_H
#define LIB_BUNDLE_H

#include "runtime/tract_runtime.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::tract::lib {

/// A dense row-major tensor owned by the host, with its data aligned to
/// TRACT_TENSOR_ALIGN so that compiled models can read it in place.
class HostTensor {
public:
  /// A zero-filled tensor. Fails on a bad dtype, a negative dim, a size that
  /// overflows or an allocation failure.
  static llvm::Expected<HostTensor> create(std::string name, tract_dtype dtype,
                                           llvm::ArrayRef<int64_t> shape);
  /// A tensor holding a copy of `bytes`, which must be exactly its size.
  static llvm::Expected<HostTensor> fromBytes(std::string name,
                                              tract_dtype dtype,
                                              llvm::ArrayRef<int64_t> shape,
                                              llvm::StringRef bytes);
  /// A copy of a tensor the runtime returned, which this frees.
  static llvm::Expected<HostTensor> fromRuntime(std::string name,
                                                tract_tensor *tensor);

  HostTensor(HostTensor &&) = default;
  HostTensor &operator=(HostTensor &&) = default;
  llvm::Expected<HostTensor> clone() const;

  llvm::StringRef getName() const { return name; }
  void setName(std::string newName) { name = std::move(newName); }
  tract_dtype getDtype() const { return dtype; }
  llvm::ArrayRef<int64_t> getShape() const { return shape; }
  int64_t getRank() const { return shape.size(); }
  /// The number of elements: 1 for a scalar, 0 when a dim is 0.
  int64_t getNumElements() const;
  size_t getNumBytes() const { return numBytes; }

  /// The raw data (null when the tensor is empty).
  const uint8_t *data() const { return storage.get(); }
  uint8_t *data() { return storage.get(); }
  llvm::StringRef getBytes() const {
    return {reinterpret_cast<const char *>(data()), numBytes};
  }
  /// The data as elements of `T`, which the caller matches with the dtype.
  template <typename T> llvm::ArrayRef<T> getValues() const {
    return {reinterpret_cast<const T *>(data()), numBytes / sizeof(T)};
  }
  template <typename T> llvm::MutableArrayRef<T> getMutableValues() {
    return {reinterpret_cast<T *>(data()), numBytes / sizeof(T)};
  }

  /// The tensor's fact as tract prints it: `1,3,224,224,F32`, `F32` for a
  /// scalar.
  std::string summary() const;

  /// A runtime descriptor pointing at this tensor's data; fails when the rank
  /// exceeds TRACT_MAX_RANK.
  llvm::Expected<tract_tensor> getRuntimeTensor();

private:
  HostTensor() = default;

  struct AlignedFree {
    void operator()(uint8_t *pointer) const { std::free(pointer); }
  };

  std::string name;
  tract_dtype dtype = TRACT_DT_F32;
  llvm::SmallVector<int64_t, 4> shape;
  std::unique_ptr<uint8_t[], AlignedFree> storage;
  size_t numBytes = 0;
};

//===----------------------------------------------------------------------===//
// .npy and .npz
//===----------------------------------------------------------------------===//

/// Decodes an NPY array (format 1.0, 2.0 or 3.0). `name` names the tensor and
/// `what` the source in errors (a file, or an archive member).
llvm::Expected<HostTensor> decodeNpy(llvm::StringRef bytes, std::string name,
                                     llvm::StringRef what);
/// Encodes a tensor as NPY (format 1.0, or 2.0 for a header over 64 KiB).
/// BF16 has no numpy dtype and is refused.
llvm::Expected<std::string> encodeNpy(const HostTensor &tensor);

/// Reads a `.npy` file; the tensor is named after the file's stem.
llvm::Expected<HostTensor> readNpy(llvm::StringRef path);
llvm::Error writeNpy(llvm::StringRef path, const HostTensor &tensor);

/// Decodes a zip of `.npy` members (stored or deflated) in memory; each
/// tensor is named after its member without `.npy`, in archive order.
llvm::Expected<std::vector<HostTensor>> decodeNpz(llvm::StringRef bytes,
                                                  llvm::StringRef what);
/// Encodes tensors as an uncompressed zip of `NAME.npy` members, as
/// `numpy.savez` does.
llvm::Expected<std::string> encodeNpz(llvm::ArrayRef<HostTensor> tensors);

llvm::Expected<std::vector<HostTensor>> readNpz(llvm::StringRef path);
llvm::Error writeNpz(llvm::StringRef path, llvm::ArrayRef<HostTensor> tensors);

//===----------------------------------------------------------------------===//
// ONNX TensorProto
//===----------------------------------------------------------------------===//

/// Decodes a serialized ONNX TensorProto; the tensor keeps the proto's `name`
/// (possibly empty). Sequence, map and optional protos, string tensors and
/// external data are refused, naming `what`.
llvm::Expected<HostTensor> decodeTensorProto(llvm::StringRef bytes,
                                             llvm::StringRef what);
llvm::Expected<HostTensor> readTensorProto(llvm::StringRef path);

//===----------------------------------------------------------------------===//
// Bundles
//===----------------------------------------------------------------------===//

enum class BundleKind {
  Npz,            ///< a `.npz` file: every member may be an input or output
  OnnxTestDataSet ///< a folder of `input_N.pb` and `output_N.pb` files
};

/// The tensors of `--input-from-bundle` or `--assert-output-bundle`. Callers
/// match them to the model by name, or by position when names are absent.
class Bundle {
public:
  Bundle(BundleKind kind, std::string path, std::vector<HostTensor> inputs,
         std::vector<HostTensor> outputs)
      : kind(kind), path(std::move(path)), inputs(std::move(inputs)),
        outputs(std::move(outputs)) {}

  BundleKind getKind() const { return kind; }
  llvm::StringRef getPath() const { return path; }

  /// `input_N.pb` in order of N, or every member of a `.npz`.
  llvm::ArrayRef<HostTensor> getInputs() const { return inputs; }
  /// `output_N.pb` in order of N, or every member of a `.npz`.
  llvm::ArrayRef<HostTensor> getOutputs() const {
    return kind == BundleKind::Npz ? inputs : outputs;
  }

  /// The candidate named `name` (never matches an empty name); null if none.
  const HostTensor *findInput(llvm::StringRef name) const;
  const HostTensor *findOutput(llvm::StringRef name) const;
  /// The candidate at `position`; null when out of range.
  const HostTensor *getInput(size_t position) const;
  const HostTensor *getOutput(size_t position) const;

private:
  BundleKind kind;
  std::string path;
  std::vector<HostTensor> inputs;
  std::vector<HostTensor> outputs; // empty for a .npz
};

/// Loads a `.npz` file or an ONNX test data folder.
llvm::Expected<Bundle> loadBundle(llvm::StringRef path);

//===----------------------------------------------------------------------===//
// Comparison
//===----------------------------------------------------------------------===//

/// tract's `--approx` levels.
enum class Approximation {
  Exact,
  Close,
  Approximate,
  VeryApproximate,
  SuperApproximate,
  UltraApproximate,
};

/// Parses `exact`, `close`, `approximate` (or `approx`), `very`, `super`,
/// `ultra`.
std::optional<Approximation> parseApproximation(llvm::StringRef text);
llvm::StringRef stringifyApproximation(Approximation approximation);

/// Values `got` and `expected` match when `|got - expected| <= atol + rtol *
/// |expected|`; a comparison passes when at most `outliers` (a fraction of
/// the element count) do not.
struct Tolerance {
  double atol = 0;
  double rtol = 0;
  double outliers = 0;
};

/// The tolerance of a level for a float dtype; integers and bools are always
/// compared exactly.
Tolerance getTolerance(Approximation approximation, tract_dtype dtype);

/// Checks that `got` matches `expected`: same dtype and shape, integers and
/// bools equal, floats within the level's tolerance (NaN matches NaN, an
/// infinity matches the same infinity). The error is one line naming the
/// first mismatching index, both values and the number of mismatches.
/// Element `i` (in row-major order) as text: integers exactly, floats in
/// their shortest form, booleans as true or false.
std::string elementText(const HostTensor &tensor, int64_t i);

/// Whether `dtype` is a float type (f16, bf16, f32, f64).
bool isFloat(tract_dtype dtype);

/// `tensor` converted to the float type `dtype` (f16, bf16, f32, f64):
/// run --allow-float-casts.
llvm::Expected<HostTensor> castFloats(const HostTensor &tensor,
                                      tract_dtype dtype);

llvm::Error compareTensors(const HostTensor &expected, const HostTensor &got,
                           Approximation approximation);

/// How alike the rankings of two tensors' entries are along their last
/// axis (a language model's logits: the tokens, best first), as the
/// rank-biased overlap of Webber, Moffat and Zobel extrapolated from
/// `depth` ranks with persistence `p`: the overlap of the top d entries,
/// over d, weighted by p^(d-1) (1 for the same order, 0 for disjoint
/// tops; with p = 0, whether the first entries agree). `lowest` and `mean`
/// are over the vectors (every position of a sequence).
struct RankOverlap {
  double lowest = 1, mean = 1;
  int64_t vectors = 0;
};
llvm::Expected<RankOverlap> rankBiasedOverlap(const HostTensor &expected,
                                              const HostTensor &got, double p,
                                              int64_t depth);

} // namespace mlir::tract::lib

#endif // LIB_BUNDLE_H
