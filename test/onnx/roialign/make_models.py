#!/usr/bin/env python3
"""Development script: writes the RoiAlign models of
test/frontends/onnx/roialign.test, beyond the ONNX node tests' (max mode,
adaptive and fixed sampling, a spatial scale, regions partly outside the
image, several images), with onnxruntime's outputs.
"""
import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper

# name: (opset, attributes, image shape, regions)
CASES = {
    "roialign_max_scaled": (16, dict(mode="max", output_height=3,
                                     output_width=2, sampling_ratio=2,
                                     spatial_scale=0.5),
                            (2, 3, 8, 10), 7),
    "roialign_avg_adaptive_output_half_pixel":
        (16, dict(mode="avg", output_height=2, output_width=4,
                  coordinate_transformation_mode="output_half_pixel"),
         (2, 2, 9, 7), 6),
}


def build(name, opset, attributes, shape, regions):
    node = helper.make_node("RoiAlign", ["x", "rois", "batch"], ["y"],
                            **attributes)
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape),
         helper.make_tensor_value_info("rois", TensorProto.FLOAT,
                                       [regions, 4]),
         helper.make_tensor_value_info("batch", TensorProto.INT64,
                                       [regions])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph,
                             opset_imports=[helper.make_opsetid("", opset)])


SEED = 12


def cases(rng):
    for name, (opset, attributes, shape, regions) in CASES.items():
        model = build(name, opset, attributes, shape, regions)
        x = rng.normal(size=shape).astype(np.float32)
        # Regions in units of the input / spatial_scale, some beyond the
        # image; corners in order.
        scale = attributes.get("spatial_scale", 1.0)
        extent = np.array([shape[3], shape[2]]) / scale
        first = rng.uniform(-0.2, 0.8, size=(regions, 2)) * extent
        size = rng.uniform(0.1, 0.7, size=(regions, 2)) * extent
        rois = np.concatenate([first, first + size], axis=1).astype(
            np.float32)
        batch = rng.integers(0, shape[0], size=regions).astype(np.int64)
        inputs = {"x": x, "rois": rois, "batch": batch}
        yield name, model, inputs


if __name__ == "__main__":
    # Options, onnxruntime and the bundles as for the real models' references.
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts" /
                           "reference-outputs"))
    from make_references import write_cases
    write_cases(__doc__, SEED, cases, __file__)
