#!/usr/bin/env python3
"""8-bit quantization of float ONNX models in the three forms users bring,
as onnxruntime's quantizer writes them, with python3-onnx and numpy alone
(no onnxruntime Python package here). It writes OUT_DIR/NAME_qdq.onnx
(NAME_qop, NAME_dyn: the other forms) and a bundle OUT_DIR/NAME_qdq.npz
with the model's reference inputs and onnxruntime-node's outputs on the
quantized model (with its graph optimizations, which run it on its
integer kernels).

  --form qdq (NAME_qdq.*, the default): static quantization calibrated on
    the reference inputs, float ops between DequantizeLinear and
    QuantizeLinear:
  * Weights of Conv, MatMul and Gemm (constant initializers): symmetric
    int8, per output channel (Conv: axis 0; MatMul: the columns, axis 1;
    --per-tensor: one scale each); biases int32 at the input's scale times
    the weights' (a channel's weight scale raised where its bias would
    exceed 2^22 steps: weights all near zero); a Gemm becomes a MatMul by
    its (transposed) weights, then its bias added in float.
  * Activations: asymmetric uint8 per tensor, from the minimum and maximum
    (widened to include zero) each reaches on the calibration inputs, as
    onnxruntime-node computes them on the float model: each product's
    input, and its output after a Relu or Clip that is its only consumer,
    goes through QuantizeLinear then DequantizeLinear; a max pool's input
    too, its output keeping the input's parameters.
  * Everything else (adds, pools, reshapes, ConvTranspose, products of two
    tensors computed at run time such as attention's) stays float between
    the dequantized tensors.

  --form qoperator (NAME_qop.*): the same quantization, the inputs and
    outputs of Add (of two tensors computed at run time),
    GlobalAveragePool and Sigmoid quantized as well, and the data movement
    ops (MaxPool, Flatten, Reshape, Transpose, Squeeze, Unsqueeze) before
    a quantized tensor given their input's parameters; then each
    DequantizeLinear -> op [-> Relu/Clip] -> QuantizeLinear becomes the
    operator that computes it on the 8-bit tensors: QLinearConv (int8
    weights per channel, int32 bias), QLinearMatMul, com.microsoft's
    QLinearAdd, QLinearGlobalAveragePool and QLinearSigmoid (with the
    com.microsoft opset import), and the data movement op itself on the
    uint8 tensor. A Relu or Clip is folded into the output's quantization
    when that clamps as it does. QuantizeLinear and DequantizeLinear stay
    at the model's float edges and around the ops with no QLinear
    operator.

  --form dynamic (NAME_dyn.*): no calibration; each MatMul (or Gemm) by a
    constant float weight becomes DynamicQuantizeLinear(x) ->
    MatMulInteger(x_q, W_q, x_zero, 0) -> Cast to float -> Mul by
    x_scale * w_scale, W_q symmetric int8 per column (--per-tensor: one
    scale). Recurrent ops (GRU, LSTM) and products of two tensors computed
    at run time stay float.

Before quantizing: Constant nodes and Identity nodes of initializers
become initializers, the inputs' dims those of the bundle's inputs, an
opset below 13 is raised to 13 (per-channel DequantizeLinear needs it),
with the shapes onnxruntime-node observes on the reference inputs written
as value_info for the converter's adapters (onnx's shape inference leaves
some unknown, e.g. a Softmax's input in PaddleOCR's recognizer), and a
BatchNormalization after a Conv is folded into the Conv's weights.

Usage: quantize_models.py --node-path NODE_MODULES MODEL.onnx BUNDLE.npz
       OUT_DIR [--name NAME] [--form qdq|qoperator|dynamic] [--per-tensor]
"""
import argparse
import os
import sys

import numpy as np
import onnx
import onnx.version_converter
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts", "reference-outputs"))
from make_references import run_onnxruntime, write_npz  # noqa: E402

PRODUCTS = {"Conv", "MatMul"}
# Ops that only move values: between two quantized tensors of the same
# parameters they run on the 8-bit values as they are.
DATA_MOVEMENT = {"MaxPool", "Flatten", "Reshape", "Transpose", "Squeeze",
                 "Unsqueeze"}
