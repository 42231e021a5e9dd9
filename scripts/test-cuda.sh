#!/usr/bin/env bash
# The CUDA path on a machine with an NVIDIA GPU and its driver, against the
# CPU path and onnxruntime's outputs:
#   1. the example through `--gpu cuda`, and the same compiled by `tract
#      compile --target cuda` (sm_80 and sm_90) into a program linked with
#      plain `cc`, whose output must be the CPU's;
#   2. the real models on their onnxruntime bundles at `approximate`, and
#      torchvision's MobileNetV2 and ResNet-18 (random weights) exported
#      there, on bundles that onnxruntime makes there;
#   3. a timing table: each model on the CPU (one thread per core) and on
#      the GPU, with the GPU's per-op profile, and square products from 512
#      to 4096 as GFLOP/s;
#   4. the ONNX node tests, every one on the CPU and a sample on CUDA (a
#      "cuda" column): what passes on the CPU must pass on CUDA.
# Everything lands in one folder (--out, default build/cuda-check), with a
# summary.md; the run needs no network.
#
# Usage: scripts/test-cuda.sh [--out DIR]
#          builds here (scripts/setup.sh, build.sh, fetch-models.sh), then
#          runs; for a machine where this project builds.
#        scripts/test-cuda.sh --kit KIT [--out DIR]
#          takes the tools, runtime and models from the kit that
#          scripts/cuda-kit.sh packed (KIT: its unpacked `kit` folder), for
#          a GPU machine without LLVM; its python3 needs numpy, onnx,
#          onnxruntime and torch(vision).
# TRACT_CUDA_NODE_SAMPLE=N: the node tests' CUDA sample (default 2);
# TRACT_CUDA_NODE_FILTER=TEXT: only the node tests whose name holds TEXT;
# TRACT_CUDA_NODE_TIMEOUT=S: their time limit (default 900 s);
# TRACT_CUDA_VISION="NAME...": the torchvision networks (default five).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
kit="" out=""
while (($#)); do
  case "$1" in
  --kit) kit=$(cd "$2" && pwd); shift 2 ;;
  --out) out=$2; shift 2 ;;
  *) echo "usage: scripts/test-cuda.sh [--kit KIT] [--out DIR]" >&2; exit 2 ;;
  esac
done

if [ -n "$kit" ]; then
  tract="$kit/bin/tract" translate="$kit/bin/tract-translate"
  models="$kit/models" runtime="$kit/runtime" tiny="$kit/tiny"
  python=${PYTHON:-python3}
else
  build="${TRACT_BUILD_DIR:-$root/build}"
  "$root/scripts/setup.sh" || exit 1
  "$root/scripts/build.sh" || exit 1
  "$root/scripts/fetch-models.sh" || exit 1
  tract="$build/bin/tract" translate="$build/bin/tract-translate"
  models="$root/models" runtime="" tiny=""
  python=/usr/bin/python3
fi
out=${out:-$root/build/cuda-check}
mkdir -p "$out"
out=$(cd "$out" && pwd)
summary="$out/summary.md"
: >"$summary"
status=0
say() { echo "$*" | tee -a "$summary"; }
fail() { say "FAILED: $*"; status=1; }
threads=$(nproc)

# ---- The machine ----
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>&1
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) x $threads"
  ls -d "${CUDA_PATH:-/usr/local/cuda}"/nvvm/libdevice 2>&1
  "$tract" --version 2>&1
} >"$out/machine.txt"
say "# scripts/test-cuda.sh on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
say ""

# ---- 1. The example, run and compiled ----
if "$tract" "$root/examples/tiny/model.mlir" --set S=1 --gpu cuda \
  --ptx-dir "$out/tiny-ptx" run -q --allow-random-input >"$out/tiny-run.txt" 2>&1; then
  say "- example through --gpu cuda: ok"
else
  fail "example through --gpu cuda: $(tail -1 "$out/tiny-run.txt")"
fi
if [ -n "$tiny" ] && command -v cc >/dev/null; then
  for chip in sm_80 sm_90; do
    dir="$out/compiled-$chip"
    mkdir -p "$dir"
    if cc -I"$runtime" -I"$tiny/$chip" "$tiny/run-tiny.c" "$tiny/$chip/tiny.o" \
      "$runtime/libtract_runtime_cuda.a" "$runtime/libtract_runtime.a" \
      -lm -ldl -lpthread -o "$dir/run-tiny" >"$dir/log.txt" 2>&1 &&
      "$dir/run-tiny" "$dir/input.raw" "$dir/output.raw" >"$dir/output.txt" 2>>"$dir/log.txt"; then
      # The CPU's numbers for the same input (test/tools/tract-compile.test).
      if grep -q -- "-0.160525 0.685059 -0.232269 0.196959" "$dir/output.txt" &&
        grep -q "0.387394 -0.272186 3.182615 0.584523" "$dir/output.txt"; then
        say "- compiled for $chip, linked with cc, run: ok (the CPU's outputs)"
      else
        fail "compiled for $chip: outputs differ from the CPU's: $(head -4 "$dir/output.txt" | tr '\n' ' ')"
      fi
    else
      fail "compiled for $chip: $(tail -2 "$dir/log.txt" | tr '\n' ' ')"
    fi
  done
