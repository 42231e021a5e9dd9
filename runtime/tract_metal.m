/* The Metal runtime of compiled models (tract_metal.h): MSL compiled once
 * per kernel, buffers in shared storage, one launch at a time.
 *
 * Objective-C with ARC (-fobjc-arc), macOS 11 or later; built on macOS only
 * (runtime/CMakeLists.txt). */
#import <Foundation/Foundation.h>
#import <Metal/Metal.h>

#include "runtime/tract_metal.h"
#include "runtime/tract_gpu_internal.h"
#include "runtime/tract_profile.h"
#include "runtime/tract_runtime.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !__has_feature(objc_arc)
#error "tract_metal.m is built with -fobjc-arc"
#endif

/* Metal's buffer argument table has 31 entries. */
enum { MAX_BUFFERS = 31 };

static pthread_mutex_t metal_lock = PTHREAD_MUTEX_INITIALIZER;

/* The state, under metal_lock. */
static int started;   /* initialize ran since the last release */
static int available; /* and found a device */
static char why_not[256];
static char device_name[256];
static id<MTLDevice> device;
static id<MTLCommandQueue> queue;
/* "<source address>:<entry>" -> its pipeline. */
static NSMutableDictionary<NSString *, id<MTLComputePipelineState>> *pipelines;
/* "<host address>:<bytes>" -> the constant's buffer. */
static NSMutableDictionary<NSString *, id<MTLBuffer>> *constants;
/* Buffers for READ and WRITE data, free between launches. */
static NSMutableArray<id<MTLBuffer>> *pool;
static id<MTLBuffer> placeholder;

static void initialize(void) {
  started = 1;
  available = 0;
  why_not[0] = device_name[0] = '\0';
  const char *chosen = getenv("TRACT_METAL_DEVICE");
  if (chosen && *chosen) {
    char *end = NULL;
    long index = strtol(chosen, &end, 10);
    NSArray<id<MTLDevice>> *all = MTLCopyAllDevices();
    if (*end || index < 0 || index >= (long)all.count) {
      snprintf(why_not, sizeof(why_not),
               "TRACT_METAL_DEVICE=%s: %lu Metal devices", chosen,
               (unsigned long)all.count);
      return;
    }
    device = all[(NSUInteger)index];
  } else {
    device = MTLCreateSystemDefaultDevice();
  }
  if (!device) {
    snprintf(why_not, sizeof(why_not), "no Metal device");
    return;
  }
  queue = [device newCommandQueue];
  placeholder = [device newBufferWithLength:16
                                    options:MTLResourceStorageModeShared];
  if (!queue || !placeholder) {
    snprintf(why_not, sizeof(why_not),
             "cannot make a command queue on the Metal device %s",
             device.name.UTF8String);
    device = nil;
    queue = nil;
    placeholder = nil;
    return;
  }
  pipelines = [NSMutableDictionary dictionary];
  constants = [NSMutableDictionary dictionary];
  pool = [NSMutableArray array];
  snprintf(device_name, sizeof(device_name), "%s", device.name.UTF8String);
  available = 1;
}

static tract_status ensure_device(void) {
  if (!started)
    initialize();
  return available ? TRACT_OK : tract_set_error("%s", why_not);
}

/* The pipeline of `entry` in the MSL `source`, compiled at its first
 * launch; nil with the compiler's log as the error. */
static id<MTLComputePipelineState> pipeline_for(const char *source,
                                                const char *entry) {
  NSString *name = [NSString stringWithUTF8String:entry];
  if (!name) {
    tract_set_error("the kernel's name is not UTF-8");
    return nil;
  }
  NSString *key = [NSString stringWithFormat:@"%p:%@", source, name];
  id<MTLComputePipelineState> pipeline = pipelines[key];
  if (pipeline)
    return pipeline;
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
  pipeline = [device newComputePipelineStateWithFunction:function
                                                   error:&error];
  if (!pipeline) {
    tract_set_error("no pipeline: %s", error.localizedDescription.UTF8String);
    return nil;
  }
  pipelines[key] = pipeline;
  return pipeline;
}

