/* The Vulkan host runtime of tract_gpu.h.
 *
 * Vulkan is reached through a table of function pointers that the loader
 * (libvulkan.so.1, opened with dlopen) hands out, so that programs link
 * nothing of Vulkan and still start where it is missing. One instance, one
 * device, one queue; one pipeline per kernel, made at its first launch.
 *
 * Device buffers live in host-visible, coherent memory, mapped once.
 * Launches are recorded into one command buffer, a barrier between two
 * dispatches, until tract_gpu_sync submits the batch, waits on a fence and
 * copies what the kernels wrote out. A host buffer gets one device copy per
 * batch (a "resident"): copied in at the first launch that reads it, it
 * stays the device's for the next kernels, which read what the previous
 * ones wrote. Weights (CONSTANT buffers) are uploaded once and found again
 * by host address and size; other buffers come from a pool that keeps,
 * slot by slot, the largest buffer a batch needed, so that a model running
 * again finds its buffers made. Descriptor sets come from pools reset at
 * each sync.
 *
 * One mutex guards all of it: launches and syncs run one at a time, and the
 * threads share the open batch. */

/* dlopen, strdup and pthreads under -std=c11 too. */
#define _POSIX_C_SOURCE 200809L
#define VK_NO_PROTOTYPES
#include "runtime/tract_gpu.h"
#include "runtime/tract_gpu_internal.h"
#include "runtime/tract_profile.h"
#include "runtime/tract_runtime.h"

#include <vulkan/vulkan.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The Vulkan functions used, named without their "vk": the loader's own,
 * then the instance's, then the device's. Each list starts with its
 * destructor, so that what was made can be freed even when a later
 * function is missing. */
#define GLOBAL_FUNCTIONS(X)                                                    \
  X(CreateInstance)                                                            \
  X(EnumerateInstanceVersion)

#define INSTANCE_FUNCTIONS(X)                                                  \
  X(DestroyInstance)                                                           \
  X(EnumeratePhysicalDevices)                                                  \
  X(GetPhysicalDeviceProperties)                                               \
  X(GetPhysicalDeviceProperties2)                                              \
  X(GetPhysicalDeviceFeatures2)                                                \
  X(GetPhysicalDeviceQueueFamilyProperties)                                    \
  X(GetPhysicalDeviceMemoryProperties)                                         \
  X(CreateDevice)                                                              \
  X(GetDeviceProcAddr)

#define DEVICE_FUNCTIONS(X)                                                    \
  X(DestroyDevice)                                                             \
  X(GetDeviceQueue)                                                            \
  X(DeviceWaitIdle)                                                            \
  X(CreateBuffer)                                                              \
  X(DestroyBuffer)                                                             \
  X(GetBufferMemoryRequirements)                                               \
  X(AllocateMemory)                                                            \
  X(FreeMemory)                                                                \
  X(BindBufferMemory)                                                          \
  X(MapMemory)                                                                 \
  X(CreateShaderModule)                                                        \
  X(DestroyShaderModule)                                                       \
  X(CreateDescriptorSetLayout)                                                 \
  X(DestroyDescriptorSetLayout)                                                \
  X(CreatePipelineLayout)                                                      \
  X(DestroyPipelineLayout)                                                     \
  X(CreateComputePipelines)                                                    \
  X(DestroyPipeline)                                                           \
  X(CreateDescriptorPool)                                                      \
  X(DestroyDescriptorPool)                                                     \
  X(AllocateDescriptorSets)                                                    \
  X(ResetDescriptorPool)                                                       \
  X(UpdateDescriptorSets)                                                      \
  X(CreateCommandPool)                                                         \
  X(DestroyCommandPool)                                                        \
  X(AllocateCommandBuffers)                                                    \
  X(ResetCommandBuffer)                                                        \
  X(BeginCommandBuffer)                                                        \
  X(EndCommandBuffer)                                                          \
  X(CmdBindPipeline)                                                           \
  X(CmdBindDescriptorSets)                                                     \
  X(CmdDispatch)                                                               \
  X(CmdPipelineBarrier)                                                        \
  X(CreateFence)                                                               \
  X(DestroyFence)                                                              \
  X(ResetFences)                                                               \
  X(WaitForFences)                                                             \
  X(QueueSubmit)

#define DECLARE_FUNCTION(name) PFN_vk##name name;
static struct {
  PFN_vkGetInstanceProcAddr GetInstanceProcAddr;
  GLOBAL_FUNCTIONS(DECLARE_FUNCTION)
  INSTANCE_FUNCTIONS(DECLARE_FUNCTION)
  DEVICE_FUNCTIONS(DECLARE_FUNCTION)
} vk;
#undef DECLARE_FUNCTION

/* A storage buffer with its memory, mapped for as long as it lives. */
typedef struct device_buffer {
  VkBuffer buffer;
  VkDeviceMemory memory;
  void *mapped;
  VkDeviceSize capacity;
} device_buffer;

/* The device copy of a launch's CONSTANT host data. */
typedef struct constant_buffer {
  const void *host;
  int64_t bytes;
  device_buffer device;
} constant_buffer;

typedef struct pooled_buffer {
  device_buffer device;
  int busy; /* a resident of the open batch */
} pooled_buffer;

/* The device copy of host memory host .. host + bytes in the open batch. */
typedef struct resident {
  void *host;
  int64_t bytes;
  device_buffer device; /* a pooled buffer */
  int written;          /* by a kernel of the batch: copied out at sync */
} resident;

/* A kernel's pipeline, made at its first launch. */
typedef struct kernel {
  const uint32_t *spirv;
  int64_t words;
  char *entry;
  int32_t num_buffers;
  VkShaderModule module;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkPipeline pipeline;
} kernel;

enum gpu_state { GPU_UNTRIED = 0, GPU_READY, GPU_FAILED };

/* Bytes of the buffer bound for zero-byte buffers. */
enum { PLACEHOLDER_BYTES = 16 };

/* Descriptor sets, and storage-buffer descriptors, per descriptor pool; and
 * the launches a batch takes before it is submitted on its own. */
enum { SETS_PER_POOL = 64, DESCRIPTORS_PER_POOL = 1024, BATCH_LAUNCHES = 256 };