# Ops whose inputs and outputs the QOperator form quantizes as well (with
# the products): onnxruntime has an operator computing each on 8-bit
# tensors.
QLINEAR_OPS = {"Add", "GlobalAveragePool", "Sigmoid"}
# The largest bias, in steps of its scale, a convolution gets.
BIAS_LIMIT = 2 ** 22
FORMS = {"qdq": "_qdq", "qoperator": "_qop", "dynamic": "_dyn"}
MS_DOMAIN = "com.microsoft"


def onnx_type(dtype):
    """The TensorProto element type of a numpy dtype (onnx 1.12 has no
    helper.np_dtype_to_tensor_dtype yet)."""
    if hasattr(helper, "np_dtype_to_tensor_dtype"):
        return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]


def fold_constants(graph):
    """Constant nodes (exporters such as Paddle's write weights that way),
    and Identity nodes of initializers (torch's exporter shares equal
    weights so), as initializers."""
    tensors = {t.name: t for t in graph.initializer}
    overridable = {i.name for i in graph.input}
    outputs = {o.name for o in graph.output}
    nodes = []
    for node in graph.node:
        value = [a for a in node.attribute if a.name == "value"]
        if node.op_type == "Constant" and len(node.attribute) == 1 and value:
            source = value[0].t
        elif (node.op_type == "Identity" and node.input[0] in tensors and
              node.input[0] not in overridable and
              node.output[0] not in outputs):
            source = tensors[node.input[0]]
        else:
            nodes.append(node)
            continue
        tensor = onnx.TensorProto()
        tensor.CopyFrom(source)
        tensor.name = node.output[0]
        graph.initializer.append(tensor)
        tensors[tensor.name] = tensor
    del graph.node[:]
    graph.node.extend(nodes)


def fold_batch_norms(graph):
    """A BatchNormalization (inference form) after a Conv that nothing else
    reads folds into the Conv's weights and bias, as onnxruntime's
    quantizer has it folded before quantizing (Paddle's exporter leaves
    some): else the Conv's output would be quantized before the scaling."""
    inits = {t.name: t for t in graph.initializer}
    producers = {o: n for n in graph.node for o in n.output}
    readers = {}
    for node in graph.node:
        for name in node.input:
            readers[name] = readers.get(name, 0) + 1
    outputs = {o.name for o in graph.output}
    dropped = set()
    for node in graph.node:
        conv = producers.get(node.input[0])
        if node.op_type != "BatchNormalization" or conv is None or \
                conv.op_type != "Conv" or len(node.input) != 5 or \
                len([o for o in node.output if o]) != 1 or \
                readers[node.input[0]] != 1 or node.input[0] in outputs or \
                not all(i in inits for i in list(node.input[1:]) +
                        list(conv.input[1:]) if i):
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if attrs.get("training_mode", 0):
            continue
        gamma, beta, mean, var = (numpy_helper.to_array(inits[i])
                                  .astype(np.float64) for i in node.input[1:])
        w = numpy_helper.to_array(inits[conv.input[1]])
        if w.dtype != np.float32:
            continue
        factor = gamma / np.sqrt(var + attrs.get("epsilon", 1e-5))
        b = numpy_helper.to_array(inits[conv.input[2]]).astype(np.float64) \
            if len(conv.input) > 2 and conv.input[2] else 0.0
        base = conv.name or conv.output[0]
        w_name, b_name = base + "_bn_weights", base + "_bn_bias"
        graph.initializer.extend([
            numpy_helper.from_array(
                (w * factor.reshape([-1] + [1] * (w.ndim - 1)))
                .astype(np.float32), w_name),
            numpy_helper.from_array(
                ((b - mean) * factor + beta).astype(np.float32), b_name)])
        del conv.input[1:]
        conv.input.extend([w_name, b_name])
        conv.output[0] = node.output[0]
        dropped.add(id(node))
    nodes = [n for n in graph.node if id(n) not in dropped]
    del graph.node[:]
    graph.node.extend(nodes)


