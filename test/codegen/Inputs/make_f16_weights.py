#!/usr/bin/python3
"""An ONNX model stored with f16 weights: x (1, S, 512) f32 times a 512 x 144
f16 initializer cast to f32 (too large for the import to fold the cast),
with numpy's product in io.npz (S = 5, a decoding step's rows) and
io_prompt.npz (S = 40, a prompt's)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(7)
weights = (rng.standard_normal((512, 144)) * 0.05).astype(np.float16)
graph = helper.make_graph(
    [helper.make_node("Cast", ["w"], ["w32"], to=TensorProto.FLOAT),
     helper.make_node("MatMul", ["x", "w32"], ["y"])],
    "f16_weights",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "S", 512])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "S", 144])],
    [numpy_helper.from_array(weights, "w")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.save(model, os.path.join(out, "model.onnx"))
for name, rows in (("io.npz", 5), ("io_prompt.npz", 40)):
    x = rng.standard_normal((1, rows, 512)).astype(np.float32)
    y = (x.astype(np.float64) @ weights.astype(np.float64)).astype(np.float32)
    np.savez(os.path.join(out, name), x=x, y=y)
