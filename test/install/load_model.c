/* Loads a model through the C API as `tract MODEL dump` does (read, then
 * declutter) and lists its inputs: exit 0, or 1 with the library's message
 * on stderr. The hostile-input corpus runs through it
 * (hostile_inputs.py --driver). */
#include "lib/tract.h"

#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: load_model MODEL\n");
    return 2;
  }
  TractModel *model = NULL;
  size_t inputs = 0;
  if (tract_model_load(argv[1], &model) != TRACT_RESULT_OK ||
      tract_model_declutter(model) != TRACT_RESULT_OK ||
      tract_model_input_count(model, &inputs) != TRACT_RESULT_OK) {
    fprintf(stderr, "%s\n", tract_get_last_error());
    tract_model_destroy(&model);
    return 1;
  }
  for (size_t i = 0; i < inputs; ++i) {
    char *fact = NULL;
    if (tract_model_input_fact(model, i, &fact) != TRACT_RESULT_OK) {
      fprintf(stderr, "%s\n", tract_get_last_error());
      tract_model_destroy(&model);
      return 1;
    }
    printf("input %zu: %s\n", i, fact);
    tract_free_cstring(fact);
  }
  tract_model_destroy(&model);
  return 0;
}
