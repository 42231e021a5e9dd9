//===- NnefFiles.cpp - NNEF containers and tensor files -------------------===//

#include "frontends/nnef/NnefFiles.h"

#include "dialects/tract/BlockQuant.h"
#include "dialects/tract/TractFolding.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <archive.h>
#include <archive_entry.h>
#include <memory>

using namespace mlir;
using namespace mlir::tract::nnef;

namespace {

bool wanted(llvm::StringRef path) {
  return llvm::sys::path::filename(path) == "graph.nnef" ||
         path.ends_with(".dat") || path.ends_with(".quant");
}

struct ArchiveFree {
  void operator()(archive *handle) const { archive_read_free(handle); }
};

std::string archiveMessage(archive *handle) {
  const char *message = archive_error_string(handle);
  return message ? message : "unknown libarchive error";
}

// gzip cannot expand data more than about 1032 times: an entry claiming
// more than that of the whole archive is hostile.
constexpr uint64_t kMaxDeflateRatio = 1032;
// A model has a file per variable: tens of thousands at the most. Millions
// of empty entries (a few bytes each once gzipped) are hostile.
constexpr uint64_t kMaxArchiveEntries = 1 << 16;

constexpr size_t kHeaderSize = 128;

} // namespace

bool mlir::tract::nnef::readModelFolder(llvm::StringRef path, ModelFiles &files,
                                        std::string &error) {
  files.origin = path.str();
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(path, ec), end;
       it != end && !ec; it.increment(ec)) {
    if (it->type() == llvm::sys::fs::file_type::directory_file)
      continue;
    llvm::StringRef full = it->path();
    if (!wanted(full))
      continue;
    llvm::SmallString<256> relative(full);
    llvm::sys::path::replace_path_prefix(relative, path, "");
    llvm::StringRef name = llvm::sys::path::relative_path(relative);
    auto buffer = llvm::MemoryBuffer::getFile(full, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!buffer) {
      error =
          "cannot read '" + full.str() + "': " + buffer.getError().message();
      return false;
    }
    std::string key = llvm::sys::path::convert_to_slash(name);
    if (full.ends_with(".dat") &&
        (*buffer)->getBufferSize() >= kLargeTensorFileBytes)
      files.tensors[key] = std::move(*buffer); // mapped, not copied
    else
      files.files[key] = (*buffer)->getBuffer().str();
  }
  if (ec) {
    error = "cannot list '" + path.str() + "': " + ec.message();
    return false;
  }
  return true;
}

bool mlir::tract::nnef::readModelArchive(llvm::StringRef path,
                                         ModelFiles &files,
                                         std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = "cannot read '" + path.str() + "': " + buffer.getError().message();
    return false;
  }
  return readModelArchiveBytes((*buffer)->getBuffer(), path, files, error);
}

