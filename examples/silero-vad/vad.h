/* Silero VAD v5 over 16 kHz audio, with the model `tract compile` made
 * (silero.h, silero.o): the speech probability of each 512-sample window,
 * as silero's Python wrapper computes it, and the speech segments of a run
 * of windows, as its get_speech_timestamps finds them. The command-line
 * example (main.c) and the web page (examples/vad-web) share it. */
#ifndef VAD_H
#define VAD_H

#include <stdint.h>

#define VAD_SAMPLE_RATE 16000
/* Silero v5 at 16 kHz takes 512 new samples per call, preceded by the last
 * 64 samples of the previous window as context. */
#define VAD_WINDOW 512
#define VAD_CONTEXT 64

typedef struct vad_options {
  double threshold;     /* a window is speech at or above this probability */
  double neg_threshold; /* ... and stays speech until it drops below this */
  int min_speech_ms;    /* shorter segments are dropped */
  int min_silence_ms;   /* silence needed to end a segment */
  int speech_pad_ms;    /* padding added to each side of a segment */
} vad_options;

/* silero's defaults: 0.5, 0.35, 250 ms, 100 ms, 30 ms. */
vad_options vad_default_options(void);

typedef struct vad_segment {
  int64_t start, end; /* in samples */
} vad_segment;

/* The model's context and recurrent state across windows. */
typedef struct vad_stream vad_stream;
/* A stream at the start of the audio; NULL (tract_last_error() says why)
 * if the tensors cannot be allocated. */
vad_stream *vad_stream_new(void);
/* The speech probability of the next window: `count` samples (at most
 * VAD_WINDOW; fewer at the end of the audio, padded with zeros). Returns
 * 0, or -1 if the model failed (tract_last_error() says why). */
int vad_stream_window(vad_stream *stream, const float *samples, int64_t count,
                      float *probability);
void vad_stream_free(vad_stream *stream);

/* The speech segments of `num_windows` windows' probabilities over
 * `num_samples` samples, written to `segments` (room for one per window is
 * enough); returns their number. */
int64_t vad_segments(const float *probs, int64_t num_windows,
                     int64_t num_samples, const vad_options *options,
                     vad_segment *segments);

#endif /* VAD_H */
