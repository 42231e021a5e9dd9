/* A fake CUDA driver for the CUDA runtime's tests (CudaTest.cpp), built as
 * fake-cuda/libcuda.so.1 in the build folder and opened by the runtime
 * through TRACT_CUDA_LIBRARY. It has the driver entry points that
 * runtime/gpu/cuda.c calls, working on the host: device memory is
 * malloc'd, copies are memcpy, a module is its PTX text, and its kernels
 * are C functions found by entry name. It is as strict as the driver where
 * that catches the runtime's mistakes: cuInit first, a current context for
 * memory, modules and launches, copies inside the buffers allocated. The
 * runtime calls it under its mutex, so it has no lock of its own. */
#include "test/unit/fake_cuda.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_FAILED = 719,
};

/* The CUjit_option values the runtime gives. */
enum { CU_JIT_ERROR_LOG_BUFFER = 5, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6 };

fake_cuda_state fake_cuda;

static const struct {
  CUresult result;
  const char *name, *text;
} errors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED",
     "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE",
     "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
     "invalid device ordinal"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT",
     "invalid device context"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX",
     "a PTX JIT compilation failed"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE",
     "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED",
     "unspecified launch failure"},
};

CUresult cuGetErrorName(CUresult result, const char **name) {
  for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); ++i) {
    if (errors[i].result == result) {
      *name = errors[i].name;
      return CUDA_SUCCESS;
    }
  }
  *name = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult result, const char **text) {
  for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); ++i) {
    if (errors[i].result == result) {
      *text = errors[i].text;
      return CUDA_SUCCESS;
    }
  }
  *text = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

/* ---- Devices and the primary context ---- */

static int initialized;

/* TRACT_FAKE_CUDA_DEVICES=N devices, 1 when unset. */
static int device_count(void) {
  const char *count = getenv("TRACT_FAKE_CUDA_DEVICES");
  return count && *count ? atoi(count) : 1;
}

