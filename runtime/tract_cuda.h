/* tract GPU runtime for CUDA: runs the PTX kernels of compiled models on an
 * NVIDIA device (runtime/gpu/cuda.c, library tract_runtime_cuda), as
 * tract_gpu.h runs SPIR-V kernels on Vulkan.
 *
 * The CUDA driver (libcuda.so.1) is opened at run time: a program that
 * links this library needs no CUDA to build or to start, and where there is
 * no driver tract_cuda_available says so. Buffers are host memory on both
 * sides of a launch; the runtime copies them to device buffers it keeps,
 * and back. Every function may be called from any thread: launches run one
 * at a time, each with the device's primary context current only while it
 * runs. Errors are reported as in tract_runtime.h: status 1 (TRACT_ERROR)
 * and a message in tract_last_error().
 *
 * TRACT_CUDA_DEVICE=N picks the Nth device (from 0) instead of the first;
 * TRACT_CUDA_LIBRARY=PATH opens another driver library than libcuda.so.1
 * (the tests' fake driver, test/unit/fake_cuda.c). Both are read when the
 * runtime starts: at the first call, and at the first after
 * tract_cuda_release. */
#ifndef TRACT_CUDA_H
#define TRACT_CUDA_H

#include "runtime/tract_gpu.h" /* TRACT_GPU_READ, WRITE, CONSTANT */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Runs one kernel and waits for it.
 *
 * `ptx` is the text of a PTX module, or a fatbin (the module assembled for
 * a chip, and its PTX: what `tract compile` embeds where it finds the CUDA
 * toolkit's ptxas), `size` bytes then a NUL; the pointer
 * names the module: it is loaded (compiled for the device by the driver) at
 * the first launch of one of its kernels and kept, so the text must stay
 * where it is, unchanged (compiled models hold it as a constant). `entry`
 * is the kernel, run on groups_x * groups_y * groups_z blocks of block_x
 * threads (1-D blocks). A zero group count runs nothing.
 *
 * Buffer i (0 <= i < num_buffers) is host memory pointers[i] ..
 * pointers[i] + bytes[i], used as flags[i] says (tract_gpu.h): READ is
 * copied to the device before, WRITE back after, CONSTANT is uploaded at its
 * first launch and found again by host pointer and size. A buffer flagged
 * WRITE alone is not uploaded: it comes back whole, so the kernel writes all
 * of it (or it is flagged READ too). Buffers of the same memory (pointer and
 * size) are one device buffer. The kernel's parameters are, buffer
 * after buffer, the five fields of MLIR's descriptor of a 1-D memref: the
 * allocated and the aligned pointer (both the device buffer; 0 for a
 * zero-byte buffer), the offset (int64 0), the size (int64 bytes[i]: in
 * bytes, whatever the element type; kernels index through their own
 * parameters) and the stride (int64 1).
 *
 * Returns 0 (TRACT_OK), or 1 (TRACT_ERROR) with a message naming the kernel
 * and the failed driver call with its error (cuGetErrorName), or the
 * argument refused. A kernel that faults leaves the context unusable, as
 * CUDA does: later launches fail until tract_cuda_release. */
int32_t tract_cuda_launch(const char *ptx, int64_t size, const char *entry,
                          int32_t groups_x, int32_t groups_y, int32_t groups_z,
                          int32_t block_x, int32_t num_buffers,
                          void *const *pointers, const int64_t *bytes,
                          const int32_t *flags);

/* tract_cuda_launch without the wait: the launch joins the open batch,
 * as tract_gpu_record's does on Vulkan (tract_gpu.h says what the host may
 * and may not touch until the batch runs). Its kernel is launched now, on
 * the context's stream, behind the batch's earlier launches: the buffers
 * it reads are copied to the device (or found there, when an earlier
 * launch of the batch had them) and stay the device's for the batch's
 * next launches; what it writes is copied back by tract_cuda_sync. A
 * buffer that shares bytes with one of the batch without being the same
 * memory makes the batch run first. On failure the open batch is dropped
 * (and the next sync says so). TRACT_CUDA_SYNC_EACH=1 (read at the first
 * call) makes each launch a batch of its own, as tract_cuda_launch. */
int32_t tract_cuda_record(const char *ptx, int64_t size, const char *entry,
                          int32_t groups_x, int32_t groups_y, int32_t groups_z,
                          int32_t block_x, int32_t num_buffers,
                          void *const *pointers, const int64_t *bytes,
                          const int32_t *flags);

/* Waits for the open batch's kernels and copies what they wrote back to
 * the host. Returns 0, or 1 with the failed call (a kernel's fault shows
 * here), or when launches were dropped since the last sync. */
int32_t tract_cuda_sync(void);

/* As tract_gpu_discard (tract_gpu.h): what the open batch wrote in host ..
 * host + bytes is not copied back. */
void tract_cuda_discard(const void *host, int64_t bytes);

/* Whether a CUDA device can run kernels. The first call opens the driver,
 * initializes it, picks the device and retains its primary context; later
 * calls give the same answer until tract_cuda_release. Returns 1, or 0 with
 * the reason in `why` (at most `size` bytes, NUL included; `why` may be
 * NULL): "no CUDA driver (libcuda.so.1)" when the driver cannot be opened,
 * "no CUDA device" when it lists none, else the call that failed. */
int32_t tract_cuda_available(char *why, size_t size);

/* The device's name, or "" when there is none. Valid until
 * tract_cuda_release. */
const char *tract_cuda_device_name(void);

/* The device's compute capability as a PTX target, "sm_" then its major and
 * minor numbers ("sm_80", "sm_120"), or "" when there is none. Valid until
 * tract_cuda_release. */
const char *tract_cuda_device_chip(void);

/* Frees every device buffer and module, releases the primary context and
 * closes the driver; the next call starts again. Programs call it at exit,
 * so that leak checkers find nothing. */
void tract_cuda_release(void);

#ifdef __cplusplus
}
#endif

#endif /* TRACT_CUDA_H */