static pthread_mutex_t gpu_lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
  enum gpu_state state;
  char why[512]; /* why there is no device, when FAILED */
  void *loader;
  VkInstance instance;
  uint32_t instance_version;
  VkPhysicalDevice physical;
  uint32_t queue_family;
  char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
  VkPhysicalDeviceLimits limits;
  VkPhysicalDeviceMemoryProperties memory;
  tract_gpu_features features;
  VkDevice device;
  int device_loaded; /* every device function is in `vk` */
  VkQueue queue;
  VkCommandPool command_pool;
  VkCommandBuffer commands;
  VkFence fence;
  device_buffer placeholder;
  kernel *kernels;
  int32_t num_kernels, kernels_capacity;
  constant_buffer *constants;
  int32_t num_constants, constants_capacity;
  pooled_buffer *pool;
  int32_t pool_size, pool_capacity;
  VkDescriptorBufferInfo *bindings; /* of the launch being recorded */
  int32_t bindings_capacity;
  int32_t *order; /* its buffers, largest first */
  int32_t order_capacity;
  /* The open batch: its launches, residents and descriptor pools (the
   * last ones in use, with sets and descriptors left). */
  int32_t batch_launches;
  resident *residents;
  int32_t num_residents, residents_capacity;
  VkDescriptorPool *descriptor_pools;
  int32_t num_descriptor_pools, descriptor_pools_capacity;
  int32_t descriptor_pools_used;
  int32_t sets_left, descriptors_left;
  /* Launches were dropped unrun since the last sync, after a failure. */
  int batch_dropped;
} gpu;

/* ---- Errors ---- */

static const char *result_name(VkResult result) {
#define RESULT(name)                                                           \
  case name:                                                                   \
    return #name;
  switch (result) {
    RESULT(VK_NOT_READY)
    RESULT(VK_TIMEOUT)
    RESULT(VK_INCOMPLETE)
    RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    RESULT(VK_ERROR_INITIALIZATION_FAILED)
    RESULT(VK_ERROR_DEVICE_LOST)
    RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    RESULT(VK_ERROR_FRAGMENTED_POOL)
    RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
    RESULT(VK_ERROR_INVALID_SHADER_NV)
    RESULT(VK_ERROR_UNKNOWN)
  default:
    return "VkResult";
  }
#undef RESULT
}

static tract_status vulkan_failed(const char *call, VkResult result) {
  return tract_set_error("%s failed: %s (%d)", call, result_name(result),
                         (int)result);
}

/* Calls vk<name> through the table; a failure records the call and its
 * result and returns TRACT_ERROR from the calling function. */
