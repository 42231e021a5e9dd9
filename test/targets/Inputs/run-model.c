/* Runs a compiled model on inputs from .npy files and writes its outputs as
 * .npy files: the program the target tests build for each CPU, with the
 * header of a model compiled as `tract compile --name model`.
 *
 *   run-model OUT_DIR NAME=FILE.npy...
 *
 * Each input of the model is taken from the argument that names it
 * (arguments naming no input are ignored: inputs the model holds as
 * constants); output i goes to OUT_DIR/i.npy, and a line "output i NAME"
 * says so. Little-endian, C-ordered .npy files only. */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *descr;
  tract_dtype dtype;
} kDescrs[] = {
    {"|b1", TRACT_DT_BOOL}, {"|u1", TRACT_DT_U8},  {"<u2", TRACT_DT_U16},
    {"<u4", TRACT_DT_U32},  {"<u8", TRACT_DT_U64}, {"|i1", TRACT_DT_I8},
    {"<i2", TRACT_DT_I16},  {"<i4", TRACT_DT_I32}, {"<i8", TRACT_DT_I64},
    {"<f2", TRACT_DT_F16},  {"<f4", TRACT_DT_F32}, {"<f8", TRACT_DT_F64},
};

static int fail(const char *what, const char *detail) {
  fprintf(stderr, "run-model: %s%s%s\n", what, detail ? ": " : "",
          detail ? detail : "");
  return 1;
}

/* The .npy file at `path` as a new tensor, or NULL (having said why). */
static tract_tensor *read_npy(const char *path) {
  FILE *file = fopen(path, "rb");
  if (!file) {
    fail("cannot open", path);
    return NULL;
  }
  unsigned char magic[10];
  tract_tensor *tensor = NULL;
  char *header = NULL;
  if (fread(magic, 1, 10, file) != 10 || memcmp(magic, "\x93NUMPY", 6)) {
    fail("not an .npy file", path);
    goto done;
  }
  size_t length = magic[8] | (size_t)magic[9] << 8;
  if (magic[6] >= 2) { /* versions 2 and 3: a 4-byte header length */
    unsigned char more[2];
    if (fread(more, 1, 2, file) != 2) {
      fail("truncated .npy header", path);
      goto done;
    }
    length |= (size_t)more[0] << 16 | (size_t)more[1] << 24;
  }
  header = calloc(1, length + 1);
  if (!header || fread(header, 1, length, file) != length) {
    fail("truncated .npy header", path);
    goto done;
  }
  const char *descr = strstr(header, "'descr': '");
  const char *order = strstr(header, "'fortran_order': False");
  const char *shape = strstr(header, "'shape': (");
  if (!descr || !order || !shape) {
    fail("unsupported .npy header (C order expected)", header);
    goto done;
  }
  descr += strlen("'descr': '");
  int dtype = -1;
  for (size_t i = 0; i < sizeof(kDescrs) / sizeof(kDescrs[0]); ++i)
    if (!strncmp(descr, kDescrs[i].descr, 3) && descr[3] == '\'')
      dtype = (int)kDescrs[i].dtype;
  if (dtype < 0) {
    fail("unsupported .npy dtype", header);
    goto done;
  }
  int64_t dims[TRACT_MAX_RANK];
  int32_t rank = 0;
  const char *at = shape + strlen("'shape': (");
  while (*at != ')') {
    char *end;
    long long dim = strtoll(at, &end, 10);
    if (end == at || rank == TRACT_MAX_RANK) {
      fail("bad .npy shape", header);
      goto done;
    }
    dims[rank++] = dim;
    at = end;
    while (*at == ',' || *at == ' ')
      ++at;
  }
  tensor = tract_tensor_new((tract_dtype)dtype, rank, dims);
  if (!tensor) {
    fail(tract_last_error(), path);
    goto done;
  }
  size_t bytes = tract_tensor_nbytes(tensor);
  if (fread(tensor->data, 1, bytes, file) != bytes) {
    fail("truncated .npy data", path);
    tract_tensor_free(tensor);
    tensor = NULL;
  }
done:
  free(header);
  fclose(file);
  return tensor;
}

static int write_npy(const char *path, const tract_tensor *tensor) {
  const char *descr = NULL;
  for (size_t i = 0; i < sizeof(kDescrs) / sizeof(kDescrs[0]); ++i)
    if (kDescrs[i].dtype == tensor->dtype)
      descr = kDescrs[i].descr;
  if (!descr)
    return fail("no .npy dtype for", tract_dtype_name(tensor->dtype));
  char header[512];
  int length =
      snprintf(header, sizeof(header),
               "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int32_t i = 0; i < tensor->rank; ++i)
    length +=
        snprintf(header + length, sizeof(header) - (size_t)length, "%lld,%s",
                 (long long)tensor->dims[i], i + 1 < tensor->rank ? " " : "");
  length += snprintf(header + length, sizeof(header) - (size_t)length, "), }");
  /* Padded with spaces and a newline to a multiple of 64 bytes in all. */
  while ((10 + length + 1) % 64)
    header[length++] = ' ';
  header[length++] = '\n';
  FILE *file = fopen(path, "wb");
  if (!file)
    return fail("cannot write", path);
  unsigned char magic[10] = {0x93,
                             'N',
                             'U',
                             'M',
                             'P',
                             'Y',
                             1,
                             0,
                             (unsigned char)(length & 0xff),
                             (unsigned char)(length >> 8)};
  size_t bytes = tract_tensor_nbytes(tensor);
  int ok = fwrite(magic, 1, 10, file) == 10 &&
           fwrite(header, 1, (size_t)length, file) == (size_t)length &&
           fwrite(tensor->data, 1, bytes, file) == bytes;
  ok &= fclose(file) == 0;
  return ok ? 0 : fail("cannot write", path);
}

int main(int argc, char **argv) {
  if (argc < 2)
    return fail("usage: run-model OUT_DIR NAME=FILE.npy...", NULL);
  const tract_tensor *inputs[MODEL_NUM_INPUTS + 1] = {0};
  tract_tensor *outputs[MODEL_NUM_OUTPUTS + 1] = {0};
  int status = 0;
  for (int i = 0; i < MODEL_NUM_INPUTS && !status; ++i) {
    const char *name = model_model.inputs[i].name;
    size_t length = strlen(name);
    for (int arg = 2; arg < argc && !inputs[i]; ++arg)
      if (!strncmp(argv[arg], name, length) && argv[arg][length] == '=')
        inputs[i] = read_npy(argv[arg] + length + 1);
    if (!inputs[i])
      status = fail("no data for input", name);
  }
  if (!status && model_run(inputs, outputs) != TRACT_OK)
    status = fail("the model refused its inputs", tract_last_error());
  for (int i = 0; i < MODEL_NUM_OUTPUTS && !status; ++i) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/%d.npy", argv[1], i);
    status = write_npy(path, outputs[i]);
    printf("output %d %s\n", i, model_model.outputs[i].name);
  }
  for (int i = 0; i < MODEL_NUM_INPUTS; ++i)
    tract_tensor_free((tract_tensor *)inputs[i]);
  for (int i = 0; i < MODEL_NUM_OUTPUTS; ++i)
    tract_tensor_free(outputs[i]);
  return status;
}
