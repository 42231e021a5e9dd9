/* The WebAssembly side of the VAD page: the Silero VAD stream and the
 * segmentation of examples/silero-vad/vad.c, exported to the page's
 * JavaScript (vad.js) from a WASI reactor module. Samples, probabilities
 * and segments pass through buffers the page allocates with vad_alloc. */
#include "tract_runtime.h"
#include "vad.h"

#include <stdlib.h>

#define EXPORT(name) __attribute__((export_name(#name)))

static vad_stream *stream;

/* Starts a new audio stream (zero context and state); 0, or -1. */
EXPORT(vad_reset) int vad_reset(void) {
  vad_stream_free(stream);
  stream = vad_stream_new();
  return stream ? 0 : -1;
}

/* The speech probability of the next window of `count` samples (at most
 * 512), or -1 on an error (vad_error says which). */
EXPORT(vad_window) float vad_window(const float *samples, int count) {
  float probability;
  if (!stream || vad_stream_window(stream, samples, count, &probability))
    return -1;
  return probability;
}

/* The segments of `windows` probabilities over `samples` samples with
 * silero's default options, as pairs of sample positions in `out` (room for
 * 2 * windows); returns their number, or -1. */
EXPORT(vad_segments_of)
int vad_segments_of(const float *probs, int windows, int samples, int *out) {
  vad_segment *segments = malloc(((size_t)windows + 1) * sizeof(vad_segment));
  if (!segments)
    return -1;
  vad_options options = vad_default_options();
  int64_t count = vad_segments(probs, windows, samples, &options, segments);
  for (int64_t i = 0; i < count; ++i) {
    out[2 * i] = (int)segments[i].start;
    out[2 * i + 1] = (int)segments[i].end;
  }
  free(segments);
  return (int)count;
}

EXPORT(vad_alloc) void *vad_alloc(int bytes) { return malloc((size_t)bytes); }
EXPORT(vad_free) void vad_free(void *buffer) { free(buffer); }
EXPORT(vad_error) const char *vad_error(void) { return tract_last_error(); }
