#!/usr/bin/env python3
"""Development script: writes small quantized models in ONNX's QOperator
and dynamic forms, built with onnx's helper, with onnxruntime's outputs:
QLinearConv (uint8 inputs by int8 weights with per-channel scales and a
bias, padded; strided with uneven pads; int8 inputs with a dilated
kernel; a 5x5 stem of 3 channels whose sums are not a multiple of four,
with uint8 weights whose zero point is not 128; a 1x1 convolution on a
batch of two), QLinearMatMul (batched rows by int8 weights; uint8 weights
with a zero point), ConvInteger, and dynamic quantization
(DynamicQuantizeLinear, MatMulInteger with the zero point it computes,
then the scales), and the QDQ form onnxruntime's quantizer writes: two
convolutions, the first with a bias and a Relu, between
DequantizeLinear and QuantizeLinear nodes, then a product by a
dequantized matrix; and an inverted residual block as MobileNetV2 has
them (1x1, depthwise 3x3 and 1x1 convolutions, the first two with Clip
as ReLU6, and the residual Add in float between dequantized tensors).
tract's import fuses the products into QLinearConv and QLinearMatMul,
onnxruntime into its own integer kernels; its outputs here are computed
with its graph optimizations on, as its users run it. And com.microsoft's
QOperator element-wise ops and pools: QLinearAdd (also broadcast),
QLinearMul, QLinearSigmoid, QLinearLeakyRelu, QLinearGlobalAveragePool and
QLinearConcat. And a max pool between a dequantization and a quantization
of the same parameters (which runs on the quantized values), and ResNet's
stem and first block in the QDQ form. The lit
test frontends/onnx/quant.test runs them.
"""
import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper

SEED = 11
U8, I8, I32, F32 = (TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32,
                    TensorProto.FLOAT)