#define VK_CHECK(name, ...)                                                    \
  do {                                                                         \
    VkResult result_ = vk.name(__VA_ARGS__);                                   \
    if (result_ != VK_SUCCESS)                                                 \
      return vulkan_failed("vk" #name, result_);                               \
  } while (0)

/* Puts `context` and ": " before the message of the failure at hand. */
static tract_status explain(const char *context) {
  char message[1024];
  snprintf(message, sizeof(message), "%s", tract_last_error());
  return tract_set_error("%s: %s", context, message);
}

/* `items` (of `size` bytes each) with room for `needed` of them: the same
 * pointer when it had room, a larger block (and *capacity updated) when
 * not, NULL with a message when memory ran out. `needed` is positive. */
static void *grow(void *items, int32_t *capacity, int32_t needed, size_t size) {
  if (needed <= *capacity)
    return items;
  int32_t grown = *capacity ? *capacity : 8;
  while (grown < needed)
    grown *= 2;
  void *moved = realloc(items, (size_t)grown * size);
  if (!moved) {
    tract_set_error("out of memory in the GPU runtime");
    return NULL;
  }
  *capacity = grown;
  return moved;
}

/* ---- The loader and the instance ---- */

/* Version numbers without their patch, for comparisons. */
#define MAJOR_MINOR(version) ((version) & ~(uint32_t)0xfff)

static tract_status open_loader(void) {
  gpu.loader = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!gpu.loader)
    return tract_set_error("no Vulkan loader (libvulkan.so.1)");
  void *symbol = dlsym(gpu.loader, "vkGetInstanceProcAddr");
  if (!symbol)
    return tract_set_error("the Vulkan loader has no vkGetInstanceProcAddr");
  vk.GetInstanceProcAddr = (PFN_vkGetInstanceProcAddr)symbol;
  /* vkEnumerateInstanceVersion is missing from 1.0 loaders. */
#define LOAD_GLOBAL(name)                                                      \
  vk.name = (PFN_vk##name)vk.GetInstanceProcAddr(NULL, "vk" #name);
  GLOBAL_FUNCTIONS(LOAD_GLOBAL)
#undef LOAD_GLOBAL
  if (!vk.CreateInstance)
    return tract_set_error("the Vulkan loader has no vkCreateInstance");
  return TRACT_OK;
}

/* An instance of the newest version up to 1.3 that the loader speaks (1.1
 * at least: kernels and feature queries need it), without layers or
 * extensions. */
static tract_status create_instance(void) {
  uint32_t loader_version = VK_API_VERSION_1_0;
  if (vk.EnumerateInstanceVersion)
    VK_CHECK(EnumerateInstanceVersion, &loader_version);
  if (MAJOR_MINOR(loader_version) < VK_API_VERSION_1_1)
    return tract_set_error("the Vulkan loader speaks Vulkan %u.%u; tract "
                           "needs 1.1",
                           VK_API_VERSION_MAJOR(loader_version),
                           VK_API_VERSION_MINOR(loader_version));
  gpu.instance_version = MAJOR_MINOR(loader_version) >= VK_API_VERSION_1_3
                             ? VK_API_VERSION_1_3
                             : MAJOR_MINOR(loader_version);
  VkApplicationInfo application = {
      .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
      .pApplicationName = "tract",
      .pEngineName = "tract",
      .apiVersion = gpu.instance_version,
  };
  VkInstanceCreateInfo info = {
      .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
      .pApplicationInfo = &application,
  };
  VkResult result = vk.CreateInstance(&info, NULL, &gpu.instance);
  /* What the loader answers when it finds no driver at all. */
  if (result == VK_ERROR_INCOMPATIBLE_DRIVER)
    return tract_set_error("no Vulkan driver (vkCreateInstance failed: "
                           "VK_ERROR_INCOMPATIBLE_DRIVER)");
  if (result != VK_SUCCESS)
    return vulkan_failed("vkCreateInstance", result);
#define LOAD_INSTANCE(name)                                                    \
  vk.name = (PFN_vk##name)vk.GetInstanceProcAddr(gpu.instance, "vk" #name);    \
  if (!vk.name)                                                                \
    return tract_set_error("the Vulkan loader has no vk" #name);
  INSTANCE_FUNCTIONS(LOAD_INSTANCE)
#undef LOAD_INSTANCE
  return TRACT_OK;
}

/* ---- The physical device ---- */

/* Why `physical` cannot run kernels ("speaks ..."), or NULL when it can;
 * then *family is its first queue family with compute. */
static const char *unusable(VkPhysicalDevice physical, uint32_t *family) {
  VkPhysicalDeviceProperties properties;
  vk.GetPhysicalDeviceProperties(physical, &properties);
  if (MAJOR_MINOR(properties.apiVersion) < VK_API_VERSION_1_1)
    return "speaks Vulkan 1.0 only";
  VkQueueFamilyProperties families[64];
  uint32_t count = 64;
  vk.GetPhysicalDeviceQueueFamilyProperties(physical, &count, families);
  for (uint32_t i = 0; i < count; ++i) {
    if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) &&
        families[i].queueCount > 0) {
      *family = i;
      return NULL;
    }
  }
  return "has no compute queue";
}

/* The device TRACT_VULKAN_DEVICE names (its index among those the
 * instance lists), which must be usable. */
static tract_status choose_named_device(const char *chosen,
                                        const VkPhysicalDevice *devices,
                                        uint32_t count) {
  char *end;
  long index = strtol(chosen, &end, 10);
  if (*end || end == chosen || index < 0)
    return tract_set_error("TRACT_VULKAN_DEVICE=%s is not a device number",
                           chosen);
  if ((unsigned long)index >= count)
    return tract_set_error("TRACT_VULKAN_DEVICE=%s: no such device (the "
                           "Vulkan devices are 0 to %u)",
                           chosen, count - 1);
  const char *why = unusable(devices[index], &gpu.queue_family);
  if (why) {
    VkPhysicalDeviceProperties properties;
    vk.GetPhysicalDeviceProperties(devices[index], &properties);
    return tract_set_error("TRACT_VULKAN_DEVICE=%s: %s %s", chosen,
                           properties.deviceName, why);
  }
  gpu.physical = devices[index];
  return TRACT_OK;
}

/* The first device with a compute queue, unless TRACT_VULKAN_DEVICE
 * chooses. */
static tract_status choose_device(void) {
  VkPhysicalDevice devices[16];
  uint32_t count = 16;
  VkResult result = vk.EnumeratePhysicalDevices(gpu.instance, &count, devices);
  if (result != VK_SUCCESS && result != VK_INCOMPLETE)
    return vulkan_failed("vkEnumeratePhysicalDevices", result);
  if (count == 0)
    return tract_set_error("no Vulkan device");
  const char *chosen = getenv("TRACT_VULKAN_DEVICE");
  if (chosen && *chosen)
    return choose_named_device(chosen, devices, count);
  for (uint32_t i = 0; i < count; ++i) {
    if (!unusable(devices[i], &gpu.queue_family)) {
      gpu.physical = devices[i];
      return TRACT_OK;
    }
  }
  return tract_set_error("no Vulkan device with Vulkan 1.1 and a compute "
                         "queue (among %u)",
                         count);
}

static int32_t clamp_to_int32(uint32_t value) {
  return value > INT32_MAX ? INT32_MAX : (int32_t)value;
}

/* The device's name, limits, subgroup size and memory types. */
static void read_properties(void) {
  VkPhysicalDeviceSubgroupProperties subgroup = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES,
  };
  VkPhysicalDeviceProperties2 properties = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
      .pNext = &subgroup,
  };
  vk.GetPhysicalDeviceProperties2(gpu.physical, &properties);
  vk.GetPhysicalDeviceMemoryProperties(gpu.physical, &gpu.memory);
  memcpy(gpu.name, properties.properties.deviceName, sizeof(gpu.name));
  gpu.name[sizeof(gpu.name) - 1] = '\0';
  gpu.limits = properties.properties.limits;
  tract_gpu_features *f = &gpu.features;
  f->max_workgroup_invocations =
      clamp_to_int32(gpu.limits.maxComputeWorkGroupInvocations);
  for (int d = 0; d < 3; ++d) {
    f->max_workgroup_size[d] =
        clamp_to_int32(gpu.limits.maxComputeWorkGroupSize[d]);
    f->max_workgroup_count[d] =
        clamp_to_int32(gpu.limits.maxComputeWorkGroupCount[d]);
  }
  f->subgroup_size = clamp_to_int32(subgroup.subgroupSize);
  f->max_storage_buffer_range = gpu.limits.maxStorageBufferRange;
}

/* Features queried or enabled: the core ones, and those of Vulkan 1.1 and
 * 1.2 (8- and 16-bit types) on a device that speaks 1.2. */
typedef struct feature_chain {
  VkPhysicalDeviceFeatures2 core;
  VkPhysicalDeviceVulkan11Features v11;
  VkPhysicalDeviceVulkan12Features v12;
} feature_chain;

static void link_features(feature_chain *chain, int vulkan12) {
  memset(chain, 0, sizeof(*chain));
  chain->core.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  chain->v11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  chain->v12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  if (vulkan12) {
    chain->core.pNext = &chain->v11;
    chain->v11.pNext = &chain->v12;
  }
}

/* Fills `enable` with what kernels may use among what the device has, and
 * says so in gpu.features. */
static void choose_features(feature_chain *enable) {
  VkPhysicalDeviceProperties properties;
  vk.GetPhysicalDeviceProperties(gpu.physical, &properties);
  uint32_t version = MAJOR_MINOR(properties.apiVersion);
  if (version > gpu.instance_version)
    version = gpu.instance_version;
  int vulkan12 = version >= VK_API_VERSION_1_2;
  feature_chain has;
  link_features(&has, vulkan12);
  vk.GetPhysicalDeviceFeatures2(gpu.physical, &has.core);
  link_features(enable, vulkan12);
  enable->core.features.shaderInt64 = has.core.features.shaderInt64;
  enable->core.features.shaderFloat64 = has.core.features.shaderFloat64;
  enable->core.features.shaderInt16 = has.core.features.shaderInt16;
  enable->v11.storageBuffer16BitAccess = has.v11.storageBuffer16BitAccess;
  enable->v12.storageBuffer8BitAccess = has.v12.storageBuffer8BitAccess;
  enable->v12.shaderInt8 = has.v12.shaderInt8;
  enable->v12.shaderFloat16 = has.v12.shaderFloat16;
  tract_gpu_features *f = &gpu.features;
  f->int8 = enable->v12.shaderInt8 && enable->v12.storageBuffer8BitAccess;
  f->int16 =
      enable->core.features.shaderInt16 && enable->v11.storageBuffer16BitAccess;
  f->int64 = enable->core.features.shaderInt64 != 0;
  f->float16 =
      enable->v12.shaderFloat16 && enable->v11.storageBuffer16BitAccess;
  f->float64 = enable->core.features.shaderFloat64 != 0;
}

