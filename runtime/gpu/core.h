/* The core the GPU host runtimes share (gpu/vulkan.c, gpu/cuda.c,
 * gpu/metal.m); not part of the runtime's API.
 *
 * As IREE's HAL is one device interface with shared utilities and a small
 * driver per API, the core holds what does not depend on the API: the
 * device's life cycle and lock, the checks of a launch, the kernels made at
 * their first launch, the weights uploaded once, the pool of device buffers
 * and the batch whose launches share their device copies. A backend fills a
 * tract_gpu_backend with what talks to its API, and keeps its device in a
 * tract_gpu_core, which its entry points hand to the core. */
#ifndef TRACT_RUNTIME_GPU_CORE_H
#define TRACT_RUNTIME_GPU_CORE_H

#include "runtime/tract_runtime.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A device buffer as the core knows it. A backend's buffers begin with one
 * and hold their API's handles after it. */
typedef struct tract_gpu_buffer {
  uint64_t capacity; /* in bytes, set by the core */
  /* Where the host reads and writes its bytes, or NULL: then the backend
   * copies them (upload, download). */
  void *mapped;
} tract_gpu_buffer;

/* A launch, as a runtime's entry point was given it. */
typedef struct tract_gpu_launch_args {
  const void *code; /* the kernel's module: SPIR-V words, PTX or MSL text */
  int64_t size;     /* in the code's units: words, or bytes before a NUL */
  const char *entry;
  int32_t groups[3];
  int32_t block_x; /* threads per block, where the launch says it */
  int32_t num_buffers;
  void *const *pointers;
  const int64_t *bytes;
  const int32_t *flags;
} tract_gpu_launch_args;

/* What a launch may ask of the device; -1 where there is no known limit. */
typedef struct tract_gpu_limits {
  int32_t max_groups[3];
  int32_t max_block;
  int32_t max_buffers;
  int64_t max_buffer_bytes;
} tract_gpu_limits;

typedef struct tract_gpu_core tract_gpu_core;

/* What a backend does with its API, by what it acts on. The functions
 * returning a status set the error message when they fail. The core calls
 * them under its lock, between device.enter and device.leave where a
 * backend has those; the ones said optional may be NULL. */
typedef struct tract_gpu_backend {
  /* How messages name the API and its grid: "CUDA" kernel 'k', 3 "blocks"
   * along x, threads per "block" (NULL: the kernel's code sets its block
   * size). */
  struct {
    const char *api, *groups, *block;
  } names;
  /* Zero-byte buffers bind a small zeroed buffer (1), or none (0: NULL). */
  int placeholder;

  struct {
    /* Opens the API and picks the device: fills core->name and
     * core->limits. */
    tract_status (*start)(tract_gpu_core *core);
    /* Frees what start made, from wherever it stopped, and forgets it
     * all; frees the core's objects (tract_gpu_free_objects) first, while
     * the device can. */
    void (*stop)(tract_gpu_core *core);
    /* Optional: makes the device the thread's own (CUDA's context) until
     * leave, which returns `status`, or its own failure when `status` is
     * TRACT_OK. */
    tract_status (*enter)(void);
    tract_status (*leave)(tract_status status);
  } device;

  /* Kernels, made at their first launch and kept by the core. */
  struct {
    /* Refuses code the API would not take, before anything is made. */
    tract_status (*check)(const void *code, int64_t size);
    /* The kernel that `launch` names (code, entry point, buffer count). */
    tract_status (*make)(const tract_gpu_launch_args *launch, void **kernel);
    void (*destroy)(void *kernel); /* optional */
    /* Optional: the most threads per block the kernel runs. */
    int32_t (*max_block)(void *kernel);
  } kernels;

  struct {
    /* The size of the backend's buffers, which begin with a
     * tract_gpu_buffer; the core allocates and frees them. */
    size_t size;
    /* Makes a device buffer of `capacity` bytes in `buffer` (zeroed), or
     * nothing and the message. */
    tract_status (*allocate)(tract_gpu_buffer *buffer, uint64_t capacity);
    void (*destroy)(tract_gpu_buffer *buffer);
    /* Copies to and from a buffer that is not mapped (optional when all
     * are); upload writes from `offset` bytes into the buffer. */
    tract_status (*upload)(tract_gpu_buffer *buffer, uint64_t offset,
                           const void *host, int64_t bytes);
    tract_status (*download)(void *host, tract_gpu_buffer *buffer,
                             int64_t bytes);
  } buffers;

  /* The open batch of launches. */
  struct {
    /* Bytes per buffer of a launch that dispatch may write at `bindings`
     * (the API's descriptors of them), until it returns. */
    size_t binding_bytes;
    /* Adds the kernel on the bound buffers (one per buffer of `launch`:
     * NULL for zero bytes without a placeholder) to the batch, of which it
     * is the first launch or not. */
    tract_status (*dispatch)(void *kernel, const tract_gpu_launch_args *launch,
                             tract_gpu_buffer *const *bound, void *bindings,
                             int first);
    /* Runs the batch's launches and waits for them. */
    tract_status (*run)(void);
    /* Optional: the batch is over, run or (dropped) not. */
    void (*close)(int dropped);
  } batch;
} tract_gpu_backend;

