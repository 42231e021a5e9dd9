#!/usr/bin/env python3
"""Writes one-node ONNX models and their outputs from other engines.

Usage: make_models.py OUTPUT_DIR. For each case NAME, writes NAME.onnx and
NAME.npz (input "x" and output "y"), for the lowering tests: ConvTranspose
against torch's conv_transpose on the same weights, Resize against onnx's
formulas (torch's nearest interpolation for the floor case), grouped Conv
and the dense 3×3 convolutions of tract-cpu-winograd against torch's
convolutions.
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


def save_conv(directory, name, op, x, w, b, y, **attributes):
    """Writes NAME.onnx, one `op` node on input x with weights w (and bias
    b, unless None), and NAME.npz with x and the expected y."""
    inits = [numpy_helper.from_array(w, "w")]
    inputs = ["x", "w"]
    if b is not None:
        inits.append(numpy_helper.from_array(b, "b"))
        inputs.append("b")
    node = helper.make_node(op, inputs, ["y"], **attributes)
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y.shape))],
        inits)
    model = helper.make_model(graph, ir_version=8,
                              opset_imports=[helper.make_opsetid("", 17)])
    with open(os.path.join(directory, name + ".onnx"), "wb") as out:
        out.write(model.SerializeToString())
    np.savez(os.path.join(directory, name + ".npz"), x=x, y=y)


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
    save_conv(directory, name, "ConvTranspose", x, w, b, y, kernel_shape=kernel,
              strides=strides, pads=pads, group=group)


# name: (input shape, scales, coordinate transformation, nearest mode)
RESIZES = {
    # Whole factors, asymmetric, floor: the input repeated.
    "upsample_floor": ([1, 2, 3, 4], [1, 1, 2, 3], "asymmetric", "floor"),
    "upsample_axis0": ([2, 3, 5], [3, 1, 2], "asymmetric", "floor"),
    # The same factors rounded otherwise: a gather.
    "upsample_round": ([1, 2, 3, 4], [1, 1, 2, 3], "asymmetric",
                       "round_prefer_floor"),
    "upsample_half_pixel": ([1, 2, 3, 4], [1, 1, 2, 2], "half_pixel", "floor"),
}


def write_resize(directory, name, shape, scales, transform, rounding):
    rng = np.random.default_rng(len(name))
    x = rng.standard_normal(shape).astype(np.float32)
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="nearest",
                            coordinate_transformation_mode=transform,
                            nearest_mode=rounding)
    out = [d * s for d, s in zip(shape, scales)]
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out)],
        [numpy_helper.from_array(np.array(scales, np.float32), "scales")])
    model = helper.make_model(graph, ir_version=8,
                              opset_imports=[helper.make_opsetid("", 13)])
    if transform == "asymmetric" and rounding == "floor":
        # torch's "nearest" is floor(x / scale), on the spatial axes only.
        y = torch.from_numpy(x)
        if scales[0] > 1:
            y = y.repeat_interleave(scales[0], dim=0)
        if scales[1] > 1:
            y = y.repeat_interleave(scales[1], dim=1)
        y = torch.nn.functional.interpolate(
            y, scale_factor=[float(s) for s in scales[2:]], mode="nearest")
        y = y.numpy()
    else:
        # ONNX's formulas, axis by axis.
        y = x
        for axis, s in enumerate(scales):
            o = np.arange(y.shape[axis] * s, dtype=np.float64)
            c = o / s if transform == "asymmetric" else (o + 0.5) / s - 0.5
            i = np.ceil(c - 0.5) if rounding == "round_prefer_floor" else np.floor(c)
            i = np.clip(i, 0, y.shape[axis] - 1).astype(np.int64)
            y = np.take(y, i, axis=axis)
    with open(os.path.join(directory, name + ".onnx"), "wb") as f:
        f.write(model.SerializeToString())
    np.savez(os.path.join(directory, name + ".npz"), x=x, y=y)


# name: (input shape, output channels, kernel, strides, dilations, pads,
#        group, bias): grouped convolutions, which run channels last with
# neighbouring groups merged up to a vector's width (tract-channels-last).
GROUPED = {
    # 4 outputs per group: four groups run as one on 16 lanes.
    "grouped4": ([1, 32, 9, 7], 32, [3, 3], [1, 1], [1, 1], [1, 1, 1, 1], 8,
                 True),
    # 8 per group, stride 2; 16 (one vector); 32 in 2 vectors, dilated.
    "grouped8_s2": ([1, 64, 11, 10], 64, [3, 3], [2, 2], [1, 1],
                    [1, 1, 1, 1], 8, False),
    "grouped16": ([1, 48, 6, 6], 48, [3, 3], [1, 1], [1, 1], [1, 1, 1, 1],
                  3, True),
    "grouped32_dilated": ([1, 64, 9, 9], 64, [3, 3], [1, 1], [2, 2],
                          [2, 2, 2, 2], 2, True),
    # More outputs than inputs per group; a group count that no merge
    # divides (3 groups of 4); one and three spatial axes.
    "grouped_widen": ([1, 12, 5, 5], 24, [3, 3], [1, 1], [1, 1],
                      [1, 0, 1, 0], 6, True),
    "grouped_odd": ([1, 12, 6, 5], 12, [3, 3], [1, 1], [1, 1], [1, 1, 1, 1],
                    3, False),
    "grouped1d": ([2, 16, 13], 16, [5], [1], [1], [2, 2], 4, True),
    "grouped3d": ([1, 8, 4, 5, 5], 8, [3, 3, 3], [1, 2, 2], [1, 1, 1],
                  [1, 1, 1, 1, 1, 1], 4, True),
    # Dense 3×3 convolutions of stride 1 (tract-cpu-winograd): even, odd
    # and unpadded maps, with and without a bias, batch 2, and one of the
    # size it takes on two threads too.
    "winograd_even": ([1, 32, 16, 16], 32, [3, 3], [1, 1], [1, 1],
                      [1, 1, 1, 1], 1, True),
    "winograd_odd": ([1, 32, 17, 15], 32, [3, 3], [1, 1], [1, 1],
                     [1, 1, 1, 1], 1, False),
    "winograd_valid": ([2, 32, 18, 20], 48, [3, 3], [1, 1], [1, 1],
                       [0, 0, 0, 0], 1, True),
    "winograd_large": ([1, 64, 56, 56], 64, [3, 3], [1, 1], [1, 1],
                       [1, 1, 1, 1], 1, True),
}


def write_grouped(directory, name, shape, outputs, kernel, strides, dilations,
                  pads, group, bias):
    rng = np.random.default_rng(len(name))
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal([outputs, shape[1] // group] + kernel).astype(
        np.float32)
    b = rng.standard_normal([outputs]).astype(np.float32) if bias else None
    rank = len(kernel)
    conv = [torch.nn.functional.conv1d, torch.nn.functional.conv2d,
            torch.nn.functional.conv3d][rank - 1]
    # torch pads symmetrically: pad explicitly, begins and ends per axis.
    padding = []
    for i in reversed(range(rank)):
        padding += [pads[i], pads[rank + i]]
    padded = torch.nn.functional.pad(torch.from_numpy(x), padding)
    y = conv(padded, torch.from_numpy(w),
             None if b is None else torch.from_numpy(b), stride=strides,
             dilation=dilations, groups=group).numpy()
    save_conv(directory, name, "Conv", x, w, b, y, kernel_shape=kernel,
              strides=strides, dilations=dilations, pads=pads, group=group)


def main():
    directory = sys.argv[1]
    os.makedirs(directory, exist_ok=True)
    for name, case in CASES.items():
        write(directory, name, *case)
    for name, case in RESIZES.items():
        write_resize(directory, name, *case)
    for name, case in GROUPED.items():
        write_grouped(directory, name, *case)


if __name__ == "__main__":
    main()
