#!/usr/bin/env bash
# The language-model benchmark: tract's llm-bench (PP512 and TG128 in
# tokens/sec), f32 and with -t block-quant (Q4_0 weights), and the same
# measures with onnxruntime-node 1.30, side by side in alternating rounds,
# on one thread and on two, on the Llama-style decoder
# of scripts/make-llm-model.py (its default size: 6.5 million f32
# parameters); writes docs/llm-performance.md. Not a test: it fails only
# when it cannot measure.
#
# Usage: scripts/llm-bench.sh [--rounds N] [--one-thread] [--out FILE]
#   --rounds N    rounds of (tract, onnxruntime) per thread count (3)
#   --one-thread  measure one thread only
#   --out FILE    where to write the report (docs/llm-performance.md)
#
# Both engines make up their inputs as tract's llm-bench does: PP512 runs
# the prompt of 512 tokens with an empty past, timed as a mean over 2 s
# after a warm-up; TG128 runs one token over a past of 0 to 127 tokens, one
# run each, their times summed (bench/ort_llm_bench.js does the same with
# the past/present tensors of the export). Each round's figures are
# throughputs; the best round is reported, with the spread of the rounds.
# Token generation reads every weight once per token: the report gives the
# bound that the machine's read bandwidth (bench/read_bandwidth.c) sets.
# Numerics are checked by the llm-decoder test, not here.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
command_line="scripts/llm-bench.sh${*:+ $*}"

