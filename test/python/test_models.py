"""Real models through tract_mlir against onnxruntime's reference outputs
(test/onnx/reference), within tract's `approximate` tolerance for f32
(atol 1e-4, rtol 5e-4): tract's life cycle in one line, for ONNX and NNEF."""
import numpy as np

import tract_mlir
from conftest import APPROXIMATE, model_path, reference


def test_mobilenet_v2_in_one_line_on_two_threads():
    # No facts: the input's shape gives the batch B. Two threads: the
    # compiled code calls LLVM's OpenMP runtime, which the JIT must find in
    # the Python process (tract_mlir/__init__.py).
    ref = reference("mobilenet_v2")
    logits, = tract_mlir.onnx().load(model_path("mobilenet_v2.onnx")) \
        .into_runnable(threads=2).run([ref["input"]])
    assert logits.shape == (1, 1000) and logits.dtype == np.float32
    np.testing.assert_allclose(logits, ref["logits"], **APPROXIMATE)


def test_silero_vad_v5_without_facts(silero_v5):
    # The 16 kHz bundle (512 samples) and the 8 kHz one (256 samples, the
    # If's other branch) through the same runnable.
    for stem in ["silero_vad_v5", "silero_vad_v5.8k"]:
        ref = reference(stem)
        output, state = silero_v5.run([ref["input"], ref["state"], ref["sr"]])
        np.testing.assert_allclose(output, ref["output"], **APPROXIMATE)
        np.testing.assert_allclose(state, ref["stateN"], **APPROXIMATE)


def test_silero_vad_v5_as_nnef_in_one_line(tmp_path):
    # Written by tract_mlir with the sample rate made a constant, read back
    # and run in one line.
    model = tract_mlir.onnx().load(model_path("silero_vad_v5.onnx"))
    model.set_input_fact("sr", "i64=16000")
    archive = tmp_path / "silero_vad_v5.nnef.tgz"
    tract_mlir.nnef().write_model_to_tar(archive, model)
    ref = reference("silero_vad_v5")
    output, state = tract_mlir.nnef().load(archive).into_runnable(threads=1) \
        .run([ref["input"], ref["state"]])
    np.testing.assert_allclose(output, ref["output"], **APPROXIMATE)
    np.testing.assert_allclose(state, ref["stateN"], **APPROXIMATE)

    # The same archive from memory.
    loaded = tract_mlir.nnef().load_bytes(archive.read_bytes())
    assert [loaded.input_name(i) for i in range(loaded.input_count())] == \
        ["input", "state"]


def test_onnx_from_bytes():
    with open(model_path("silero_vad_v5.onnx"), "rb") as f:
        model = tract_mlir.onnx().load_bytes(f.read())
    assert model.input_count() == 3
    assert [model.input_name(i) for i in range(3)] == ["input", "state", "sr"]
    assert [model.output_name(i) for i in range(2)] == ["output", "stateN"]
