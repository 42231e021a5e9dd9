#!/usr/bin/env bash
# The side-by-side benchmark: tract and onnxruntime-node 1.30, on one thread
# and on two, on the same models and the same inputs, in alternating rounds;
# writes docs/performance.md. Not a test: it fails only when it cannot
# measure.
#
# Usage: scripts/bench.sh [--rounds N] [--models a,b,...] [--quick]
#                         [--time-ms MS] [--one-thread] [--vision]
#                         [--int8] [--out FILE]
#   --rounds N    rounds of (tract bench, onnxruntime bench) per model (3)
#   --models LIST only these models (default: the suite; names as in the
#                 tables, or 'suite', 'vision' or 'int8' for all of one
#                 table)
#   --vision      the convolutional networks outside the suite as well, as a
#                 second table (about doubles the run time)
#   --int8        the quantized models as well, as a third table: each
#                 engine on the same 8-bit file, and tract's time on the
#                 float model it was quantized from
#   --quick       1 round of 500 ms per engine: a smoke run, not a result
#   --time-ms MS  time budget of each engine in each round (2000)
#   --one-thread  measure one thread only (half the time)
#   --out FILE    where to write the report (docs/performance.md)
#
# Per model it measures:
#   * latency: `tract -O MODEL bench --threads T` (its "X ms/i", the mean over
#     the budget) against `bench/ort_bench.js --threads T` (the mean over the
#     same budget), after a warm-up each, for T = 1 and 2; the best round of
#     each is reported, with the spread of the rounds;
#   * FLOPs: the total of `tract dump --cost`, for GFLOP/s;
#   * the first result: the wall time of `tract -O MODEL run`, cold (an
#     empty compile cache: process start, load, compile, one run) and warm
#     (from the cache's entry), and the cold one's peak resident memory
#     (/usr/bin/time's max RSS, the JIT's included);
# and once: this core's FP32 FMA peak (bench/fma_peak.c), which the 512^3
# MatMul is reported against.
#
# Inputs: the real models (models/, scripts/fetch-models.sh) run on their
# onnxruntime reference bundles (test/onnx/reference/MODEL.npz), the synthetic
# ones (bench/make_models.py, into models/bench/) on seeded bundles written
# next to them. With --vision (or when --models names them), convolutional
# networks outside the suite (bench/make_vision_models.py: torchvision's, with
# random weights, written into models/vision/ when missing) run on the
# bundles next to them, as a second table with a mean of its own, so that
# the suite's fast audio and OCR models cannot hide a slow vision one. With
# --int8 (or when --models names them), 8-bit models: the suite's models
# quantized by bench/quantize_models.py in the QDQ form (NAME_qdq), the
# QOperator form (NAME_qop) or dynamically (NAME_dyn), written into
# models/quant/ with onnxruntime's outputs when missing, and the synthetic
# QLinearMatMul and QLinearConv of bench/make_models.py, as a third table.
# tract gets the bundle's shapes as input facts. Both engines check their outputs
# against the bundle's before any timing: a fast wrong result is a failure,
# not a figure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
command_line="scripts/bench.sh${*:+ $*}"

real_models=(mobilenet_v2 resnet18 ppocr_det ppocr_det_640 ppocr_rec ppocr_cls
             blazeface_front blazeface_back
             silero_vad_v5 silero_vad_legacy silero_vad_jjhbw)
synthetic_models=(matmul512 conv3x3_64 transformer_encoder gru_speech)
# Real models on inputs larger than their test references
# (bench/make_large_bundles.py): NAME=MODEL.
large_models=(ppocr_det_640=ppocr_det)
all_models=("${real_models[@]}" "${synthetic_models[@]}")
# The second table: convolutional networks outside the suite.
vision_models=(mobilenet_v3_small mobilenet_v3_large efficientnet_b0
               convnext_tiny regnet_y_400mf shufflenet_v2_x1_0 squeezenet1_1
               densenet121 googlenet mnasnet1_0 resnext50_32x4d
               deeplabv3_mobilenet_v3_large lraspp_mobilenet_v3_large r3d_18)
