/* tract.h - the C API of libtract (tract-mlir).
 *
 * Load an NNEF or ONNX model at run time, give it facts, set symbols,
 * transform it (declutter, pulse...), compile it in process and run it on
 * tensors, or stream it through a state; or compile it to an object file.
 * The names follow those of tract's own C API (tract.h of tract-ffi); where
 * this one differs, docs/api.md says so.
 *
 *   TractNnef *nnef; TractModel *model; TractRunnable *runnable;
 *   tract_nnef_create(&nnef);
 *   tract_nnef_load(nnef, "mobilenet.nnef.tgz", &model);
 *   tract_model_into_runnable(&model, &runnable);   // model is consumed
 *   tract_runnable_run(runnable, inputs, outputs);
 *
 * Errors. Every function that can fail returns TRACT_RESULT_OK or
 * TRACT_RESULT_KO; after KO, tract_get_last_error() gives the message of
 * the calling thread (naming the file, the model element or the input).
 * Nothing aborts, throws or exits across this boundary; output pointers are
 * left NULL on failure.
 *
 * Ownership. Objects made by *_create, *_load, *_into_runnable,
 * *_spawn_state, tract_value_* and the outputs of a run belong to the
 * caller, who frees them with the matching *_destroy (each sets the pointer
 * it is given to NULL). Strings returned through `char **` are freed with
 * tract_free_cstring.
 *
 * Threads. Every function may be called from any thread. A TractModel and a
 * TractState are used by one thread at a time. A TractRunnable may run from
 * several threads at once (each run has its own state), and any number of
 * TractStates may stream through one runnable at once, each from its own
 * thread. TractValues are not changed by runs and may be shared. The last
 * error is per thread.
 */
#ifndef TRACT_H
#define TRACT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TRACT_API __attribute__((visibility("default")))
#else
#define TRACT_API
#endif

typedef enum TRACT_RESULT {
  TRACT_RESULT_OK = 0,
  TRACT_RESULT_KO = 1
} TRACT_RESULT;

/* Element types, numbered as tract's C API numbers them. */
typedef enum TractDatumType {
  TRACT_DATUM_TYPE_BOOL = 0x01,
  TRACT_DATUM_TYPE_U8 = 0x11,
  TRACT_DATUM_TYPE_U16 = 0x12,
  TRACT_DATUM_TYPE_U32 = 0x14,
  TRACT_DATUM_TYPE_U64 = 0x18,
  TRACT_DATUM_TYPE_I8 = 0x21,
  TRACT_DATUM_TYPE_I16 = 0x22,
  TRACT_DATUM_TYPE_I32 = 0x24,
  TRACT_DATUM_TYPE_I64 = 0x28,
  TRACT_DATUM_TYPE_F16 = 0x32,
  TRACT_DATUM_TYPE_F32 = 0x34,
  TRACT_DATUM_TYPE_F64 = 0x38,
  /* Not in tract's list: bfloat16. */
  TRACT_DATUM_TYPE_BF16 = 0x72
} TractDatumType;

typedef struct TractNnef TractNnef;
typedef struct TractOnnx TractOnnx;
typedef struct TractModel TractModel;
typedef struct TractRunnable TractRunnable;
typedef struct TractState TractState;
typedef struct TractValue TractValue;

/* The message of the last failure on this thread, or NULL. Valid until the
 * next call into the library from this thread. */
TRACT_API const char *tract_get_last_error(void);
/* "tract-mlir X.Y.Z (MLIR N)". */
TRACT_API const char *tract_version(void);
TRACT_API void tract_free_cstring(char *string);

/* --- Loading ------------------------------------------------------------ */

/* NNEF: a folder holding graph.nnef and .dat files, or an archive (.tgz,
 * .nnef.tgz, .tar.gz, .tar), with tract's extensions (tract_core_*,
 * tract_symbol, tract_assert, pulse ops). */
TRACT_API TRACT_RESULT tract_nnef_create(TractNnef **nnef);
TRACT_API TRACT_RESULT tract_nnef_destroy(TractNnef **nnef);
/* tract's reader needs these to accept its extensions; ours always does:
 * they succeed and change nothing. */
TRACT_API TRACT_RESULT tract_nnef_enable_tract_core(TractNnef *nnef);
TRACT_API TRACT_RESULT tract_nnef_enable_onnx(TractNnef *nnef);
TRACT_API TRACT_RESULT tract_nnef_enable_pulse(TractNnef *nnef);
TRACT_API TRACT_RESULT tract_nnef_load(const TractNnef *nnef, const char *path,
                                       TractModel **model);