bool mlir::tract::nnef::readModelArchiveBytes(llvm::StringRef bytes,
                                              llvm::StringRef path,
                                              ModelFiles &files,
                                              std::string &error) {
  files.origin = path.str();
  std::unique_ptr<archive, ArchiveFree> reader(archive_read_new());
  archive_read_support_format_tar(reader.get());
  archive_read_support_format_gnutar(reader.get());
  archive_read_support_filter_gzip(reader.get());
  archive_read_support_filter_none(reader.get());
  if (archive_read_open_memory(reader.get(), bytes.data(), bytes.size()) !=
      ARCHIVE_OK) {
    error = "'" + path.str() +
            "' is not a tar archive: " + archiveMessage(reader.get());
    return false;
  }
  uint64_t limit = uint64_t(bytes.size()) * kMaxDeflateRatio;
  uint64_t total = 0;
  archive_entry *entry;
  int status;
  uint64_t entries = 0;
  while ((status = archive_read_next_header(reader.get(), &entry)) ==
         ARCHIVE_OK) {
    if (++entries > kMaxArchiveEntries) {
      error = "'" + path.str() + "' has more than " +
              std::to_string(kMaxArchiveEntries) + " entries";
      return false;
    }
    const char *rawName = archive_entry_pathname(entry);
    llvm::StringRef name = rawName ? rawName : "";
    std::string what = "'" + path.str() + "' entry '" + name.str() + "'";
    if (llvm::sys::path::is_absolute(name) || name.starts_with("/")) {
      error = what + ": absolute paths are refused";
      return false;
    }
    for (llvm::StringRef component : llvm::make_range(
             llvm::sys::path::begin(name, llvm::sys::path::Style::posix),
             llvm::sys::path::end(name)))
      if (component == "..") {
        error = what + ": paths leaving the archive ('..') are refused";
        return false;
      }
    // A link would name a file outside the archive, or one it holds under
    // another name: a model has no use for either.
    if (archive_entry_filetype(entry) == AE_IFLNK) {
      error = what + ": symbolic links are refused";
      return false;
    }
    if (archive_entry_hardlink(entry)) {
      error = what + ": hard links are refused";
      return false;
    }
    if (archive_entry_filetype(entry) != AE_IFREG)
      continue;
    while (name.starts_with("./"))
      name = name.drop_front(2);
    if (!wanted(name))
      continue;
    if (archive_entry_size_is_set(entry) &&
        uint64_t(archive_entry_size(entry)) > limit) {
      error = what + ": claims more bytes than the archive can hold";
      return false;
    }
    // A large tensor file whose size the entry gives goes straight into a
    // buffer of its own, which its constant then holds.
    if (name.ends_with(".dat") && archive_entry_size_is_set(entry) &&
        uint64_t(archive_entry_size(entry)) >= kLargeTensorFileBytes) {
      uint64_t size = archive_entry_size(entry);
      total += size;
      if (total > limit) {
        error = what + ": expands beyond what the archive can hold";
        return false;
      }
      std::unique_ptr<llvm::WritableMemoryBuffer> buffer =
          llvm::WritableMemoryBuffer::getNewUninitMemBuffer(size, name);
      uint64_t at = 0;
      la_ssize_t got = 1;
      while (at < size && got > 0) {
        got = archive_read_data(reader.get(), buffer->getBufferStart() + at,
                                size - at);
        at += got > 0 ? got : 0;
      }
      char extra;
      if (got < 0 ||
          (got = archive_read_data(reader.get(), &extra, 1)) != 0 ||
          at != size) {
        error = what + ": " +
                (got < 0 ? archiveMessage(reader.get())
                         : std::string("not the size its header gives"));
        return false;
      }
      files.tensors[name.str()] = std::move(buffer);
      continue;
    }
    std::string data;
    char chunk[1 << 16];
    la_ssize_t got;
    while ((got = archive_read_data(reader.get(), chunk, sizeof(chunk))) > 0) {
      total += got;
      if (total > limit) {
        error = what + ": expands beyond what the archive can hold";
        return false;
      }
      data.append(chunk, got);
    }
    if (got < 0) {
      error = what + ": " + archiveMessage(reader.get());
      return false;
    }
    files.files[name.str()] = std::move(data);
  }
  if (status != ARCHIVE_EOF) {
    error = "'" + path.str() +
            "' is not a valid tar archive: " + archiveMessage(reader.get());
    return false;
  }
  return true;
}

