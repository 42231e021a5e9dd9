#!/usr/bin/env bash
# The language-model benchmark: tract's llm-bench (PP512 and TG128 in
# tokens/sec), f32 and with -t block-quant (Q4_0 weights), and the same
# measures with onnxruntime-node 1.30, side by side in alternating rounds,
# on one thread and on two, on Llama-style decoders of
# scripts/make-llm-model.py; writes docs/llm-performance.md. Not a test: it
# fails only when it cannot measure.
#
# Usage: scripts/llm-bench.sh [--config NAME]... [--rounds N] [--one-thread]
#                             [--out FILE]
#   --config NAME  the decoder: small (the default: 6.5 million parameters,
#                  its matrices fit in the last-level cache), smollm2-135m
#                  or llama-3.2-1b (the released models' shapes, random
#                  weights); several --config measure each in turn
#   --rounds N     rounds of (tract, onnxruntime) per thread count (3)
#   --one-thread   measure one thread only
#   --contrib      also measure the export with onnxruntime's contrib ops
#                  (make-llm-model.py --contrib: GroupQueryAttention, the
#                  fused norms; and --contrib-q4: MatMulNBits), tract and
#                  onnxruntime on each file, the form onnxruntime's own
#                  generative-AI exports take
#   --out FILE     where to write the report (docs/llm-performance.md)
#
# Both engines make up their inputs as tract's llm-bench does: PP512 runs
# the prompt of 512 tokens with an empty past, timed as a mean over 2 s
# after a warm-up; TG128 runs one token over a past of 0 to 127 tokens, one
# run each, their times summed (bench/ort_llm_bench.js does the same with
# the past/present tensors of the export). Each round's figures are
# throughputs; the best round is reported, with the spread of the rounds.
# Token generation reads every weight once per token: the report gives the
# bound that the machine's read bandwidth (bench/read_bandwidth.c) sets.
# Each round of tract's f32 model compiles it afresh (--no-cache): its
# load and compile time (import, declutter, compile, from --timing) and
# onnxruntime's session creation are reported, with both processes' peak
# resident memory. The models are made on first use under models/bench
# (llm.onnx, llm-NAME/model.onnx; the 1B model's 5 GB of weights as
# external data) and never committed. Numerics are checked by the llm-decoder test,
# not here.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
command_line="scripts/llm-bench.sh${*:+ $*}"

rounds=3
contrib=0
thread_counts=(1 2)
configs=()
out="$root/docs/llm-performance.md"
while (($#)); do
  case $1 in --rounds|--out|--config)
    (($# >= 2)) || { echo "llm-bench: $1 needs a value" >&2; exit 2; } ;;
  esac
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --config)
      case $2 in small|smollm2-135m|llama-3.2-1b) configs+=("$2") ;;
        *) echo "llm-bench: unknown config $2 (small, smollm2-135m, llama-3.2-1b)" >&2; exit 2 ;;
      esac
      shift 2 ;;
    --one-thread) thread_counts=(1); shift ;;
    --contrib) contrib=1; shift ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "llm-bench: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "llm-bench: --rounds wants a positive number" >&2; exit 2; }
