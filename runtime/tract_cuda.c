/* The CUDA host runtime of tract_cuda.h.
 *
 * The driver API is reached through a table of function pointers looked up
 * in libcuda.so.1 (opened with dlopen), and the few types and constants it
 * uses are declared here: programs link nothing of CUDA, and the runtime
 * builds without CUDA's headers. One device and its primary context, made
 * current around each launch (and the caller's own context current again
 * after); one module per PTX text, loaded at the first launch of one of its
 * kernels, and each kernel looked up in it once.
 *
 * A launch copies what the kernel reads to device buffers, launches, waits
 * for the context and copies what the kernel wrote back. Weights (CONSTANT
 * buffers) are uploaded once and found again by host address and size;
 * other buffers come from a pool that keeps, slot by slot, the largest
 * buffer a launch needed, so that a model running again finds its buffers
 * made.
 *
 * One mutex guards all of it: launches run one at a time. */

/* dlopen's RTLD_NODELETE, strdup and pthreads under -std=c11 too. */
#define _GNU_SOURCE
#include "runtime/tract_cuda.h"
#include "runtime/tract_gpu_internal.h"
#include "runtime/tract_profile.h"
#include "runtime/tract_runtime.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- The driver API, as far as it is used ---- */

typedef int CUresult;
typedef int CUdevice;
typedef int CUdevice_attribute;
typedef int CUjit_option;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;

enum { CUDA_SUCCESS = 0 };

/* The CUdevice_attribute values read. */
enum {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5, /* then Y and Z */
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
};

/* The CUjit_option values given: where the driver's PTX compiler writes
 * why it refused a module. */
enum {
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
};

/* The driver functions used: the field, the symbol (the _v2 entry points
 * that cuda.h maps the plain names to), the parameters. All return a
 * CUresult. */
#define DRIVER_FUNCTIONS(X)                                                    \
  X(GetErrorName, "cuGetErrorName", (CUresult, const char **))                 \
  X(GetErrorString, "cuGetErrorString", (CUresult, const char **))             \
  X(Init, "cuInit", (unsigned))                                                \
  X(DeviceGetCount, "cuDeviceGetCount", (int *))                               \
  X(DeviceGet, "cuDeviceGet", (CUdevice *, int))                               \
  X(DeviceGetName, "cuDeviceGetName", (char *, int, CUdevice))                 \
  X(DeviceGetAttribute, "cuDeviceGetAttribute",                                \
    (int *, CUdevice_attribute, CUdevice))                                     \
  X(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain",                        \
    (CUcontext *, CUdevice))                                                   \
  X(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", (CUdevice))       \
  X(CtxPushCurrent, "cuCtxPushCurrent_v2", (CUcontext))                        \
  X(CtxPopCurrent, "cuCtxPopCurrent_v2", (CUcontext *))                        \
  X(CtxSynchronize, "cuCtxSynchronize", (void))                                \
  X(MemAlloc, "cuMemAlloc_v2", (CUdeviceptr *, size_t))                        \
  X(MemFree, "cuMemFree_v2", (CUdeviceptr))                                    \
  X(MemcpyHtoD, "cuMemcpyHtoD_v2", (CUdeviceptr, const void *, size_t))        \
  X(MemcpyDtoH, "cuMemcpyDtoH_v2", (void *, CUdeviceptr, size_t))              \
  X(ModuleLoadDataEx, "cuModuleLoadDataEx",                                    \
    (CUmodule *, const void *, unsigned, CUjit_option *, void **))             \
  X(ModuleGetFunction, "cuModuleGetFunction",                                  \
    (CUfunction *, CUmodule, const char *))                                    \
  X(ModuleUnload, "cuModuleUnload", (CUmodule))                                \
  X(LaunchKernel, "cuLaunchKernel",                                            \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,   \
     unsigned, CUstream, void **, void **))

