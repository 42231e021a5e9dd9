#!/usr/bin/env python3
"""Writes the synthetic models of the benchmark (scripts/bench.sh) into a
folder (default models/bench/, not committed), with seeded random weights,
static shapes and opset 17, and for each MODEL.onnx a MODEL.npz bundle: its
inputs (seeded too), so that tract and onnxruntime run on the same tensors,
and its expected outputs, computed in float64 by numpy or by the torch
module the model was exported from, for `tract run --assert-output-bundle`:

  matmul512            A (512x512 input) @ B (512x512 initializer)
  conv3x3_64           1x64x56x56 input, 64->64 3x3 conv, pad 1, bias
  transformer_encoder  torch nn.TransformerEncoder: d_model 256, 4 heads,
                       2 layers, feed-forward 512, sequence 64, batch 1
  gru_speech           1x100x80 features -> 2-layer GRU, hidden 256 ->
                       linear to 32
  qlinear_matmul512    matmul512 in 8 bits: QLinearMatMul of a uint8 A by
                       int8 B, per-tensor scales and zero points
  qlinear_conv3x3_64   conv3x3_64 in 8 bits: QLinearConv of uint8 x by
                       int8 W with per-channel scales, an int32 bias

The quantized models' expected outputs are their integer arithmetic done
exactly (sums in int64), requantized as ONNX says: the sum times
x_scale * w_scale / y_scale in float32, rounded half to even, plus the
output's zero point, saturated.

Run with /usr/bin/python3 (Debian's, with torch and onnx). Every run writes
the files again (a few seconds); the same seeds give the same tensors.
"""
import argparse
import copy
import os
import sys
import warnings

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def save_onnx_graph(path, nodes, inputs, outputs, initializers):
    graph = helper.make_graph(nodes, os.path.basename(path)[:-5], inputs,
                              outputs, initializers)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="tract-mlir bench")
    model.ir_version = 8  # what opset 17 came with; onnxruntime 1.30 reads it
    onnx.checker.check_model(model)
    onnx.save(model, path)


def matmul512(path, rng):
    n = 512
    b = rng.standard_normal((n, n), dtype=np.float32) / np.sqrt(n)
    save_onnx_graph(
        path, [helper.make_node("MatMul", ["A", "B"], ["Y"])],
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, [n, n])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [n, n])],
        [numpy_helper.from_array(b, "B")])
    a = rng.standard_normal((n, n), dtype=np.float32)
    return {"A": a}, {"Y": a.astype(np.float64) @ b.astype(np.float64)}