/* ---- The device ---- */

/* The device with one queue of the compute family, and its functions. */
static tract_status create_device(void) {
  feature_chain enable;
  choose_features(&enable);
  float priority = 1.0f;
  VkDeviceQueueCreateInfo queue = {
      .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
      .queueFamilyIndex = gpu.queue_family,
      .queueCount = 1,
      .pQueuePriorities = &priority,
  };
  VkDeviceCreateInfo info = {
      .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
      .pNext = &enable.core,
      .queueCreateInfoCount = 1,
      .pQueueCreateInfos = &queue,
  };
  VK_CHECK(CreateDevice, gpu.physical, &info, NULL, &gpu.device);
#define LOAD_DEVICE(name)                                                      \
  vk.name = (PFN_vk##name)vk.GetDeviceProcAddr(gpu.device, "vk" #name);        \
  if (!vk.name)                                                                \
    return tract_set_error("the Vulkan driver has no vk" #name);
  DEVICE_FUNCTIONS(LOAD_DEVICE)
#undef LOAD_DEVICE
  gpu.device_loaded = 1;
  vk.GetDeviceQueue(gpu.device, gpu.queue_family, 0, &gpu.queue);
  return TRACT_OK;
}

/* The first memory type among `allowed` that the host sees coherently, or
 * -1. Vulkan lists the faster types first. */
static int32_t host_memory_type(uint32_t allowed) {
  const VkMemoryPropertyFlags wanted = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                       VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  for (uint32_t i = 0; i < gpu.memory.memoryTypeCount; ++i)
    if ((allowed & (1u << i)) &&
        (gpu.memory.memoryTypes[i].propertyFlags & wanted) == wanted)
      return (int32_t)i;
  return -1;
}

static void destroy_buffer(device_buffer *b) {
  if (b->buffer)
    vk.DestroyBuffer(gpu.device, b->buffer, NULL);
  if (b->memory) /* unmaps it too */
    vk.FreeMemory(gpu.device, b->memory, NULL);
  memset(b, 0, sizeof(*b));
}

static tract_status make_buffer(VkDeviceSize capacity, device_buffer *b) {
  VkBufferCreateInfo info = {
      .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
      .size = capacity,
      .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
      .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
  };
  VK_CHECK(CreateBuffer, gpu.device, &info, NULL, &b->buffer);
  VkMemoryRequirements needs;
  vk.GetBufferMemoryRequirements(gpu.device, b->buffer, &needs);
  int32_t type = host_memory_type(needs.memoryTypeBits);
  if (type < 0)
    return tract_set_error("the Vulkan device has no host-visible, coherent "
                           "memory for storage buffers");
  VkMemoryAllocateInfo allocation = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
      .allocationSize = needs.size,
      .memoryTypeIndex = (uint32_t)type,
  };
  VK_CHECK(AllocateMemory, gpu.device, &allocation, NULL, &b->memory);
  VK_CHECK(BindBufferMemory, gpu.device, b->buffer, b->memory, 0);
  VK_CHECK(MapMemory, gpu.device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped);
  b->capacity = capacity;
  return TRACT_OK;
}

/* A mapped storage buffer of `capacity` bytes in *b; on failure, *b is
 * empty and the message says how large it was to be. */
static tract_status create_buffer(VkDeviceSize capacity, device_buffer *b) {
  memset(b, 0, sizeof(*b));
  if (make_buffer(capacity, b) == TRACT_OK)
    return TRACT_OK;
  destroy_buffer(b);
  char context[64];
  snprintf(context, sizeof(context), "a device buffer of %llu bytes",
           (unsigned long long)capacity);
  return explain(context);
}

/* The command buffer each launch records again, its fence, and the buffer
 * bound in place of zero-byte ones (zeroed: a kernel may look). */
static tract_status create_launch_objects(void) {
  VkCommandPoolCreateInfo pool = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
      .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
      .queueFamilyIndex = gpu.queue_family,
  };
  VK_CHECK(CreateCommandPool, gpu.device, &pool, NULL, &gpu.command_pool);
  VkCommandBufferAllocateInfo commands = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
      .commandPool = gpu.command_pool,
      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
      .commandBufferCount = 1,
  };
  VK_CHECK(AllocateCommandBuffers, gpu.device, &commands, &gpu.commands);
  VkFenceCreateInfo fence = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VK_CHECK(CreateFence, gpu.device, &fence, NULL, &gpu.fence);
  if (create_buffer(PLACEHOLDER_BYTES, &gpu.placeholder))
    return TRACT_ERROR;
  memset(gpu.placeholder.mapped, 0, PLACEHOLDER_BYTES);
  return TRACT_OK;
}

static void destroy_kernel(kernel *k) {
  if (k->pipeline)
    vk.DestroyPipeline(gpu.device, k->pipeline, NULL);
  if (k->layout)
    vk.DestroyPipelineLayout(gpu.device, k->layout, NULL);
  if (k->set_layout)
    vk.DestroyDescriptorSetLayout(gpu.device, k->set_layout, NULL);
  if (k->module)
    vk.DestroyShaderModule(gpu.device, k->module, NULL);
  free(k->entry);
  memset(k, 0, sizeof(*k));
}

/* Every object made from the device, then the device. */
static void destroy_device(void) {
  if (gpu.device_loaded) {
    vk.DeviceWaitIdle(gpu.device);
    for (int32_t i = 0; i < gpu.num_kernels; ++i)
      destroy_kernel(&gpu.kernels[i]);
    for (int32_t i = 0; i < gpu.num_constants; ++i)
      destroy_buffer(&gpu.constants[i].device);
    for (int32_t i = 0; i < gpu.pool_size; ++i)
      destroy_buffer(&gpu.pool[i].device);
    for (int32_t i = 0; i < gpu.num_descriptor_pools; ++i)
      vk.DestroyDescriptorPool(gpu.device, gpu.descriptor_pools[i], NULL);
    destroy_buffer(&gpu.placeholder);
    if (gpu.fence)
      vk.DestroyFence(gpu.device, gpu.fence, NULL);
    if (gpu.command_pool) /* frees the command buffer */
      vk.DestroyCommandPool(gpu.device, gpu.command_pool, NULL);
  }
  if (gpu.device && vk.DestroyDevice)
    vk.DestroyDevice(gpu.device, NULL);
}

