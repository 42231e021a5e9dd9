//===- CompileCache.h - compiled models kept between processes --*- C++ -*-===//
//
// The JIT's result for a model, kept on disk so that the next process that
// compiles the same model for the same machine loads it instead: the
// objects of its code and the large constants they refer to (the weights,
// packed as the code reads them). An entry is one file named by its key, a
// hash of everything the code depends on: the model's IR and the data of
// its constants, the compile options, the host CPU and its features, and
// this compiler's build. Entries are written whole to a temporary file and
// renamed into place, so that concurrent writers and readers only ever see
// complete entries; a file that is not one (truncated, from another
// format) is a miss, replaced by the next store.
//
//===----------------------------------------------------------------------===//

#ifndef TARGET_COMPILECACHE_H
#define TARGET_COMPILECACHE_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir::tract {

/// A named constant the compiled code refers to by symbol.
struct CachedConstant {
  std::string name;
  llvm::StringRef data;
};

/// An entry read back: views into `file`, which stays mapped while the
/// code runs (the constants are read in place).
struct CacheEntry {
  std::unique_ptr<llvm::MemoryBuffer> file;
  std::vector<llvm::MemoryBufferRef> objects;
  std::vector<CachedConstant> constants;
};

/// The default folder: $TRACT_CACHE_DIR, else tract-mlir in the user's
/// cache folder ($XDG_CACHE_HOME, else ~/.cache); "" when there is none.
std::string defaultCacheDirectory();

/// The key of `module` (any dialect) compiled with `options`, a text that
/// names every other input of the compile (target, options): hex digits.
std::string computeCacheKey(ModuleOp module, llvm::StringRef options);

/// This compiler's build, as the key includes it: the version and the
/// build id of the binary this code is in.
llvm::StringRef compilerIdentity();

/// The entry of `key` in `directory`, if there is a valid one.
std::optional<CacheEntry> lookupCache(llvm::StringRef directory,
                                      llvm::StringRef key);

/// Writes the entry of `key`, unless it would take more than a quarter of
/// `maxBytes`; then, if the folder holds more than `maxBytes` of entries,
/// removes the least recently used ones.
llvm::Error storeCache(llvm::StringRef directory, llvm::StringRef key,
                       llvm::ArrayRef<llvm::MemoryBufferRef> objects,
                       llvm::ArrayRef<CachedConstant> constants,
                       uint64_t maxBytes = 4ull << 30);

/// The file an entry of `key` lives in.
std::string cacheEntryPath(llvm::StringRef directory, llvm::StringRef key);

} // namespace mlir::tract

#endif // TARGET_COMPILECACHE_H
