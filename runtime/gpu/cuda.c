/* The CUDA backend of the GPU runtime (tract_cuda.h), on the core that the
 * GPU runtimes share (core.h): what talks to the CUDA driver.
 *
 * The driver API is reached through a table of function pointers looked up
 * in libcuda.so.1 (opened with dlopen), and the few types and constants it
 * uses are declared here: programs link nothing of CUDA, and the runtime
 * builds without CUDA's headers. One device and its primary context, made
 * current around each launch (and the caller's own context current again
 * after); one module per PTX text, loaded at the first launch of one of its
 * kernels.
 *
 * Launches join the core's open batch (tract_cuda_record), each kernel
 * launched at once on the context's stream, which runs them in order; the
 * batch's run waits for the context, and the core copies back what the
 * kernels wrote. tract_cuda_launch is a batch of one launch. */

/* dlopen's RTLD_NODELETE under -std=c11 too. */
#define _GNU_SOURCE
#include "runtime/gpu/core.h"
#include "runtime/tract_cuda.h"
#include "runtime/tract_runtime.h"

#include <dlfcn.h>
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

/* ---- The backend's state ---- */

typedef struct cuda_buffer {
  tract_gpu_buffer base;
  CUdeviceptr pointer;
} cuda_buffer;

/* A PTX module, loaded at the first launch of one of its kernels. */
typedef struct ptx_module {
  const char *ptx;
  int64_t size;
  CUmodule module;
} ptx_module;

/* What a kernel gets for one buffer: the fields of MLIR's descriptor of a
 * 1-D memref, each a parameter of its own. */
typedef struct memref_descriptor {
  CUdeviceptr allocated, aligned;
  int64_t offset, size, stride;
} memref_descriptor;

enum { PARAMETERS_PER_BUFFER = 5 };

/* Under the core's lock. */
static struct {
  void *driver;
  CUdevice device;
  CUcontext context; /* the device's primary context, retained */
  int current;       /* and current on this thread */
  char chip[16];
  ptx_module *modules;
  int32_t num_modules, modules_capacity;
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
  TRACT_GPU_CHECK(CUresult, CUDA_SUCCESS, cuda_failed, "cu" #name,             \
                  cu.name(__VA_ARGS__))

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
  int32_t chosen;
  if (tract_gpu_choose_device("TRACT_CUDA_DEVICE", "CUDA", count, &chosen))
    return TRACT_ERROR;
  CU_CHECK(DeviceGet, &cuda.device, chosen >= 0 ? chosen : 0);
  return TRACT_OK;
}

static tract_status read_attribute(CUdevice_attribute attribute, int *value) {
  CU_CHECK(DeviceGetAttribute, value, attribute, cuda.device);
  return TRACT_OK;
}

/* The device's name, compute capability and launch limits. */
static tract_status read_properties(tract_gpu_core *core) {
  CU_CHECK(DeviceGetName, core->name, (int)sizeof(core->name), cuda.device);
  core->name[sizeof(core->name) - 1] = '\0';
  int major, minor, max_block, max_groups[3];
  if (read_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &major) ||
      read_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &minor) ||
      read_attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &max_block))
    return TRACT_ERROR;
  for (int d = 0; d < 3; ++d) {
    if (read_attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + d, &max_groups[d]))
      return TRACT_ERROR;
    core->limits.max_groups[d] = max_groups[d];
  }
  core->limits.max_block = max_block;
  /* The driver refuses more parameters than a kernel takes; this only
   * keeps their count an int32_t. */
  core->limits.max_buffers = INT32_MAX / PARAMETERS_PER_BUFFER;
  core->limits.max_buffer_bytes = -1;
  snprintf(cuda.chip, sizeof(cuda.chip), "sm_%d%d", major, minor);
  return TRACT_OK;
}

/* Makes the device's context current on this thread. */
static tract_status enter(void) {
  CU_CHECK(CtxPushCurrent, cuda.context);
  cuda.current = 1;
  return TRACT_OK;
}

/* The thread's own context current again. */
static tract_status leave(tract_status status) {
  CUcontext popped;
  CUresult result = cu.CtxPopCurrent(&popped);
  cuda.current = 0;
  if (status == TRACT_OK && result != CUDA_SUCCESS)
    return cuda_failed("cuCtxPopCurrent", result);
  return status;
}

