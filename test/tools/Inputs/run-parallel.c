/* Runs the compiled parallel-product model (made for several threads) from
 * two threads at once, several times each, and checks every output
 * against a plain C product: tract_model_run is reentrant and each run
 * shares its tiles among its own OpenMP team. */
#include "parallel.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { M = 200, K = 260, N = 330, kRuns = 20 };

static tract_tensor *x, *w;
static float expected[M * N];
static int threads;

static void *run_many(void *arg) {
  const char *who = (const char *)arg;
  /* The team size is each calling thread's own. */
  if (tract_set_threads(threads) != TRACT_OK) {
    fprintf(stderr, "%s: %s\n", who, tract_last_error());
    return (void *)1;
  }
  for (int run = 0; run < kRuns; ++run) {
    const tract_tensor *inputs[PARALLEL_NUM_INPUTS] = {x, w};
    tract_tensor *outputs[PARALLEL_NUM_OUTPUTS];
    if (parallel_run(inputs, outputs) != TRACT_OK) {
      fprintf(stderr, "%s: %s\n", who, tract_last_error());
      return (void *)1;
    }
    const float *y = (const float *)outputs[0]->data;
    for (int i = 0; i < M * N; ++i)
      if (fabsf(y[i] - expected[i]) > 1e-4f) {
        fprintf(stderr, "%s: run %d: element %d is %f, expected %f\n", who,
                run, i, y[i], expected[i]);
        tract_tensor_free(outputs[0]);
        return (void *)1;
      }
    tract_tensor_free(outputs[0]);
  }
  return NULL;
}

int main(int argc, char **argv) {
  threads = argc > 1 ? atoi(argv[1]) : 2;
  int64_t xdims[2] = {M, K}, wdims[2] = {K, N};
  x = tract_tensor_new(TRACT_DT_F32, 2, xdims);
  w = tract_tensor_new(TRACT_DT_F32, 2, wdims);
  float *xs = (float *)x->data, *ws = (float *)w->data;
  for (int i = 0; i < M * K; ++i)
    xs[i] = (float)((i * 7919) % 101) / 101.0f - 0.5f;
  for (int i = 0; i < K * N; ++i)
    ws[i] = (float)((i * 104729) % 97) / 970.0f - 0.05f;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double sum = 0.125;
      for (int k = 0; k < K; ++k)
        sum += (double)xs[i * K + k] * ws[k * N + j];
      expected[i * N + j] = (float)tanh(sum);
    }

  pthread_t first, second;
  void *failed[2];
  pthread_create(&first, NULL, run_many, "first thread");
  pthread_create(&second, NULL, run_many, "second thread");
  pthread_join(first, &failed[0]);
  pthread_join(second, &failed[1]);
  if (failed[0] || failed[1])
    return 1;
  printf("%d runs from each of two threads on teams of %d: all outputs right\n",
         kRuns, threads);
  tract_tensor_free(x);
  tract_tensor_free(w);
  return 0;
}
