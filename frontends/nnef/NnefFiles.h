//===- NnefFiles.h - NNEF containers and tensor files -----------*- C++ -*-===//
//
// An NNEF model is a set of files: `graph.nnef`, one `.dat` file per
// variable and optional `.quant` files. They come in a folder or in a tar
// archive (`.nnef.tgz`, `.tar.gz`, `.tar`), which is read in memory.
//
//===----------------------------------------------------------------------===//

#ifndef FRONTENDS_NNEF_NNEFFILES_H
#define FRONTENDS_NNEF_NNEFFILES_H

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <map>
#include <memory>
#include <string>

namespace mlir::tract::nnef {

/// The discardable attribute (on an op, or on a graph input) that keeps a
/// tensor's `graph.quant` entry: `{op = "linear_quantize", min = …, …}`.
inline constexpr llvm::StringLiteral kQuantAttrName = "nnef.quant";

/// The property that keeps the original names of graph inputs and outputs
/// NNEF identifiers cannot spell (`input.0`): `[["input_0", "input.0"], …]`.
/// The reader gives them back and drops the property.
inline constexpr llvm::StringLiteral kIoNamesProperty = "tract_mlir_io_names";

/// The files of a model by path relative to its root (`graph.nnef`,
/// `conv1/weight.dat`), and where they came from, for messages.
struct ModelFiles {
  std::string origin;
  std::map<std::string, std::string, std::less<>> files;
  /// Tensor files of kLargeTensorFileBytes and more, apart from `files`:
  /// mapped from a folder, or read from an archive into a buffer of their
  /// own, which the constants of the import then hold (not a copy). The
  /// writers write `files` only, as the exporter makes them.
  std::map<std::string, std::shared_ptr<llvm::MemoryBuffer>, std::less<>>
      tensors;
};

/// From this size on, a tensor file is kept in ModelFiles::tensors.
constexpr uint64_t kLargeTensorFileBytes = uint64_t(64) << 10;

/// Reads `graph.nnef`, `*.dat` and `*.quant` under a folder.
bool readModelFolder(llvm::StringRef path, ModelFiles &files,
                     std::string &error);

/// Reads a tar archive, gzipped or not, in memory. Entries with an absolute
/// path or a `..` component, and links, are refused.
bool readModelArchive(llvm::StringRef path, ModelFiles &files,
                      std::string &error);

/// Reads an archive already in memory; `path` names it in messages. At most
/// 65536 entries, and no more data than gzip can expand the bytes to.
bool readModelArchiveBytes(llvm::StringRef bytes, llvm::StringRef path,
                           ModelFiles &files, std::string &error);

/// Writes the files under a folder, created if needed.
bool writeModelFolder(const ModelFiles &files, llvm::StringRef path,
                      std::string &error);

/// Writes the files as a tar archive, gzipped when `path` ends in `.tgz` or
/// `.gz`.
bool writeModelArchive(const ModelFiles &files, llvm::StringRef path,
                       std::string &error);

/// Decodes an NNEF tensor file: a 128-byte header (magic 0x4E 0xEF, version,
/// data size, rank, dims, bits per item, item type) and the data. The sizes
/// the header declares are checked against each other and against the bytes
/// present before anything is allocated.
///
/// tract's Q4_0 block-quantized files are dequantized to f32, unless
/// `q4_0Shape` is given: then `tensor` holds the blocks as they are (b x 18
/// i8) and `q4_0Shape` the shape of their values.
///
/// With `inPlace`, the buffer that holds `bytes` (ModelFiles::tensors),
/// the tensor is a resource over the data where the buffer holds it, which
/// keeps the buffer alive; its pages can be dropped once the weights are
/// packed when the buffer maps a file.
bool readDatTensor(llvm::StringRef bytes, llvm::StringRef what,
                   MLIRContext *context, ElementsAttr &tensor,
                   std::string &error,
                   SmallVectorImpl<int64_t> *q4_0Shape = nullptr,
                   std::shared_ptr<llvm::MemoryBuffer> inPlace = nullptr);

/// Encodes a tensor in the NNEF tensor file format (the exporter's side and
/// tests).
bool writeDatTensor(DenseElementsAttr tensor, std::string &bytes,
                    std::string &error);

/// Encodes Q4_0 `blocks` (dialects/tract/BlockQuant.h) holding a tensor of
/// `shape` as tract writes it: vendor 'TR', item type 0x2040, and all bits
/// of bits-per-item set (the bits are not per item).
void writeQ4_0DatTensor(ArrayRef<int64_t> shape, ArrayRef<char> blocks,
                        std::string &bytes);

} // namespace mlir::tract::nnef

#endif // FRONTENDS_NNEF_NNEFFILES_H
