/* tract runtime: the C ABI shared by compiled models and their host.
 *
 * Tensors are described by a dtype, a rank, dims and a pointer to dense
 * row-major data. Errors are reported as a status code plus a thread-local
 * message that names what went wrong. */
#ifndef TRACT_RUNTIME_H
#define TRACT_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tract_status {
  TRACT_OK = 0,
  TRACT_ERROR = 1,
} tract_status;

/* Element types, named as tract names them (Bool, U8, ..., F32, F64). */
typedef enum tract_dtype {
  TRACT_DT_BOOL = 0,
  TRACT_DT_U8,
  TRACT_DT_U16,
  TRACT_DT_U32,
  TRACT_DT_U64,
  TRACT_DT_I8,
  TRACT_DT_I16,
  TRACT_DT_I32,
  TRACT_DT_I64,
  TRACT_DT_F16,
  TRACT_DT_BF16,
  TRACT_DT_F32,
  TRACT_DT_F64,
  TRACT_DT_COUNT
} tract_dtype;

/* Size of one element in bytes, or 0 for an invalid dtype. */
size_t tract_dtype_size(tract_dtype dt);
/* tract's name of the dtype ("F32", "I64", "Bool"), or NULL if invalid. */
const char *tract_dtype_name(tract_dtype dt);
/* Parses a dtype name, case-insensitively ("f32", "F32", "bool").
 * Returns TRACT_ERROR (with a message) for an unknown name. */
tract_status tract_dtype_from_name(const char *name, tract_dtype *out);

#define TRACT_MAX_RANK 16

typedef struct tract_tensor {
  tract_dtype dtype;
  int32_t rank;
  int64_t dims[TRACT_MAX_RANK];
  void *data; /* dense, row-major, aligned to TRACT_TENSOR_ALIGN */
} tract_tensor;

#define TRACT_TENSOR_ALIGN 64

/* Number of elements (1 for a scalar). */
int64_t tract_tensor_len(const tract_tensor *t);
/* Number of bytes of data. */
size_t tract_tensor_nbytes(const tract_tensor *t);

/* Allocates a zero-filled tensor. Returns NULL (with a message) on a bad
 * dtype, rank, negative dim, size overflow or allocation failure. */
tract_tensor *tract_tensor_new(tract_dtype dt, int32_t rank,
                               const int64_t *dims);
/* Frees a tensor made by tract_tensor_new or returned by a model run (its
 * data is a runtime buffer, below): not one whose data the caller
 * allocated. */
void tract_tensor_free(tract_tensor *t);

/* Buffers. Compiled models allocate their memrefs with
 * tract_buffer_aligned_alloc and free them with tract_buffer_free; tensors'
 * data comes from there too. Large freed buffers are kept for the next
 * run, by size class, up to a limit (1 GiB unless set): a model that runs
 * again finds its buffers without asking the system for pages. A kept
 * buffer that four runs in a row do not ask for is freed. Every
 * function here may be called from any thread.
 *
 * tract_buffer_aligned_alloc returns `size` bytes (at least) aligned to
 * `alignment` (a power of two; TRACT_TENSOR_ALIGN at least), or NULL. */
void *tract_buffer_aligned_alloc(size_t alignment, size_t size);
void tract_buffer_free(void *buffer);
/* Sets how many bytes of freed buffers may be kept, and releases those
 * kept now. */
void tract_buffer_cache_limit(size_t bytes);
/* Gives every kept buffer back to the system. */
void tract_release_buffers(void);
/* Says that a model run starts (tract_model_run calls it): the kept
 * buffers that no run has asked for over the last four are freed. */
void tract_buffers_run_started(void);
/* Bytes of freed buffers kept now. */
size_t tract_buffers_kept(void);
/* The most bytes one tensor of a compiled model may take: this machine's
 * physical memory, at most half the address space and at most 2^48.
 * Compiled models check the sizes their inputs imply against it before
 * allocating, so that an input too large for the machine is an error, not
 * a failed allocation. */
int64_t tract_memory_limit(void);

/* The last error of this thread, or "" if none. */
const char *tract_last_error(void);
/* Records an error message (printf-style) for this thread; returns
 * TRACT_ERROR so that callers can `return tract_set_error(...)`.
 * Compiled models call it too, when a check of their inputs fails (format
 * from a constant string, int64 values as `%lld`); their entry function
 * then returns TRACT_ERROR as its last result. */
tract_status tract_set_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
void tract_clear_error(void);
/* Called by compiled code when a check inside the model fails (an
 * assertion of the If branch it takes): records the message as
 * tract_set_error does and marks the run failed; the model's entry function
 * then returns TRACT_ERROR. */
