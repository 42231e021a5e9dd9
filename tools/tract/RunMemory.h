//===- RunMemory.h - memory policy of repeated model runs -------*- C++ -*-===//

#ifndef TOOLS_TRACT_RUNMEMORY_H
#define TOOLS_TRACT_RUNMEMORY_H

namespace mlir::tract::cli {

/// Called once a model is compiled, before it runs: freed buffers stay in
/// the process from then on. glibc otherwise serves each buffer over 128 KiB
/// with a fresh mmap, and every run pays a page fault per 4 KiB of its
/// intermediate tensors (an arena in onnxruntime reuses them the same way).
/// Not earlier: the import and the compiler free far more than a run uses,
/// and that memory should go back to the system.
void keepFreedBuffers();

} // namespace mlir::tract::cli

#endif // TOOLS_TRACT_RUNMEMORY_H
