#!/usr/bin/env python3
"""Writes input bundles at sizes larger than the test references, with
onnxruntime's outputs, for the benchmark: a real model on a realistic
input is where threads pay (the references are small to keep the tests
fast).

Usage: make_large_bundles.py --models DIR --node-path NODE_MODULES --out DIR NAME...

NAME is one of the large variants below; each writes OUT/NAME.npz with the
model's inputs and onnxruntime's outputs under their names.
"""
import argparse
import os
import sys
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts", "reference-outputs"))
import make_references  # noqa: E402

# NAME: (model file, inputs from a seeded generator)
VARIANTS = {
    # A page-sized crop, as PaddleOCR's own pipeline feeds its detector.
    "ppocr_det_640": ("ppocr_det.onnx", lambda rng: {
        "x": make_references.ocr_detection(
            rng, 640, 640, ["tract MLIR", "threads", "ONNX 17"], 8)}),
}


def main():
    parser = argparse.ArgumentParser()
    make_references.add_bundle_arguments(parser)
    parser.add_argument("names", nargs="+")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.names:
        if name not in VARIANTS:
            sys.exit("make_large_bundles: unknown %s; known: %s"
                     % (name, ", ".join(VARIANTS)))
        model_file, make_inputs = VARIANTS[name]
        model = os.path.join(args.models, model_file)
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        inputs = make_inputs(rng)
        outputs = make_references.run_onnxruntime(args.node_path, model,
                                                  inputs)
        make_references.write_npz(os.path.join(args.out, name + ".npz"),
                                  {**inputs, **outputs})
        print("%s: %s" % (name, ", ".join(
            "%s %s" % (k, "x".join(map(str, v.shape)))
            for k, v in list(inputs.items()) + list(outputs.items()))))


if __name__ == "__main__":
    main()