namespace {

/// The vendor code tract writes in the item type of its own tensor
/// formats: the bytes 'R', 'T' read as a little-endian u16.
constexpr uint16_t kTractVendor = 0x5452;
/// tract's code for Q4_0 blocks (dialects/tract/BlockQuant.h).
constexpr uint16_t kTractQ4_0 = 0x2040;

/// `payload`, held by `buffer`, as a constant of `type` where it is: a
/// resource that keeps the buffer alive, named for the file's pages that
/// can be dropped (and read again) when the buffer maps the file.
ElementsAttr inPlace(std::shared_ptr<llvm::MemoryBuffer> buffer,
                     llvm::StringRef payload, ShapedType type,
                     llvm::StringRef what) {
  bool mapped =
      buffer->getBufferKind() == llvm::MemoryBuffer::MemoryBuffer_MMap;
  AsmResourceBlob blob(
      ArrayRef<char>(payload.data(), payload.size()), /*dataAlignment=*/1,
      [buffer = std::move(buffer)](void *, size_t, size_t) mutable {
        buffer.reset();
      },
      /*dataIsMutable=*/false);
  std::string name =
      (llvm::Twine(mapped ? tract::kMappedWeightsPrefix : "tract_nnef_") +
       what)
          .str();
  return DenseResourceElementsAttr::get(type, name, std::move(blob));
}

/// Block-quantized tensors: the blocks as stored (b x 18 bytes) when
/// `keepBlocks` (in place with `buffer`), else their values as f32.
template <typename Fail>
bool readTractBlockQuant(uint16_t itemType, ArrayRef<int64_t> shape,
                         uint64_t count, uint64_t dataSize,
                         llvm::StringRef payload, MLIRContext *context,
                         ElementsAttr &tensor, bool keepBlocks,
                         std::shared_ptr<llvm::MemoryBuffer> buffer,
                         llvm::StringRef what, Fail fail) {
  if (itemType != kTractQ4_0)
    return fail("tract item type code 0x" + llvm::utohexstr(itemType) +
                " is not supported (Q4_0, 0x2040, is)");
  if (count % uint64_t(tract::kQ4_0BlockValues) != 0)
    return fail("Q4_0 tensor of " + llvm::Twine(count) +
                " values is not made of whole 32-value blocks");
  uint64_t blocks = count / uint64_t(tract::kQ4_0BlockValues);
  uint64_t expected = blocks * uint64_t(tract::kQ4_0BlockBytes);
  if (dataSize != expected)
    return fail("header declares " + llvm::Twine(dataSize) +
                " data bytes, but " + llvm::Twine(blocks) +
                " Q4_0 blocks take " + llvm::Twine(expected));
  if (payload.size() < expected)
    return fail("truncated: " + llvm::Twine(expected) +
                " data bytes declared, " + llvm::Twine(payload.size()) +
                " present");
  const auto *data = reinterpret_cast<const uint8_t *>(payload.data());
  if (keepBlocks) {
    auto type = RankedTensorType::get(
        {int64_t(blocks), tract::kQ4_0BlockBytes}, IntegerType::get(context, 8));
    tensor = buffer ? inPlace(std::move(buffer), payload.take_front(expected),
                              type, what)
                    : ElementsAttr(DenseElementsAttr::getFromRawBuffer(
                          type, ArrayRef<char>(payload.data(), expected)));
    return true;
  }
  std::vector<float> values =
      tract::dequantizeQ4_0(ArrayRef<uint8_t>(data, expected));
  auto type = RankedTensorType::get(shape, Float32Type::get(context));
  tensor = DenseElementsAttr::get(type, ArrayRef<float>(values));
  return true;
}

} // namespace

