/* Silero VAD v5 windows and segments: see vad.h. */
#include "vad.h"

#include "silero.h"
#include "tract_runtime.h"

#include <stdlib.h>
#include <string.h>

/* Compiled with the facts of README.md: `sr` is a constant, not an input. */
_Static_assert(SILERO_NUM_INPUTS == 2,
               "compile Silero with -i sr:i64=16000 (see README.md)");
_Static_assert(SILERO_NUM_OUTPUTS == 2, "Silero returns output and stateN");

vad_options vad_default_options(void) {
  vad_options options = {0.5, 0.35, 250, 100, 30};
  return options;
}

struct vad_stream {
  tract_tensor *input; /* context, then the window; zeros at first */
  tract_tensor *state;
};

vad_stream *vad_stream_new(void) {
  int64_t input_dims[] = {1, VAD_CONTEXT + VAD_WINDOW};
  int64_t state_dims[] = {2, 1, 128};
  vad_stream *stream = calloc(1, sizeof(vad_stream));
  if (!stream)
    return NULL;
  stream->input = tract_tensor_new(TRACT_DT_F32, 2, input_dims);
  stream->state = tract_tensor_new(TRACT_DT_F32, 3, state_dims);
  if (!stream->input || !stream->state) {
    vad_stream_free(stream);
    return NULL;
  }
  return stream;
}

int vad_stream_window(vad_stream *stream, const float *samples, int64_t count,
                      float *probability) {
  if (count < 0 || count > VAD_WINDOW)
    return -1;
  float *x = stream->input->data;
  memmove(x, x + VAD_WINDOW, VAD_CONTEXT * sizeof(float));
  memcpy(x + VAD_CONTEXT, samples, (size_t)count * sizeof(float));
  memset(x + VAD_CONTEXT + count, 0,
         (size_t)(VAD_WINDOW - count) * sizeof(float));
  const tract_tensor *inputs[] = {stream->input, stream->state};
  tract_tensor *outputs[2] = {NULL, NULL};
  if (silero_run(inputs, outputs) != TRACT_OK)
    return -1;
  *probability = *(const float *)outputs[0]->data;
  tract_tensor_free(outputs[0]);
  /* The next window starts from the state this one left. */
  tract_tensor_free(stream->state);
  stream->state = outputs[1];
  return 0;
}

void vad_stream_free(vad_stream *stream) {
  if (!stream)
    return;
  tract_tensor_free(stream->input);
  tract_tensor_free(stream->state);
  free(stream);
}

/* ---- segmentation, as silero's get_speech_timestamps ---- */

int64_t vad_segments(const float *probs, int64_t num_windows,
                     int64_t num_samples, const vad_options *opt,
                     vad_segment *segments) {
  /* Each segment starts in a distinct window. */
  const int64_t ms = VAD_SAMPLE_RATE / 1000;
  const int64_t min_speech = opt->min_speech_ms * ms;
  const int64_t min_silence = opt->min_silence_ms * ms;
  const int64_t pad = opt->speech_pad_ms * ms;
  int64_t count = 0, start = 0, temp_end = 0;
  int triggered = 0;

  for (int64_t i = 0; i < num_windows; ++i) {
    int64_t here = i * VAD_WINDOW;
    if (probs[i] >= opt->threshold && temp_end)
      temp_end = 0;
    if (probs[i] >= opt->threshold && !triggered) {
      triggered = 1;
      start = here;
      continue;
    }
    if (probs[i] < opt->neg_threshold && triggered) {
      /* Speech ends where the silence began, once it has lasted long
       * enough. */
      if (!temp_end)
        temp_end = here;
      if (here - temp_end < min_silence)
        continue;
      if (temp_end - start > min_speech)
        segments[count++] = (vad_segment){start, temp_end};
      triggered = 0;
      temp_end = 0;
    }
  }
  if (triggered && num_samples - start > min_speech)
    segments[count++] = (vad_segment){start, num_samples};

  /* Pad each segment, splitting the silence between two segments closer
   * than twice the padding. */
  for (int64_t i = 0; i < count; ++i) {
    vad_segment *s = &segments[i];
    if (i == 0)
      s->start = s->start > pad ? s->start - pad : 0;
    if (i + 1 < count) {
      vad_segment *next = &segments[i + 1];
      int64_t silence = next->start - s->end;
      int64_t shift = silence < 2 * pad ? silence / 2 : pad;
      s->end += shift;
      next->start = next->start > shift ? next->start - shift : 0;
    } else {
      s->end = s->end + pad < num_samples ? s->end + pad : num_samples;
    }
  }
  return count;
}