def observe(model, inputs, node_path, work, only_float=False):
    """Every tensor the nodes compute on `inputs` (the float ones alone
    with `only_float`), as onnxruntime-node computes them: each node's
    outputs made outputs of the graph, with the element types onnx's
    inference gives them (those it cannot type are left out)."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    inferred = onnx.shape_inference.infer_shapes(probe)
    types = {v.name: v.type.tensor_type.elem_type
             for v in list(inferred.graph.value_info) +
             list(inferred.graph.output) + list(inferred.graph.input)}
    present = {o.name for o in probe.graph.output}
    for node in probe.graph.node:
        for output in node.output:
            kind = types.get(output)
            if not output or output in present or not kind or \
                    (only_float and kind != TensorProto.FLOAT):
                continue
            probe.graph.output.append(
                helper.make_tensor_value_info(output, kind, None))
            present.add(output)
    path = os.path.join(work, "observe.onnx")
    onnx.save(probe, path)
    try:
        return run_onnxruntime(node_path, path, inputs)
    finally:
        os.remove(path)


def prepare(model, inputs, node_path, work):
    """Constants as initializers, the inputs' dims those of the calibration
    inputs, batch norms folded into the convolutions before them, and the
    opset raised to 13 where it is lower: per-channel
    DequantizeLinear needs it. The version converter's adapters need some
    shapes (Softmax's, whose axis changes meaning at 13) which onnx's
    inference may leave unknown: the shapes onnxruntime-node observes on the
    inputs are given to it as value_info."""
    graph = model.graph
    for value in graph.input:
        if value.name in inputs:
            dims = value.type.tensor_type.shape.dim
            for dim, size in zip(dims, inputs[value.name].shape):
                dim.Clear()
                dim.dim_value = size
    fold_constants(graph)
    opset = next((o.version for o in model.opset_import
                  if o.domain in ("", "ai.onnx")), 13)
    if opset < 13:
        seen = observe(model, inputs, node_path, work)
        known = {v.name for v in list(graph.input) + list(graph.output)}
        del graph.value_info[:]
        for name, array in seen.items():
            if name not in known:
                graph.value_info.append(helper.make_tensor_value_info(
                    name, onnx_type(array.dtype),
                    array.shape))
        model = onnx.version_converter.convert_version(
            onnx.shape_inference.infer_shapes(model), 13)
        del model.graph.value_info[:]
        fold_constants(model.graph)  # the adapters' own constants
    fold_batch_norms(model.graph)
    return model


def gemm_to_matmul(model):
    """Gemm(x, W, b) with alpha = beta = 1 as MatMul(x, W or W^T) + b."""
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    nodes = []
    for node in graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if (node.op_type != "Gemm" or node.input[1] not in inits or
                attrs.get("alpha", 1.0) != 1.0 or
                attrs.get("beta", 1.0) != 1.0 or attrs.get("transA", 0)):
            nodes.append(node)
            continue
        w = numpy_helper.to_array(inits[node.input[1]])
        if attrs.get("transB", 0):
            w = w.T
        name = node.input[1] + "_matmul"
        graph.initializer.append(
            numpy_helper.from_array(np.ascontiguousarray(w), name))
        has_bias = len(node.input) > 2 and node.input[2]
        product = node.output[0] + "_product" if has_bias else node.output[0]
        nodes.append(helper.make_node("MatMul", [node.input[0], name],
                                      [product], name=node.name + "_matmul"))
        if has_bias:
            nodes.append(helper.make_node("Add", [product, node.input[2]],
                                          [node.output[0]],
                                          name=node.name + "_bias"))
    del graph.node[:]
    graph.node.extend(nodes)


def calibrate(model, inputs, node_path, work):
    """Each float tensor's (min, max) on `inputs`, from onnxruntime-node."""
    outputs = observe(model, inputs, node_path, work, only_float=True)
    ranges = {name: (float(v.min()), float(v.max()))
              for name, v in outputs.items()
              if v.dtype == np.float32 and v.size}
    for name, value in inputs.items():
        if value.dtype == np.float32:
            ranges[name] = (float(value.min()), float(value.max()))
    return ranges


def uint8_parameters(lo, hi):
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = (hi - lo) / 255.0 if hi > lo else 1.0
    zero = int(np.clip(np.rint(-lo / scale), 0, 255))
    return np.float32(scale), np.uint8(zero)


def int8_weights(w, axis, per_tensor, floor=0.0):
    """Symmetric int8 weights: (w_q, scale) with a scale per slice along
    `axis`, or a scalar one with `per_tensor`; no scale below `floor` (a
    scalar or one per slice)."""
    if per_tensor:
        scale = np.array(max(np.abs(w).max() / 127.0, np.max(floor)),
                         np.float32)
        if scale == 0:
            scale = np.array(1.0, np.float32)
        w_q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
        return w_q, scale
    moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
    scale = (np.abs(moved).max(axis=1) / 127.0).astype(np.float32)
    scale[scale == 0] = 1.0
    scale = np.maximum(scale, floor).astype(np.float32)
    shape = [1] * w.ndim
    shape[axis] = -1
    w_q = np.clip(np.rint(w / scale.reshape(shape)), -127, 127) \
        .astype(np.int8)
    return w_q, scale


def quantize(model, ranges, qoperator=False, per_tensor=False):
    """The QDQ form; with `qoperator`, the inputs and outputs of the ops of
    QLINEAR_OPS and the data movement ops between quantized tensors are
    quantized as well, for to_qoperator."""
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    consumers = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    outputs = {o.name for o in graph.output}

    def result_of(node):
        """The tensor whose quantization ends `node`: its output, or that
        of a Relu or Clip that is its only consumer."""
        result = node.output[0]
        users = consumers.get(result, [])
        if len(users) == 1 and users[0].op_type in ("Relu", "Clip") and \
                result not in outputs:
            result = users[0].output[0]
        return result

    activations = set()  # tensors to quantize
    weight_nodes = []
    for node in graph.node:
        if node.op_type not in PRODUCTS or len(node.input) < 2 or \
                node.input[1] not in inits or node.input[0] in inits:
            continue
        w = numpy_helper.to_array(inits[node.input[1]])
        if w.dtype != np.float32 or (node.op_type == "MatMul" and w.ndim != 2):
            continue
        if node.input[0] not in ranges:
            continue
        result = result_of(node)
        if result not in ranges:
            continue
        activations.update([node.input[0], result])
        weight_nodes.append(node)
    if qoperator:
        for node in graph.node:
            if node.op_type not in QLINEAR_OPS or \
                    not all(i in ranges for i in node.input):
                continue
            result = result_of(node) if node.op_type == "Add" \
                else node.output[0]
            if result in ranges:
                activations.update(list(node.input) + [result])

    # A data movement op (in the QDQ form a max pool alone) between two
    # quantized tensors keeps its input's scale and zero point, as
    # onnxruntime's quantizer does: it then runs on the quantized values.
    # Backwards, so that a chain of them quantizes up to its start.
    moving = DATA_MOVEMENT if qoperator else {"MaxPool"}

    def moves(node):
        return node.op_type in moving and len(
            [o for o in node.output if o]) == 1 and node.input[0] in ranges
    for node in reversed(graph.node):
        if moves(node) and node.output[0] in activations:
            activations.add(node.input[0])
    params = {name: uint8_parameters(*ranges[name]) for name in activations}
    for node in graph.node:
        if moves(node) and node.output[0] in params and \
                node.input[0] in params:
            params[node.output[0]] = params[node.input[0]]
    new_inits = []
    renamed = {}  # tensor -> its dequantized copy
    qdq_nodes = {}
    for name in sorted(activations):
        scale, zero = params[name]
        s, z = name + "_scale", name + "_zero"
        new_inits += [numpy_helper.from_array(np.array(scale), s),
                      numpy_helper.from_array(np.array(zero), z)]
        qdq_nodes[name] = [
            helper.make_node("QuantizeLinear", [name, s, z], [name + "_q"],
                             name=name + "_quantize"),
            helper.make_node("DequantizeLinear", [name + "_q", s, z],
                             [name + "_dq"], name=name + "_dequantize")]
        renamed[name] = name + "_dq"

    weight_dq = {}
    for node in weight_nodes:
        w = numpy_helper.to_array(inits[node.input[1]])
        axis = 0 if node.op_type == "Conv" else 1
        b = None
        if node.op_type == "Conv" and len(node.input) > 2 and node.input[2] \
                and node.input[2] in inits:
            b = numpy_helper.to_array(inits[node.input[2]])
            x_scale = params[node.input[0]][0]
        # A channel whose weights are all near zero would get a bias of up
        # to 2^31 steps of its tiny scale: its scale is raised until the
        # bias is at most BIAS_LIMIT steps (integer kernels that sum in f32
        # want sums below 2^24), which costs such weights nothing that
        # matters next to the bias.
        floor = 0.0 if b is None else \
            np.abs(b.astype(np.float64)) / (float(x_scale) * BIAS_LIMIT)
        w_q, w_scale = int8_weights(w, axis, per_tensor, floor)
        per_axis = {} if per_tensor else {"axis": axis}
        base = node.name or node.output[0]
        names = [base + "_w_q", base + "_w_scale", base + "_w_zero"]
        new_inits += [numpy_helper.from_array(w_q, names[0]),
                      numpy_helper.from_array(w_scale, names[1]),
                      numpy_helper.from_array(
                          np.zeros(w_scale.shape, np.int8), names[2])]
        weight_dq[node.name or node.output[0]] = [helper.make_node(
            "DequantizeLinear", names, [base + "_w_dq"],
            name=base + "_w_dequantize", **per_axis)]
        node.input[1] = base + "_w_dq"
        if b is not None:
            b_scale = (np.float32(x_scale) * w_scale).astype(np.float32)
            b_q = np.clip(np.rint(b / b_scale), -2.0 ** 31,
                          2.0 ** 31 - 128).astype(np.int32)
            bnames = [base + "_b_q", base + "_b_scale", base + "_b_zero"]
            new_inits += [numpy_helper.from_array(b_q, bnames[0]),
                          numpy_helper.from_array(b_scale, bnames[1]),
                          numpy_helper.from_array(
                              np.zeros(b_scale.shape, np.int32), bnames[2])]
            weight_dq[node.name or node.output[0]].append(helper.make_node(
                "DequantizeLinear", bnames, [base + "_b_dq"],
                name=base + "_b_dequantize", **{} if per_tensor else
                {"axis": 0}))
            node.input[2] = base + "_b_dq"

    # Consumers read the dequantized copies (the graph's outputs keep
    # their names: the copy feeds them through an Identity).
    nodes = []
    for name in sorted(activations):
        if name in {i.name for i in graph.input}:
            nodes += qdq_nodes[name]
    for node in graph.node:
        nodes += weight_dq.get(node.name or node.output[0], [])
        for i, name in enumerate(node.input):
            if name in renamed:
                node.input[i] = renamed[name]
        nodes.append(node)
        for output in node.output:
            if output in qdq_nodes:
                nodes += qdq_nodes[output]
    for output in graph.output:
        if output.name in renamed:
            nodes.append(helper.make_node("Identity", [renamed[output.name]],
                                          [output.name + "_quantized"]))
            output.name = output.name + "_quantized"
    del graph.node[:]
    graph.node.extend(nodes)
    graph.initializer.extend(new_inits)
    tidy(model)
    return len(weight_nodes)


def tidy(model):
    """Drops the nodes whose outputs nothing reads, then the initializers
    and value_info of tensors no node reads or writes."""
    graph = model.graph
    while True:
        wanted = {o.name for o in graph.output}
        wanted.update(i for n in graph.node for i in n.input)
        nodes = [n for n in graph.node if any(o in wanted for o in n.output)]
        if len(nodes) == len(graph.node):
            break
        del graph.node[:]
        graph.node.extend(nodes)
    used = {i for n in graph.node for i in n.input}
    kept = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    written = {o for n in graph.node for o in n.output}
    kept = [v for v in graph.value_info if v.name in written]
    del graph.value_info[:]
    graph.value_info.extend(kept)


def to_qoperator(model):
    """Rewrites quantize()'s QDQ graph (with `qoperator`) in the QOperator
    form: each QuantizeLinear whose input an op computes from dequantized
    tensors (through a Relu or Clip that the quantization clamps as it
    does) becomes that op's QLinear operator, reading the 8-bit tensors
    and writing the QuantizeLinear's output; the DequantizeLinear nodes
    nothing reads any more go. Returns the count of each operator written."""
    graph = model.graph
    inits = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    producers = {o: n for n in graph.node for o in n.output}
    consumers = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    outputs = {o.name for o in graph.output}
    # DequantizeLinear outputs -> (8-bit tensor, scale, zero point), with
    # constant parameters per tensor (weights and biases per channel too).
    dequantized = {n.output[0]: list(n.input) + [""] * (3 - len(n.input))
                   for n in graph.node if n.op_type == "DequantizeLinear"
                   and all(i in inits for i in n.input[1:])}

    def only_read_by(name, node):
        return name not in outputs and consumers.get(name) == [node]

    def same_parameters(a, b):
        return all(np.array_equal(inits[x], inits[y]) for x, y in
                   zip(a, b))

    def clamps_as(node, scale, zero):
        """Whether quantizing at (scale, zero) to uint8 clamps at least as
        the Relu or Clip `node` does, which it may then replace."""
        lowest = (0.0 - float(zero)) * float(scale)
        highest = (255.0 - float(zero)) * float(scale)
        if node.op_type == "Relu":
            return lowest >= 0.0
        attrs = {a.name: helper.get_attribute_value(a)
                 for a in node.attribute}
        bounds = [attrs.get("min", -np.inf), attrs.get("max", np.inf)]
        for i, name in enumerate(node.input[1:3]):
            if name:
                if name not in inits:
                    return False
                bounds[i] = float(inits[name])
        slack = 1e-6 * max(abs(lowest), abs(highest))
        return lowest >= bounds[0] - slack and highest <= bounds[1] + slack

    def qlinear(core, y_scale, y_zero, y_q):
        """The operator computing `core` on 8-bit tensors into y_q."""
        ins = [dequantized.get(i) for i in core.input]
        name = (core.name or core.output[0]) + "_quant"
        attrs = {a.name: helper.get_attribute_value(a)
                 for a in core.attribute}
        op = core.op_type
        if op == "Conv" and len(ins) >= 2 and ins[0] and ins[1] and \
                ins[1][0] in inits and inits[ins[1][0]].dtype == np.int8:
            bias = []
            if len(ins) > 2 and core.input[2]:
                if not ins[2] or ins[2][0] not in inits or \
                        inits[ins[2][0]].dtype != np.int32:
                    return None
                bias = [ins[2][0]]
            return helper.make_node(
                "QLinearConv", ins[0] + ins[1] + [y_scale, y_zero] + bias,
                [y_q], name=name, **attrs)
        if op == "MatMul" and ins[0] and ins[1]:
            return helper.make_node(
                "QLinearMatMul", ins[0] + ins[1] + [y_scale, y_zero], [y_q],
                name=name)
        if op == "Add" and ins[0] and ins[1]:
            return helper.make_node(
                "QLinearAdd", ins[0] + ins[1] + [y_scale, y_zero], [y_q],
                name=name, domain=MS_DOMAIN)
        if op == "GlobalAveragePool" and ins[0]:
            return helper.make_node(
                "QLinearGlobalAveragePool", ins[0] + [y_scale, y_zero],
                [y_q], name=name, domain=MS_DOMAIN, channels_last=0)
        if op == "Sigmoid" and ins[0]:
            return helper.make_node(
                "QLinearSigmoid", ins[0] + [y_scale, y_zero], [y_q],
                name=name, domain=MS_DOMAIN)
        if op in DATA_MOVEMENT and ins[0] and \
                same_parameters(ins[0][1:], [y_scale, y_zero]) and \
                len([o for o in core.output if o]) == 1:
            return helper.make_node(op, [ins[0][0]] + list(core.input[1:]),
                                    [y_q], name=name, **attrs)
        return None

    replaced = {}  # id of a QuantizeLinear -> its QLinear operator
    dropped = set()  # ids of the nodes it replaces
    for node in graph.node:
        if node.op_type != "QuantizeLinear" or len(node.input) < 3 or \
                not all(i in inits for i in node.input[1:]) or \
                inits[node.input[2]].dtype != np.uint8 or \
                inits[node.input[1]].size != 1:
            continue
        core = producers.get(node.input[0])
        if core is None or not only_read_by(node.input[0], node):
            continue
        chain = [core]
        if core.op_type in ("Relu", "Clip") and core.input[0] in producers \
                and only_read_by(core.input[0], core) and \
                clamps_as(core, inits[node.input[1]], inits[node.input[2]]):
            core = producers[core.input[0]]
            chain.append(core)
        new = qlinear(core, node.input[1], node.input[2], node.output[0])
        if new is not None:
            replaced[id(node)] = new
            dropped.update(id(n) for n in chain)
    nodes = []
    for node in graph.node:
        if id(node) in replaced:
            nodes.append(replaced[id(node)])
        elif id(node) not in dropped:
            nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)
    tidy(model)
    if any(n.domain == MS_DOMAIN for n in graph.node) and \
            not any(o.domain == MS_DOMAIN for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(MS_DOMAIN, 1))
    counts = {}
    for new in replaced.values():
        counts[new.op_type] = counts.get(new.op_type, 0) + 1
    return counts