fi

# ---- 2. Real models ----
# The real models of the CPU's tests (test/CMakeLists.txt) that are here.
specs=()
for spec in $(sed -n '/^set(real_models$/,/)/{/^set(real_models$/d;s/)//;p}' \
  "$root/test/CMakeLists.txt" | tr -d '"'); do
  [ -f "$models/${spec%%[:@]*}" ] && specs+=("$spec")
done
timeout 600 "$python" "$root/test/onnx/run_real_models.py" --gpu cuda \
  --threads "$threads" --tract "$tract" --models "$models" \
  --references "$root/test/onnx/reference" \
  --report "$out/real-models.txt" "${specs[@]}" >/dev/null 2>"$out/real-models.err" ||
  fail "real models (see real-models.txt)"
say "- $(tail -1 "$out/real-models.txt" 2>/dev/null || echo 'real models: no report')"

# torchvision's networks with random weights, exported here, on inputs and
# outputs of onnxruntime's CPU provider.
gen="$out/torchvision"
mkdir -p "$gen/ref"
vision=${TRACT_CUDA_VISION:-mobilenet_v2 resnet18 efficientnet_b0 convnext_tiny densenet121}
for name in $vision; do
  timeout 120 "$python" "$root/scripts/export-torchvision.py" "$name" \
    "$gen/$name.onnx" >"$gen/$name.log" 2>&1 || fail "export of $name: $(tail -1 "$gen/$name.log")"
done
"$python" - "$gen" <<'EOF' >"$gen/ref.log" 2>&1 || fail "onnxruntime's bundles: $(tail -1 "$gen/ref.log")"
import hashlib, os, sys
import numpy as np
import onnxruntime as ort
gen = sys.argv[1]
with open(os.path.join(gen, "ref", "models.sha256"), "w") as hashes:
    for name in sorted(os.listdir(gen)):
        if not name.endswith(".onnx"):
            continue
        path = os.path.join(gen, name)
        x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
        session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        (logits,) = session.run(None, {"input": x})
        np.savez(os.path.join(gen, "ref", name[:-5] + ".npz"), input=x, logits=logits)
        hashes.write("%s  %s\n" % (hashlib.sha256(open(path, "rb").read()).hexdigest(), name))
EOF
vision_specs=()
for name in $vision; do
  [ -f "$gen/ref/$name.npz" ] && vision_specs+=("$name.onnx@1,3,224,224,f32")
