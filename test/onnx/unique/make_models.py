#!/usr/bin/env python3
"""Development script: writes the Unique models of
test/frontends/onnx/unique.test, larger than the ONNX node tests' (many
repeated values, rows along an inner axis, integers and floats, sorted or in
order of appearance, symbolic dims), with onnxruntime's outputs.
"""
import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper

# name: (element type, input shape, axis or None, sorted)
CASES = {
    "unique_int_unsorted": (TensorProto.INT64, (40,), None, 0),
    "unique_float_rows_sorted": (TensorProto.FLOAT, (3, 12, 2), 1, 1),
    "unique_int_last_axis_sorted": (TensorProto.INT64, (2, 3, 30), -1, 1),
}


def build(name, elem, shape, axis, sorted_):
    attributes = {"sorted": sorted_}
    if axis is not None:
        attributes["axis"] = axis
    node = helper.make_node("Unique", ["x"],
                            ["y", "indices", "inverse", "counts"],
                            **attributes)
    # Symbolic dims but along the last axis: the slices merge into one dim
    # and split back into symbolic ones.
    dims = list(shape) if axis == -1 else \
        ["D%d" % i for i in range(len(shape))]
    graph = helper.make_graph(
        [node], name, [helper.make_tensor_value_info("x", elem, dims)],
        [helper.make_tensor_value_info("y", elem, None),
         helper.make_tensor_value_info("indices", TensorProto.INT64, None),
         helper.make_tensor_value_info("inverse", TensorProto.INT64, None),
         helper.make_tensor_value_info("counts", TensorProto.INT64, None)])
    return helper.make_model(graph,
                             opset_imports=[helper.make_opsetid("", 11)])


SEED = 11


def cases(rng):
    types = {TensorProto.INT64: np.int64, TensorProto.INT32: np.int32,
             TensorProto.FLOAT: np.float32}
    for name, (elem, shape, axis, sorted_) in CASES.items():
        # Few distinct values, negative ones too, so that rows repeat.
        x = (rng.integers(-3, 3, size=shape) * 0.5).astype(types[elem]) \
            if elem == TensorProto.FLOAT else \
            rng.integers(-4, 4, size=shape).astype(types[elem])
        if axis is not None:
            # Repeat some whole slices along the axis.
            a = axis % len(shape)
            picks = rng.integers(0, shape[a] // 2, size=shape[a] // 2)
            index = [slice(None)] * len(shape)
            source = list(index)
            index[a] = slice(shape[a] // 2, shape[a] // 2 + len(picks))
            source[a] = picks
            x[tuple(index)] = x[tuple(source)]
        yield name, build(name, elem, shape, axis, sorted_), {"x": x}


if __name__ == "__main__":
    # Options, onnxruntime and the bundles as for the real models' references.
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts" /
                           "reference-outputs"))
    from make_references import write_cases
    write_cases(__doc__, SEED, cases, __file__)
