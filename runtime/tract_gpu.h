/* tract GPU runtime: runs the SPIR-V compute kernels of compiled models on
 * a Vulkan device (runtime/gpu/vulkan.c, library tract_runtime_vulkan).
 *
 * The Vulkan loader (libvulkan.so.1) is opened at run time: a program that
 * links this library runs on machines without Vulkan, where
 * tract_gpu_available says why there is no device. Buffers are host memory
 * on both sides of a launch; the runtime copies them to device buffers it
 * keeps, and back. Launches run one at a time, or are recorded into a
 * batch that runs at once (tract_gpu_record, tract_gpu_sync). Every
 * function may be called from any thread. Errors are reported as in
 * tract_runtime.h: status 1 (TRACT_ERROR) and a message in tract_last_error().
 */
#ifndef TRACT_GPU_H
#define TRACT_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How a kernel uses a buffer of a launch (flags, or-ed). READ: the kernel
 * reads it, copied host -> device before; WRITE: the kernel writes it,
 * copied device -> host after. */
#define TRACT_GPU_READ 1
#define TRACT_GPU_WRITE 2
/* Immutable host data (weights): uploaded at its first launch, found again
 * by host pointer and size, never copied back. Not with TRACT_GPU_WRITE. */
#define TRACT_GPU_CONSTANT 4

/* Runs one compute kernel and waits for it (and for the open batch of
 * tract_gpu_record, before it).
 *
 * `spirv` holds `words` SPIR-V words; the pointer names the kernel: its
 * shader module and pipeline are made at its first launch and kept, so the
 * words must stay where they are, unchanged (compiled models hold them as
 * constants). `entry` is the entry point, run on groups_x * groups_y *
 * groups_z workgroups (the workgroup size is the shader's).
 *
 * Buffer i (0 <= i < num_buffers) is bound as a storage buffer at
 * descriptor set 0, binding i, with the range bytes[i]; its host memory is
 * pointers[i] .. pointers[i] + bytes[i] and flags[i] says how the kernel
 * uses it. A buffer flagged TRACT_GPU_WRITE alone is not uploaded: it comes
 * back whole, so the kernel writes all of it (or it is flagged READ too). A
 * zero-byte buffer binds a small placeholder.
 *
 * Returns 0 (TRACT_OK), or 1 (TRACT_ERROR) with a message naming the
 * kernel and the failed Vulkan call and its result, the argument refused,
 * or why there is no device. */
int32_t tract_gpu_launch(const uint32_t *spirv, int64_t words,
                         const char *entry, int32_t groups_x, int32_t groups_y,
                         int32_t groups_z, int32_t num_buffers,
                         void *const *pointers, const int64_t *bytes,
                         const int32_t *flags);

/* tract_gpu_launch without the wait: the launch joins the open batch of
 * launches, which tract_gpu_sync runs. The buffers it reads are copied (or
 * found on the device, when an earlier launch of the batch had them) now;
 * those it writes are copied back by tract_gpu_sync, and stay the device's
 * for the batch's next launches, which see what it wrote. Until then the
 * host must not touch, nor free, memory a launch of the batch writes, and
 * must not change memory one reads and expect the batch to see it. A
 * buffer that shares bytes with one of the batch without being the same
 * (pointer and size) makes the batch run first. Compiled models record
 * their launches and sync before their host code touches that memory.
 * Threads share the open batch. On failure, the open batch is dropped
 * unrun (and the next sync says so). */
int32_t tract_gpu_record(const uint32_t *spirv, int64_t words,
                         const char *entry, int32_t groups_x, int32_t groups_y,
                         int32_t groups_z, int32_t num_buffers,
                         void *const *pointers, const int64_t *bytes,
                         const int32_t *flags);

/* Runs the open batch: submits its dispatches (a barrier between each
 * two), waits for them and copies what they wrote back to the host.
 * Returns 0, or 1 with the failed Vulkan call in the message, or when
 * launches were dropped since the last sync. */
int32_t tract_gpu_sync(void);

/* The host is about to free (or overwrite) host .. host + bytes, and what
 * the open batch's launches write there is dead: tract_gpu_sync will not
 * copy it back. Compiled models call it before freeing a buffer that only
 * kernels wrote and read, so that the free does not end the batch. */
void tract_gpu_discard(const void *host, int64_t bytes);

/* Whether a Vulkan device can run kernels. The first call opens the loader
 * and makes the instance and the device (the environment variable
 * TRACT_VULKAN_DEVICE=N picks the Nth device, from 0, instead of the first
 * with a compute queue); later calls give the same answer until
 * tract_gpu_release. Returns 1, or 0 with the reason in `why` (at most
 * `size` bytes, NUL included; `why` may be NULL): no Vulkan loader, no
 * device, no compute queue, a failed call. */
int32_t tract_gpu_available(char *why, size_t size);

/* The device's name (VkPhysicalDeviceProperties.deviceName), or "" when
 * there is none. Valid until tract_gpu_release. */
const char *tract_gpu_device_name(void);

/* What the device offers, for the compiler's choice of SPIR-V
 * capabilities: each of the first five is 1 when the device has (and the
 * runtime enabled) what kernels with that type need, 0 otherwise. */
typedef struct tract_gpu_features {
  int32_t int8;    /* shaderInt8 and storageBuffer8BitAccess */
  int32_t int16;   /* shaderInt16 and storageBuffer16BitAccess */
  int32_t int64;   /* shaderInt64 */
  int32_t float16; /* shaderFloat16 and storageBuffer16BitAccess */
  int32_t float64; /* shaderFloat64 */
  int32_t max_workgroup_invocations; /* maxComputeWorkGroupInvocations */
  int32_t max_workgroup_size[3];     /* maxComputeWorkGroupSize */
  int32_t max_workgroup_count[3];    /* maxComputeWorkGroupCount */
  int32_t subgroup_size;
  int64_t max_storage_buffer_range; /* the most bytes one buffer binds */
} tract_gpu_features;

/* Fills `features` for the device (all zeroes when there is none). */
void tract_gpu_get_features(tract_gpu_features *features);

/* Frees every Vulkan object (pipelines, buffers, the device, the instance)
 * and closes the loader; the next call starts again. Programs call it at
 * exit, so that leak checkers find nothing. */
void tract_gpu_release(void);

#ifdef __cplusplus
}
#endif

#endif /* TRACT_GPU_H */