#define DECLARE_TYPE(name, symbol, parameters)                                 \
  typedef CUresult(*name##_function) parameters;
DRIVER_FUNCTIONS(DECLARE_TYPE)
#undef DECLARE_TYPE

#define DECLARE_FUNCTION(name, symbol, parameters) name##_function name;
static struct { DRIVER_FUNCTIONS(DECLARE_FUNCTION) } cu;
#undef DECLARE_FUNCTION

/* ---- The runtime's state ---- */

typedef struct device_buffer {
  CUdeviceptr pointer;
  uint64_t capacity;
} device_buffer;

/* The device copy of a launch's CONSTANT host data. */
typedef struct constant_buffer {
  const void *host;
  int64_t bytes;
  device_buffer device;
} constant_buffer;

typedef struct pooled_buffer {
  device_buffer device;
  int busy; /* given to the launch in progress */
} pooled_buffer;

/* A PTX module, loaded at the first launch of one of its kernels. */
typedef struct ptx_module {
  const char *ptx;
  int64_t size;
  CUmodule module;
} ptx_module;

/* A kernel, looked up in its module at its first launch. */
typedef struct kernel {
  const char *ptx;
  int64_t size;
  char *entry;
  CUfunction function;
} kernel;

/* What a kernel gets for one buffer: the fields of MLIR's descriptor of a
 * 1-D memref, each a parameter of its own. */
typedef struct memref_descriptor {
  CUdeviceptr allocated, aligned;
  int64_t offset, size, stride;
} memref_descriptor;

enum { PARAMETERS_PER_BUFFER = 5 };

enum cuda_state { CUDA_UNTRIED = 0, CUDA_READY, CUDA_FAILED };

static pthread_mutex_t cuda_lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
  enum cuda_state state;
  char why[512]; /* why there is no device, when FAILED */
  void *driver;
  CUdevice device;
  CUcontext context; /* the device's primary context, retained */
  char name[256];
  char chip[16];
  int max_threads_per_block;
  int max_blocks[3];
  ptx_module *modules;
  int32_t num_modules, modules_capacity;
  kernel *kernels;
  int32_t num_kernels, kernels_capacity;
  constant_buffer *constants;
  int32_t num_constants, constants_capacity;
  pooled_buffer *pool;
  int32_t pool_size, pool_capacity;
  memref_descriptor *descriptors; /* of the launch in progress */
  int32_t descriptors_capacity;
  void **parameters; /* its kernel parameters, into `descriptors` */
  int32_t parameters_capacity;
  int32_t *order; /* its buffers, largest first */
  int32_t order_capacity;
} cuda;

/* ---- Errors ---- */

static tract_status cuda_failed(const char *call, CUresult result) {
  const char *name = NULL, *text = NULL;
  if (cu.GetErrorName(result, &name) != CUDA_SUCCESS || !name)
    name = "CUresult";
  if (cu.GetErrorString(result, &text) != CUDA_SUCCESS || !text)
    return tract_set_error("%s failed: %s (%d)", call, name, (int)result);
  return tract_set_error("%s failed: %s (%d): %s", call, name, (int)result,
                         text);
}

/* Calls cu<name> through the table; a failure records the call and its
 * result and returns TRACT_ERROR from the calling function. */