def conv3x3_64(path, rng):
    c, size = 64, 56
    w = rng.standard_normal((c, c, 3, 3), dtype=np.float32) / np.sqrt(9 * c)
    bias = rng.standard_normal(c, dtype=np.float32) * 0.1
    save_onnx_graph(
        path,
        [helper.make_node("Conv", ["x", "W", "bias"], ["y"],
                          kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [1, c, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       [1, c, size, size])],
        [numpy_helper.from_array(w, "W"),
         numpy_helper.from_array(bias, "bias")])
    x = rng.standard_normal((1, c, size, size), dtype=np.float32)
    y = torch.nn.functional.conv2d(torch.from_numpy(x).double(),
                                   torch.from_numpy(w).double(),
                                   torch.from_numpy(bias).double(), padding=1)
    return {"x": x}, {"y": y.numpy()}


def export_torch(module, example, path, input_name, output_name):
    """Exports `module` on `example` (a float32 array) and returns the
    expected outputs: the module run in float64."""
    module.eval()
    # Traced with gradients enabled, on purpose: under torch.no_grad() an
    # eval-mode TransformerEncoder takes its fused fast path
    # (aten::_transformer_encoder_layer_fwd), which has no ONNX export.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter's notes on shapes
        torch.onnx.export(module, (torch.from_numpy(example),), path,
                          opset_version=OPSET, input_names=[input_name],
                          output_names=[output_name],
                          do_constant_folding=True)  # no dynamic_axes
    onnx.checker.check_model(onnx.load(path))
    with torch.no_grad():
        expected = copy.deepcopy(module).double()(
            torch.from_numpy(example).double())
    return {input_name: example}, {output_name: expected.numpy()}


def transformer_encoder(path, rng):
    torch.manual_seed(16)
    # batch_first in eval mode, the layout users export (dropout 0 anyway).
    layer = torch.nn.TransformerEncoderLayer(
        d_model=256, nhead=4, dim_feedforward=512, dropout=0.0,
        batch_first=True)
    encoder = torch.nn.TransformerEncoder(layer, num_layers=2,
                                          enable_nested_tensor=False)
    src = rng.standard_normal((1, 64, 256), dtype=np.float32)
    return export_torch(encoder, src, path, "src", "out")


def gru_speech(path, rng):
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = torch.nn.GRU(80, 256, num_layers=2, batch_first=True)
            self.linear = torch.nn.Linear(256, 32)

        def forward(self, features):
            hidden, _ = self.gru(features)
            return self.linear(hidden)

    torch.manual_seed(16)
    features = rng.standard_normal((1, 100, 80), dtype=np.float32)
    return export_torch(Model(), features, path, "features", "logits")


def requantize(sums, multiplier, zero):
    """ONNX's requantization of int64 sums to uint8."""
    scaled = sums.astype(np.float32) * np.asarray(multiplier, np.float32)
    return np.clip(np.rint(scaled) + zero, 0, 255).astype(np.uint8)


def qlinear_matmul512(path, rng):
    n = 512
    a_scale, a_zero, b_scale = 0.02, 120, 0.004
    y_scale, y_zero = 0.02 * 0.004 * np.sqrt(n) * 60 / 127, 128
    b = rng.integers(-127, 128, size=(n, n)).astype(np.int8)
    params = {"a_scale": np.float32(a_scale), "a_zero": np.uint8(a_zero),
              "b_scale": np.float32(b_scale), "b_zero": np.int8(0),
              "y_scale": np.float32(y_scale), "y_zero": np.uint8(y_zero)}
    save_onnx_graph(
        path, [helper.make_node("QLinearMatMul",
                                ["A", "a_scale", "a_zero", "B", "b_scale",
                                 "b_zero", "y_scale", "y_zero"], ["Y"])],
        [helper.make_tensor_value_info("A", TensorProto.UINT8, [n, n])],
        [helper.make_tensor_value_info("Y", TensorProto.UINT8, [n, n])],
        [numpy_helper.from_array(b, "B")] +
        [numpy_helper.from_array(v, k) for k, v in params.items()])
    a = rng.integers(0, 256, size=(n, n)).astype(np.uint8)
    sums = (a.astype(np.int64) - a_zero) @ b.astype(np.int64)
    multiplier = np.float32(np.float32(a_scale) * np.float32(b_scale)) / \
        np.float32(y_scale)
    return {"A": a}, {"Y": requantize(sums, multiplier, y_zero)}


def qlinear_conv3x3_64(path, rng):
    c, size = 64, 56
    x_scale, x_zero = 0.02, 110
    w_scale = (rng.uniform(0.5, 1.5, size=c) * 0.004).astype(np.float32)
    y_scale, y_zero = 0.02 * 0.004 * np.sqrt(9 * c) * 60 / 127, 128
    w = rng.integers(-127, 128, size=(c, c, 3, 3)).astype(np.int8)
    bias = rng.integers(-3000, 3000, size=c).astype(np.int32)
    params = {"x_scale": np.float32(x_scale), "x_zero": np.uint8(x_zero),
              "w_scale": w_scale, "w_zero": np.zeros(c, np.int8),
              "y_scale": np.float32(y_scale), "y_zero": np.uint8(y_zero)}
    save_onnx_graph(
        path,
        [helper.make_node("QLinearConv",
                          ["x", "x_scale", "x_zero", "W", "w_scale", "w_zero",
                           "y_scale", "y_zero", "bias"], ["y"],
                          kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
        [helper.make_tensor_value_info("x", TensorProto.UINT8,
                                       [1, c, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8,
                                       [1, c, size, size])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(bias, "bias")]
        + [numpy_helper.from_array(v, k) for k, v in params.items()])
    x = rng.integers(0, 256, size=(1, c, size, size)).astype(np.uint8)
    # The padding is the zero point: zero once it is taken off.
    sums = torch.nn.functional.conv2d(
        torch.from_numpy(x.astype(np.float64) - x_zero),
        torch.from_numpy(w.astype(np.float64)), padding=1).numpy()
    sums = np.rint(sums).astype(np.int64) + bias.reshape(1, c, 1, 1)
    multiplier = (np.float32(x_scale) * w_scale).astype(np.float32) / \
        np.float32(y_scale)
    return {"x": x}, {"y": requantize(sums, multiplier.reshape(1, c, 1, 1),
                                      y_zero)}


MODELS = {
    "matmul512": matmul512,
    "conv3x3_64": conv3x3_64,
    "transformer_encoder": transformer_encoder,
    "gru_speech": gru_speech,
    "qlinear_matmul512": qlinear_matmul512,
    "qlinear_conv3x3_64": qlinear_conv3x3_64,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--out",
                        default=os.path.join(here, "..", "models", "bench"))
    parser.add_argument("names", nargs="*", metavar="MODEL",
                        help="models to write (default: all)")
    args = parser.parse_args()
    for name in args.names:
        if name not in MODELS:
            parser.error("unknown model %s (known: %s)" %
                         (name, ", ".join(MODELS)))
    os.makedirs(args.out, exist_ok=True)
    for name in args.names or MODELS:
        model = os.path.join(args.out, name + ".onnx")
        # One seed per model, so that writing one does not change another.
        rng = np.random.default_rng(list(MODELS).index(name) + 16)
        inputs, outputs = MODELS[name](model, rng)
        outputs = {k: v if v.dtype == np.uint8 else v.astype(np.float32)
                   for k, v in outputs.items()}
        np.savez(os.path.join(args.out, name + ".npz"), **inputs, **outputs)
        print("make_models: %s" % os.path.relpath(model))
    return 0


if __name__ == "__main__":
    sys.exit(main())