/* Frees everything and forgets it all, as if nothing had been tried. */
static void destroy_all(void) {
  destroy_device();
  if (gpu.instance && vk.DestroyInstance)
    vk.DestroyInstance(gpu.instance, NULL);
  if (gpu.loader)
    dlclose(gpu.loader);
  free(gpu.kernels);
  free(gpu.constants);
  free(gpu.pool);
  free(gpu.bindings);
  free(gpu.order);
  free(gpu.residents);
  free(gpu.descriptor_pools);
  memset(&gpu, 0, sizeof(gpu));
  memset(&vk, 0, sizeof(vk));
}

/* Opens the loader and makes the device, once: READY, or FAILED with the
 * reason kept for every later call (and nothing left made). */
static void initialize(void) {
  tract_status status = open_loader();
  if (status == TRACT_OK)
    status = create_instance();
  if (status == TRACT_OK)
    status = choose_device();
  if (status == TRACT_OK) {
    read_properties();
    status = create_device();
  }
  if (status == TRACT_OK)
    status = create_launch_objects();
  if (status == TRACT_OK) {
    gpu.state = GPU_READY;
    return;
  }
  char why[sizeof(gpu.why)];
  snprintf(why, sizeof(why), "%s", tract_last_error());
  destroy_all();
  memcpy(gpu.why, why, sizeof(why));
  gpu.state = GPU_FAILED;
}

/* TRACT_OK once the device is there; under the lock. */
static tract_status ensure_device(void) {
  if (gpu.state == GPU_UNTRIED)
    initialize();
  return gpu.state == GPU_READY ? TRACT_OK : tract_set_error("%s", gpu.why);
}

/* ---- Kernels ---- */

static tract_status create_set_layout(int32_t num_buffers,
                                      VkDescriptorSetLayout *layout) {
  VkDescriptorSetLayoutBinding *bindings =
      calloc(num_buffers ? (size_t)num_buffers : 1, sizeof(*bindings));
  if (!bindings)
    return tract_set_error("out of memory in the GPU runtime");
  for (int32_t i = 0; i < num_buffers; ++i) {
    bindings[i].binding = (uint32_t)i;
    bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo info = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
      .bindingCount = (uint32_t)num_buffers,
      .pBindings = bindings,
  };
  VkResult result =
      vk.CreateDescriptorSetLayout(gpu.device, &info, NULL, layout);
  free(bindings);
  return result == VK_SUCCESS
             ? TRACT_OK
             : vulkan_failed("vkCreateDescriptorSetLayout", result);
}

/* The shader module, layouts and pipeline of `k`, whose key is set. */
static tract_status build_pipeline(kernel *k) {
  VkShaderModuleCreateInfo module = {
      .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
      .codeSize = (size_t)k->words * sizeof(uint32_t),
      .pCode = k->spirv,
  };
  VK_CHECK(CreateShaderModule, gpu.device, &module, NULL, &k->module);
  if (create_set_layout(k->num_buffers, &k->set_layout))
    return TRACT_ERROR;
  VkPipelineLayoutCreateInfo layout = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
      .setLayoutCount = 1,
      .pSetLayouts = &k->set_layout,
  };
  VK_CHECK(CreatePipelineLayout, gpu.device, &layout, NULL, &k->layout);
  VkComputePipelineCreateInfo pipeline = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage =
          {
              .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
              .stage = VK_SHADER_STAGE_COMPUTE_BIT,
              .module = k->module,
              .pName = k->entry,
          },
      .layout = k->layout,
  };
  VK_CHECK(CreateComputePipelines, gpu.device, VK_NULL_HANDLE, 1, &pipeline,
           NULL, &k->pipeline);
  return TRACT_OK;
}

/* The kernel of these words, entry point and buffer count: made at its
 * first launch, the same one after. NULL with a message on failure. */
static kernel *kernel_for(const uint32_t *spirv, int64_t words,
                          const char *entry, int32_t num_buffers) {
  for (int32_t i = 0; i < gpu.num_kernels; ++i) {
    kernel *k = &gpu.kernels[i];
    if (k->spirv == spirv && k->words == words &&
        k->num_buffers == num_buffers && !strcmp(k->entry, entry))
      return k;
  }
  kernel *kernels = grow(gpu.kernels, &gpu.kernels_capacity,
                         gpu.num_kernels + 1, sizeof(kernel));
  if (!kernels)
    return NULL;
  gpu.kernels = kernels;
  kernel made = {.spirv = spirv, .words = words, .num_buffers = num_buffers};
  made.entry = strdup(entry);
  if (!made.entry) {
    tract_set_error("out of memory in the GPU runtime");
    return NULL;
  }
  if (build_pipeline(&made)) {
    destroy_kernel(&made);
    return NULL;
  }
  gpu.kernels[gpu.num_kernels] = made;
  return &gpu.kernels[gpu.num_kernels++];
}

/* ---- Buffers ---- */

/* The device copy of constant host data, uploaded at its first use. */
static tract_status constant_for(const void *host, int64_t bytes,
                                 VkBuffer *buffer) {
  for (int32_t i = 0; i < gpu.num_constants; ++i) {
    constant_buffer *c = &gpu.constants[i];
    if (c->host == host && c->bytes == bytes) {
      *buffer = c->device.buffer;
      return TRACT_OK;
    }
  }
  constant_buffer *constants =
      grow(gpu.constants, &gpu.constants_capacity, gpu.num_constants + 1,
           sizeof(constant_buffer));
  if (!constants)
    return TRACT_ERROR;
  gpu.constants = constants;
  constant_buffer *c = &gpu.constants[gpu.num_constants];
  if (create_buffer((VkDeviceSize)bytes, &c->device))
    return TRACT_ERROR;
  memcpy(c->device.mapped, host, (size_t)bytes);
  c->host = host;
  c->bytes = bytes;
  ++gpu.num_constants;
  *buffer = c->device.buffer;
  return TRACT_OK;
}