/* Opens the driver and retains the device's primary context. */
static tract_status start(tract_gpu_core *core) {
  if (open_driver() || choose_device() || read_properties(core))
    return TRACT_ERROR;
  CUresult result = cu.DevicePrimaryCtxRetain(&cuda.context, cuda.device);
  if (result != CUDA_SUCCESS) {
    cuda.context = NULL;
    return cuda_failed("cuDevicePrimaryCtxRetain", result);
  }
  return TRACT_OK;
}

/* Frees the device buffers and modules in the context, releases it and
 * closes the driver. A context that a faulting kernel broke refuses to be
 * made current: what it holds goes with it, once no one retains it. */
static void stop(tract_gpu_core *core) {
  cuda.current =
      cuda.context && cu.CtxPushCurrent(cuda.context) == CUDA_SUCCESS;
  tract_gpu_free_objects(core);
  if (cuda.current) {
    for (int32_t i = 0; i < cuda.num_modules; ++i)
      cu.ModuleUnload(cuda.modules[i].module);
    CUcontext popped;
    cu.CtxPopCurrent(&popped);
  }
  if (cuda.context)
    cu.DevicePrimaryCtxRelease(cuda.device);
  if (cuda.driver)
    dlclose(cuda.driver);
  free(cuda.modules);
  memset(&cuda, 0, sizeof(cuda));
  memset(&cu, 0, sizeof(cu));
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
  ptx_module *modules =
      tract_gpu_grow(cuda.modules, &cuda.modules_capacity, cuda.num_modules + 1,
                     sizeof(ptx_module));
  if (!modules)
    return TRACT_ERROR;
  cuda.modules = modules;
  if (load_module(ptx, module))
    return TRACT_ERROR;
  cuda.modules[cuda.num_modules++] = (ptx_module){ptx, size, *module};
  return TRACT_OK;
}

/* The kernel `entry` of the launch's text, looked up in its module. */
static tract_status make_kernel(const tract_gpu_launch_args *launch,
                                void **kernel) {
  CUmodule module;
  if (module_for(launch->code, launch->size, &module))
    return TRACT_ERROR;
  CUfunction function;
  CU_CHECK(ModuleGetFunction, &function, module, launch->entry);
  *kernel = function;
  return TRACT_OK;
}

static tract_status check_ptx(const void *ptx, int64_t size) {
  return tract_gpu_check_text(ptx, size, "PTX text or fatbin");
}

/* ---- Buffers ---- */

static tract_status allocate_buffer(tract_gpu_buffer *buffer,
                                    uint64_t capacity) {
  CU_CHECK(MemAlloc, &((cuda_buffer *)buffer)->pointer, (size_t)capacity);
  return TRACT_OK;
}

/* Device memory is freed in the context only (see stop). */
static void free_buffer(tract_gpu_buffer *buffer) {
  CUdeviceptr pointer = ((cuda_buffer *)buffer)->pointer;
  if (cuda.current && pointer) /* nothing to do about a failure here */
    cu.MemFree(pointer);
}

static tract_status upload(tract_gpu_buffer *buffer, uint64_t offset,
                           const void *host, int64_t bytes) {
  CU_CHECK(MemcpyHtoD, ((cuda_buffer *)buffer)->pointer + offset, host,
           (size_t)bytes);
  return TRACT_OK;
}

static tract_status download(void *host, tract_gpu_buffer *buffer,
                             int64_t bytes) {
  CU_CHECK(MemcpyDtoH, host, ((cuda_buffer *)buffer)->pointer, (size_t)bytes);
  return TRACT_OK;
}

/* ---- Launches ---- */

/* Launches the kernel with, buffer after buffer, the fields of the
 * descriptor of a 1-D memref of bytes on its device buffer (none for zero
 * bytes). `bindings` holds the parameters, then the descriptors they point
 * into: cuLaunchKernel copies them before it returns. The stream orders it
 * after the batch's earlier launches and copies. */
