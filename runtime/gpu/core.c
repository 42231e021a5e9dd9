/* The core of the GPU host runtimes (core.h).
 *
 * A launch is checked, its kernel made at its first launch, and its
 * buffers bound largest first: zero-byte ones to the placeholder,
 * CONSTANT ones to their device copy, uploaded once and found again by
 * host address and size, the others to their copy in the open batch (a
 * "resident"), taken from the pool and filled at the first launch of the
 * batch that binds that memory. Launches join the batch until it runs;
 * then what its kernels wrote is copied back and its pooled buffers are
 * free again. The pool keeps, slot by slot, the largest buffer a batch
 * needed, so that a model running again finds its buffers made. */

/* strdup under -std=c11 too. */
#define _POSIX_C_SOURCE 200809L
#include "runtime/gpu/core.h"
#include "runtime/tract_gpu.h"
#include "runtime/tract_profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A kernel, named by its code's address and size, its entry point and its
 * buffer count; `made` is the backend's. */
typedef struct tract_gpu_kernel {
  const void *code;
  int64_t size;
  char *entry;
  int32_t num_buffers;
  void *made;
} tract_gpu_kernel;

/* The device copy of a launch's CONSTANT host data. */
typedef struct tract_gpu_constant {
  const void *host;
  int64_t bytes;
  tract_gpu_buffer *device;
} tract_gpu_constant;

/* A slot of the pool; a failed allocation leaves it empty (NULL). */
typedef struct tract_gpu_pooled {
  tract_gpu_buffer *device;
  int busy; /* a resident of the open batch */
} tract_gpu_pooled;

/* The device copy of host memory host .. host + bytes in the open batch. */
typedef struct tract_gpu_resident {
  void *host;
  int64_t bytes;
  tract_gpu_buffer *device; /* a pooled buffer */
  int written;              /* by a kernel of the batch: copied out at run */
  int32_t buffer;           /* the index it had in that kernel's launch */
} tract_gpu_resident;

enum { CORE_UNTRIED = 0, CORE_READY, CORE_FAILED };

/* Bytes of the placeholder; the launches a batch takes before it runs on
 * its own. */
enum { PLACEHOLDER_BYTES = 16, BATCH_LAUNCHES = 256 };

/* ---- Errors and arrays ---- */

tract_status tract_gpu_explain(const char *context) {
  /* tract_set_error formats into a copy: it may quote the last error. */
  return tract_set_error("%s: %s", context, tract_last_error());
}

void *tract_gpu_grow(void *items, int32_t *capacity, int32_t needed,
                     size_t size) {
  if (needed <= *capacity)
    return items;
  int32_t grown = *capacity ? *capacity : 8;
  while (grown < needed)
    grown = grown > INT32_MAX / 2 ? needed : grown * 2;
  void *moved = realloc(items, (size_t)grown * size);
  if (!moved) {
    tract_set_error("out of memory in the GPU runtime");
    return NULL;
  }
  *capacity = grown;
  return moved;
}

/* ---- Device buffers ---- */

/* A device buffer of `capacity` bytes; NULL with a message that says how
 * large it was to be. */
static tract_gpu_buffer *allocate(tract_gpu_core *core, uint64_t capacity) {
  tract_gpu_buffer *buffer = calloc(1, core->backend->buffers.size);
  if (!buffer) {
    tract_set_error("out of memory in the GPU runtime");
  } else if (core->backend->buffers.allocate(buffer, capacity) == TRACT_OK) {
    buffer->capacity = capacity;
    return buffer;
  }
  free(buffer);
  char context[64];
  snprintf(context, sizeof(context), "a device buffer of %llu bytes",
           (unsigned long long)capacity);
  tract_gpu_explain(context);
  return NULL;
}

static void destroy(tract_gpu_core *core, tract_gpu_buffer *buffer) {
  if (!buffer)
    return;
  core->backend->buffers.destroy(buffer);
  free(buffer);
}

