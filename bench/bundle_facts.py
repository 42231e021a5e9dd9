#!/usr/bin/env python3
"""Prints tract's input facts for a model from the inputs of a bundle, for
scripts/bench.sh: one fact per line, in the model's input order, so that
tract compiles for the very shapes onnxruntime is given.

  bundle_facts.py MODEL.onnx BUNDLE.npz [NAME:FACT...]   facts, one a line
  bundle_facts.py --describe MODEL.onnx BUNDLE.npz       "1x3x224x224" etc.

Facts are positional (`1,3,224,224,f32`), since input names may hold ':'
(`input:0`), which tract's named facts cannot spell. An input that an extra
NAME:FACT gives (`sr:i64=16000`, a constant) gets an empty fact, which keeps
the positions of the others, and the extra fact follows by name.
"""
import sys

import numpy as np
import onnx

DTYPES = {"float32": "f32", "float64": "f64", "float16": "f16",
          "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8",
          "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
          "bool": "bool"}


def model_inputs(path):
    # Skip graph inputs that are initializers (old exporters list weights).
    graph = onnx.load(path, load_external_data=False).graph
    weights = {tensor.name for tensor in graph.initializer}
    return [value.name for value in graph.input if value.name not in weights]


def main(argv):
    describe = argv[:1] == ["--describe"]
    if describe:
        argv = argv[1:]
    if len(argv) < 2:
        sys.exit(__doc__)
    model, bundle, extras = argv[0], argv[1], argv[2:]
    given = {extra.split(":", 1)[0] for extra in extras}
    tensors = np.load(bundle)
    lines, shapes = [], []
    for name in model_inputs(model):
        if name in given:
            lines.append("")
            continue
        if name not in tensors.files:
            sys.exit("bundle_facts: %s has no input '%s'" % (bundle, name))
        array = tensors[name]
        lines.append(",".join([str(d) for d in array.shape] +
                              [DTYPES[array.dtype.name]]))
        shapes.append("x".join(str(d) for d in array.shape) or "scalar")
    if describe:
        print(" ".join(shapes))
    else:
        print("\n".join(lines + extras))


if __name__ == "__main__":
    main(sys.argv[1:])