def tensor(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def one_node_model(node, inputs, outputs, initializers, opset=13):
    graph = helper.make_graph(
        [node] if not isinstance(node, list) else node, "quantized",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        initializer=[tensor(n, v) for n, v in initializers.items()])
    return helper.make_model(graph,
                             opset_imports=[helper.make_opsetid("", opset)])


def qlinear_conv(rng, name, x_type, w_type, shape, kernel, per_channel=True,
                 bias=True, w_zero=0, **attributes):
    out_channels = kernel[0]
    x_dtype = np.uint8 if x_type == U8 else np.int8
    w_dtype = np.uint8 if w_type == U8 else np.int8
    info = np.iinfo(x_dtype)
    x = rng.integers(info.min, info.max + 1, size=shape).astype(x_dtype)
    winfo = np.iinfo(w_dtype)
    w = rng.integers(winfo.min, winfo.max + 1, size=kernel).astype(w_dtype)
    fan_in = int(np.prod(kernel[1:]))
    w_scale = (rng.uniform(0.5, 1.5, size=out_channels if per_channel else ())
               * 0.02).astype(np.float32)
    init = {
        "x_scale": np.float32(0.05),
        "x_zero": x_dtype(7 if x_type == U8 else -3),
        "w": w, "w_scale": w_scale,
        "w_zero": (np.full(out_channels, w_zero, w_dtype) if per_channel
                   else w_dtype(w_zero)),
        # The output's range spans a few hundred steps of its scale.
        "y_scale": np.float32(0.05 * 0.02 * np.sqrt(fan_in) * 40 / 127),
        "y_zero": x_dtype(120 if x_type == U8 else 5),
    }
    inputs = ["x", "x_scale", "x_zero", "w", "w_scale", "w_zero", "y_scale",
              "y_zero"]
    if bias:
        init["bias"] = rng.integers(-2000, 2000,
                                    size=out_channels).astype(np.int32)
        inputs.append("bias")
    node = helper.make_node("QLinearConv", inputs, ["y"], **attributes)
    model = one_node_model(node, [("x", x_type, list(shape))],
                           [("y", x_type, None)], init)
    return name, model, {"x": x}


def cases(rng):
    yield qlinear_conv(rng, "qlinear_conv_3x3", U8, I8, (1, 16, 20, 20),
                       (24, 16, 3, 3), auto_pad="SAME_UPPER")
    yield qlinear_conv(rng, "qlinear_conv_strided", U8, I8, (1, 8, 17, 17),
                       (32, 8, 3, 3), strides=[2, 2], pads=[1, 1, 0, 0])
    yield qlinear_conv(rng, "qlinear_conv_signed_dilated", I8, I8,
                       (1, 12, 15, 13), (16, 12, 3, 3), per_channel=False,
                       dilations=[2, 2], pads=[2, 2, 2, 2])
    yield qlinear_conv(rng, "qlinear_conv_stem", U8, U8, (1, 3, 23, 23),
                       (20, 3, 5, 5), per_channel=False, w_zero=100,
                       strides=[2, 2], pads=[2, 2, 2, 2])
    yield qlinear_conv(rng, "qlinear_conv_1x1", U8, I8, (2, 32, 7, 9),
                       (40, 32, 1, 1), bias=False)

    # QLinearMatMul: rows of a batch by int8 weights; uint8 weights with a
    # zero point (the correction by each row's sum).
    for name, w_type, w_zero in [("qlinear_matmul", I8, 0),
                                 ("qlinear_matmul_u8_weights", U8, 3)]:
        w_dtype = np.uint8 if w_type == U8 else np.int8
        info = np.iinfo(w_dtype)
        a = rng.integers(0, 256, size=(2, 5, 42)).astype(np.uint8)
        init = {
            "a_scale": np.float32(0.04), "a_zero": np.uint8(9),
            "b": rng.integers(info.min, info.max + 1,
                              size=(42, 50)).astype(w_dtype),
            "b_scale": np.float32(0.01), "b_zero": w_dtype(w_zero),
            "y_scale": np.float32(0.04 * 0.01 * np.sqrt(42) * 60 / 127),
            "y_zero": np.uint8(128),
        }
        node = helper.make_node(
            "QLinearMatMul", ["a", "a_scale", "a_zero", "b", "b_scale",
                              "b_zero", "y_scale", "y_zero"], ["y"])
        yield name, one_node_model(node, [("a", U8, [2, 5, 42])],
                                   [("y", U8, None)], init), {"a": a}

    # ConvInteger: uint8 by uint8 with zero points, summed in int32.
    x = rng.integers(0, 256, size=(1, 6, 11, 11)).astype(np.uint8)
    init = {"x_zero": np.uint8(12),
            "w": rng.integers(0, 256, size=(18, 6, 3, 3)).astype(np.uint8),
            "w_zero": np.uint8(130)}
    node = helper.make_node("ConvInteger", ["x", "w", "x_zero", "w_zero"],
                            ["y"], pads=[1, 1, 1, 1])
    yield "conv_integer", one_node_model(
        node, [("x", U8, [1, 6, 11, 11])], [("y", I32, None)], init), {"x": x}

    # Dynamic quantization of a product, as onnxruntime's quantize_dynamic
    # writes it: the input's scale and zero point computed when it runs.
    x = rng.normal(size=(3, 7, 40)).astype(np.float32)
    w_scale = np.float32(0.008)
    init = {"w": rng.integers(-127, 128, size=(40, 33)).astype(np.int8),
            "w_zero": np.int8(0), "w_scale": w_scale}
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"],
                         ["xq", "x_scale", "x_zero"]),
        helper.make_node("MatMulInteger", ["xq", "w", "x_zero", "w_zero"],
                         ["acc"]),
        helper.make_node("Cast", ["acc"], ["accf"], to=F32),
        helper.make_node("Mul", ["x_scale", "w_scale"], ["scale"]),
        helper.make_node("Mul", ["accf", "scale"], ["y"]),
    ]
    yield "dynamic_matmul", one_node_model(
        nodes, [("x", F32, [3, 7, 40])], [("y", F32, None)], init), {"x": x}

    yield qdq_model(rng)
    yield qdq_mobile_block(rng)
    yield from qoperator_cases(rng)
    yield qdq_pool(rng)
    yield qdq_resnet_stem(rng)
    yield from qgemm_cases(rng)