#define CU_CHECK(name, ...)                                                    \
  do {                                                                         \
    CUresult result_ = cu.name(__VA_ARGS__);                                   \
    if (result_ != CUDA_SUCCESS)                                               \
      return cuda_failed("cu" #name, result_);                                 \
  } while (0)

/* Puts `context` and ": " before the message of the failure at hand. */
static tract_status explain(const char *context) {
  /* tract_set_error formats into a copy: it may quote the last error. */
  return tract_set_error("%s: %s", context, tract_last_error());
}

/* `items` (of `size` bytes each) with room for `needed` of them: the same
 * pointer when it had room, a larger block (and *capacity updated) when
 * not, NULL with a message when memory ran out. `needed` is positive. */
static void *grow(void *items, int32_t *capacity, int32_t needed, size_t size) {
  if (needed <= *capacity)
    return items;
  int32_t grown = *capacity ? *capacity : 8;
  while (grown < needed)
    grown = grown > INT32_MAX / 2 ? needed : grown * 2;
  void *moved = realloc(items, (size_t)grown * size);
  if (!moved) {
    tract_set_error("out of memory in the CUDA runtime");
    return NULL;
  }
  *capacity = grown;
  return moved;
}

/* ---- The driver and the device ---- */

static tract_status open_driver(void) {
  const char *path = getenv("TRACT_CUDA_LIBRARY");
  if (!path || !*path)
    path = "libcuda.so.1";
  /* Never unloaded: from cuInit on, the driver runs threads of its own,
   * which no call of its API stops. */
  cuda.driver = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!cuda.driver)
    return tract_set_error("no CUDA driver (%s)", path);
#define LOAD_FUNCTION(name, symbol, parameters)                                \
  cu.name = (name##_function)dlsym(cuda.driver, symbol);                       \
  if (!cu.name)                                                                \
    return tract_set_error("the CUDA driver (%s) has no %s", path, symbol);
  DRIVER_FUNCTIONS(LOAD_FUNCTION)
#undef LOAD_FUNCTION
  CU_CHECK(Init, 0);
  return TRACT_OK;
}

/* The first device, unless TRACT_CUDA_DEVICE chooses. */
static tract_status choose_device(void) {
  int count = 0;
  CU_CHECK(DeviceGetCount, &count);
  if (count <= 0)
    return tract_set_error("no CUDA device");
  long index = 0;
  const char *chosen = getenv("TRACT_CUDA_DEVICE");
  if (chosen && *chosen) {
    char *end;
    index = strtol(chosen, &end, 10);
    if (*end || index < 0)
      return tract_set_error("TRACT_CUDA_DEVICE=%s is not a device number",
                             chosen);
    if (index >= count)
      return tract_set_error("TRACT_CUDA_DEVICE=%s: no such device (the CUDA "
                             "devices are 0 to %d)",
                             chosen, count - 1);
  }
  CU_CHECK(DeviceGet, &cuda.device, (int)index);
  return TRACT_OK;
}

static tract_status read_attribute(CUdevice_attribute attribute, int *value) {
  CU_CHECK(DeviceGetAttribute, value, attribute, cuda.device);
  return TRACT_OK;
}

/* The device's name, compute capability and launch limits. */
static tract_status read_properties(void) {
  CU_CHECK(DeviceGetName, cuda.name, (int)sizeof(cuda.name), cuda.device);
  cuda.name[sizeof(cuda.name) - 1] = '\0';
  int major, minor;
  if (read_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &major) ||
      read_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &minor) ||
      read_attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                     &cuda.max_threads_per_block))
    return TRACT_ERROR;
  for (int d = 0; d < 3; ++d)
    if (read_attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + d,
                       &cuda.max_blocks[d]))
      return TRACT_ERROR;
  snprintf(cuda.chip, sizeof(cuda.chip), "sm_%d%d", major, minor);
  return TRACT_OK;
}

static void free_buffer(device_buffer *b) {
  if (b->pointer) /* nothing to do about a failure here */
    cu.MemFree(b->pointer);
  memset(b, 0, sizeof(*b));
}

/* Frees everything and forgets it all, as if nothing had been tried. A
 * context that a faulting kernel broke refuses to free what it holds: it
 * goes with the context, once no one retains it. */
static void destroy_all(void) {
  if (cuda.context) {
    if (cu.CtxPushCurrent(cuda.context) == CUDA_SUCCESS) {
      for (int32_t i = 0; i < cuda.num_constants; ++i)
        free_buffer(&cuda.constants[i].device);
      for (int32_t i = 0; i < cuda.pool_size; ++i)
        free_buffer(&cuda.pool[i].device);
      for (int32_t i = 0; i < cuda.num_modules; ++i)
        cu.ModuleUnload(cuda.modules[i].module);
      CUcontext popped;
      cu.CtxPopCurrent(&popped);
    }
    cu.DevicePrimaryCtxRelease(cuda.device);
  }
  if (cuda.driver)
    dlclose(cuda.driver);
  for (int32_t i = 0; i < cuda.num_kernels; ++i)
    free(cuda.kernels[i].entry);
  free(cuda.modules);
  free(cuda.kernels);
  free(cuda.constants);
  free(cuda.pool);
  free(cuda.descriptors);
  free(cuda.parameters);
  free(cuda.order);
  memset(&cuda, 0, sizeof(cuda));
  memset(&cu, 0, sizeof(cu));
}

/* Opens the driver and retains the device's context, once: READY, or
 * FAILED with the reason kept for every later call (and nothing left
 * held). */