/* A device and what the core keeps of it. The backend sets `backend` and
 * `lock` (TRACT_GPU_CORE) and fills `name` and `limits` when it starts;
 * the rest is the core's. */
struct tract_gpu_core {
  const tract_gpu_backend *backend;
  pthread_mutex_t lock;
  /* From here on, zero until the device is started, and again after it is
   * released. */
  int state;
  char why[512]; /* why there is no device */
  char name[256];
  tract_gpu_limits limits;
  tract_gpu_buffer *placeholder;
  struct tract_gpu_kernel *kernels;
  int32_t num_kernels, kernels_capacity;
  struct tract_gpu_constant *constants;
  int32_t num_constants, constants_capacity;
  struct tract_gpu_pooled *pool;
  int32_t pool_size, pool_capacity;
  /* The open batch: its launches and the device copies of its buffers. */
  int32_t launches;
  struct tract_gpu_resident *residents;
  int32_t num_residents, residents_capacity;
  int dropped; /* launches were dropped unrun since the last run */
  /* The launch being recorded: its buffers largest first, the device
   * buffer bound to each, and room for the backend's descriptors. */
  int32_t *order;
  int32_t order_capacity;
  tract_gpu_buffer **bound;
  int32_t bound_capacity;
  void *bindings;
  size_t bindings_capacity; /* bytes */
};

#define TRACT_GPU_CORE(table)                                                  \
  { .backend = &(table), .lock = PTHREAD_MUTEX_INITIALIZER }

/* Calls `call`, a function of the API that returns a `type`: any result
 * but `success` returns TRACT_ERROR from the calling function, with the
 * message that `failed(name, result)` records. */
#define TRACT_GPU_CHECK(type, success, failed, name, call)                     \
  do {                                                                         \
    type result_ = (call);                                                     \
    if (result_ != (success))                                                  \
      return failed(name, result_);                                            \
  } while (0)

/* The runtimes' entry points, on their device. Each takes the lock and
 * starts the device at its first call (again after a release). */

/* Checks and records a launch into the open batch (the arguments of
 * tract_cuda_launch; block_x unused where the kernel's code sets it); with
 * `run`, runs the batch and copies back what it wrote. 0, or 1 with a
 * message naming the kernel. */
int32_t tract_gpu_core_launch(tract_gpu_core *core, const void *code,
                              int64_t size, const char *entry, int32_t groups_x,
                              int32_t groups_y, int32_t groups_z,
                              int32_t block_x, int32_t num_buffers,
                              void *const *pointers, const int64_t *bytes,
                              const int32_t *flags, int run);
/* Runs the open batch. */
int32_t tract_gpu_core_sync(tract_gpu_core *core);
/* What the open batch wrote in host .. host + bytes is not copied back. */
void tract_gpu_core_discard(tract_gpu_core *core, const void *host,
                            int64_t bytes);
int32_t tract_gpu_core_available(tract_gpu_core *core, char *why, size_t size);
/* "" when there is no device. */
const char *tract_gpu_core_device_name(tract_gpu_core *core);
/* Frees everything; the next call starts again. */
void tract_gpu_core_release(tract_gpu_core *core);
/* Locks the core, started: a backend reads what it knows of the device
 * between these two. */
void tract_gpu_core_lock(tract_gpu_core *core);
void tract_gpu_core_unlock(tract_gpu_core *core);

/* For the backends. */

/* Frees the kernels and device buffers the core keeps (stop calls it
 * while the device can still free them). */
void tract_gpu_free_objects(tract_gpu_core *core);
/* The device that the environment variable `variable` names, as an index
 * among the API's `count` devices, or -1 when it names none; an error when
 * there is no device or it names none of them. */
tract_status tract_gpu_choose_device(const char *variable, const char *api,
                                     int64_t count, int32_t *index);
/* Refuses text code (PTX, MSL) that is missing or not NUL-terminated. */
tract_status tract_gpu_check_text(const void *code, int64_t size,
                                  const char *what);
/* `items` (of `size` bytes each) with room for `needed` (positive): the
 * same pointer when it had room, a larger block (and *capacity updated)
 * when not, NULL with a message when memory ran out. */
void *tract_gpu_grow(void *items, int32_t *capacity, int32_t needed,
                     size_t size);
/* Puts `context` and ": " before the message of the failure at hand. */
tract_status tract_gpu_explain(const char *context);

#ifdef __cplusplus
}
#endif

#endif /* TRACT_RUNTIME_GPU_CORE_H */
