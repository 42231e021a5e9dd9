#!/usr/bin/env python3
"""The Silero VAD example (examples/silero-vad) on every target: Silero VAD
v5 compiled by `tract compile` for the host and for each of aarch64, armv7
and wasm32, linked with the example program and that target's runtime, and
run over the espeak-ng clip of the main job (under qemu-user or Node's
WASI). The host's segments must cover the clip's speech
(check_segments.py), and every target must print exactly the host's
segments. Prints each target's summary line: its milliseconds per window
are indicative only under an emulator.

Exits 77 (skipped) when a target's compiler or runner is missing.
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import cross  # noqa: E402

EXAMPLE = os.path.join(ROOT, "examples", "silero-vad")
FACTS = ["-i", "input:1,576,f32", "-i", "state:2,1,128,f32",
         "-i", "sr:i64=16000"]


def run(command, **kwargs):
    proc = subprocess.run(command, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, **kwargs)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout.decode(errors="replace") +
                         proc.stderr.decode(errors="replace"))
        raise SystemExit("failed (%d): %s" % (proc.returncode,
                                              " ".join(command)))
    return proc.stdout.decode()


def segments(output):
    return [line for line in output.splitlines() if line.startswith("speech ")]


def summary(output):
    return output.strip().splitlines()[-1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tract", required=True)
    parser.add_argument("--runtime", required=True,
                        help="the host's libtract_runtime.a")
    parser.add_argument("--targets-dir", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--targets", default=",".join(cross.TARGETS))
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    clip = os.path.join(args.work, "speech.wav")
    run([os.path.join(ROOT, "scripts", "make-speech-clip.sh"), clip])

    def compile_for(target, here):
        os.makedirs(here, exist_ok=True)
        run([args.tract] + FACTS + [args.model, "compile",
            "-o", os.path.join(here, "silero.o"),
            "--header", os.path.join(here, "silero.h"), "--name", "silero"] +
            (["--target", target] if target else []))

    host = os.path.join(args.work, "host")
    compile_for(None, host)
    run(["cc", "-std=c11", "-O2", "-I" + cross.RUNTIME_INCLUDE, "-I" + host,
         os.path.join(EXAMPLE, "main.c"), os.path.join(EXAMPLE, "vad.c"),
         os.path.join(host, "silero.o"),
         args.runtime, "-lm", "-o", os.path.join(host, "silero-vad")])
    expected = run([os.path.join(host, "silero-vad"), clip])
    with open(os.path.join(host, "segments.txt"), "w") as f:
        f.write(expected)
    run([sys.executable, os.path.join(EXAMPLE, "check_segments.py"),
         os.path.splitext(clip)[0] + ".spans",
         os.path.join(host, "segments.txt")])
    print("host: %s" % summary(expected))
    for line in segments(expected):
        print("  " + line)

    failed = skipped = False
    for target in [t for t in args.targets.split(",") if t]:
        reason = cross.missing(args.targets_dir, target)
        if reason:
            print("%s: not run: %s" % (target, reason))
            skipped = True
            continue
        here = os.path.join(args.work, target)
        compile_for(target, here)
        program = os.path.join(here, "silero-vad" +
                               cross.TARGETS[target]["exe"])
        run(cross.cc_command(args.targets_dir, target,
                             [os.path.join(EXAMPLE, "main.c"),
                              os.path.join(EXAMPLE, "vad.c"),
                              os.path.join(here, "silero.o")],
                             program, includes=[here]))
        output = run(cross.run_command(target, program, [clip]))
        same = segments(output) == segments(expected)
        print("%s: %s: %s" % (target, "same segments" if same else
                              "DIFFERENT segments", summary(output)))
        if not same:
            for line in segments(output):
                print("  " + line)
            failed = True
    if failed:
        return 1
    return 77 if skipped else 0


if __name__ == "__main__":
    sys.exit(main())