((${#configs[@]})) || configs=(small)

tract="${TRACT:-${TRACT_BUILD_DIR:-$root/build}/bin/tract}"
python=/usr/bin/python3 # Debian's, with numpy, onnx and torch
[ -x "$tract" ] || { echo "llm-bench: $tract is missing (scripts/build.sh builds it)" >&2; exit 1; }
for tool in node cc /usr/bin/time; do
  command -v $tool >/dev/null || { echo "llm-bench: $tool is needed" >&2; exit 1; }
done
NODE_PATH=$("$root/scripts/install-onnxruntime.sh")
export NODE_PATH

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -march=native -o "$work/read_bandwidth" "$root/bench/read_bandwidth.c"
bandwidth=$("$work/read_bandwidth")

# CONFIG <tab> THREADS <tab> ENGINE <tab> PP <tab> TG <tab> LOAD_S <tab> PEAK_KB
results="$work/results.tsv"
: >"$results"
# CONFIG <tab> READ_BYTES <tab> STORED_BYTES <tab> PARAMETERS <tab> Q4_READ_BYTES
models="$work/models.tsv"
: >"$models"

# The wall time of import, declutter and compile in tract's --timing report.
load_seconds() {
  sed -n 's/^.*%) *\([0-9.]*\) ([ 0-9.]*%)  \(import\|declutter\|compile\)$/\1/p' "$1" |
    awk '{ sum += $1 } END { printf "%.2f", sum }'
}

# onnxruntime's llm-bench on MODEL, recorded as ENGINE.
ort_round() {
  local ort_out
  ort_out=$(/usr/bin/time -f %M -o "$work/peak" node "$root/bench/ort_llm_bench.js" "$1" --threads "$threads")
  "$python" - "$config" "$threads" "$ort_out" "$(tail -n 1 "$work/peak")" "$2" >>"$results" <<'EOF'
import json, sys
r = json.loads(sys.argv[3])
print(f"{sys.argv[1]}\t{sys.argv[2]}\t{sys.argv[5]}\t{r['pp512_tokens_per_s']}\t"
      f"{r['tg128_tokens_per_s']}\t{r['load_ms'] / 1e3:.2f}\t{sys.argv[4]}")
EOF
}

for config in "${configs[@]}"; do
  if [ "$config" = small ]; then
    model="${TRACT_MODELS_DIR:-$root/models}/bench/llm.onnx"
    options=()
  else
    # A folder each: the 1B model's weights are a file per tensor.
    model="${TRACT_MODELS_DIR:-$root/models}/bench/llm-$config/model.onnx"
    options=(--config "$config")
  fi
  contrib_f32="${model%.onnx}-contrib.onnx"
  contrib_q4="${model%.onnx}-contrib-q4.onnx"
  if [ ! -f "$model" ] || { ((contrib)) && [ ! -f "$contrib_q4" ]; }; then
    mkdir -p "$(dirname "$model")"
    echo "llm-bench: making $model" >&2
    extra=()
    ((contrib)) && extra=(--contrib "$contrib_f32" --contrib-q4 "$contrib_q4")
    "$python" -W ignore "$root/scripts/make-llm-model.py" "$model" "${options[@]}" "${extra[@]}"
  fi
  # The bytes of the matrices a token reads (the products' weights), of
  # all the weights as stored, and the parameter count.
  "$python" - "$config" "$model" >>"$models" <<'EOF'
import sys
import numpy as np
import onnx
from onnx import mapping
model = onnx.load(sys.argv[2], load_external_data=False)
def size(t):
    itemsize = np.dtype(mapping.TENSOR_TYPE_TO_NP_TYPE[t.data_type]).itemsize
    return int(np.prod(t.dims)) * itemsize
sizes = {t.name: size(t) for t in model.graph.initializer}
counts = {t.name: int(np.prod(t.dims)) for t in model.graph.initializer}
read = set()
head = set()
for node in model.graph.node:
    if node.op_type in ("MatMul", "Gemm"):
        read.update(name for name in node.input if name in sizes)
        if "lm_head" in node.name or "lm_head" in "".join(node.input):
            head.update(name for name in node.input if name in sizes)
# What a token reads under -t block-quant: Q4_0 blocks (18 bytes per 32
# weights) for the products it quantizes, f16 for the output head, f32 for
# the others.
dims = {t.name: list(t.dims) for t in model.graph.initializer}
def q4_bytes(name):
    k, n = (dims[name] + [1, 1])[:2]
    if name in head and n % 16 == 0:
        return k * n * 2
    if (name in head or k * n < 1 << 14 or k % 32 or n % 16):
        return sizes[name]
    return k * n // 32 * 18
print(f"{sys.argv[1]}\t{sum(sizes[n] for n in read)}\t{sum(sizes.values())}\t"
      f"{sum(counts.values())}\t{sum(q4_bytes(n) for n in read)}")
EOF

  for threads in "${thread_counts[@]}"; do
    for ((round = 1; round <= rounds; ++round)); do
      echo "llm-bench: $config, $threads thread(s), round $round/$rounds" >&2
      tract_out=$(/usr/bin/time -f %M -o "$work/peak" "$tract" "$model" -O --timing --no-cache \
                    --threads "$threads" llm-bench --max-time 2000 --warmup-time 300 2>"$work/timing") ||
        { cat "$work/timing" >&2; exit 1; }
      pp=$(sed -n 's/^PP512: \([0-9.]*\) tokens\/sec$/\1/p' <<<"$tract_out")
      tg=$(sed -n 's/^TG128: \([0-9.]*\) tokens\/sec$/\1/p' <<<"$tract_out")
      [ -n "$pp" ] && [ -n "$tg" ] || { echo "llm-bench: tract printed: $tract_out" >&2; exit 1; }
      printf '%s\t%s\ttract\t%s\t%s\t%s\t%s\n' "$config" "$threads" "$pp" "$tg" \
        "$(load_seconds "$work/timing")" "$(tail -n 1 "$work/peak")" >>"$results"
      q4_out=$("$tract" "$model" -O -t block-quant --threads "$threads" llm-bench --max-time 2000 --warmup-time 300)
      pp=$(sed -n 's/^PP512: \([0-9.]*\) tokens\/sec$/\1/p' <<<"$q4_out")
      tg=$(sed -n 's/^TG128: \([0-9.]*\) tokens\/sec$/\1/p' <<<"$q4_out")
      [ -n "$pp" ] && [ -n "$tg" ] || { echo "llm-bench: tract -t block-quant printed: $q4_out" >&2; exit 1; }
      printf '%s\t%s\tq4_0\t%s\t%s\t\t\n' "$config" "$threads" "$pp" "$tg" >>"$results"
      ort_round "$model" onnxruntime
      if ((contrib)); then
        for kind in f32 q4; do
          file=$contrib_f32
          [ $kind = q4 ] && file=$contrib_q4
          contrib_out=$(/usr/bin/time -f %M -o "$work/peak" "$tract" "$file" -O --threads "$threads" \
                  llm-bench --max-time 2000 --warmup-time 300 2>"$work/timing") ||
            { cat "$work/timing" >&2; exit 1; }
          pp=$(sed -n 's/^PP512: \([0-9.]*\) tokens\/sec$/\1/p' <<<"$contrib_out")
          tg=$(sed -n 's/^TG128: \([0-9.]*\) tokens\/sec$/\1/p' <<<"$contrib_out")
          [ -n "$pp" ] && [ -n "$tg" ] || { echo "llm-bench: tract printed: $contrib_out" >&2; exit 1; }
          printf '%s\t%s\tcontrib-%s-tract\t%s\t%s\t\t%s\n' "$config" "$threads" "$kind" \
            "$pp" "$tg" "$(tail -n 1 "$work/peak")" >>"$results"
          ort_round "$file" "contrib-$kind-onnxruntime"
        done
      fi
    done
  done
done

# The last-level cache, which a model's weights may fit in.
cache=$(cat /sys/devices/system/cpu/cpu0/cache/index3/size 2>/dev/null || echo unknown)

"$python" - "$results" "$models" "$out" "$bandwidth" "$command_line" "$(nproc)" \
  "$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)" "$cache" <<'EOF'
import collections
import sys

results, models, out, bandwidth, command, cores, cpu, cache = sys.argv[1:]
bandwidth = float(bandwidth)
shapes = {}
for line in open(models):
    config, read, stored, parameters, q4_read = line.rstrip("\n").split("\t")
    shapes[config] = (int(read), int(stored), int(parameters), int(q4_read))
runs = collections.defaultdict(list)
for line in open(results):
    config, threads, engine, pp, tg, load, peak = line.rstrip("\n").split("\t")
    runs[(config, int(threads), engine)].append(
        (float(pp), float(tg), float(load) if load else None,
         int(peak) if peak else None))

def best(values):
    top = max(values)
    spread = 100 * (top - min(values)) / top if top else 0
    return top, spread

descriptions = {
    "small": "the Llama-style decoder of scripts/make-llm-model.py at its "
             "default size (its matrices fit in the last-level cache, and "
             "are read from it, faster, at least in part)",
    "smollm2-135m": "SmolLM2-135M's shape (hidden 576, 30 layers, 9 heads, "
                    "3 key/value heads, MLP 1536, vocabulary 49152, tied "
                    "embeddings, which the export stores twice: as the "
                    "table and transposed for the output head), random "
                    "weights",
    "llama-3.2-1b": "Llama-3.2-1B's shape (hidden 2048, 16 layers, 32 heads, "
                    "8 key/value heads, MLP 8192, vocabulary 128256, tied "
                    "embeddings, stored twice), random weights",
}
lines = [
    "# Language-model performance",
    "",
    f"Written by `{command}`: tract's `llm-bench` and onnxruntime-node 1.30 "
    "(bench/ort_llm_bench.js), in alternating rounds on the same ONNX export.",
    "",
    f"* Machine: {cpu}, {cores} cores, a last-level cache of {cache}; one "
    f"core reads memory at {bandwidth:.1f} GB/s (bench/read_bandwidth.c).",
    "* tract q4_0: the same model with `-t block-quant`, its products' "
    "weights as Q4_0 blocks (4.5 bits a weight) read by the kernels, the "
    "output head's as f16; on a CPU that sums byte products (AVX-512 VNNI "
    "here), a decoding step rounds its rows to 8 bits per block of 32 and "
    "multiplies bytes. Its logits stay within 0.15 of the f32 model's (the "
    "llm-decoder test). onnxruntime runs the f32 model.",
    "* PP512: a prompt of 512 tokens (P = 0), the mean run over 2 s; TG128: "
    "128 steps of one token over a past of 0 to 127, summed. Throughputs: "
    "higher is better; each figure is the best of the rounds, ± the spread "
    "of the rounds (best minus worst, in % of the best).",
    "* Load: tract's import, declutter and compile of the f32 model with "
    "nothing cached (`--no-cache`), from `--timing`; onnxruntime's session "
    "creation. Peak: the process's peak resident memory (GNU time), the "
    "benchmark's inputs and outputs and the engine itself included, and its "
    "ratio to the size of the weights as stored (f32).",
]
for config in [c for c in ("small", "smollm2-135m", "llama-3.2-1b") if c in shapes]:
    read, stored, parameters, q4_read = shapes[config]
    bound = bandwidth * 1e9 / read
    text = descriptions[config]
    lines += [
        "",
        f"## {config}: {parameters / 1e6:.1f} million parameters in the export",
        "",
        f"{text[0].upper()}{text[1:]}; {stored / 1e6:.0f} MB of f32 weights, "
        f"of which a token reads {read / 1e6:.1f} MB of matrices: token "
        f"generation from memory is bound by {bound:.1f} tokens/s at the "
        "bandwidth above.",
        "",
        "| threads | measure | tract tokens/s | onnxruntime tokens/s | tract / onnxruntime | tract q4_0 tokens/s | q4_0 / f32 |",
        "|--:|---|--:|--:|--:|--:|--:|",
    ]
    measured = sorted({t for c, t, _ in runs if c == config})
    for threads in measured:
        ours = runs[(config, threads, "tract")]
        theirs = runs[(config, threads, "onnxruntime")]
        quantized = runs[(config, threads, "q4_0")]
        for index, name in enumerate(("PP512", "TG128")):
            (a, sa) = best([r[index] for r in ours])
            (b, sb) = best([r[index] for r in theirs])
            q, sq = best([r[index] for r in quantized])
            lines.append(f"| {threads} | {name} | {a:.1f} ±{sa:.0f}% | {b:.1f} ±{sb:.0f}% "
                         f"| {a / b:.2f} | {q:.1f} ±{sq:.0f}% | {q / a:.2f} |")
    lines += ["", "| threads | tract load s | onnxruntime load s | tract peak MB "
              "| onnxruntime peak MB |", "|--:|--:|--:|--:|--:|"]
    for threads in measured:
        row = [str(threads)]
        for engine in ("tract", "onnxruntime"):
            row.append(f"{min(r[2] for r in runs[(config, threads, engine)]):.2f}")
        for engine in ("tract", "onnxruntime"):
            peak = max(r[3] for r in runs[(config, threads, engine)]) * 1024
            row.append(f"{peak / 1e6:.0f} ({peak / stored:.2f}×)")
        lines.append("| " + " | ".join(row) + " |")
    if any(e.startswith("contrib-") for c, _, e in runs if c == config):
        lines += ["", "The export with onnxruntime's contrib ops "
                  "(`make-llm-model.py --contrib`: GroupQueryAttention, "
                  "SkipSimplifiedLayerNormalization; q4: `--contrib-q4`, "
                  "MatMulNBits with 4-bit blocks of 32 at accuracy level 4, "
                  "where both engines may round a product's rows to bytes, "
                  "and the output head as f16), each engine on the same "
                  "file:", "",
                  "| threads | weights | measure | tract tokens/s "
                  "| onnxruntime tokens/s | tract / onnxruntime | tract peak MB "
                  "| onnxruntime peak MB |",
                  "|--:|---|---|--:|--:|--:|--:|--:|"]
        for threads in measured:
            for kind in ("f32", "q4"):
                ours = runs.get((config, threads, f"contrib-{kind}-tract"))
                theirs = runs.get((config, threads,
                                   f"contrib-{kind}-onnxruntime"))
                if not ours or not theirs:
                    continue
                peaks = [max(r[3] for r in rs) * 1024 / 1e6
                         for rs in (ours, theirs)]
                for index, name in enumerate(("PP512", "TG128")):
                    (a, sa) = best([r[index] for r in ours])
                    (b, sb) = best([r[index] for r in theirs])
                    lines.append(
                        f"| {threads} | {kind} | {name} | {a:.1f} ±{sa:.0f}% "
                        f"| {b:.1f} ±{sb:.0f}% | {a / b:.2f} "
                        f"| {peaks[0]:.0f} | {peaks[1]:.0f} |")
    if 1 in measured:
        q4_tg = best([r[1] for r in runs[(config, 1, "q4_0")]])[0]
        q4_bound = bandwidth * 1e9 / q4_read
        lines += ["", f"Under `-t block-quant` a token reads "
                  f"{q4_read / 1e6:.1f} MB (the output head as f16): "
                  f"q4_0 decoding is bound by "
                  f"{q4_bound:.1f} tokens/s, at most {read / q4_read:.2f}× "
                  f"f32's bound; at one thread tract reaches "
                  f"{q4_tg / q4_bound * 100:.0f}% of it."]
        tg = {e: best([r[1] for r in runs[(config, 1, e)]])[0]
              for e in ("tract", "onnxruntime")}
        lines += ["", "TG128 at one thread against the bandwidth bound: "
                  f"{tg['tract'] / bound * 100:.0f}% for tract, "
                  f"{tg['onnxruntime'] / bound * 100:.0f}% for onnxruntime."]
lines.append("")
open(out, "w").write("\n".join(lines))
print("\n".join(lines))
EOF