/* An archive (tar, gzipped or not) in memory; the bytes are copied. */
TRACT_API TRACT_RESULT tract_nnef_load_buffer(const TractNnef *nnef,
                                              const void *data, size_t length,
                                              TractModel **model);
/* Writes the model as NNEF: an archive (.tgz, .nnef.tgz, .tar) or a
 * folder. tract_core forms are used unless the NNEF has no tract core. */
TRACT_API TRACT_RESULT tract_nnef_write_model_to_tar(const TractNnef *nnef,
                                                     const char *path,
                                                     TractModel *model);
TRACT_API TRACT_RESULT tract_nnef_write_model_to_dir(const TractNnef *nnef,
                                                     const char *path,
                                                     TractModel *model);

/* ONNX protobuf, every opset; external data is read beside the file. */
TRACT_API TRACT_RESULT tract_onnx_create(TractOnnx **onnx);
TRACT_API TRACT_RESULT tract_onnx_destroy(TractOnnx **onnx);
TRACT_API TRACT_RESULT tract_onnx_load(const TractOnnx *onnx, const char *path,
                                       TractModel **model);
TRACT_API TRACT_RESULT tract_onnx_load_buffer(const TractOnnx *onnx,
                                              const void *data, size_t length,
                                              TractModel **model);

/* Any model tract-mlir reads, its format told from the path: .onnx, an
 * NNEF folder or archive, or .mlir (the tract dialect). */
TRACT_API TRACT_RESULT tract_model_load(const char *path, TractModel **model);
TRACT_API TRACT_RESULT tract_model_destroy(TractModel **model);

/* --- The model: facts, outputs, symbols, transforms --------------------- */

TRACT_API TRACT_RESULT tract_model_input_count(TractModel *model,
                                               size_t *count);
TRACT_API TRACT_RESULT tract_model_output_count(TractModel *model,
                                                size_t *count);
TRACT_API TRACT_RESULT tract_model_input_name(TractModel *model, size_t input,
                                              char **name);
TRACT_API TRACT_RESULT tract_model_output_name(TractModel *model,
                                               size_t output, char **name);
/* The fact in tract's notation: "1,S,64,f32". */
TRACT_API TRACT_RESULT tract_model_input_fact(TractModel *model, size_t input,
                                              char **fact);
TRACT_API TRACT_RESULT tract_model_output_fact(TractModel *model,
                                               size_t output, char **fact);
/* An input's shape and type (tract's -i): "1,3,224,224,f32", "1,S,64",
 * "sr:i64=16000" (a constant). ONNX models, before anything else changes
 * the model. The model is read again with all its facts by the next call
 * that needs it, which reports a fact that does not fit. */
TRACT_API TRACT_RESULT tract_model_set_input_fact(TractModel *model,
                                                  size_t input,
                                                  const char *fact);
/* These nodes (op names, or output and input names) become the outputs. */
TRACT_API TRACT_RESULT tract_model_set_output_names(TractModel *model,
                                                    size_t count,
                                                    const char *const *names);
/* tract's --assert: "S >= 1", or "tg: S == 1" within a scenario. */
TRACT_API TRACT_RESULT tract_model_add_assertion(TractModel *model,
                                                 const char *assertion);
/* tract's --set: each symbol replaced by its value. */
TRACT_API TRACT_RESULT tract_model_concretize_symbols(
    TractModel *model, size_t count, const char *const *symbols,
    const int64_t *values);
/* A transform by name: "declutter", "pulse(S=8)", "set_symbols(values:
 * {\"S\":1})", "export_scan_state", "block-quant", "f16-weights",
 * "detect-kv-cache", "unfold-kv-cache", "transformers-detect-all" ('-' or
 * '_' alike in these three), "nnef-cycle". */
TRACT_API TRACT_RESULT tract_model_transform(TractModel *model,
                                             const char *transform);
TRACT_API TRACT_RESULT tract_model_declutter(TractModel *model);
/* Declutters: the code generator does the rest of tract's optimize. */
TRACT_API TRACT_RESULT tract_model_optimize(TractModel *model);
/* Streams the model over `symbol` by `pulse` frames ("8"). */
TRACT_API TRACT_RESULT tract_model_pulse_simple(TractModel *model,
                                                const char *symbol,
                                                const char *pulse);
/* The model's IR (the tract dialect) as text. */
TRACT_API TRACT_RESULT tract_model_dump_mlir(TractModel *model, char **text);

/* Times every op on these inputs (one per input of the model, as many as
 * tract_model_input_count says) and gives tract's profile as JSON. */
TRACT_API TRACT_RESULT tract_model_profile_json(TractModel *model,
                                                TractValue **inputs,
                                                char **json);

