#!/usr/bin/env python3
"""PTX for the CUDA path, where no GPU is: each model compiled with `tract
compile --target cuda --cpu CHIP --ptx-dir` for each chip. Where the CUDA
toolkit is, tract assembles every kernel module with its ptxas into a
fatbin, which must hold the cubin for CHIP and the PTX (the PTX is only
generated, and counted, otherwise). With --target metal, the Metal
path where no Mac is: each model compiled with `tract compile --target
metal` (a Mach-O object for Apple silicon), with an MSL file per kernel.

Models: the real models given as specs (as run_real_models.py takes them),
and the node tests an onnx-conformance report marks passing, every --sample
Nth. Fails on any failed compile or assembly, or when fewer than --min
compiled. Without a CUDA toolkit, a model whose kernels need libdevice's
math cannot compile (tract says so): it is counted apart, not failed.
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fatbin_images  # noqa: E402
import import_node_tests  # noqa: E402
import nnef_cycle  # noqa: E402
import run_node_tests  # noqa: E402
import sample  # noqa: E402  (test/, on the path from run_node_tests)


def compile_metal(tract, path, facts, work):
    """'' when the model compiles for Metal, with an MSL kernel per file,
    else why not."""
    os.makedirs(work, exist_ok=True)
    command = [tract, path]
    for fact in facts:
        command += ["-i", fact]
    msl = os.path.join(work, "msl")
    command += ["--msl-dir", msl, "compile", "--target", "metal", "-o",
                os.path.join(work, "model.o")]
    proc = subprocess.run(command, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, timeout=600)
    if proc.returncode != 0:
        return "compile: " + run_node_tests.first_error(
            proc.stderr.decode(errors="replace"))
    with open(os.path.join(work, "model.o"), "rb") as f:
        if f.read(4) != b"\xcf\xfa\xed\xfe":
            return "model.o is not a 64-bit Mach-O object"
    for name in sorted(os.listdir(msl)) if os.path.isdir(msl) else []:
        with open(os.path.join(msl, name)) as f:
            if "kernel void " + name[:-len(".metal")] + "(" not in f.read():
                return "%s: no kernel function %s" % (name, name[:-6])
    return ""


def compile_one(tract, path, facts, chip, work):
    """'' when the model's PTX for `chip` compiles (and assembles), else
    why not; for chip "metal", compile_metal's answer."""
    if chip == "metal":
        return compile_metal(tract, path, facts, work)
    os.makedirs(work, exist_ok=True)
    command = [tract, path]
    for fact in facts:
        command += ["-i", fact]
    command += ["--ptx-dir", work, "compile", "--target", "cuda", "--cpu",
                chip, "-o", os.path.join(work, "model.o")]
    proc = subprocess.run(command, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, timeout=600)
    if proc.returncode != 0:
        return "compile: " + run_node_tests.first_error(
            proc.stderr.decode(errors="replace"))
    modules = [name for name in os.listdir(work) if name.endswith(".ptx")]
    if modules and run_node_tests.ptxas():
        found = fatbin_images.images(os.path.join(work, "model.o"))
        for kind in ["elf", "ptx"]:
            if found.count((kind, chip)) != len(modules):
                return "%d modules but %d %s images for %s in the object" % (
                    len(modules), found.count((kind, chip)), kind, chip)
    return ""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tract", required=True)
    parser.add_argument("--translate", required=True)
    parser.add_argument("--models", help="the real models' folder")
    parser.add_argument("--passing-from",
                        help="an onnx-conformance report: its passing node "
                             "tests")
    parser.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    sample.add_arguments(parser, what="passing node test")
    parser.add_argument("--chips", default="sm_80,sm_90")
    parser.add_argument("--target", choices=["cuda", "metal"],
                        default="cuda")
    parser.add_argument("--min", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("specs", nargs="*", metavar="MODEL[@FACT]...")
    args = parser.parse_args()

    jobs = []  # (label, path, facts)
    for spec in args.specs:
        name, *facts = spec.split("@")
        model = name.partition(":")[0]
        jobs.append((spec, os.path.join(args.models, model), facts))
    if args.passing_from:
        passing = sorted(nnef_cycle.passing_from_report(args.passing_from))
        chosen = sample.Sample.from_args(args)
        print("%s: %s" % (args.target, chosen.describe("passing node test")))
        for name in chosen.pick(passing):
            path = os.path.join(args.data, "node", name, "model.onnx")
            _, _, facts = import_node_tests.import_one(args.translate, path)
            jobs.append((name, path, facts))

    failures, without_toolkit = [], 0
    with tempfile.TemporaryDirectory() as work, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {}
        chips = ["metal"] if args.target == "metal" else \
            args.chips.split(",")
        for index, (label, path, facts) in enumerate(jobs):
            for chip in chips:
                folder = os.path.join(work, "%d-%s" % (index, chip))
                futures[pool.submit(compile_one, args.tract, path, facts,
                                    chip, folder)] = (label, chip)
        for future in concurrent.futures.as_completed(futures):
            problem = future.result()
            if "needs a CUDA toolkit" in problem:
                without_toolkit += 1
            elif problem:
                failures.append("%s (%s): %s" % (*futures[future], problem))
    compiled = len(futures) - len(failures) - without_toolkit
    if args.target == "metal":
        print("metal-compile: %d of %d compiles for Metal" % (
            compiled, len(futures)))
    else:
        print("cuda-ptx: %d of %d compiles%s for %s%s" % (
            compiled, len(futures),
            " assembled by ptxas into fatbins" if run_node_tests.ptxas()
            else " (no ptxas here: generated only)", args.chips,
            "; %d need libdevice, and no CUDA toolkit is here" %
            without_toolkit if without_toolkit else ""))
    for failure in sorted(failures):
        print("FAIL " + failure)
    if failures or compiled < args.min:
        sys.exit(1)


if __name__ == "__main__":
    main()