class Graph:
    """Nodes and initializers of a QDQ graph being written."""

    def __init__(self):
        self.nodes, self.init = [], {}

    def param(self, name, value):
        self.init[name] = value
        return name

    def dq(self, name, q, scale, zero, axis=None):
        attributes = {} if axis is None else {"axis": axis}
        self.nodes.append(helper.make_node(
            "DequantizeLinear", [q, scale, zero], [name], **attributes))
        return name

    def q(self, name, x, scale, zero):
        self.nodes.append(helper.make_node("QuantizeLinear", [x, scale, zero],
                                           [name]))
        return name


def qdq_model(rng):
    """x (float) -> Q -> DQ -> Conv(DQ w1, DQ b1) -> Relu -> Q -> DQ ->
    Conv(DQ w2 per channel) -> Q -> DQ -> Flatten -> Q -> DQ -> MatMul(DQ
    w3) -> Q -> DQ -> y (float)."""
    g = Graph()
    nodes, init, param, dq, q = g.nodes, g.init, g.param, g.dq, g.q
    a_scale, a_zero = param("a_scale", np.float32(0.03)), param(
        "a_zero", np.uint8(100))
    x = dq("x_dq", q("x_q", "x", a_scale, a_zero), a_scale, a_zero)
    w1 = rng.integers(-127, 128, size=(16, 8, 3, 3)).astype(np.int8)
    w1_scale = np.float32(0.01)
    b1 = rng.integers(-500, 500, size=16).astype(np.int32)
    conv1 = helper.make_node(
        "Conv", [x, dq("w1_dq", param("w1", w1), param("w1_scale", w1_scale),
                       param("w1_zero", np.int8(0))),
                 dq("b1_dq", param("b1", b1),
                    param("b1_scale", np.float32(0.03 * 0.01)),
                    param("b1_zero", np.int32(0)))],
        ["c1"], pads=[1, 1, 1, 1])
    nodes.append(conv1)
    nodes.append(helper.make_node("Relu", ["c1"], ["r1"]))
    h_scale, h_zero = param("h_scale", np.float32(0.05)), param(
        "h_zero", np.uint8(20))
    h = dq("h_dq", q("h_q", "r1", h_scale, h_zero), h_scale, h_zero)
    w2 = rng.integers(-127, 128, size=(24, 16, 1, 1)).astype(np.int8)
    w2_scale = (rng.uniform(0.5, 1.5, size=24) * 0.01).astype(np.float32)
    nodes.append(helper.make_node(
        "Conv", [h, dq("w2_dq", param("w2", w2), param("w2_scale", w2_scale),
                       param("w2_zero", np.zeros(24, np.int8)), axis=0)],
        ["c2"], strides=[2, 2]))
    g_scale, g_zero = param("g_scale", np.float32(0.08)), param(
        "g_zero", np.uint8(128))
    g = dq("g_dq", q("g_q", "c2", g_scale, g_zero), g_scale, g_zero)
    nodes.append(helper.make_node("Flatten", [g], ["flat"]))
    f = dq("f_dq", q("f_q", "flat", g_scale, g_zero), g_scale, g_zero)
    w3 = rng.integers(-127, 128, size=(24 * 5 * 5, 10)).astype(np.int8)
    nodes.append(helper.make_node(
        "MatMul", [f, dq("w3_dq", param("w3", w3),
                         param("w3_scale", np.float32(0.002)),
                         param("w3_zero", np.int8(0)))], ["m"]))
    y_scale, y_zero = param("y_scale", np.float32(0.1)), param(
        "y_zero", np.uint8(128))
    dq("y", q("y_q", "m", y_scale, y_zero), y_scale, y_zero)
    model = one_node_model(nodes, [("x", F32, [1, 8, 10, 10])],
                           [("y", F32, None)], init)
    x = rng.uniform(-2, 5, size=(1, 8, 10, 10)).astype(np.float32)
    return "qdq_convs", model, {"x": x}