rounds=3
thread_counts=(1 2)
out="$root/docs/llm-performance.md"
while (($#)); do
  case $1 in --rounds|--out)
    (($# >= 2)) || { echo "llm-bench: $1 needs a value" >&2; exit 2; } ;;
  esac
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --one-thread) thread_counts=(1); shift ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "llm-bench: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "llm-bench: --rounds wants a positive number" >&2; exit 2; }

tract="${TRACT:-${TRACT_BUILD_DIR:-$root/build}/bin/tract}"
python=/usr/bin/python3 # Debian's, with numpy, onnx and torch
[ -x "$tract" ] || { echo "llm-bench: $tract is missing (scripts/build.sh builds it)" >&2; exit 1; }
for tool in node cc; do
  command -v $tool >/dev/null || { echo "llm-bench: $tool is needed" >&2; exit 1; }
done
NODE_PATH=$("$root/scripts/install-onnxruntime.sh")
export NODE_PATH

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
model="${TRACT_MODELS_DIR:-$root/models}/bench/llm.onnx"
if [ ! -f "$model" ]; then
  mkdir -p "$(dirname "$model")"
  "$python" -W ignore "$root/scripts/make-llm-model.py" "$model"
fi
cc -O2 -march=native -o "$work/read_bandwidth" "$root/bench/read_bandwidth.c"
bandwidth=$("$work/read_bandwidth")

# The bytes of the matrices a token reads (the products' weights), and the
# parameter count.
read -r weight_bytes parameters < <("$python" - "$model" <<'EOF'
import sys
import numpy as np
import onnx
from onnx import numpy_helper
model = onnx.load(sys.argv[1])
sizes = {t.name: numpy_helper.to_array(t).nbytes for t in model.graph.initializer}
counts = {t.name: int(np.prod(t.dims)) for t in model.graph.initializer}
read = set()
for node in model.graph.node:
    if node.op_type in ("MatMul", "Gemm"):
        read.update(name for name in node.input if name in sizes)
print(sum(sizes[name] for name in read), sum(counts.values()))
EOF
)

results="$work/results.tsv" # THREADS <tab> ENGINE <tab> PP <tab> TG
: >"$results"
for threads in "${thread_counts[@]}"; do
  for ((round = 1; round <= rounds; ++round)); do
    echo "llm-bench: $threads thread(s), round $round/$rounds" >&2
    tract_out=$("$tract" "$model" -O --threads "$threads" llm-bench --max-time 2000 --warmup-time 300)
    pp=$(sed -n 's/^PP512: \([0-9.]*\) tokens\/sec$/\1/p' <<<"$tract_out")
    tg=$(sed -n 's/^TG128: \([0-9.]*\) tokens\/sec$/\1/p' <<<"$tract_out")
    [ -n "$pp" ] && [ -n "$tg" ] || { echo "llm-bench: tract printed: $tract_out" >&2; exit 1; }
    printf '%s\ttract\t%s\t%s\n' "$threads" "$pp" "$tg" >>"$results"
    q4_out=$("$tract" "$model" -O -t block-quant --threads "$threads" llm-bench --max-time 2000 --warmup-time 300)
    pp=$(sed -n 's/^PP512: \([0-9.]*\) tokens\/sec$/\1/p' <<<"$q4_out")
    tg=$(sed -n 's/^TG128: \([0-9.]*\) tokens\/sec$/\1/p' <<<"$q4_out")
    [ -n "$pp" ] && [ -n "$tg" ] || { echo "llm-bench: tract -t block-quant printed: $q4_out" >&2; exit 1; }
    printf '%s\tq4_0\t%s\t%s\n' "$threads" "$pp" "$tg" >>"$results"
    ort_out=$(node "$root/bench/ort_llm_bench.js" "$model" --threads "$threads")
    "$python" - "$threads" "$ort_out" >>"$results" <<'EOF'
import json, sys
r = json.loads(sys.argv[2])
print(f"{sys.argv[1]}\tonnxruntime\t{r['pp512_tokens_per_s']}\t{r['tg128_tokens_per_s']}")
EOF
  done
done

# The last-level cache, which a model's weights may fit in.
cache=$(cat /sys/devices/system/cpu/cpu0/cache/index3/size 2>/dev/null || echo unknown)

"$python" - "$results" "$out" "$bandwidth" "$weight_bytes" "$parameters" \
  "$command_line" "$(nproc)" "$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)" "$cache" <<'EOF'
import collections
import sys

results, out, bandwidth, weight_bytes, parameters, command, cores, cpu, cache = sys.argv[1:]
bandwidth, weight_bytes = float(bandwidth), int(weight_bytes)
runs = collections.defaultdict(list)
for line in open(results):
    threads, engine, pp, tg = line.split("\t")
    runs[(int(threads), engine)].append((float(pp), float(tg)))

def best(values):
    top = max(values)
    spread = 100 * (top - min(values)) / top if top else 0
    return top, spread

bound = bandwidth * 1e9 / weight_bytes
lines = [
    "# Language-model performance",
    "",
    f"Written by `{command}`: tract's `llm-bench` and onnxruntime-node 1.30 "
    "(bench/ort_llm_bench.js), in alternating rounds on the same ONNX export.",
    "",
    f"* Machine: {cpu}, {cores} cores, a last-level cache of {cache}; one "
    f"core reads memory at {bandwidth:.1f} GB/s (bench/read_bandwidth.c).",
    f"* Model: the Llama-style decoder of scripts/make-llm-model.py at its "
    f"default size, {int(parameters) / 1e6:.1f} million f32 parameters; a "
    f"token reads {weight_bytes / 1e6:.1f} MB of matrices, so that token "
    f"generation from memory is bound by {bound:.0f} tokens/s at that "
    "bandwidth. (Matrices that fit in the last-level cache are read from "
    "it, faster, at least in part.)",
    "* tract q4_0: the same model with `-t block-quant`, its products' "
    "weights as Q4_0 blocks (4.5 bits a weight) decoded in the kernels; "
    "its logits stay within 0.15 of the f32 model's (the llm-decoder "
    "test). onnxruntime runs the f32 model.",
    "* PP512: a prompt of 512 tokens (P = 0), the mean run over 2 s; TG128: "
    "128 steps of one token over a past of 0 to 127, summed. Throughputs: "
    "higher is better; each figure is the best of the rounds, ± the spread "
    "of the rounds (best minus worst, in % of the best).",
    "",
    "| threads | measure | tract tokens/s | onnxruntime tokens/s | tract / onnxruntime | tract q4_0 tokens/s | q4_0 / f32 |",
    "|--:|---|--:|--:|--:|--:|--:|",
]
for threads in sorted({t for t, _ in runs}):
    ours, theirs = runs[(threads, "tract")], runs[(threads, "onnxruntime")]
    quantized = runs[(threads, "q4_0")]
    for index, name in enumerate(("PP512", "TG128")):
        (a, sa), (b, sb) = best([r[index] for r in ours]), best([r[index] for r in theirs])
        q, sq = best([r[index] for r in quantized])
        lines.append(f"| {threads} | {name} | {a:.1f} ±{sa:.0f}% | {b:.1f} ±{sb:.0f}% | {a / b:.2f} "
                     f"| {q:.1f} ±{sq:.0f}% | {q / a:.2f} |")
lines += ["", f"TG128 at one thread against the bandwidth bound: "
          f"{best([r[1] for r in runs[(1, 'tract')]])[0] / bound * 100:.0f}% "
          f"for tract, {best([r[1] for r in runs[(1, 'onnxruntime')]])[0] / bound * 100:.0f}% "
          "for onnxruntime.", ""]
open(out, "w").write("\n".join(lines))
print("\n".join(lines))
EOF