/* The buffer holding the constant host[0..bytes), uploaded once. */
static id<MTLBuffer> constant_for(const void *host, int64_t bytes) {
  NSString *key = [NSString stringWithFormat:@"%p:%lld", host, (long long)bytes];
  id<MTLBuffer> buffer = constants[key];
  if (buffer)
    return buffer;
  buffer = [device newBufferWithBytes:host
                               length:(NSUInteger)bytes
                              options:MTLResourceStorageModeShared];
  if (!buffer) {
    tract_set_error("cannot allocate %lld bytes on the device",
                    (long long)bytes);
    return nil;
  }
  constants[key] = buffer;
  return buffer;
}

/* A free pooled buffer of at least `bytes` (the smallest), or a new one;
 * it leaves the pool until its launch ends (tract_metal_launch puts it
 * back). */
static id<MTLBuffer> take_pooled(int64_t bytes) {
  NSUInteger best = NSNotFound;
  for (NSUInteger i = 0; i < pool.count; ++i)
    if (pool[i].length >= (NSUInteger)bytes &&
        (best == NSNotFound || pool[i].length < pool[best].length))
      best = i;
  if (best != NSNotFound) {
    id<MTLBuffer> buffer = pool[best];
    [pool removeObjectAtIndex:best];
    return buffer;
  }
  /* Rounded up to 4 KiB, so that near sizes share buffers. */
  NSUInteger length = ((NSUInteger)bytes + 4095) & ~(NSUInteger)4095;
  id<MTLBuffer> buffer =
      [device newBufferWithLength:length options:MTLResourceStorageModeShared];
  if (!buffer)
    tract_set_error("cannot allocate %lld bytes on the device",
                    (long long)bytes);
  return buffer;
}

/* Refuses what Metal would not take, with the argument at fault. */
static tract_status check_launch(const char *msl, int64_t size,
                                 const int32_t groups[3], int32_t block_x,
                                 int32_t n, void *const *pointers,
                                 const int64_t *bytes, const int32_t *flags) {
  if (!msl || size <= 0)
    return tract_set_error("no MSL source (%lld bytes)", (long long)size);
  if (msl[size] != '\0')
    return tract_set_error("the MSL source of %lld bytes does not end with a "
                           "NUL",
                           (long long)size);
  for (int d = 0; d < 3; ++d)
    if (groups[d] < 0)
      return tract_set_error("%d threadgroups along %c", (int)groups[d],
                             "xyz"[d]);
  if (block_x < 1)
    return tract_set_error("%d threads per threadgroup", (int)block_x);
  if (n < 0 || n > MAX_BUFFERS)
    return tract_set_error("%d buffers; Metal binds 0 to %d", (int)n,
                           MAX_BUFFERS);
  return tract_gpu_check_buffers(n, pointers, bytes, flags, -1);
}

