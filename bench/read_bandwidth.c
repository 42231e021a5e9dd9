/* The memory read bandwidth one core reaches, in GB/s (one number on
 * stdout): the best of 10 sums over a buffer of SIZE_MB megabytes (the
 * first argument, 256 by default), far larger than the caches. Built by
 * scripts/llm-bench.sh with `cc -O2 -march=native`; token generation,
 * which reads every weight once per token, is bound by it. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  size_t megabytes = argc > 1 ? (size_t)atol(argv[1]) : 256;
  size_t count = megabytes * 1024 * 1024 / sizeof(float);
  float *data = aligned_alloc(64, count * sizeof(float));
  if (!data)
    return 1;
  for (size_t i = 0; i < count; ++i)
    data[i] = (float)(i & 1023);
  double best = 1e30, total = 0;
  for (int round = 0; round < 10; ++round) {
    double start = seconds();
    /* 16 partial sums: independent chains the compiler vectorizes. */
    float sums[16] = {0};
    for (size_t i = 0; i + 16 <= count; i += 16)
      for (int j = 0; j < 16; ++j)
        sums[j] += data[i + j];
    double elapsed = seconds() - start;
    for (int j = 0; j < 16; ++j)
      total += sums[j];
    if (elapsed < best)
      best = elapsed;
  }
  /* The total keeps the sums alive; it is printed to stderr only. */
  fprintf(stderr, "checksum %g\n", total);
  printf("%.1f\n", count * sizeof(float) / best / 1e9);
  free(data);
  return 0;
}
