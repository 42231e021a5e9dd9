#define _POSIX_C_SOURCE 199309L

#include "runtime/tract_profile.h"

#include <stdlib.h>
#include <time.h>

typedef struct profile_slot {
  int64_t entered; /* monotonic ns at the last enter */
  int64_t total;   /* accumulated ns */
  int64_t launches; /* GPU kernels run */
} profile_slot;

static profile_slot *slots;
static int64_t slot_count;
/* The slot between its enter and exit, or -1. */
static int64_t current = -1;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void tract_profile_enter(int64_t slot) {
  if (slot >= 0 && slot < slot_count) {
    current = slot;
    slots[slot].entered = now_ns();
  }
}

void tract_profile_exit(int64_t slot) {
  int64_t now = now_ns();
  if (slot < 0 || slot >= slot_count)
    return;
  slots[slot].total += now - slots[slot].entered;
  current = -1;
}

void tract_profile_count_launch(void) {
  if (current >= 0 && current < slot_count)
    ++slots[current].launches;
}

/* Copies by kind; atomic, as a GPU runtime copies from any thread. */
static int64_t transfer_counts[TRACT_TRANSFER_KINDS];
static int64_t transfer_bytes[TRACT_TRANSFER_KINDS];

void tract_profile_count_transfer(tract_profile_transfer kind, int64_t bytes) {
  if (kind < 0 || kind >= TRACT_TRANSFER_KINDS)
    return;
  __atomic_add_fetch(&transfer_counts[kind], 1, __ATOMIC_RELAXED);
  __atomic_add_fetch(&transfer_bytes[kind], bytes, __ATOMIC_RELAXED);
}

void tract_profile_transfers(tract_profile_transfer kind, int64_t *count,
                             int64_t *bytes) {
  int valid = kind >= 0 && kind < TRACT_TRANSFER_KINDS;
  if (count)
    *count = valid ? __atomic_load_n(&transfer_counts[kind], __ATOMIC_RELAXED)
                   : 0;
  if (bytes)
    *bytes = valid ? __atomic_load_n(&transfer_bytes[kind], __ATOMIC_RELAXED)
                   : 0;
}

tract_status tract_profile_start(int64_t count) {
  tract_profile_stop();
  if (count < 0)
    return tract_set_error("a profile needs a non-negative number of slots, "
                           "not %lld",
                           (long long)count);
  if (count == 0)
    return TRACT_OK;
  slots = calloc((size_t)count, sizeof(profile_slot));
  if (!slots)
    return tract_set_error("cannot allocate a profile of %lld slots",
                           (long long)count);
  slot_count = count;
  return TRACT_OK;
}

void tract_profile_reset(void) {
  for (int64_t i = 0; i < slot_count; ++i)
    slots[i].total = slots[i].launches = 0;
}

int64_t tract_profile_nanoseconds(int64_t slot) {
  return slot >= 0 && slot < slot_count ? slots[slot].total : 0;
}

int64_t tract_profile_launches(int64_t slot) {
  return slot >= 0 && slot < slot_count ? slots[slot].launches : 0;
}

void tract_profile_stop(void) {
  free(slots);
  slots = NULL;
  slot_count = 0;
  current = -1;
}