# The third table: 8-bit models, each with the float model it comes from
# (NAME=FLOAT).
# NAME_qdq, NAME_qop and NAME_dyn are bench/quantize_models.py's QDQ,
# QOperator and dynamic forms of NAME; the others bench/make_models.py's.
int8_entries=(resnet18_qdq=resnet18 resnet18_qop=resnet18
              mobilenet_v2_qdq=mobilenet_v2 mobilenet_v2_qop=mobilenet_v2
              ppocr_det_qdq=ppocr_det ppocr_rec_qdq=ppocr_rec
              transformer_encoder_qdq=transformer_encoder
              transformer_encoder_dyn=transformer_encoder
              qlinear_matmul512=matmul512 qlinear_conv3x3_64=conv3x3_64)
int8_models=()
for entry in "${int8_entries[@]}"; do int8_models+=("${entry%%=*}"); done
float_model_of() {
  local entry
  for entry in "${int8_entries[@]}"; do
    [ "${entry%%=*}" = "$1" ] && { echo "${entry#*=}"; return 0; }
  done
  return 1
}
# The --form of bench/quantize_models.py that writes an 8-bit model NAME,
# by its suffix; fails for the others.
quant_form_of() {
  case $1 in
    *_qdq) echo qdq ;;
    *_qop) echo qoperator ;;
    *_dyn) echo dynamic ;;
    *) return 1 ;;
  esac
}
large_model_of() {
  local entry
  for entry in "${large_models[@]}"; do
    [ "${entry%%=*}" = "$1" ] && { echo "${entry#*=}"; return 0; }
  done
  return 1
}

rounds=3
time_ms=2000
warmup_ms=300
selected=""
vision=0
int8=0
thread_counts=(1 2)
out="$root/docs/performance.md"
while (($#)); do
  case $1 in --rounds|--models|--time-ms|--out)
    (($# >= 2)) || { echo "bench: $1 needs a value (see --help)" >&2; exit 2; } ;;
  esac
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --models) selected=$2; shift 2 ;;
    --quick) rounds=1; time_ms=500; warmup_ms=100; shift ;;
    --one-thread) thread_counts=(1); shift ;;
    --vision) vision=1; shift ;;
    --int8) int8=1; shift ;;
    --time-ms) time_ms=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "bench: --rounds wants a positive number" >&2; exit 2; }
[[ $time_ms =~ ^[1-9][0-9]*$ ]] || { echo "bench: --time-ms wants a positive number" >&2; exit 2; }

models=("${all_models[@]}")
((vision)) && models+=("${vision_models[@]}")
((int8)) && models+=("${int8_models[@]}")
if [ -n "$selected" ]; then
  IFS=, read -r -a requested <<<"$selected"
  models=()
  for name in "${requested[@]}"; do
    case $name in
      suite) models+=("${all_models[@]}"); continue ;;
      vision) models+=("${vision_models[@]}"); continue ;;
      int8) models+=("${int8_models[@]}"); continue ;;
    esac
    case " ${all_models[*]} ${vision_models[*]} ${int8_models[*]} " in
      *" $name "*) models+=("$name") ;;
      *) echo "bench: unknown model $name (known: suite, vision, int8, ${all_models[*]} ${vision_models[*]} ${int8_models[*]})" >&2; exit 2 ;;
    esac
  done
fi

tract="${TRACT:-${TRACT_BUILD_DIR:-$root/build}/bin/tract}"
python=/usr/bin/python3 # Debian's, with numpy, onnx and torch
for tool in "$tract" "$python" /usr/bin/time; do
  [ -x "$tool" ] || { echo "bench: $tool is missing (scripts/build.sh builds tract; /usr/bin/time is Debian's 'time')" >&2; exit 1; }
done
for tool in node cc; do
  command -v $tool >/dev/null || { echo "bench: $tool is needed" >&2; exit 1; }
done

# onnxruntime-node, as the reference outputs use it.
NODE_PATH=$("$root/scripts/install-onnxruntime.sh")
export NODE_PATH

# A build may replace tract during a run: the report says so if one did.
tract_build() { sha256sum <"$tract" | cut -c1-12; }
build_at_start=$(tract_build)
started=$(date +%s)

models_dir="${TRACT_MODELS_DIR:-$root/models}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
results="$work/results.tsv" # MODEL <tab> KEY <tab> VALUE, one a measurement
: >"$results"
record() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$results"; }