/* The capacity of a pooled buffer for `bytes`: a multiple of an eighth of
 * the largest power of two in it (12.5% more at most) and of 4 KiB, so
 * that sizes that vary a little find the same buffer. */
static VkDeviceSize pool_capacity(int64_t bytes) {
  uint64_t size = (uint64_t)bytes, top = 1;
  while (top <= size / 2)
    top *= 2;
  uint64_t step = top / 8 > 4096 ? top / 8 : 4096;
  return (size + step - 1) / step * step;
}

/* A pooled buffer of at least `bytes`, marked busy: the smallest free one
 * that is large enough, else the smallest free one made again that large
 * (callers ask for the largest first), else a new one. */
static tract_status take_pooled(int64_t bytes, device_buffer *taken) {
  int32_t fit = -1, smallest = -1;
  for (int32_t i = 0; i < gpu.pool_size; ++i) {
    if (gpu.pool[i].busy)
      continue;
    VkDeviceSize capacity = gpu.pool[i].device.capacity;
    if (capacity >= (VkDeviceSize)bytes &&
        (fit < 0 || capacity < gpu.pool[fit].device.capacity))
      fit = i;
    if (smallest < 0 || capacity < gpu.pool[smallest].device.capacity)
      smallest = i;
  }
  if (fit < 0) {
    if (smallest >= 0) {
      fit = smallest;
      destroy_buffer(&gpu.pool[fit].device);
    } else {
      pooled_buffer *pool = grow(gpu.pool, &gpu.pool_capacity,
                                 gpu.pool_size + 1, sizeof(pooled_buffer));
      if (!pool)
        return TRACT_ERROR;
      gpu.pool = pool;
      fit = gpu.pool_size++;
      memset(&gpu.pool[fit], 0, sizeof(pooled_buffer));
    }
    /* A failed slot stays, empty, for the next launch to fill. */
    if (create_buffer(pool_capacity(bytes), &gpu.pool[fit].device))
      return TRACT_ERROR;
  }
  gpu.pool[fit].busy = 1;
  *taken = gpu.pool[fit].device;
  return TRACT_OK;
}

/* ---- Batches ---- */

/* The resident copy of exactly host .. host + bytes, or NULL. *overlaps is
 * set when another resident shares some of those bytes. */
static resident *find_resident(const void *host, int64_t bytes, int *overlaps) {
  const char *begin = host, *end = begin + bytes;
  for (int32_t i = 0; i < gpu.num_residents; ++i) {
    resident *r = &gpu.residents[i];
    const char *first = r->host, *last = first + r->bytes;
    if (r->host == host && r->bytes == bytes)
      return r;
    if (begin < last && first < end)
      *overlaps = 1;
  }
  return NULL;
}

/* Forgets the open batch: its residents, pooled buffers and descriptor
 * sets are free again, and the command buffer is to be begun anew. */
static void close_batch(void) {
  gpu.num_residents = 0;
  for (int32_t i = 0; i < gpu.pool_size; ++i)
    gpu.pool[i].busy = 0;
  for (int32_t i = 0; i < gpu.descriptor_pools_used; ++i)
    vk.ResetDescriptorPool(gpu.device, gpu.descriptor_pools[i], 0);
  gpu.descriptor_pools_used = 0;
  gpu.sets_left = gpu.descriptors_left = 0;
  gpu.batch_launches = 0;
}

/* TRACT_OK, or an error when launches were dropped since the last sync. */
static tract_status report_dropped(void) {
  if (!gpu.batch_dropped)
    return TRACT_OK;
  gpu.batch_dropped = 0;
  return tract_set_error("launches were dropped unrun after one failed");
}

/* Submits the open batch, waits for it and copies the buffers its kernels
 * wrote back to the host; the batch is closed whatever happens. */
static tract_status run_batch(void) {
  if (gpu.batch_launches == 0)
    return report_dropped();
  /* The fence alone does not make the kernels' writes visible to the
   * host's reads: this barrier does. (Host writes before a submission are
   * visible to it without one.) */
  VkMemoryBarrier barrier = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
      .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
      .dstAccessMask = VK_ACCESS_HOST_READ_BIT,
  };
  vk.CmdPipelineBarrier(gpu.commands, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                        VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0, NULL, 0,
                        NULL);
  VkResult result = vk.EndCommandBuffer(gpu.commands);
  const char *call = "vkEndCommandBuffer";
  if (result == VK_SUCCESS) {
    call = "vkResetFences";
    result = vk.ResetFences(gpu.device, 1, &gpu.fence);
  }
  if (result == VK_SUCCESS) {
    VkSubmitInfo submit = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
        .commandBufferCount = 1,
        .pCommandBuffers = &gpu.commands,
    };
    call = "vkQueueSubmit";
    result = vk.QueueSubmit(gpu.queue, 1, &submit, gpu.fence);
  }
  if (result == VK_SUCCESS) {
    call = "vkWaitForFences";
    result = vk.WaitForFences(gpu.device, 1, &gpu.fence, VK_TRUE, UINT64_MAX);
  }
  if (result == VK_SUCCESS)
    for (int32_t i = 0; i < gpu.num_residents; ++i)
      if (gpu.residents[i].written)
        memcpy(gpu.residents[i].host, gpu.residents[i].device.mapped,
               (size_t)gpu.residents[i].bytes);
  close_batch();
  return result == VK_SUCCESS ? report_dropped() : vulkan_failed(call, result);
}

/* Drops the open batch unrun, after a failed launch: the batch's host
 * memory may be freed when the failed run returns, so nothing of it may be
 * copied back later. The next sync says so. */
static void abandon_batch(void) {
  if (gpu.batch_launches > 0) {
    vk.ResetCommandBuffer(gpu.commands, 0);
    gpu.batch_dropped = 1;
  }
  close_batch();
}

