#include "tools/tract/RunMemory.h"

#include <cstdlib>
#ifdef __GLIBC__
#include <malloc.h>
#endif

void mlir::tract::cli::keepFreedBuffers() {
#ifdef __GLIBC__
  // What the compiler freed goes back first; then nothing is trimmed.
  malloc_trim(0);
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}
