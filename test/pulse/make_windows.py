"""Attention-like blocks over (time, time) for the pulsifier: a [S, S]
score matrix masked to a window (block-diagonal or banded) and reduced or
soft-maxed over its second axis. Writes NNEF folders with numpy's outputs
(io.npz) for S = 24: block_reduce, banded_causal, bilinear, chained,
conv_attention, and unmasked (no window: refused). The masks are written from ranges and comparisons, as
exporters write them; nothing names them as attention."""

import os
import sys

import numpy as np

S, C = 24, 4


def dat(values):
    """An NNEF .dat file of f32 values."""
    values = np.ascontiguousarray(values, np.float32)
    header = bytearray(128)
    header[0:2] = b"\x4e\xef"
    header[2] = 1
    header[3] = 0
    header[4:8] = np.uint32(values.nbytes).tobytes()
    header[8:12] = np.uint32(values.ndim).tobytes()
    for k, d in enumerate(values.shape):
        header[12 + 4 * k:16 + 4 * k] = np.uint32(d).tobytes()
    header[44:48] = np.uint32(32).tobytes()
    header[48:52] = np.uint32(0).tobytes()
    return bytes(header) + values.tobytes()


def write(name, body, arrays, tensors):
    folder = os.path.join(OUT, name)
    os.makedirs(folder, exist_ok=True)
    text = ("version 1.0;\nextension tract_registry tract_core;\n"
            "extension tract_symbol S;\n" + body)
    with open(os.path.join(folder, "graph.nnef"), "w") as f:
        f.write(text)
    for label, values in tensors.items():
        with open(os.path.join(folder, label + ".dat"), "wb") as f:
            f.write(dat(values))
    np.savez(os.path.join(folder, "io.npz"), **arrays)


def softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


POSITIONS = """  i = unsqueeze(tract_core_range(0, S, 1), axes = [1]);
  j = unsqueeze(tract_core_range(0, S, 1), axes = [0]);
"""
I, J = np.arange(S)[:, None], np.arange(S)[None, :]


def banded(x, lo, hi, a=None):
    """softmax over keys j with i - lo <= j <= i + hi of (x a) x^T, times x."""
    q = x @ a if a is not None else x
    s = (q @ x.T) * 0.5
    s = np.where((J >= I - lo) & (J <= I + hi), s, -1e9)
    return softmax(s) @ x


def attention_text(x, out, lo, hi, a=None, tag=""):
    q = "q%s = matmul(%s, %s);\n  " % (tag, x, a) if a else ""
    qx = "q" + tag if a else x
    return (q + "s{t} = mul(matmul({q}, {x}, transposeB = true), 0.5);\n"
            "  keep{t} = and(ge(j, sub(i, {lo})), le(j, add(i, {hi})));\n"
            "  masked{t} = select(keep{t}, s{t}, -1e9);\n"
            "  p{t} = softmax(masked{t}, axes = [1]);\n"
            "  {out} = matmul(p{t}, {x});\n").format(
                t=tag, q=qx, x=x, lo=lo, hi=hi, out=out)


def main():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((S, C)).astype(np.float32)
    head = "graph g(x) -> (y) {\n  x = external<scalar>(shape = [S, %d]);\n" % C

    # Block-diagonal: the sum of the scores within blocks of 4 frames.
    s = x @ x.T
    y = np.where(I // 4 == J // 4, s, 0).sum(1, keepdims=True)
    write("block_reduce", head + POSITIONS +
          "  s = matmul(x, x, transposeB = true);\n"
          "  keep = eq(div(i, 4), div(j, 4));\n"
          "  y = sum_reduce(select(keep, s, 0.0), axes = [1]);\n}\n",
          {"x": x, "y": y.astype(np.float32)}, {})

    # Banded causal: the 3 frames up to the query.
    write("banded_causal", head + POSITIONS + "  " +
          attention_text("x", "y", 2, 0).lstrip() + "}\n",
          {"x": x, "y": banded(x, 2, 0).astype(np.float32)}, {})

    # Bilinear, both sides: (x A) x^T over |i - j| <= 2.
    a = rng.standard_normal((C, C)).astype(np.float32) * 0.5
    write("bilinear", head.replace("{\n", "{\n  a = variable<scalar>(label = "
                                    "'a', shape = [%d, %d]);\n" % (C, C), 1)
          + POSITIONS + "  " + attention_text("x", "y", 2, 2, "a").lstrip()
          + "}\n",
          {"x": x, "y": banded(x, 2, 2, a).astype(np.float32)}, {"a": a})

    # Chained: a causal band of 2, then one of 1 back and 1 ahead.
    h = banded(x, 1, 0)
    write("chained", head + POSITIONS + "  " +
          attention_text("x", "h", 1, 0, tag="1").lstrip() + "  " +
          attention_text("h", "y", 1, 1, tag="2").lstrip() + "}\n",
          {"x": x, "y": banded(h, 1, 1).astype(np.float32)}, {})

    # No mask: every frame reaches the whole stream (refused).
    s = (x @ x.T) * 0.5
    write("unmasked", head + "  s = mul(matmul(x, x, transposeB = true), 0.5);\n"
          "  y = matmul(softmax(s, axes = [1]), x);\n}\n",
          {"x": x, "y": (softmax(s) @ x).astype(np.float32)}, {})

    # A convolution over time (kernel 3, valid) before a causal band of 3.
    k = rng.standard_normal((C, C, 3)).astype(np.float32) * 0.3
    xc = x.T[None]
    conv = np.stack([sum(k[:, :, t] @ xc[0, :, f + t] for t in range(3))
                     for f in range(S - 2)], 1)  # [C, S - 2]
    hc = conv.T
    body = ("  k = variable<scalar>(label = 'k', shape = [%d, %d, 3]);\n" % (C, C)
            + "  xt = unsqueeze(transpose(x, axes = [1, 0]), axes = [0]);\n"
            "  c = conv(xt, k, padding = [(0, 0)], border = 'constant');\n"
            "  h = transpose(squeeze(c, axes = [0]), axes = [1, 0]);\n"
            "  i = unsqueeze(tract_core_range(0, sub(S, 2), 1), axes = [1]);\n"
            "  j = unsqueeze(tract_core_range(0, sub(S, 2), 1), axes = [0]);\n"
            + "  " + attention_text("h", "y", 2, 0).lstrip() + "}\n")
    n = S - 2
    s2 = (hc @ hc.T) * 0.5
    ii, jj = np.arange(n)[:, None], np.arange(n)[None, :]
    s2 = np.where((jj >= ii - 2) & (jj <= ii), s2, -1e9)
    write("conv_attention", head + body,
          {"x": x, "y": (softmax(s2) @ hc).astype(np.float32)}, {"k": k})


if __name__ == "__main__":
    OUT = sys.argv[1]
    main()
