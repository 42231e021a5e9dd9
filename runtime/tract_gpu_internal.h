/* What the GPU runtimes (tract_vulkan.c, tract_cuda.c, tract_metal.m)
 * share; not part of the runtime's API. */
#ifndef TRACT_GPU_INTERNAL_H
#define TRACT_GPU_INTERNAL_H

#include "runtime/tract_runtime.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Checks the buffers of a launch as tract_gpu.h describes them: the
 * arrays are there when n > 0; each buffer has 0 to max_bytes bytes
 * (max_bytes < 0: no limit) at a pointer when it has any, known flags, and
 * CONSTANT without WRITE. Returns TRACT_OK, or TRACT_ERROR with a message
 * naming the buffer at fault. */
tract_status tract_gpu_check_buffers(int32_t n, void *const *pointers,
                                     const int64_t *bytes, const int32_t *flags,
                                     int64_t max_bytes);

#ifdef __cplusplus
}
#endif

#endif /* TRACT_GPU_INTERNAL_H */
