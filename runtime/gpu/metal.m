/* The Metal backend of the GPU runtime (tract_metal.h), on the core that
 * the GPU runtimes share (core.h): what talks to Metal. MSL compiled once
 * per kernel, buffers in shared storage (mapped, so the core copies to and
 * from them), each launch a batch of its own in one command buffer, waited
 * for.
 *
 * Objective-C with ARC (-fobjc-arc), macOS 11 or later; built on macOS only
 * (runtime/CMakeLists.txt). The core keeps Metal's objects as pointers,
 * which hold a reference of their own (CFBridgingRetain) until it frees
 * them. */
#import <Foundation/Foundation.h>
#import <Metal/Metal.h>

#include "runtime/gpu/core.h"
#include "runtime/tract_metal.h"
#include "runtime/tract_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !__has_feature(objc_arc)
#error "gpu/metal.m is built with -fobjc-arc"
#endif

/* Metal's buffer argument table has 31 entries. */
enum { MAX_BUFFERS = 31 };

typedef struct metal_buffer {
  tract_gpu_buffer base;
  void *buffer; /* an id<MTLBuffer> */
} metal_buffer;

/* Under the core's lock. */
static id<MTLDevice> device;
static id<MTLCommandQueue> queue;
static id<MTLCommandBuffer> commands; /* of the launch in progress */

/* ---- The device ---- */

/* The system's default device, unless TRACT_METAL_DEVICE chooses, and its
 * command queue. */
static tract_status start(tract_gpu_core *core) {
  NSArray<id<MTLDevice>> *all = MTLCopyAllDevices();
  int32_t chosen;
  if (tract_gpu_choose_device("TRACT_METAL_DEVICE", "Metal", (int64_t)all.count,
                              &chosen))
    return TRACT_ERROR;
  device =
      chosen >= 0 ? all[(NSUInteger)chosen] : MTLCreateSystemDefaultDevice();
  if (!device)
    return tract_set_error("no Metal device");
  queue = [device newCommandQueue];
  if (!queue)
    return tract_set_error("cannot make a command queue on the Metal "
                           "device %s",
                           device.name.UTF8String);
  snprintf(core->name, sizeof(core->name), "%s", device.name.UTF8String);
  /* Metal states no grid or threadgroup limit ahead of a pipeline. */
  core->limits = (tract_gpu_limits){.max_groups = {-1, -1, -1},
                                    .max_block = -1,
                                    .max_buffers = MAX_BUFFERS,
                                    .max_buffer_bytes = -1};
  return TRACT_OK;
}

static void stop(tract_gpu_core *core) {
  tract_gpu_free_objects(core);
  commands = nil;
  queue = nil;
  device = nil;
}

/* ---- Kernels ---- */

/* The pipeline of `entry` in the MSL `source`; nil with the compiler's log
 * as the error. */
static id<MTLComputePipelineState> compile_pipeline(const char *source,
                                                    const char *entry) {
  NSString *name = [NSString stringWithUTF8String:entry];
  if (!name) {
    tract_set_error("the kernel's name is not UTF-8");
    return nil;
  }
  NSString *text = [NSString stringWithUTF8String:source];
  if (!text) {
    tract_set_error("the MSL source is not UTF-8");
    return nil;
  }
  MTLCompileOptions *options = [MTLCompileOptions new];
  options.languageVersion = MTLLanguageVersion2_3;
  /* IEEE arithmetic, as the CPU's: NaNs, infinities and exact division
   * where the kernels (reductions, softmax) rely on them. */
  options.fastMathEnabled = NO;
  NSError *error = nil;
  id<MTLLibrary> library = [device newLibraryWithSource:text
                                                options:options
                                                  error:&error];
  if (!library) {
    tract_set_error("the MSL does not compile: %s",
                    error.localizedDescription.UTF8String);
    return nil;
  }
  id<MTLFunction> function = [library newFunctionWithName:name];
  if (!function) {
    tract_set_error("the MSL has no kernel function '%s'", entry);
    return nil;
  }
  id<MTLComputePipelineState> pipeline =
      [device newComputePipelineStateWithFunction:function error:&error];
  if (!pipeline) {
    tract_set_error("no pipeline: %s", error.localizedDescription.UTF8String);
    return nil;
  }
  return pipeline;
}

static tract_status make_kernel(const tract_gpu_launch_args *launch,
                                void **kernel) {
  id<MTLComputePipelineState> pipeline =
      compile_pipeline(launch->code, launch->entry);
  if (!pipeline)
    return TRACT_ERROR;
  *kernel = (void *)CFBridgingRetain(pipeline);
  return TRACT_OK;
}

