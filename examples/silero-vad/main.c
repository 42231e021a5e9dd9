/* Voice activity detection with Silero VAD v5 compiled ahead of time by
 * `tract compile`: reads a 16 kHz mono 16-bit PCM WAV file, runs the model
 * over it the way silero's Python wrapper does, and prints the speech
 * segments as its get_speech_timestamps finds them.
 *
 * Build (see README.md):
 *   tract -i input:1,576,f32 -i state:2,1,128,f32 -i sr:i64=16000 \
 *       silero_vad_v5.onnx compile -o silero.o --header silero.h --name silero
 *   cc -O2 -I<repo>/runtime -I. main.c vad.c silero.o libtract_runtime.a -lm
 * (vad.c runs the model and finds the segments; this file reads the WAV
 * file and the options and prints). */
#include "tract_runtime.h"
#include "vad.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SAMPLE_RATE VAD_SAMPLE_RATE

static const char *program = "silero-vad";

static void usage(FILE *out) {
  fprintf(out,
          "usage: %s [options] CLIP.wav\n"
          "Prints the speech segments of a 16 kHz mono 16-bit PCM WAV file.\n"
          "  --threshold P       speech probability threshold (0.5)\n"
          "  --neg-threshold P   end-of-speech threshold (threshold - 0.15)\n"
          "  --min-speech-ms N   drop shorter segments (250)\n"
          "  --min-silence-ms N  silence that ends a segment (100)\n"
          "  --speech-pad-ms N   padding on each side of a segment (30)\n"
          "  --print-probs       print the speech probability of each window\n",
          program);
}

/* ---- WAV reading ---- */

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

static uint16_t le16(const unsigned char *p) {
  return (uint16_t)(p[0] | p[1] << 8);
}

static unsigned char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "%s: cannot open %s: %s\n", program, path, strerror(errno));
    return NULL;
  }
  size_t capacity = 1 << 16, used = 0;
  unsigned char *data = malloc(capacity);
  while (data) {
    used += fread(data + used, 1, capacity - used, f);
    if (used < capacity)
      break;
    unsigned char *grown = realloc(data, capacity * 2);
    if (!grown)
      free(data);
    data = grown;
    capacity *= 2;
  }
  int failed = ferror(f);
  fclose(f);
  if (!data || failed) {
    fprintf(stderr, "%s: cannot read %s\n", program, path);
    free(data);
    return NULL;
  }
  *size = used;
  return data;
}

/* Reads a RIFF/WAVE file of 16 kHz mono 16-bit PCM into floats in [-1, 1),
 * as torchaudio loads it. Reports what does not match on stderr. */
static float *read_wav(const char *path, int64_t *num_samples) {
  size_t size;
  unsigned char *file = read_file(path, &size);
  if (!file)
    return NULL;
  float *samples = NULL;
  const unsigned char *fmt = NULL, *data = NULL;
  size_t fmt_size = 0, data_size = 0;

  if (size < 12 || memcmp(file, "RIFF", 4) || memcmp(file + 8, "WAVE", 4)) {
    fprintf(stderr, "%s: %s: not a RIFF/WAVE file\n", program, path);
    goto done;
  }
  for (size_t at = 12; at + 8 <= size;) {
    const unsigned char *chunk = file + at;
    size_t chunk_size = le32(chunk + 4);
    size_t available = size - at - 8;
    if (!memcmp(chunk, "fmt ", 4)) {
      if (chunk_size < 16 || chunk_size > available) {
        fprintf(stderr, "%s: %s: truncated fmt chunk\n", program, path);
        goto done;
      }
      fmt = chunk + 8;
      fmt_size = chunk_size;
    } else if (!memcmp(chunk, "data", 4)) {
      data = chunk + 8;
      /* Streamed files may leave the size unset: read what is there. */
      data_size = chunk_size < available ? chunk_size : available;
      break;
    }
    if (chunk_size > available)
      break;
    at += 8 + chunk_size + (chunk_size & 1);
  }
  if (!fmt) {
    fprintf(stderr, "%s: %s: no fmt chunk before the samples\n", program, path);
    goto done;
  }
  if (!data) {
    fprintf(stderr, "%s: %s: no data chunk\n", program, path);
    goto done;
  }

  unsigned format = le16(fmt), channels = le16(fmt + 2);
  unsigned long rate = le32(fmt + 4);
  unsigned bits = le16(fmt + 14);
  /* WAVE_FORMAT_EXTENSIBLE names the real format in its sub-format GUID. */
  if (format == 0xFFFE && fmt_size >= 26)
    format = le16(fmt + 24);
  if (format != 1) {
    fprintf(stderr, "%s: %s: format tag %u; expected integer PCM (1)\n",
            program, path, format);
    goto done;
  }
  if (bits != 16) {
    fprintf(stderr, "%s: %s: %u-bit samples; expected 16-bit\n", program, path,
            bits);
    goto done;
  }
  if (channels != 1) {
    fprintf(stderr, "%s: %s: %u channels; expected mono\n", program, path,
            channels);
    goto done;
  }
  if (rate != SAMPLE_RATE) {
    fprintf(stderr, "%s: %s: %lu Hz; expected %d Hz\n", program, path, rate,
            SAMPLE_RATE);
    goto done;
  }

  *num_samples = (int64_t)(data_size / 2);
  samples =
      malloc((size_t)(*num_samples > 0 ? *num_samples : 1) * sizeof(float));
  if (!samples) {
    fprintf(stderr, "%s: %s: out of memory\n", program, path);
    goto done;
  }
  for (int64_t i = 0; i < *num_samples; ++i)
    samples[i] = (float)(int16_t)le16(data + 2 * i) / 32768.0f;
done:
  free(file);
  return samples;
}

/* ---- the model ---- */