static tract_status dispatch(void *kernel, const tract_gpu_launch_args *launch,
                             tract_gpu_buffer *const *bound, void *bindings,
                             int first) {
  (void)first;
  int32_t n = launch->num_buffers;
  void **parameters = bindings;
  memref_descriptor *descriptors =
      (memref_descriptor *)(parameters + n * PARAMETERS_PER_BUFFER);
  for (int32_t i = 0; i < n; ++i) {
    memref_descriptor *d = &descriptors[i];
    CUdeviceptr pointer = bound[i] ? ((cuda_buffer *)bound[i])->pointer : 0;
    *d = (memref_descriptor){pointer, pointer, 0, launch->bytes[i], 1};
    void **p = &parameters[i * PARAMETERS_PER_BUFFER];
    p[0] = &d->allocated;
    p[1] = &d->aligned;
    p[2] = &d->offset;
    p[3] = &d->size;
    p[4] = &d->stride;
  }
  CU_CHECK(LaunchKernel, (CUfunction)kernel, (unsigned)launch->groups[0],
           (unsigned)launch->groups[1], (unsigned)launch->groups[2],
           (unsigned)launch->block_x, 1, 1, 0, NULL, n ? parameters : NULL,
           NULL);
  return TRACT_OK;
}

/* Waits for the kernel: where its own faults show. */
static tract_status synchronize(void) {
  CU_CHECK(CtxSynchronize);
  return TRACT_OK;
}

static const tract_gpu_backend cuda_backend = {
    .names = {.api = "CUDA", .groups = "blocks", .block = "block"},
    .device = {.start = start, .stop = stop, .enter = enter, .leave = leave},
    .kernels = {.check = check_ptx, .make = make_kernel},
    .buffers = {.size = sizeof(cuda_buffer),
                .allocate = allocate_buffer,
                .destroy = free_buffer,
                .upload = upload,
                .download = download},
    .batch = {.binding_bytes = PARAMETERS_PER_BUFFER * sizeof(void *) +
                               sizeof(memref_descriptor),
              .dispatch = dispatch,
              .run = synchronize},
};

static tract_gpu_core runtime = TRACT_GPU_CORE(cuda_backend);

/* ---- Entry points ---- */

int32_t tract_cuda_launch(const char *ptx, int64_t size, const char *entry,
                          int32_t groups_x, int32_t groups_y, int32_t groups_z,
                          int32_t block_x, int32_t num_buffers,
                          void *const *pointers, const int64_t *bytes,
                          const int32_t *flags) {
  return tract_gpu_core_launch(&runtime, ptx, size, entry, groups_x, groups_y,
                               groups_z, block_x, num_buffers, pointers, bytes,
                               flags, /*run=*/1);
}

int32_t tract_cuda_record(const char *ptx, int64_t size, const char *entry,
                          int32_t groups_x, int32_t groups_y, int32_t groups_z,
                          int32_t block_x, int32_t num_buffers,
                          void *const *pointers, const int64_t *bytes,
                          const int32_t *flags) {
  /* TRACT_CUDA_SYNC_EACH=1 runs each launch at once, as tract_cuda_launch:
   * to tell a batch's fault from a kernel's, and to measure what batches
   * save. */
  static int each = -1;
  if (each < 0) {
    const char *value = getenv("TRACT_CUDA_SYNC_EACH");
    each = value && !strcmp(value, "1");
  }
  return tract_gpu_core_launch(&runtime, ptx, size, entry, groups_x, groups_y,
                               groups_z, block_x, num_buffers, pointers, bytes,
                               flags, /*run=*/each);
}

int32_t tract_cuda_sync(void) { return tract_gpu_core_sync(&runtime); }

void tract_cuda_discard(const void *host, int64_t bytes) {
  tract_gpu_core_discard(&runtime, host, bytes);
}

int32_t tract_cuda_available(char *why, size_t size) {
  return tract_gpu_core_available(&runtime, why, size);
}

const char *tract_cuda_device_name(void) {
  return tract_gpu_core_device_name(&runtime);
}

const char *tract_cuda_device_chip(void) {
  tract_gpu_core_lock(&runtime);
  const char *chip = cuda.chip; /* "" unless the device is there */
  tract_gpu_core_unlock(&runtime);
  return chip;
}

void tract_cuda_release(void) { tract_gpu_core_release(&runtime); }
