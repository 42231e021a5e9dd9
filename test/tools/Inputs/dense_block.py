"""Writes a dense block (DenseNet's layout: each layer reads the
concatenation of the block's input and of all the earlier layers' outputs,
through a batch norm, a ReLU, a 1x1 and a 3x3 convolution) as ONNX, and an
.npz bundle with its input and its output computed with numpy.

Usage: dense_block.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

CHANNELS, GROWTH, LAYERS, SIDE = 8, 4, 3, 6


def conv(x, w, pad):
    """NCHW convolution, stride 1, in numpy."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    padded = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out = np.zeros((n, o, h, wd), np.float64)
    for dy in range(kh):
        for dx in range(kw):
            patch = padded[:, :, dy:dy + h, dx:dx + wd]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, dy, dx])
    return out


def main():
    out_dir = sys.argv[1]
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, CHANNELS, SIDE, SIDE)).astype(np.float32)
    nodes, inits = [], []
    features = ["x"]
    values = [x.astype(np.float64)]
    for i in range(LAYERS):
        width = CHANNELS + i * GROWTH
        name = f"l{i}"
        nodes.append(helper.make_node("Concat", features, [f"{name}_cat"],
                                      axis=1))
        scale = rng.uniform(0.5, 1.5, width).astype(np.float32)
        bias = rng.uniform(-0.5, 0.5, width).astype(np.float32)
        mean = rng.uniform(-0.2, 0.2, width).astype(np.float32)
        var = rng.uniform(0.5, 1.5, width).astype(np.float32)
        w1 = (rng.standard_normal((8, width, 1, 1)) * 0.3).astype(np.float32)
        w3 = (rng.standard_normal((GROWTH, 8, 3, 3)) * 0.3).astype(np.float32)
        for suffix, array in [("scale", scale), ("bias", bias), ("mean", mean),
                              ("var", var), ("w1", w1), ("w3", w3)]:
            inits.append(numpy_helper.from_array(array, f"{name}_{suffix}"))
        nodes += [
            helper.make_node("BatchNormalization",
                             [f"{name}_cat", f"{name}_scale", f"{name}_bias",
                              f"{name}_mean", f"{name}_var"],
                             [f"{name}_bn"], epsilon=1e-5),
            helper.make_node("Relu", [f"{name}_bn"], [f"{name}_r1"]),
            helper.make_node("Conv", [f"{name}_r1", f"{name}_w1"],
                             [f"{name}_c1"]),
            helper.make_node("Relu", [f"{name}_c1"], [f"{name}_r2"]),
            helper.make_node("Conv", [f"{name}_r2", f"{name}_w3"],
                             [f"{name}_out"], pads=[1, 1, 1, 1]),
        ]
        cat = np.concatenate(values, axis=1)
        bn = ((cat - mean[None, :, None, None]) /
              np.sqrt(var[None, :, None, None] + 1e-5) *
              scale[None, :, None, None] + bias[None, :, None, None])
        r2 = np.maximum(conv(np.maximum(bn, 0), w1.astype(np.float64), 0), 0)
        values.append(conv(r2, w3.astype(np.float64), 1))
        features.append(f"{name}_out")
    nodes.append(helper.make_node("Concat", features, ["y"], axis=1))
    width = CHANNELS + LAYERS * GROWTH
    graph = helper.make_graph(
        nodes, "dense_block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [1, CHANNELS, SIDE, SIDE])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       [1, width, SIDE, SIDE])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, os.path.join(out_dir, "dense_block.onnx"))
    y = np.concatenate(values, axis=1).astype(np.float32)
    np.savez(os.path.join(out_dir, "dense_block.npz"), x=x, y=y)


if __name__ == "__main__":
    main()