static void free_kernel(void *kernel) { CFBridgingRelease(kernel); }

static int32_t kernel_max_block(void *kernel) {
  id<MTLComputePipelineState> pipeline =
      (__bridge id<MTLComputePipelineState>)kernel;
  NSUInteger most = pipeline.maxTotalThreadsPerThreadgroup;
  return most > INT32_MAX ? INT32_MAX : (int32_t)most;
}

static tract_status check_msl(const void *msl, int64_t size) {
  return tract_gpu_check_text(msl, size, "MSL source");
}

/* ---- Buffers ---- */

static tract_status allocate_buffer(tract_gpu_buffer *buffer,
                                    uint64_t capacity) {
  id<MTLBuffer> made =
      [device newBufferWithLength:(NSUInteger)capacity
                          options:MTLResourceStorageModeShared];
  if (!made)
    return tract_set_error("the Metal device has no memory for it");
  buffer->mapped = made.contents;
  ((metal_buffer *)buffer)->buffer = (void *)CFBridgingRetain(made);
  return TRACT_OK;
}

static void free_buffer(tract_gpu_buffer *buffer) {
  CFBridgingRelease(((metal_buffer *)buffer)->buffer);
}

/* ---- Launches ---- */

/* Encodes the kernel on the bound buffers, at [[buffer(i)]], into a
 * command buffer of its own. */
static tract_status dispatch(void *kernel, const tract_gpu_launch_args *launch,
                             tract_gpu_buffer *const *bound, void *bindings,
                             int first) {
  (void)bindings;
  (void)first;
  commands = [queue commandBuffer];
  id<MTLComputeCommandEncoder> encoder = [commands computeCommandEncoder];
  if (!commands || !encoder)
    return tract_set_error("cannot make a command buffer");
  [encoder
      setComputePipelineState:(__bridge id<MTLComputePipelineState>)kernel];
  for (int32_t i = 0; i < launch->num_buffers; ++i)
    [encoder
        setBuffer:(__bridge id<MTLBuffer>)((metal_buffer *)bound[i])->buffer
           offset:0
          atIndex:(NSUInteger)i];
  [encoder dispatchThreadgroups:MTLSizeMake((NSUInteger)launch->groups[0],
                                            (NSUInteger)launch->groups[1],
                                            (NSUInteger)launch->groups[2])
          threadsPerThreadgroup:MTLSizeMake((NSUInteger)launch->block_x, 1, 1)];
  [encoder endEncoding];
  return TRACT_OK;
}

/* Commits the command buffer and waits for it. */
static tract_status commit(void) {
  [commands commit];
  [commands waitUntilCompleted];
  if (commands.status != MTLCommandBufferStatusCompleted)
    return tract_set_error("the command buffer failed: %s",
                           commands.error
                               ? commands.error.localizedDescription.UTF8String
                               : "no error given");
  return TRACT_OK;
}

static void close_batch(int dropped) {
  (void)dropped;
  commands = nil;
}

static const tract_gpu_backend metal = {
    .names = {.api = "Metal", .groups = "threadgroups", .block = "threadgroup"},
    .placeholder = 1,
    .device = {.start = start, .stop = stop},
    .kernels = {.check = check_msl,
                .make = make_kernel,
                .destroy = free_kernel,
                .max_block = kernel_max_block},
    .buffers = {.size = sizeof(metal_buffer),
                .allocate = allocate_buffer,
                .destroy = free_buffer},
    .batch = {.dispatch = dispatch, .run = commit, .close = close_batch},
};

static tract_gpu_core runtime = TRACT_GPU_CORE(metal);

/* ---- Entry points, each in a pool for the objects Metal autoreleases ---- */

int32_t tract_metal_available(char *why, size_t size) {
  @autoreleasepool {
    return tract_gpu_core_available(&runtime, why, size);
  }
}

const char *tract_metal_device_name(void) {
  @autoreleasepool {
    return tract_gpu_core_device_name(&runtime);
  }
}

int32_t tract_metal_launch(const char *msl, int64_t size, const char *entry,
                           int32_t groups_x, int32_t groups_y, int32_t groups_z,
                           int32_t block_x, int32_t num_buffers,
                           void *const *pointers, const int64_t *bytes,
                           const int32_t *flags) {
  @autoreleasepool {
    return tract_gpu_core_launch(&runtime, msl, size, entry, groups_x, groups_y,
                                 groups_z, block_x, num_buffers, pointers,
                                 bytes, flags, /*run=*/1);
  }
}

void tract_metal_release(void) {
  @autoreleasepool {
    tract_gpu_core_release(&runtime);
  }
}
