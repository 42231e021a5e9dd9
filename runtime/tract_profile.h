/* tract runtime: per-op timing of instrumented models.
 *
 * `tract dump --profile` compiles the model with a call to
 * tract_profile_enter(slot) before each op of its entry function and to
 * tract_profile_exit(slot) after it (the tract-instrument-profile pass);
 * these accumulate the nanoseconds spent between the two calls in a table
 * of slots that the host starts, reads and stops. One table per process:
 * profile one model at a time, on one thread. */
#ifndef TRACT_PROFILE_H
#define TRACT_PROFILE_H

#include "runtime/tract_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Called by instrumented code around the op of slot `slot`. Slots outside
 * the started table are ignored, so an instrumented model also runs when no
 * profile is started. */
void tract_profile_enter(int64_t slot);
void tract_profile_exit(int64_t slot);

/* Called by the GPU runtime after each kernel it ran: counts it in the slot
 * entered last, if any (so that a profile says which ops ran on the
 * device). */
void tract_profile_count_launch(void);

/* What the GPU runtimes copy between host and device. */
typedef enum tract_profile_transfer {
  TRACT_TRANSFER_WEIGHTS = 0, /* constants, uploaded at their first use */
  TRACT_TRANSFER_UPLOADS,     /* the other buffers a kernel reads */
  TRACT_TRANSFER_DOWNLOADS,   /* what kernels wrote, back to the host */
  TRACT_TRANSFER_KINDS
} tract_profile_transfer;

/* Called by the GPU runtimes for each copy: counted whether a profile is
 * started or not, for the life of the process. */
void tract_profile_count_transfer(tract_profile_transfer kind, int64_t bytes);
/* The copies of `kind` since the process started, and their bytes. */
void tract_profile_transfers(tract_profile_transfer kind, int64_t *count,
                             int64_t *bytes);

/* Starts a table of `slots` zeroed slots (replacing any previous one).
 * Returns TRACT_ERROR (with a message) on a negative count or allocation
 * failure. */
tract_status tract_profile_start(int64_t slots);
/* Zeroes the started table's slots. */
void tract_profile_reset(void);
/* Nanoseconds accumulated by `slot` since the start or the last reset; 0
 * outside the table. */
int64_t tract_profile_nanoseconds(int64_t slot);
/* GPU kernels `slot` ran since the start or the last reset. */
int64_t tract_profile_launches(int64_t slot);
/* Frees the table. */
void tract_profile_stop(void);

#ifdef __cplusplus
}
#endif

#endif /* TRACT_PROFILE_H */
