#include "runtime/tract_runtime.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "NAME: " before the messages about a model, nothing for a nameless one
 * (the JIT's, whose caller says which model). */
#define MODEL_PREFIX(model)                                                    \
  ((model)->name && *(model)->name ? (model)->name : ""),                      \
      ((model)->name && *(model)->name ? ": " : "")

static _Thread_local char last_error[1024];

const char *tract_last_error(void) { return last_error; }

void tract_clear_error(void) { last_error[0] = '\0'; }

/* Formats into a copy first: the arguments may quote the last error. */
static void record_error(const char *fmt, va_list args) {
  char message[sizeof(last_error)];
  vsnprintf(message, sizeof(message), fmt, args);
  memcpy(last_error, message, sizeof(message));
}

tract_status tract_set_error(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  record_error(fmt, args);
  va_end(args);
  return TRACT_ERROR;
}

static _Thread_local int failed_in_model;

tract_status tract_fail(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  record_error(fmt, args);
  va_end(args);
  failed_in_model = 1;
  return TRACT_ERROR;
}

int32_t tract_take_failure(void) {
  int32_t failed = failed_in_model;
  failed_in_model = 0;
  return failed;
}

/* OpenMP's, when the program links an OpenMP runtime: models compiled for
 * several threads need it, the runtime itself does not. */
#if defined(__GNUC__) && !defined(__wasm__)
extern void omp_set_num_threads(int threads) __attribute__((weak));
#define TRACT_HAVE_OPENMP() (omp_set_num_threads != NULL)
#else
#define TRACT_HAVE_OPENMP() 0
static void omp_set_num_threads(int threads) { (void)threads; }
#endif

tract_status tract_set_threads(int32_t threads) {
  if (threads < 1)
    return tract_set_error("the number of threads must be positive, not %d",
                           (int)threads);
  if (!TRACT_HAVE_OPENMP())
    return threads == 1 ? TRACT_OK
                        : tract_set_error("%d threads: the program has no "
                                          "OpenMP runtime (link -lomp)",
                                          (int)threads);
  omp_set_num_threads(threads);
  return TRACT_OK;
}

static const struct {
  const char *name;
  size_t size;
} dtype_info[TRACT_DT_COUNT] = {
    [TRACT_DT_BOOL] = {"Bool", 1}, [TRACT_DT_U8] = {"U8", 1},
    [TRACT_DT_U16] = {"U16", 2},   [TRACT_DT_U32] = {"U32", 4},
    [TRACT_DT_U64] = {"U64", 8},   [TRACT_DT_I8] = {"I8", 1},
    [TRACT_DT_I16] = {"I16", 2},   [TRACT_DT_I32] = {"I32", 4},
    [TRACT_DT_I64] = {"I64", 8},   [TRACT_DT_F16] = {"F16", 2},
    [TRACT_DT_BF16] = {"BF16", 2}, [TRACT_DT_F32] = {"F32", 4},
    [TRACT_DT_F64] = {"F64", 8},
};

static int valid_dtype(tract_dtype dt) {
  return (int)dt >= 0 && dt < TRACT_DT_COUNT;
}

size_t tract_dtype_size(tract_dtype dt) {
  return valid_dtype(dt) ? dtype_info[dt].size : 0;
}

const char *tract_dtype_name(tract_dtype dt) {
  return valid_dtype(dt) ? dtype_info[dt].name : NULL;
}

tract_status tract_dtype_from_name(const char *name, tract_dtype *out) {
  if (!name)
    return tract_set_error("dtype name is NULL");
  for (int i = 0; i < TRACT_DT_COUNT; ++i) {
    const char *candidate = dtype_info[i].name;
    size_t n = strlen(candidate);
    if (strlen(name) != n)
      continue;
    size_t k = 0;
    while (k < n && tolower((unsigned char)name[k]) ==
                        tolower((unsigned char)candidate[k]))
      ++k;
    if (k == n) {
      *out = (tract_dtype)i;
      return TRACT_OK;
    }
  }
  return tract_set_error("unknown dtype '%s' (expected one of Bool, U8..U64, "
                         "I8..I64, F16, BF16, F32, F64)",
                         name);
}

int64_t tract_tensor_len(const tract_tensor *t) {
  int64_t len = 1;
  for (int32_t i = 0; i < t->rank; ++i)
    len *= t->dims[i];
  return len;
}

size_t tract_tensor_nbytes(const tract_tensor *t) {
  return (size_t)tract_tensor_len(t) * tract_dtype_size(t->dtype);
}

tract_tensor *tract_tensor_new(tract_dtype dt, int32_t rank,
                               const int64_t *dims) {
  if (!valid_dtype(dt)) {
    tract_set_error("invalid dtype %d", (int)dt);
    return NULL;
  }
  if (rank < 0 || rank > TRACT_MAX_RANK) {
    tract_set_error("rank %d is outside 0..%d", (int)rank, TRACT_MAX_RANK);
    return NULL;
  }
  uint64_t bytes = tract_dtype_size(dt);
  for (int32_t i = 0; i < rank; ++i) {
    if (dims[i] < 0) {
      tract_set_error("dim %d is negative (%lld)", (int)i, (long long)dims[i]);
      return NULL;
    }
    if (dims[i] != 0 && bytes > (uint64_t)SIZE_MAX / (uint64_t)dims[i]) {
      tract_set_error("tensor size overflows (dim %d = %lld)", (int)i,
                      (long long)dims[i]);
      return NULL;
    }
    bytes *= (uint64_t)dims[i];
  }
  if (bytes > (uint64_t)SIZE_MAX - TRACT_TENSOR_ALIGN) {
    tract_set_error("tensor size overflows (%llu bytes)",
                    (unsigned long long)bytes);
    return NULL;
  }
  tract_tensor *t = calloc(1, sizeof(tract_tensor));
  if (!t) {
    tract_set_error("out of memory allocating a tensor descriptor");
    return NULL;
  }
  t->dtype = dt;
  t->rank = rank;
  if (rank)
    memcpy(t->dims, dims, sizeof(int64_t) * (size_t)rank);
  t->data = tract_buffer_aligned_alloc(TRACT_TENSOR_ALIGN, bytes);
  if (!t->data) {
    free(t);
    tract_set_error("out of memory allocating %llu bytes",
                    (unsigned long long)bytes);
    return NULL;
  }
  memset(t->data, 0, bytes);
  return t;
}

void tract_tensor_free(tract_tensor *t) {
  if (!t)
    return;
  tract_buffer_free(t->data);
  free(t);
}

uint16_t tract_f16_from_f64(double value) {
  uint64_t bits;
  memcpy(&bits, &value, sizeof(bits));
  uint16_t sign = (uint16_t)((bits >> 48) & 0x8000);
  int exponent = (int)((bits >> 52) & 0x7ff);
  uint64_t mantissa = bits & ((UINT64_C(1) << 52) - 1);
  if (exponent == 0x7ff) /* infinities; NaNs keep their top payload bits */
    return (uint16_t)(sign | 0x7c00 |
                      (mantissa ? 0x200 | (uint16_t)(mantissa >> 42) : 0));
  /* The half's biased exponent; from 31 up the value is past the largest
   * half (65504), even before rounding. */
  int biased = exponent - 1023 + 15;
  if (biased >= 31)
    return (uint16_t)(sign | 0x7c00);
  /* The significand, 53 bits with the implicit one, shifted down to the
   * half's 11 bits (normal) or fewer (subnormal: units of 2^-24). */
  uint64_t significand = mantissa | (exponent ? UINT64_C(1) << 52 : 0);
  int shift = biased >= 1 ? 42 : 43 - biased;
  if (shift >= 64)
    return sign;
  uint64_t kept = significand >> shift;
  uint64_t rest = significand & ((UINT64_C(1) << shift) - 1);
  uint64_t halfway = UINT64_C(1) << (shift - 1);
  if (rest > halfway || (rest == halfway && (kept & 1)))
    ++kept;
  /* A carry out of the significand moves to the next exponent (or from
   * the subnormals to the smallest normal, or to infinity). */
  uint64_t magnitude =
      biased >= 1 ? ((uint64_t)(biased - 1) << 10) + kept : kept;
  return (uint16_t)(sign | magnitude);
}

#if defined(__arm__)
/* A run-time helper of the ARM EABI: called with the base procedure call
 * standard (the double in r0 and r1), hard-float code included. */
#define TRACT_AEABI __attribute__((weak, pcs("aapcs")))
TRACT_AEABI uint16_t __aeabi_d2h(double value);
TRACT_AEABI uint16_t __aeabi_d2h(double value) {
  return tract_f16_from_f64(value);
}
#endif

/* The head of a memref descriptor as the LLVM lowering lays it out; sizes
 * then strides follow, one tract_index per axis each. */
typedef struct memref_head {
  void *allocated;
  void *aligned;
  tract_index offset;
} memref_head;

static size_t descriptor_size(int32_t rank) {
  return sizeof(memref_head) + 2 * (size_t)rank * sizeof(tract_index);
}

static tract_index *descriptor_sizes(void *descriptor) {
  return (tract_index *)((char *)descriptor + sizeof(memref_head));
}

/* The ranked memref descriptor behind an unranked one. */
typedef struct memref_view {
  char *aligned;
  tract_index offset;
  const tract_index *sizes;
  const tract_index *strides;
} memref_view;

static memref_view memref_view_of(const tract_unranked_memref *memref) {
  const memref_head *head = (const memref_head *)memref->descriptor;
  memref_view view;
  view.aligned = (char *)head->aligned;
  view.offset = head->offset;
  view.sizes = descriptor_sizes(memref->descriptor);
  view.strides = view.sizes + memref->rank;
  return view;
}

void memrefCopy(tract_index element_size, tract_unranked_memref *source,
                tract_unranked_memref *destination) {
  tract_index rank = source->rank;
  memref_view from = memref_view_of(source);
  memref_view to = memref_view_of(destination);
  tract_index count = 1;
  for (tract_index axis = 0; axis < rank; ++axis)
    count *= from.sizes[axis];
  if (count == 0)
    return;
  /* Walk the elements in row-major order with an index per axis. */
  tract_index index[TRACT_MAX_RANK] = {0};
  if (rank > TRACT_MAX_RANK)
    return;
  tract_index from_offset = from.offset, to_offset = to.offset;
  for (tract_index done = 0; done < count; ++done) {
    memcpy(to.aligned + to_offset * element_size,
           from.aligned + from_offset * element_size, (size_t)element_size);
    for (tract_index axis = rank - 1; axis >= 0; --axis) {
      index[axis]++;
      from_offset += from.strides[axis];
      to_offset += to.strides[axis];
      if (index[axis] < from.sizes[axis])
        break;
      from_offset -= from.strides[axis] * from.sizes[axis];
      to_offset -= to.strides[axis] * from.sizes[axis];
      index[axis] = 0;
    }
  }
}

/* Whether a result descriptor is dense and row-major from its start. */
static int is_row_major(const tract_io_info *info, const memref_head *head,
                        const tract_index *sizes, const tract_index *strides) {
  tract_index expected = 1;
  for (int32_t axis = info->rank - 1; axis >= 0; --axis) {
    if (sizes[axis] != 1 && strides[axis] != expected)
      return 0;
    expected *= sizes[axis];
  }
  return head->offset == 0;
}

/* A result as a tensor. A dense buffer of its own, aligned as tensors are
 * (compiled models allocate runtime buffers), becomes the tensor's data
 * and `*adopted` is set; otherwise the result is copied, row by row. */
static tract_tensor *tensor_from_descriptor(const tract_io_info *info,
                                            void *descriptor, int own_buffer,
                                            int *adopted) {
  const memref_head *head = (const memref_head *)descriptor;
  const tract_index *sizes = descriptor_sizes(descriptor);
  const tract_index *strides = sizes + info->rank;
  size_t element = tract_dtype_size(info->dtype);
  int64_t dims[TRACT_MAX_RANK];
  for (int32_t axis = 0; axis < info->rank; ++axis)
    dims[axis] = sizes[axis];
  *adopted = 0;
  int dense = is_row_major(info, head, sizes, strides);
  if (dense && own_buffer && head->allocated == head->aligned &&
      head->aligned && (uintptr_t)head->aligned % TRACT_TENSOR_ALIGN == 0) {
    tract_tensor *tensor = calloc(1, sizeof(tract_tensor));
    if (!tensor) {
      tract_set_error("out of memory allocating a tensor descriptor");
      return NULL;
    }
    tensor->dtype = info->dtype;
    tensor->rank = info->rank;
    if (info->rank)
      memcpy(tensor->dims, dims, sizeof(int64_t) * (size_t)info->rank);
    tensor->data = head->aligned;
    *adopted = 1;
    return tensor;
  }
  tract_tensor *tensor = tract_tensor_new(info->dtype, info->rank, dims);
  if (!tensor)
    return NULL;
  int64_t count = tract_tensor_len(tensor);
  char *destination = (char *)tensor->data;
  const char *source = (const char *)head->aligned;
  if (dense) {
    memcpy(destination, source, (size_t)count * element);
    return tensor;
  }
  /* Rows along the last axis, each contiguous when its stride is 1. */
  tract_index row = info->rank ? sizes[info->rank - 1] : 1;
  tract_index step = info->rank ? strides[info->rank - 1] : 1;
  for (int64_t first = 0; row > 0 && first < count; first += row) {
    int64_t rest = first / row, at = head->offset;
    for (int32_t axis = info->rank - 2; axis >= 0; --axis) {
      at += (rest % sizes[axis]) * strides[axis];
      rest /= sizes[axis];
    }
    char *to = destination + first * (int64_t)element;
    if (step == 1) {
      memcpy(to, source + at * (int64_t)element, (size_t)row * element);
      continue;
    }
    for (int64_t i = 0; i < row; ++i)
      memcpy(to + i * (int64_t)element,
             source + (at + i * step) * (int64_t)element, element);
  }
  return tensor;
}

tract_status tract_model_run(const tract_model *model,
                             const tract_tensor *const *inputs,
                             tract_tensor **outputs) {
  if (!model || (!inputs && model->num_inputs) ||
      (!outputs && model->num_outputs))
    return tract_set_error("tract_model_run: NULL model, inputs or outputs");
  for (int32_t i = 0; i < model->num_inputs; ++i) {
    const tract_io_info *info = &model->inputs[i];
    const tract_tensor *input = inputs[i];
    if (!input)
      return tract_set_error("%s%sinput '%s' is NULL", MODEL_PREFIX(model),
                             info->name);
    if (input->dtype != info->dtype)
      return tract_set_error("%s%sinput '%s' is %s, the model expects %s",
                             MODEL_PREFIX(model), info->name,
                             tract_dtype_name(input->dtype)
                                 ? tract_dtype_name(input->dtype)
                                 : "an invalid dtype",
                             tract_dtype_name(info->dtype));
    if (input->rank != info->rank)
      return tract_set_error(
          "%s%sinput '%s' has rank %d, the model expects %d (%s)",
          MODEL_PREFIX(model), info->name, (int)input->rank, (int)info->rank,
          info->shape);
#if INTPTR_MAX < INT64_MAX
    /* Compiled code indexes with pointer-sized integers: every dim and the
     * number of elements must fit one. */
    int64_t elements = 1;
    for (int32_t axis = 0; axis < input->rank; ++axis) {
      int64_t dim = input->dims[axis];
      if (dim > INTPTR_MAX || (dim && elements > INTPTR_MAX / dim))
        return tract_set_error(
            "%s%sinput '%s' has more elements than a %d-bit target "
            "indexes (axis %d is %lld)",
            MODEL_PREFIX(model), info->name, (int)(8 * sizeof(tract_index)),
            (int)axis, (long long)dim);
      elements *= dim;
    }
#endif
  }

  tract_buffers_run_started();
  /* One block: input descriptors, the pointers to them, the results'
   * descriptors, and the packed arguments. */
  size_t inputs_size = 0, results_size = 0;
  for (int32_t i = 0; i < model->num_inputs; ++i)
    inputs_size += descriptor_size(model->inputs[i].rank);
  for (int32_t i = 0; i < model->num_outputs; ++i)
    results_size += descriptor_size(model->outputs[i].rank);
  /* The entry writes its status after the results' descriptors. */
  results_size += sizeof(int64_t);
  size_t pointers = (size_t)model->num_inputs + 2;
  char *block =
      calloc(1, inputs_size + results_size + 2 * pointers * sizeof(void *));
  if (!block)
    return tract_set_error("%s%sout of memory", MODEL_PREFIX(model));
  char *results = block + inputs_size;
  void **descriptors = (void **)(results + results_size);
  void **args = descriptors + pointers;
  size_t arg = 0;
  descriptors[0] = results;
  if (model->num_outputs)
    args[arg++] = &descriptors[0];
  char *at = block;
  for (int32_t i = 0; i < model->num_inputs; ++i) {
    const tract_tensor *input = inputs[i];
    memref_head *head = (memref_head *)at;
    head->allocated = input->data;
    head->aligned = input->data;
    head->offset = 0;
    tract_index *sizes = descriptor_sizes(at);
    tract_index stride = 1;
    for (int32_t axis = input->rank - 1; axis >= 0; --axis) {
      sizes[axis] = (tract_index)input->dims[axis];
      sizes[input->rank + axis] = stride;
      stride *= (tract_index)input->dims[axis];
    }
    descriptors[1 + i] = at;
    args[arg++] = &descriptors[1 + i];
    at += descriptor_size(input->rank);
  }

  tract_clear_error();
  tract_status status =
      model->invoke(args) == TRACT_OK ? TRACT_OK : TRACT_ERROR;
  if (status != TRACT_OK) {
    /* The model's checks refused the inputs: say which model. */
    char message[sizeof(last_error)];
    snprintf(message, sizeof(message), "%s", last_error);
    tract_set_error("%s%s%s", MODEL_PREFIX(model), message);
  }

  /* Results may share a buffer (identical results are computed once): each
   * allocation is freed once. After a refusal they are empty. */
  at = results;
  for (int32_t i = 0; i < model->num_outputs; ++i) {
    outputs[i] = NULL;
    void *allocated = ((memref_head *)at)->allocated;
    int shared = 0;
    char *previous = results;
    for (int32_t j = 0; j < i; ++j) {
      shared |= ((memref_head *)previous)->allocated == allocated;
      previous += descriptor_size(model->outputs[j].rank);
    }
    int adopted = 0;
    if (status == TRACT_OK) {
      outputs[i] =
          tensor_from_descriptor(&model->outputs[i], at, !shared, &adopted);
      if (!outputs[i]) {
        status = TRACT_ERROR;
        for (int32_t j = 0; j < i; ++j) {
          tract_tensor_free(outputs[j]);
          outputs[j] = NULL;
        }
      }
    }
    if (!shared && !adopted)
      tract_buffer_free(allocated);
    at += descriptor_size(model->outputs[i].rank);
  }
  free(block);
  return status;
}

/*===----------------------------------------------------------------------===
 * Streams
 *===----------------------------------------------------------------------===*/

struct tract_stream {
  const tract_model *model;
  int32_t num_data_inputs, num_data_outputs;
  /* Every input of the model, in its order: the caller's data is put in
   * place at each run; symbols and states are owned here (`owned`, NULL
   * for data). */
  const tract_tensor **arguments;
  tract_tensor **owned;
};

/* The length a stream without a given length gets: far beyond any real
 * stream, with room for the shape arithmetic around it. */
#define TRACT_UNBOUNDED_LENGTH ((int64_t)1 << 60)

static int lookup_symbol(const char *name, size_t length, int32_t count,
                         const char *const *names, const int64_t *values,
                         int64_t *value) {
  for (int32_t i = 0; i < count; ++i)
    if (names[i] && strlen(names[i]) == length &&
        strncmp(names[i], name, length) == 0) {
      *value = values[i];
      return 1;
    }
  return 0;
}

void tract_stream_free(tract_stream *stream) {
  if (!stream)
    return;
  if (stream->owned)
    for (int32_t i = 0; i < stream->model->num_inputs; ++i)
      tract_tensor_free(stream->owned[i]);
  free(stream->owned);
  free(stream->arguments);
  free(stream);
}

tract_stream *tract_stream_new(const tract_model *model, int32_t num_symbols,
                               const char *const *names,
                               const int64_t *values) {
  if (!model || (num_symbols && (!names || !values))) {
    tract_set_error("tract_stream_new: NULL model or symbols");
    return NULL;
  }
  tract_stream *stream = calloc(1, sizeof(tract_stream));
  if (stream) {
    stream->arguments =
        calloc(model->num_inputs + 1, sizeof(const tract_tensor *));
    stream->owned = calloc(model->num_inputs + 1, sizeof(tract_tensor *));
  }
  if (!stream || !stream->arguments || !stream->owned) {
    if (stream) {
      free(stream->arguments);
      free(stream->owned);
    }
    free(stream);
    tract_set_error("%s%sout of memory", MODEL_PREFIX(model));
    return NULL;
  }
  stream->model = model;
  for (int32_t i = 0; i < model->num_inputs; ++i) {
    const tract_io_info *info = &model->inputs[i];
    if (info->role == TRACT_IO_DATA) {
      ++stream->num_data_inputs;
      continue;
    }
    if (info->role == TRACT_IO_SYMBOL) {
      int64_t value = TRACT_UNBOUNDED_LENGTH;
      lookup_symbol(info->name, strlen(info->name), num_symbols, names, values,
                    &value);
      stream->owned[i] = tract_tensor_new(TRACT_DT_I64, 0, NULL);
      if (stream->owned[i])
        *(int64_t *)stream->owned[i]->data = value;
    } else {
      /* The state's dims: integers, or symbols given in `names`. */
      int64_t dims[TRACT_MAX_RANK];
      const char *at = info->shape;
      for (int32_t axis = 0; axis < info->rank; ++axis) {
        size_t length = strcspn(at, ",");
        char *end;
        long long number = strtoll(at, &end, 10);
        if (end == at + length && length > 0) {
          dims[axis] = number;
        } else if (!lookup_symbol(at, length, num_symbols, names, values,
                                  &dims[axis])) {
          tract_set_error("%s%sthe state '%s' has the shape %s; give the "
                          "value of '%.*s'",
                          MODEL_PREFIX(model), info->name, info->shape,
                          (int)length, at);
          tract_stream_free(stream);
          return NULL;
        }
        at += length + (at[length] == ',');
      }
      stream->owned[i] = tract_tensor_new(info->dtype, info->rank, dims);
    }
    if (!stream->owned[i]) {
      tract_stream_free(stream);
      return NULL;
    }
    stream->arguments[i] = stream->owned[i];
  }
  for (int32_t i = 0; i < model->num_outputs; ++i)
    stream->num_data_outputs += model->outputs[i].role == TRACT_IO_DATA;
  return stream;
}

tract_status tract_stream_run(tract_stream *stream,
                              const tract_tensor *const *inputs,
                              tract_tensor **outputs) {
  if (!stream || (!inputs && stream->num_data_inputs) ||
      (!outputs && stream->num_data_outputs))
    return tract_set_error("tract_stream_run: NULL stream, inputs or outputs");
  const tract_model *model = stream->model;
  int32_t data = 0;
  for (int32_t i = 0; i < model->num_inputs; ++i)
    if (model->inputs[i].role == TRACT_IO_DATA)
      stream->arguments[i] = inputs[data++];
  tract_tensor **results =
      calloc(model->num_outputs + 1, sizeof(tract_tensor *));
  if (!results)
    return tract_set_error("%s%sout of memory", MODEL_PREFIX(model));
  tract_status status = tract_model_run(model, stream->arguments, results);
  if (status == TRACT_OK) {
    /* Data outputs to the caller; states, in the order of the state
     * inputs, replace them. */
    int32_t out = 0, state = 0;
    for (int32_t i = 0; i < model->num_outputs; ++i) {
      if (model->outputs[i].role == TRACT_IO_DATA) {
        outputs[out++] = results[i];
        continue;
      }
      while (state < model->num_inputs &&
             model->inputs[state].role != TRACT_IO_STATE)
        ++state;
      tract_tensor_free(stream->owned[state]);
      stream->owned[state] = results[i];
      stream->arguments[state++] = results[i];
    }
  }
  for (int32_t i = 0; i < model->num_inputs; ++i)
    if (model->inputs[i].role == TRACT_IO_DATA)
      stream->arguments[i] = NULL;
  free(results);
  return status;
}
