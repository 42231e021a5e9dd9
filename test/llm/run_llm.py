#!/usr/bin/python3
"""The Llama-style language model of scripts/make-llm-model.py, against torch.

The model is made small here (2 layers of width 128, 4 query heads and 2
key/value heads, an MLP of 256), so that each of the ten compilations
takes a few seconds. Checks:

* the prompt (S = 25 tokens, P = 0) and 8 greedy decode steps (S = 1,
  P = 25..32, the past being the previous step's present tensors): the
  logits and the present keys and values match torch's at --approx
  approximate, each step through `tract -O run`;
* with `-t detect-kv-cache` (the caches kept inside the model, tract's
  DynamicKeyValueCache), the prompt and the decode steps match torch's
  logits, each call starting from the bundle's past, and the prompt from
  empty caches; the model goes through NNEF and back, and llm-bench runs
  it;
* with `-t block-quant` (weights of the products as Q4_0 blocks), the
  prompt and decode steps 1 and 8 match torch's with the same weights
  quantized (make-llm-model.py --q4-0) at --approx approximate, and the
  prompt's logits stay within Q4_TOLERANCE of the f32 model's; on a CPU
  that sums byte products, torch rounds the inputs of the decoding steps'
  quantized products to 8 bits as tract's kernels do (--q8-inputs);
* the same with `-t f16-weights` (the same weights as f16, summed in f32),
  against torch with those weights rounded to f16 (make-llm-model.py
  --f16), and within F16_TOLERANCE of the f32 model;
* the same weights written as onnxruntime's generative-AI exports lay a
  decoder out (make-llm-model.py --contrib: SimplifiedLayerNormalization,
  SkipSimplifiedLayerNormalization, GroupQueryAttention with its rotary
  embeddings, an attention_mask input): the prompt and decode steps 1 and 8
  match torch's, llm-bench runs it (the mask made all ones), and the
  --contrib-q4 export's match torch's with the --q4-0 weights, its
  MatMulNBits products (all 10 that block-quant would quantize) and its
  output head (weights stored as f16, read from the file, not copied)
  running as block_quant_matmul;
* the same weights as tract NNEF in torch-to-nnef's layout
  (make-llm-model.py --nnef: in_cache_*/out_cache_* tensors, symbols S and
  P with their assertions and scenarios, tract_transformers_* ops): the
  prompt and decode steps match torch's as they are and with --llm (the
  caches inside), and the NNEF with Q4_0 or f16 .dat weights matches
  torch's rounded weights through -t block-quant and -t f16-weights;
* tract's LLM command line: `--llm -t block-quant` (the caches inside, Q4_0
  weights) against torch's f32 logits by the rank-biased overlap of the
  tokens' rankings, at least RBO_FLOOR at every position of the prompt and
  decode steps 1 and 8, and a floor of 0.999 refused; `--llm run
  --prompt-chunk-size 7` runs the prompt in chunks that match torch's
  logits; `-t detect-kv-cache
  -t unfold-kv-cache` gives the caches back as inputs and NAME_concat
  outputs, whose logits match torch's with --allow-missing-outputs;
* `tract --set B=1 --set S=1 --set P=127 MODEL run` on made-up inputs gives
  logits of 1,1,256 and a present cache of 128 positions;
* `tract MODEL llm-bench` prints tract's two lines, PP512 and TG128 in
  tokens/sec;
* llm-bench on a model without a key/value input says so.
"""
import argparse
import os

import numpy as np
import re
import subprocess
import sys
import tempfile

SMALL = ["--layers", "2", "--hidden", "128", "--heads", "4", "--kv-heads",
         "2", "--ffn", "256"]
STEPS = 8
# The largest difference Q4_0 weights may make to a logit of the small
# model's prompt, against the f32 model (measured: 0.08).
Q4_TOLERANCE = 0.15
# The same for f16 weights (measured: 0.0002).
F16_TOLERANCE = 0.002
# The lowest rank-biased overlap (p 0.9, depth 100) of the Q4_0 model's
# token rankings with torch's f32 ones at any position of the prompt and
# decode steps 1 and 8 (measured: 0.949).
RBO_FLOOR = 0.9


