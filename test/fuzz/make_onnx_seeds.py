#!/usr/bin/env python3
"""Writes the seed corpus of the ONNX loader's fuzz target
(test/fuzz/corpus/onnx): small models that reach the importer's main paths
(initializers, symbolic dims, shape inputs, subgraphs, recurrences,
quantization, external data, the ml domain). Run it with /usr/bin/python3
after changing it and commit what it writes."""
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "onnx")
F = TensorProto.FLOAT


def value(name, dims, dtype=F):
    return helper.make_tensor_value_info(name, dtype, dims)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def model(name, nodes, inputs, outputs, initializers=(), opset=17,
          extra_opsets=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    opsets = [helper.make_opsetid("", opset)] + list(extra_opsets)
    m = helper.make_model(graph, opset_imports=opsets, producer_name="seed")
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


def body(name, nodes, inputs, outputs):
    return helper.make_graph(nodes, name, inputs, outputs)


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
    model("conv_relu",
          [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1],
                            strides=[1, 1]),
           helper.make_node("Relu", ["c"], ["y"])],
          [value("x", [1, 2, "H", "W"])], [value("y", None)],
          [const("w", w), const("b", np.zeros(4, np.float32))])
    model("matmul_softmax",
          [helper.make_node("MatMul", ["x", "m"], ["p"]),
           helper.make_node("Add", ["p", "c"], ["q"]),
           helper.make_node("Softmax", ["q"], ["y"], axis=-1)],
          [value("x", ["S", 3])], [value("y", None)],
          [const("m", np.ones((3, 5), np.float32)),
           const("c", np.ones(5, np.float32))])
    model("reshape_split_gather",
          [helper.make_node("Shape", ["x"], ["s"]),
           helper.make_node("Reshape", ["x", "flat"], ["r"]),
           helper.make_node("Split", ["r", "parts"], ["a", "b"], axis=0),
           helper.make_node("Gather", ["a", "i"], ["g"], axis=0),
           helper.make_node("Concat", ["g", "b"], ["y"], axis=0)],
          [value("x", [2, 3])], [value("y", None), value("s", None)],
          [const("flat", np.array([-1], np.int64)),
           const("parts", np.array([2, 4], np.int64)),
           const("i", np.array([1, 0], np.int64))])
    model("slice_pad_resize",
          [helper.make_node("Slice", ["x", "st", "en", "ax"], ["s"]),
           helper.make_node("Pad", ["s", "pads"], ["p"], mode="reflect"),
           helper.make_node("Resize", ["p", "", "scales"], ["y"],
                            mode="linear")],
          [value("x", [1, 1, 6, 6])], [value("y", None)],
          [const("st", np.array([1], np.int64)),
           const("en", np.array([5], np.int64)),
           const("ax", np.array([2], np.int64)),
           const("pads", np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64)),
           const("scales", np.array([1, 1, 2, 2], np.float32))])
    model("lstm",
          [helper.make_node("LSTM", ["x", "w", "r"], ["y", "h"],
                            hidden_size=2)],
          [value("x", ["T", 1, 3])], [value("y", None), value("h", None)],
          [const("w", rng.standard_normal((1, 8, 3)).astype(np.float32)),
           const("r", rng.standard_normal((1, 8, 2)).astype(np.float32))])
    then_branch = body("then", [helper.make_node("Neg", ["x"], ["t"])], [],
                       [value("t", None)])
    else_branch = body("else", [helper.make_node("Abs", ["x"], ["e"])], [],
                       [value("e", None)])
    model("if",
          [helper.make_node("If", ["c"], ["y"], then_branch=then_branch,
                            else_branch=else_branch)],
          [value("c", [], TensorProto.BOOL), value("x", [2])],
          [value("y", None)])
    scan_body = body(
        "step", [helper.make_node("Add", ["s", "v"], ["s2"]),
                 helper.make_node("Identity", ["s2"], ["o"])],
        [value("s", [2]), value("v", [2])], [value("s2", [2]), value("o", [2])])
    model("scan",
          [helper.make_node("Scan", ["init", "xs"], ["last", "all"],
                            num_scan_inputs=1, body=scan_body)],
          [value("init", [2]), value("xs", ["T", 2])],
          [value("last", None), value("all", None)])
    loop_body = body(
        "iteration", [helper.make_node("Identity", ["cond"], ["cond2"]),
                      helper.make_node("Mul", ["acc", "two"], ["acc2"])],
        [value("i", [], TensorProto.INT64), value("cond", [], TensorProto.BOOL),
         value("acc", [1])],
        [value("cond2", [], TensorProto.BOOL), value("acc2", [1])])
    model("loop",
          [helper.make_node("Constant", [], ["two"],
                            value=const("", np.array([2.0], np.float32))),
           helper.make_node("Loop", ["n", "", "a"], ["y"], body=loop_body)],
          [value("n", [], TensorProto.INT64), value("a", [1])],
          [value("y", None)])
    model("quantized",
          [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
           helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])],
          [value("x", [4])], [value("y", None)],
          [const("s", np.array(0.1, np.float32)),
           const("z", np.array(3, np.uint8))])
    external = const("w", np.ones((2, 2), np.float32))
    external.ClearField("raw_data")
    external.data_location = TensorProto.EXTERNAL
    for key, val in (("location", "weights.bin"), ("offset", "0"),
                     ("length", "16")):
        entry = external.external_data.add()
        entry.key, entry.value = key, val
    model("external_data", [helper.make_node("MatMul", ["x", "w"], ["y"])],
          [value("x", [1, 2])], [value("y", None)], [external])
    model("ml_classifier",
          [helper.make_node("LinearClassifier", ["x"], ["label", "scores"],
                            domain="ai.onnx.ml", classlabels_ints=[0, 1],
                            coefficients=[1.0, -1.0, 0.5, 0.5],
                            intercepts=[0.0, 0.1])],
          [value("x", ["N", 2])],
          [value("label", None, TensorProto.INT64), value("scores", None)],
          extra_opsets=[helper.make_opsetid("ai.onnx.ml", 3)])
    model("reduce_topk_cast",
          [helper.make_node("ReduceMean", ["x"], ["m"], axes=[1],
                            keepdims=1),
           helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1),
           helper.make_node("Cast", ["i"], ["f"], to=F),
           helper.make_node("Where", ["c", "v", "f"], ["y"])],
          [value("x", [2, 5]), value("c", [2, 2], TensorProto.BOOL)],
          [value("y", None), value("m", None)],
          [const("k", np.array([2], np.int64))], opset=13)


if __name__ == "__main__":
    main()