def qdq_mobile_block(rng):
    g = Graph()
    nodes, init, param, dq = g.nodes, g.init, g.param, g.dq

    def qdq(name, x, scale, zero):
        s, z = param(name + "_s", np.float32(scale)), param(
            name + "_z", np.uint8(zero))
        nodes.append(helper.make_node("QuantizeLinear", [x, s, z],
                                      [name + "_q"]))
        return dq(name, name + "_q", s, z)

    def conv(name, x, w, scale, clip, **attributes):
        w_scale = (rng.uniform(0.5, 1.5, size=w.shape[0]) * scale) \
            .astype(np.float32)
        wdq = dq(name + "_w", param(name + "_wq", w),
                 param(name + "_ws", w_scale),
                 param(name + "_wz", np.zeros(w.shape[0], np.int8)), axis=0)
        nodes.append(helper.make_node("Conv", [x, wdq], [name], **attributes))
        if not clip:
            return name
        nodes.append(helper.make_node("Clip", [name, "zero", "six"],
                                      [name + "_clip"]))
        return name + "_clip"

    init["zero"], init["six"] = np.float32(0), np.float32(6)
    x = qdq("xq", "x", 0.04, 128)
    weights = lambda *shape: rng.integers(-127, 128, size=shape).astype(
        np.int8)
    h = qdq("h", conv("expand", x, weights(48, 16, 1, 1), 0.01, True),
            6 / 255, 0)
    d = qdq("d", conv("depthwise", h, weights(48, 1, 3, 3), 0.02, True,
                      group=48, pads=[1, 1, 1, 1]), 6 / 255, 0)
    p = qdq("p", conv("project", d, weights(16, 48, 1, 1), 0.005, False),
            0.05, 128)
    nodes.append(helper.make_node("Add", [x, p], ["sum"]))
    qdq("y", "sum", 0.06, 128)
    model = one_node_model(nodes, [("x", F32, [1, 16, 12, 12])],
                           [("y", F32, None)], init)
    return "qdq_mobile_block", model, {
        "x": rng.uniform(-4, 4, size=(1, 16, 12, 12)).astype(np.float32)}


def qdq_pool(rng):
    init = {"s": np.float32(0.05), "z": np.uint8(30),
            "s2": np.float32(0.05), "z2": np.uint8(30)}
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"]),
        helper.make_node("MaxPool", ["xd"], ["p"], kernel_shape=[3, 3],
                         strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("QuantizeLinear", ["p", "s2", "z2"], ["pq"]),
        helper.make_node("DequantizeLinear", ["pq", "s2", "z2"], ["y"]),
    ]
    model = one_node_model(nodes, [("x", F32, [1, 4, 9, 9])],
                           [("y", F32, None)], init)
    return "qdq_pool", model, {
        "x": rng.uniform(-1, 8, size=(1, 4, 9, 9)).astype(np.float32)}


def qdq_resnet_stem(rng):
    """ResNet's stem and first block in the QDQ form: a 3x3 convolution of
    3 channels (stride 2), Relu, a max pool between the same quantization
    parameters, a 3x3 convolution whose residual Add and Relu are in float
    between dequantized tensors, then a strided 1x1 convolution."""
    g = Graph()
    nodes, init, param, dq = g.nodes, g.init, g.param, g.dq

    def qdq(name, x, scale, zero):
        s, z = param(name + "_s", np.float32(scale)), param(
            name + "_z", np.uint8(zero))
        nodes.append(helper.make_node("QuantizeLinear", [x, s, z],
                                      [name + "_q"]))
        return dq(name, name + "_q", s, z)

    def conv(name, x, shape, scale, **attributes):
        w = rng.integers(-127, 128, size=shape).astype(np.int8)
        w_scale = (rng.uniform(0.5, 1.5, size=shape[0]) * scale) \
            .astype(np.float32)
        wdq = dq(name + "_w", param(name + "_wq", w),
                 param(name + "_ws", w_scale),
                 param(name + "_wz", np.zeros(shape[0], np.int8)), axis=0)
        nodes.append(helper.make_node("Conv", [x, wdq], [name], **attributes))
        return name

    x = qdq("xq", "x", 0.04, 114)
    stem = conv("stem", x, (8, 3, 3, 3), 0.01, strides=[2, 2],
                pads=[1, 1, 1, 1])
    nodes.append(helper.make_node("Relu", [stem], ["stem_relu"]))
    s = qdq("s", "stem_relu", 0.03, 0)
    nodes.append(helper.make_node("MaxPool", [s], ["pool"], kernel_shape=[3, 3],
                                  strides=[2, 2], pads=[1, 1, 1, 1]))
    p = qdq("p", "pool", 0.03, 0)
    c = qdq("c", conv("block", p, (8, 8, 3, 3), 0.01, pads=[1, 1, 1, 1]),
            0.05, 132)
    nodes.append(helper.make_node("Add", [c, p], ["sum"]))
    nodes.append(helper.make_node("Relu", ["sum"], ["sum_relu"]))
    r = qdq("r", "sum_relu", 0.04, 0)
    qdq("y", conv("down", r, (16, 8, 1, 1), 0.02, strides=[2, 2]), 0.05, 128)
    model = one_node_model(nodes, [("x", F32, [1, 3, 17, 17])],
                           [("y", F32, None)], init)
    return "qdq_resnet_stem", model, {
        "x": rng.uniform(-4, 4, size=(1, 3, 17, 17)).astype(np.float32)}


