"""Failures are tract_mlir.TractError (a RuntimeError) with the library's
message, which names the file, the model element or the input."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tract_mlir
from conftest import TINY

HERE = os.path.dirname(os.path.abspath(__file__))


def test_the_error_is_a_runtime_error():
    assert issubclass(tract_mlir.TractError, RuntimeError)
    assert tract_mlir.TractError.__module__ == "tract_mlir"


def test_a_missing_file_is_named(tmp_path):
    missing = str(tmp_path / "missing.nnef.tgz")
    with pytest.raises(tract_mlir.TractError, match="missing.nnef.tgz"):
        tract_mlir.nnef().load(missing)
    with pytest.raises(tract_mlir.TractError, match="missing.onnx"):
        tract_mlir.load(tmp_path / "missing.onnx")
    # tract_onnx_load reads the file when the model is first used (its
    # facts may come before): the error comes there.
    with pytest.raises(tract_mlir.TractError, match="missing.onnx"):
        tract_mlir.onnx().load(tmp_path / "missing.onnx").input_count()


def test_a_corrupt_file_is_named(tmp_path):
    corrupt = tmp_path / "corrupt.onnx"
    corrupt.write_bytes(b"\x08\x07not a protobuf" * 8)
    with pytest.raises(tract_mlir.TractError,
                       match="corrupt.onnx.*is not a valid ONNX model"):
        tract_mlir.load(corrupt).input_count()
    with pytest.raises(tract_mlir.TractError, match="not a tar archive"):
        tract_mlir.nnef().load_bytes(b"not an archive" * 64)
    with pytest.raises(tract_mlir.TractError,
                       match="the ONNX model in memory.*not a valid ONNX"):
        tract_mlir.onnx().load_bytes(b"\x08\x07not a protobuf" * 8) \
            .input_count()
    unknown = tmp_path / "model.txt"
    unknown.write_text("not a model")
    with pytest.raises(tract_mlir.TractError,
                       match="cannot tell the format of .*model.txt"):
        tract_mlir.load(unknown)


def test_a_bad_transform_is_named():
    with pytest.raises(tract_mlir.TractError, match="transform 'bogus'"):
        tract_mlir.load(TINY).transform("bogus")
    with pytest.raises(tract_mlir.TractError, match="no input streams over T"):
        tract_mlir.load(TINY).pulse("T", 8)


def test_wrong_input_count_names_the_inputs(silero_v5):
    window = np.zeros((1, 512), np.float32)
    with pytest.raises(tract_mlir.TractError,
                       match=r"takes 3 inputs \(input, state, sr\), 1 given"):
        silero_v5.run([window])


def test_wrong_dtype_names_the_input(silero_v5):
    state = np.zeros((2, 1, 128), np.float32)
    rate = np.array(16000, np.int64)
    with pytest.raises(tract_mlir.TractError,
                       match="input 'input' is 1,512,F64, the model expects"):
        silero_v5.run([np.zeros((1, 512)), state, rate])
    with pytest.raises(tract_mlir.TractError,
                       match=r"input 1 \('state'\) has the numpy type "
                             "complex64"):
        silero_v5.run([np.zeros((1, 512), np.float32),
                       state.astype(np.complex64), rate])


def test_wrong_shape_names_the_input(silero_v5):
    with pytest.raises(tract_mlir.TractError,
                       match="input 'state' is 2,1,64, the model expects "
                             "2,unk__2,128"):
        silero_v5.run([np.zeros((1, 512), np.float32),
                       np.zeros((2, 1, 64), np.float32),
                       np.array(16000, np.int64)])


def test_an_array_is_not_a_list_of_inputs(tiny):
    with pytest.raises(tract_mlir.TractError, match="a list of arrays"):
        tiny.run(np.zeros((1, 8, 4), np.float32))
    with pytest.raises(tract_mlir.TractError, match="input 0.*not an array"):
        tiny.run([[[1.0], [1.0, 2.0]]])


def test_the_hostile_corpus_raises_and_never_crashes(tmp_path):
    # In a process of its own: a crash is then a signal naming the case.
    proc = subprocess.run(
        [sys.executable, os.path.join(HERE, "hostile_corpus.py"),
         str(tmp_path)], capture_output=True, text=True, timeout=300)
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0, "exit %d after:\n%s\n%s" % (
        proc.returncode, "\n".join(lines[-5:]), proc.stderr[-2000:])
    assert sum(line.startswith("ok ") for line in lines) >= 23, proc.stdout
