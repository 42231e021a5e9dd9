//===- MappedWeights.h - large ONNX weights read in place -------*- C++ -*-===//
//
// A language model's matrices are most of its file. Rather than copying
// them into attributes, the importer maps the file (or the external data
// file) and makes each large weight that only products and gathers read a
// `dense_resource` blob over the mapping: no copy, no page read until
// something reads the weight, and pages the system can take back once the
// weight is packed (tract::dropMappedPages).
//
//===----------------------------------------------------------------------===//

#ifndef FRONTENDS_ONNX_MAPPEDWEIGHTS_H
#define FRONTENDS_ONNX_MAPPEDWEIGHTS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace onnx {
class GraphProto;
class TensorProto;
} // namespace onnx

namespace mlir::tract::onnx {

/// Weights of at least this many bytes are mapped. A copy in an attribute
/// lives as long as the MLIRContext: a decoder's key and value projections
/// (442 KB each in SmolLM2-135M) stood in memory twice, as read and packed.
constexpr int64_t kMappedWeightBytes = int64_t(64) << 10;

/// A read-only mapping of a model file, or of a range of one.
struct MappedFile {
  llvm::sys::fs::mapped_file_region region;
  /// The mapping starts this far before the first wanted byte (mappings
  /// start on a page).
  size_t skip = 0;
  llvm::ArrayRef<char> bytes() const {
    return {region.const_data() + skip, region.size() - skip};
  }
};

/// Maps `path`, or null when it cannot be mapped.
std::shared_ptr<MappedFile> mapModelFile(llvm::StringRef path);

/// Where each initializer of the model's main graph has its raw data in
/// `file` (offset and length; -1 when it has none), in the order of
/// graph.initializer, read from protobuf's wire format without touching
/// the data.
std::vector<std::pair<int64_t, int64_t>>
findInitializerData(const MappedFile &file);

/// `file`'s bytes without the raw data of its main graph's initializers
/// of at least kMappedWeightBytes (the lengths of the messages around them
/// rewritten), for protobuf to parse without copying those weights; the
/// initializers keep their order, findInitializerData's. Nullopt when the
/// model is malformed or has more than one graph field.
std::optional<std::string> stripLargeData(const MappedFile &file);

/// Lets the system take back the whole pages of `data`, part of a read-only
/// file mapping (read from the file again if read again).
void dropPages(llvm::ArrayRef<char> data);

/// The initializers of `graph` that only products (MatMul's and Gemm's
/// second input, MatMulNBits' blocks and scales) and gathers (Gather's data) read, in
/// the graph itself, or a Cast whose result only products read (weights
/// stored as f16): the weights nothing computes on before the kernels.
std::set<std::string> weightsOnlyProductsRead(const ::onnx::GraphProto &graph);

/// `type`'s weight as a blob over `length` bytes at `offset` of `file`;
/// null when the range is outside the file.
DenseResourceElementsAttr mapWeight(std::shared_ptr<MappedFile> file,
                                    int64_t offset, int64_t length,
                                    ShapedType type, llvm::StringRef name);

/// The same over an external data file, mapped for this weight alone.
DenseResourceElementsAttr mapExternalWeight(llvm::StringRef path,
                                            int64_t offset, int64_t length,
                                            ShapedType type,
                                            llvm::StringRef name);

} // namespace mlir::tract::onnx

#endif // FRONTENDS_ONNX_MAPPEDWEIGHTS_H