/* Copies `bytes` from `host` to the device buffer, from `offset` on. */
static tract_status upload(tract_gpu_core *core, tract_gpu_buffer *device,
                           uint64_t offset, const void *host, int64_t bytes,
                           tract_profile_transfer kind) {
  tract_profile_count_transfer(kind, bytes);
  if (!device->mapped)
    return core->backend->buffers.upload(device, offset, host, bytes);
  memcpy((char *)device->mapped + offset, host, (size_t)bytes);
  return TRACT_OK;
}

static tract_status download(tract_gpu_core *core, void *host,
                             tract_gpu_buffer *device, int64_t bytes) {
  tract_profile_count_transfer(TRACT_TRANSFER_DOWNLOADS, bytes);
  if (!device->mapped)
    return core->backend->buffers.download(host, device, bytes);
  memcpy(host, device->mapped, (size_t)bytes);
  return TRACT_OK;
}

/* The buffer bound in place of zero-byte ones, zeroed: a kernel may look. */
static tract_status make_placeholder(tract_gpu_core *core) {
  static const unsigned char zeroes[PLACEHOLDER_BYTES];
  core->placeholder = allocate(core, PLACEHOLDER_BYTES);
  if (!core->placeholder)
    return TRACT_ERROR;
  /* Counted with the weights: once per device. */
  return upload(core, core->placeholder, 0, zeroes, PLACEHOLDER_BYTES,
                TRACT_TRANSFER_WEIGHTS);
}

