"""Writes erf.onnx (one Erf node) and erf.npz (x over [-6, 6] and libm's
erf of it, rounded to f32) into the folder given."""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
x = np.linspace(-6, 6, 200001).astype(np.float32).reshape(1, -1)
y = np.array([math.erf(float(v)) for v in x.ravel()],
             dtype=np.float32).reshape(x.shape)
graph = helper.make_graph(
    [helper.make_node("Erf", ["x"], ["y"])], "erf",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(x.shape))])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
          os.path.join(out, "erf.onnx"))
np.savez(os.path.join(out, "erf.npz"), x=x, y=y)
