/* Silero VAD v5 through libtract's C API: loads the ONNX model at run time,
 * fixes its input facts, compiles it in process and streams a 16 kHz mono
 * WAV file through it, window by window, the recurrent state fed back.
 * Prints the speech segments as `speech START s - END s`.
 *
 *   vad silero_vad_v5.onnx speech.wav */
#include <tract.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kRate = 16000, kWindow = 512, kContext = 64 };

#define CHECK(call)                                                            \
  do {                                                                         \
    if ((call) != TRACT_RESULT_OK) {                                           \
      fprintf(stderr, "vad: %s\n", tract_get_last_error());                   \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

/* The samples of a 16-bit PCM WAV file, scaled to [-1, 1). */
static float *readWav(const char *path, size_t *count) {
  FILE *file = fopen(path, "rb");
  if (!file)
    return NULL;
  unsigned char header[12], chunk[8];
  if (fread(header, 1, 12, file) != 12 || memcmp(header, "RIFF", 4) ||
      memcmp(header + 8, "WAVE", 4))
    return NULL;
  while (fread(chunk, 1, 8, file) == 8) {
    uint32_t size = chunk[4] | chunk[5] << 8 | chunk[6] << 16 |
                    (uint32_t)chunk[7] << 24;
    if (memcmp(chunk, "data", 4) != 0) {
      fseek(file, size + (size & 1), SEEK_CUR);
      continue;
    }
    *count = size / 2;
    float *samples = malloc(*count * sizeof(float) + 1);
    for (size_t i = 0; i < *count; ++i) {
      unsigned char pcm[2];
      if (fread(pcm, 1, 2, file) != 2)
        break;
      samples[i] = (int16_t)(pcm[0] | pcm[1] << 8) / 32768.0f;
    }
    fclose(file);
    return samples;
  }
  fclose(file);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: vad MODEL.onnx SPEECH.wav\n");
    return 2;
  }
  size_t count = 0;
  float *samples = readWav(argv[2], &count);
  if (!samples) {
    fprintf(stderr, "vad: cannot read %s\n", argv[2]);
    return 1;
  }

  TractOnnx *onnx;
  TractModel *model;
  TractRunnable *runnable;
  CHECK(tract_onnx_create(&onnx));
  CHECK(tract_onnx_load(onnx, argv[1], &model));
  CHECK(tract_model_set_input_fact(model, 0, "1,576,f32"));
  CHECK(tract_model_set_input_fact(model, 1, "2,1,128,f32"));
  CHECK(tract_model_set_input_fact(model, 2, "sr:i64=16000"));
  CHECK(tract_model_into_runnable(&model, &runnable));

  float window[kContext + kWindow] = {0}, state[2 * 128] = {0};
  size_t windowShape[2] = {1, kContext + kWindow}, stateShape[3] = {2, 1, 128};
  double start = -1, lastSpeech = 0;
  for (size_t at = 0; at < count; at += kWindow) {
    /* The last 64 samples of the previous window, then 512 new ones. */
    memmove(window, window + kWindow, kContext * sizeof(float));
    for (size_t i = 0; i < kWindow; ++i)
      window[kContext + i] = at + i < count ? samples[at + i] : 0.0f;
    TractValue *inputs[2], *outputs[2];
    CHECK(tract_value_from_data(TRACT_DATUM_TYPE_F32, 2, windowShape, window,
                                &inputs[0]));
    CHECK(tract_value_from_data(TRACT_DATUM_TYPE_F32, 3, stateShape, state,
                                &inputs[1]));
    CHECK(tract_runnable_run(runnable, inputs, outputs));
    const float *probability, *next;
    CHECK(tract_value_as_bytes(outputs[0], NULL, NULL, NULL,
                               (const void **)&probability));
    CHECK(tract_value_as_bytes(outputs[1], NULL, NULL, NULL,
                               (const void **)&next));
    memcpy(state, next, sizeof(state));
    /* Speech starts at 0.5, and ends after 100 ms below 0.35. */
    double time = (double)at / kRate;
    if (*probability >= 0.5f) {
      if (start < 0)
        start = time;
      lastSpeech = time + (double)kWindow / kRate;
    } else if (start >= 0 && *probability < 0.35f &&
               time - lastSpeech >= 0.1) {
      if (lastSpeech - start > 0.25)
        printf("speech %.2f s - %.2f s\n", start, lastSpeech);
      start = -1;
    }
    for (int i = 0; i < 2; ++i) {
      CHECK(tract_value_destroy(&inputs[i]));
      CHECK(tract_value_destroy(&outputs[i]));
    }
  }
  if (start >= 0 && lastSpeech - start > 0.25)
    printf("speech %.2f s - %.2f s\n", start, lastSpeech);
  CHECK(tract_runnable_release(&runnable));
  CHECK(tract_onnx_destroy(&onnx));
  free(samples);
  return 0;
}
