#!/usr/bin/env python3
"""Runs each real model through `tract MODEL run` on its onnxruntime
reference bundle and checks the outputs at --approx approximate.

The bundles (inputs and onnxruntime's outputs, under the model's names) and
models.sha256 (the model files they were made from) are written by
scripts/make-reference-outputs.sh. A spec MODEL:VARIANT runs MODEL on its
second bundle MODEL-STEM.VARIANT.npz; @FACT parts are given as `-i FACT`.
Prints one line per model:

  ok    the outputs match; the largest absolute difference from onnxruntime
        and the largest share of the tolerance used are shown;
  xfail the model is listed with --expect-failure MODEL=TEXT and fails with
        an error containing TEXT (or one of TEXT|TEXT...); not a pass: the
        summary counts it apart;
  FAIL  anything else: a mismatch, an error, a missing model or reference,
        a model that differs from the one the reference was made from, an
        expected failure that fails differently, or one that now passes (then
        remove it from the list).

Exits non-zero on any FAIL. --report writes the lines and the totals.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import sample  # noqa: E402

# The models' hashes, read and computed as when the bundles were written.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts", "reference-outputs"))
from make_references import read_hashes, sha256  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_node_tests  # noqa: E402

# tract's `approximate` tolerances (docs/development.md), per float width.
TOLERANCES = {2: (1e-3, 5e-3), 4: (1e-4, 5e-4), 8: (1e-4, 5e-4)}


def first_error(stderr):
    lines = [line for line in stderr.splitlines() if "error:" in line]
    if not lines:
        lines = stderr.splitlines()[-1:] or ["no message"]
    line = lines[0]
    return line.split("error:", 1)[1].strip() if "error:" in line else line


def differences(reference, saved):
    """The largest |tract - onnxruntime| over all float outputs, and the
    largest |difference| / (atol + rtol * |expected|)."""
    expected = np.load(reference)
    got = np.load(saved)
    worst_abs, worst_share = 0.0, 0.0
    for name in got.files:
        if name not in expected.files or got[name].dtype.kind != "f":
            continue
        e = expected[name].astype(np.float64)
        g = got[name].astype(np.float64)
        if e.shape != g.shape:
            continue
        diff = np.abs(g - e)
        diff[np.isnan(diff)] = 0  # NaN against NaN; tract judges the rest
        atol, rtol = TOLERANCES[got[name].dtype.itemsize]
        worst_abs = max(worst_abs, float(diff.max(initial=0)))
        share = diff / (atol + rtol * np.abs(e))
        worst_share = max(worst_share, float(share.max(initial=0)))
    return worst_abs, worst_share


def run_one(args, spec, expected_failure, hashes, work):
    name, *facts = spec.split("@")
    # MODEL:VARIANT runs the model on its bundle MODEL-STEM.VARIANT.npz.
    model, _, variant = name.partition(":")
    stem = os.path.splitext(model)[0] + ("." + variant if variant else "")
    path = os.path.join(args.models, model)
    reference = os.path.join(args.references, stem + ".npz")
    if not os.path.exists(path):
        return "FAIL", "missing (scripts/fetch-models.sh fetches it)"
    if not os.path.exists(reference):
        return "FAIL", ("no reference %s (scripts/make-reference-outputs.sh "
                        "writes it)" % os.path.relpath(reference))
    if hashes.get(model) != sha256(path):
        return "FAIL", ("not the model file the reference was made from "
                        "(models.sha256); refetch it or rerun "
                        "scripts/make-reference-outputs.sh")
    saved = os.path.join(work, stem + ".npz")
    command = [args.tract, "--threads", str(args.threads)]
    command += ["-O"] if args.optimize else []
    kernels = os.path.join(work, stem + ".kernels")
    if args.gpu == "cuda":
        command += ["--gpu", args.gpu, "--ptx-dir", kernels]
    elif args.gpu:
        command += ["--gpu", args.gpu, "--spirv-dir", kernels,
                    "--msl-dir", os.path.join(work, stem + ".msl")]
    for fact in facts:
        command += ["-i", fact]
    command += [path, "run", "-q", "--input-from-bundle", reference,
                "--assert-output-bundle", reference, "--approx", args.approx,
                "--save-outputs-npz", saved]
    start = time.monotonic()
    try:
        proc = subprocess.run(command, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return "FAIL", "timed out after %d s" % args.timeout
    seconds = time.monotonic() - start
    if proc.returncode < 0:
        return "FAIL", "killed by signal %d" % -proc.returncode
    stderr = proc.stderr.decode(errors="replace")
    if proc.returncode != 0:
        reason = first_error(stderr)
        if expected_failure is None:
            return "FAIL", reason
        if any(text in stderr for text in expected_failure.split("|")):
            return "xfail", "%s (expected: %s)" % (reason, expected_failure)
        return "FAIL", ("%s (listed as expected to fail with '%s', fails "
                        "otherwise)" % (reason, expected_failure))
    worst_abs, worst_share = differences(reference, saved)
    problem = args.gpu and run_node_tests.invalid_kernels(kernels)
    if problem:
        return "FAIL", problem
    if expected_failure is not None:
        return "FAIL", ("passes now (max |diff| %.2g): remove it from the "
                        "expected failures in test/CMakeLists.txt" % worst_abs)
    return "ok", "max |diff| %.2g, %.0f%% of the %s tolerance, %.1f s" % (
        worst_abs, 100 * worst_share, args.approx, seconds)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tract", required=True)
    parser.add_argument("--models", required=True)
    parser.add_argument("--references", required=True)
    parser.add_argument("--approx", default="approximate")
    parser.add_argument("--timeout", type=int, default=600)
    parser.add_argument("--expect-failure", action="append", default=[],
                        metavar="MODEL=TEXT")
    parser.add_argument("--report")
    parser.add_argument("--gpu", help="tract --gpu for every run (vulkan); "
                        "the kernels' SPIR-V must pass spirv-val")
    parser.add_argument("--threads", type=int, default=1,
                        help="tract --threads for every run")
    parser.add_argument("--optimize", action="store_true",
                        help="run the decluttered model (tract -O)")
    # The sanitizer build's sample: the models of the lines it takes.
    sample.add_arguments(parser, what="model")
    parser.add_argument("specs", nargs="+", metavar="MODEL[:VARIANT][@FACT]...")
    args = parser.parse_args()

    expected = dict(entry.split("=", 1) for entry in args.expect_failure)
    chosen = sample.Sample.from_args(args)
    if not chosen.full:
        print("real models: %s" % chosen.describe("model"))
        expected = {model: text for model, text in expected.items()
                    if any(spec.split("@")[0] == model
                           for spec in chosen.pick(args.specs))}
    args.specs = chosen.pick(args.specs)
    models = [spec.split("@")[0] for spec in args.specs]
    lines = []
    for model in sorted(set(expected) - set(models)):
        lines.append("FAIL  %s: listed as expected to fail but not run" % model)
    hashes = read_hashes(os.path.join(args.references, "models.sha256"))
    counts = {"ok": 0, "xfail": 0, "FAIL": len(lines)}
    for line in lines:
        print(line, flush=True)
    with tempfile.TemporaryDirectory() as work:
        for spec, model in zip(args.specs, models):
            status, message = run_one(args, spec, expected.get(model), hashes,
                                      work)
            counts[status] += 1
            line = "%-5s %s: %s" % (status, spec, message)
            print(line, flush=True)
            lines.append(line)
    summary = ("real models: %d agree with onnxruntime, %d expected to fail, "
               "%d failed" % (counts["ok"], counts["xfail"], counts["FAIL"]))
    print(summary)
    if args.report:
        with open(args.report, "w") as f:
            f.write("\n".join(lines + [summary]) + "\n")
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
