//===- BufferUses.h - where a buffer is last used -------------------------===//
//
// The deallocation pipeline frees each buffer at the end of the block that
// made it. Passes that move a `memref.dealloc` earlier ask where the buffer,
// or a view of it, is last used; passes that fuse or cut ops ask which
// buffers an op touches.
//
//===----------------------------------------------------------------------===//

#ifndef TRACT_CODEGEN_COMMON_BUFFERUSES_H
#define TRACT_CODEGEN_COMMON_BUFFERUSES_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"

#include <optional>

namespace mlir::tract {

/// The op of `block` that holds the last use of `buffer` or of a view of it
/// (subview, reshape, cast, transpose: any op that takes it and gives a
/// buffer), `except` (its dealloc) left out: null when nothing else uses
/// it; std::nullopt when a use lets it escape where uses cannot be followed
/// (a call but a kernel's, a return or yield, its address as an integer, a
/// use outside `block`).
std::optional<Operation *> lastUseInBlock(Block &block, Value buffer,
                                          Operation *except);

/// The buffer `value` is a view of (itself when it is none).
Value baseBuffer(Value value);

/// Whether `op` reads or writes (only writes, with `writesOnly`) any of
/// `buffers` or a view of one; an op whose effects are unknown does.
bool touchesBuffers(Operation *op, ArrayRef<Value> buffers, bool writesOnly);

/// The unit attribute of a step's buffer argument (tract-outline-steps)
/// whose contents the caller never reads after the step returns: the step
/// may leave in it what it likes, as in a buffer of its own.
constexpr const char kDeadAfterAttrName[] = "tract.dead_after";

} // namespace mlir::tract

#endif // TRACT_CODEGEN_COMMON_BUFFERUSES_H