def ms_model(node, inputs, outputs, init):
    graph = helper.make_graph(
        [node], node.op_type,
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        initializer=[tensor(n, v) for n, v in init.items()])
    return helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])


def qoperator_cases(rng):
    def u8(*shape):
        return rng.integers(0, 256, size=shape).astype(np.uint8)

    for name, op, b_shape in [("qlinear_add", "QLinearAdd", (1, 8, 5, 5)),
                              ("qlinear_add_broadcast", "QLinearAdd",
                               (1, 8, 1, 1)),
                              ("qlinear_mul", "QLinearMul", (1, 8, 5, 5))]:
        init = {"a_s": np.float32(0.05), "a_z": np.uint8(100),
                "b_s": np.float32(0.03), "b_z": np.uint8(80),
                "c_s": np.float32(0.07 if op == "QLinearAdd" else 0.02),
                "c_z": np.uint8(128)}
        node = helper.make_node(op, ["a", "a_s", "a_z", "b", "b_s", "b_z",
                                     "c_s", "c_z"], ["c"],
                                domain="com.microsoft")
        yield name, ms_model(node, [("a", U8, [1, 8, 5, 5]),
                                    ("b", U8, list(b_shape))],
                             [("c", U8, None)], init), {
            "a": u8(1, 8, 5, 5), "b": u8(*b_shape)}

    unary = {"x_s": np.float32(0.05), "x_z": np.uint8(128),
             "y_s": np.float32(1 / 255), "y_z": np.uint8(0)}
    for name, op, attributes, y_scale in [
            ("qlinear_sigmoid", "QLinearSigmoid", {}, 1 / 255),
            ("qlinear_leaky_relu", "QLinearLeakyRelu", {"alpha": 0.1}, 0.03),
            ("qlinear_global_average_pool", "QLinearGlobalAveragePool",
             {"channels_last": 0}, 0.02)]:
        init = dict(unary, y_s=np.float32(y_scale),
                    y_z=np.uint8(0 if op == "QLinearSigmoid" else 100))
        node = helper.make_node(op, ["x", "x_s", "x_z", "y_s", "y_z"], ["y"],
                                domain="com.microsoft", **attributes)
        yield name, ms_model(node, [("x", U8, [1, 8, 6, 7])],
                             [("y", U8, None)], init), {"x": u8(1, 8, 6, 7)}

    init = {"y_s": np.float32(0.06), "y_z": np.uint8(120),
            "a_s": np.float32(0.05), "a_z": np.uint8(100),
            "b_s": np.float32(0.08), "b_z": np.uint8(140)}
    node = helper.make_node("QLinearConcat", ["y_s", "y_z", "a", "a_s", "a_z",
                                              "b", "b_s", "b_z"], ["y"],
                            axis=1, domain="com.microsoft")
    yield "qlinear_concat", ms_model(
        node, [("a", U8, [1, 3, 4, 4]), ("b", U8, [1, 5, 4, 4])],
        [("y", U8, None)], init), {"a": u8(1, 3, 4, 4), "b": u8(1, 5, 4, 4)}


