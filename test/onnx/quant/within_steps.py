#!/usr/bin/env python3
"""Checks a quantized model's outputs against a reference to whole
quantization steps: `tract MODEL run` on the bundle's inputs, then each
output named in --step NAME=SCALE (a float output dequantized from that
scale, or an integer output with SCALE 1) must be within --steps steps of
the bundle's everywhere, and exactly equal in at least --exact of its
elements. Prints the counts; exits 1 on a miss."""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tract", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--bundle", required=True)
    parser.add_argument("--step", action="append", required=True,
                        metavar="NAME=SCALE")
    parser.add_argument("--steps", type=int, default=1)
    parser.add_argument("--exact", type=float, default=0.9,
                        help="the share of elements that must be equal")
    args = parser.parse_args()
    bundle = np.load(args.bundle)
    with tempfile.TemporaryDirectory() as work:
        saved = os.path.join(work, "outputs.npz")
        subprocess.run([args.tract, args.model, "run", "--input-from-bundle",
                        args.bundle, "--save-outputs", saved], check=True,
                       stdout=subprocess.DEVNULL)
        outputs = np.load(saved)
        status = 0
        for spec in args.step:
            name, scale = spec.split("=")
            got = outputs[name].astype(np.float64)
            expected = bundle[name].astype(np.float64)
            steps = np.rint(np.abs(got - expected) / float(scale))
            equal = float((steps == 0).mean())
            worst = int(steps.max())
            ok = worst <= args.steps and equal >= args.exact
            print("%s: %d of %d equal (%.1f%%), at most %d step(s) apart: %s"
                  % (name, int((steps == 0).sum()), steps.size, 100 * equal,
                     worst, "ok" if ok else "MISS"))
            status |= 0 if ok else 1
    return status


if __name__ == "__main__":
    sys.exit(main())