/* A descriptor set of `k` for this launch, from the batch's pools. */
static tract_status allocate_set(const kernel *k, VkDescriptorSet *set) {
  uint32_t needed = k->num_buffers ? (uint32_t)k->num_buffers : 1;
  int fresh = 0;
  if (gpu.sets_left == 0 || gpu.descriptors_left < (int32_t)needed) {
    fresh = 1;
    if (gpu.descriptor_pools_used == gpu.num_descriptor_pools) {
      VkDescriptorPool *pools =
          grow(gpu.descriptor_pools, &gpu.descriptor_pools_capacity,
               gpu.num_descriptor_pools + 1, sizeof(VkDescriptorPool));
      if (!pools)
        return TRACT_ERROR;
      gpu.descriptor_pools = pools;
      /* A kernel binds at most maxPerStageDescriptorStorageBuffers. */
      uint32_t descriptors =
          DESCRIPTORS_PER_POOL > needed ? DESCRIPTORS_PER_POOL : needed;
      VkDescriptorPoolSize size = {
          .type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
          .descriptorCount = descriptors,
      };
      VkDescriptorPoolCreateInfo info = {
          .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
          .maxSets = SETS_PER_POOL,
          .poolSizeCount = 1,
          .pPoolSizes = &size,
      };
      VK_CHECK(CreateDescriptorPool, gpu.device, &info, NULL,
               &gpu.descriptor_pools[gpu.num_descriptor_pools]);
      ++gpu.num_descriptor_pools;
    }
    ++gpu.descriptor_pools_used;
    gpu.sets_left = SETS_PER_POOL;
    /* A pool made for one large kernel has more. */
    gpu.descriptors_left =
        DESCRIPTORS_PER_POOL > needed ? DESCRIPTORS_PER_POOL : (int32_t)needed;
  }
  VkDescriptorSetAllocateInfo info = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
      .descriptorPool = gpu.descriptor_pools[gpu.descriptor_pools_used - 1],
      .descriptorSetCount = 1,
      .pSetLayouts = &k->set_layout,
  };
  VkResult result = vk.AllocateDescriptorSets(gpu.device, &info, set);
  if (!fresh && (result == VK_ERROR_OUT_OF_POOL_MEMORY ||
                 result == VK_ERROR_FRAGMENTED_POOL)) {
    /* Fewer descriptors left than counted: the next pool. */
    gpu.sets_left = 0;
    return allocate_set(k, set);
  }
  if (result != VK_SUCCESS)
    return vulkan_failed("vkAllocateDescriptorSets", result);
  --gpu.sets_left;
  gpu.descriptors_left -= (int32_t)needed;
  return TRACT_OK;
}

/* ---- Buffers of a launch ---- */

/* Binds buffer i: the placeholder for no bytes, the device copy of a
 * constant, else the host memory's resident copy in the batch, made from
 * the pool (and filled, when the kernel reads it) at its first launch. */
static tract_status bind_buffer(int32_t i, void *host, int64_t bytes,
                                int32_t flags) {
  VkDescriptorBufferInfo *b = &gpu.bindings[i];
  memset(b, 0, sizeof(*b));
  if (bytes == 0) {
    b->buffer = gpu.placeholder.buffer;
    b->range = VK_WHOLE_SIZE;
    return TRACT_OK;
  }
  b->range = (VkDeviceSize)bytes;
  if (flags & TRACT_GPU_CONSTANT)
    return constant_for(host, bytes, &b->buffer);
  int overlaps = 0;
  resident *r = find_resident(host, bytes, &overlaps);
  if (!r) {
    resident *residents = grow(gpu.residents, &gpu.residents_capacity,
                               gpu.num_residents + 1, sizeof(resident));
    if (!residents)
      return TRACT_ERROR;
    gpu.residents = residents;
    r = &gpu.residents[gpu.num_residents];
    memset(r, 0, sizeof(*r));
    if (take_pooled(bytes, &r->device))
      return TRACT_ERROR;
    r->host = host;
    r->bytes = bytes;
    ++gpu.num_residents;
    if (flags & TRACT_GPU_READ)
      memcpy(r->device.mapped, host, (size_t)bytes);
  }
  if (flags & TRACT_GPU_WRITE)
    r->written = 1;
  b->buffer = r->device.buffer;
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

/* Whether a buffer of this launch shares bytes with a resident of the
 * batch without being that same memory: the batch must run first. */
static int overlaps_batch(int32_t n, void *const *pointers,
                          const int64_t *bytes, const int32_t *flags) {
  for (int32_t i = 0; i < n; ++i) {
    if (bytes[i] == 0 || (flags[i] & TRACT_GPU_CONSTANT))
      continue;
    int overlaps = 0;
    if (!find_resident(pointers[i], bytes[i], &overlaps) && overlaps)
      return 1;
  }
  return 0;
}

static tract_status bind_buffers(int32_t n, void *const *pointers,
                                 const int64_t *bytes, const int32_t *flags) {
  if (n == 0)
    return TRACT_OK;
  VkDescriptorBufferInfo *bindings = grow(gpu.bindings, &gpu.bindings_capacity,
                                          n, sizeof(VkDescriptorBufferInfo));
  if (!bindings)
    return TRACT_ERROR;
  gpu.bindings = bindings;
  int32_t *order = grow(gpu.order, &gpu.order_capacity, n, sizeof(int32_t));
  if (!order)
    return TRACT_ERROR;
  gpu.order = order;
  order_by_size(n, bytes, gpu.order);
  for (int32_t k = 0; k < n; ++k) {
    int32_t i = gpu.order[k];
    if (bind_buffer(i, pointers[i], bytes[i], flags[i])) {
      char context[32];
      snprintf(context, sizeof(context), "buffer %d", (int)i);
      return explain(context);
    }
  }
  return TRACT_OK;
}

/* ---- Launches ---- */

/* Refuses what Vulkan would not take, with the argument at fault. */
static tract_status check_launch(const uint32_t *spirv, int64_t words,
                                 const int32_t groups[3], int32_t n,
                                 void *const *pointers, const int64_t *bytes,
                                 const int32_t *flags) {
  if (!spirv || words <= 0 || (uint64_t)words > SIZE_MAX / sizeof(uint32_t))
    return tract_set_error("no SPIR-V words (%lld)", (long long)words);
  for (int d = 0; d < 3; ++d)
    if (groups[d] < 0 || groups[d] > gpu.features.max_workgroup_count[d])
      return tract_set_error("%d workgroups along %c; the device runs 0 to "
                             "%d",
                             (int)groups[d], "xyz"[d],
                             (int)gpu.features.max_workgroup_count[d]);
  if (n < 0 || (uint32_t)n > gpu.limits.maxPerStageDescriptorStorageBuffers)
    return tract_set_error("%d buffers; the device binds 0 to %u", (int)n,
                           gpu.limits.maxPerStageDescriptorStorageBuffers);
  return tract_gpu_check_buffers(n, pointers, bytes, flags,
                                 gpu.features.max_storage_buffer_range);
}

/* Records the dispatch of `k` on the bound buffers into the batch, after
 * a barrier that orders it behind the batch's earlier dispatches. */
static tract_status record_dispatch(const kernel *k, const int32_t groups[3]) {
  VkDescriptorSet set;
  if (allocate_set(k, &set))
    return TRACT_ERROR;
  for (int32_t i = 0; i < k->num_buffers; ++i) {
    VkWriteDescriptorSet write = {
        .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
        .dstSet = set,
        .dstBinding = (uint32_t)i,
        .descriptorCount = 1,
        .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .pBufferInfo = &gpu.bindings[i],
    };
    vk.UpdateDescriptorSets(gpu.device, 1, &write, 0, NULL);
  }
  if (gpu.batch_launches == 0) {
    VK_CHECK(ResetCommandBuffer, gpu.commands, 0);
    VkCommandBufferBeginInfo begin = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    VK_CHECK(BeginCommandBuffer, gpu.commands, &begin);
  } else {
    VkMemoryBarrier barrier = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
        .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
    };
    vk.CmdPipelineBarrier(gpu.commands, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &barrier,
                          0, NULL, 0, NULL);
  }
  ++gpu.batch_launches;
  vk.CmdBindPipeline(gpu.commands, VK_PIPELINE_BIND_POINT_COMPUTE, k->pipeline);
  vk.CmdBindDescriptorSets(gpu.commands, VK_PIPELINE_BIND_POINT_COMPUTE,
                           k->layout, 0, 1, &set, 0, NULL);
  vk.CmdDispatch(gpu.commands, (uint32_t)groups[0], (uint32_t)groups[1],
                 (uint32_t)groups[2]);
  return TRACT_OK;
}

