/* Runs the compiled examples/tiny model on 3 frames: prints the outputs and
 * writes the input and output as raw little-endian floats for comparison
 * with `tract run`. Then shows that wrong inputs are refused. */
#include "tiny.h"

#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: run-tiny INPUT.raw OUTPUT.raw\n");
    return 2;
  }
  int64_t dims[3] = {1, 3, 4};
  tract_tensor *frames = tract_tensor_new(TRACT_DT_F32, 3, dims);
  float *data = (float *)frames->data;
  for (int i = 0; i < 12; ++i)
    data[i] = 0.25f * (float)i - 1.0f;
  const tract_tensor *inputs[TINY_NUM_INPUTS] = {frames};
  tract_tensor *outputs[TINY_NUM_OUTPUTS];
  if (tiny_run(inputs, outputs) != TRACT_OK) {
    fprintf(stderr, "error: %s\n", tract_last_error());
    return 1;
  }
  tract_tensor *gated = outputs[0];
  printf("%s: %s %d,%d,%d\n", tiny_model.outputs[0].name,
         tract_dtype_name(gated->dtype), (int)gated->dims[0],
         (int)gated->dims[1], (int)gated->dims[2]);
  for (int64_t i = 0; i < tract_tensor_len(gated); ++i)
    printf("%.6f%s", ((float *)gated->data)[i], i % 4 == 3 ? "\n" : " ");
  FILE *input = fopen(argv[1], "wb"), *output = fopen(argv[2], "wb");
  if (!input || !output)
    return 1;
  fwrite(frames->data, 1, tract_tensor_nbytes(frames), input);
  fwrite(gated->data, 1, tract_tensor_nbytes(gated), output);
  fclose(input);
  fclose(output);
  tract_tensor_free(gated);

  int64_t wrong[2] = {3, 4};
  tract_tensor *flat = tract_tensor_new(TRACT_DT_F32, 2, wrong);
  const tract_tensor *bad[TINY_NUM_INPUTS] = {flat};
  if (tiny_run(bad, outputs) != TRACT_ERROR)
    return 1;
  printf("refused: %s\n", tract_last_error());
  tract_tensor_free(flat);

  /* A wrong dim is refused by the compiled code's own checks. */
  int64_t wide[3] = {2, 3, 4};
  tract_tensor *batch = tract_tensor_new(TRACT_DT_F32, 3, wide);
  const tract_tensor *batched[TINY_NUM_INPUTS] = {batch};
  if (tiny_run(batched, outputs) != TRACT_ERROR || outputs[0])
    return 1;
  printf("refused: %s\n", tract_last_error());
  tract_tensor_free(batch);

  /* A dim of 2^32 (and no element): a wrong dim for the compiled checks;
   * on a 32-bit target, past what its index holds, which the runtime
   * refuses first. */
  int64_t huge[3] = {1, 0, INT64_C(1) << 32};
  tract_tensor *empty = tract_tensor_new(TRACT_DT_F32, 3, huge);
  const tract_tensor *long_input[TINY_NUM_INPUTS] = {empty};
  if (!empty || tiny_run(long_input, outputs) != TRACT_ERROR || outputs[0])
    return 1;
  printf("refused: %s\n", tract_last_error());
  tract_tensor_free(empty);
  tract_tensor_free(frames);
  return 0;
}