bool mlir::tract::nnef::readDatTensor(llvm::StringRef bytes,
                                      llvm::StringRef what,
                                      MLIRContext *context,
                                      ElementsAttr &tensor,
                                      std::string &error,
                                      SmallVectorImpl<int64_t> *q4_0Shape,
                                      std::shared_ptr<llvm::MemoryBuffer>
                                          buffer) {
  using namespace llvm::support;
  auto fail = [&](const llvm::Twine &message) {
    error = (what + ": " + message).str();
    return false;
  };
  if (bytes.size() < kHeaderSize)
    return fail("too short for a tensor file header (" +
                llvm::Twine(bytes.size()) + " bytes)");
  const auto *data = reinterpret_cast<const uint8_t *>(bytes.data());
  if (data[0] != 0x4e || data[1] != 0xef)
    return fail("not an NNEF tensor file (bad magic number)");
  if (data[2] != 1)
    return fail("unsupported tensor file version " + llvm::Twine(data[2]) +
                "." + llvm::Twine(data[3]));
  auto u32 = [&](size_t offset) { return endian::read32le(data + offset); };
  uint64_t dataSize = u32(4);
  uint32_t rank = u32(8);
  if (rank > 8)
    return fail("rank " + llvm::Twine(rank) + " is over 8");
  SmallVector<int64_t> shape;
  uint64_t count = 1;
  for (uint32_t i = 0; i < rank; ++i) {
    uint64_t dim = u32(12 + 4 * i);
    shape.push_back(dim);
    // Dims are 32-bit, so the product of 8 of them cannot overflow past
    // this check.
    if (dim && count > (uint64_t(1) << 48) / dim)
      return fail("too many elements");
    count *= dim;
  }
  uint32_t bits = u32(44);
  uint16_t itemType = endian::read16le(data + 48);
  uint16_t vendor = endian::read16le(data + 50);
  if (vendor == kTractVendor) {
    if (!readTractBlockQuant(itemType, shape, count, dataSize,
                             bytes.drop_front(kHeaderSize), context, tensor,
                             q4_0Shape != nullptr, std::move(buffer), what,
                             fail))
      return false;
    if (q4_0Shape)
      q4_0Shape->assign(shape.begin(), shape.end());
    return true;
  }
  if (vendor != 0)
    return fail("unsupported item type vendor " + llvm::Twine(vendor));
  Builder b(context);
  Type elementType;
  auto isInt = [&](unsigned width) {
    return width == 8 || width == 16 || width == 32 || width == 64;
  };
  switch (itemType) {
  case 0:
    if (bits == 16)
      elementType = b.getF16Type();
    else if (bits == 32)
      elementType = b.getF32Type();
    else if (bits == 64)
      elementType = b.getF64Type();
    break;
  case 1:
  case 2:
    if (isInt(bits))
      elementType = IntegerType::get(context, bits, IntegerType::Unsigned);
    break;
  case 3:
  case 4:
    if (isInt(bits))
      elementType = b.getIntegerType(bits);
    break;
  case 5:
    if (bits == 1 || bits == 8)
      elementType = b.getI1Type();
    break;
  default:
    return fail("unknown item type code " + llvm::Twine(itemType));
  }
  if (!elementType)
    return fail("item type code " + llvm::Twine(itemType) + " with " +
                llvm::Twine(bits) + " bits per item is not supported");
  uint64_t expected = (count * bits + 7) / 8;
  if (dataSize != expected)
    return fail("header declares " + llvm::Twine(dataSize) +
                " data bytes, but " + llvm::Twine(count) + " items of " +
                llvm::Twine(bits) + " bits take " + llvm::Twine(expected));
  if (bytes.size() - kHeaderSize < expected)
    return fail("truncated: " + llvm::Twine(expected) +
                " data bytes declared, " +
                llvm::Twine(bytes.size() - kHeaderSize) + " present");
  auto type = RankedTensorType::get(shape, elementType);
  const char *payload = bytes.data() + kHeaderSize;
  if (elementType.isInteger(1)) {
    SmallVector<bool> values(count);
    for (uint64_t i = 0; i < count; ++i)
      values[i] = bits == 1 ? ((uint8_t(payload[i / 8]) >> (7 - i % 8)) & 1)
                            : payload[i] != 0;
    tensor = DenseElementsAttr::get(type, ArrayRef<bool>(values));
    return true;
  }
  if (buffer) {
    tensor = inPlace(std::move(buffer), llvm::StringRef(payload, expected),
                     type, what);
    return true;
  }
  tensor = DenseElementsAttr::getFromRawBuffer(
      type, ArrayRef<char>(payload, expected));
  return true;
}

bool mlir::tract::nnef::writeDatTensor(DenseElementsAttr tensor,
                                       std::string &bytes, std::string &error) {
  using namespace llvm::support;
  auto type = cast<RankedTensorType>(tensor.getType());
  if (type.getRank() > 8) {
    error = "tensors of rank over 8 cannot be written";
    return false;
  }
  Type elementType = type.getElementType();
  uint32_t bits = elementType.getIntOrFloatBitWidth();
  uint16_t itemType;
  if (isa<FloatType>(elementType)) {
    if (!elementType.isF16() && !elementType.isF32() && !elementType.isF64()) {
      error = "only f16, f32 and f64 floats can be written";
      return false;
    }
    itemType = 0;
  } else if (bits == 1) {
    itemType = 5;
    bits = 8;
  } else {
    itemType = elementType.isUnsignedInteger() ? 1 : 4;
  }
  uint64_t count = type.getNumElements();
  uint64_t dataSize = count * bits / 8;
  bytes.assign(kHeaderSize, '\0');
  auto *header = reinterpret_cast<uint8_t *>(bytes.data());
  header[0] = 0x4e;
  header[1] = 0xef;
  header[2] = 1;
  header[3] = 0;
  endian::write32le(header + 4, uint32_t(dataSize));
  endian::write32le(header + 8, uint32_t(type.getRank()));
  for (auto [i, dim] : llvm::enumerate(type.getShape()))
    endian::write32le(header + 12 + 4 * i, uint32_t(dim));
  endian::write32le(header + 44, bits);
  endian::write16le(header + 48, itemType);
  if (itemType == 5) {
    for (bool value : tensor.getValues<bool>())
      bytes.push_back(value ? 1 : 0);
    return true;
  }
  ArrayRef<char> raw = tensor.getRawData();
  if (tensor.isSplat()) {
    for (uint64_t i = 0; i < count; ++i)
      bytes.append(raw.data(), bits / 8);
  } else {
    bytes.append(raw.data(), raw.size());
  }
  return true;
}

