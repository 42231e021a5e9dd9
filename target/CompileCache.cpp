//===- CompileCache.cpp - compiled models kept between processes ----------===//

#include "target/CompileCache.h"

#include "dialects/tract/TractFolding.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include <utime.h>

using namespace mlir;
using namespace mlir::tract;

namespace {

/// An entry's layout, all integers little-endian 64-bit:
///   magic, file size, key (32 bytes), digest (32 bytes: the BLAKE3 of
///   what follows the header, up to the end magic), object count,
///   constant count;
///   per object: offset, size; per constant: offset, size, name size,
///   then the name, padded to 8 bytes;
///   the data, each piece at a multiple of 64 bytes;
///   the end magic.
constexpr char kMagic[8] = {'T', 'R', 'A', 'C', 'T', 'J', 'C', '1'};
constexpr char kEndMagic[8] = {'T', 'R', 'A', 'C', 'T', 'E', 'N', 'D'};
constexpr uint64_t kDataAlignment = 64;
constexpr llvm::StringLiteral kSuffix = ".tractjit";
constexpr size_t kHeader = 8 + 8 + 32 + 32 + 8 + 8;
constexpr size_t kDigestOffset = 48;

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Feeds what is printed to a hash.
class HashStream : public llvm::raw_ostream {
public:
  explicit HashStream(llvm::BLAKE3 &hasher) : hasher(hasher) {
    SetUnbuffered();
  }

private:
  void write_impl(const char *data, size_t size) override {
    hasher.update(llvm::ArrayRef<uint8_t>(
        reinterpret_cast<const uint8_t *>(data), size));
    position += size;
  }
  uint64_t current_pos() const override { return position; }

  llvm::BLAKE3 &hasher;
  uint64_t position = 0;
};

/// The GNU build id of the binary this code is linked into, as hex; or,
/// without one, its path, size and time of modification.
std::string readBuildIdentity() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&readBuildIdentity), &info) ||
      !info.dli_fbase)
    return "unknown";
  struct Search {
    uintptr_t base;
    std::string id;
  } search{reinterpret_cast<uintptr_t>(info.dli_fbase), ""};
  dl_iterate_phdr(
      [](dl_phdr_info *object, size_t, void *data) -> int {
        auto *search = static_cast<Search *>(data);
        bool ours = false;
        for (int i = 0; i < object->dlpi_phnum; ++i) {
          const ElfW(Phdr) &header = object->dlpi_phdr[i];
          uintptr_t start = object->dlpi_addr + header.p_vaddr;
          if (header.p_type == PT_LOAD && search->base >= start &&
              search->base < start + header.p_memsz)
            ours = true;
        }
        if (!ours)
          return 0;
        for (int i = 0; i < object->dlpi_phnum; ++i) {
          const ElfW(Phdr) &header = object->dlpi_phdr[i];
          if (header.p_type != PT_NOTE)
            continue;
          const char *note =
              reinterpret_cast<const char *>(object->dlpi_addr +
                                             header.p_vaddr);
          const char *end = note + header.p_memsz;
          while (note + sizeof(ElfW(Nhdr)) <= end) {
            const auto *nhdr = reinterpret_cast<const ElfW(Nhdr) *>(note);
            const char *name = note + sizeof(ElfW(Nhdr));
            const char *desc = name + llvm::alignTo(nhdr->n_namesz, 4);
            if (desc + nhdr->n_descsz > end)
              break;
            if (nhdr->n_type == NT_GNU_BUILD_ID && nhdr->n_namesz == 4 &&
                std::memcmp(name, "GNU", 4) == 0) {
              search->id = llvm::toHex(
                  llvm::StringRef(desc, nhdr->n_descsz), /*LowerCase=*/true);
              return 1;
            }
            note = desc + llvm::alignTo(nhdr->n_descsz, 4);
          }
        }
        return 1;
      },
      &search);
  if (!search.id.empty())
    return search.id;
  llvm::sys::fs::file_status status;
  if (!info.dli_fname || llvm::sys::fs::status(info.dli_fname, status))
    return "unknown";
  return std::string(info.dli_fname) + ":" + std::to_string(status.getSize()) +
         ":" +
         std::to_string(status.getLastModificationTime().time_since_epoch()
                            .count());
}