static void initialize(void) {
  tract_status status = open_driver();
  if (status == TRACT_OK)
    status = choose_device();
  if (status == TRACT_OK)
    status = read_properties();
  if (status == TRACT_OK) {
    CUresult result = cu.DevicePrimaryCtxRetain(&cuda.context, cuda.device);
    if (result != CUDA_SUCCESS) {
      cuda.context = NULL;
      status = cuda_failed("cuDevicePrimaryCtxRetain", result);
    }
  }
  if (status == TRACT_OK) {
    cuda.state = CUDA_READY;
    return;
  }
  char why[sizeof(cuda.why)];
  snprintf(why, sizeof(why), "%s", tract_last_error());
  destroy_all();
  memcpy(cuda.why, why, sizeof(why));
  cuda.state = CUDA_FAILED;
}

/* TRACT_OK once the device is there; under the lock. */
static tract_status ensure_device(void) {
  if (cuda.state == CUDA_UNTRIED)
    initialize();
  return cuda.state == CUDA_READY ? TRACT_OK : tract_set_error("%s", cuda.why);
}

/* ---- Kernels ---- */

/* Loads the module of this text, with the PTX compiler's complaint in the
 * message when the driver refuses it. */
static tract_status load_module(const char *ptx, CUmodule *module) {
  char log[1024] = "";
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log, (void *)(uintptr_t)sizeof(log)};
  CUresult result = cu.ModuleLoadDataEx(module, ptx, 2, options, values);
  if (result == CUDA_SUCCESS)
    return TRACT_OK;
  cuda_failed("cuModuleLoadDataEx", result);
  log[sizeof(log) - 1] = '\0';
  size_t length = strlen(log);
  while (length > 0 && (log[length - 1] == '\n' || log[length - 1] == ' '))
    log[--length] = '\0';
  return length ? tract_set_error("%s; the PTX compiler says: %s",
                                  tract_last_error(), log)
                : TRACT_ERROR;
}

/* The module of this text, loaded at its first use. */
static tract_status module_for(const char *ptx, int64_t size,
                               CUmodule *module) {
  for (int32_t i = 0; i < cuda.num_modules; ++i) {
    if (cuda.modules[i].ptx == ptx && cuda.modules[i].size == size) {
      *module = cuda.modules[i].module;
      return TRACT_OK;
    }
  }
  ptx_module *modules = grow(cuda.modules, &cuda.modules_capacity,
                             cuda.num_modules + 1, sizeof(ptx_module));
  if (!modules)
    return TRACT_ERROR;
  cuda.modules = modules;
  if (load_module(ptx, module))
    return TRACT_ERROR;
  cuda.modules[cuda.num_modules++] = (ptx_module){ptx, size, *module};
  return TRACT_OK;
}

/* The kernel `entry` of this text: looked up at its first launch, the same
 * one after. NULL with a message on failure. */
static CUfunction function_for(const char *ptx, int64_t size,
                               const char *entry) {
  for (int32_t i = 0; i < cuda.num_kernels; ++i) {
    const kernel *k = &cuda.kernels[i];
    if (k->ptx == ptx && k->size == size && !strcmp(k->entry, entry))
      return k->function;
  }
  kernel *kernels = grow(cuda.kernels, &cuda.kernels_capacity,
                         cuda.num_kernels + 1, sizeof(kernel));
  if (!kernels)
    return NULL;
  cuda.kernels = kernels;
  CUmodule module;
  if (module_for(ptx, size, &module))
    return NULL;
  CUfunction function;
  CUresult result = cu.ModuleGetFunction(&function, module, entry);
  if (result != CUDA_SUCCESS) {
    cuda_failed("cuModuleGetFunction", result);
    return NULL;
  }
  char *name = strdup(entry);
  if (!name) {
    tract_set_error("out of memory in the CUDA runtime");
    return NULL;
  }
  cuda.kernels[cuda.num_kernels++] = (kernel){ptx, size, name, function};
  return function;
}

/* ---- Buffers ---- */

/* A device buffer of `capacity` bytes in *b; on failure, *b is empty and
 * the message says how large it was to be. */
static tract_status allocate(uint64_t capacity, device_buffer *b) {
  memset(b, 0, sizeof(*b));
  CUresult result = cu.MemAlloc(&b->pointer, (size_t)capacity);
  if (result == CUDA_SUCCESS) {
    b->capacity = capacity;
    return TRACT_OK;
  }
  b->pointer = 0;
  cuda_failed("cuMemAlloc", result);
  char context[64];
  snprintf(context, sizeof(context), "a device buffer of %llu bytes",
           (unsigned long long)capacity);
  return explain(context);
}

