/* tract GPU runtime for Metal: runs the MSL kernels of models compiled with
 * `tract compile --target metal` on a Mac's GPU (runtime/gpu/metal.m,
 * library tract_runtime_metal, built on macOS only), as tract_gpu.h runs
 * SPIR-V kernels on Vulkan and tract_cuda.h PTX on CUDA.
 *
 * Buffers are host memory on both sides of a launch; the runtime copies
 * them into shared-storage Metal buffers it keeps, and back. Every function
 * may be called from any thread: launches run one at a time. Errors are
 * reported as in tract_runtime.h: status 1 (TRACT_ERROR) and a message in
 * tract_last_error(). TRACT_METAL_DEVICE=N picks the Nth device of
 * MTLCopyAllDevices (from 0) instead of the system's default one. */
#ifndef TRACT_METAL_H
#define TRACT_METAL_H

#include "runtime/tract_gpu.h" /* TRACT_GPU_READ, WRITE, CONSTANT */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether a Metal device can run kernels. The first call picks the device
 * and makes its command queue; later calls give the same answer until
 * tract_metal_release. Returns 1, or 0 with the reason in `why` (at most
 * `size` bytes, NUL included; `why` may be NULL). */
int32_t tract_metal_available(char *why, size_t size);

/* The device's name (MTLDevice.name), or "" when there is none. Valid
 * until tract_metal_release. */
const char *tract_metal_device_name(void);

/* Runs one kernel and waits for it.
 *
 * `msl` is Metal Shading Language source, `size` bytes then a NUL; the
 * pointer names it: it is compiled (newLibraryWithSource) at its first
 * launch, with the pipeline of `entry`, its kernel function, and both are
 * kept, so the text must stay where it is, unchanged (compiled models hold
 * it as a constant). The kernel runs on groups_x * groups_y * groups_z
 * threadgroups of block_x threads (1-D threadgroups). A zero group count
 * runs nothing.
 *
 * Buffer i (0 <= i < num_buffers, at most 31: Metal's buffer argument
 * table) is bound at [[buffer(i)]]; its host memory is pointers[i] ..
 * pointers[i] + bytes[i], used as flags[i] says (tract_gpu.h): READ is
 * copied to the device before, WRITE back after, CONSTANT is uploaded at
 * its first launch and found again by host pointer and size. A buffer
 * flagged WRITE alone is not uploaded: it comes back whole, so the kernel
 * writes all of it (or it is flagged READ too). Buffers of the same memory
 * (pointer and size) are one Metal buffer. A zero-byte buffer binds a small
 * placeholder.
 *
 * Returns 0 (TRACT_OK), or 1 (TRACT_ERROR) with a message naming the
 * kernel and what failed (the MSL compiler's log, the command buffer's
 * error), or the argument refused. */
int32_t tract_metal_launch(const char *msl, int64_t size, const char *entry,
                           int32_t groups_x, int32_t groups_y, int32_t groups_z,
                           int32_t block_x, int32_t num_buffers,
                           void *const *pointers, const int64_t *bytes,
                           const int32_t *flags);

/* Frees every pipeline, library and buffer, and the queue; the next call
 * starts again. */
void tract_metal_release(void);

#ifdef __cplusplus
}
#endif

#endif /* TRACT_METAL_H */
