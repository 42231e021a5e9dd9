#!/usr/bin/env python3
"""Static 8-bit quantization of float ONNX models in the QDQ form, as
onnxruntime's quantizer writes it, with python3-onnx and numpy alone (no
onnxruntime Python package here): calibrated on the model's reference
inputs, it writes MODEL_qdq.onnx and a bundle MODEL_qdq.npz with those
inputs and onnxruntime-node's outputs on the quantized model (with its
graph optimizations, which run the QDQ pairs on its integer kernels).

  * Weights of Conv, MatMul and Gemm (constant initializers): symmetric
    int8, per output channel (Conv: axis 0; MatMul: the columns, axis 1);
    biases int32 at the input's scale times the weights'; a Gemm becomes a
    MatMul by its (transposed) weights, then its bias added in float.
  * Activations: asymmetric uint8 per tensor, from the minimum and maximum
    (widened to include zero) each reaches on the calibration inputs, as
    onnxruntime-node computes them on the float model: each product's
    input, and its output after a Relu or Clip that is its only consumer,
    goes through QuantizeLinear then DequantizeLinear.
  * Everything else (pools, adds, reshapes) stays float between the
    dequantized tensors.

Usage: quantize_models.py --node-path NODE_MODULES MODEL.onnx BUNDLE.npz
       OUT_DIR [--name NAME]
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


def prepare(model, inputs):
    """Constant nodes' tensors as initializers (exporters such as Paddle's
    write weights that way), the inputs' dims those of the calibration
    inputs, and the opset raised to 13 where it is lower: per-channel
    DequantizeLinear needs it."""
    graph = model.graph
    for value in graph.input:
        if value.name in inputs:
            dims = value.type.tensor_type.shape.dim
            for dim, size in zip(dims, inputs[value.name].shape):
                dim.Clear()
                dim.dim_value = size
    nodes = []
    for node in graph.node:
        value = [a for a in node.attribute if a.name == "value"]
        if node.op_type == "Constant" and len(node.attribute) == 1 and value:
            tensor = onnx.TensorProto()
            tensor.CopyFrom(value[0].t)
            tensor.name = node.output[0]
            graph.initializer.append(tensor)
            continue
        nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)
    opset = next((o.version for o in model.opset_import
                  if o.domain in ("", "ai.onnx")), 13)
    if opset < 13:
        # The converter's adapters need the shapes (Softmax's axis).
        model = onnx.version_converter.convert_version(
            onnx.shape_inference.infer_shapes(model), 13)
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
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    inferred = onnx.shape_inference.infer_shapes(probe)
    types = {v.name: v.type.tensor_type.elem_type
             for v in list(inferred.graph.value_info) +
             list(inferred.graph.output) + list(inferred.graph.input)}
    present = {o.name for o in probe.graph.output}
    for node in probe.graph.node:
        for output in node.output:
            if output and output not in present and \
                    types.get(output) == TensorProto.FLOAT:
                probe.graph.output.append(
                    helper.make_tensor_value_info(output, TensorProto.FLOAT,
                                                  None))
                present.add(output)
    path = os.path.join(work, "calibration.onnx")
    onnx.save(probe, path)
    outputs = run_onnxruntime(node_path, path, inputs)
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


def quantize(model, ranges):
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    consumers = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    outputs = {o.name for o in graph.output}
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
        result = node.output[0]
        users = consumers.get(result, [])
        if len(users) == 1 and users[0].op_type in ("Relu", "Clip") and \
                result not in outputs:
            result = users[0].output[0]
        if result not in ranges:
            continue
        activations.update([node.input[0], result])
        weight_nodes.append(node)

    # A max pool between two quantized tensors keeps its input's scale and
    # zero point, as onnxruntime's quantizer does: the pool then runs on
    # the quantized values.
    producers = {o: n for n in graph.node for o in n.output}
    for node in graph.node:
        if node.op_type == "MaxPool" and node.input[0] in ranges and \
                node.output[0] in activations:
            activations.add(node.input[0])
    params = {name: uint8_parameters(*ranges[name]) for name in activations}
    for name in sorted(activations):
        node = producers.get(name)
        if node is not None and node.op_type == "MaxPool" and \
                node.input[0] in params:
            params[name] = params[node.input[0]]
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
        moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
        w_scale = (np.abs(moved).max(axis=1) / 127.0).astype(np.float32)
        w_scale[w_scale == 0] = 1.0
        shape = [1] * w.ndim
        shape[axis] = -1
        w_q = np.clip(np.rint(w / w_scale.reshape(shape)), -127, 127) \
            .astype(np.int8)
        base = node.name or node.output[0]
        names = [base + "_w_q", base + "_w_scale", base + "_w_zero"]
        new_inits += [numpy_helper.from_array(w_q, names[0]),
                      numpy_helper.from_array(w_scale, names[1]),
                      numpy_helper.from_array(
                          np.zeros(w_scale.shape, np.int8), names[2])]
        weight_dq[node.name or node.output[0]] = [helper.make_node(
            "DequantizeLinear", names, [base + "_w_dq"], axis=axis,
            name=base + "_w_dequantize")]
        node.input[1] = base + "_w_dq"
        if node.op_type == "Conv" and len(node.input) > 2 and node.input[2] \
                and node.input[2] in inits:
            b = numpy_helper.to_array(inits[node.input[2]])
            x_scale = params[node.input[0]][0]
            b_scale = (np.float32(x_scale) * w_scale).astype(np.float32)
            b_q = np.rint(b / b_scale).astype(np.int32)
            bnames = [base + "_b_q", base + "_b_scale", base + "_b_zero"]
            new_inits += [numpy_helper.from_array(b_q, bnames[0]),
                          numpy_helper.from_array(b_scale, bnames[1]),
                          numpy_helper.from_array(
                              np.zeros(b_scale.shape, np.int32), bnames[2])]
            weight_dq[node.name or node.output[0]].append(helper.make_node(
                "DequantizeLinear", bnames, [base + "_b_dq"], axis=0,
                name=base + "_b_dequantize"))
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
    used = {i for n in graph.node for i in n.input}
    kept = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    return len(weight_nodes)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--node-path", required=True)
    parser.add_argument("model")
    parser.add_argument("bundle")
    parser.add_argument("out")
    parser.add_argument("--name")
    args = parser.parse_args()
    name = args.name or os.path.splitext(os.path.basename(args.model))[0]
    model = onnx.load(args.model)
    bundle = np.load(args.bundle)
    graph_inputs = {i.name for i in model.graph.input} - \
        {t.name for t in model.graph.initializer}
    inputs = {k: bundle[k] for k in bundle.files if k in graph_inputs}
    os.makedirs(args.out, exist_ok=True)
    model = prepare(model, inputs)
    gemm_to_matmul(model)
    ranges = calibrate(model, inputs, args.node_path, args.out)
    count = quantize(model, ranges)
    path = os.path.join(args.out, name + "_qdq.onnx")
    onnx.save(model, path)
    os.remove(os.path.join(args.out, "calibration.onnx"))
    # The reference: onnxruntime's integer kernels (graph optimizations on,
    # which fuse the QDQ pairs), as its users run the model; node by node in
    # float, each quantization rounds values the integer kernels do not.
    outputs = run_onnxruntime(args.node_path, path, inputs, optimized=True)
    write_npz(os.path.join(args.out, name + "_qdq.npz"), {**inputs, **outputs})
    print("quantize_models: %s, %d products in 8 bits" % (path, count))


if __name__ == "__main__":
    sys.exit(main())
