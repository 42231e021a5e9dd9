/* Streams two inputs through the compiled, pulsified moving-sum model at
 * once, pulse by pulse, each with its own tract_stream: x = 1..10 and
 * x = 10 * (1..10), 10 frames long. Prints each stream's outputs from the
 * model's output delay on: the batch outputs. */
#include "moving_sum.h"

#include <stdio.h>

int main(void) {
  const char *names[] = {"S"};
  const int64_t length[] = {10};
  tract_stream *streams[2] = {
      tract_stream_new(&moving_sum_model, 1, names, length),
      tract_stream_new(&moving_sum_model, 1, names, length)};
  if (!streams[0] || !streams[1]) {
    fprintf(stderr, "error: %s\n", tract_last_error());
    return 1;
  }
  int64_t delay = MOVING_SUM_OUTPUT_DELAY_0, pulse = MOVING_SUM_PULSE;
  float outputs[2][64];
  int64_t produced = 0;
  int64_t dims[3] = {1, 1, pulse};
  for (int64_t step = 0; produced < delay + 10; ++step) {
    for (int s = 0; s < 2; ++s) {
      tract_tensor *frames = tract_tensor_new(TRACT_DT_F32, 3, dims);
      for (int64_t i = 0; i < pulse; ++i) {
        int64_t t = step * pulse + i;
        ((float *)frames->data)[i] = t < 10 ? (float)((t + 1) * (s ? 10 : 1))
                                            : 0.0f;
      }
      const tract_tensor *inputs[1] = {frames};
      tract_tensor *result[1];
      if (tract_stream_run(streams[s], inputs, result) != TRACT_OK) {
        fprintf(stderr, "error: %s\n", tract_last_error());
        return 1;
      }
      for (int64_t i = 0; i < result[0]->dims[2]; ++i)
        outputs[s][produced + i] = ((float *)result[0]->data)[i];
      if (s == 1)
        produced += result[0]->dims[2];
      tract_tensor_free(result[0]);
      tract_tensor_free(frames);
    }
  }
  printf("pulse %lld, delay %lld\n", (long long)pulse, (long long)delay);
  for (int s = 0; s < 2; ++s) {
    for (int64_t t = delay; t < delay + 10; ++t)
      printf("%g%s", outputs[s][t], t + 1 < delay + 10 ? " " : "\n");
  }
  tract_stream_free(streams[0]);
  tract_stream_free(streams[1]);
  return 0;
}