def byte_dots():
    """Whether this CPU sums byte products as tract's code generator sees
    it (AVX-512 VNNI with AVX-512 BW, or AArch64's dot product): the
    decoding steps of Q4_0 products then round their inputs to bytes."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            flags = set(word for line in cpuinfo
                        if line.startswith(("flags", "Features"))
                        for word in line.split(":", 1)[1].split())
    except OSError:
        return False
    return {"avx512_vnni", "avx512bw"} <= flags or "asimddp" in flags


def run(command):
    return subprocess.run(command, capture_output=True, text=True)


def check_steps(args, model, options, steps, bundle_of, label, reference,
                failures):
    """`tract MODEL OPTIONS -O run` on the bundle of each step (0 the
    prompt), its outputs against the bundle's at --approx approximate. With
    the caches inside the model (-t detect-kv-cache), the presents must not
    be printed."""
    inside = "detect-kv-cache" in options
    for step in steps:
        bundle = bundle_of(step)
        checked = run([args.tract, model] + options +
                      ["-O", "run", "--input-from-bundle", bundle,
                       "--assert-output-bundle", bundle,
                       "--approx", "approximate"])
        what = label + ("prompt" if step == 0 else f"decode step {step}")
        if checked.returncode != 0 or (inside and "present" in checked.stdout):
            failures.append(f"{what}: {checked.stdout}{checked.stderr.strip()}")
        else:
            print(f"ok    {what} matches {reference}")


def check_stored_weights(args, work, model, prefix, flag, transform,
                         tolerance, failures):
    """`-t transform` against torch with the weights it stores rounded the
    same way (make-llm-model.py `flag`), for the prompt and decode steps 1
    and STEPS, and the prompt's logits against the f32 model's."""
    label = flag[2:].replace("-", "_")
    rounded = os.path.join(work, label)
    contrib = os.path.join(work, f"contrib-{label}.onnx")
    nnef = os.path.join(work, f"nnef-{label}")
    made = run([sys.executable, args.script, os.path.join(work, "same.onnx"),
                "--bundles", rounded, "--steps", str(STEPS), flag,
                "--nnef", nnef, "--nnef-weights", label] +
               (["--contrib-q4", contrib] if flag == "--q4-0" else []) +
               (["--q8-inputs"] if flag == "--q4-0" and byte_dots() else []) +
               SMALL)
    if made.returncode != 0:
        print(made.stderr)
        return False
    # The NNEF export with those weights stored so, read by the transform.
    check_steps(args, nnef, ["-t", transform], (0, STEPS),
                lambda step: f"{rounded}.nnef.{step}.npz",
                f"NNEF with {label} weights, ", "torch's rounded weights",
                failures)
    if flag == "--q4-0":
        check_steps(args, contrib, [], (0, STEPS),
                    lambda step: f"{rounded}.{step}.npz",
                    "contrib ops with MatMulNBits, ",
                    "torch's rounded weights", failures)
        dumped = run([args.tract, contrib, "dump"])
        products = dumped.stdout.count(" block_quant_matmul ")
        head = " block_quant_matmul logits" in dumped.stdout
        if dumped.returncode != 0 or products != 11 or not head:
            failures.append(f"MatMulNBits: {products} block_quant_matmul "
                            f"(the head {'among them' if head else 'not'}), "
                            "expected 10 and the f16 head\n" + dumped.stderr)
        else:
            print("ok    MatMulNBits: 10 block_quant_matmul and the f16 head")
    check_steps(args, model, ["-t", transform], (0, 1, STEPS),
                lambda step: f"{rounded}.{step}.npz", f"{label} ",
                "torch's rounded weights", failures)
    outputs = os.path.join(work, f"{label}-outputs.npz")
    saved = run([args.tract, model, "-t", transform, "-O", "run",
                 "--input-from-bundle", f"{prefix}.0.npz",
                 "--save-outputs-npz", outputs])
    if saved.returncode != 0:
        failures.append(f"{label} against f32: " + saved.stderr.strip())
        return True
    reference = np.load(f"{prefix}.0.npz")["logits"]
    difference = np.abs(np.load(outputs)["logits"] - reference).max()
    if difference > tolerance:
        failures.append(f"{label} logits differ from f32's by "
                        f"{difference:.4f} (> {tolerance})")
    else:
        print(f"ok    {label} logits within {difference:.4f} of f32's")
    return True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tract", required=True)
    parser.add_argument("--script", required=True,
                        help="scripts/make-llm-model.py")
    args = parser.parse_args()
    failures = []
    with tempfile.TemporaryDirectory() as work:
        model = os.path.join(work, "llm.onnx")
        prefix = os.path.join(work, "step")
        contrib = os.path.join(work, "contrib.onnx")
        nnef = os.path.join(work, "nnef")
        made = run([sys.executable, args.script, model, "--bundles", prefix,
                    "--steps", str(STEPS), "--contrib", contrib, "--nnef",
                    nnef] + SMALL)
        if made.returncode != 0:
            print(made.stderr)
            return 1

        steps = range(STEPS + 1)

        def bundle_of(step):
            return f"{prefix}.{step}.npz"
        check_steps(args, model, [], steps, bundle_of, "", "torch", failures)
        check_steps(args, contrib, [], (0, 1, STEPS), bundle_of,
                    "contrib ops, ", "torch", failures)
        # torch-to-nnef's layout: explicit caches, then kept inside (--llm).
        check_steps(args, nnef, [], (0, 1, STEPS),
                    lambda step: f"{prefix}.nnef.{step}.npz", "NNEF, ",
                    "torch", failures)
        check_steps(args, nnef, ["--llm"], (0, STEPS),
                    lambda step: f"{prefix}.nnef.{step}.npz",
                    "NNEF with --llm, ", "torch", failures)
        bench = run([args.tract, contrib, "llm-bench", "--max-time", "200"])
        if bench.returncode != 0 or "TG128:" not in bench.stdout:
            failures.append("llm-bench, contrib ops: " + bench.stdout +
                            bench.stderr)
        else:
            print("ok    llm-bench with the contrib ops")

        internal = ["-t", "detect-kv-cache"]
        dumped = run([args.tract, model] + internal + ["dump"])
        caches = dumped.stdout.count(" dyn_kv_cache ")
        sources = dumped.stdout.count(" Source ")
        if dumped.returncode != 0 or caches != 4 or sources != 1:
            failures.append(f"detect-kv-cache: {caches} caches and {sources} "
                            "inputs, expected 4 and 1\n" + dumped.stdout +
                            dumped.stderr)
        else:
            print("ok    detect-kv-cache: 4 caches inside, one input left")
        check_steps(args, model, internal, steps, bundle_of,
                    "internal cache, ", "torch", failures)
        # The prompt alone: the caches start empty.
        prompt = os.path.join(work, "prompt.npz")
        np.savez(prompt, input_ids=np.load(f"{prefix}.0.npz")["input_ids"])
        nnef = os.path.join(work, "internal.nnef.tgz")
        exported = run([args.tract, model] + internal +
                       ["dump", "--nnef", nnef])
        for source in (model, nnef):
            extra = internal if source == model else []
            checked = run([args.tract, source] + extra +
                          ["-O", "run", "--input-from-bundle", prompt,
                           "--assert-output-bundle", f"{prefix}.0.npz",
                           "--approx", "approximate"])
            if exported.returncode != 0 or checked.returncode != 0:
                failures.append(f"internal cache from empty ({source}): "
                                + exported.stderr + checked.stderr)
            else:
                print(f"ok    internal cache from empty caches "
                      f"({os.path.basename(source)}) matches torch")
        bench = run([args.tract, model] + internal +
                    ["llm-bench", "--max-time", "200"])
        if bench.returncode != 0 or "TG128:" not in bench.stdout:
            failures.append("llm-bench, internal cache: " + bench.stdout +
                            bench.stderr)
        else:
            print("ok    llm-bench with the internal cache")

        for flag, transform, tolerance in (
                ("--q4-0", "block-quant", Q4_TOLERANCE),
                ("--f16", "f16-weights", F16_TOLERANCE)):
            if not check_stored_weights(args, work, model, prefix, flag,
                                        transform, tolerance, failures):
                return 1

        for step in (0, 1, STEPS):
            bundle = bundle_of(step)
            checked = run([args.tract, model, "--llm", "-t", "block-quant",
                           "run", "--input-from-bundle", bundle,
                           "--assert-output-bundle", bundle,
                           "--assert-llm-rbo", str(RBO_FLOOR)])
            overlap = re.search(r"rank-biased overlap ([0-9.]+) at worst",
                                checked.stdout)
            if checked.returncode != 0 or not overlap:
                failures.append(f"--llm -t block-quant, step {step}: " +
                                checked.stdout + checked.stderr)
            else:
                print(f"ok    --llm -t block-quant step {step}: rank-biased "
                      f"overlap {overlap.group(1)} >= {RBO_FLOOR}")
        # The prompt of 25 tokens in chunks of 7 (and a last one of 4), each
        # on the caches the previous one left.
        chunked = run([args.tract, model, "--llm", "run", "--input-from-bundle",
                       bundle_of(0), "--assert-output-bundle", bundle_of(0),
                       "--approx", "approximate", "--prompt-chunk-size", "7"])
        if chunked.returncode != 0:
            failures.append("--prompt-chunk-size 7: " + chunked.stdout +
                            chunked.stderr)
        else:
            print("ok    --prompt-chunk-size 7: the prompt in 4 chunks "
                  "matches torch")
        refused = run([args.tract, model, "--llm", "-t", "block-quant", "run",
                       "--input-from-bundle", bundle_of(0),
                       "--assert-output-bundle", bundle_of(0),
                       "--assert-llm-rbo", "0.999"])
        if refused.returncode == 0 or "rank-biased overlap" not in \
                refused.stderr:
            failures.append("--assert-llm-rbo 0.999 passed Q4_0 logits: " +
                            refused.stdout + refused.stderr)
        else:
            print("ok    --assert-llm-rbo 0.999 refuses the Q4_0 logits")
        unfolded = run([args.tract, model, "-t", "detect-kv-cache", "-t",
                        "unfold-kv-cache", "run", "--input-from-bundle",
                        bundle_of(1), "--assert-output-bundle", bundle_of(1),
                        "--approx", "approximate", "--allow-missing-outputs"])
        if (unfolded.returncode != 0 or
                "past_key_values.0.key_concat" not in unfolded.stdout or
                "not checked" not in unfolded.stderr):
            failures.append("unfold-kv-cache: " + unfolded.stdout +
                            unfolded.stderr)
        else:
            print("ok    unfold-kv-cache: the caches are inputs and outputs "
                  "again")

        made_up = run([args.tract, "--set", "B=1", "--set", "S=1", "--set",
                       "P=127", model, "run", "--allow-random-input"])
        if made_up.returncode != 0:
            failures.append("run --set S=1 --set P=127: " +
                            made_up.stderr.strip())
        elif ("logits" not in made_up.stdout or
              not re.search(r"present\.0\.key.*1,2,128,32", made_up.stdout)):
            failures.append("run --set S=1 --set P=127: unexpected outputs\n"
                            + made_up.stdout)
        else:
            print("ok    run at S=1, P=127")

        bench = run([args.tract, model, "llm-bench", "--max-time", "200"])
        lines = bench.stdout.splitlines()
        if (bench.returncode != 0 or len(lines) != 2 or
                not re.fullmatch(r"PP512: [0-9.]+ tokens/sec", lines[0]) or
                not re.fullmatch(r"TG128: [0-9.]+ tokens/sec", lines[1])):
            failures.append("llm-bench: " + bench.stdout + bench.stderr)
        else:
            print("ok    llm-bench: " + ", ".join(lines))

        # A model without a float input has no key/value cache to find.
        tokens_only = os.path.join(work, "tokens.mlir")
        with open(tokens_only, "w") as f:
            f.write("func.func @main(%arg0: tensor<?x?xi64, "
                    "#tract.dims<[B, S]>>) -> tensor<?x?xi64, "
                    "#tract.dims<[B, S]>> {\n"
                    "  return %arg0 : tensor<?x?xi64, #tract.dims<[B, S]>>\n"
                    "}\n")
        refused = run([args.tract, tokens_only, "llm-bench"])
        if refused.returncode == 0 or \
                "no float input to be its key/value cache" not in refused.stderr:
            failures.append("llm-bench without a cache: " + refused.stderr)
        else:
            print("ok    llm-bench refuses a model without a cache")

    for failure in failures:
        print("FAIL  " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
