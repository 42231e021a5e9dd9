#!/usr/bin/env python3
"""Writes one-node ONNX ConvTranspose models and their outputs from torch.

Usage: make_deconv.py OUTPUT_DIR. For each case NAME, writes NAME.onnx and
NAME.npz (input "x" and output "y", torch's conv_transpose on the same
weights), for the deconvolution tests of the lowering.
"""
import os
import sys

import numpy as np
import torch
from onnx import TensorProto, helper, numpy_helper

# name: (input shape, output channels, kernel, strides, pads, group, bias)
CASES = {
    # Kernel = stride: each input pixel writes its own output block.
    "blocks2d": ([1, 4, 3, 5], 3, [2, 2], [2, 2], [0, 0, 0, 0], 1, True),
    "blocks1d": ([2, 3, 7], 2, [3], [3], [0, 0], 1, False),
    "blocks3d": ([1, 2, 2, 3, 2], 2, [2, 1, 3], [2, 1, 3], [0] * 6, 1, True),
    "blocks2d_pads": ([1, 2, 4, 4], 3, [2, 2], [2, 2], [1, 0, 0, 1], 1, True),
    # Overlapping windows and groups: the convolution of the spread input.
    "overlap2d": ([1, 4, 3, 5], 3, [3, 3], [2, 2], [1, 1, 1, 1], 1, True),
    "groups2d": ([1, 4, 3, 3], 4, [2, 2], [2, 2], [0, 0, 0, 0], 2, False),
}


def write(directory, name, shape, outputs, kernel, strides, pads, group, bias):
    rng = np.random.default_rng(len(name))
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal([shape[1], outputs // group] + kernel).astype(np.float32)
    b = rng.standard_normal([outputs]).astype(np.float32) if bias else None
    rank = len(kernel)
    conv = [torch.nn.functional.conv_transpose1d,
            torch.nn.functional.conv_transpose2d,
            torch.nn.functional.conv_transpose3d][rank - 1]
    full = conv(torch.from_numpy(x), torch.from_numpy(w),
                None if b is None else torch.from_numpy(b),
                stride=strides, groups=group).numpy()
    # ONNX pads crop the full result, begins then ends.
    crop = tuple([slice(None)] * 2 + [
        slice(pads[i], full.shape[2 + i] - pads[rank + i]) for i in range(rank)])
    y = full[crop]
    inits = [numpy_helper.from_array(w, "w")]
    inputs = ["x", "w"]
    if b is not None:
        inits.append(numpy_helper.from_array(b, "b"))
        inputs.append("b")
    node = helper.make_node("ConvTranspose", inputs, ["y"], kernel_shape=kernel,
                            strides=strides, pads=pads, group=group)
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y.shape))],
        inits)
    model = helper.make_model(graph, ir_version=8,
                              opset_imports=[helper.make_opsetid("", 17)])
    with open(os.path.join(directory, name + ".onnx"), "wb") as out:
        out.write(model.SerializeToString())
    np.savez(os.path.join(directory, name + ".npz"), x=x, y=y)


def main():
    directory = sys.argv[1]
    os.makedirs(directory, exist_ok=True)
    for name, case in CASES.items():
        write(directory, name, *case)


if __name__ == "__main__":
    main()