done
if ((${#vision_specs[@]})); then
  timeout 900 "$python" "$root/test/onnx/run_real_models.py" --gpu cuda \
    --threads "$threads" --tract "$tract" --models "$gen" --references "$gen/ref" \
    --report "$out/torchvision.txt" "${vision_specs[@]}" >/dev/null 2>"$out/torchvision.err" ||
    fail "torchvision networks (see torchvision.txt)"
  say "- torchvision: $(tail -1 "$out/torchvision.txt" 2>/dev/null || echo 'no report')"
fi

# ---- 3. Timings ----
bench() { # ms per run from `tract ... bench`, or "-"
  timeout 300 "$tract" "$@" bench --allow-random-input 2>&1 | sed -n 's/.*ran [0-9]* times, \([0-9.]*\) ms\/i.*/\1/p' | tail -1 | grep . || echo -
}
say ""
say "| model | CPU, $threads threads (ms) | GPU (ms) | GPU/CPU | GPU, a batch per launch (ms) | copies per run (up, down) |"
say "|---|--:|--:|--:|--:|--:|"
timing() { # NAME FACTS... MODEL
  local name=$1; shift
  local cpu gpu each copies
  cpu=$(bench --threads "$threads" "$@")
  gpu=$(bench --threads "$threads" --gpu cuda "$@")
  each=$(TRACT_CUDA_SYNC_EACH=1 bench --threads "$threads" --gpu cuda "$@")
  timeout 300 "$tract" --threads "$threads" --gpu cuda "$@" dump --profile \
    --allow-random-input >"$out/profile-$name.txt" 2>&1
  # dump --profile's count of the plain runs' copies between host and device.
  copies=$(sed -n 's/^profile: GPU copies per run: \([0-9.]*\) uploads (\([^)]*\)), \([0-9.]*\) downloads (\([^)]*\)).*/\1 (\2), \3 (\4)/p' \
    "$out/profile-$name.txt" | tail -1)
  say "| $name | $cpu | $gpu | $(awk -v c="$cpu" -v g="$gpu" 'BEGIN{if (c+0>0 && g+0>0) printf "%.2f", g/c; else print "-"}') | $each | ${copies:--} |"
}
timing silero_vad_v5 -i 1,512,f32 -i state:2,1,128,f32 -i sr:i64=16000 "$models/silero_vad_v5.onnx"
timing ppocr_det -i 1,3,640,640,f32 "$models/ppocr_det.onnx"
timing blazeface_back "$models/blazeface_back.onnx"
for name in $vision; do
  [ -f "$gen/$name.onnx" ] && timing "$name" -i 1,3,224,224,f32 "$gen/$name.onnx"
done

# Square products: GFLOP/s, against the H200's 67 TFLOP/s of FP32.
say ""
say "| product | CPU (ms) | CPU GFLOP/s | GPU (ms) | GPU GFLOP/s | share of 67 TFLOP/s |"
say "|---|--:|--:|--:|--:|--:|"
for n in 512 1024 2048 4096; do
  "$python" - "$out/matmul-$n.onnx" "$n" <<'EOF'
import sys
from onnx import TensorProto, helper, save
n = int(sys.argv[2])
graph = helper.make_graph(
    [helper.make_node("MatMul", ["a", "b"], ["c"])], "matmul",
    [helper.make_tensor_value_info(x, TensorProto.FLOAT, [n, n]) for x in "ab"],
    [helper.make_tensor_value_info("c", TensorProto.FLOAT, [n, n])])
save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
EOF
  cpu=$(bench --threads "$threads" "$out/matmul-$n.onnx")
  gpu=$(bench --threads "$threads" --gpu cuda "$out/matmul-$n.onnx")
  say "$(awk -v n="$n" -v c="$cpu" -v g="$gpu" 'BEGIN{f=2*n*n*n/1e6;
    cg=(c+0>0)?sprintf("%.0f",f/c):"-"; gg=(g+0>0)?sprintf("%.0f",f/g):"-";
    sh=(g+0>0)?sprintf("%.2f%%",100*f/g/67e3):"-";
    printf "| %d³ | %s | %s | %s | %s | %s |", n, c, cg, g, gg, sh}')"
done

say ""
# ---- 4. Node tests ----
data=/usr/share/libonnx-testdata/data
[ -n "$kit" ] && data="$kit/onnx-data"
[ -d "$data" ] || data=$("$python" -c 'import os, onnx.backend.test as t; print(os.path.join(os.path.dirname(t.__file__), "data"))' 2>/dev/null)
if [ -d "$data/node" ]; then
  timeout "${TRACT_CUDA_NODE_TIMEOUT:-900}" "$python" "$root/test/onnx/run_node_tests.py" --data "$data" \
    --tract "$tract" --translate "$translate" --jobs "$threads" \
    --gpu-column cuda --gpu-sample "${TRACT_CUDA_NODE_SAMPLE:-2}" \
    ${TRACT_CUDA_NODE_FILTER:+--filter "$TRACT_CUDA_NODE_FILTER"} \
    --report "$out/node-tests.md" >"$out/node-tests.txt" 2>&1
  "$python" - "$out/node-tests.md" <<'EOF' | tee -a "$summary" || status=1
import sys
rows = [line.split("|") for line in open(sys.argv[1]) if line.startswith("| ")]
header = [cell.strip() for cell in rows[0]]
cpu, gpu = header.index("result"), header.index("cuda")
sampled = [row for row in rows[1:] if row[gpu].strip() != "not in the sample"]
on_cpu = [row for row in sampled if row[cpu].strip().startswith("pass")]
both = [row for row in on_cpu if row[gpu].strip() in ("same", "pass")]
share = len(both) / max(1, len(on_cpu))
print("- node tests: %d of the %d sampled tests that pass on the CPU pass on "
      "CUDA (%.1f%%)" % (len(both), len(on_cpu), 100 * share))
for row in on_cpu:
    if row not in both:
        print("  - %s/%s: %s" % (row[1].strip(), row[2].strip(), row[gpu].strip()[:150]))
sys.exit(0 if share >= 0.95 else 1)
EOF
else
  fail "no ONNX node tests here ($data)"
fi

say ""
say "exit status: $status"
exit $status