/* Compiles the model ahead of time: `path` ending in .o is an object file
 * (with `header`, if not NULL, its C header), in .so a shared library for
 * the host. `target`: NULL for the host, or x86_64, aarch64, armv7,
 * wasm32, vulkan, cuda, metal. */
TRACT_API TRACT_RESULT tract_model_compile(TractModel *model, const char *path,
                                           const char *target,
                                           const char *header);

/* --- Running ------------------------------------------------------------ */

/* Compiles the model in process (declutters it first if need be), for one
 * thread per core, on the CPU. The model is consumed: *model is destroyed
 * and set to NULL, as in tract. The compiled code is kept in the compile
 * cache, a folder of one file per model: TRACT_CACHE_DIR, else tract-mlir
 * in the user's cache folder ($XDG_CACHE_HOME, ~/.cache); the next process
 * that compiles the same model with the same options on the same machine
 * loads it instead. An empty TRACT_CACHE_DIR turns the cache off. */
TRACT_API TRACT_RESULT tract_model_into_runnable(TractModel **model,
                                                 TractRunnable **runnable);
/* The same for `threads` threads (0: one per core) and a GPU API ("vulkan",
 * "cuda", or NULL for the CPU); the model is not consumed. */
TRACT_API TRACT_RESULT tract_model_compile_runnable(TractModel *model,
                                                    int32_t threads,
                                                    const char *gpu,
                                                    TractRunnable **runnable);
TRACT_API TRACT_RESULT tract_runnable_release(TractRunnable **runnable);
/* The data inputs and outputs (a model's states are the state's). */
TRACT_API TRACT_RESULT tract_runnable_input_count(const TractRunnable *runnable,
                                                  size_t *count);
TRACT_API TRACT_RESULT
tract_runnable_output_count(const TractRunnable *runnable, size_t *count);
/* The names and facts ("1,S,64,f32") of the data inputs and outputs. */
TRACT_API TRACT_RESULT tract_runnable_input_name(const TractRunnable *runnable,
                                                 size_t input, char **name);
TRACT_API TRACT_RESULT tract_runnable_output_name(
    const TractRunnable *runnable, size_t output, char **name);
TRACT_API TRACT_RESULT tract_runnable_input_fact(const TractRunnable *runnable,
                                                 size_t input, char **fact);
TRACT_API TRACT_RESULT tract_runnable_output_fact(
    const TractRunnable *runnable, size_t output, char **fact);
/* One run: `inputs` holds input_count values, `outputs` receives
 * output_count new values. A model that keeps state starts from an empty
 * one. A wrong count, type, rank or dim fails naming the input and the
 * fact it expects. */
TRACT_API TRACT_RESULT tract_runnable_run(TractRunnable *runnable,
                                          TractValue **inputs,
                                          TractValue **outputs);

/* A stream through the runnable (which must outlive it): a pulsified model
 * takes one pulse per run, a model with key/value caches the new tokens.
 * Symbols its state needs come from the first inputs' dims, or are 0. */
TRACT_API TRACT_RESULT tract_runnable_spawn_state(TractRunnable *runnable,
                                                  TractState **state);
/* The same with the values of symbols given (the stream's length...). */
TRACT_API TRACT_RESULT tract_runnable_spawn_state_with_symbols(
    TractRunnable *runnable, size_t count, const char *const *symbols,
    const int64_t *values, TractState **state);
TRACT_API TRACT_RESULT tract_state_run(TractState *state, TractValue **inputs,
                                       TractValue **outputs);
TRACT_API TRACT_RESULT tract_state_destroy(TractState **state);

/* --- Values ------------------------------------------------------------- */

/* A tensor holding a copy of `data` (dense, row-major). */
TRACT_API TRACT_RESULT tract_value_from_bytes(TractDatumType datum_type,
                                              size_t rank, const size_t *shape,
                                              const void *data,
                                              TractValue **value);
/* A tensor over the caller's `data`, not copied: it must stay alive and
 * unchanged while the value is used. */
TRACT_API TRACT_RESULT tract_value_from_data(TractDatumType datum_type,
                                             size_t rank, const size_t *shape,
                                             const void *data,
                                             TractValue **value);
/* The value's type, rank, shape and data, read in place (valid while the
 * value lives); any pointer may be NULL. */
TRACT_API TRACT_RESULT tract_value_as_bytes(const TractValue *value,
                                            TractDatumType *datum_type,
                                            size_t *rank, const size_t **shape,
                                            const void **data);
TRACT_API TRACT_RESULT tract_value_destroy(TractValue **value);

#ifdef __cplusplus
}
#endif

#endif /* TRACT_H */