def qgemm_cases(rng):
    """com.microsoft's QGemm: int8 weights transposed, per column, with a
    bias, quantized to uint8; and uint8 weights with a zero point, alpha
    0.5 and a float result."""
    x = rng.integers(0, 256, size=(5, 24)).astype(np.uint8)
    init = {"a_s": np.float32(0.03), "a_z": np.uint8(120),
            "b": rng.integers(-127, 128, size=(16, 24)).astype(np.int8),
            "b_s": rng.uniform(0.002, 0.01, 16).astype(np.float32),
            "b_z": np.zeros(16, np.int8),
            "c": rng.integers(-5000, 5000, 16).astype(np.int32),
            "y_s": np.float32(0.05), "y_z": np.uint8(128)}
    node = helper.make_node("QGemm", ["a", "a_s", "a_z", "b", "b_s", "b_z",
                                      "c", "y_s", "y_z"], ["y"], transB=1,
                            domain="com.microsoft")
    yield "qgemm", ms_model(node, [("a", U8, [5, 24])], [("y", U8, None)],
                            init), {"a": x}
    x = rng.integers(0, 256, size=(3, 20)).astype(np.uint8)
    init = {"a_s": np.float32(0.02), "a_z": np.uint8(128),
            "b": rng.integers(0, 256, size=(20, 12)).astype(np.uint8),
            "b_s": np.float32(0.004), "b_z": np.uint8(100),
            "c": rng.integers(-3000, 3000, 12).astype(np.int32)}
    node = helper.make_node("QGemm", ["a", "a_s", "a_z", "b", "b_s", "b_z",
                                      "c"], ["y"], alpha=0.5,
                            domain="com.microsoft")
    yield "qgemm_float", ms_model(node, [("a", U8, [3, 20])],
                                  [("y", F32, None)], init), {"a": x}
    yield qdq_gemm(rng)
    yield from dynamic_ms_cases(rng)
    yield from qlinear_average_pool_cases(rng)
    yield qattention(rng)
    # 4 groups of 8 channels, per-channel scales and a bias.
    yield qlinear_conv(rng, "qlinear_conv_grouped", U8, I8, (1, 32, 9, 9),
                       (32, 8, 3, 3), group=4, pads=[1, 1, 1, 1])


def qattention(rng):
    """com.microsoft's QAttention (a BERT encoder's attention after
    onnxruntime's quantizer): a uint8 input by int8 weights, a float bias,
    4 heads, a raw mask with padding in the second sequence."""
    mask = np.ones((2, 6), np.int32)
    mask[1, 4:] = 0
    init = {"w": rng.integers(-127, 128, size=(24, 96)).astype(np.int8),
            "b": (rng.normal(size=96) * 0.1).astype(np.float32),
            "x_s": np.float32(0.02), "w_s": np.float32(0.005),
            "x_z": np.uint8(128), "w_z": np.int8(0)}
    node = helper.make_node("QAttention", ["x", "w", "b", "x_s", "w_s", "m",
                                           "x_z", "w_z"], ["y"], num_heads=4,
                            domain="com.microsoft")
    graph = helper.make_graph(
        [node], "QAttention",
        [helper.make_tensor_value_info("x", U8, [2, 6, 24]),
         helper.make_tensor_value_info("m", I32, [2, 6])],
        [helper.make_tensor_value_info("y", F32, None)],
        initializer=[tensor(n, v) for n, v in init.items()])
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    return "qattention", model, {
        "x": rng.integers(0, 256, size=(2, 6, 24)).astype(np.uint8),
        "m": mask}


def qlinear_average_pool_cases(rng):
    """com.microsoft's QLinearAveragePool: 3x3 stride 2 padded, the pads
    not counted; and channels last, 2x2."""
    init = {"x_s": np.float32(0.05), "x_z": np.uint8(100),
            "y_s": np.float32(0.03), "y_z": np.uint8(90)}
    node = helper.make_node("QLinearAveragePool",
                            ["x", "x_s", "x_z", "y_s", "y_z"], ["y"],
                            kernel_shape=[3, 3], strides=[2, 2],
                            pads=[1, 1, 1, 1], domain="com.microsoft")
    yield "qlinear_average_pool", ms_model(
        node, [("x", U8, [1, 8, 9, 9])], [("y", U8, None)], init), {
        "x": rng.integers(0, 256, size=(1, 8, 9, 9)).astype(np.uint8)}
    node = helper.make_node("QLinearAveragePool",
                            ["x", "x_s", "x_z", "y_s", "y_z"], ["y"],
                            kernel_shape=[2, 2], strides=[2, 2],
                            channels_last=1, domain="com.microsoft")
    yield "qlinear_average_pool_nhwc", ms_model(
        node, [("x", U8, [1, 6, 6, 5])], [("y", U8, None)], init), {
        "x": rng.integers(0, 256, size=(1, 6, 6, 5)).astype(np.uint8)}