# Fetch only what is missing: fetch-models.sh also re-fetches models that
# differ from the references, which is not this script's business.
missing=()
synthetic_wanted=()
large_wanted=()
vision_wanted=()
quant_wanted=()
for name in "${models[@]}"; do
  if float=$(float_model_of "$name"); then
    # The float model too: tract's int8 is reported against it. NAME_qdq,
    # NAME_qop and NAME_dyn are quantized from it; the others are
    # bench/make_models.py's.
    case " ${synthetic_models[*]} " in
      *" $float "*) synthetic_wanted+=("$float") ;;
      *) [ -f "$models_dir/$float.onnx" ] || missing+=("$float.onnx") ;;
    esac
    if quant_form_of "$name" >/dev/null; then
      [ -f "$models_dir/quant/$name.onnx" ] && [ -f "$models_dir/quant/$name.npz" ] ||
        quant_wanted+=("$name")
    else
      synthetic_wanted+=("$name")
    fi
    continue
  fi
  case " ${vision_models[*]} " in
    *" $name "*)
      [ -f "$models_dir/vision/$name.onnx" ] && [ -f "$models_dir/vision/$name.npz" ] ||
        vision_wanted+=("$name")
      continue ;;
  esac
  if base=$(large_model_of "$name"); then
    [ -f "$models_dir/$base.onnx" ] || missing+=("$base.onnx")
    [ -f "$models_dir/bench/$name.npz" ] || large_wanted+=("$name")
    continue
  fi
  case " ${synthetic_models[*]} " in
    *" $name "*) synthetic_wanted+=("$name") ;;
    *) [ -f "$models_dir/$name.onnx" ] || missing+=("$name.onnx") ;;
  esac