CUresult cuInit(unsigned flags) {
  if (flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  initialized = 1;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count) {
  if (!initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  *count = device_count();
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  if (!initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (ordinal < 0 || ordinal >= device_count())
    return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

static CUresult check_device(CUdevice device) {
  if (!initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  return device >= 0 && device < device_count() ? CUDA_SUCCESS
                                                : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuDeviceGetName(char *name, int size, CUdevice device) {
  CUresult result = check_device(device);
  if (result != CUDA_SUCCESS)
    return result;
  if (!name || size <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  snprintf(name, (size_t)size, "Fake CUDA device %d", device);
  return CUDA_SUCCESS;
}

/* An sm_86 with the usual launch limits. */
CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice device) {
  CUresult result = check_device(device);
  if (result != CUDA_SUCCESS)
    return result;
  switch (attribute) {
  case 1: /* MAX_THREADS_PER_BLOCK */
    *value = 1024;
    return CUDA_SUCCESS;
  case 5: /* MAX_GRID_DIM_X */
    *value = INT32_MAX;
    return CUDA_SUCCESS;
  case 6: /* MAX_GRID_DIM_Y */
  case 7: /* MAX_GRID_DIM_Z */
    *value = 65535;
    return CUDA_SUCCESS;
  case 75: /* COMPUTE_CAPABILITY_MAJOR */
    *value = 8;
    return CUDA_SUCCESS;
  case 76: /* COMPUTE_CAPABILITY_MINOR */
    *value = 6;
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

/* One primary context (for whichever device), its handle this address. */
static int primary_context;

/* The contexts this thread pushed, the current one last. */
enum { MAX_DEPTH = 8 };
static _Thread_local CUcontext pushed[MAX_DEPTH];
static _Thread_local int depth;

int fake_cuda_context_depth(void) { return depth; }

CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
  CUresult result = check_device(device);
  if (result != CUDA_SUCCESS)
    return result;
  ++fake_cuda.retained;
  *context = (CUcontext)&primary_context;
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) {
  CUresult result = check_device(device);
  if (result != CUDA_SUCCESS)
    return result;
  if (fake_cuda.retained == 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  --fake_cuda.retained;
  return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent_v2(CUcontext context) {
  if (context != (CUcontext)&primary_context || fake_cuda.retained == 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (depth == MAX_DEPTH)
    return CUDA_ERROR_INVALID_VALUE;
  pushed[depth++] = context;
  return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext *context) {
  if (depth == 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  --depth;
  if (context)
    *context = pushed[depth];
  return CUDA_SUCCESS;
}

/* What memory, module and launch calls need, as on the driver. */
static CUresult check_context(void) {
  if (!initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (depth == 0 || pushed[depth - 1] != (CUcontext)&primary_context ||
      fake_cuda.retained == 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void) { return check_context(); }

/* ---- Memory ---- */

typedef struct allocation {
  char *bytes;
  size_t size;
} allocation;

static allocation *allocations;
static size_t num_allocations, allocations_capacity;

/* The allocation that holds `size` bytes from `pointer`, or NULL. */
static allocation *holding(CUdeviceptr pointer, size_t size) {
  for (size_t i = 0; i < num_allocations; ++i) {
    uintptr_t start = (uintptr_t)allocations[i].bytes;
    if (pointer >= start && pointer - start <= allocations[i].size &&
        size <= allocations[i].size - (pointer - start))
      return &allocations[i];
  }
  return NULL;
}

CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t size) {
  CUresult result = check_context();
  if (result != CUDA_SUCCESS)
    return result;
  if (size == 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (fake_cuda.memory_limit && size > (uint64_t)fake_cuda.memory_limit)
    return CUDA_ERROR_OUT_OF_MEMORY;
  if (num_allocations == allocations_capacity) {
    size_t grown = allocations_capacity ? 2 * allocations_capacity : 16;
    allocation *moved = realloc(allocations, grown * sizeof(allocation));
    if (!moved)
      return CUDA_ERROR_OUT_OF_MEMORY;
    allocations = moved;
    allocations_capacity = grown;
  }
  char *bytes = malloc(size);
  if (!bytes)
    return CUDA_ERROR_OUT_OF_MEMORY;
  allocations[num_allocations++] = (allocation){bytes, size};
  ++fake_cuda.live_buffers;
  *pointer = (CUdeviceptr)(uintptr_t)bytes;
  return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr pointer) {
  CUresult result = check_context();
  if (result != CUDA_SUCCESS)
    return result;
  for (size_t i = 0; i < num_allocations; ++i) {
    if ((CUdeviceptr)(uintptr_t)allocations[i].bytes == pointer) {
      free(allocations[i].bytes);
      allocations[i] = allocations[--num_allocations];
      --fake_cuda.live_buffers;
      if (num_allocations == 0) { /* all of it back, for leak checkers */
        free(allocations);
        allocations = NULL;
        allocations_capacity = 0;
      }
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr device, const void *host, size_t size) {
  CUresult result = check_context();
  if (result != CUDA_SUCCESS)
    return result;
  if (!holding(device, size) || !host)
    return CUDA_ERROR_INVALID_VALUE;
  memcpy((void *)(uintptr_t)device, host, size);
  ++fake_cuda.host_to_device;
  return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoH_v2(void *host, CUdeviceptr device, size_t size) {
  CUresult result = check_context();
  if (result != CUDA_SUCCESS)
    return result;
  if (!holding(device, size) || !host)
    return CUDA_ERROR_INVALID_VALUE;
  memcpy(host, (const void *)(uintptr_t)device, size);
  ++fake_cuda.device_to_host;
  return CUDA_SUCCESS;
}

/* ---- Kernels ---- */

/* A kernel: gets the grid, the block size and the parameters as
 * cuLaunchKernel does. */
typedef CUresult (*kernel_body)(const unsigned grid[3], unsigned block,
                                void **parameters);

/* One buffer's memref descriptor, as the kernel reads it. */
typedef struct memref {
  char *data;
  int64_t bytes;
} memref;

static CUresult complain(const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(fake_cuda.complaint, sizeof(fake_cuda.complaint), format, args);
  va_end(args);
  return CUDA_ERROR_ILLEGAL_ADDRESS;
}

/* Buffer `index` from its five parameters: allocated and aligned pointers
 * (the same), offset 0, size in bytes (inside the allocation), stride 1. */
static CUresult read_memref(void **parameters, int index, memref *out) {
  void **fields = parameters + 5 * index;
  CUdeviceptr allocated, aligned;
  int64_t offset, size, stride;
  memcpy(&allocated, fields[0], sizeof(allocated));
  memcpy(&aligned, fields[1], sizeof(aligned));
  memcpy(&offset, fields[2], sizeof(offset));
  memcpy(&size, fields[3], sizeof(size));
  memcpy(&stride, fields[4], sizeof(stride));
  if (allocated != aligned)
    return complain("buffer %d: allocated %#llx, aligned %#llx", index,
                    allocated, aligned);
  if (offset != 0 || stride != 1)
    return complain("buffer %d: offset %lld, stride %lld", index,
                    (long long)offset, (long long)stride);
  if (size < 0 || (size > 0 && !holding(aligned, (size_t)size)))
    return complain("buffer %d: %lld bytes at %#llx, not allocated", index,
                    (long long)size, aligned);
  *out = (memref){(char *)(uintptr_t)aligned, size};
  return CUDA_SUCCESS;
}

/* y[i] = 2 * a[i] + b[i] for i < n, one thread each: buffers a, b, y of
 * floats and n, one uint32 (the Vulkan tests' scale_add). */
static CUresult scale_add(const unsigned grid[3], unsigned block,
                          void **parameters) {
  memref buffers[4];
  for (int i = 0; i < 4; ++i) {
    CUresult result = read_memref(parameters, i, &buffers[i]);
    if (result != CUDA_SUCCESS)
      return result;
  }
  uint32_t n = 0;
  if (buffers[3].bytes >= (int64_t)sizeof(n))
    memcpy(&n, buffers[3].data, sizeof(n));
  else if (buffers[3].bytes != 0)
    return complain("n: %lld bytes", (long long)buffers[3].bytes);
  for (int i = 0; i < 3; ++i)
    if (buffers[i].bytes < (int64_t)n * (int64_t)sizeof(float))
      return complain("buffer %d: %lld bytes for %u floats", i,
                      (long long)buffers[i].bytes, n);
  uint64_t threads = (uint64_t)grid[0] * grid[1] * grid[2] * block;
  for (uint64_t i = 0; i < threads && i < n; ++i) {
    float a, b, y;
    memcpy(&a, buffers[0].data + i * sizeof(float), sizeof(float));
    memcpy(&b, buffers[1].data + i * sizeof(float), sizeof(float));
    y = a * 2.0f + b;
    memcpy(buffers[2].data + i * sizeof(float), &y, sizeof(float));
  }
  return CUDA_SUCCESS;
}

/* The kernels there are, by entry name. "fails" never runs: its launch
 * fails as a kernel that faulted would. */
static struct kernel {
  const char *name;
  kernel_body body;
} kernels[] = {
    {"scale_add", scale_add},
    {"fails", NULL},
};

/* A module: a copy of its text. */
typedef struct module {
  char *ptx;
} module;

/* The text must start as PTX does; when it does not, the error log says
 * so, as ptxas would. */
CUresult cuModuleLoadDataEx(CUmodule *loaded, const void *image,
                            unsigned num_options, int *options, void **values) {
  CUresult result = check_context();
  if (result != CUDA_SUCCESS)
    return result;
  const char *ptx = image;
  if (!ptx)
    return CUDA_ERROR_INVALID_VALUE;
  if (strncmp(ptx, ".version", strlen(".version")) != 0) {
    char *log = NULL;
    size_t size = 0;
    for (unsigned i = 0; i < num_options; ++i) {
      if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
        log = values[i];
      else if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
        size = (size_t)(uintptr_t)values[i];
    }
    if (log && size)
      snprintf(log, size,
               "ptxas application ptx input, line 1; fatal   : Parsing "
               "error near '%.8s': syntax error\n",
               ptx);
    return CUDA_ERROR_INVALID_PTX;
  }
  module *made = malloc(sizeof(module));
  if (!made)
    return CUDA_ERROR_OUT_OF_MEMORY;
  made->ptx = malloc(strlen(ptx) + 1);
  if (!made->ptx) {
    free(made);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  strcpy(made->ptx, ptx);
  ++fake_cuda.live_modules;
  ++fake_cuda.modules_loaded;
  *loaded = (CUmodule)made;
  return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule loaded) {
  CUresult result = check_context();
  if (result != CUDA_SUCCESS)
    return result;
  if (!loaded)
    return CUDA_ERROR_INVALID_HANDLE;
  module *m = (module *)loaded;
  free(m->ptx);
  free(m);
  --fake_cuda.live_modules;
  return CUDA_SUCCESS;
}

/* A kernel of ours that the module's text declares (".entry name("). */
CUresult cuModuleGetFunction(CUfunction *function, CUmodule loaded,
                             const char *name) {
  CUresult result = check_context();
  if (result != CUDA_SUCCESS)
    return result;
  if (!loaded || !name)
    return CUDA_ERROR_INVALID_HANDLE;
  char declaration[128];
  snprintf(declaration, sizeof(declaration), ".entry %s(", name);
  if (!strstr(((module *)loaded)->ptx, declaration))
    return CUDA_ERROR_NOT_FOUND;
  for (size_t i = 0; i < sizeof(kernels) / sizeof(kernels[0]); ++i) {
    if (!strcmp(kernels[i].name, name)) {
      *function = (CUfunction)&kernels[i];
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_NOT_FOUND;
}

CUresult cuLaunchKernel(CUfunction function, unsigned grid_x, unsigned grid_y,
                        unsigned grid_z, unsigned block_x, unsigned block_y,
                        unsigned block_z, unsigned shared_bytes,
                        CUstream stream, void **parameters, void **extra) {
  CUresult result = check_context();
  if (result != CUDA_SUCCESS)
    return result;
  if (!function)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!grid_x || !grid_y || !grid_z || !block_x || block_y != 1 ||
      block_z != 1 || block_x > 1024 || shared_bytes || stream || extra)
    return CUDA_ERROR_INVALID_VALUE;
  const struct kernel *k = (const struct kernel *)function;
  if (!k->body)
    return CUDA_ERROR_LAUNCH_FAILED;
  fake_cuda.complaint[0] = '\0';
  const unsigned grid[3] = {grid_x, grid_y, grid_z};
  result = k->body(grid, block_x, parameters);
  if (result == CUDA_SUCCESS)
    ++fake_cuda.launches;
  return result;
}
