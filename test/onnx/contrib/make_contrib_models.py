#!/usr/bin/env python3
"""Development script: writes the models of onnxruntime's contrib ops that
language-model exports use, built with onnx's helper, with onnxruntime's
outputs: SimplifiedLayerNormalization (an RMS norm, in the ONNX domain as
onnxruntime registers it); SkipSimplifiedLayerNormalization and
SkipLayerNormalization (com.microsoft: the residual add fused with the
norm, with and without a bias, with the sum as a second output); and
MatMulNBits (4-bit weights in blocks of 32: without zero points and with
scales that f16 holds exactly, as tract's Q4_0 stores them; with f32
scales; with packed zero points and a bias; 8 bits in blocks of 16). The
lit test frontends/onnx/contrib.test runs them.
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


def matmul_nbits(rng, k, n, bits, block, zero_points, f16_scales, bias):
    """A MatMulNBits model of A (B, S, k) by random codes, with its
    initializers."""
    blocks = -(-k // block)
    per_byte = 8 // bits
    codes = rng.integers(0, 1 << bits, size=(n, blocks, block))
    if bits == 4:
        packed = (codes[..., 0::2] | (codes[..., 1::2] << 4)).astype(np.uint8)
    else:
        packed = codes.astype(np.uint8)
    scales = rng.uniform(0.01, 0.05, size=n * blocks).astype(np.float32)
    if f16_scales:
        scales = scales.astype(np.float16).astype(np.float32)
    inputs = ["a", "b", "scales"]
    initializers = [helper.make_tensor("b", TensorProto.UINT8, packed.shape,
                                       packed.tobytes(), raw=True),
                    helper.make_tensor("scales", TensorProto.FLOAT,
                                       scales.shape, scales.tolist())]
    if zero_points:
        zeros = rng.integers(0, 1 << bits, size=(n, blocks))
        if bits == 4:
            if blocks % 2:
                zeros = np.concatenate([zeros, np.zeros((n, 1), int)], 1)
            zeros = zeros[:, 0::2] | (zeros[:, 1::2] << 4)
        zeros = zeros.astype(np.uint8).flatten()
        initializers.append(helper.make_tensor(
            "zeros", TensorProto.UINT8, zeros.shape, zeros.tobytes(),
            raw=True))
        inputs.append("zeros")
    if bias:
        # Past the absent zero points and g_idx.
        inputs += [""] * (5 - len(inputs)) + ["bias"]
        values = rng.normal(size=n).astype(np.float32)
        initializers.append(helper.make_tensor("bias", TensorProto.FLOAT, [n],
                                               values.tolist()))
    node = helper.make_node("MatMulNBits", inputs, ["y"],
                            domain="com.microsoft", K=k, N=n, bits=bits,
                            block_size=block)
    graph = helper.make_graph(
        [node], "MatMulNBits",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["B", "S", k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", "S", n])],
        initializer=initializers)
    return helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])


def nbits_cases(rng):
    a = rng.normal(size=(2, 3, 64)).astype(np.float32)
    yield "matmul_nbits_q4_0", matmul_nbits(
        rng, 64, 32, 4, 32, zero_points=False, f16_scales=True,
        bias=False), {"a": a}
    yield "matmul_nbits_f32_scales", matmul_nbits(
        rng, 64, 32, 4, 32, zero_points=False, f16_scales=False,
        bias=False), {"a": a}
    yield "matmul_nbits_zero_points", matmul_nbits(
        rng, 64, 32, 4, 32, zero_points=True, f16_scales=False,
        bias=True), {"a": a}
    yield "matmul_nbits_8bits", matmul_nbits(
        rng, 64, 32, 8, 16, zero_points=True, f16_scales=False,
        bias=False), {"a": a}


def all_cases(rng):
    yield from cases(rng)
    yield from nbits_cases(rng)


if __name__ == "__main__":
    # Options, onnxruntime and the bundles as for the real models' references.
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts" /
                           "reference-outputs"))
    from make_references import write_cases
    write_cases(__doc__, SEED, all_cases, __file__)
