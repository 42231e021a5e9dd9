/* The fake CUDA driver of the CUDA runtime's tests (fake_cuda.c): what it
 * counts, for CudaTest.cpp to look at. The test finds these two symbols
 * with dlsym in the library the runtime opened (TRACT_CUDA_LIBRARY). */
#ifndef TRACT_TEST_UNIT_FAKE_CUDA_H
#define TRACT_TEST_UNIT_FAKE_CUDA_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fake_cuda_state {
  /* Counted since the library was loaded; tests compare before and after. */
  int64_t host_to_device; /* cuMemcpyHtoD calls */
  int64_t device_to_host; /* cuMemcpyDtoH calls */
  int64_t modules_loaded; /* cuModuleLoadDataEx calls that succeeded */
  int64_t launches;       /* kernels run */
  /* What is held now: zero again once the runtime has released it all. */
  int64_t live_buffers; /* cuMemAlloc'd, not freed */
  int64_t live_modules; /* loaded, not unloaded */
  int64_t retained;     /* primary context retains, not released */
  /* Set by the test: cuMemAlloc of more bytes fails (0: no limit). */
  int64_t memory_limit;
  /* What the last kernel found wrong with its parameters, or "". */
  char complaint[256];
} fake_cuda_state;

/* The fake's state, exported as the symbol "fake_cuda". */
extern fake_cuda_state fake_cuda;

/* How many contexts the calling thread has pushed and not popped. */
int fake_cuda_context_depth(void);

#ifdef __cplusplus
}
#endif

#endif /* TRACT_TEST_UNIT_FAKE_CUDA_H */
