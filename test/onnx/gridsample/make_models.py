#!/usr/bin/env python3
"""Development script: writes the GridSample models of
test/frontends/onnx/gridsample.test, the padding, alignment and mode
combinations the ONNX node tests leave out (points beyond the edges
included, where the paddings differ), with onnxruntime's outputs.
"""
import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper

# name: (opset, mode, padding_mode, align_corners, input shape, grid shape)
CASES = {
    "bicubic_border": (16, "bicubic", "border", 0, (1, 2, 4, 5), (1, 3, 6, 2)),
    "bicubic_reflection_aligned":
        (16, "bicubic", "reflection", 1, (2, 1, 5, 4), (2, 4, 3, 2)),
    "nearest_reflection": (16, "nearest", "reflection", 0, (1, 3, 3, 4),
                           (1, 5, 5, 2)),
    "nearest_border_aligned": (16, "nearest", "border", 1, (1, 1, 4, 4),
                               (1, 4, 6, 2)),
    "bilinear_reflection_aligned":
        (16, "bilinear", "reflection", 1, (1, 2, 1, 6), (1, 3, 4, 2)),
    "linear_volume_border": (20, "linear", "border", 0, (1, 2, 3, 4, 5),
                             (1, 2, 3, 4, 3)),
}


def build(name, opset, mode, padding, align, x_shape, grid_shape):
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode,
                            padding_mode=padding, align_corners=align)
    out_shape = list(x_shape[:2]) + list(grid_shape[1:-1])
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape),
         helper.make_tensor_value_info("grid", TensorProto.FLOAT,
                                       grid_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)])
    return helper.make_model(graph,
                             opset_imports=[helper.make_opsetid("", opset)])


SEED = 16


def cases(rng):
    for name, (opset, mode, padding, align, x_shape, grid_shape) in \
            CASES.items():
        x = rng.normal(size=x_shape).astype(np.float32)
        # Points up to 2.5 cells' worth beyond each edge.
        grid = rng.uniform(-1.6, 1.6, size=grid_shape).astype(np.float32)
        yield name, build(name, opset, mode, padding, align, x_shape,
                          grid_shape), {"x": x, "grid": grid}

if __name__ == "__main__":
    # Options, onnxruntime and the bundles as for the real models' references.
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts" /
                           "reference-outputs"))
    from make_references import write_cases
    write_cases(__doc__, SEED, cases, __file__)
