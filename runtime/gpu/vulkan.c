/* The Vulkan backend of the GPU runtime (tract_gpu.h), on the core that the
 * GPU runtimes share (core.h): what talks to Vulkan.
 *
 * Vulkan is reached through a table of function pointers that the loader
 * (libvulkan.so.1, opened with dlopen) hands out, so that programs link
 * nothing of Vulkan and still start where it is missing. One instance, one
 * device, one queue; one pipeline per kernel.
 *
 * Device buffers live in host-visible, coherent memory, mapped once, which
 * the core copies to and from. Launches are recorded into one command
 * buffer, a barrier between two dispatches, until the batch runs
 * (tract_gpu_sync, or tract_gpu_launch): it is submitted and waited for on
 * a fence. Descriptor sets come from pools reset when the batch closes. */

/* dlopen under -std=c11 too. */
#define _POSIX_C_SOURCE 200809L
#define VK_NO_PROTOTYPES
#include "runtime/gpu/core.h"
#include "runtime/tract_gpu.h"
#include "runtime/tract_runtime.h"

#include <vulkan/vulkan.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
typedef struct vulkan_buffer {
  tract_gpu_buffer base;
  VkBuffer buffer;
  VkDeviceMemory memory;
} vulkan_buffer;

/* A kernel's pipeline. */
typedef struct vulkan_kernel {
  int32_t num_buffers;
  VkShaderModule module;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkPipeline pipeline;
} vulkan_kernel;

/* Descriptor sets, and storage-buffer descriptors, per descriptor pool. */
enum { SETS_PER_POOL = 64, DESCRIPTORS_PER_POOL = 1024 };

