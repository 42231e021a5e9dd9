/* The launch arguments every GPU runtime checks alike
 * (tract_gpu_internal.h). */
#include "runtime/tract_gpu.h"
#include "runtime/tract_gpu_internal.h"

tract_status tract_gpu_check_buffers(int32_t n, void *const *pointers,
                                     const int64_t *bytes, const int32_t *flags,
                                     int64_t max_bytes) {
  if (n > 0 && (!pointers || !bytes || !flags))
    return tract_set_error("%d buffers but no pointers, sizes or flags",
                           (int)n);
  for (int32_t i = 0; i < n; ++i) {
    if (bytes[i] < 0 || (max_bytes >= 0 && bytes[i] > max_bytes)) {
      if (max_bytes < 0)
        return tract_set_error("buffer %d has %lld bytes", (int)i,
                               (long long)bytes[i]);
      return tract_set_error("buffer %d has %lld bytes; the device binds 0 "
                             "to %lld",
                             (int)i, (long long)bytes[i], (long long)max_bytes);
    }
    if (bytes[i] > 0 && !pointers[i])
      return tract_set_error("buffer %d has %lld bytes at NULL", (int)i,
                             (long long)bytes[i]);
    if (flags[i] & ~(TRACT_GPU_READ | TRACT_GPU_WRITE | TRACT_GPU_CONSTANT))
      return tract_set_error("buffer %d has unknown flags %d", (int)i,
                             (int)flags[i]);
    if ((flags[i] & TRACT_GPU_CONSTANT) && (flags[i] & TRACT_GPU_WRITE))
      return tract_set_error("buffer %d is CONSTANT, so the kernel cannot "
                             "write it",
                             (int)i);
  }
  return TRACT_OK;
}
