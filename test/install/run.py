#!/usr/bin/env python3
"""Installs tract-mlir under a fresh prefix and uses it from outside the tree.

1. `cmake --install BUILD --prefix OUT/prefix`.
2. A CMake project (this folder) finds it with find_package(TractMLIR) and
   builds consumer.c (tract.h) and consumer.cpp (tract.hpp); consumer.c is
   built once more with the flags of `pkg-config tract` alone.
3. Each program loads, at run time, an ONNX model with a symbol set
   (MobileNetV2, B=1), the same model as an NNEF archive that the installed
   tract wrote, and an NNEF archive exported by tract's own tool chain (a
   q4_0 convolution of tract's regression cases), runs it and compares
   output 0 with the reference outputs: |got - expected| <= atol + rtol *
   |expected| for every value (MobileNetV2: 1e-4 and 1e-3; the q4_0
   convolution, whose values reach 1e10: 1e-3 and 1e-2).
4. The installed Python package is imported from a PYTHONPATH that holds
   the prefix alone, and runs MobileNetV2 on its reference input.
5. The program of docs/api.md (examples/api: Silero VAD over a WAV file) in
   C, C++ and Python prints the same speech segments, which cover the
   clip's speech and no silence.
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run(command, **kwargs):
    print("$ " + " ".join(command), flush=True)
    return subprocess.run(command, check=True, **kwargs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--models", required=True)
    parser.add_argument("--harness", required=True,
                        help="tract's regression cases (shared/tract-harness)")
    args = parser.parse_args()

    shutil.rmtree(args.out, ignore_errors=True)
    prefix = os.path.join(args.out, "prefix")
    run(["cmake", "--install", args.build, "--prefix", prefix],
        stdout=subprocess.DEVNULL)

    # The cases: model, --set, input, its shape, expected output, atol, rtol.
    data = os.path.join(args.out, "data")
    os.makedirs(data)
    cases = []
    reference = np.load(os.path.join(ROOT, "test/onnx/reference",
                                     "mobilenet_v2.npz"))
    reference["input"].astype(np.float32).tofile(f"{data}/mobilenet.in")
    reference["logits"].astype(np.float32).tofile(f"{data}/mobilenet.out")
    cases.append([os.path.join(args.models, "mobilenet_v2.onnx"), "B=1",
                  f"{data}/mobilenet.in", "1,3,224,224",
                  f"{data}/mobilenet.out", "1e-4", "1e-3"])
    # MobileNetV2 as NNEF, written by the installed tract.
    archive = f"{data}/mobilenet.nnef.tgz"
    run([os.path.join(prefix, "bin", "tract"), "-i", "1,3,224,224,f32",
         os.path.join(args.models, "mobilenet_v2.onnx"), "dump", "--nnef",
         archive])
    cases.append([archive, "-", f"{data}/mobilenet.in", "1,3,224,224",
                  f"{data}/mobilenet.out", "1e-4", "1e-3"])
    # An archive of tract's own tool chain (torch-to-nnef, q4_0 weights),
    # from tract's regression cases when they are beside the checkout.
    conv = os.path.join(args.harness, "conv-q40", "conv2d")
    if os.path.isdir(conv):
        io = np.load(os.path.join(conv, "io.npz"))
        io["input_0"].astype(np.float32).tofile(f"{data}/conv.in")
        io["output_0"].astype(np.float32).tofile(f"{data}/conv.out")
        cases.append([os.path.join(conv, "model.nnef.tgz"), "-",
                      f"{data}/conv.in",
                      ",".join(str(d) for d in io["input_0"].shape),
                      f"{data}/conv.out", "1e-3", "1e-2"])
    else:
        print("note: no tract regression cases at %s; the archive of "
              "tract's tool chain is left out" % args.harness)

    # The project, through find_package.
    project = os.path.join(args.out, "project")
    run(["cmake", "-S", HERE, "-B", project, "-G", "Ninja",
         "-DCMAKE_PREFIX_PATH=" + prefix, "-DCMAKE_BUILD_TYPE=Release"],
        stdout=subprocess.DEVNULL)
    run(["cmake", "--build", project], stdout=subprocess.DEVNULL)
    # The C program again, with pkg-config's flags alone.
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib",
                                                        "pkgconfig"))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "tract"],
                           env=env, check=True, capture_output=True,
                           text=True).stdout.split()
    pkg_consumer = os.path.join(args.out, "consumer_pkgconfig")
    run(["cc", "-O2", os.path.join(HERE, "consumer.c"), "-o", pkg_consumer]
        + flags + ["-Wl,-rpath," + os.path.join(prefix, "lib"), "-lm"])

    failures = 0
    for program in [os.path.join(project, "consumer_c"),
                    os.path.join(project, "consumer_cpp"), pkg_consumer]:
        for case in cases:
            proc = subprocess.run([program] + case, capture_output=True,
                                  text=True)
            name = "%s %s" % (os.path.basename(program),
                              os.path.basename(case[0]))
            if proc.returncode != 0:
                failures += 1
                print("FAIL %s: exit %d\n%s%s" % (name, proc.returncode,
                                                  proc.stdout, proc.stderr))
            else:
                last = proc.stdout.strip().splitlines()
                print("ok   %s: %s" % (name, "; ".join(last[-2:])))

    # The Python package, from the prefix alone.
    site = os.path.join(prefix, "lib", "python3", "dist-packages")
    script = (
        "import numpy as np, tract_mlir, sys\n"
        "assert tract_mlir.__file__.startswith(sys.argv[1]), "
        "tract_mlir.__file__\n"
        "ref = np.load(sys.argv[2])\n"
        "out = tract_mlir.onnx().load(sys.argv[3]).into_runnable()"
        ".run([ref['input']])\n"
        "np.testing.assert_allclose(out[0], ref['logits'], atol=1e-4, "
        "rtol=1e-3)\n"
        "print('python: logits match, from', tract_mlir.__file__)\n")
    proc = subprocess.run(
        ["/usr/bin/python3", "-c", script, site,
         os.path.join(ROOT, "test/onnx/reference/mobilenet_v2.npz"),
         os.path.join(args.models, "mobilenet_v2.onnx")],
        env=dict(os.environ, PYTHONPATH=site, PYTHONNOUSERSITE="1"),
        capture_output=True, text=True, cwd=args.out)
    if proc.returncode != 0:
        failures += 1
        print("FAIL python: %s%s" % (proc.stdout, proc.stderr[-2000:]))
    else:
        print("ok   " + proc.stdout.strip())
    failures += api_examples(args, prefix, flags, site)
    sys.exit(1 if failures else 0)


def api_examples(args, prefix, flags, site):
    """examples/api in C, C++ and Python on a synthesized speech clip."""
    examples = os.path.join(ROOT, "examples", "api")
    clip = os.path.join(args.out, "speech.wav")
    run([os.path.join(ROOT, "scripts", "make-speech-clip.sh"), clip],
        stdout=subprocess.DEVNULL)
    rpath = "-Wl,-rpath," + os.path.join(prefix, "lib")
    vad_c = os.path.join(args.out, "vad_c")
    vad_cpp = os.path.join(args.out, "vad_cpp")
    run(["cc", "-O2", os.path.join(examples, "vad.c"), "-o", vad_c] + flags
        + [rpath])
    run(["c++", "-std=c++17", "-O2", os.path.join(examples, "vad.cpp"), "-o",
         vad_cpp] + flags + [rpath])
    model = os.path.join(args.models, "silero_vad_v5.onnx")
    outputs = {}
    failures = 0
    for name, command, env in [
            ("C", [vad_c, model, clip], None),
            ("C++", [vad_cpp, model, clip], None),
            ("Python", ["/usr/bin/python3", os.path.join(examples, "vad.py"),
                        model, clip],
             dict(os.environ, PYTHONPATH=site, PYTHONNOUSERSITE="1"))]:
        proc = subprocess.run(command, capture_output=True, text=True,
                              env=env)
        if proc.returncode != 0:
            failures += 1
            print("FAIL vad %s: exit %d: %s" % (name, proc.returncode,
                                               proc.stderr[-1000:]))
            continue
        outputs[name] = proc.stdout
    if len(set(outputs.values())) > 1:
        failures += 1
        print("FAIL vad: the programs disagree: %r" % outputs)
    if outputs:
        segments = os.path.join(args.out, "vad.txt")
        with open(segments, "w") as f:
            f.write(next(iter(outputs.values())))
        proc = subprocess.run(
            ["/usr/bin/python3",
             os.path.join(ROOT, "examples", "silero-vad", "check_segments.py"),
             clip[:-len(".wav")] + ".spans", segments],
            capture_output=True, text=True)
        print(("ok   vad (%s): " % ", ".join(outputs) if proc.returncode == 0
               else "FAIL vad: ") + proc.stdout.strip())
        failures += proc.returncode != 0
    return failures


if __name__ == "__main__":
    main()