uint64_t read64(const char *at) {
  return llvm::support::endian::read64le(at);
}

void write64(llvm::raw_ostream &os, uint64_t value) {
  char bytes[8];
  llvm::support::endian::write64le(bytes, value);
  os.write(bytes, 8);
}

/// Lets the system take back the whole pages inside [`data`, `data` +
/// `size`) of a read-only file mapping: they are read from the file again
/// when touched.
void dropPages(const char *data, size_t size) {
  uintptr_t page = llvm::sys::Process::getPageSizeEstimate();
  uintptr_t begin = llvm::alignTo(reinterpret_cast<uintptr_t>(data), page);
  uintptr_t end = (reinterpret_cast<uintptr_t>(data) + size) / page * page;
  if (end > begin)
    madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
}

/// Parses an entry; std::nullopt when the file is not a complete entry
/// of `key`.
std::optional<CacheEntry> parseEntry(std::unique_ptr<llvm::MemoryBuffer> file,
                                     llvm::StringRef key) {
  llvm::StringRef bytes = file->getBuffer();
  if (bytes.size() < kHeader + 8 || !bytes.starts_with({kMagic, 8}) ||
      !bytes.ends_with({kEndMagic, 8}) ||
      read64(bytes.data() + 8) != bytes.size())
    return std::nullopt;
  std::string hexKey =
      llvm::toHex(bytes.substr(16, 32), /*LowerCase=*/true);
  if (hexKey != key)
    return std::nullopt;
  // Every byte as written: a weight changed on disk would otherwise be
  // run as it is.
  llvm::BLAKE3Result<32> digest = llvm::BLAKE3::hash<32>(llvm::arrayRefFromStringRef(
      bytes.slice(kHeader, bytes.size() - 8)));
  if (bytes.substr(kDigestOffset, 32) != llvm::toStringRef(digest))
    return std::nullopt;
  // Checked, the pages can go until the run reads them again from the file:
  // the check read every byte, a gathered table's unread rows included.
  if (file->getBufferKind() == llvm::MemoryBuffer::MemoryBuffer_MMap)
    dropPages(bytes.data() + kHeader, bytes.size() - kHeader);
  uint64_t objects = read64(bytes.data() + kDigestOffset + 32);
  uint64_t constants = read64(bytes.data() + kDigestOffset + 40);
  size_t at = kHeader;
  auto piece = [&](uint64_t offset,
                   uint64_t size) -> std::optional<llvm::StringRef> {
    if (offset > bytes.size() || size > bytes.size() - offset)
      return std::nullopt;
    return bytes.substr(offset, size);
  };
  CacheEntry entry;
  for (uint64_t i = 0; i < objects; ++i) {
    if (at + 16 > bytes.size())
      return std::nullopt;
    std::optional<llvm::StringRef> data =
        piece(read64(bytes.data() + at), read64(bytes.data() + at + 8));
    if (!data)
      return std::nullopt;
    entry.objects.emplace_back(*data, "cached-object");
    at += 16;
  }
  for (uint64_t i = 0; i < constants; ++i) {
    if (at + 24 > bytes.size())
      return std::nullopt;
    std::optional<llvm::StringRef> data =
        piece(read64(bytes.data() + at), read64(bytes.data() + at + 8));
    std::optional<llvm::StringRef> name =
        piece(at + 24, read64(bytes.data() + at + 16));
    if (!data || !name)
      return std::nullopt;
    entry.constants.push_back({name->str(), *data});
    at += 24 + llvm::alignTo(name->size(), 8);
  }
  entry.file = std::move(file);
  return entry;
}

/// Removes the least recently used entries of `directory` until they
/// hold at most `maxBytes`.
void pruneCache(llvm::StringRef directory, uint64_t maxBytes) {
  struct Found {
    std::string path;
    uint64_t size;
    llvm::sys::TimePoint<> used;
  };
  std::vector<Found> entries;
  uint64_t total = 0;
  std::error_code error;
  for (llvm::sys::fs::directory_iterator it(directory, error), end;
       it != end && !error; it.increment(error)) {
    if (!llvm::StringRef(it->path()).ends_with(kSuffix))
      continue;
    llvm::sys::fs::file_status status;
    if (llvm::sys::fs::status(it->path(), status))
      continue;
    entries.push_back({it->path(), status.getSize(),
                       status.getLastModificationTime()});
    total += status.getSize();
  }
  if (total <= maxBytes)
    return;
  llvm::sort(entries, [](const Found &a, const Found &b) {
    return a.used < b.used;
  });
  for (const Found &entry : entries) {
    if (total <= maxBytes)
      break;
    if (!llvm::sys::fs::remove(entry.path))
      total -= entry.size;
  }
}

} // namespace

