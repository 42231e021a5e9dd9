/* Single-core FP32 FMA peak of this machine, in GFLOP/s (one number on
 * stdout). Built by scripts/bench.sh with `cc -O2 -march=native`, so that the
 * widest vector unit the CPU has is used: AVX-512, else AVX2/FMA, else NEON.
 *
 * Independent accumulators enough to cover the FMA latency (4 cycles) on 2
 * FMA pipes with room to spare: 16 where there are 32 vector registers, 12
 * on AVX2, whose 16 registers also hold the two operands (16 accumulators
 * there spill two of them on every step, and the figure halves).
 * Each round runs for about 50 ms; the best round is the peak, so that an
 * interrupt or a frequency ramp does not count. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <time.h>

#if defined(__AVX512F__)
#include <immintrin.h>
typedef __m512 vec;
#define LANES 16
#define SPLAT(x) _mm512_set1_ps(x)
#define FMA(acc, a, b) acc = _mm512_fmadd_ps(acc, a, b)
#define SUM(v) _mm512_reduce_add_ps(v)
#define ISA "avx512"
#define ACCUMULATORS 16
#elif defined(__FMA__) && defined(__AVX2__)
#include <immintrin.h>
typedef __m256 vec;
#define LANES 8
#define SPLAT(x) _mm256_set1_ps(x)
#define FMA(acc, a, b) acc = _mm256_fmadd_ps(acc, a, b)
static float SUM(__m256 v) {
  float lanes[8];
  _mm256_storeu_ps(lanes, v);
  float s = 0;
  for (int i = 0; i < 8; ++i) s += lanes[i];
  return s;
}
#define ISA "avx2"
#define ACCUMULATORS 12
#elif defined(__ARM_NEON)
#include <arm_neon.h>
typedef float32x4_t vec;
#define LANES 4
#define SPLAT(x) vdupq_n_f32(x)
#define FMA(acc, a, b) acc = vfmaq_f32(b, acc, a) /* b + acc * a */
#define SUM(v) vaddvq_f32(v)
#define ISA "neon"
#define ACCUMULATORS 16
#else
typedef float vec; /* no vector unit known: scalar FMAs */
#define LANES 1
#define SPLAT(x) (x)
#define FMA(acc, a, b) acc = __builtin_fmaf(acc, a, b)
#define SUM(v) (v)
#define ISA "scalar"
#define ACCUMULATORS 12
#endif


static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* `iterations` steps of acc = acc * a + b on every accumulator. a < 1 keeps
 * the values bounded (they converge to b / (1 - a)), far from denormals. */
static float kernel(long iterations, float seed) {
  vec a = SPLAT(0.999999f), b = SPLAT(1e-6f);
  vec acc[ACCUMULATORS];
  for (int i = 0; i < ACCUMULATORS; ++i) acc[i] = SPLAT(seed + (float)i);
  for (long n = 0; n < iterations; ++n) {
    /* Written out so that each accumulator stays in its own register. */
    FMA(acc[0], a, b);  FMA(acc[1], a, b);  FMA(acc[2], a, b);
    FMA(acc[3], a, b);  FMA(acc[4], a, b);  FMA(acc[5], a, b);
    FMA(acc[6], a, b);  FMA(acc[7], a, b);  FMA(acc[8], a, b);
    FMA(acc[9], a, b);  FMA(acc[10], a, b); FMA(acc[11], a, b);
#if ACCUMULATORS > 12
    FMA(acc[12], a, b); FMA(acc[13], a, b); FMA(acc[14], a, b);
    FMA(acc[15], a, b);
#endif
  }
  float sum = 0;
  for (int i = 0; i < ACCUMULATORS; ++i) sum += SUM(acc[i]);
  return sum;
}

int main(int argc, char **argv) {
  int rounds = 10;
  if (argc > 1 && sscanf(argv[1], "%d", &rounds) != 1) rounds = 10;
  /* Calibrate: grow the iteration count until a round takes ~50 ms. */
  long iterations = 1 << 16;
  volatile float sink = 0;
  for (;;) {
    double start = now();
    sink += kernel(iterations, 1.0f);
    if (now() - start > 0.05 || iterations > (1L << 40)) break;
    iterations *= 2;
  }
  double best = 0;
  for (int round = 0; round < rounds; ++round) {
    double start = now();
    sink += kernel(iterations, (float)round);
    double seconds = now() - start;
    double gflops = 2.0 * ACCUMULATORS * LANES * (double)iterations / seconds * 1e-9;
    if (gflops > best) best = gflops;
  }
  fprintf(stderr, "fma_peak: %s, %d accumulators of %d lanes (%g)\n", ISA,
          ACCUMULATORS, LANES, (double)sink);
  printf("%.1f\n", best);
  return 0;
}
