"""Fixtures of the tract_mlir tests: the repository's models, their
onnxruntime reference bundles, and the runnables several tests share (each
compiled once per session: compiling is most of the suite's time).

tract_mlir comes from PYTHONPATH (CTest points it at the build's python/
folder); TRACT_MODELS_DIR overrides the models' folder (models/, which
scripts/fetch-models.sh fills).
"""
import os
import sys

import numpy as np
import pytest

import tract_mlir

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODELS = os.environ.get("TRACT_MODELS_DIR", os.path.join(ROOT, "models"))
REFERENCES = os.path.join(ROOT, "test", "onnx", "reference")
TINY = os.path.join(ROOT, "examples", "tiny", "model.mlir")

sys.path.insert(0, os.path.join(ROOT, "scripts", "reference-outputs"))
from make_references import read_hashes, sha256  # noqa: E402

# tract's `approximate` for f32 (docs/development.md), as the real-model
# tests through the CLI use it (test/onnx/run_real_models.py).
APPROXIMATE = dict(atol=1e-4, rtol=5e-4)


def model_path(name):
    """A real model, checked against the file its reference was made from."""
    path = os.path.join(MODELS, name)
    if not os.path.exists(path):
        pytest.fail("%s is missing (scripts/fetch-models.sh fetches it)"
                    % path)
    if read_hashes(os.path.join(REFERENCES, "models.sha256")).get(name) \
            != sha256(path):
        pytest.fail("%s is not the model file the references were made from "
                    "(test/onnx/reference/models.sha256)" % path)
    return path


def reference(stem):
    """The onnxruntime bundle: inputs and outputs under the model's names."""
    return np.load(os.path.join(REFERENCES, stem + ".npz"))


@pytest.fixture(scope="session")
def silero_v5():
    """Silero VAD v5 compiled without facts: its input shapes are symbols
    and its sample rate an input, so that both branches of its If are
    compiled and one runnable takes 512- and 576-sample windows."""
    return tract_mlir.onnx().load(model_path("silero_vad_v5.onnx")) \
        .into_runnable(threads=1)


@pytest.fixture(scope="session")
def tiny_pulsed():
    """examples/tiny/model.mlir (1,S,4 in and out, no delay) streamed by
    pulses of 8 frames."""
    return tract_mlir.load(TINY).pulse("S", 8).into_runnable(threads=1)


@pytest.fixture(scope="session")
def tiny():
    return tract_mlir.load(TINY).into_runnable(threads=1)