/* Under the core's lock. */
static struct {
  void *loader;
  VkInstance instance;
  uint32_t instance_version;
  VkPhysicalDevice physical;
  uint32_t queue_family;
  VkPhysicalDeviceLimits limits;
  VkPhysicalDeviceMemoryProperties memory;
  tract_gpu_features features;
  VkDevice device;
  int device_loaded; /* every device function is in `vk` */
  VkQueue queue;
  VkCommandPool command_pool;
  VkCommandBuffer commands;
  VkFence fence;
  /* The open batch's descriptor pools (the last ones in use, with sets and
   * descriptors left). */
  VkDescriptorPool *descriptor_pools;
  int32_t num_descriptor_pools, descriptor_pools_capacity;
  int32_t descriptor_pools_used;
  int32_t sets_left, descriptors_left;
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
  TRACT_GPU_CHECK(VkResult, VK_SUCCESS, vulkan_failed, "vk" #name,             \
                  vk.name(__VA_ARGS__))

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

/* The first device with Vulkan 1.1 and a compute queue, unless
 * TRACT_VULKAN_DEVICE chooses one (which must have them). */
static tract_status choose_device(void) {
  VkPhysicalDevice devices[16];
  uint32_t count = 16;
  VkResult result = vk.EnumeratePhysicalDevices(gpu.instance, &count, devices);
  if (result != VK_SUCCESS && result != VK_INCOMPLETE)
    return vulkan_failed("vkEnumeratePhysicalDevices", result);
  int32_t chosen;
  if (tract_gpu_choose_device("TRACT_VULKAN_DEVICE", "Vulkan", count, &chosen))
    return TRACT_ERROR;
  if (chosen >= 0) {
    const char *why = unusable(devices[chosen], &gpu.queue_family);
    if (why) {
      VkPhysicalDeviceProperties properties;
      vk.GetPhysicalDeviceProperties(devices[chosen], &properties);
      return tract_set_error("TRACT_VULKAN_DEVICE=%s: %s %s",
                             getenv("TRACT_VULKAN_DEVICE"),
                             properties.deviceName, why);
    }
    gpu.physical = devices[chosen];
    return TRACT_OK;
  }
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
static void read_properties(tract_gpu_core *core) {
  VkPhysicalDeviceSubgroupProperties subgroup = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES,
  };
  VkPhysicalDeviceProperties2 properties = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
      .pNext = &subgroup,
  };
  vk.GetPhysicalDeviceProperties2(gpu.physical, &properties);
  vk.GetPhysicalDeviceMemoryProperties(gpu.physical, &gpu.memory);
  snprintf(core->name, sizeof(core->name), "%s",
           properties.properties.deviceName);
  gpu.limits = properties.properties.limits;
  tract_gpu_features *f = &gpu.features;
  f->max_workgroup_invocations =
      clamp_to_int32(gpu.limits.maxComputeWorkGroupInvocations);
  for (int d = 0; d < 3; ++d) {
    f->max_workgroup_size[d] =
        clamp_to_int32(gpu.limits.maxComputeWorkGroupSize[d]);
    f->max_workgroup_count[d] =
        clamp_to_int32(gpu.limits.maxComputeWorkGroupCount[d]);
    core->limits.max_groups[d] = f->max_workgroup_count[d];
  }
  f->subgroup_size = clamp_to_int32(subgroup.subgroupSize);
  f->max_storage_buffer_range = gpu.limits.maxStorageBufferRange;
  /* The workgroup size is the shader's. */
  core->limits.max_block = -1;
  core->limits.max_buffers =
      clamp_to_int32(gpu.limits.maxPerStageDescriptorStorageBuffers);
  core->limits.max_buffer_bytes = f->max_storage_buffer_range;
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

/* ---- Buffers ---- */

static void destroy_buffer(tract_gpu_buffer *buffer) {
  vulkan_buffer *b = (vulkan_buffer *)buffer;
  if (b->buffer)
    vk.DestroyBuffer(gpu.device, b->buffer, NULL);
  if (b->memory) /* unmaps it too */
    vk.FreeMemory(gpu.device, b->memory, NULL);
}

static tract_status make_buffer(VkDeviceSize capacity, vulkan_buffer *b) {
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
  VK_CHECK(MapMemory, gpu.device, b->memory, 0, VK_WHOLE_SIZE, 0,
           &b->base.mapped);
  return TRACT_OK;
}

/* A storage buffer, mapped for as long as it lives. */
static tract_status allocate_buffer(tract_gpu_buffer *buffer,
                                    uint64_t capacity) {
  if (make_buffer((VkDeviceSize)capacity, (vulkan_buffer *)buffer) == TRACT_OK)
    return TRACT_OK;
  destroy_buffer(buffer);
  return TRACT_ERROR;
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

static void destroy_kernel(void *kernel) {
  vulkan_kernel *k = kernel;
  if (k->pipeline)
    vk.DestroyPipeline(gpu.device, k->pipeline, NULL);
  if (k->layout)
    vk.DestroyPipelineLayout(gpu.device, k->layout, NULL);
  if (k->set_layout)
    vk.DestroyDescriptorSetLayout(gpu.device, k->set_layout, NULL);
  if (k->module)
    vk.DestroyShaderModule(gpu.device, k->module, NULL);
  free(k);
}

/* The shader module, layouts and pipeline of the launch's kernel. */
static tract_status build_pipeline(const tract_gpu_launch_args *launch,
                                   vulkan_kernel *k) {
  VkShaderModuleCreateInfo module = {
      .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
      .codeSize = (size_t)launch->size * sizeof(uint32_t),
      .pCode = launch->code,
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
              .pName = launch->entry,
          },
      .layout = k->layout,
  };
  VK_CHECK(CreateComputePipelines, gpu.device, VK_NULL_HANDLE, 1, &pipeline,
           NULL, &k->pipeline);
  return TRACT_OK;
}

static tract_status make_kernel(const tract_gpu_launch_args *launch,
                                void **kernel) {
  vulkan_kernel *k = calloc(1, sizeof(vulkan_kernel));
  if (!k)
    return tract_set_error("out of memory in the GPU runtime");
  k->num_buffers = launch->num_buffers;
  if (build_pipeline(launch, k)) {
    destroy_kernel(k);
    return TRACT_ERROR;
  }
  *kernel = k;
  return TRACT_OK;
}

static tract_status check_spirv(const void *spirv, int64_t words) {
  if (!spirv || words <= 0 || (uint64_t)words > SIZE_MAX / sizeof(uint32_t))
    return tract_set_error("no SPIR-V words (%lld)", (long long)words);
  return TRACT_OK;
}

/* ---- Batches ---- */

/* A descriptor set of `k` for this launch, from the batch's pools. */
static tract_status allocate_set(const vulkan_kernel *k, VkDescriptorSet *set) {
  uint32_t needed = k->num_buffers ? (uint32_t)k->num_buffers : 1;
  int fresh = 0;
  if (gpu.sets_left == 0 || gpu.descriptors_left < (int32_t)needed) {
    fresh = 1;
    if (gpu.descriptor_pools_used == gpu.num_descriptor_pools) {
      VkDescriptorPool *pools = tract_gpu_grow(
          gpu.descriptor_pools, &gpu.descriptor_pools_capacity,
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

/* Records the dispatch of the kernel on the bound buffers into the batch's
 * command buffer, which its first launch begins; after a barrier that
 * orders it behind the batch's earlier dispatches otherwise. */
static tract_status dispatch(void *kernel, const tract_gpu_launch_args *launch,
                             tract_gpu_buffer *const *bound, void *bindings,
                             int first) {
  const vulkan_kernel *k = kernel;
  VkDescriptorBufferInfo *infos = bindings;
  VkDescriptorSet set;
  if (allocate_set(k, &set))
    return TRACT_ERROR;
  for (int32_t i = 0; i < launch->num_buffers; ++i) {
    /* A placeholder binds whole. */
    int64_t bytes = launch->bytes[i];
    infos[i] = (VkDescriptorBufferInfo){
        .buffer = ((const vulkan_buffer *)bound[i])->buffer,
        .range = bytes ? (VkDeviceSize)bytes : VK_WHOLE_SIZE,
    };
    VkWriteDescriptorSet write = {
        .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
        .dstSet = set,
        .dstBinding = (uint32_t)i,
        .descriptorCount = 1,
        .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .pBufferInfo = &infos[i],
    };
    vk.UpdateDescriptorSets(gpu.device, 1, &write, 0, NULL);
  }
  if (first) {
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
  vk.CmdBindPipeline(gpu.commands, VK_PIPELINE_BIND_POINT_COMPUTE, k->pipeline);
  vk.CmdBindDescriptorSets(gpu.commands, VK_PIPELINE_BIND_POINT_COMPUTE,
                           k->layout, 0, 1, &set, 0, NULL);
  vk.CmdDispatch(gpu.commands, (uint32_t)launch->groups[0],
                 (uint32_t)launch->groups[1], (uint32_t)launch->groups[2]);
  return TRACT_OK;
}

/* Submits the batch's command buffer and waits for it. */
static tract_status submit_batch(void) {
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
  VK_CHECK(EndCommandBuffer, gpu.commands);
  VK_CHECK(ResetFences, gpu.device, 1, &gpu.fence);
  VkSubmitInfo submit = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
      .commandBufferCount = 1,
      .pCommandBuffers = &gpu.commands,
  };
  VK_CHECK(QueueSubmit, gpu.queue, 1, &submit, gpu.fence);
  VK_CHECK(WaitForFences, gpu.device, 1, &gpu.fence, VK_TRUE, UINT64_MAX);
  return TRACT_OK;
}

/* The batch's descriptor sets are free again, and a batch dropped unrun
 * leaves nothing recorded. */
static void close_batch(int dropped) {
  if (dropped)
    vk.ResetCommandBuffer(gpu.commands, 0);
  for (int32_t i = 0; i < gpu.descriptor_pools_used; ++i)
    vk.ResetDescriptorPool(gpu.device, gpu.descriptor_pools[i], 0);
  gpu.descriptor_pools_used = 0;
  gpu.sets_left = gpu.descriptors_left = 0;
}

/* ---- The device ---- */

/* The command buffer each batch records again, and its fence. */
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
  return TRACT_OK;
}

/* Opens the loader and makes the instance and the device. */
static tract_status start(tract_gpu_core *core) {
  if (open_loader() || create_instance() || choose_device())
    return TRACT_ERROR;
  read_properties(core);
  if (create_device() || create_launch_objects())
    return TRACT_ERROR;
  return TRACT_OK;
}

/* Every object made from the device, then the device, the instance and
 * the loader. */
static void stop(tract_gpu_core *core) {
  if (gpu.device_loaded) {
    vk.DeviceWaitIdle(gpu.device);
    tract_gpu_free_objects(core);
    for (int32_t i = 0; i < gpu.num_descriptor_pools; ++i)
      vk.DestroyDescriptorPool(gpu.device, gpu.descriptor_pools[i], NULL);
    if (gpu.fence)
      vk.DestroyFence(gpu.device, gpu.fence, NULL);
    if (gpu.command_pool) /* frees the command buffer */
      vk.DestroyCommandPool(gpu.device, gpu.command_pool, NULL);
  }
  if (gpu.device && vk.DestroyDevice)
    vk.DestroyDevice(gpu.device, NULL);
  if (gpu.instance && vk.DestroyInstance)
    vk.DestroyInstance(gpu.instance, NULL);
  if (gpu.loader)
    dlclose(gpu.loader);
  free(gpu.descriptor_pools);
  memset(&gpu, 0, sizeof(gpu));
  memset(&vk, 0, sizeof(vk));
}

static const tract_gpu_backend vulkan = {
    .names = {.api = "GPU", .groups = "workgroups"},
    .placeholder = 1,
    .device = {.start = start, .stop = stop},
    .kernels = {.check = check_spirv,
                .make = make_kernel,
                .destroy = destroy_kernel},
    .buffers = {.size = sizeof(vulkan_buffer),
                .allocate = allocate_buffer,
                .destroy = destroy_buffer},
    .batch = {.binding_bytes = sizeof(VkDescriptorBufferInfo),
              .dispatch = dispatch,
              .run = submit_batch,
              .close = close_batch},
};

static tract_gpu_core runtime = TRACT_GPU_CORE(vulkan);

/* ---- Entry points ---- */

int32_t tract_gpu_launch(const uint32_t *spirv, int64_t words,
                         const char *entry, int32_t groups_x, int32_t groups_y,
                         int32_t groups_z, int32_t num_buffers,
                         void *const *pointers, const int64_t *bytes,
                         const int32_t *flags) {
  return tract_gpu_core_launch(&runtime, spirv, words, entry, groups_x,
                               groups_y, groups_z, 0, num_buffers, pointers,
                               bytes, flags, /*run=*/1);
}

int32_t tract_gpu_record(const uint32_t *spirv, int64_t words,
                         const char *entry, int32_t groups_x, int32_t groups_y,
                         int32_t groups_z, int32_t num_buffers,
                         void *const *pointers, const int64_t *bytes,
                         const int32_t *flags) {
  return tract_gpu_core_launch(&runtime, spirv, words, entry, groups_x,
                               groups_y, groups_z, 0, num_buffers, pointers,
                               bytes, flags, /*run=*/0);
}

int32_t tract_gpu_sync(void) { return tract_gpu_core_sync(&runtime); }

void tract_gpu_discard(const void *host, int64_t bytes) {
  tract_gpu_core_discard(&runtime, host, bytes);
}

int32_t tract_gpu_available(char *why, size_t size) {
  return tract_gpu_core_available(&runtime, why, size);
}

const char *tract_gpu_device_name(void) {
  return tract_gpu_core_device_name(&runtime);
}

void tract_gpu_get_features(tract_gpu_features *features) {
  if (!features)
    return;
  tract_gpu_core_lock(&runtime);
  *features = gpu.features; /* zeroes unless the device is there */
  tract_gpu_core_unlock(&runtime);
}

void tract_gpu_release(void) { tract_gpu_core_release(&runtime); }
