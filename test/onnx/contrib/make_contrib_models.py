#!/usr/bin/env python3
"""Development script: writes the models of onnxruntime's normalization
contrib ops that language-model exports use (SimplifiedLayerNormalization,
an RMS norm, in the ONNX domain as onnxruntime registers it;
SkipSimplifiedLayerNormalization and SkipLayerNormalization, in
com.microsoft: the residual add fused with the norm, with and without a
bias, with the sum as a second output), built with onnx's helper, with
onnxruntime's outputs. The lit test frontends/onnx/contrib.test runs them.
"""
import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper

HIDDEN = 32


def model(node, inputs, outputs, initializers, domains):
    graph = helper.make_graph(
        [node], node.op_type,
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
         for name, shape in inputs],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
         for name, shape in outputs],
        initializer=[helper.make_tensor(name, TensorProto.FLOAT, value.shape,
                                        value.flatten().tolist())
                     for name, value in initializers.items()])
    opsets = [helper.make_opsetid("", 17)]
    opsets += [helper.make_opsetid(domain, 1) for domain in domains]
    return helper.make_model(graph, opset_imports=opsets)


SEED = 7


def cases(rng):
    shape = ["B", "S", HIDDEN]
    gamma = rng.uniform(0.5, 1.5, size=HIDDEN).astype(np.float32)
    beta = rng.normal(size=HIDDEN).astype(np.float32)
    bias = rng.normal(size=HIDDEN).astype(np.float32) * 0.1
    x = rng.normal(size=(2, 5, HIDDEN)).astype(np.float32) * 3
    skip = rng.normal(size=(2, 5, HIDDEN)).astype(np.float32)

    yield "simplified_layer_norm", model(
        helper.make_node("SimplifiedLayerNormalization", ["x", "gamma"], ["y"],
                         axis=-1, epsilon=1e-6),
        [("x", shape)], [("y", shape)], {"gamma": gamma}, []), {"x": x}

    yield "skip_simplified_layer_norm", model(
        helper.make_node("SkipSimplifiedLayerNormalization",
                         ["x", "skip", "gamma"], ["y", "", "", "sum"],
                         domain="com.microsoft", epsilon=1e-6),
        [("x", shape), ("skip", shape)], [("y", shape), ("sum", shape)],
        {"gamma": gamma}, ["com.microsoft"]), {"x": x, "skip": skip}

    yield "skip_simplified_layer_norm_bias", model(
        helper.make_node("SkipSimplifiedLayerNormalization",
                         ["x", "skip", "gamma", "bias"], ["y"],
                         domain="com.microsoft", epsilon=1e-5),
        [("x", shape), ("skip", shape)], [("y", shape)],
        {"gamma": gamma, "bias": bias}, ["com.microsoft"]), \
        {"x": x, "skip": skip}

    yield "skip_layer_norm", model(
        helper.make_node("SkipLayerNormalization",
                         ["x", "skip", "gamma", "beta", "bias"],
                         ["y", "", "", "sum"], domain="com.microsoft",
                         epsilon=1e-5),
        [("x", shape), ("skip", shape)], [("y", shape), ("sum", shape)],
        {"gamma": gamma, "beta": beta, "bias": bias}, ["com.microsoft"]), \
        {"x": x, "skip": skip}


if __name__ == "__main__":
    # Options, onnxruntime and the bundles as for the real models' references.
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts" /
                           "reference-outputs"))
    from make_references import write_cases
    write_cases(__doc__, SEED, cases, __file__)
