"""Loops across a stream for the pulsifier: a scan over the frequency bands
of a spectrogram-like input [1, bands, S] whose time axis streams. Each band
step reads its band of a centred smoothing over time (one frame late when
streamed), the frame's energy over all bands from outside the loop (a
stream with no delay), and the previous band's state:
h_b = tanh(0.8 x_b + 0.5 h_{b-1} + e). Writes NNEF folders with numpy's
outputs (io.npz) for S = 20: across, and across_window, whose loop body
smooths over time itself (a window inside a loop across the stream:
refused). Also frames: a scan over the positions 0..S of the stream whose
body gathers, from the whole stream it takes as a full input, the frame at
its position, h_t = tanh(0.8 x_t + 0.5 h_{t-1}) (declutter makes it a scan
of the stream, which then streams)."""

import os
import sys

import numpy as np

S, BANDS = 20, 4

HEADER = """version 1.0;
extension tract_registry tract_core;
extension tract_symbol S;
"""

ACROSS = HEADER + """
fragment band(x: tensor<scalar>, e: tensor<scalar>, h: tensor<scalar>)
    -> (next: tensor<scalar>)
{
    next = tanh(add(add(mul(x, 0.8), mul(h, 0.5)), e));
}

graph across(input) -> (output)
{
    input = external<scalar>(shape = [1, 4, S]);
    kernel = [[[0.25, 0.5, 0.25]], [[0.25, 0.5, 0.25]], [[0.25, 0.5, 0.25]],
              [[0.25, 0.5, 0.25]]];
    smooth = conv(input, kernel, groups = 4, padding = [(1, 1)],
                  border = 'constant', stride = [1], dilation = [1]);
    energy = sum_reduce(input, axes = [1]);
    h0 = mul(energy, 0.0);
    output = tract_core_scan(body = "band", scan = [("x", smooth, 1, 1)],
        full = [("e", energy)], state = [("h", h0, "next")],
        output = [("next", "full", 1, 1)], skip = 0,
        reset_every_turn = true);
}
"""

WINDOW = HEADER + """
fragment band(x: tensor<scalar>, h: tensor<scalar>) -> (next: tensor<scalar>)
{
    smooth = conv(x, [[[0.25, 0.5, 0.25]]], padding = [(1, 1)],
                  border = 'constant', stride = [1], dilation = [1]);
    next = tanh(add(smooth, mul(h, 0.5)));
}

graph across_window(input) -> (output)
{
    input = external<scalar>(shape = [1, 4, S]);
    h0 = mul(sum_reduce(input, axes = [1]), 0.0);
    output = tract_core_scan(body = "band", scan = [("x", input, 1, 1)],
        full = [], state = [("h", h0, "next")],
        output = [("next", "full", 1, 1)], skip = 0,
        reset_every_turn = true);
}
"""


FRAMES = HEADER + """
fragment step(i: tensor<integer>, x: tensor<scalar>, h: tensor<scalar>)
    -> (next: tensor<scalar>)
{
    frame = tract_core_gather(x, i, axis = 0);
    next = tanh(add(mul(frame, 0.8), mul(h, 0.5)));
}

graph frames(input) -> (output)
{
    input = external<scalar>(shape = [S, 3]);
    n = squeeze(slice(tract_core_shape_of(input), axes = [0], begin = [0],
                      end = [1]), axes = [0]);
    positions = tract_core_range(0, n, 1);
    h0 = [[0.0, 0.0, 0.0]];
    output = tract_core_scan(body = "step", scan = [("i", positions, 0, 1)],
        full = [("x", input)], state = [("h", h0, "next")],
        output = [("next", "full", 0, 1)], skip = 0);
}
"""


def write(out, name, text, arrays=None):
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "graph.nnef"), "w") as f:
        f.write(text)
    if arrays:
        np.savez(os.path.join(folder, "io.npz"), **arrays)


def main():
    out = sys.argv[1]
    x = np.random.default_rng(21).standard_normal((1, BANDS, S))
    x = x.astype(np.float32)
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1)))
    smooth = (0.25 * padded[:, :, :-2] + 0.5 * padded[:, :, 1:-1] +
              0.25 * padded[:, :, 2:])
    energy = x.astype(np.float64).sum(axis=1, keepdims=True)
    h = np.zeros((1, 1, S))
    bands = []
    for b in range(BANDS):
        h = np.tanh(0.8 * smooth[:, b:b + 1] + 0.5 * h + energy)
        bands.append(h)
    output = np.concatenate(bands, axis=1).astype(np.float32)
    write(out, "across", ACROSS, {"input": x, "output": output})
    write(out, "across_window", WINDOW)
    frames = np.random.default_rng(22).standard_normal((S, 3))
    frames = frames.astype(np.float32)
    h, rows = np.zeros(3), []
    for t in range(S):
        h = np.tanh(0.8 * frames[t].astype(np.float64) + 0.5 * h)
        rows.append(h)
    write(out, "frames", FRAMES,
          {"input": frames, "output": np.array(rows, np.float32)})


if __name__ == "__main__":
    main()