/* The device copy of constant host data, uploaded at its first use. */
static tract_status constant_for(const void *host, int64_t bytes,
                                 CUdeviceptr *pointer) {
  for (int32_t i = 0; i < cuda.num_constants; ++i) {
    const constant_buffer *c = &cuda.constants[i];
    if (c->host == host && c->bytes == bytes) {
      *pointer = c->device.pointer;
      return TRACT_OK;
    }
  }
  constant_buffer *constants =
      grow(cuda.constants, &cuda.constants_capacity, cuda.num_constants + 1,
           sizeof(constant_buffer));
  if (!constants)
    return TRACT_ERROR;
  cuda.constants = constants;
  device_buffer device;
  if (allocate((uint64_t)bytes, &device))
    return TRACT_ERROR;
  CUresult result = cu.MemcpyHtoD(device.pointer, host, (size_t)bytes);
  if (result != CUDA_SUCCESS) {
    free_buffer(&device);
    return cuda_failed("cuMemcpyHtoD", result);
  }
  cuda.constants[cuda.num_constants++] = (constant_buffer){host, bytes, device};
  *pointer = device.pointer;
  return TRACT_OK;
}

/* The capacity of a pooled buffer for `bytes`: a multiple of an eighth of
 * the largest power of two in it (12.5% more at most) and of 4 KiB, so
 * that sizes that vary a little find the same buffer. */
static uint64_t pool_capacity(int64_t bytes) {
  uint64_t size = (uint64_t)bytes, top = 1;
  while (top <= size / 2)
    top *= 2;
  uint64_t step = top / 8 > 4096 ? top / 8 : 4096;
  return (size + step - 1) / step * step;
}

/* A pooled buffer of at least `bytes`, marked busy: the smallest free one
 * that is large enough, else the smallest free one made again that large
 * (callers ask for the largest first), else a new one. */
static tract_status take_pooled(int64_t bytes, CUdeviceptr *pointer) {
  int32_t fit = -1, smallest = -1;
  for (int32_t i = 0; i < cuda.pool_size; ++i) {
    if (cuda.pool[i].busy)
      continue;
    uint64_t capacity = cuda.pool[i].device.capacity;
    if (capacity >= (uint64_t)bytes &&
        (fit < 0 || capacity < cuda.pool[fit].device.capacity))
      fit = i;
    if (smallest < 0 || capacity < cuda.pool[smallest].device.capacity)
      smallest = i;
  }
  if (fit < 0) {
    if (smallest >= 0) {
      fit = smallest;
      free_buffer(&cuda.pool[fit].device);
    } else {
      pooled_buffer *pool = grow(cuda.pool, &cuda.pool_capacity,
                                 cuda.pool_size + 1, sizeof(pooled_buffer));
      if (!pool)
        return TRACT_ERROR;
      cuda.pool = pool;
      fit = cuda.pool_size++;
      memset(&cuda.pool[fit], 0, sizeof(pooled_buffer));
    }
    /* A failed slot stays, empty, for the next launch to fill. */
    if (allocate(pool_capacity(bytes), &cuda.pool[fit].device))
      return TRACT_ERROR;
  }
  cuda.pool[fit].busy = 1;
  *pointer = cuda.pool[fit].device.pointer;
  return TRACT_OK;
}

/* Fills the descriptor of buffer i: no memory for no bytes, the device
 * copy of a constant, else a pooled buffer, filled when the kernel reads
 * it. */
static tract_status bind_buffer(int32_t i, void *host, int64_t bytes,
                                int32_t flags) {
  memref_descriptor *d = &cuda.descriptors[i];
  *d = (memref_descriptor){.size = bytes, .stride = 1};
  if (bytes == 0)
    return TRACT_OK;
  if (flags & TRACT_GPU_CONSTANT) {
    if (constant_for(host, bytes, &d->allocated))
      return TRACT_ERROR;
  } else {
    if (take_pooled(bytes, &d->allocated))
      return TRACT_ERROR;
    if (flags & TRACT_GPU_READ)
      CU_CHECK(MemcpyHtoD, d->allocated, host, (size_t)bytes);
  }
  d->aligned = d->allocated;
  return TRACT_OK;
}

