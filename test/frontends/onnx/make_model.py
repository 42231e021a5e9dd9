#!/usr/bin/env python3
"""Writes small one-node ONNX models for the frontend tests.

The Debian node tests stop at opset 17; the cases here cover later opsets
(Resize-18/19 attributes, DFT-20's axis input) and attribute combinations
the node tests lack. Usage: make_model.py NAME OUTPUT.onnx (a model with
reference data also writes OUTPUT.npz)
"""
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F32 = TensorProto.FLOAT
I64 = TensorProto.INT64


def const(name, values, dtype):
    return numpy_helper.from_array(np.array(values, dtype=dtype), name)


def one_node(op, opset, inputs, outputs, initializers=(), **attributes):
    """inputs/outputs: (name, elem_type, shape) for graph inputs; names in
    `initializers` are constants."""
    init_names = {t.name for t in initializers}
    node = helper.make_node(op, [i[0] for i in inputs], [o[0] for o in outputs],
                            **attributes)
    graph = helper.make_graph(
        [node], op.lower(),
        [helper.make_tensor_value_info(*i) for i in inputs
         if i[0] and i[0] not in init_names],
        [helper.make_tensor_value_info(*o) for o in outputs],
        list(initializers))
    return helper.make_model(graph, ir_version=8,
                             opset_imports=[helper.make_opsetid("", opset)])


def resize18(**attributes):
    """Resize-18 of a 1x1x4x6 input to sizes [3, 3] on axes (2, 3)."""
    return one_node(
        "Resize", 18,
        [("X", F32, [1, 1, 4, 6]), ("", F32, None), ("", F32, None),
         ("sizes", I64, [2])],
        [("Y", F32, None)], [const("sizes", [3, 3], np.int64)],
        axes=[2, 3], **attributes)


def gridsample16(**attributes):
    """GridSample-16 of a 1x1x3x3 image at a 1x2x2 grid."""
    return one_node("GridSample", 16,
                    [("x", F32, [1, 1, 3, 3]), ("grid", F32, [1, 2, 2, 2])],
                    [("y", F32, [1, 1, 2, 2])], **attributes)


MODELS = {
    "mish18": lambda: one_node("Mish", 18, [("x", F32, [2, 5])],
                               [("y", F32, [2, 5])]),
    "gridsample_mirror": lambda: gridsample16(padding_mode="mirror"),
    "gridsample_linear16": lambda: gridsample16(mode="linear"),
    "resize18_not_larger": lambda: resize18(
        mode="linear", keep_aspect_ratio_policy="not_larger"),
    "resize18_not_smaller": lambda: resize18(
        mode="nearest", keep_aspect_ratio_policy="not_smaller"),
    "resize18_antialias_down": lambda: resize18(mode="linear", antialias=1),
    "resize18_antialias_nearest": lambda: resize18(mode="nearest",
                                                   antialias=1),
    "resize19_symmetric": lambda: one_node(
        "Resize", 19,
        [("X", F32, [1, 1, 4, 5]), ("", F32, None), ("scales", F32, [4])],
        [("Y", F32, None)], [const("scales", [1, 1, 0.6, 0.6], np.float32)],
        mode="linear", coordinate_transformation_mode="half_pixel_symmetric"),
    "resize18_crop_axes": lambda: one_node(
        "Resize", 18,
        [("X", F32, [1, 1, 4, 6]), ("roi", F32, [2]), ("", F32, None),
         ("sizes", I64, [1])],
        [("Y", F32, None)],
        [const("roi", [0.25, 0.75], np.float32),
         const("sizes", [3], np.int64)],
        axes=[-1], mode="linear",
        coordinate_transformation_mode="tf_crop_and_resize",
        extrapolation_value=-1.0),
    # DFT-17 of 4 real samples, onesided: 3 frequencies.
    "dft17_small": lambda: one_node(
        "DFT", 17, [("x", F32, [1, 4, 1])], [("y", F32, None)], onesided=1),
    # DFT-17 of a real signal zero-padded to 12 samples, onesided.
    "dft17_length_onesided": lambda: one_node(
        "DFT", 17,
        [("x", F32, [2, 10, 1]), ("dft_length", I64, [])],
        [("y", F32, None)], [const("dft_length", 12, np.int64)],
        axis=1, onesided=1),
    # DFT-20: the axis is an input (here -2, the last signal axis), the
    # signal truncated to 4 samples, inverse.
    "dft20_axis_inverse": lambda: one_node(
        "DFT", 20,
        [("x", F32, [2, 3, 6, 2]), ("dft_length", I64, []),
         ("axis", I64, [])],
        [("y", F32, None)],
        [const("dft_length", 4, np.int64), const("axis", -2, np.int64)],
        inverse=1),
    # STFT with a window computed at run time and a symbolic signal length.
    "stft_runtime_window": lambda: one_node(
        "STFT", 17,
        [("signal", F32, [1, "L", 1]), ("frame_step", I64, []),
         ("window", F32, [8])],
        [("output", F32, None)], [const("frame_step", 4, np.int64)]),
    # QLinearConv-10 with per-output-channel kernel scales and zero points,
    # an i32 bias, strides and padding; i8 in and out.
    "qlinearconv_per_channel": lambda: one_node(
        "QLinearConv", 10,
        [("x", TensorProto.INT8, [1, 2, 5, 5]), ("x_scale", F32, []),
         ("x_zero_point", TensorProto.INT8, []),
         ("w", TensorProto.INT8, [3, 2, 3, 3]), ("w_scale", F32, [3]),
         ("w_zero_point", TensorProto.INT8, [3]), ("y_scale", F32, []),
         ("y_zero_point", TensorProto.INT8, []),
         ("B", TensorProto.INT32, [3])],
        [("y", TensorProto.INT8, None)],
        [const("x_scale", 0.05, np.float32),
         const("x_zero_point", -3, np.int8),
         const("w_scale", [0.01, 0.02, 0.005], np.float32),
         const("w_zero_point", [1, 0, -2], np.int8),
         const("y_scale", 0.04, np.float32),
         const("y_zero_point", 5, np.int8),
         const("B", [100, -50, 7], np.int32)],
        strides=[2, 2], pads=[1, 1, 1, 1]),
}


