"""tract_mlir: load an ONNX or NNEF model, give it facts, transform it,
compile it in process and run it on numpy arrays, or stream it.

    import numpy as np, tract_mlir
    runnable = tract_mlir.onnx().load("mobilenet_v2.onnx").into_runnable()
    logits, = runnable.run([np.zeros((1, 3, 224, 224), np.float32)])

The life cycle is tract's (its Python package `tract`): nnef() or onnx()
load a Model; set_input_fact, concretize_symbols, transform, declutter and
pulse change it (and return it); into_runnable() compiles it to a Runnable,
whose run() takes and returns lists of arrays, and whose spawn_state() makes
a State that streams a pulsed or stateful model step by step.

Arrays cross without copies where they can: an input that is C-contiguous,
aligned, in native byte order and of a type tract knows (bool, int8-64,
uint8-64, float16, float32, float64) is read in place during the call, and
each output is an array over the library's result, which it keeps alive.
Failures raise TractError (a RuntimeError) with the library's message,
which names the file, the model element or the input.

Threads: a Runnable runs from any number of threads at once (the GIL is
released while it runs), and each thread may stream its own State; a Model
or a State serves one thread at a time (they lock themselves).
"""

from ._tract_mlir import (Model, Nnef, Onnx, Runnable, State, TractError,
                          load, version)

__all__ = ["Model", "Nnef", "Onnx", "Runnable", "State", "TractError",
           "load", "nnef", "onnx", "version"]

# Shown as tract_mlir.Model..., where users import them from.
for _exported in (Model, Nnef, Onnx, Runnable, State, TractError):
    _exported.__module__ = __name__
del _exported


def nnef():
    """The NNEF reader and writer: .load(path), .load_bytes(data),
    .write_model_to_tar(path, model)."""
    return Nnef()


def onnx():
    """The ONNX reader: .load(path), .load_bytes(data)."""
    return Onnx()
