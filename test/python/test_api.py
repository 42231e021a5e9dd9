"""The package's life cycle and its arrays: model queries and chains, every
dtype in and out, arrays lent without copies and outputs over the library's
buffers, profile, compile and NNEF export."""
import gc
import json
import pathlib
import sys

import numpy as np
import pytest
from onnx import TensorProto, helper

import tract_mlir
from conftest import TINY
from tract_mlir._tract_mlir import _lent_data_pointer as lent_data_pointer

DTYPES = {np.bool_: TensorProto.BOOL, np.uint8: TensorProto.UINT8,
          np.uint16: TensorProto.UINT16, np.uint32: TensorProto.UINT32,
          np.uint64: TensorProto.UINT64, np.int8: TensorProto.INT8,
          np.int16: TensorProto.INT16, np.int32: TensorProto.INT32,
          np.int64: TensorProto.INT64, np.float16: TensorProto.FLOAT16,
          np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE}


def frames(count, seed=0):
    return np.random.RandomState(seed).randn(1, count, 4).astype(np.float32)


def test_version():
    assert tract_mlir.version().startswith("tract-mlir ")


def test_model_queries_and_chains():
    model = tract_mlir.load(pathlib.Path(TINY))
    assert (model.input_count(), model.output_count()) == (1, 1)
    assert model.input_name(0) == "input_0"
    assert model.input_fact(0) == "1,S,4,f32"
    assert model.output_fact(0) == "1,S,4,f32"
    assert "func.func @main" in str(model) == model.dump_mlir()
    # Methods that change the model return it.
    assert model.add_assertion("S >= 1") is model
    assert model.declutter() is model
    assert model.into_optimized() is model
    assert model.transform("declutter") is model
    assert '"S >= 1"' in model.dump_mlir()
    # The output selected by an op's name.
    selected = tract_mlir.load(TINY).set_output_names(["affine.add"])
    assert selected.output_name(0) == "affine.add"


def test_the_model_stays_usable_after_into_runnable(tiny):
    model = tract_mlir.load(TINY)
    first = model.into_runnable(threads=1)
    model.concretize_symbols({"S": 3})
    second = model.into_runnable(threads=1)
    x = frames(3)
    np.testing.assert_array_equal(first.run([x])[0], second.run([x])[0])
    assert (second.input_count(), second.output_count()) == (1, 1)


def test_every_dtype_in_and_out():
    names = [np.dtype(t).name for t in DTYPES]
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x_" + n], ["y_" + n]) for n in names],
        "identities",
        [helper.make_tensor_value_info("x_" + n, t, [2, 3])
         for n, t in zip(names, DTYPES.values())],
        [helper.make_tensor_value_info("y_" + n, t, [2, 3])
         for n, t in zip(names, DTYPES.values())])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    runnable = tract_mlir.onnx().load_bytes(model.SerializeToString()) \
        .into_runnable(threads=1)
    inputs = [(np.arange(6).reshape(2, 3) % 2).astype(t) for t in DTYPES]
    # Each array is read in place: the library sees the array's own data.
    for array in inputs:
        assert lent_data_pointer(array) == array.ctypes.data
    outputs = runnable.run(inputs)
    for given, got in zip(inputs, outputs):
        assert got.dtype == given.dtype and got.shape == (2, 3)
        np.testing.assert_array_equal(got, given)


def test_inputs_are_lent_without_a_copy_when_they_can_be(tiny):
    x = frames(16)
    assert lent_data_pointer(x) == x.ctypes.data
    # A row of a C-contiguous array is contiguous too: still lent.
    rows = np.stack([x, x])
    assert lent_data_pointer(rows[1]) == rows[1].ctypes.data
    # A strided view, Fortran order and the other byte order are copied
    # (the copy lives for the call), and compute the same.
    strided = frames(32)[:, ::2]
    fortran = np.asfortranarray(x)
    swapped = x.astype(x.dtype.newbyteorder(">"))
    expected, = tiny.run([x])
    for array in (strided, fortran, swapped):
        assert lent_data_pointer(array) != array.ctypes.data
    np.testing.assert_array_equal(tiny.run([fortran])[0], expected)
    np.testing.assert_array_equal(tiny.run([swapped])[0], expected)
    np.testing.assert_array_equal(tiny.run([strided])[0],
                                  tiny.run([strided.copy()])[0])


def test_a_lent_input_is_not_kept_after_the_call(tiny):
    x = frames(8)
    before = sys.getrefcount(x)
    tiny.run([x])
    assert sys.getrefcount(x) == before


def test_outputs_are_views_of_the_library_values(tiny):
    y, = tiny.run([frames(8)])
    # Not numpy's memory: an array over the run's value, which its base (a
    # capsule) owns and frees with the array.
    assert not y.flags.owndata
    assert type(y.base).__name__ == "PyCapsule"
    assert y.flags.c_contiguous and y.flags.writeable
    # The array outlives the runnable and the model.
    runnable = tract_mlir.load(TINY).into_runnable(threads=1)
    z, = runnable.run([frames(8)])
    expected = z.copy()
    del runnable
    gc.collect()
    np.testing.assert_array_equal(z, expected)


def test_a_state_keeps_its_runnable_alive():
    state = tract_mlir.load(TINY).pulse("S", 8).into_runnable(threads=1) \
        .spawn_state()
    gc.collect()
    x = frames(8)
    out, = state.run([x])
    batch, = tract_mlir.load(TINY).into_runnable(threads=1).run([x])
    np.testing.assert_allclose(out, batch, rtol=1e-6, atol=1e-6)


def test_profile_json():
    profile = json.loads(tract_mlir.load(TINY).profile_json([frames(16)]))
    ops = [node["op"] for node in profile["nodes"]]
    assert "Source" in ops and len(ops) > 3


def test_compile_to_an_object_and_a_header(tmp_path):
    model = tract_mlir.load(TINY).concretize_symbols({"S": 8})
    model.compile(tmp_path / "tiny.o", header=tmp_path / "tiny.h")
    assert (tmp_path / "tiny.o").read_bytes()[:4] == b"\x7fELF"
    assert "tract_tensor" in (tmp_path / "tiny.h").read_text()
    with pytest.raises(tract_mlir.TractError):
        model.compile(tmp_path / "tiny.o", target="no-such-target")


def test_nnef_round_trip(tmp_path, tiny):
    archive = tmp_path / "tiny.nnef.tgz"
    tract_mlir.nnef().write_model_to_tar(archive, tract_mlir.load(TINY))
    x = frames(8)
    got, = tract_mlir.nnef().with_tract_core().load(str(archive)) \
        .into_runnable(threads=1).run([x])
    np.testing.assert_allclose(got, tiny.run([x])[0], rtol=1e-6, atol=1e-6)
    folder = tmp_path / "tiny.nnef"
    tract_mlir.nnef().write_model_to_dir(folder, tract_mlir.load(TINY))
    assert (folder / "graph.nnef").exists()
    assert tract_mlir.nnef().load(folder).input_count() == 1


def test_into_runnable_on_a_gpu_api(tiny):
    # Vulkan runs on lavapipe where there is no GPU, as the suite's other
    # Vulkan tests do.
    x = frames(16)
    model = tract_mlir.load(TINY)
    got, = model.into_runnable(threads=1, gpu="vulkan").run([x])
    np.testing.assert_allclose(got, tiny.run([x])[0], rtol=1e-5, atol=1e-6)
    with pytest.raises(tract_mlir.TractError, match="unknown GPU API 'nope'"):
        model.into_runnable(gpu="nope")
