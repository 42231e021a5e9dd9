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
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cross  # noqa: E402
import silero  # noqa: E402
from silero import run, segments  # noqa: E402


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
    silero.make_clip(clip)
    host = os.path.join(args.work, "host")
    program = silero.native_example(args.tract, args.runtime, args.model,
                                    host, cross.RUNTIME_INCLUDE)
    expected = run([program, clip])
    with open(os.path.join(host, "segments.txt"), "w") as f:
        f.write(expected)
    run([sys.executable, os.path.join(silero.EXAMPLE, "check_segments.py"),
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
        silero.compile_model(args.tract, args.model, here, target)
        program = os.path.join(here, "silero-vad" +
                               cross.TARGETS[target]["exe"])
        run(cross.cc_command(args.targets_dir, target,
                             silero.SOURCES + [os.path.join(here, "silero.o")],
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
