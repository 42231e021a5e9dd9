#!/usr/bin/env python3
"""Development script: writes the ONNX-ML models of the CTest onnx-ml, built
with onnx's helper (tree ensembles and linear models, the forms scikit-learn,
XGBoost and LightGBM exporters write), with onnxruntime's outputs.
"""
import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper

MODES = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT"]


def random_trees(rng, trees, depth, features, columns, modes, tracks=False,
                 column_of_leaf=None):
    """Attributes of `trees` random trees of at most `depth` levels: nodes
    in depth-first order, leaves weighted for each column (or one)."""
    nodes = {k: [] for k in ("treeids", "nodeids", "featureids", "values",
                             "modes", "truenodeids", "falsenodeids",
                             "missing_value_tracks_true")}
    weights = {k: [] for k in ("treeids", "nodeids", "ids", "weights")}
    for tree in range(trees):
        counter = [0]

        def grow(level):
            node = counter[0]
            counter[0] += 1
            leaf = level == depth or (level > 1 and rng.random() < 0.25)
            entry = len(nodes["nodeids"])
            for k in nodes:
                nodes[k].append(0)
            nodes["treeids"][entry] = tree
            nodes["nodeids"][entry] = node
            if leaf:
                nodes["modes"][entry] = "LEAF"
                nodes["values"][entry] = 0.0
                cols = range(columns) if column_of_leaf is None else \
                    [column_of_leaf]
                for c in cols:
                    weights["treeids"].append(tree)
                    weights["nodeids"].append(node)
                    weights["ids"].append(c)
                    weights["weights"].append(float(rng.normal()))
                return node
            nodes["modes"][entry] = str(rng.choice(modes))
            nodes["featureids"][entry] = int(rng.integers(features))
            nodes["values"][entry] = float(np.float32(rng.normal()))
            nodes["missing_value_tracks_true"][entry] = \
                int(tracks and rng.random() < 0.5)
            nodes["truenodeids"][entry] = grow(level + 1)
            nodes["falsenodeids"][entry] = grow(level + 1)
            return node
        grow(0)
    return nodes, weights


def tree_node(op, prefix, nodes, weights, **extra):
    attrs = {"nodes_" + k: v for k, v in nodes.items()}
    attrs.update({prefix + "_" + k: v for k, v in weights.items()})
    attrs.update(extra)
    outputs = ["label", "probabilities"] if "Classifier" in op else ["y"]
    return helper.make_node(op, ["x"], outputs, domain="ai.onnx.ml", **attrs)


def model(node, features, outputs):
    graph = helper.make_graph(
        [node], node.op_type,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       ["N", features])],
        [helper.make_tensor_value_info(name, dtype, shape)
         for name, dtype, shape in outputs])
    return helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 13), helper.make_opsetid("ai.onnx.ml", 1)])


def build(rng):
    f = 5
    yield "tree_regressor_sum", model(tree_node(
        "TreeEnsembleRegressor", "target",
        *random_trees(rng, 3, 3, f, 2, MODES), n_targets=2,
        base_values=[0.5, -1.0]), f,
        [("y", TensorProto.FLOAT, ["N", 2])]), False
    yield "tree_regressor_average_missing", model(tree_node(
        "TreeEnsembleRegressor", "target",
        *random_trees(rng, 4, 4, f, 1, ["BRANCH_LEQ"], tracks=True),
        n_targets=1, aggregate_function="AVERAGE"), f,
        [("y", TensorProto.FLOAT, ["N", 1])]), True
    yield "tree_classifier_softmax", model(tree_node(
        "TreeEnsembleClassifier", "class",
        *random_trees(rng, 5, 3, f, 3, MODES),
        classlabels_int64s=[10, 20, 30], post_transform="SOFTMAX"), f,
        [("label", TensorProto.INT64, ["N"]),
         ("probabilities", TensorProto.FLOAT, ["N", 3])]), False
    yield "tree_classifier_binary_logistic", model(tree_node(
        "TreeEnsembleClassifier", "class",
        *random_trees(rng, 4, 3, f, 1, ["BRANCH_LEQ"], column_of_leaf=0),
        classlabels_int64s=[0, 1], post_transform="LOGISTIC",
        base_values=[0.25]), f,
        [("label", TensorProto.INT64, ["N"]),
         ("probabilities", TensorProto.FLOAT, ["N", 2])]), False
    yield "linear_regressor", model(helper.make_node(
        "LinearRegressor", ["x"], ["y"], domain="ai.onnx.ml",
        coefficients=[float(v) for v in rng.normal(size=2 * f)],
        intercepts=[0.5, -0.25], targets=2), f,
        [("y", TensorProto.FLOAT, ["N", 2])]), False
    yield "linear_classifier_softmax", model(helper.make_node(
        "LinearClassifier", ["x"], ["label", "probabilities"],
        domain="ai.onnx.ml",
        coefficients=[float(v) for v in rng.normal(size=3 * f)],
        intercepts=[0.1, 0.2, -0.3], classlabels_ints=[3, 5, 7],
        post_transform="SOFTMAX"), f,
        [("label", TensorProto.INT64, ["N"]),
         ("probabilities", TensorProto.FLOAT, ["N", 3])]), False
    yield "linear_classifier_binary", model(helper.make_node(
        "LinearClassifier", ["x"], ["label", "probabilities"],
        domain="ai.onnx.ml",
        coefficients=[float(v) for v in rng.normal(size=f)],
        intercepts=[0.1], classlabels_ints=[0, 1],
        post_transform="LOGISTIC"), f,
        [("label", TensorProto.INT64, ["N"]),
         ("probabilities", TensorProto.FLOAT, ["N", 2])]), False


SEED = 11


def cases(rng):
    for name, onnx_model, missing in build(rng):
        x = rng.normal(size=(16, 5)).astype(np.float32)
        if missing:
            x[rng.random(x.shape) < 0.2] = np.nan
        yield name, onnx_model, {"x": x}


if __name__ == "__main__":
    # Options, onnxruntime and the bundles as for the real models' references.
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts" /
                           "reference-outputs"))
    from make_references import write_cases
    write_cases(__doc__, SEED, cases, __file__)