void mlir::tract::nnef::writeQ4_0DatTensor(ArrayRef<int64_t> shape,
                                           ArrayRef<char> blocks,
                                           std::string &bytes) {
  using namespace llvm::support;
  bytes.assign(kHeaderSize, '\0');
  auto *header = reinterpret_cast<uint8_t *>(bytes.data());
  header[0] = 0x4e;
  header[1] = 0xef;
  header[2] = 1;
  endian::write32le(header + 4, uint32_t(blocks.size()));
  endian::write32le(header + 8, uint32_t(shape.size()));
  for (auto [i, dim] : llvm::enumerate(shape))
    endian::write32le(header + 12 + 4 * i, uint32_t(dim));
  endian::write32le(header + 44, 0xffffffff);
  endian::write16le(header + 48, kTractQ4_0);
  endian::write16le(header + 50, kTractVendor);
  bytes.append(blocks.data(), blocks.size());
}

bool mlir::tract::nnef::writeModelFolder(const ModelFiles &files,
                                         llvm::StringRef path,
                                         std::string &error) {
  for (const auto &[name, bytes] : files.files) {
    llvm::SmallString<256> full(path);
    llvm::sys::path::append(full, name);
    if (std::error_code ec = llvm::sys::fs::create_directories(
            llvm::sys::path::parent_path(full))) {
      error = "cannot create the folder of '" + full.str().str() +
              "': " + ec.message();
      return false;
    }
    std::error_code ec;
    llvm::raw_fd_ostream out(full, ec);
    if (ec) {
      error = "cannot write '" + full.str().str() + "': " + ec.message();
      return false;
    }
    out << bytes;
  }
  return true;
}

namespace {
struct ArchiveWriteFree {
  void operator()(archive *handle) const { archive_write_free(handle); }
};
struct EntryFree {
  void operator()(archive_entry *entry) const { archive_entry_free(entry); }
};
} // namespace

bool mlir::tract::nnef::writeModelArchive(const ModelFiles &files,
                                          llvm::StringRef path,
                                          std::string &error) {
  std::unique_ptr<archive, ArchiveWriteFree> writer(archive_write_new());
  archive_write_set_format_pax_restricted(writer.get());
  if (path.ends_with(".tgz") || path.ends_with(".gz"))
    archive_write_add_filter_gzip(writer.get());
  std::string target = path.str();
  if (archive_write_open_filename(writer.get(), target.c_str()) != ARCHIVE_OK) {
    error = "cannot write '" + target + "': " + archiveMessage(writer.get());
    return false;
  }
  for (const auto &[name, bytes] : files.files) {
    std::unique_ptr<archive_entry, EntryFree> entry(archive_entry_new());
    archive_entry_set_pathname(entry.get(), name.c_str());
    archive_entry_set_size(entry.get(), bytes.size());
    archive_entry_set_filetype(entry.get(), AE_IFREG);
    archive_entry_set_perm(entry.get(), 0644);
    if (archive_write_header(writer.get(), entry.get()) != ARCHIVE_OK ||
        archive_write_data(writer.get(), bytes.data(), bytes.size()) !=
            la_ssize_t(bytes.size())) {
      error = "cannot write '" + name + "' into '" + target +
              "': " + archiveMessage(writer.get());
      return false;
    }
  }
  if (archive_write_close(writer.get()) != ARCHIVE_OK) {
    error = "cannot finish '" + target + "': " + archiveMessage(writer.get());
    return false;
  }
  return true;
}