/* The device copy of constant host data, uploaded at its first use. */
static tract_gpu_buffer *constant_for(tract_gpu_core *core, const void *host,
                                      int64_t bytes) {
  for (int32_t i = 0; i < core->num_constants; ++i) {
    const tract_gpu_constant *c = &core->constants[i];
    if (c->host == host && c->bytes == bytes)
      return c->device;
  }
  tract_gpu_constant *constants =
      tract_gpu_grow(core->constants, &core->constants_capacity,
                     core->num_constants + 1, sizeof(tract_gpu_constant));
  if (!constants)
    return NULL;
  core->constants = constants;
  tract_gpu_buffer *device = allocate(core, (uint64_t)bytes);
  if (!device)
    return NULL;
  if (upload(core, device, 0, host, bytes, TRACT_TRANSFER_WEIGHTS)) {
    destroy(core, device);
    return NULL;
  }
  core->constants[core->num_constants++] =
      (tract_gpu_constant){host, bytes, device};
  return device;
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

static uint64_t slot_capacity(const tract_gpu_pooled *slot) {
  return slot->device ? slot->device->capacity : 0;
}

/* A pooled buffer of at least `bytes`, marked busy: the smallest free one
 * that is large enough, else the smallest free one made again that large
 * (callers ask for the largest first), else a new one. */
static tract_gpu_buffer *take_pooled(tract_gpu_core *core, int64_t bytes) {
  int32_t fit = -1, smallest = -1;
  for (int32_t i = 0; i < core->pool_size; ++i) {
    if (core->pool[i].busy)
      continue;
    uint64_t capacity = slot_capacity(&core->pool[i]);
    if (capacity >= (uint64_t)bytes &&
        (fit < 0 || capacity < slot_capacity(&core->pool[fit])))
      fit = i;
    if (smallest < 0 || capacity < slot_capacity(&core->pool[smallest]))
      smallest = i;
  }
  if (fit < 0) {
    if (smallest >= 0) {
      fit = smallest;
      destroy(core, core->pool[fit].device);
      core->pool[fit].device = NULL;
    } else {
      tract_gpu_pooled *pool =
          tract_gpu_grow(core->pool, &core->pool_capacity, core->pool_size + 1,
                         sizeof(tract_gpu_pooled));
      if (!pool)
        return NULL;
      core->pool = pool;
      fit = core->pool_size++;
      core->pool[fit] = (tract_gpu_pooled){NULL, 0};
    }
    /* A failed slot stays, empty, for the next launch to fill. */
    core->pool[fit].device = allocate(core, pool_capacity(bytes));
    if (!core->pool[fit].device)
      return NULL;
  }
  core->pool[fit].busy = 1;
  return core->pool[fit].device;
}

void tract_gpu_free_objects(tract_gpu_core *core) {
  for (int32_t i = 0; i < core->num_kernels; ++i) {
    if (core->backend->kernels.destroy)
      core->backend->kernels.destroy(core->kernels[i].made);
    free(core->kernels[i].entry);
  }
  core->num_kernels = 0;
  for (int32_t i = 0; i < core->num_constants; ++i)
    destroy(core, core->constants[i].device);
  core->num_constants = 0;
  for (int32_t i = 0; i < core->pool_size; ++i)
    destroy(core, core->pool[i].device);
  core->pool_size = 0;
  core->num_residents = 0;
  destroy(core, core->placeholder);
  core->placeholder = NULL;
}

/* ---- The device ---- */

/* Frees everything and forgets it all, as if nothing had been tried. */
static void forget_all(tract_gpu_core *core) {
  core->backend->device.stop(core);
  free(core->kernels);
  free(core->constants);
  free(core->pool);
  free(core->residents);
  free(core->order);
  free(core->bound);
  free(core->bindings);
  memset(&core->state, 0, sizeof(*core) - offsetof(tract_gpu_core, state));
}

static tract_status enter(tract_gpu_core *core) {
  return core->backend->device.enter ? core->backend->device.enter() : TRACT_OK;
}

static tract_status leave(tract_gpu_core *core, tract_status status) {
  return core->backend->device.leave ? core->backend->device.leave(status)
                                     : status;
}

/* Starts the device, once: READY, or FAILED with the reason kept for
 * every later call (and nothing left made). */
static void start(tract_gpu_core *core) {
  tract_status status = core->backend->device.start(core);
  if (status == TRACT_OK && core->backend->placeholder) {
    status = enter(core);
    if (status == TRACT_OK)
      status = leave(core, make_placeholder(core));
  }
  if (status == TRACT_OK) {
    core->state = CORE_READY;
    return;
  }
  char why[sizeof(core->why)];
  snprintf(why, sizeof(why), "%s", tract_last_error());
  forget_all(core);
  memcpy(core->why, why, sizeof(why));
  core->state = CORE_FAILED;
}

/* TRACT_OK once the device is there; under the lock. */
static tract_status ensure_started(tract_gpu_core *core) {
  if (core->state == CORE_UNTRIED)
    start(core);
  return core->state == CORE_READY ? TRACT_OK
                                   : tract_set_error("%s", core->why);
}

tract_status tract_gpu_choose_device(const char *variable, const char *api,
                                     int64_t count, int32_t *index) {
  *index = -1;
  if (count <= 0)
    return tract_set_error("no %s device", api);
  const char *chosen = getenv(variable);
  if (!chosen || !*chosen)
    return TRACT_OK;
  char *end;
  long value = strtol(chosen, &end, 10);
  if (*end || end == chosen || value < 0)
    return tract_set_error("%s=%s is not a device number", variable, chosen);
  if (value >= count)
    return tract_set_error("%s=%s: no such device (the %s devices are 0 to "
                           "%lld)",
                           variable, chosen, api, (long long)count - 1);
  *index = (int32_t)value;
  return TRACT_OK;
}

/* ---- Kernels ---- */

/* The kernel of this launch: made at its first launch, the same one after.
 * NULL with a message on failure. */
static tract_gpu_kernel *kernel_for(tract_gpu_core *core,
                                    const tract_gpu_launch_args *launch) {
  for (int32_t i = 0; i < core->num_kernels; ++i) {
    tract_gpu_kernel *k = &core->kernels[i];
    if (k->code == launch->code && k->size == launch->size &&
        k->num_buffers == launch->num_buffers &&
        !strcmp(k->entry, launch->entry))
      return k;
  }
  tract_gpu_kernel *kernels =
      tract_gpu_grow(core->kernels, &core->kernels_capacity,
                     core->num_kernels + 1, sizeof(tract_gpu_kernel));
  if (!kernels)
    return NULL;
  core->kernels = kernels;
  tract_gpu_kernel made = {.code = launch->code,
                           .size = launch->size,
                           .entry = strdup(launch->entry),
                           .num_buffers = launch->num_buffers};
  if (!made.entry) {
    tract_set_error("out of memory in the GPU runtime");
    return NULL;
  }
  if (core->backend->kernels.make(launch, &made.made)) {
    free(made.entry);
    return NULL;
  }
  core->kernels[core->num_kernels] = made;
  return &core->kernels[core->num_kernels++];
}

/* ---- Checks ---- */

tract_status tract_gpu_check_text(const void *code, int64_t size,
                                  const char *what) {
  if (!code || size <= 0)
    return tract_set_error("no %s (%lld bytes)", what, (long long)size);
  if (((const char *)code)[size] != '\0')
    return tract_set_error("the %s of %lld bytes does not end with a NUL", what,
                           (long long)size);
  return TRACT_OK;
}

/* Refuses a count outside least .. most (most < 0: no known limit). */
static tract_status check_count(int32_t count, const char *what, int32_t least,
                                int32_t most, const char *verb) {
  if (count >= least && (most < 0 || count <= most))
    return TRACT_OK;
  if (most < 0)
    return tract_set_error("%d %s", (int)count, what);
  return tract_set_error("%d %s; the device %s %d to %d", (int)count, what,
                         verb, (int)least, (int)most);
}

/* The buffers as tract_gpu.h describes them: the arrays are there when
 * n > 0; each buffer has 0 to max_bytes bytes (max_bytes < 0: no limit)
 * at a pointer when it has any, known flags, and CONSTANT without WRITE. */
static tract_status check_buffers(int32_t n, void *const *pointers,
                                  const int64_t *bytes, const int32_t *flags,
                                  int64_t max_bytes) {
  if (n > 0 && (!pointers || !bytes || !flags))
    return tract_set_error("%d buffers but no pointers, sizes or flags",
                           (int)n);
  for (int32_t i = 0; i < n; ++i) {
    if (bytes[i] < 0 || (max_bytes >= 0 && bytes[i] > max_bytes)) {
      if (max_bytes < 0)
        return tract_set_error("buffer %d has %lld bytes", (int)i,
                               (long long)bytes[i]);
      return tract_set_error("buffer %d has %lld bytes; the device binds 0 "
                             "to %lld",
                             (int)i, (long long)bytes[i], (long long)max_bytes);
    }
    if (bytes[i] > 0 && !pointers[i])
      return tract_set_error("buffer %d has %lld bytes at NULL", (int)i,
                             (long long)bytes[i]);
    if (flags[i] & ~(TRACT_GPU_READ | TRACT_GPU_WRITE | TRACT_GPU_CONSTANT))
      return tract_set_error("buffer %d has unknown flags %d", (int)i,
                             (int)flags[i]);
    if ((flags[i] & TRACT_GPU_CONSTANT) && (flags[i] & TRACT_GPU_WRITE))
      return tract_set_error("buffer %d is CONSTANT, so the kernel cannot "
                             "write it",
                             (int)i);
  }
  return TRACT_OK;
}

/* Refuses what the device would not take, with the argument at fault. */
static tract_status check_launch(const tract_gpu_core *core,
                                 const tract_gpu_launch_args *launch) {
  const tract_gpu_backend *backend = core->backend;
  const tract_gpu_limits *limits = &core->limits;
  if (backend->kernels.check(launch->code, launch->size))
    return TRACT_ERROR;
  for (int d = 0; d < 3; ++d) {
    char what[48];
    snprintf(what, sizeof(what), "%s along %c", backend->names.groups,
             "xyz"[d]);
    if (check_count(launch->groups[d], what, 0, limits->max_groups[d], "runs"))
      return TRACT_ERROR;
  }
  if (backend->names.block) {
    char what[48];
    snprintf(what, sizeof(what), "threads per %s", backend->names.block);
    if (check_count(launch->block_x, what, 1, limits->max_block, "runs"))
      return TRACT_ERROR;
  }
  if (check_count(launch->num_buffers, "buffers", 0, limits->max_buffers,
                  "binds"))
    return TRACT_ERROR;
  return check_buffers(launch->num_buffers, launch->pointers, launch->bytes,
                       launch->flags, limits->max_buffer_bytes);
}

/* ---- Batches ---- */

/* The resident copy that holds host .. host + bytes, or NULL: the one of
 * memory at the same address whose device buffer has room for `bytes`.
 * Views of one buffer start at its address and span what their kernel
 * reaches, so that one launch may bind a shorter or longer span of memory
 * that another bound (a padded buffer, then its interior); the resident
 * grows to the longest. *overlaps is set, and NULL returned, when another
 * resident shares some of those bytes (the residents of a batch never
 * share any). */
static tract_gpu_resident *find_resident(tract_gpu_core *core, const void *host,
                                         int64_t bytes, int *overlaps) {
  const char *begin = host, *end = begin + bytes;
  tract_gpu_resident *found = NULL;
  for (int32_t i = 0; i < core->num_residents; ++i) {
    tract_gpu_resident *r = &core->residents[i];
    const char *first = r->host, *last = first + r->bytes;
    if (r->host == host && (uint64_t)bytes <= r->device->capacity)
      found = r;
    else if (begin < last && first < end)
      *overlaps = 1;
  }
  return *overlaps ? NULL : found;
}

/* Whether a buffer of this launch shares bytes with a resident of the
 * batch without being that same memory: the batch must run first. */
static int overlaps_batch(tract_gpu_core *core,
                          const tract_gpu_launch_args *launch) {
  for (int32_t i = 0; i < launch->num_buffers; ++i) {
    if (launch->bytes[i] == 0 || (launch->flags[i] & TRACT_GPU_CONSTANT))
      continue;
    int overlaps = 0;
    if (!find_resident(core, launch->pointers[i], launch->bytes[i],
                       &overlaps) &&
        overlaps)
      return 1;
  }
  return 0;
}

/* Forgets the open batch: its residents and pooled buffers are free
 * again. */
static void close_batch(tract_gpu_core *core, int dropped) {
  core->num_residents = 0;
  for (int32_t i = 0; i < core->pool_size; ++i)
    core->pool[i].busy = 0;
  if (core->backend->batch.close)
    core->backend->batch.close(dropped);
  core->launches = 0;
}

/* TRACT_OK, or an error when launches were dropped since the last run. */
static tract_status report_dropped(tract_gpu_core *core) {
  if (!core->dropped)
    return TRACT_OK;
  core->dropped = 0;
  return tract_set_error("launches were dropped unrun after one failed");
}

/* Runs the open batch and copies the buffers its kernels wrote back to the
 * host; the batch is closed whatever happens. */
static tract_status run_batch(tract_gpu_core *core) {
  if (core->launches == 0)
    return report_dropped(core);
  tract_status status = core->backend->batch.run();
  for (int32_t i = 0; status == TRACT_OK && i < core->num_residents; ++i) {
    const tract_gpu_resident *r = &core->residents[i];
    if (r->written && download(core, r->host, r->device, r->bytes)) {
      char context[32];
      snprintf(context, sizeof(context), "buffer %d", (int)r->buffer);
      status = tract_gpu_explain(context);
    }
  }
  close_batch(core, 0);
  return status == TRACT_OK ? report_dropped(core) : status;
}

/* Drops the open batch unrun, after a failed launch: the batch's host
 * memory may be freed when the failed run returns, so nothing of it may be
 * copied back later. The next run says so. */
static void abandon_batch(tract_gpu_core *core) {
  int dropped = core->launches > 0;
  if (dropped)
    core->dropped = 1;
  close_batch(core, dropped);
}

/* ---- Launches ---- */

/* Binds buffer i: the placeholder for no bytes, the device copy of a
 * constant, else the host memory's resident copy in the batch, made from
 * the pool (and filled, when the kernel reads it) at its first launch. */
static tract_status bind_buffer(tract_gpu_core *core, int32_t i, void *host,
                                int64_t bytes, int32_t flags) {
  tract_gpu_buffer **bound = &core->bound[i];
  if (bytes == 0) {
    *bound = core->placeholder;
    return TRACT_OK;
  }
  if (flags & TRACT_GPU_CONSTANT) {
    *bound = constant_for(core, host, bytes);
    return *bound ? TRACT_OK : TRACT_ERROR;
  }
  int overlaps = 0;
  tract_gpu_resident *r = find_resident(core, host, bytes, &overlaps);
  if (r && bytes > r->bytes) {
    /* A longer span of the same memory: the bytes past the resident's, as
     * the host has them (no launch of the batch wrote there). */
    if ((flags & TRACT_GPU_READ) &&
        upload(core, r->device, (uint64_t)r->bytes, (const char *)host + r->bytes,
               bytes - r->bytes, TRACT_TRANSFER_UPLOADS))
      return TRACT_ERROR;
    r->bytes = bytes;
  }
  if (!r) {
    tract_gpu_resident *residents =
        tract_gpu_grow(core->residents, &core->residents_capacity,
                       core->num_residents + 1, sizeof(tract_gpu_resident));
    if (!residents)
      return TRACT_ERROR;
    core->residents = residents;
    tract_gpu_buffer *device = take_pooled(core, bytes);
    if (!device ||
        ((flags & TRACT_GPU_READ) &&
         upload(core, device, 0, host, bytes, TRACT_TRANSFER_UPLOADS)))
      return TRACT_ERROR;
    r = &core->residents[core->num_residents++];
    *r = (tract_gpu_resident){host, bytes, device, 0, 0};
  }
  if (flags & TRACT_GPU_WRITE) {
    r->written = 1;
    r->buffer = i;
  }
  *bound = r->device;
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

static tract_status bind_buffers(tract_gpu_core *core,
                                 const tract_gpu_launch_args *launch) {
  int32_t n = launch->num_buffers;
  if (n == 0)
    return TRACT_OK;
  tract_gpu_buffer **bound = tract_gpu_grow(core->bound, &core->bound_capacity,
                                            n, sizeof(tract_gpu_buffer *));
  if (!bound)
    return TRACT_ERROR;
  core->bound = bound;
  int32_t *order =
      tract_gpu_grow(core->order, &core->order_capacity, n, sizeof(int32_t));
  if (!order)
    return TRACT_ERROR;
  core->order = order;
  size_t room = (size_t)n * core->backend->batch.binding_bytes;
  if (room > core->bindings_capacity) {
    void *bindings = realloc(core->bindings, room);
    if (!bindings)
      return tract_set_error("out of memory in the GPU runtime");
    core->bindings = bindings;
    core->bindings_capacity = room;
  }
  order_by_size(n, launch->bytes, core->order);
  for (int32_t k = 0; k < n; ++k) {
    int32_t i = core->order[k];
    if (bind_buffer(core, i, launch->pointers[i], launch->bytes[i],
                    launch->flags[i])) {
      char context[32];
      snprintf(context, sizeof(context), "buffer %d", (int)i);
      return tract_gpu_explain(context);
    }
  }
  return TRACT_OK;
}

/* One launch into the open batch, under the lock. */
static tract_status record_launch(tract_gpu_core *core,
                                  const tract_gpu_launch_args *launch) {
  const tract_gpu_backend *backend = core->backend;
  if (check_launch(core, launch))
    return TRACT_ERROR;
  /* No group: nothing runs, no buffer changes. */
  if (!launch->groups[0] || !launch->groups[1] || !launch->groups[2])
    return TRACT_OK;
  const tract_gpu_kernel *k = kernel_for(core, launch);
  if (!k)
    return TRACT_ERROR;
  void *kernel = k->made;
  if (backend->kernels.max_block) {
    int32_t most = backend->kernels.max_block(kernel);
    if (launch->block_x > most)
      return tract_set_error("%d threads per %s; the kernel runs at most %d",
                             (int)launch->block_x, backend->names.block,
                             (int)most);
  }
  /* A batch that partly shares this launch's memory, or is long enough,
   * runs first. */
  if ((core->launches >= BATCH_LAUNCHES || overlaps_batch(core, launch)) &&
      run_batch(core))
    return TRACT_ERROR;
  if (bind_buffers(core, launch) ||
      backend->batch.dispatch(kernel, launch, core->bound, core->bindings,
                              core->launches == 0))
    return TRACT_ERROR;
  ++core->launches;
  return TRACT_OK;
}

int32_t tract_gpu_core_launch(tract_gpu_core *core, const void *code,
                              int64_t size, const char *entry, int32_t groups_x,
                              int32_t groups_y, int32_t groups_z,
                              int32_t block_x, int32_t num_buffers,
                              void *const *pointers, const int64_t *bytes,
                              const int32_t *flags, int run) {
  const char *api = core->backend->names.api;
  if (!entry)
    return tract_set_error("%s kernel launched without an entry point", api);
  const tract_gpu_launch_args launch = {
      .code = code,
      .size = size,
      .entry = entry,
      .groups = {groups_x, groups_y, groups_z},
      .block_x = block_x,
      .num_buffers = num_buffers,
      .pointers = pointers,
      .bytes = bytes,
      .flags = flags,
  };
  pthread_mutex_lock(&core->lock);
  tract_status status = ensure_started(core);
  if (status == TRACT_OK)
    status = enter(core);
  if (status == TRACT_OK) {
    status = record_launch(core, &launch);
    if (status != TRACT_OK)
      abandon_batch(core);
    else if (run)
      status = run_batch(core);
    status = leave(core, status);
  }
  if (status != TRACT_OK) {
    char context[256];
    snprintf(context, sizeof(context), "%s kernel '%s'", api, entry);
    tract_gpu_explain(context);
  }
  pthread_mutex_unlock(&core->lock);
  if (status == TRACT_OK)
    tract_profile_count_launch();
  return status;
}

int32_t tract_gpu_core_sync(tract_gpu_core *core) {
  pthread_mutex_lock(&core->lock);
  tract_status status = TRACT_OK;
  if (core->state == CORE_READY) {
    status = enter(core);
    if (status == TRACT_OK)
      status = leave(core, run_batch(core));
  }
  if (status != TRACT_OK) {
    char context[64];
    snprintf(context, sizeof(context), "%s kernels", core->backend->names.api);
    tract_gpu_explain(context);
  }
  pthread_mutex_unlock(&core->lock);
  return status;
}

void tract_gpu_core_discard(tract_gpu_core *core, const void *host,
                            int64_t bytes) {
  pthread_mutex_lock(&core->lock);
  const char *begin = host, *end = begin + (bytes > 0 ? bytes : 0);
  for (int32_t i = 0; i < core->num_residents; ++i) {
    tract_gpu_resident *r = &core->residents[i];
    const char *first = r->host, *last = first + r->bytes;
    if (begin < last && first < end)
      r->written = 0;
  }
  pthread_mutex_unlock(&core->lock);
}

/* ---- Queries ---- */

void tract_gpu_core_lock(tract_gpu_core *core) {
  pthread_mutex_lock(&core->lock);
  if (core->state == CORE_UNTRIED)
    start(core);
}

void tract_gpu_core_unlock(tract_gpu_core *core) {
  pthread_mutex_unlock(&core->lock);
}

int32_t tract_gpu_core_available(tract_gpu_core *core, char *why, size_t size) {
  tract_gpu_core_lock(core);
  int32_t ready = core->state == CORE_READY;
  if (why && size)
    snprintf(why, size, "%s", ready ? "" : core->why);
  tract_gpu_core_unlock(core);
  return ready;
}

const char *tract_gpu_core_device_name(tract_gpu_core *core) {
  tract_gpu_core_lock(core);
  const char *name = core->name; /* "" unless READY */
  tract_gpu_core_unlock(core);
  return name;
}

void tract_gpu_core_release(tract_gpu_core *core) {
  pthread_mutex_lock(&core->lock);
  forget_all(core);
  pthread_mutex_unlock(&core->lock);
}