done
if ((${#missing[@]})); then
  "$root/scripts/fetch-models.sh" "${missing[@]}" ||
    echo "bench: could not fetch ${missing[*]}; their rows will say so" >&2
fi
if ((${#synthetic_wanted[@]})); then
  "$python" -W ignore "$root/bench/make_models.py" --out "$models_dir/bench" \
    "${synthetic_wanted[@]}" ||
    echo "bench: could not write every synthetic model; their rows will say so" >&2
fi

if ((${#vision_wanted[@]})); then
  "$python" -W ignore "$root/bench/make_vision_models.py" \
    --out "$models_dir/vision" "${vision_wanted[@]}" ||
    echo "bench: could not write every vision model; their rows will say so" >&2
fi

for name in "${quant_wanted[@]}"; do
  float=$(float_model_of "$name")
  case " ${synthetic_models[*]} " in
    *" $float "*) source=("$models_dir/bench/$float.onnx" "$models_dir/bench/$float.npz") ;;
    *) source=("$models_dir/$float.onnx" "$root/test/onnx/reference/$float.npz") ;;
  esac
  "$python" "$root/bench/quantize_models.py" --node-path "$NODE_PATH" \
    --form "$(quant_form_of "$name")" "${source[@]}" "$models_dir/quant" ||
    echo "bench: could not quantize $float into $name; its row will say so" >&2
done

if ((${#large_wanted[@]})); then
  "$python" "$root/bench/make_large_bundles.py" --models "$models_dir" \
    --node-path "$NODE_PATH" --out "$models_dir/bench" "${large_wanted[@]}" ||
    echo "bench: could not write every large bundle; their rows will say so" >&2
fi

# The peak, measured first, on a quiet machine.
cc -O2 -march=native -o "$work/fma_peak" "$root/bench/fma_peak.c"
record - fma_peak "$("$work/fma_peak" 2>"$work/fma_peak.txt")"
record - fma_isa "$(sed -n 's/^fma_peak: \([a-z0-9]*\),.*/\1/p' "$work/fma_peak.txt")"
echo "bench: FP32 FMA peak $(awk -F'\t' '$2 == "fma_peak" { print $3 }' "$results") GFLOP/s on one core"

# The error of a failed step: its first 'error:' line, else its last line.
first_error() {
  local line
  line=$(grep -m1 'error:' "$1" || tail -n 1 "$1")
  line=${line#*error: }
  echo "${line:-no message}"
}

# step ENGINE MODEL COMMAND...: runs a step into $work/out, and records the
# engine's first failure for the model's row (later steps are skipped).
step() {
  local engine=$1 name=$2 rc=0
  shift 2
  timeout 900 "$@" >"$work/out" 2>"$work/err" || rc=$?
  ((rc == 0)) && return 0
  if ((rc == 124)); then
    echo "timed out after 900 s" >"$work/err"
  elif ((rc > 128)); then
    echo "killed by signal $((rc - 128))" >>"$work/err"
  fi
  record "$name" "${engine}_error" "$(first_error "$work/err")"
  return 1
}

bench_model() {
  local name=$1 model bundle extras=()
  local base
  if base=$(large_model_of "$name"); then
    model="$models_dir/$base.onnx"; bundle="$models_dir/bench/$name.npz"
  else
    case " ${synthetic_models[*]} " in
      *" $name "*) model="$models_dir/bench/$name.onnx"; bundle="$models_dir/bench/$name.npz" ;;
      *) model="$models_dir/$name.onnx"; bundle="$root/test/onnx/reference/$name.npz" ;;
    esac
  fi
  case " ${vision_models[*]} " in
    *" $name "*)
      model="$models_dir/vision/$name.onnx"; bundle="$models_dir/vision/$name.npz"
      record "$name" table vision ;; # report.py's second table
  esac
  local float float_cmd=()
  if float=$(float_model_of "$name"); then
    record "$name" table int8 # report.py's third table
    record "$name" float_model "$float"
    local float_model="$models_dir/$float.onnx"
    local float_bundle="$root/test/onnx/reference/$float.npz"
    case " ${synthetic_models[*]} " in
      *" $float "*)
        float_model="$models_dir/bench/$float.onnx"
        float_bundle="$models_dir/bench/$float.npz" ;;
    esac
    if quant_form_of "$name" >/dev/null; then
      model="$models_dir/quant/$name.onnx"; bundle="$models_dir/quant/$name.npz"
    else
      model="$models_dir/bench/$name.onnx"; bundle="$models_dir/bench/$name.npz"
    fi
    if [ -f "$float_model" ] && [ -f "$float_bundle" ] &&
       step tract "$name" "$python" "$root/bench/bundle_facts.py" "$float_model" "$float_bundle"; then
      float_cmd=("$tract" -O)
      while IFS= read -r line; do float_cmd+=(-i "$line"); done <"$work/out"
      float_cmd+=("$float_model" bench --input-from-bundle "$float_bundle")
    fi
  fi
  # Silero v5 takes the sample rate as a constant, as the example and the
  # tests give it (sr as a run-time input does not import yet).
  case $name in silero_vad_v5|silero_vad_jjhbw) extras=(sr:i64=16000) ;; esac
  for file in "$model" "$bundle"; do
    if [ ! -f "$file" ]; then
      record "$name" tract_error "missing ${file#"$root"/}"
      record "$name" ort_error "missing ${file#"$root"/}"
      return
    fi
  done
  # tract's input facts: the bundle's shapes (bench/bundle_facts.py).
  local facts=() line
  if ! step tract "$name" "$python" "$root/bench/bundle_facts.py" "$model" "$bundle" "${extras[@]}"; then
    record "$name" ort_error "see tract's error"
    return
  fi
  while IFS= read -r line; do facts+=(-i "$line"); done <"$work/out"
  record "$name" input "$("$python" "$root/bench/bundle_facts.py" --describe "$model" "$bundle" "${extras[@]}")"
  local tract_cmd=("$tract" -O "${facts[@]}" "$model")
  local tract_ok=1 ort_ok=1 start

  if step tract "$name" "${tract_cmd[@]}" dump --cost; then
    record "$name" flops "$(sed -n 's/^cost: \([0-9]*\) flops, .* in total$/\1/p' "$work/out")"
  else
    tract_ok=0
  fi
  # The first result, as a user meets it: a whole `tract run` (process
  # start, load, compile, one run), cold on an empty compile cache, then
  # warm from the entry the first stored; once in each round, at tract's
  # turn, so that the best round is reported as for the latencies. Its peak
  # memory is the cold one's.
  first_result() {
    local cache="$work/cache-$name" start
    rm -rf "$cache"
    start=$(date +%s.%N)
    if TRACT_CACHE_DIR=$cache step tract "$name" /usr/bin/time -o "$work/rss" -f %M \
         "${tract_cmd[@]}" run -q --input-from-bundle "$bundle" \
         --assert-output-bundle "$bundle" --approx approximate; then
      record "$name" first_cold_s "$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')"
      record "$name" rss_kb "$(tail -n 1 "$work/rss")"
    else
      rm -rf "$cache"
      return 1
    fi
    start=$(date +%s.%N)
    if TRACT_CACHE_DIR=$cache step tract "$name" "${tract_cmd[@]}" run -q \
         --input-from-bundle "$bundle" --assert-output-bundle "$bundle" \
         --approx approximate; then
      record "$name" first_warm_s "$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')"
    else
      rm -rf "$cache"
      return 1
    fi
    rm -rf "$cache"
  }

  local round engine
  for ((round = 1; round <= rounds; ++round)); do
    # Alternate which engine goes first, so neither always gets the warmer
    # (or the more throttled) machine.
    local order=(tract ort)
    ((round % 2 == 0)) && order=(ort tract)
    # Keys: tract_ms and ort_ms on one thread, tract_ms_2t and ort_ms_2t on
    # two.
    for engine in "${order[@]}"; do
      for threads in "${thread_counts[@]}"; do
        local suffix=""
        ((threads > 1)) && suffix="_${threads}t"
        if [ "$engine" = tract ] && ((tract_ok)) &&
           [ "$threads" = "${thread_counts[0]}" ] && ! first_result; then
          tract_ok=0
        fi
        if [ "$engine" = tract ] && ((tract_ok)); then
          if step tract "$name" "${tract_cmd[@]}" bench --threads "$threads" \
               --max-time "$time_ms" --warmup-loops 1 --warmup-time "$warmup_ms" \
               --input-from-bundle "$bundle"; then
            record "$name" "tract_ms$suffix" "$(sed -n 's/^Bench ran [0-9]* times, \([0-9.]*\) ms\/i\.$/\1/p' "$work/out")"
          else
            tract_ok=0
          fi
          # An 8-bit model: tract on its float model, in the same turn.
          if ((tract_ok && ${#float_cmd[@]})) &&
             step tract_f32 "$name" "${float_cmd[@]}" --threads "$threads" \
               --max-time "$time_ms" --warmup-loops 1 --warmup-time "$warmup_ms"; then
            record "$name" "tract_f32_ms$suffix" "$(sed -n 's/^Bench ran [0-9]* times, \([0-9.]*\) ms\/i\.$/\1/p' "$work/out")"
          fi
        elif [ "$engine" = ort ] && ((ort_ok)); then
          if step ort "$name" node "$root/bench/ort_bench.js" "$model" "$bundle" \
               --time-ms "$time_ms" --warmup-ms "$warmup_ms" --threads "$threads"; then
            record "$name" "ort_ms$suffix" "$(node -p "JSON.parse(require('fs').readFileSync('$work/out')).mean_ms")"
          else
            ort_ok=0
          fi
        fi
      done
    done
  done
  awk -F'\t' -v m="$name" '$1 == m && $2 ~ /_(ms|ms_2t|error)$/ { printf "  %s %s", $2, $3 } END { print "" }' \
    "$results" | sed "s/^/bench: $name:/"
}

for name in "${models[@]}"; do
  bench_model "$name"
done

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
record - cpu "${cpu:-$(uname -m)}"
record - cores "$(nproc)"
record - date "$(date -u +%Y-%m-%d)"
record - command "$command_line"
record - rounds "$rounds"
record - time_ms "$time_ms"
record - ort_version "$(node -p "require('onnxruntime-node/package.json').version")"
record - tract_version "$("$tract" --version | head -n 1)"
record - commit "$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)"
record - models "${models[*]}"
record - seconds "$(( $(date +%s) - started ))"
record - tract_build "$build_at_start"
[ "$(tract_build)" = "$build_at_start" ] || record - tract_rebuilt "$(tract_build)"
"$python" "$root/bench/report.py" "$results" "$out"
echo "bench: wrote ${out#"$root"/}"