std::string mlir::tract::defaultCacheDirectory() {
  if (std::optional<std::string> dir =
          llvm::sys::Process::GetEnv("TRACT_CACHE_DIR"))
    return *dir;
  llvm::SmallString<256> path;
  if (std::optional<std::string> xdg =
          llvm::sys::Process::GetEnv("XDG_CACHE_HOME");
      xdg && !xdg->empty()) {
    path = *xdg;
  } else if (std::optional<std::string> home =
                 llvm::sys::Process::GetEnv("HOME");
             home && !home->empty()) {
    path = *home;
    llvm::sys::path::append(path, ".cache");
  } else {
    return "";
  }
  llvm::sys::path::append(path, "tract-mlir");
  return std::string(path);
}

llvm::StringRef mlir::tract::compilerIdentity() {
  static const std::string identity =
      std::string("tract-mlir " TRACT_VERSION " llvm " TRACT_LLVM_VERSION
                  " build ") +
      readBuildIdentity();
  return identity;
}

std::string mlir::tract::computeCacheKey(ModuleOp module,
                                         llvm::StringRef options) {
  llvm::BLAKE3 hasher;
  auto add = [&](llvm::StringRef text) {
    char size[8];
    llvm::support::endian::write64le(size, text.size());
    hasher.update(llvm::StringRef(size, 8));
    hasher.update(text);
  };
  add(compilerIdentity());
  add(options);
  // The IR as printed, with locations (names reach error messages and
  // profiles), large constants elided: the module's attributes and each op
  // of its body, so that no resource section is printed (the printer
  // writes a blob as hex before eliding it: a 1B-parameter model's 5 GB
  // took 51 s and 10 GB there) ...
  {
    HashStream os(hasher);
    OpPrintingFlags flags = OpPrintingFlags()
                                .elideLargeElementsAttrs(64)
                                .elideLargeResourceString(64)
                                .enableDebugInfo(true);
    module->getAttrDictionary().print(os);
    for (Operation &op : module.getBody()->getOperations()) {
      op.print(os, flags);
      os << "\n";
    }
  }
  // ... and the data of every constant.
  module->walk([&](Operation *op) {
    op->getAttrDictionary().walk([&](Attribute attribute) {
      if (auto dense = dyn_cast<DenseElementsAttr>(attribute)) {
        add(llvm::StringRef(dense.getRawData().data(),
                            dense.getRawData().size()));
      } else if (auto resource =
                     dyn_cast<DenseResourceElementsAttr>(attribute)) {
        if (AsmResourceBlob *blob = resource.getRawHandle().getBlob())
          add(llvm::StringRef(blob->getData().data(),
                              blob->getData().size()));
        else
          add("<no blob>");
        // Weights read in place from the model file: hashed, their pages
        // can go until the compiler reads them.
        tract::dropMappedPages(resource);
      }
    });
  });
  llvm::BLAKE3Result<32> digest = hasher.final();
  return llvm::toHex(digest, /*LowerCase=*/true);
}

std::string mlir::tract::cacheEntryPath(llvm::StringRef directory,
                                        llvm::StringRef key) {
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, key + kSuffix);
  return std::string(path);
}

std::optional<CacheEntry> mlir::tract::lookupCache(llvm::StringRef directory,
                                                   llvm::StringRef key) {
  std::string path = cacheEntryPath(directory, key);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false,
                                  /*IsVolatile=*/false,
                                  llvm::Align(kDataAlignment));
  if (!file)
    return std::nullopt;
  std::optional<CacheEntry> entry = parseEntry(std::move(*file), key);
  if (entry) // Recently used, for pruning.
    (void)::utime(path.c_str(), nullptr);
  return entry;
}