def dynamic_ms_cases(rng):
    """com.microsoft's dynamic products: DynamicQuantizeMatMul (int8
    weights per column with a bias) and MatMulIntegerToFloat (onnxruntime's
    fusion of MatMulInteger and its scales, a constant zero point)."""
    init = {"b": rng.integers(-127, 128, size=(32, 24)).astype(np.int8),
            "b_s": rng.uniform(0.002, 0.01, 24).astype(np.float32),
            "b_z": np.zeros(24, np.int8),
            "bias": rng.uniform(-1, 1, 24).astype(np.float32)}
    node = helper.make_node("DynamicQuantizeMatMul",
                            ["a", "b", "b_s", "b_z", "bias"], ["y"],
                            domain="com.microsoft")
    yield "dynamic_quantize_matmul", ms_model(
        node, [("a", F32, [2, 5, 32])], [("y", F32, None)], init), {
        "a": rng.uniform(-2, 3, size=(2, 5, 32)).astype(np.float32)}
    init = {"b": rng.integers(-127, 128, size=(32, 16)).astype(np.int8),
            "a_s": np.float32(0.02),
            "b_s": rng.uniform(0.002, 0.01, 16).astype(np.float32),
            "a_z": np.uint8(120),
            "bias": rng.uniform(-1, 1, 16).astype(np.float32)}
    node = helper.make_node("MatMulIntegerToFloat",
                            ["a", "b", "a_s", "b_s", "a_z", "", "bias"], ["y"],
                            domain="com.microsoft")
    yield "matmul_integer_to_float", ms_model(
        node, [("a", U8, [6, 32])], [("y", F32, None)], init), {
        "a": rng.integers(0, 256, size=(6, 32)).astype(np.uint8)}


def qdq_gemm(rng):
    """A classifier head as torchvision exports it and onnxruntime's
    quantizer writes it: x -> Q -> DQ -> Gemm(DQ w per output channel,
    transB, DQ int32 bias) -> Relu -> Q -> DQ -> y."""
    g = Graph()
    nodes, init, param, dq, q = g.nodes, g.init, g.param, g.dq, g.q
    a_scale, a_zero = param("a_scale", np.float32(0.04)), param(
        "a_zero", np.uint8(110))
    x = dq("x_dq", q("x_q", "x", a_scale, a_zero), a_scale, a_zero)
    w = rng.integers(-127, 128, size=(20, 64)).astype(np.int8)
    w_scale = (rng.uniform(0.5, 1.5, size=20) * 0.004).astype(np.float32)
    b = rng.integers(-4000, 4000, size=20).astype(np.int32)
    nodes.append(helper.make_node(
        "Gemm", [x, dq("w_dq", param("w", w), param("w_scale", w_scale),
                       param("w_zero", np.zeros(20, np.int8)), axis=0),
                 dq("b_dq", param("b", b),
                    param("b_scale", (np.float32(0.04) * w_scale)),
                    param("b_zero", np.zeros(20, np.int32)), axis=0)],
        ["m"], transB=1))
    nodes.append(helper.make_node("Relu", ["m"], ["r"]))
    y_scale, y_zero = param("y_scale", np.float32(0.05)), param(
        "y_zero", np.uint8(0))
    dq("y", q("y_q", "r", y_scale, y_zero), y_scale, y_zero)
    model = one_node_model(nodes, [("x", F32, [4, 64])], [("y", F32, None)],
                           init)
    x = rng.uniform(-3, 6, size=(4, 64)).astype(np.float32)
    return "qdq_gemm", model, {"x": x}


if __name__ == "__main__":
    # Options, onnxruntime and the bundles as for the real models' references.
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts" /
                           "reference-outputs"))
    from make_references import write_cases
    write_cases(__doc__, SEED, cases, __file__, optimized=True)
