/* The buffers of compiled models: every memref a model allocates, the
 * tensors tract_tensor_new makes, and the outputs tract_model_run hands
 * over come from here, and go back here when freed.
 *
 * A model allocates the same large buffers at every run. Given back to the
 * C library, they return to the system (glibc maps buffers above its mmap
 * threshold and trims the top of its heap), and the next run pays a page
 * fault for every 4 KiB it touches again: MobileNetV2 ran 2.5x slower from
 * a C program than under `tract bench`. Freed buffers are therefore kept,
 * by size class, up to a limit, and handed out again.
 *
 * A kept buffer that the runs stop asking for goes back, though: a
 * language model's prompt leaves buffers of its length that no step of
 * the generation after it can use, and kept, they stood beside the
 * generation's own (the 135M decoder's llm-bench held 267 MB of them).
 * Each kept buffer remembers the run it was freed in; when a run starts,
 * those left unasked for over IDLE_RUNS runs are freed, so that the C
 * library can hand their memory out again. Models run one after another
 * or side by side on threads keep theirs: each run asks for its own again
 * within a few runs.
 *
 * Each buffer starts with a header, just before the address handed out,
 * that says how large the buffer is and where its allocation starts.
 * Small buffers (below POOL_MIN) go to the C library at once: it keeps
 * them without system calls. */

#include "runtime/tract_runtime.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

enum {
  /* The alignment every buffer has, whatever was asked: that of tensors. */
  BASE_ALIGN = TRACT_TENSOR_ALIGN,
  /* Buffers of fewer bytes are not kept. */
  POOL_MIN = 16 * 1024,
  /* Distinct sizes kept at once. */
  CLASSES = 128,
  /* Runs a kept buffer may stay unasked for. */
  IDLE_RUNS = 4,
};

typedef struct header {
  void *allocation;    /* what aligned_alloc returned */
  size_t capacity;     /* usable bytes from the buffer's address */
  struct header *next; /* in its class's free list */
  uint64_t run;        /* the run it was kept in */
} header;

static header *header_of(void *buffer) { return (header *)buffer - 1; }

static struct {
  atomic_flag lock;
  size_t limit, kept;
  uint64_t runs; /* runs started */
  struct {
    size_t capacity;
    header *free;
  } classes[CLASSES];
} pool = {ATOMIC_FLAG_INIT, (size_t)1 << 30, 0, 0, {{0, NULL}}};

static void lock(void) {
  while (atomic_flag_test_and_set_explicit(&pool.lock, memory_order_acquire))
    ;
}

static void unlock(void) {
  atomic_flag_clear_explicit(&pool.lock, memory_order_release);
}

/* The size class of `size` bytes: a multiple of an eighth of the largest
 * power of two in it (at most 12.5% more), and of BASE_ALIGN. */
static size_t class_capacity(size_t size) {
  size_t step = BASE_ALIGN;
  if (size >= POOL_MIN) {
    size_t top = (size_t)1 << (sizeof(size_t) * 8 - 1);
    while (!(size & top))
      top >>= 1;
    if (top / 8 > step)
      step = top / 8;
  }
  return size > SIZE_MAX - step ? 0 : (size + step - 1) / step * step;
}

/* Takes the first buffer of class `i` (which has one); under the lock. */
static header *pop(int i) {
  header *h = pool.classes[i].free;
  pool.classes[i].free = h->next;
  pool.kept -= h->capacity;
  return h;
}

/* A kept buffer of exactly `capacity` bytes, or NULL. */
static header *take(size_t capacity) {
  header *found = NULL;
  lock();
  for (int i = 0; i < CLASSES && !found; ++i)
    if (pool.classes[i].capacity == capacity && pool.classes[i].free)
      found = pop(i);
  unlock();
  return found;
}

/* Keeps `h` for later unless the limit or the classes are full; returns
 * whether it was kept. */
