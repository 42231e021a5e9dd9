#!/usr/bin/env python3
"""Writes the models of the mapped-weights test (frontends/onnx/
mapped-weights.test) into OUT_DIR: a gather from an embedding table and a
product with a weight matrix, both of at least 1 MiB of f32 (the size from
which the importer maps weights from the file rather than copying them),
as one file (embedded.onnx, the weights as raw data inside it, at offsets
that are not multiples of 4) and with external data (external.onnx and
external.data, the second weight at an odd offset), and io.npz: the
inputs and numpy's outputs.

  y = gather(table, ids) @ w + b    (b small: a copied constant)
"""
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

VOCAB, HIDDEN, OUT = 600, 512, 544


def build(rng):
    table = rng.normal(size=(VOCAB, HIDDEN)).astype(np.float32)
    w = (rng.normal(size=(HIDDEN, OUT)) / np.sqrt(HIDDEN)).astype(np.float32)
    b = rng.normal(size=OUT).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "ids"], ["rows"], axis=0),
         helper.make_node("MatMul", ["rows", "w"], ["product"]),
         helper.make_node("Add", ["product", "b"], ["y"])],
        "mapped",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["N"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", OUT])],
        # A short name first, so that the tables' raw data is not aligned.
        initializer=[numpy_helper.from_array(b, "b"),
                     numpy_helper.from_array(table, "table"),
                     numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    ids = rng.integers(0, VOCAB, size=7).astype(np.int64)
    return model, {"ids": ids}, {"y": table[ids] @ w + b}


def external(model, out):
    """`model` with its two large weights in external.data, the second at
    an odd offset."""
    data = bytearray()
    for tensor in model.graph.initializer:
        if tensor.name == "b":
            continue
        if data:
            data += b"\0" * 3
        offset = len(data)
        data += tensor.raw_data
        tensor.ClearField("raw_data")
        tensor.data_location = TensorProto.EXTERNAL
        for key, value in (("location", "external.data"),
                           ("offset", str(offset)),
                           ("length", str(len(tensor.raw_data) or
                                          len(data) - offset))):
            entry = tensor.external_data.add()
            entry.key, entry.value = key, value
    (out / "external.data").write_bytes(bytes(data))
    return model


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    model, inputs, outputs = build(np.random.default_rng(5))
    (out / "embedded.onnx").write_bytes(model.SerializeToString())
    ext = onnx.ModelProto()
    ext.CopyFrom(model)
    (out / "external.onnx").write_bytes(external(ext, out).SerializeToString())
    np.savez(out / "io.npz", **inputs, **outputs)


if __name__ == "__main__":
    main()