static double seconds_now(void) {
  struct timespec ts;
  timespec_get(&ts, TIME_UTC);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs Silero over the audio, one probability per 512-sample window; the
 * last window is padded with zeros. Returns NULL on a model error. */
static float *speech_probabilities(const float *audio, int64_t num_samples,
                                   int64_t *num_windows) {
  *num_windows = (num_samples + VAD_WINDOW - 1) / VAD_WINDOW;
  float *probs = malloc((size_t)(*num_windows + 1) * sizeof(float));
  vad_stream *stream = vad_stream_new();
  if (!probs || !stream) {
    fprintf(stderr, "%s: cannot allocate the model's inputs: %s\n", program,
            tract_last_error());
    goto fail;
  }
  for (int64_t w = 0; w < *num_windows; ++w) {
    int64_t start = w * VAD_WINDOW;
    int64_t n =
        num_samples - start < VAD_WINDOW ? num_samples - start : VAD_WINDOW;
    if (vad_stream_window(stream, audio + start, n, &probs[w])) {
      fprintf(stderr, "%s: the model failed on window %lld: %s\n", program,
              (long long)w, tract_last_error());
      goto fail;
    }
  }
  vad_stream_free(stream);
  return probs;

fail:
  free(probs);
  vad_stream_free(stream);
  return NULL;
}

/* ---- command line ---- */

static int parse_number(const char *flag, const char *text, double low,
                        double high, double *out) {
  char *end;
  errno = 0;
  double value = text ? strtod(text, &end) : 0;
  if (!text || end == text || *end || errno || !(value >= low) ||
      !(value <= high)) {
    if (text)
      fprintf(stderr, "%s: %s expects a number in [%g, %g], got '%s'\n",
              program, flag, low, high, text);
    else
      fprintf(stderr, "%s: %s expects a number in [%g, %g]\n", program, flag,
              low, high);
    return 0;
  }
  *out = value;
  return 1;
}

/* The value after the option at argv[*i], or NULL if there is none. */
static const char *value_of(int argc, char **argv, int *i) {
  return *i + 1 < argc ? argv[++*i] : NULL;
}

int main(int argc, char **argv) {
  vad_options opt = vad_default_options();
  opt.neg_threshold = -1; /* unless given: threshold - 0.15 */
  int print_probs = 0;
  const char *path = NULL;
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    double value;
    int ok = 1;
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(arg, "--print-probs")) {
      print_probs = 1;
    } else if (!strcmp(arg, "--threshold")) {
      ok = parse_number(arg, value_of(argc, argv, &i), 0, 1, &opt.threshold);
    } else if (!strcmp(arg, "--neg-threshold")) {
      ok =
          parse_number(arg, value_of(argc, argv, &i), 0, 1, &opt.neg_threshold);
    } else if (!strcmp(arg, "--min-speech-ms")) {
      ok = parse_number(arg, value_of(argc, argv, &i), 0, 1e6, &value);
      opt.min_speech_ms = (int)value;
    } else if (!strcmp(arg, "--min-silence-ms")) {
      ok = parse_number(arg, value_of(argc, argv, &i), 0, 1e6, &value);
      opt.min_silence_ms = (int)value;
    } else if (!strcmp(arg, "--speech-pad-ms")) {
      ok = parse_number(arg, value_of(argc, argv, &i), 0, 1e6, &value);
      opt.speech_pad_ms = (int)value;
    } else if (arg[0] == '-' && arg[1]) {
      fprintf(stderr, "%s: unknown option %s\n", program, arg);
      usage(stderr);
      return 2;
    } else if (path) {
      fprintf(stderr, "%s: one WAV file expected, got %s and %s\n", program,
              path, arg);
      return 2;
    } else {
      path = arg;
    }
    if (!ok)
      return 2;
  }
  if (!path) {
    usage(stderr);
    return 2;
  }
  if (opt.neg_threshold < 0)
    opt.neg_threshold =
        opt.threshold - 0.15 > 0.01 ? opt.threshold - 0.15 : 0.01;

  int64_t num_samples;
  float *audio = read_wav(path, &num_samples);
  if (!audio)
    return 1;

  double began = seconds_now();
  int64_t num_windows;
  float *probs = speech_probabilities(audio, num_samples, &num_windows);
  double elapsed = seconds_now() - began;
  free(audio);
  if (!probs)
    return 1;

  if (print_probs)
    for (int64_t w = 0; w < num_windows; ++w)
      printf("window %5lld at %6.2f s: %.6f\n", (long long)w,
             (double)(w * VAD_WINDOW) / SAMPLE_RATE, probs[w]);

  vad_segment *segments =
      malloc((size_t)(num_windows + 1) * sizeof(vad_segment));
  if (!segments) {
    fprintf(stderr, "%s: out of memory\n", program);
    free(probs);
    return 1;
  }
  int64_t count = vad_segments(probs, num_windows, num_samples, &opt, segments);
  int64_t speech = 0;
  for (int64_t i = 0; i < count; ++i) {
    printf("speech %.2f s - %.2f s\n", (double)segments[i].start / SAMPLE_RATE,
           (double)segments[i].end / SAMPLE_RATE);
    speech += segments[i].end - segments[i].start;
  }
  double duration = (double)num_samples / SAMPLE_RATE;
  printf("%lld speech segment%s, %.2f s of speech in %.2f s of audio; "
         "%lld windows in %.3f s (%.3f ms each, %.0fx real time)\n",
         (long long)count, count == 1 ? "" : "s", (double)speech / SAMPLE_RATE,
         duration, (long long)num_windows, elapsed,
         num_windows ? elapsed * 1e3 / (double)num_windows : 0.0,
         elapsed > 0 ? duration / elapsed : 0.0);
  free(segments);
  free(probs);
  return 0;
}