/* Buffer indices by decreasing size, so that the largest buffers choose
 * first among the pool's. */
static void order_by_size(int32_t n, const int64_t *bytes, int32_t *order) {
  for (int32_t i = 0; i < n; ++i) {
    int32_t j = i;
    for (; j > 0 && bytes[order[j - 1]] < bytes[i]; --j)
      order[j] = order[j - 1];
    order[j] = i;
  }
}

/* The descriptors of the launch's buffers, and the kernel parameters that
 * point at their fields. */
static tract_status bind_buffers(int32_t n, void *const *pointers,
                                 const int64_t *bytes, const int32_t *flags) {
  if (n == 0)
    return TRACT_OK;
  memref_descriptor *descriptors =
      grow(cuda.descriptors, &cuda.descriptors_capacity, n,
           sizeof(memref_descriptor));
  if (!descriptors)
    return TRACT_ERROR;
  cuda.descriptors = descriptors;
  void **parameters = grow(cuda.parameters, &cuda.parameters_capacity,
                           n * PARAMETERS_PER_BUFFER, sizeof(void *));
  if (!parameters)
    return TRACT_ERROR;
  cuda.parameters = parameters;
  int32_t *order = grow(cuda.order, &cuda.order_capacity, n, sizeof(int32_t));
  if (!order)
    return TRACT_ERROR;
  cuda.order = order;
  for (int32_t i = 0; i < n; ++i) {
    memref_descriptor *d = &cuda.descriptors[i];
    void **p = &cuda.parameters[i * PARAMETERS_PER_BUFFER];
    p[0] = &d->allocated;
    p[1] = &d->aligned;
    p[2] = &d->offset;
    p[3] = &d->size;
    p[4] = &d->stride;
  }
  order_by_size(n, bytes, cuda.order);
  for (int32_t k = 0; k < n; ++k) {
    int32_t i = cuda.order[k];
    if (bind_buffer(i, pointers[i], bytes[i], flags[i])) {
      char context[32];
      snprintf(context, sizeof(context), "buffer %d", (int)i);
      return explain(context);
    }
  }
  return TRACT_OK;
}

/* ---- Launches ---- */

/* Refuses what the driver would not take, with the argument at fault. */
static tract_status check_launch(const char *ptx, int64_t size,
                                 const int32_t groups[3], int32_t block_x,
                                 int32_t n, void *const *pointers,
                                 const int64_t *bytes, const int32_t *flags) {
  if (!ptx || size <= 0)
    return tract_set_error("no PTX text or fatbin (%lld bytes)",
                           (long long)size);
  if (ptx[size] != '\0')
    return tract_set_error("the PTX text of %lld bytes does not end with a "
                           "NUL",
                           (long long)size);
  for (int d = 0; d < 3; ++d)
    if (groups[d] < 0 || groups[d] > cuda.max_blocks[d])
      return tract_set_error("%d blocks along %c; the device runs 0 to %d",
                             (int)groups[d], "xyz"[d], cuda.max_blocks[d]);
  if (block_x < 1 || block_x > cuda.max_threads_per_block)
    return tract_set_error("%d threads per block; the device runs 1 to %d",
                           (int)block_x, cuda.max_threads_per_block);
  /* The driver refuses more parameters than a kernel takes; this only
   * keeps their count an int32_t. */
  if (n < 0 || n > INT32_MAX / PARAMETERS_PER_BUFFER)
    return tract_set_error("%d buffers", (int)n);
  return tract_gpu_check_buffers(n, pointers, bytes, flags, -1);
}

/* One launch on the device, in its context; the pooled buffers it takes
 * stay busy. */
