#include "runtime/tract_runtime.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char last_error[1024];

const char *tract_last_error(void) { return last_error; }

void tract_clear_error(void) { last_error[0] = '\0'; }

tract_status tract_set_error(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vsnprintf(last_error, sizeof(last_error), fmt, args);
  va_end(args);
  return TRACT_ERROR;
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
  /* aligned_alloc wants a size multiple of the alignment, and non-zero. */
  size_t padded = (size_t)((bytes + TRACT_TENSOR_ALIGN - 1) /
                           TRACT_TENSOR_ALIGN * TRACT_TENSOR_ALIGN);
  if (padded == 0)
    padded = TRACT_TENSOR_ALIGN;
  t->data = aligned_alloc(TRACT_TENSOR_ALIGN, padded);
  if (!t->data) {
    free(t);
    tract_set_error("out of memory allocating %llu bytes",
                    (unsigned long long)bytes);
    return NULL;
  }
  memset(t->data, 0, padded);
  return t;
}

void tract_tensor_free(tract_tensor *t) {
  if (!t)
    return;
  free(t->data);
  free(t);
}

/* The ranked memref descriptor behind an unranked one. */
typedef struct memref_view {
  char *aligned;
  int64_t offset;
  const int64_t *sizes;
  const int64_t *strides;
} memref_view;

static memref_view memref_view_of(const tract_unranked_memref *memref) {
  const int64_t *words = (const int64_t *)memref->descriptor;
  memref_view view;
  view.aligned = (char *)(intptr_t)words[1];
  view.offset = words[2];
  view.sizes = words + 3;
  view.strides = words + 3 + memref->rank;
  return view;
}

void memrefCopy(int64_t element_size, tract_unranked_memref *source,
                tract_unranked_memref *destination) {
  int64_t rank = source->rank;
  memref_view from = memref_view_of(source);
  memref_view to = memref_view_of(destination);
  int64_t count = 1;
  for (int64_t axis = 0; axis < rank; ++axis)
    count *= from.sizes[axis];
  if (count == 0)
    return;
  /* Walk the elements in row-major order with an index per axis. */
  int64_t index[TRACT_MAX_RANK] = {0};
  if (rank > TRACT_MAX_RANK)
    return;
  int64_t from_offset = from.offset, to_offset = to.offset;
  for (int64_t done = 0; done < count; ++done) {
    memcpy(to.aligned + to_offset * element_size,
           from.aligned + from_offset * element_size, (size_t)element_size);
    for (int64_t axis = rank - 1; axis >= 0; --axis) {
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
