#!/usr/bin/python3
"""Randomized property test of pulsification: pulsed == batch.

Each case is a random ONNX model over an input [1, C, S] (S dynamic): a
chain of layers drawn from convolutions (kernel 1-5, stride 1-2, dilation
1-2, any padding), transposed convolutions, max and average pools, constant pads and slices of the
time axis, element-wise activations, a channel matmul (transpose, MatMul,
transpose back), two branches with different delays concatenated over the
channels, and a GRU or an LSTM (a scan carried across pulses, with one or
two states). Every model runs twice through `tract`: in batch (`tract run`,
outputs saved) and streamed at several pulses (`tract --pulse S=P run`),
whose outputs, shifted by their delay, must match the batch outputs. The pulses are multiples of the
chain's total stride, so that none is refused.

The seed list makes the cases reproducible; `--cases N` and `--seed K`
explore further.
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Chain:
    """Builds the ONNX graph of one random case."""

    def __init__(self, rng):
        self.rng = rng
        self.nodes = []
        self.initializers = []
        self.count = 0
        self.stride = 1
        self.description = []

    def name(self, prefix):
        self.count += 1
        return f"{prefix}{self.count}"

    def const(self, array, prefix="w"):
        name = self.name(prefix)
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def node(self, op, inputs, **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def weights(self, *shape):
        return (self.rng.standard_normal(shape) /
                np.sqrt(np.prod(shape[1:]))).astype(np.float32)

    def conv(self, x, channels, out_channels, allow_stride=True):
        r = self.rng
        k = int(r.integers(1, 6))
        s = int(r.integers(1, 3)) if allow_stride else 1
        d = int(r.integers(1, 3)) if k > 1 else 1
        before, after = int(r.integers(0, 3)), int(r.integers(0, 3))
        w = self.const(self.weights(out_channels, channels, k))
        b = self.const(self.weights(out_channels, 1).reshape(out_channels))
        self.stride *= s
        self.description.append(f"conv(k={k},s={s},d={d},pad={before},{after})")
        return self.node("Conv", [x, w, b], kernel_shape=[k], strides=[s],
                         dilations=[d], pads=[before, after])

    def deconv(self, x, channels, out_channels):
        r = self.rng
        k = int(r.integers(1, 5))
        s = int(r.integers(1, 3))
        d = int(r.integers(1, 3)) if k > 1 else 1
        reach = (k - 1) * d
        before = int(r.integers(0, reach + 1))
        after = int(r.integers(0, reach + 1))
        w = self.const(self.weights(channels, out_channels, k))
        self.description.append(
            f"deconv(k={k},s={s},d={d},pad={before},{after})")
        return self.node("ConvTranspose", [x, w], kernel_shape=[k],
                         strides=[s], dilations=[d], pads=[before, after])

    def pool(self, x):
        r = self.rng
        k = int(r.integers(2, 4))
        s = int(r.integers(1, 3))
        before, after = int(r.integers(0, k)), int(r.integers(0, k))
        self.stride *= s
        if r.random() < 0.5:
            self.description.append(f"max_pool(k={k},s={s},pad={before},{after})")
            return self.node("MaxPool", [x], kernel_shape=[k], strides=[s],
                             pads=[before, after])
        self.description.append(f"avg_pool(k={k},s={s},pad={before},{after})")
        return self.node("AveragePool", [x], kernel_shape=[k], strides=[s],
                         pads=[before, after], count_include_pad=1)

    def pad(self, x):
        r = self.rng
        before, after = int(r.integers(0, 4)), int(r.integers(0, 4))
        value = float(r.integers(-2, 3))
        pads = self.const(np.array([0, 0, before, 0, 0, after], np.int64), "p")
        fill = self.const(np.array(value, np.float32), "v")
        self.description.append(f"pad({before},{after},value={value})")
        return self.node("Pad", [x, pads, fill], mode="constant")

    def slice(self, x):
        r = self.rng
        start, cut = int(r.integers(0, 3)), int(r.integers(1, 3))
        starts = self.const(np.array([start], np.int64), "s")
        ends = self.const(np.array([-cut], np.int64), "e")
        axes = self.const(np.array([2], np.int64), "a")
        self.description.append(f"slice({start}:-{cut})")
        return self.node("Slice", [x, starts, ends, axes])

    def activation(self, x):
        op = self.rng.choice(["Relu", "Tanh", "Sigmoid"])
        self.description.append(op.lower())
        return self.node(op, [x])

    def matmul(self, x, channels, out_channels):
        w = self.const(self.weights(channels, out_channels))
        t = self.node("Transpose", [x], perm=[0, 2, 1])
        m = self.node("MatMul", [t, w])
        self.description.append("matmul")
        return self.node("Transpose", [m], perm=[0, 2, 1])

    def branches(self, x, channels):
        # conv with "same" padding keeps the length; the other branch is x.
        r = self.rng
        k = int(r.integers(2, 5))
        total = k - 1
        w = self.const(self.weights(channels, channels, k))
        conv = self.node("Conv", [x, w], kernel_shape=[k],
                         pads=[total // 2, total - total // 2])
        self.description.append(f"concat(x, conv(k={k},same))")
        return self.node("Concat", [x, conv], axis=1)

    def recurrence(self, x, channels, hidden, op):
        """A GRU (3 gates, one state) or an LSTM (4 gates, two states)."""
        gates = 3 if op == "GRU" else 4
        w = self.const(self.weights(1, gates * hidden, channels))
        rw = self.const(self.weights(1, gates * hidden, hidden))
        b = self.const(self.weights(1, 2 * gates * hidden, 1).reshape(
            1, 2 * gates * hidden))
        t = self.node("Transpose", [x], perm=[2, 0, 1])
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, [t, w, rw, b], [out],
                                           hidden_size=hidden))
        squeezed = self.node("Squeeze", [out, self.const(
            np.array([1], np.int64), "a")])
        self.description.append(f"{op.lower()}({hidden})")
        return self.node("Transpose", [squeezed], perm=[1, 2, 0])


def make_case(seed):
    rng = np.random.default_rng(seed)
    chain = Chain(rng)
    channels = int(rng.integers(1, 4))
    chain.input_channels = channels
    current = "x"
    for _ in range(int(rng.integers(2, 6))):
        kind = rng.choice(["conv", "conv", "pool", "pad", "slice", "act",
                           "matmul", "branches", "deconv"])
        if kind == "conv":
            out_channels = int(rng.integers(1, 4))
            current = chain.conv(current, channels, out_channels,
                                 allow_stride=chain.stride < 4)
            channels = out_channels
        elif kind == "deconv":
            out_channels = int(rng.integers(1, 4))
            current = chain.deconv(current, channels, out_channels)
            channels = out_channels
        elif kind == "pool" and chain.stride < 4:
            current = chain.pool(current)
        elif kind == "pad":
            current = chain.pad(current)
        elif kind == "slice":
            current = chain.slice(current)
        elif kind == "act":
            current = chain.activation(current)
        elif kind == "matmul":
            out_channels = int(rng.integers(1, 4))
            current = chain.matmul(current, channels, out_channels)
            channels = out_channels
        elif kind == "branches":
            current = chain.branches(current, channels)
            channels *= 2
    if rng.random() < 0.5:
        current = chain.recurrence(current, channels, int(rng.integers(2, 5)),
                                   rng.choice(["GRU", "LSTM"]))
    graph = helper.make_graph(
        chain.nodes, f"case{seed}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [1, chain.input_channels, "S"])],
        [helper.make_tensor_value_info(current, TensorProto.FLOAT, None)],
        chain.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model, chain


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tract", required=True)
    parser.add_argument("--cases", type=int, default=24)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    failures = 0
    with tempfile.TemporaryDirectory() as work:
        for seed in range(args.seed, args.seed + args.cases):
            rng = np.random.default_rng(1000 + seed)
            model, chain = make_case(seed)
            path = os.path.join(work, f"case{seed}.onnx")
            onnx.save(model, path)
            frames = int(rng.integers(40, 70))
            x = rng.standard_normal((1, chain.input_channels, frames)).astype(
                np.float32)
            inputs = os.path.join(work, f"in{seed}.npz")
            np.savez(inputs, x=x)
            reference = os.path.join(work, f"ref{seed}.npz")
            what = f"case {seed} [{' -> '.join(chain.description)}], S={frames}"
            batch = subprocess.run(
                [args.tract, path, "run", "--input-from-bundle", inputs,
                 "--save-outputs-npz", reference, "-q"],
                capture_output=True, text=True)
            if batch.returncode != 0:
                print(f"FAIL: {what}: batch run: {batch.stderr.strip()}")
                failures += 1
                continue
            with np.load(reference) as saved:
                outputs = {name: saved[name] for name in saved.files}
            bundle = os.path.join(work, f"io{seed}.npz")
            np.savez(bundle, x=x, **outputs)
            pulses = sorted({chain.stride * m for m in (1, 2, 3)})
            for pulse in pulses:
                streamed = subprocess.run(
                    [args.tract, "--pulse", f"S={pulse}", path, "run",
                     "--input-from-bundle", bundle,
                     "--assert-output-bundle", bundle, "--approx",
                     "approximate", "-q"],
                    capture_output=True, text=True)
                if streamed.returncode != 0:
                    print(f"FAIL: {what}, pulse {pulse}: "
                          f"{streamed.stderr.strip()}")
                    failures += 1
            print(f"{'ok' if streamed.returncode == 0 else 'FAIL'}: {what}, "
                  f"pulses {pulses}")
    print(f"{args.cases} cases, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
