/* A program outside the tree that embeds tract-mlir through tract.h alone:
 * loads a model at run time, sets a symbol, runs it on an input read from a
 * file and compares output 0 with a reference, then checks that a wrong
 * input is an error, not a crash.
 *
 *   consumer MODEL SET|- INPUT.f32 D0,D1,... EXPECTED.f32 ATOL RTOL
 *
 * MODEL is an ONNX file (tract_onnx_load) or an NNEF archive or folder
 * (tract_nnef_load); SET is `S=1`, or - for none. */
#include <tract.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                            \
  do {                                                                         \
    if ((call) != TRACT_RESULT_OK) {                                           \
      fprintf(stderr, "consumer: %s failed: %s\n", #call,                      \
              tract_get_last_error());                                         \
      return 1;                                                                \
    }                                                                          \
  } while (0)

static float *readFloats(const char *path, size_t *count) {
  FILE *file = fopen(path, "rb");
  if (!file)
    return NULL;
  fseek(file, 0, SEEK_END);
  long bytes = ftell(file);
  fseek(file, 0, SEEK_SET);
  float *data = malloc(bytes > 0 ? (size_t)bytes : 1);
  *count = fread(data, sizeof(float), (size_t)bytes / sizeof(float), file);
  fclose(file);
  return data;
}

int main(int argc, char **argv) {
  if (argc != 8) {
    fprintf(stderr, "usage: consumer MODEL SET|- INPUT D0,D1,... EXPECTED "
                    "ATOL RTOL\n");
    return 2;
  }
  const char *path = argv[1];
  size_t length = strlen(path);
  TractModel *model = NULL;
  if (length > 5 && strcmp(path + length - 5, ".onnx") == 0) {
    TractOnnx *onnx = NULL;
    CHECK(tract_onnx_create(&onnx));
    CHECK(tract_onnx_load(onnx, path, &model));
    CHECK(tract_onnx_destroy(&onnx));
  } else {
    TractNnef *nnef = NULL;
    CHECK(tract_nnef_create(&nnef));
    CHECK(tract_nnef_enable_tract_core(nnef));
    CHECK(tract_nnef_load(nnef, path, &model));
    CHECK(tract_nnef_destroy(&nnef));
  }
  if (strcmp(argv[2], "-") != 0) {
    char symbol[64];
    const char *equals = strchr(argv[2], '=');
    if (!equals || equals - argv[2] >= (long)sizeof(symbol))
      return 2;
    memcpy(symbol, argv[2], equals - argv[2]);
    symbol[equals - argv[2]] = 0;
    const char *names[1] = {symbol};
    int64_t values[1] = {atoll(equals + 1)};
    CHECK(tract_model_concretize_symbols(model, 1, names, values));
  }
  char *fact = NULL;
  CHECK(tract_model_input_fact(model, 0, &fact));
  printf("input 0: %s\n", fact);
  tract_free_cstring(fact);

  size_t shape[8], rank = 0;
  for (char *dim = strtok(argv[4], ","); dim && rank < 8;
       dim = strtok(NULL, ","))
    shape[rank++] = (size_t)atoll(dim);
  size_t count = 0, expectedCount = 0;
  float *input = readFloats(argv[3], &count);
  float *expected = readFloats(argv[5], &expectedCount);
  if (!input || !expected)
    return 2;

  TractRunnable *runnable = NULL;
  CHECK(tract_model_into_runnable(&model, &runnable));
  if (model != NULL)
    return 3; /* consumed */
  TractValue *value = NULL;
  CHECK(tract_value_from_data(TRACT_DATUM_TYPE_F32, rank, shape, input,
                              &value));
  size_t outputs = 0;
  CHECK(tract_runnable_output_count(runnable, &outputs));
  TractValue **results = calloc(outputs, sizeof(TractValue *));
  CHECK(tract_runnable_run(runnable, &value, results));

  TractDatumType type;
  size_t outRank = 0;
  const size_t *outShape = NULL;
  const float *got = NULL;
  CHECK(tract_value_as_bytes(results[0], &type, &outRank, &outShape,
                             (const void **)&got));
  size_t elements = 1;
  for (size_t axis = 0; axis < outRank; ++axis)
    elements *= outShape[axis];
  if (type != TRACT_DATUM_TYPE_F32 || elements != expectedCount) {
    fprintf(stderr, "consumer: output 0 has %zu elements, expected %zu\n",
            elements, expectedCount);
    return 1;
  }
  double atol = atof(argv[6]), rtol = atof(argv[7]), worst = 0;
  size_t off = 0;
  for (size_t i = 0; i < elements; ++i) {
    double diff = fabs((double)got[i] - expected[i]);
    if (diff > worst)
      worst = diff;
    if (diff > atol + rtol * fabs(expected[i]))
      ++off;
  }
  printf("output 0: %zu values, max abs diff %g, %zu out of tolerance\n",
         elements, worst, off);

  /* A wrong shape is an error that names the input. */
  size_t wrong[1] = {count};
  TractValue *flat = NULL;
  CHECK(tract_value_from_data(TRACT_DATUM_TYPE_F32, 1, wrong, input, &flat));
  if (tract_runnable_run(runnable, &flat, results) ==
      TRACT_RESULT_OK) {
    fprintf(stderr, "consumer: a rank-1 input was accepted\n");
    return 1;
  }
  printf("wrong input: %s\n", tract_get_last_error());
  if (tract_get_last_error() == NULL)
    return 1;

  for (size_t i = 0; i < outputs; ++i)
    CHECK(tract_value_destroy(&results[i]));
  free(results);
  CHECK(tract_value_destroy(&flat));
  CHECK(tract_value_destroy(&value));
  CHECK(tract_runnable_release(&runnable));
  free(input);
  free(expected);
  return off == 0 ? 0 : 1;
}