def nonzero_float():
    """NonZero of a float tensor of unknown shape."""
    return one_node("NonZero", 13, [("x", F32, ["H", "W"])],
                    [("y", I64, None)])


MODELS["nonzero_float"] = nonzero_float


def external_data(offset="8", length="16", location="weights.bin"):
    """Add of an input and a 2x2 initializer [[1, 2], [3, 4]] whose values
    are in an external file (after 8 bytes of something else)."""
    w = numpy_helper.from_array(np.array([[1, 2], [3, 4]], np.float32), "w")
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", offset),
                       ("length", length)):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    return one_node("Add", 13, [("x", F32, [2, 2]), ("w", F32, [2, 2])],
                    [("y", F32, [2, 2])], [w])


MODELS["external_data"] = external_data
MODELS["external_bad_offset"] = lambda: external_data(offset="eight")
MODELS["external_negative_length"] = lambda: external_data(length="-16")
MODELS["external_too_long"] = lambda: external_data(length="1000")
MODELS["external_escape"] = lambda: external_data(location="../weights.bin")


def squeeze_symbolic():
    """Squeeze of an axis whose dim is a symbol."""
    return one_node("Squeeze", 13, [("x", F32, [3, "K"]), ("axes", I64, [1])],
                    [("y", F32, None)], [const("axes", [1], np.int64)])


def relu_minus_one():
    """Relu of an input whose first dim is written -1, as Kaldi and
    TensorFlow exporters write an unknown dim."""
    return one_node("Relu", 13, [("x", F32, [-1, 4])], [("y", F32, None)])


MODELS["relu_minus_one"] = relu_minus_one


def add_symbolic():
    """Add of two inputs whose dims are different symbols."""
    return one_node("Add", 14, [("a", F32, ["A", 2]), ("b", F32, ["B", 2])],
                    [("c", F32, None)])


