#!/usr/bin/env python3
"""Development script: writes the NonMaxSuppression models of
test/frontends/onnx/nms.test, larger than the ONNX node tests' (many random,
overlapping boxes over several batches and classes, both box formats, with
and without a score threshold), with onnxruntime's outputs.
"""
import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper

# name: (batches, classes, boxes, center_point_box, max_output, iou,
#        score threshold or None)
CASES = {
    "nms_corners": (2, 3, 60, 0, 7, 0.4, 0.2),
    "nms_centers_no_threshold": (1, 2, 80, 1, 100, 0.5, None),
}


def build(name, center, max_output, iou, score):
    inputs = ["boxes", "scores", "max_output", "iou"]
    initializers = [
        numpy_helper.from_array(np.array([max_output], np.int64),
                                "max_output"),
        numpy_helper.from_array(np.array([iou], np.float32), "iou")]
    if score is not None:
        inputs.append("score")
        initializers.append(
            numpy_helper.from_array(np.array([score], np.float32), "score"))
    node = helper.make_node("NonMaxSuppression", inputs, ["selected"],
                            center_point_box=center)
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info("boxes", TensorProto.FLOAT,
                                       ["B", "N", 4]),
         helper.make_tensor_value_info("scores", TensorProto.FLOAT,
                                       ["B", "C", "N"])],
        [helper.make_tensor_value_info("selected", TensorProto.INT64,
                                       ["K", 3])],
        initializers)
    return helper.make_model(graph,
                             opset_imports=[helper.make_opsetid("", 11)])


SEED = 10


def cases(rng):
    for name, (batches, classes, count, center, max_output, iou, score) in \
            CASES.items():
        model = build(name, center, max_output, iou, score)
        # Boxes clustered in a 10 x 10 field so that many overlap; corners
        # in either order; scores with ties.
        origin = rng.uniform(0, 10, size=(batches, count, 2))
        size = rng.uniform(0.5, 4, size=(batches, count, 2))
        if center:
            boxes = np.concatenate([origin, size], axis=2)
        else:
            far = origin + size
            flip = rng.random((batches, count, 1)) < 0.3
            first = np.where(flip, far, origin)
            second = np.where(flip, origin, far)
            boxes = np.stack([first[..., 1], first[..., 0], second[..., 1],
                              second[..., 0]], axis=2)
        scores = np.round(rng.uniform(0, 1, size=(batches, classes, count)),
                          1)
        inputs = {"boxes": boxes.astype(np.float32),
                  "scores": scores.astype(np.float32)}
        yield name, model, inputs


if __name__ == "__main__":
    # Options, onnxruntime and the bundles as for the real models' references.
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts" /
                           "reference-outputs"))
    from make_references import write_cases
    write_cases(__doc__, SEED, cases, __file__)