/* One launch, waited for; the pooled buffers it took go to `taken`. */
static tract_status run_kernel(const char *msl, int64_t size, const char *entry,
                               const int32_t groups[3], int32_t block_x,
                               int32_t n, void *const *pointers,
                               const int64_t *bytes, const int32_t *flags,
                               NSMutableArray<id<MTLBuffer>> *taken) {
  if (check_launch(msl, size, groups, block_x, n, pointers, bytes, flags))
    return TRACT_ERROR;
  id<MTLComputePipelineState> pipeline = pipeline_for(msl, entry);
  if (!pipeline)
    return TRACT_ERROR;
  if ((NSUInteger)block_x > pipeline.maxTotalThreadsPerThreadgroup)
    return tract_set_error("%d threads per threadgroup; the pipeline runs at "
                           "most %lu",
                           (int)block_x,
                           (unsigned long)pipeline.maxTotalThreadsPerThreadgroup);
  /* No threadgroup: nothing runs, no buffer changes. */
  if (!groups[0] || !groups[1] || !groups[2])
    return TRACT_OK;

  id<MTLBuffer> buffers[MAX_BUFFERS];
  for (int32_t i = 0; i < n; ++i) {
    if (bytes[i] == 0) {
      buffers[i] = placeholder;
    } else if (flags[i] & TRACT_GPU_CONSTANT) {
      buffers[i] = constant_for(pointers[i], bytes[i]);
    } else {
      buffers[i] = take_pooled(bytes[i]);
      if (buffers[i]) {
        [taken addObject:buffers[i]];
        if (flags[i] & TRACT_GPU_READ)
          memcpy(buffers[i].contents, pointers[i], (size_t)bytes[i]);
      }
    }
    if (!buffers[i])
      return TRACT_ERROR;
  }

  id<MTLCommandBuffer> commands = [queue commandBuffer];
  id<MTLComputeCommandEncoder> encoder = [commands computeCommandEncoder];
  if (!commands || !encoder)
    return tract_set_error("cannot make a command buffer");
  [encoder setComputePipelineState:pipeline];
  for (int32_t i = 0; i < n; ++i)
    [encoder setBuffer:buffers[i] offset:0 atIndex:(NSUInteger)i];
  [encoder dispatchThreadgroups:MTLSizeMake((NSUInteger)groups[0],
                                            (NSUInteger)groups[1],
                                            (NSUInteger)groups[2])
          threadsPerThreadgroup:MTLSizeMake((NSUInteger)block_x, 1, 1)];
  [encoder endEncoding];
  [commands commit];
  [commands waitUntilCompleted];
  if (commands.status != MTLCommandBufferStatusCompleted)
    return tract_set_error(
        "the command buffer failed: %s",
        commands.error ? commands.error.localizedDescription.UTF8String
                       : "no error given");
  for (int32_t i = 0; i < n; ++i)
    if ((flags[i] & TRACT_GPU_WRITE) && bytes[i] > 0)
      memcpy(pointers[i], buffers[i].contents, (size_t)bytes[i]);
  return TRACT_OK;
}

int32_t tract_metal_launch(const char *msl, int64_t size, const char *entry,
                           int32_t groups_x, int32_t groups_y,
                           int32_t groups_z, int32_t block_x,
                           int32_t num_buffers, void *const *pointers,
                           const int64_t *bytes, const int32_t *flags) {
  if (!entry)
    return tract_set_error("Metal kernel launched without an entry point");
  const int32_t groups[3] = {groups_x, groups_y, groups_z};
  tract_status status;
  pthread_mutex_lock(&metal_lock);
  @autoreleasepool {
    status = ensure_device();
    if (status == TRACT_OK) {
      NSMutableArray<id<MTLBuffer>> *taken = [NSMutableArray array];
      status = run_kernel(msl, size, entry, groups, block_x, num_buffers,
                          pointers, bytes, flags, taken);
      [pool addObjectsFromArray:taken];
    }
    if (status != TRACT_OK) {
      /* The reason, after the kernel's name. */
      char reason[512];
      snprintf(reason, sizeof(reason), "%s", tract_last_error());
      tract_set_error("Metal kernel '%s': %s", entry, reason);
    }
  }
  pthread_mutex_unlock(&metal_lock);
  if (status == TRACT_OK)
    tract_profile_count_launch();
  return status;
}

int32_t tract_metal_available(char *why, size_t size) {
  pthread_mutex_lock(&metal_lock);
  int32_t result;
  @autoreleasepool {
    if (!started)
      initialize();
    result = available;
    if (!available && why && size > 0)
      snprintf(why, size, "%s", why_not);
  }
  pthread_mutex_unlock(&metal_lock);
  return result;
}

const char *tract_metal_device_name(void) {
  pthread_mutex_lock(&metal_lock);
  @autoreleasepool {
    if (!started)
      initialize();
  }
  pthread_mutex_unlock(&metal_lock);
  return device_name;
}

void tract_metal_release(void) {
  pthread_mutex_lock(&metal_lock);
  pipelines = nil;
  constants = nil;
  pool = nil;
  placeholder = nil;
  queue = nil;
  device = nil;
  started = available = 0;
  why_not[0] = device_name[0] = '\0';
  pthread_mutex_unlock(&metal_lock);
}