def expand_where_shape():
    """Expand of x (N, 1, K) to the shape torch's expand(N, 3, K) exports:
    the shape's -1 entries (none here) replaced by 1 through Equal, Where
    and ConstantOfShape."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["n"], axis=0),
        helper.make_node("Gather", ["shape", "two"], ["k"], axis=0),
        helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
        helper.make_node("Unsqueeze", ["k", "axes"], ["k1"]),
        helper.make_node("Concat", ["n1", "three", "k1"], ["target"], axis=0),
        helper.make_node("ConstantOfShape", ["rank"], ["ones"],
                         value=helper.make_tensor("one", I64, [1], [1])),
        helper.make_node("Mul", ["ones", "minus_one"], ["minus_ones"]),
        helper.make_node("Equal", ["target", "minus_ones"], ["unknown"]),
        helper.make_node("Where", ["unknown", "ones", "target"], ["sizes"]),
        helper.make_node("Expand", ["x", "sizes"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "expand_where_shape",
        [helper.make_tensor_value_info("x", F32, ["N", 1, "K"])],
        [helper.make_tensor_value_info("y", F32, None)],
        [const("zero", 0, np.int64), const("two", 2, np.int64),
         const("axes", [0], np.int64), const("three", [3], np.int64),
         const("rank", [3], np.int64), const("minus_one", -1, np.int64)])
    return helper.make_model(graph, ir_version=8,
                             opset_imports=[helper.make_opsetid("", 17)])


def if_dim_equal():
    """If dim 1 of x is 1, squeeze it, else keep x: branches of different
    ranks on a comparison of dims."""
    shape = helper.make_node("Shape", ["x"], ["shape"])
    dim = helper.make_node("Gather", ["shape", "one"], ["dim"], axis=0)
    cond = helper.make_node("Equal", ["dim", "one"], ["cond"])
    then_graph = helper.make_graph(
        [helper.make_node("Squeeze", ["x", "axes"], ["squeezed"])], "then",
        [], [helper.make_tensor_value_info("squeezed", F32, None)])
    else_graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["same"])], "else",
        [], [helper.make_tensor_value_info("same", F32, None)])
    branch = helper.make_node("If", ["cond"], ["y"], then_branch=then_graph,
                              else_branch=else_graph)
    graph = helper.make_graph(
        [shape, dim, cond, branch], "if_dim_equal",
        [helper.make_tensor_value_info("x", F32, ["N", "K"])],
        [helper.make_tensor_value_info("y", F32, None)],
        [const("one", 1, np.int64), const("axes", [1], np.int64)])
    return helper.make_model(graph, ir_version=8,
                             opset_imports=[helper.make_opsetid("", 16)])


def if_branch_squeeze():
    """If on a boolean input: squeeze axis 1 of x, or sum over it. Only the
    squeezing branch needs that dim to be 1."""
    then_graph = helper.make_graph(
        [helper.make_node("Squeeze", ["x", "axes"], ["squeezed"])], "then",
        [], [helper.make_tensor_value_info("squeezed", F32, None)])
    else_graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["x", "axes"], ["summed"],
                          keepdims=0)], "else",
        [], [helper.make_tensor_value_info("summed", F32, None)])
    branch = helper.make_node("If", ["c"], ["y"], then_branch=then_graph,
                              else_branch=else_graph)
    graph = helper.make_graph(
        [branch], "if_branch_squeeze",
        [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x", F32, ["N", "K"])],
        [helper.make_tensor_value_info("y", F32, None)],
        [const("axes", [1], np.int64)])
    return helper.make_model(graph, ir_version=8,
                             opset_imports=[helper.make_opsetid("", 16)])


def random_normal():
    """RandomNormal of 20000 draws, mean 1 and scale 2."""
    node = helper.make_node("RandomNormal", [], ["y"], shape=[100, 200],
                            mean=1.0, scale=2.0)
    graph = helper.make_graph(
        [node], "random_normal", [],
        [helper.make_tensor_value_info("y", F32, [100, 200])])
    return helper.make_model(graph, ir_version=8,
                             opset_imports=[helper.make_opsetid("", 16)])


def sequence_at_input():
    """SequenceAt of [x, y, z] at a position given as a graph input, and
    SequenceInsert of w there."""
    construct = helper.make_node("SequenceConstruct", ["x", "y", "z"], ["s"])
    at = helper.make_node("SequenceAt", ["s", "pos"], ["picked"])
    insert = helper.make_node("SequenceInsert", ["s", "w", "pos"], ["t"])
    last = helper.make_node("SequenceAt", ["t", "minus_one"], ["last"])
    graph = helper.make_graph(
        [construct, at, insert, last], "sequence_at_input",
        [helper.make_tensor_value_info(n, F32, [2]) for n in "xyzw"] +
        [helper.make_tensor_value_info("pos", I64, [])],
        [helper.make_tensor_value_info("picked", F32, [2]),
         helper.make_tensor_value_info("last", F32, [2])],
        [const("minus_one", -1, np.int64)])
    return helper.make_model(graph, ir_version=8,
                             opset_imports=[helper.make_opsetid("", 16)])


def lstm_state_batch():
    """An LSTM whose initial state has its own symbolic batch."""
    rng = np.random.default_rng(3)
    w = rng.standard_normal((1, 8, 3)).astype(np.float32)
    r = rng.standard_normal((1, 8, 2)).astype(np.float32)
    return one_node(
        "LSTM", 14,
        [("x", F32, ["T", "B", 3]), ("w", F32, [1, 8, 3]),
         ("r", F32, [1, 8, 2]), ("", F32, None), ("", F32, None),
         ("h0", F32, [1, "C", 2])],
        [("y", F32, None)],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(r, "r")],
        hidden_size=2)


def tf_loop():
    """A recurrence as TensorFlow's while loops export it: a Loop over
    range(len(X)) whose body gathers X's frame at its iteration number,
    h = tanh(x_t W + h R), and stacks h. With its inputs and outputs for 10
    frames, computed in float64."""
    channels, hidden, frames = 3, 4, 10
    rng = np.random.default_rng(0)
    w = rng.standard_normal((channels, hidden)).astype(np.float32)
    r = (rng.standard_normal((hidden, hidden)) * 0.3).astype(np.float32)
    body = helper.make_graph([
        helper.make_node("Gather", ["X", "i"], ["x_t"], axis=0),
        helper.make_node("MatMul", ["x_t", "W"], ["xw"]),
        helper.make_node("MatMul", ["h", "R"], ["hr"]),
        helper.make_node("Add", ["xw", "hr"], ["s"]),
        helper.make_node("Tanh", ["s"], ["h2"]),
        helper.make_node("Identity", ["cond"], ["cond_out"]),
        helper.make_node("Identity", ["h2"], ["y"]),
    ], "body",
        [helper.make_tensor_value_info("i", I64, []),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h", F32, [1, hidden])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h2", F32, [1, hidden]),
         helper.make_tensor_value_info("y", F32, [1, hidden])])
    graph = helper.make_graph([
        helper.make_node("Shape", ["X"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["M"], axis=0),
        helper.make_node("Loop", ["M", "", "h0"], ["hT", "ys"], body=body),
        helper.make_node("Squeeze", ["ys", "one"], ["Y"]),
    ], "tf_loop",
        [helper.make_tensor_value_info("X", F32, ["S", channels])],
        [helper.make_tensor_value_info("Y", F32, ["S", hidden])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(r, "R"),
         const("h0", np.zeros((1, hidden)), np.float32),
         const("zero", 0, np.int64), const("one", [1], np.int64)])
    model = helper.make_model(graph, ir_version=8,
                              opset_imports=[helper.make_opsetid("", 17)])
    x = rng.standard_normal((frames, channels)).astype(np.float32)
    h, ys = np.zeros((1, hidden)), []
    for t in range(frames):
        h = np.tanh(x[t:t + 1].astype(np.float64) @ w + h @ r)
        ys.append(h[0])
    return model, {"X": x, "Y": np.array(ys, np.float32)}


MODELS["tf_loop"] = tf_loop
MODELS["if_dim_equal"] = if_dim_equal
MODELS["expand_where_shape"] = expand_where_shape
MODELS["if_branch_squeeze"] = if_branch_squeeze
MODELS["random_normal"] = random_normal
MODELS["sequence_at_input"] = sequence_at_input
MODELS["lstm_state_batch"] = lstm_state_batch
MODELS["squeeze_symbolic"] = squeeze_symbolic
MODELS["add_symbolic"] = add_symbolic


def main():
    name, output = sys.argv[1], sys.argv[2]
    made = MODELS[name]()
    # A model with its inputs and reference outputs: those go to the npz
    # named after the model.
    if isinstance(made, tuple):
        made, arrays = made
        np.savez(output.rsplit(".", 1)[0] + ".npz", **arrays)
    with open(output, "wb") as out:
        out.write(made.SerializeToString())


if __name__ == "__main__":
    main()
