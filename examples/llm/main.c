/* Greedy decoding with a language model that `tract compile` made into
 * llm.o and llm.h (run.sh does all of it). The model is a decoder as
 * HuggingFace exporters write them: input 0 holds the tokens (B, S), the
 * others the past keys and values (B, heads, P, d); output 0 holds the
 * logits (B, S, vocabulary), the others the keys and values with the new
 * tokens appended (B, heads, P+S, d), which are the next call's past.
 * Tokens are bytes (a vocabulary of 256): the prompt is its bytes, and each
 * generated token is printed as it comes, as a byte.
 *
 * Usage: llm PROMPT [TOKENS]   (TOKENS: how many to generate, 32 by default)
 * Build: cc -O2 -I<repo>/runtime main.c llm.o libtract_runtime.a -lm */
#define _POSIX_C_SOURCE 199309L
#include "tract_runtime.h"

#include "llm.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* The dims of a tensor whose shape the header gives as text ("B,2,P,32",
 * "B,2,P+S,32"), at B = 1, S = `tokens` and P = `past`. Returns the rank,
 * or -1 for a dim it cannot size. */
static int dims_of(const char *shape, int64_t tokens, int64_t past,
                   int64_t *dims) {
  int rank = 0;
  for (const char *at = shape; *at && rank < TRACT_MAX_RANK;) {
    const char *end = strchr(at, ',');
    size_t length = end ? (size_t)(end - at) : strlen(at);
    if (length == 1 && *at == 'B')
      dims[rank] = 1;
    else if (length == 1 && *at == 'S')
      dims[rank] = tokens;
    else if (length == 1 && *at == 'P')
      dims[rank] = past;
    else if (length == 3 && strncmp(at, "P+S", 3) == 0)
      dims[rank] = past + tokens;
    else if (*at >= '0' && *at <= '9')
      dims[rank] = strtoll(at, NULL, 10);
    else
      return -1;
    ++rank;
    at += length + (end ? 1 : 0);
  }
  return rank;
}

static void print_token(int64_t token) {
  if (token >= 32 && token < 127 && token != '\\')
    putchar((int)token);
  else
    printf("\\x%02x", (unsigned)token);
  fflush(stdout);
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: %s PROMPT [TOKENS]\n", argv[0]);
    return 2;
  }
  const char *prompt = argv[1];
  long generate = argc > 2 ? strtol(argv[2], NULL, 10) : 32;
  int64_t count = (int64_t)strlen(prompt);
  if (count == 0 || generate < 1) {
    fprintf(stderr, "%s: an empty prompt or nothing to generate\n", argv[0]);
    return 2;
  }

  tract_tensor *inputs[LLM_NUM_INPUTS] = {NULL};
  tract_tensor *outputs[LLM_NUM_OUTPUTS] = {NULL};
  int64_t dims[TRACT_MAX_RANK];
  /* An empty past: every key/value input at P = 0. */
  for (int i = 1; i < LLM_NUM_INPUTS; ++i) {
    int rank = dims_of(llm_inputs[i].shape, count, 0, dims);
    if (rank < 0 || llm_inputs[i].dtype != TRACT_DT_F32 ||
        !(inputs[i] = tract_tensor_new(TRACT_DT_F32, rank, dims))) {
      fprintf(stderr, "%s: cannot make input '%s' (%s)\n", argv[0],
              llm_inputs[i].name, llm_inputs[i].shape);
      return 1;
    }
  }
  int64_t token_dims[2] = {1, count};
  inputs[0] = tract_tensor_new(TRACT_DT_I64, 2, token_dims);
  if (!inputs[0])
    return 1;
  for (int64_t i = 0; i < count; ++i)
    ((int64_t *)inputs[0]->data)[i] = (unsigned char)prompt[i];

  printf("%s", prompt);
  fflush(stdout);
  double started = now_ms(), prompt_ms = 0;
  int status = 0;
  for (long step = 0; step < generate; ++step) {
    if (llm_run((const tract_tensor *const *)inputs, outputs) != TRACT_OK) {
      fprintf(stderr, "\n%s: the model failed at step %ld: %s\n", argv[0],
              step, tract_last_error());
      status = 1;
      break;
    }
    if (step == 0)
      prompt_ms = now_ms() - started;
    /* The most likely next token after the last one. */
    const tract_tensor *logits = outputs[0];
    int64_t vocabulary = logits->dims[logits->rank - 1];
    int64_t rows = logits->dims[logits->rank - 2];
    const float *last = (const float *)logits->data + (rows - 1) * vocabulary;
    int64_t best = 0;
    for (int64_t v = 1; v < vocabulary; ++v)
      if (last[v] > last[best])
        best = v;
    print_token(best);

    /* The presents are the next past; the next input is the token. */
    for (int i = 0; i < LLM_NUM_INPUTS; ++i)
      tract_tensor_free(inputs[i]);
    tract_tensor_free(outputs[0]);
    for (int i = 1; i < LLM_NUM_OUTPUTS; ++i)
      inputs[i] = outputs[i];
    token_dims[1] = 1;
    inputs[0] = tract_tensor_new(TRACT_DT_I64, 2, token_dims);
    if (!inputs[0]) {
      status = 1;
      break;
    }
    *(int64_t *)inputs[0]->data = best;
  }
  double total = now_ms() - started;
  printf("\n");
  fprintf(stderr, "prompt: %lld tokens in %.1f ms; %ld tokens generated, "
                  "%.1f tokens/s after the first\n",
          (long long)count, prompt_ms, generate,
          generate > 1 ? (generate - 1) / ((total - prompt_ms) / 1e3) : 0.0);
  for (int i = 0; i < LLM_NUM_INPUTS; ++i)
    tract_tensor_free(inputs[i]);
  return status;
}
