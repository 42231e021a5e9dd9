#!/usr/bin/python3
"""Pulsification of a DeepSpeech-like model exported by torch.

The model (scripts/make-deepspeech-model.py) has dynamic axes B and S:
BatchNorm1d(64), Conv1d(64->128, k=3, stride 2), ReLU, Conv1d(128->128,
k=5), ReLU, MaxPool1d(2), a 2-layer GRU of hidden 256, Linear. Checks:

* `tract --pulse S=8` records an output delay of 3 frames on axis 1. By
  hand: conv1 reaches 2 frames back, so its output frame j is complete with
  input frame 2j+2: delay (2+0)/2 = 1 output frame; conv2 reaches 4 more
  frames: delay 1+4 = 5; the pool reaches 1 frame back with stride 2: delay
  (1+5)/2 = 3, which the GRU and the linear layer keep.
* The streamed outputs, shifted by that delay, match torch's batch outputs
  at pulses 4, 8 and 12, for B=1 and B=2 and a stream length that is not a
  multiple of the pulse.
* The pulsed model written with `dump --nnef` (tract_pulse_delay, the
  scans' skip, the pulse properties) reloads and streams the same outputs.
* `--pulse 8`, without a symbol, streams over S (B is the other symbol).
* `--pulse S=6` is refused: the strides multiply to 4.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def run(command):
    return subprocess.run(command, capture_output=True, text=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tract", required=True)
    parser.add_argument("--script", required=True,
                        help="scripts/make-deepspeech-model.py")
    args = parser.parse_args()
    failures = []
    with tempfile.TemporaryDirectory() as work:
        model = os.path.join(work, "deepspeech.onnx")
        bundles = []
        for batch, frames in ((1, 100), (2, 77)):
            bundle = os.path.join(work, f"io-{batch}x{frames}.npz")
            made = run([sys.executable, args.script, model, bundle,
                        str(batch), str(frames)])
            if made.returncode != 0:
                print(made.stderr)
                return 1
            bundles.append(bundle)

        dump = run([args.tract, "--pulse", "S=8", model, "dump", "--mlir"])
        delay = re.search(r"pulse\.delay = \[([0-9, ]+)\]", dump.stdout)
        axes = re.search(r"pulse\.output_axes = \[([0-9, ]+)\]", dump.stdout)
        if dump.returncode != 0 or not delay or not axes:
            failures.append("dump --pulse S=8: no pulse properties\n" +
                            dump.stderr)
        elif delay.group(1) != "3" or axes.group(1) != "1":
            failures.append(f"delay {delay.group(1)} on axis {axes.group(1)},"
                            " expected 3 on axis 1")
        else:
            print("pulse S=8: output delay 3 on axis 1")

        def check_streaming(name, model_args, bundle):
            """Streams `bundle` through `tract MODEL_ARGS run` against its
            batch outputs."""
            result = run([args.tract, *model_args, "run",
                          "--input-from-bundle", bundle,
                          "--assert-output-bundle", bundle,
                          "--approx", "approximate"])
            if result.returncode != 0:
                failures.append(f"{name}: {result.stderr.strip()}")
            else:
                print(f"{name}: streamed outputs match the batch")

        for pulse in (4, 8, 12):
            for bundle in bundles:
                check_streaming(f"pulse {pulse}, {os.path.basename(bundle)}",
                                ["--pulse", f"S={pulse}", model], bundle)

        # Without a symbol, --pulse takes S, tract's streaming symbol.
        check_streaming("--pulse 8 (S by default)", ["--pulse", "8", model],
                        bundles[0])

        # The pulsed model written as NNEF (tract_pulse_* ops, the scans'
        # skip, the pulse properties) reloads and streams the same.
        archive = os.path.join(work, "pulsed.nnef.tgz")
        dumped = run([args.tract, "--pulse", "S=8", model, "dump", "--nnef",
                      archive])
        graph = run(["tar", "xzOf", archive, "graph.nnef"])
        if dumped.returncode != 0 or graph.returncode != 0:
            failures.append("dump --nnef of the pulsed model: " +
                            dumped.stderr.strip())
        elif "tract_pulse_delay(" not in graph.stdout or \
                '("pulse.delay", [3])' not in graph.stdout or \
                "skip = 3" not in graph.stdout:
            failures.append("the pulsed NNEF lacks tract_pulse_delay, the "
                            "delay property or the scans' skip")
        else:
            for bundle in bundles:
                check_streaming(
                    f"pulsed NNEF reloaded, {os.path.basename(bundle)}",
                    [archive], bundle)

        refused = run([args.tract, "--pulse", "S=6", model, "run",
                       "--input-from-bundle", bundles[0]])
        if refused.returncode == 0 or "not a multiple of 4" not in \
                refused.stderr:
            failures.append("pulse 6 was not refused naming 4: " +
                            refused.stderr.strip())
        else:
            print("pulse 6: " + refused.stderr.strip().splitlines()[-1])
    for failure in failures:
        print("FAIL: " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