llvm::Error mlir::tract::storeCache(
    llvm::StringRef directory, llvm::StringRef key,
    llvm::ArrayRef<llvm::MemoryBufferRef> objects,
    llvm::ArrayRef<CachedConstant> constants, uint64_t maxBytes) {
  std::string rawKey;
  if (!llvm::tryGetFromHex(key, rawKey) || rawKey.size() != 32)
    return makeError("invalid compile cache key '" + key + "'");
  if (std::error_code error = llvm::sys::fs::create_directories(directory))
    return makeError("cannot create the compile cache '" + directory +
                     "': " + error.message());
  // The layout: the header and tables, then the data.
  uint64_t header = kHeader + 16 * objects.size();
  for (const CachedConstant &constant : constants)
    header += 24 + llvm::alignTo(constant.name.size(), 8);
  std::vector<uint64_t> offsets;
  uint64_t size = header;
  auto place = [&](size_t bytes) {
    size = llvm::alignTo(size, kDataAlignment);
    offsets.push_back(size);
    size += bytes;
  };
  for (llvm::MemoryBufferRef object : objects)
    place(object.getBufferSize());
  for (const CachedConstant &constant : constants)
    place(constant.data.size());
  size += sizeof(kEndMagic);
  // A model this large (a language model's weights) would crowd out every
  // other entry: it is compiled each time.
  if (size > maxBytes / 4)
    return llvm::Error::success();

  llvm::SmallString<256> model(directory);
  llvm::sys::path::append(model, key + "-%%%%%%%%.tmp");
  int fd;
  llvm::SmallString<256> temporary;
  if (std::error_code error =
          llvm::sys::fs::createUniqueFile(model, fd, temporary))
    return makeError("cannot write to the compile cache '" + directory +
                     "': " + error.message());
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os.write(kMagic, 8);
    write64(os, size);
    os << rawKey;
    os.write_zeros(32); // the digest, once the rest is written
    write64(os, objects.size());
    write64(os, constants.size());
    // What follows is hashed as it is written.
    llvm::BLAKE3 hasher;
    auto emit = [&](llvm::StringRef data) {
      hasher.update(data);
      os << data;
    };
    auto emitZeros = [&](size_t count) {
      static const char zeros[kDataAlignment] = {};
      while (count) {
        size_t chunk = std::min<size_t>(count, kDataAlignment);
        emit(llvm::StringRef(zeros, chunk));
        count -= chunk;
      }
    };
    auto emit64 = [&](uint64_t value) {
      char bytes[8];
      llvm::support::endian::write64le(bytes, value);
      emit(llvm::StringRef(bytes, 8));
    };
    size_t piece = 0;
    for (llvm::MemoryBufferRef object : objects) {
      emit64(offsets[piece++]);
      emit64(object.getBufferSize());
    }
    for (const CachedConstant &constant : constants) {
      emit64(offsets[piece++]);
      emit64(constant.data.size());
      emit64(constant.name.size());
      emit(constant.name);
      emitZeros(llvm::alignTo(constant.name.size(), 8) - constant.name.size());
    }
    piece = 0;
    auto emitAt = [&](llvm::StringRef data) {
      emitZeros(offsets[piece++] - os.tell());
      emit(data);
    };
    for (llvm::MemoryBufferRef object : objects)
      emitAt(object.getBuffer());
    for (const CachedConstant &constant : constants)
      emitAt(constant.data);
    os.write(kEndMagic, 8);
    llvm::BLAKE3Result<32> digest = hasher.final();
    os.pwrite(reinterpret_cast<const char *>(digest.data()), digest.size(),
              kDigestOffset);
    os.close();
    if (os.has_error()) {
      std::string message = os.error().message();
      os.clear_error();
      (void)llvm::sys::fs::remove(temporary);
      return makeError("cannot write to the compile cache '" + directory +
                       "': " + message);
    }
  }
  if (std::error_code error =
          llvm::sys::fs::rename(temporary, cacheEntryPath(directory, key))) {
    (void)llvm::sys::fs::remove(temporary);
    return makeError("cannot write to the compile cache '" + directory +
                     "': " + error.message());
  }
  pruneCache(directory, maxBytes);
  return llvm::Error::success();
}