tract_status tract_fail(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* Whether tract_fail was called on this thread since the last call, which
 * clears it. */
int32_t tract_take_failure(void);

/* The index type of compiled code: as wide as a pointer (32 bits on armv7
 * and wasm32). Offsets, sizes and strides in memref descriptors are
 * tract_index; tensors' dims stay int64_t. */
typedef intptr_t tract_index;

/* Called by compiled code: copies between two strided buffers of the same
 * shape, given as unranked memref descriptors (a rank and a pointer to the
 * ranked descriptor: allocated, aligned, offset, sizes[rank],
 * strides[rank]). The name and signature are those MLIR's memref lowering
 * calls for copies it cannot turn into one memcpy. */
typedef struct tract_unranked_memref {
  tract_index rank;
  void *descriptor;
} tract_unranked_memref;
void memrefCopy(tract_index element_size, tract_unranked_memref *source,
                tract_unranked_memref *destination);

/* The bits of the IEEE half nearest `value` (ties to even; NaNs stay
 * quiet NaNs). On 32-bit ARM, compiled code converts doubles to halves
 * with __aeabi_d2h, which GCC's libgcc lacks: the runtime defines it
 * (weak, so that a C library's own wins) with this. */
uint16_t tract_f16_from_f64(double value);

/* The part an input or output plays. A streaming (pulsified) model takes
 * and returns its state besides its data, and may take the value of a
 * symbol its state needs (the stream length). */
typedef enum tract_io_role {
  TRACT_IO_DATA = 0,
  TRACT_IO_STATE = 1, /* returned by one call, given to the next */
  TRACT_IO_SYMBOL = 2 /* an i64 scalar: the value of the symbol `name` */
} tract_io_role;

/* A compiled model, as `tract compile --header` describes it. */
typedef struct tract_io_info {
  const char *name;  /* the model's name for the input or output */
  tract_dtype dtype;
  int32_t rank;
  const char *shape; /* tract's notation, symbols included: "1,S,64" */
  tract_io_role role;
} tract_io_info;

typedef struct tract_model {
  const char *name;
  int32_t num_inputs;
  int32_t num_outputs;
  const tract_io_info *inputs;
  const tract_io_info *outputs;
  /* The compiled entry point, taking its arguments packed: args[0] points
   * to a pointer to the results (when there are outputs: their
   * descriptors, then room for the entry's int32 status), then one pointer
   * per input to a pointer to its memref descriptor. Returns TRACT_OK, or
   * TRACT_ERROR with a message when the model's own checks refuse the
   * inputs' dims; the results are then empty buffers, still to be freed. */
  int32_t (*invoke)(void **args);
} tract_model;

/* Runs a compiled model. `inputs` holds num_inputs tensors in the model's
 * order; on success `outputs[i]` receives a new tensor for each output,
 * which the caller frees with tract_tensor_free. Returns TRACT_ERROR (with a
 * message) on a wrong dtype or rank, or when the model refuses its inputs;
 * no output is produced then. */
tract_status tract_model_run(const tract_model *model,
                             const tract_tensor *const *inputs,
                             tract_tensor **outputs);

/* Threads. A model compiled for one thread (`tract compile`'s default)
 * runs on the calling thread and needs no thread library. A model compiled
 * with `--threads N` shares the tiles of its large ops among the team of
 * LLVM's OpenMP runtime (link it: -lomp); its work split is chosen for N
 * threads, but any team size runs it correctly. The team is the calling
 * thread's: OMP_NUM_THREADS, or tract_set_threads in that thread, else
 * one thread per core. Runs stay reentrant: two threads may run models
 * (the same one too) at once, each with its own team.
 *
 * tract_set_threads sets the team size for the models this thread runs
 * from now on. Without an OpenMP runtime in the program, only 1 is
 * accepted (TRACT_ERROR with a message otherwise). */
tract_status tract_set_threads(int32_t threads);

/* A stream through a pulsified model: the runtime owns its state, so that
 * several streams can run through one model at once.
 *
 * tract_stream_new starts a stream with every state zero. `values` gives
 * the symbols that state shapes or symbol inputs use (`B`, the stream
 * length `S`...), as `num_symbols` names and values; a symbol input
 * without a value gets an unbounded length (a stream that never ends).
 * tract_stream_run takes the model's data inputs (one pulse each) in
 * order and gives its data outputs, new tensors for the caller to free;
 * the state goes to the next call. Returns NULL or TRACT_ERROR with a
 * message on failure; a failed run leaves the state as it was. */
typedef struct tract_stream tract_stream;
tract_stream *tract_stream_new(const tract_model *model, int32_t num_symbols,
                               const char *const *names,
                               const int64_t *values);
tract_status tract_stream_run(tract_stream *stream,
                              const tract_tensor *const *inputs,
                              tract_tensor **outputs);
void tract_stream_free(tract_stream *stream);

#ifdef __cplusplus
}
#endif

#endif /* TRACT_RUNTIME_H */