static tract_status run_kernel(const char *ptx, int64_t size, const char *entry,
                               const int32_t groups[3], int32_t block_x,
                               int32_t n, void *const *pointers,
                               const int64_t *bytes, const int32_t *flags) {
  if (check_launch(ptx, size, groups, block_x, n, pointers, bytes, flags))
    return TRACT_ERROR;
  /* No block: nothing runs, no buffer changes. */
  if (!groups[0] || !groups[1] || !groups[2])
    return TRACT_OK;
  CUfunction function = function_for(ptx, size, entry);
  if (!function || bind_buffers(n, pointers, bytes, flags))
    return TRACT_ERROR;
  CU_CHECK(LaunchKernel, function, (unsigned)groups[0], (unsigned)groups[1],
           (unsigned)groups[2], (unsigned)block_x, 1, 1, 0, NULL,
           n ? cuda.parameters : NULL, NULL);
  /* Where the kernel's own faults show. */
  CUresult result = cu.CtxSynchronize();
  if (result != CUDA_SUCCESS)
    return cuda_failed("cuCtxSynchronize", result);
  for (int32_t i = 0; i < n; ++i) {
    if ((flags[i] & TRACT_GPU_WRITE) && bytes[i] > 0) {
      result = cu.MemcpyDtoH(pointers[i], cuda.descriptors[i].allocated,
                             (size_t)bytes[i]);
      if (result != CUDA_SUCCESS) {
        cuda_failed("cuMemcpyDtoH", result);
        char context[32];
        snprintf(context, sizeof(context), "buffer %d", (int)i);
        return explain(context);
      }
    }
  }
  return TRACT_OK;
}

/* run_kernel with the device's context current on this thread, the
 * thread's own one current again after. */
static tract_status run_in_context(const char *ptx, int64_t size,
                                   const char *entry, const int32_t groups[3],
                                   int32_t block_x, int32_t n,
                                   void *const *pointers, const int64_t *bytes,
                                   const int32_t *flags) {
  CU_CHECK(CtxPushCurrent, cuda.context);
  tract_status status =
      run_kernel(ptx, size, entry, groups, block_x, n, pointers, bytes, flags);
  CUcontext popped;
  CUresult result = cu.CtxPopCurrent(&popped);
  if (status == TRACT_OK && result != CUDA_SUCCESS)
    return cuda_failed("cuCtxPopCurrent", result);
  return status;
}

int32_t tract_cuda_launch(const char *ptx, int64_t size, const char *entry,
                          int32_t groups_x, int32_t groups_y, int32_t groups_z,
                          int32_t block_x, int32_t num_buffers,
                          void *const *pointers, const int64_t *bytes,
                          const int32_t *flags) {
  if (!entry)
    return tract_set_error("CUDA kernel launched without an entry point");
  const int32_t groups[3] = {groups_x, groups_y, groups_z};
  pthread_mutex_lock(&cuda_lock);
  tract_status status = ensure_device();
  if (status == TRACT_OK) {
    status = run_in_context(ptx, size, entry, groups, block_x, num_buffers,
                            pointers, bytes, flags);
    for (int32_t i = 0; i < cuda.pool_size; ++i)
      cuda.pool[i].busy = 0;
  }
  if (status != TRACT_OK) {
    char context[256];
    snprintf(context, sizeof(context), "CUDA kernel '%s'", entry);
    explain(context);
  }
  pthread_mutex_unlock(&cuda_lock);
  if (status == TRACT_OK)
    tract_profile_count_launch();
  return status;
}

/* ---- Queries ---- */

int32_t tract_cuda_available(char *why, size_t size) {
  pthread_mutex_lock(&cuda_lock);
  if (cuda.state == CUDA_UNTRIED)
    initialize();
  int32_t ready = cuda.state == CUDA_READY;
  if (why && size)
    snprintf(why, size, "%s", ready ? "" : cuda.why);
  pthread_mutex_unlock(&cuda_lock);
  return ready;
}

const char *tract_cuda_device_name(void) {
  pthread_mutex_lock(&cuda_lock);
  if (cuda.state == CUDA_UNTRIED)
    initialize();
  const char *name = cuda.name; /* "" unless READY */
  pthread_mutex_unlock(&cuda_lock);
  return name;
}

const char *tract_cuda_device_chip(void) {
  pthread_mutex_lock(&cuda_lock);
  if (cuda.state == CUDA_UNTRIED)
    initialize();
  const char *chip = cuda.chip; /* "" unless READY */
  pthread_mutex_unlock(&cuda_lock);
  return chip;
}

void tract_cuda_release(void) {
  pthread_mutex_lock(&cuda_lock);
  destroy_all();
  pthread_mutex_unlock(&cuda_lock);
}