def quantize_dynamic(model, per_tensor=False):
    """Each MatMul by a constant float 2-D weight W as onnxruntime's dynamic
    quantization writes it: DynamicQuantizeLinear(x) -> MatMulInteger(x_q,
    W_q, x_zero, 0) -> Cast to float -> Mul by x_scale * w_scale (one
    DynamicQuantizeLinear per input tensor, whatever reads it)."""
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    new_inits = []
    quantized = {}  # input -> its DynamicQuantizeLinear's outputs
    nodes = []
    count = 0
    for node in graph.node:
        if node.op_type != "MatMul" or node.input[1] not in inits or \
                node.input[0] in inits:
            nodes.append(node)
            continue
        w = numpy_helper.to_array(inits[node.input[1]])
        if w.dtype != np.float32 or w.ndim != 2:
            nodes.append(node)
            continue
        count += 1
        x = node.input[0]
        if x not in quantized:
            quantized[x] = [x + "_dq_q", x + "_dq_scale", x + "_dq_zero"]
            nodes.append(helper.make_node(
                "DynamicQuantizeLinear", [x], quantized[x],
                name=x + "_dynamic_quantize"))
        x_q, x_scale, x_zero = quantized[x]
        base = node.name or node.output[0]
        w_q, w_scale = int8_weights(w, 1, per_tensor)
        names = [base + "_w_q", base + "_w_scale", base + "_w_zero"]
        new_inits += [numpy_helper.from_array(w_q, names[0]),
                      numpy_helper.from_array(w_scale, names[1]),
                      numpy_helper.from_array(np.array(0, np.int8), names[2])]
        nodes += [
            helper.make_node("MatMulInteger", [x_q, names[0], x_zero,
                                               names[2]],
                             [base + "_sums"], name=base + "_integer"),
            helper.make_node("Cast", [base + "_sums"], [base + "_sums_f"],
                             to=TensorProto.FLOAT, name=base + "_cast"),
            helper.make_node("Mul", [x_scale, names[1]], [base + "_scales"],
                             name=base + "_scales"),
            helper.make_node("Mul", [base + "_sums_f", base + "_scales"],
                             list(node.output), name=base + "_rescale")]
    del graph.node[:]
    graph.node.extend(nodes)
    graph.initializer.extend(new_inits)
    tidy(model)
    return count


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--node-path", required=True)
    parser.add_argument("model")
    parser.add_argument("bundle")
    parser.add_argument("out")
    parser.add_argument("--name")
    parser.add_argument("--form", choices=sorted(FORMS), default="qdq")
    parser.add_argument("--per-tensor", action="store_true",
                        help="one scale per weight tensor, not per channel")
    args = parser.parse_args()
    name = args.name or os.path.splitext(os.path.basename(args.model))[0]
    model = onnx.load(args.model)
    bundle = np.load(args.bundle)
    graph_inputs = {i.name for i in model.graph.input} - \
        {t.name for t in model.graph.initializer}
    inputs = {k: bundle[k] for k in bundle.files if k in graph_inputs}
    os.makedirs(args.out, exist_ok=True)
    model = prepare(model, inputs, args.node_path, args.out)
    gemm_to_matmul(model)
    if args.form == "dynamic":
        count = quantize_dynamic(model, args.per_tensor)
        what = "%d products in 8 bits" % count
    else:
        ranges = calibrate(model, inputs, args.node_path, args.out)
        count = quantize(model, ranges, args.form == "qoperator",
                         args.per_tensor)
        what = "%d products in 8 bits" % count
        if args.form == "qoperator":
            counts = to_qoperator(model)
            what += " (%s)" % ", ".join("%d %s" % (counts[op], op)
                                        for op in sorted(counts))
    path = os.path.join(args.out, name + FORMS[args.form] + ".onnx")
    onnx.save(model, path)
    # The reference: onnxruntime's integer kernels (graph optimizations on,
    # which fuse the QDQ pairs), as its users run the model; node by node in
    # float, each quantization rounds values the integer kernels do not.
    outputs = run_onnxruntime(args.node_path, path, inputs, optimized=True)
    write_npz(os.path.join(args.out, name + FORMS[args.form] + ".npz"),
              {**inputs, **outputs})
    print("quantize_models: %s, %s" % (path, what))


if __name__ == "__main__":
    sys.exit(main())