static int keep(header *h) {
  int kept = 0;
  lock();
  if (pool.kept + h->capacity <= pool.limit) {
    int slot = -1;
    for (int i = 0; i < CLASSES; ++i) {
      if (pool.classes[i].capacity == h->capacity) {
        slot = i;
        break;
      }
      if (slot < 0 && !pool.classes[i].free)
        slot = i;
    }
    if (slot >= 0) {
      pool.classes[slot].capacity = h->capacity;
      h->run = pool.runs;
      h->next = pool.classes[slot].free;
      pool.classes[slot].free = h;
      pool.kept += h->capacity;
      kept = 1;
    }
  }
  unlock();
  return kept;
}

void *tract_buffer_aligned_alloc(size_t alignment, size_t size) {
  if (alignment < BASE_ALIGN)
    alignment = BASE_ALIGN;
  if ((alignment & (alignment - 1)) || size > SIZE_MAX / 2)
    return NULL;
  size_t capacity = class_capacity(size ? (size_t)size : 1);
  if (capacity == 0)
    return NULL;
  if (capacity >= POOL_MIN && alignment == BASE_ALIGN) {
    header *h = take(capacity);
    if (h)
      return h + 1;
  }
  /* The header fits in the alignment's first multiple. */
  size_t offset = (sizeof(header) + alignment - 1) / alignment * alignment;
  if (capacity > SIZE_MAX - offset)
    return NULL;
  char *allocation = aligned_alloc(alignment, offset + capacity);
  if (!allocation)
    return NULL;
  header *h = header_of(allocation + offset);
  h->allocation = allocation;
  h->capacity = capacity;
  h->next = NULL;
  return allocation + offset;
}

void tract_buffer_free(void *buffer) {
  if (!buffer)
    return;
  header *h = header_of(buffer);
  /* A buffer allocated at a larger alignment is kept too: it serves the
   * later requests at BASE_ALIGN, the only ones kept buffers go to. */
  if (h->capacity >= POOL_MIN && keep(h))
    return;
  free(h->allocation);
}

void tract_buffers_run_started(void) {
  header *idle = NULL;
  lock();
  uint64_t run = ++pool.runs;
  for (int i = 0; i < CLASSES; ++i) {
    /* Each list holds the latest kept first. */
    header **link = &pool.classes[i].free;
    while (*link && run - (*link)->run <= IDLE_RUNS)
      link = &(*link)->next;
    for (header *h = *link; h; h = h->next)
      pool.kept -= h->capacity;
    if (*link) {
      header *last = *link;
      while (last->next)
        last = last->next;
      last->next = idle;
      idle = *link;
      *link = NULL;
    }
  }
  unlock();
  while (idle) {
    header *next = idle->next;
    free(idle->allocation);
    idle = next;
  }
}

void tract_buffer_cache_limit(size_t bytes) {
  lock();
  pool.limit = bytes;
  unlock();
  tract_release_buffers();
}

void tract_release_buffers(void) {
  for (;;) {
    header *h = NULL;
    lock();
    for (int i = 0; i < CLASSES && !h; ++i)
      if (pool.classes[i].free)
        h = pop(i);
    unlock();
    if (!h)
      return;
    free(h->allocation);
  }
}

size_t tract_buffers_kept(void) {
  lock();
  size_t kept = pool.kept;
  unlock();
  return kept;
}

int64_t tract_memory_limit(void) {
  /* Models ask at every run: the machine's memory does not change. */
  static _Atomic int64_t known;
  int64_t cached = atomic_load_explicit(&known, memory_order_relaxed);
  if (cached)
    return cached;
  int64_t limit = (int64_t)1 << 48;
  if ((uint64_t)(SIZE_MAX / 2) < (uint64_t)limit)
    limit = (int64_t)(SIZE_MAX / 2);
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0 && pages <= limit / page)
    limit = (int64_t)pages * page;
#endif
  atomic_store_explicit(&known, limit, memory_order_relaxed);
  return limit;
}