/* One launch into the open batch, under the lock. */
static tract_status record_kernel(const uint32_t *spirv, int64_t words,
                                  const char *entry, const int32_t groups[3],
                                  int32_t n, void *const *pointers,
                                  const int64_t *bytes, const int32_t *flags) {
  if (check_launch(spirv, words, groups, n, pointers, bytes, flags))
    return TRACT_ERROR;
  /* No workgroup: nothing runs, no buffer changes. */
  if (!groups[0] || !groups[1] || !groups[2])
    return TRACT_OK;
  const kernel *k = kernel_for(spirv, words, entry, n);
  if (!k)
    return TRACT_ERROR;
  /* A batch that partly shares this launch's memory, or is long enough,
   * runs first. */
  if ((gpu.batch_launches >= BATCH_LAUNCHES ||
       overlaps_batch(n, pointers, bytes, flags)) &&
      run_batch())
    return TRACT_ERROR;
  if (bind_buffers(n, pointers, bytes, flags) || record_dispatch(k, groups))
    return TRACT_ERROR;
  return TRACT_OK;
}

/* record_kernel and its context in the message; tract_gpu_record's and
 * tract_gpu_launch's body. */
static tract_status record(const uint32_t *spirv, int64_t words,
                           const char *entry, int32_t groups_x,
                           int32_t groups_y, int32_t groups_z,
                           int32_t num_buffers, void *const *pointers,
                           const int64_t *bytes, const int32_t *flags,
                           int run) {
  if (!entry)
    return tract_set_error("GPU kernel launched without an entry point");
  const int32_t groups[3] = {groups_x, groups_y, groups_z};
  pthread_mutex_lock(&gpu_lock);
  tract_status status = ensure_device();
  if (status == TRACT_OK) {
    status = record_kernel(spirv, words, entry, groups, num_buffers, pointers,
                           bytes, flags);
    if (status != TRACT_OK)
      abandon_batch();
    else if (run)
      status = run_batch();
    if (status != TRACT_OK) {
      char context[256];
      snprintf(context, sizeof(context), "GPU kernel '%s'", entry);
      explain(context);
    }
  }
  pthread_mutex_unlock(&gpu_lock);
  if (status == TRACT_OK)
    tract_profile_count_launch();
  return status;
}

int32_t tract_gpu_launch(const uint32_t *spirv, int64_t words,
                         const char *entry, int32_t groups_x, int32_t groups_y,
                         int32_t groups_z, int32_t num_buffers,
                         void *const *pointers, const int64_t *bytes,
                         const int32_t *flags) {
  return record(spirv, words, entry, groups_x, groups_y, groups_z, num_buffers,
                pointers, bytes, flags, /*run=*/1);
}

int32_t tract_gpu_record(const uint32_t *spirv, int64_t words,
                         const char *entry, int32_t groups_x, int32_t groups_y,
                         int32_t groups_z, int32_t num_buffers,
                         void *const *pointers, const int64_t *bytes,
                         const int32_t *flags) {
  return record(spirv, words, entry, groups_x, groups_y, groups_z, num_buffers,
                pointers, bytes, flags, /*run=*/0);
}

int32_t tract_gpu_sync(void) {
  pthread_mutex_lock(&gpu_lock);
  tract_status status = gpu.state == GPU_READY ? run_batch() : TRACT_OK;
  if (status != TRACT_OK)
    explain("GPU kernels");
  pthread_mutex_unlock(&gpu_lock);
  return status;
}

/* ---- Queries ---- */

int32_t tract_gpu_available(char *why, size_t size) {
  pthread_mutex_lock(&gpu_lock);
  if (gpu.state == GPU_UNTRIED)
    initialize();
  int32_t ready = gpu.state == GPU_READY;
  if (why && size)
    snprintf(why, size, "%s", ready ? "" : gpu.why);
  pthread_mutex_unlock(&gpu_lock);
  return ready;
}

const char *tract_gpu_device_name(void) {
  pthread_mutex_lock(&gpu_lock);
  if (gpu.state == GPU_UNTRIED)
    initialize();
  const char *name = gpu.name; /* "" unless READY */
  pthread_mutex_unlock(&gpu_lock);
  return name;
}

void tract_gpu_get_features(tract_gpu_features *features) {
  if (!features)
    return;
  pthread_mutex_lock(&gpu_lock);
  if (gpu.state == GPU_UNTRIED)
    initialize();
  *features = gpu.features; /* zeroes unless READY */
  pthread_mutex_unlock(&gpu_lock);
}

void tract_gpu_release(void) {
  pthread_mutex_lock(&gpu_lock);
  destroy_all();
  pthread_mutex_unlock(&gpu_lock);
}
