#!/usr/bin/env python3
"""The hostile-input corpus of test/tools/hostile-inputs.test, loaded
through tract_mlir in this process: each file, from its path and from its
bytes, must raise TractError (never crash, never hang), and the message of
the path must name the file and the cause the CLI gives. The input mismatch
case runs the good model on the bundle's array instead.

Usage: hostile_corpus.py OUT_DIR   (prints one line per case; exits 1 on a
failure; run in a subprocess, so that a crash names the case it was in)
"""
import os
import sys

import numpy as np

import tract_mlir

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools", "Inputs"))
import hostile_inputs  # noqa: E402


def load_everything(model):
    """Imports the model (ONNX waits for the first use) and prints its IR."""
    model.input_count()
    model.dump_mlir()


def from_bytes(path):
    """The same file loaded from memory, by the reader of its format."""
    with open(path, "rb") as f:
        data = f.read()
    reader = tract_mlir.onnx() if path.endswith(".onnx") else tract_mlir.nnef()
    load_everything(reader.load_bytes(data))


def check_case(path, extra, expected):
    """'' when the case gives the expected TractError, else the problem."""
    name = os.path.basename(path)
    if extra:
        # `tract GOOD run --input-from-bundle BUNDLE`: numpy reads the bundle
        # here, tract_mlir runs the model on it.
        try:
            inputs = np.load(path)
            arrays = [inputs[key] for key in inputs.files]
        except Exception as error:  # numpy's own reader, not tract's
            return None, "numpy refuses the bundle (%s)" % type(error).__name__
        try:
            tract_mlir.load(extra[0]).into_runnable(threads=1).run(arrays)
        except tract_mlir.TractError as error:
            message = str(error)
            if expected not in message:
                return "expected '%s' in: %s" % (expected, message), None
            return "", message
        return "no error", None
    try:
        load_everything(tract_mlir.load(path))
    except tract_mlir.TractError as error:
        message = str(error).splitlines()[0]
    else:
        return "no error from the path", None
    if name not in message:
        return "the message does not name the file: %s" % message, None
    if expected not in message:
        return "expected '%s' in: %s" % (expected, message), None
    if os.path.isfile(path):
        try:
            from_bytes(path)
        except tract_mlir.TractError:
            pass
        else:
            return "no error from the bytes", None
    return "", message


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    failures = 0
    for path, extra, expected in hostile_inputs.cases(out):
        name = os.path.basename(path)
        print("...  %s" % name, flush=True)  # the case, should it crash
        problem, message = check_case(path, extra, expected)
        if problem is None:
            print("skip %s: %s" % (name, message), flush=True)
        elif problem:
            failures += 1
            print("FAIL %s: %s" % (name, problem), flush=True)
        else:
            print("ok   %s: %s" % (name, message), flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
