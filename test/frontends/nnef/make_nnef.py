#!/usr/bin/env python3
"""Writes the tensor files, reference bundles and archives of the NNEF
frontend tests: make_nnef.py NAME OUT (OUT is a folder or an archive)."""
import io
import os
import shutil
import struct
import sys
import tarfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
from q8_reference import q8_0  # noqa: E402  (test/)

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = {"f": 0, "u": 1, "i": 4, "b": 5}


def dat_bytes(a, data_size=None):
    """An NNEF tensor file: 128-byte header, then the items."""
    a = np.asarray(a, order="C")
    header = bytearray(128)
    header[0:4] = bytes([0x4E, 0xEF, 1, 0])
    bits = 8 if a.dtype == np.bool_ else a.itemsize * 8
    struct.pack_into("<II", header, 4,
                     a.nbytes if data_size is None else data_size, a.ndim)
    for i, d in enumerate(a.shape):
        struct.pack_into("<I", header, 12 + 4 * i, d)
    struct.pack_into("<IHH", header, 44, bits, KINDS[a.dtype.kind], 0)
    return bytes(header) + a.tobytes()


def write(folder, name, data):
    path = os.path.join(folder, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def fixture(name, out):
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(os.path.join(HERE, "Inputs", name), out)


def conv_matmul(out):
    fixture("conv_matmul", out)
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3, 3)).astype(np.float32)
    b = rng.standard_normal((1, 4)).astype(np.float32)
    m = rng.standard_normal((4, 2)).astype(np.float32)
    for n, a in (("w", w), ("b", b), ("m", m)):
        write(out, n + ".dat", dat_bytes(a))
    x = rng.standard_normal((1, 3, 7)).astype(np.float32)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1)))
    c = np.stack([sum((w[o, :, k][:, None] * xp[0, :, k:k + 7]).sum(0)
                      for k in range(3)) + b[0, o] for o in range(4)])[None]
    y = (np.maximum(c, 0) * 2).transpose(0, 2, 1) @ m[None]
    np.savez(os.path.join(out, "io.npz"), input=x,
             output=y.astype(np.float32))


def ops(out):
    fixture("ops", out)
    x = np.random.default_rng(1).standard_normal((3, 2, 4, 4))
    x = x.astype(np.float32)
    pooled = x.reshape(3, 2, 2, 2, 2, 2).max(axis=(3, 5))
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=0.5)
    averaged = np.stack([np.stack([padded[:, :, 2 * i:2 * i + 3,
                                          2 * j:2 * j + 3].mean(axis=(2, 3))
                                   for j in range(2)], -1)
                         for i in range(2)], -2)
    normalized = np.zeros_like(x)
    flat = x.mean(axis=1).reshape(3, 16)
    top = x[:, 1, :2, 2:]
    both = np.concatenate([top, top], axis=2)
    picked = np.where(both > 0, both, 0)
    np.savez(os.path.join(out, "io.npz"), x=x, pooled=pooled,
             averaged=averaged.astype(np.float32), normalized=normalized,
             flat=flat.astype(np.float32), picked=picked.astype(np.float32))


def dtypes(out):
    """One variable per item type, added to an input of the same type."""
    os.makedirs(out, exist_ok=True)
    kinds = [("f16", np.float16), ("f64", np.float64), ("i8", np.int8),
             ("u16", np.uint16), ("i32", np.int32), ("u64", np.uint64),
             ("bool", np.bool_)]
    lines = ["version 1.0;", "",
             "graph dtypes() -> (%s)" % ", ".join(k for k, _ in kinds), "{"]
    for name, t in kinds:
        write(out, name + ".dat", dat_bytes(np.array([1, 0], dtype=t)))
        lines.append(f"  {name} = variable(shape = [2], label = '{name}');")
    lines.append("}")
    write(out, "graph.nnef", "\n".join(lines).encode() + b"\n")


def archive(name, out, members):
    with tarfile.open(out, "w:gz" if out.endswith("gz") else "w") as tar:
        for member, data in members:
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def tgz(out):
    folder = out + ".d"
    conv_matmul(folder)
    members = []
    for root, _, files in os.walk(folder):
        for f in sorted(files):
            if f.endswith(".npz"):
                continue
            path = os.path.join(root, f)
            members.append(("./" + os.path.relpath(path, folder),
                            open(path, "rb").read()))
    archive("conv", out, members)


GRAPH = b"version 1.0;\ngraph g(x) -> (x)\n{\n  x = external(shape = [1]);\n}\n"


def hostile(out):
    archive("dotdot", out, [("graph.nnef", GRAPH),
                            ("../escape.dat", dat_bytes(np.zeros(1, np.float32)))])


def absolute(out):
    archive("abs", out, [("graph.nnef", GRAPH),
                         ("/tmp/abs.dat", dat_bytes(np.zeros(1, np.float32)))])


def short_dat(out):
    """A header whose declared size disagrees with its shape, and one whose
    data is truncated."""
    os.makedirs(out, exist_ok=True)
    a = np.zeros((4, 4), np.float32)
    write(out, "wrong.dat", dat_bytes(a, data_size=60))
    write(out, "cut.dat", dat_bytes(a)[:-8])
    write(out, "graph.nnef", b"""version 1.0;
graph g(x) -> (y)
{
  x = external(shape = [4, 4]);
  w = variable(shape = [4, 4], label = '""" + sys.argv[3].encode() + b"""');
  y = add(x, w);
}
""")

def box_same(a, size):
    """NNEF's box with normalize over every axis, centred (same padding),
    the zero padding counted."""
    pads = [((k - 1) // 2, k - 1 - (k - 1) // 2) for k in size]
    p = np.pad(a, pads)
    out = np.zeros_like(a)
    for idx in np.ndindex(*size):
        out += p[tuple(slice(i, i + n) for i, n in zip(idx, a.shape))]
    return out / np.prod(size)


def linear_resize_aligned(x, factor):
    """Linear resize with aligned corners, axis by axis."""
    for axis, f in ((2, factor[0]), (3, factor[1])):
        n = x.shape[axis]
        pos = np.arange(n * f) * (n - 1) / (n * f - 1)
        lo = np.floor(pos).astype(int)
        hi = np.minimum(lo + 1, n - 1)
        w = pos - lo
        shape = [1] * x.ndim
        shape[axis] = -1
        x = (np.take(x, lo, axis) * (1 - w.reshape(shape)) +
             np.take(x, hi, axis) * w.reshape(shape))
    return x


def stdops(out):
    fixture("stdops", out)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 3, 4, 4)).astype(np.float64)
    m = (rng.standard_normal((2, 5)) * 1.5).astype(np.float64)
    lrn = x / (2.0 + 0.5 * box_same(x * x, (1, 3, 1, 1))) ** 0.75
    l1 = x / np.maximum(0.5 + np.abs(x).sum(1, keepdims=True), 1e-3)
    l2 = x / np.maximum(np.sqrt((x * x).sum((2, 3), keepdims=True)), 1e-3)
    rms = np.sqrt((x * x).reshape(1, 3, 2, 2, 2, 2).mean((3, 5)))
    mean = m.mean(1, keepdims=True)
    variance = ((m - mean) ** 2).mean(1, keepdims=True)
    prelu = np.where(m < 0, 0.25 * m, m)
    up = x.repeat(2, axis=2).repeat(3, axis=3)
    up_linear = linear_resize_aligned(x, (2, 2))
    down = x[:, :, ::2, ::2]
    area = x.reshape(1, 3, 2, 2, 2, 2).mean((3, 5))
    r = (2.0 ** 3 - 1) / 2.0
    lq = np.round((np.clip(m, -1, 1) + 1) * r) / r - 1
    top = np.ceil(np.log2(2.0))
    logq = np.sign(m) * 2.0 ** np.round(
        np.clip(np.log2(np.abs(m)), top - 7, top))
    centered = x - box_same(x, (1, 1, 3, 3))
    sigma = np.sqrt(box_same(centered * centered, (1, 1, 3, 3)))
    lcn = centered / np.maximum(sigma, 1e-3)
    f = np.float32
    np.savez(os.path.join(out, "io.npz"), x=x.astype(f), m=m.astype(f),
             lrn=lrn.astype(f), l1=l1.astype(f), l2=l2.astype(f),
             rms=rms.astype(f), mean=mean.astype(f),
             variance=variance.astype(f), prelu_out=prelu.astype(f),
             up=up.astype(f), up_linear=up_linear.astype(f),
             down=down.astype(f), area=area.astype(f), lq=lq.astype(f),
             logq=logq.astype(f), summed=(3 * m).astype(f), lcn=lcn.astype(f),
             deboxed=(up[:, :, :, ::3].repeat(2, axis=3) / 4).astype(f),
             spread=(9 * box_same(x, (1, 1, 3, 3))).astype(f))

def tract_style(out):
    fixture("tract_style", out)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 2, 6)).astype(np.float32)
    w = rng.standard_normal((2, 1, 2)).astype(np.float32)
    for n, a in (("w", w), ("scales", np.array([1, 1, 2], np.float32)),
                 ("start", np.array(1, np.int64)),
                 ("limit", np.array(10, np.int64)),
                 ("delta", np.array(3, np.int64)),
                 ("acc0", np.zeros((1, 2, 1), np.float32))):
        write(out, n + ".dat", dat_bytes(a))
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1)))
    counts = np.array([2, 3, 3, 3, 3, 2], np.float32)
    box_avg = sum(padded[:, :, k:k + 6] for k in range(3)) / counts
    # deconv: input channels 2 -> 1 output channel, kernel 2, stride 2,
    # output length (6 - 1) * 2 + 2 = 12, extended to 13.
    deconv = np.zeros((1, 1, 13), np.float32)
    for c in range(2):
        for i in range(6):
            for k in range(2):
                deconv[0, 0, 2 * i + k] += x[0, c, i] * w[c, 0, k]
    order = np.argsort(-x, axis=2, kind="stable")[:, :, :2]
    acc = np.cumsum(x, axis=2)
    np.savez(os.path.join(out, "io.npz"), x=x,
             inverse=1 / (x * x + 1), box_avg=box_avg.astype(np.float32),
             deconv_out=deconv, resized=x.repeat(2, axis=2),
             positions=np.array([1, 4, 7], np.int64),
             top_values=np.take_along_axis(x, order, 2),
             top_indices=order.astype(np.int64),
             every_other=x[:, :, 1::2],
             nwc_pooled=np.ascontiguousarray(
                 x.reshape(1, 2, 3, 2).max(3).transpose(0, 2, 1)),
             scan_last=acc[:, :, -1:], scan_all=2 * acc)

def torch_style(out):
    fixture("torch_style", out)
    x = np.random.default_rng(4).standard_normal((2, 4, 3)).astype(np.float32)
    means = x.reshape(2, 2, 6).mean(2)
    np.savez(os.path.join(out, "io.npz"), x=x,
             passthrough=np.array([7, -3], np.int64),
             group_means=np.ascontiguousarray(
                 means.repeat(2, axis=1)[:, :, None]).astype(np.float32),
             running=np.cumsum(x, axis=2).astype(np.float32))


def q4_0_bytes(values):
    """tract's Q4_0 tensor file: 32-value blocks of an f16 scale and 16
    bytes, each holding two 4-bit values (low nibble first), value =
    (q - 8) * scale; item type 0x2040 of vendor 'R','T'. Returns the file
    and the values the blocks decode to."""
    flat = np.asarray(values, np.float32).ravel()
    header = bytearray(128)
    header[0:4] = bytes([0x4E, 0xEF, 1, 0])
    blocks = flat.reshape(-1, 32)
    struct.pack_into("<II", header, 4, len(blocks) * 18, values.ndim)
    for i, d in enumerate(values.shape):
        struct.pack_into("<I", header, 12 + 4 * i, d)
    struct.pack_into("<IHH", header, 44, 0xFFFFFFFF, 0x2040, 0x5452)
    data = bytearray()
    decoded = []
    for block in blocks:
        scale = np.float16(np.abs(block).max() / 7 or 1)
        q = np.clip(np.round(block / np.float32(scale)) + 8, 0, 15)
        q = q.astype(np.uint8)
        data += scale.tobytes() + bytes(q[0::2] | (q[1::2] << 4))
        decoded.append((q.astype(np.float32) - 8) * np.float32(scale))
    return bytes(header) + bytes(data), np.concatenate(decoded).reshape(
        values.shape)


def tract_files(out):
    fixture("tract_files", out)
    rng = np.random.default_rng(5)
    dat, w = q4_0_bytes(rng.standard_normal((4, 8)).astype(np.float32))
    write(out, "weight.dat", dat)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    offset = np.array([[0.5, -1.0, 0.0, 2.0, 0.25, 0.0, 1.0, -0.5]],
                      np.float32)
    indices = np.array([[3, 0], [1, -1]]) % 4
    np.savez(os.path.join(out, "io.npz"), input=x,
             output=(x @ w + offset).astype(np.float32),
             picked=np.take_along_axis(x[:2], indices, 1),
             reshaped=x[:2].reshape(2, 2, 2),
             positions=np.arange(0, 5, 2))


def computed_args(out):
    fixture("computed_args", out)
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 6)).astype(np.float32)
    h = rng.standard_normal((2, 6)).astype(np.float32)
    half = x[:, :3]
    np.savez(os.path.join(out, "io.npz"), x=x, n=np.array([4]), h=h,
             half=half, padded=np.pad(half, ((0, 0), (1, 2))),
             tiled=np.tile(x, (1, 3)), reshaped=half.reshape(1, 3, 2),
             positions=np.arange(6), firsts=x[:, :4], left=x[:1],
             right=x[1:],
             scaled=h.astype(np.float16).astype(np.float32) * x,
             repeated=np.tile(x, (1, 4)),
             picked=np.where(x > 0, h.astype(np.float16).astype(np.float32),
                             x))


def q4_linear(out):
    fixture("q4_linear", out)
    rng = np.random.default_rng(12)
    dat, w = q4_0_bytes(rng.standard_normal((32, 64)).astype(np.float32))
    write(out, "weight.dat", dat)
    dat, table = q4_0_bytes(rng.standard_normal((10, 64)).astype(np.float32))
    write(out, "table.dat", dat)
    x = rng.standard_normal((5, 64)).astype(np.float32)
    ids = np.array([7, 0, 3])
    np.savez(os.path.join(out, "io.npz"), input=x, ids=ids,
             output=(x @ w.T).astype(np.float32),
             batched=(x @ w.T)[None].astype(np.float32), rows=table[ids])
    # The same with the 5 rows rounded to 8 bits per block of 32, as the
    # kernel of a decoding step rounds them where the CPU sums bytes.
    rounded = q8_0(x)
    np.savez(os.path.join(out, "io_q8.npz"), input=x, ids=ids,
             output=(rounded @ w.T).astype(np.float32),
             batched=(rounded @ w.T)[None].astype(np.float32),
             rows=table[ids])


def attention(q, k, v, scale, mask=None, causal=False):
    """softmax(q k^T * scale + mask) v, with key/value heads repeated for
    grouped queries; mask is boolean (keep) or absent."""
    if q.ndim == 4 and q.shape[1] != k.shape[1]:
        k = np.repeat(k, q.shape[1] // k.shape[1], axis=1)
        v = np.repeat(v, q.shape[1] // v.shape[1], axis=1)
    s = (q @ np.swapaxes(k, -1, -2)) * scale
    if causal:
        sq, sk = s.shape[-2:]
        s = np.where(np.arange(sk)[None] > np.arange(sq)[:, None] + sk - sq,
                     -np.inf, s)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ v


def sdpa(out):
    fixture("sdpa", out)
    rng = np.random.default_rng(6)
    t = {n: rng.standard_normal(shape).astype(np.float32) for n, shape in (
        ("q3", (3, 2, 8)), ("k3", (3, 4, 8)), ("v3", (3, 4, 6)),
        ("q4", (1, 4, 3, 8)), ("k4", (1, 2, 5, 8)), ("v4", (1, 2, 5, 8)))}
    keep = np.array([[[[1, 1, 0, 1, 0], [1, 0, 1, 1, 1],
                       [0, 1, 1, 0, 1]]]], bool)
    half = {n: t[n].astype(np.float16).astype(np.float32)
            for n in ("q4", "k4", "v4")}
    np.savez(os.path.join(out, "io.npz"), **t,
             plain=attention(t["q3"], t["k3"], t["v3"], 8 ** -0.5)
             .astype(np.float32),
             causal_f16=attention(half["q4"], half["k4"], half["v4"],
                                  8 ** -0.5, causal=True)
             .astype(np.float16).astype(np.float32),
             masked=attention(t["q4"], t["k4"], t["v4"], 0.5, keep)
             .astype(np.float32))


def sdpa_fused(out):
    """Attentions of the fused kernel: an additive mask with grouped
    queries, and causal attention over a longer past, with row and key
    counts that leave partial blocks."""
    fixture("sdpa_fused", out)
    rng = np.random.default_rng(10)
    t = {n: rng.standard_normal(shape).astype(np.float32) for n, shape in (
        ("q", (1, 4, 7, 8)), ("k", (1, 2, 21, 8)), ("v", (1, 2, 21, 6)),
        ("qc", (2, 3, 6, 16)), ("kc", (2, 3, 37, 16)), ("vc", (2, 3, 37, 16)))}
    # Additive: 0 or a large negative value, with every row keeping some.
    t["m"] = np.where(rng.random((1, 1, 7, 21)) < 0.3, -1e9,
                      rng.standard_normal((1, 1, 7, 21))).astype(np.float32)
    k, v = np.repeat(t["k"], 2, axis=1), np.repeat(t["v"], 2, axis=1)
    s = (t["q"] @ np.swapaxes(k, -1, -2)) * 0.3 + t["m"]
    e = np.exp(s - s.max(-1, keepdims=True))
    masked = (e / e.sum(-1, keepdims=True)) @ v
    causal = attention(t["qc"], t["kc"], t["vc"], 16 ** -0.5, causal=True)
    np.savez(os.path.join(out, "io.npz"), **t,
             masked=masked.astype(np.float32),
             causal=causal.astype(np.float32))


def tract_gru(out):
    fixture("tract_gru", out)
    rng = np.random.default_rng(7)
    w = rng.standard_normal((6, 3)).astype(np.float32)
    r = rng.standard_normal((6, 2)).astype(np.float32)
    write(out, "w.dat", dat_bytes(w))
    write(out, "r.dat", dat_bytes(r))
    x = rng.standard_normal((5, 3)).astype(np.float32)

    def sigmoid(v):
        return 1 / (1 + np.exp(-v))
    h = np.zeros((1, 2), np.float32)
    ys = []
    for t in range(5):
        xh, rh = x[t:t + 1] @ w.T, h @ r.T
        z = sigmoid(xh[:, 0:2] + rh[:, 0:2])
        g = sigmoid(xh[:, 2:4] + rh[:, 2:4])
        n = np.tanh(xh[:, 4:6] + g * rh[:, 4:6])
        h = (1 - z) * n + z * h
        ys.append(h)
    np.savez(os.path.join(out, "io.npz"), x=x,
             y=np.concatenate(ys).astype(np.float32))


def gdn(out):
    """The gated delta rule, step by step in float64 (Qwen3.5's recurrence
    with unit-length q and k, q scaled by 1/sqrt(w), grouped heads)."""
    fixture("gdn", out)
    rng = np.random.default_rng(9)
    b, steps, key_heads, heads, width = 1, 5, 2, 4, 8
    q = rng.standard_normal((b, steps, key_heads, width)).astype(np.float32)
    k = rng.standard_normal((b, steps, key_heads, width)).astype(np.float32)
    v = rng.standard_normal((b, steps, heads, width)).astype(np.float32)
    log_decay = -rng.uniform(0.05, 0.5, (b, steps, heads)).astype(np.float32)
    beta = rng.uniform(0.1, 0.9, (b, steps, heads)).astype(np.float32)
    state0 = rng.standard_normal((b, heads, width, width)).astype(np.float32)
    state = state0.astype(np.float64)
    output = np.zeros((b, steps, heads, width))
    groups = heads // key_heads
    for t in range(steps):
        for h in range(heads):
            qt = q[0, t, h // groups].astype(np.float64)
            kt = k[0, t, h // groups].astype(np.float64)
            qt = qt / np.sqrt(qt @ qt + 1e-6) / np.sqrt(width)
            kt = kt / np.sqrt(kt @ kt + 1e-6)
            s = state[0, h] * np.exp(log_decay[0, t, h])
            delta = (v[0, t, h] - kt @ s) * beta[0, t, h]
            s = s + np.outer(kt, delta)
            state[0, h] = s
            output[0, t, h] = qt @ s
    np.savez(os.path.join(out, "io.npz"), query=q, key=k, value=v,
             log_decay=log_decay, beta=beta, initial_state=state0,
             output=output.astype(np.float32),
             final_state=state.astype(np.float32))


def causal_conv(out):
    """tract's causal_conv1d_update in float64, frame by frame: each new
    frame shifts the state of the last 4 frames, the output is SiLU of the
    taps' products with the state. io.npz has 5 frames, io1.npz 1."""
    fixture("causal_conv", out)
    rng = np.random.default_rng(12)
    channels, taps = 6, 4
    weight = rng.standard_normal((channels, 1, taps)).astype(np.float32)
    write(out, "conv.weight.dat", dat_bytes(weight))
    for name, frames in (("io.npz", 5), ("io1.npz", 1)):
        x = rng.standard_normal((1, channels, frames)).astype(np.float32)
        state0 = rng.standard_normal((1, channels, taps)).astype(np.float32)
        state = state0[0].astype(np.float64)
        output = np.zeros((1, channels, frames))
        for t in range(frames):
            state = np.concatenate([state[:, 1:], x[0, :, t:t + 1]], axis=1)
            s = (weight[:, 0, :] * state).sum(axis=1)
            output[0, :, t] = s / (1 + np.exp(-s))
        np.savez(os.path.join(out, name), input=x, initial_state=state0,
                 output=output.astype(np.float32),
                 final_state=state[None].astype(np.float32))


def transformers_ops(out):
    """tract's transformer activations and masked softmax, in float64: SiLU,
    GELU's tanh form with x^3 and, fast, x^2 (tract's `fast_impl`; the op
    named `gelu_fast_approx` is the x^3 form), the softmax of a scaled input
    plus a float mask or under a boolean one (then zeroed where it is
    false), and GPT-OSS's clamped SwiGLU."""
    fixture("transformers_ops", out)
    rng = np.random.default_rng(13)
    x = rng.uniform(-3, 3, (1, 2, 3, 4)).astype(np.float32)
    m = rng.uniform(-2, 2, (1, 2, 3, 4)).astype(np.float32)
    b = rng.uniform(size=(3, 4)) < 0.6
    b[:, 0] = True
    xd, md = x.astype(np.float64), m.astype(np.float64)

    def gelu(v, power):
        return 0.5 * v * (1 + np.tanh(np.sqrt(2 / np.pi) *
                                      (v + 0.044715 * v ** power)))

    def softmax(v):
        e = np.exp(v - v.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    silu = xd / (1 + np.exp(-xd))
    masked = softmax(np.where(b, xd * 0.5, -np.inf))
    g = np.minimum(xd, 0.7)
    u = np.clip(md, -0.7, 0.7)
    outputs = dict(silu=silu, silu_old=silu, gelu=gelu(xd, 3),
                   gelu_fast=gelu(xd, 2), gelu_fast_named=gelu(xd, 3),
                   softmax_add=softmax(xd * 0.5 + md), softmax_bool=masked,
                   softmax_post=np.where(b, masked, 0.0),
                   swiglu=(u + 1) * g / (1 + np.exp(-1.702 * g)))
    np.savez(os.path.join(out, "io.npz"), x=x, m=m, b=b,
             **{k: v.astype(np.float32) for k, v in outputs.items()})


def quantized(out):
    """tract's quantized casts and arithmetic, in float32 as the compiled
    model computes them: q = clip(round(x / scale) + zero_point), rounding
    half away from zero; x = scale * (q - zero_point)."""
    fixture("quantized", out)
    f32 = np.float32

    def quantize(x, scale, zero_point, lo, hi):
        x = x.astype(f32) / f32(scale)
        x = np.sign(x) * np.floor(np.abs(x) + f32(0.5))
        return np.clip(x + f32(zero_point), lo, hi)

    def dequantize(q, scale, zero_point):
        return (q.astype(f32) - f32(zero_point)) * f32(scale)

    rng = np.random.default_rng(11)
    x = rng.uniform(-3, 3, (2, 4)).astype(f32)
    q = rng.integers(0, 256, (2, 4)).astype(np.uint8)
    a = quantize(x, 0.05, 3, -128, 127)
    p = quantize(dequantize(a, 0.05, 3) ** 2, 0.1, 0, 0, 255)
    s = quantize(dequantize(a, 0.05, 3) + dequantize(q, 0.02, 10), 0.04, -5,
                 -128, 127)
    r = np.clip(q.astype(np.int32) - 10 - 118, -128, 127).astype(np.int8)
    np.savez(os.path.join(out, "io.npz"), x=x, q=q,
             y=dequantize(p, 0.1, 0), z=dequantize(s, 0.04, -5), r=r)


def quantized_convnet(out):
    """A quantized convolution network as torch-to-nnef writes one: stored
    QU8/QI8 integers (variables whose .dat holds the graph.quant type's
    integers), i32 biases in units of input scale times weight scale, a
    relu on the quantized result, a depthwise strided convolution and a
    linear layer. The reference is the integer arithmetic the compiled model
    runs: i32 sums, requantized by round_half_even(acc * multiplier), with
    the multiplier in float32."""
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    f32 = np.float32
    rng = np.random.default_rng(5)
    C, O, H = 3, 8, 9
    q = {"x": (0.02, 128, False), "w1": (0.01, 0, True), "c1": (0.05, 100, False),
         "w2": (0.02, 3, True), "c2": (0.04, 110, False),
         "w3": (0.01, 0, True), "y": (0.1, -5, True)}
    w1 = rng.integers(-127, 128, (O, C, 3, 3)).astype(np.int8)
    b1 = rng.integers(-3000, 3000, (O,)).astype(np.int32)
    w2 = rng.integers(-120, 128, (O, 1, 3, 3)).astype(np.int8)
    w3 = rng.integers(-127, 128, (5, O * 4 * 4)).astype(np.int8)
    b3 = rng.integers(-3000, 3000, (1, 5)).astype(np.int32)
    for n, a in (("w1", w1), ("b1", b1), ("w2", w2), ("w3", w3), ("b3", b3)):
        write(out, n + ".dat", dat_bytes(a))
    write(out, "graph.nnef", f"""version 1.0;

graph qnet(x) -> (y)
{{
  x = external<scalar>(shape = [1, {C}, {H}, {H}]);
  w1 = variable<scalar>(label = 'w1', shape = [{O}, {C}, 3, 3]);
  b1 = variable<integer>(label = 'b1', shape = [{O}]);
  w2 = variable<scalar>(label = 'w2', shape = [{O}, 1, 3, 3]);
  w3 = variable<scalar>(label = 'w3', shape = [5, {O * 16}]);
  b3 = variable<integer>(label = 'b3', shape = [1, 5]);
  c1 = conv(x, w1, b1, padding = [(1, 1), (1, 1)], border = 'constant');
  r1 = relu(c1);
  c2 = conv(r1, w2, padding = [(0, 0), (0, 0)], stride = [2, 2], groups = {O});
  f = reshape(c2, shape = [1, {O * 16}]);
  y = linear(f, w3, b3);
}}
""".encode())
    write(out, "graph.quant", "".join(
        f'"{n}": zero_point_linear_quantize(zero_point = {z}, scale = {s}, '
        f'bits = 8, signed = {str(sg).lower()}, symmetric = false);\n'
        for n, (s, z, sg) in q.items()
        if n not in ("w1", "w3")).encode() + "".join(
        f'"{n}": zero_point_linear_quantize(zero_point = {q[n][1]}, '
        f'scale = {q[n][0]}, bits = 8, signed = true, symmetric = true);\n'
        for n in ("w1", "w3")).encode() + b'"r1": zero_point_linear_quantize('
        b'zero_point = 100, scale = 0.05, bits = 8, signed = false, '
        b'symmetric = false);\n"f": zero_point_linear_quantize(zero_point = '
        b'110, scale = 0.04, bits = 8, signed = false, symmetric = false);\n')

    def requantize(acc, x, w, y):
        m = f32(f32(q[x][0]) * f32(q[w][0])) / f32(q[y][0])
        r = np.round(acc.astype(f32) * m) + q[y][1]
        return np.clip(r, -128 if q[y][2] else 0, 127 if q[y][2] else 255)

    def conv(x, w, stride, pad, groups):
        x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
        n = (x.shape[2] - 3) // stride + 1
        acc = np.zeros((1, w.shape[0], n, n), np.int64)
        per = w.shape[0] // groups
        for o in range(w.shape[0]):
            g = o // per
            cs = range(g * w.shape[1], (g + 1) * w.shape[1])
            for i in range(3):
                for j in range(3):
                    for ci, c in enumerate(cs):
                        acc[0, o] += w[o, ci, i, j] * x[
                            0, c, i:i + stride * n:stride, j:j + stride * n:stride]
        return acc

    x = rng.integers(0, 256, (1, C, H, H)).astype(np.uint8)
    acc1 = conv(x.astype(np.int64) - 128, w1.astype(np.int64), 1, 1, 1)
    c1 = requantize(acc1 + b1[None, :, None, None], "x", "w1", "c1")
    r1 = np.maximum(c1, 100)
    acc2 = conv(r1.astype(np.int64) - 100, w2.astype(np.int64) - 3, 2, 0, O)
    c2 = requantize(acc2, "c1", "w2", "c2")
    acc3 = (c2.reshape(1, -1).astype(np.int64) - 110) @ w3.T.astype(np.int64)
    y = requantize(acc3 + b3, "c2", "w3", "y").astype(np.int8)
    np.savez(os.path.join(out, "io.npz"), x=x, y=y)


def quantized_conv1d(out):
    """torch-to-nnef's quantized conv1d and conv1d_relu (a keyword
    spotter's front): a 1-D convolution with an i32 bias, a relu, a
    depthwise strided one, then one of 2 groups; the reference is the
    integer arithmetic, as for quantized_convnet."""
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    f32 = np.float32
    rng = np.random.default_rng(6)
    C, O, L = 4, 16, 20
    q = {"x": (0.03, 120, False), "w1": (0.01, 0, True),
         "c1": (0.04, 90, False), "r1": (0.04, 90, False),
         "w2": (0.02, -2, True), "c2": (0.05, 7, True),
         "w3": (0.01, 0, True), "y": (0.08, -3, True)}
    w1 = rng.integers(-127, 128, (O, C, 3)).astype(np.int8)
    b1 = rng.integers(-3000, 3000, (O,)).astype(np.int32)
    w2 = rng.integers(-120, 128, (O, 1, 5)).astype(np.int8)
    w3 = rng.integers(-127, 128, (4, O // 2, 3)).astype(np.int8)
    b3 = rng.integers(-2000, 2000, (4,)).astype(np.int32)
    for n, a in (("w1", w1), ("b1", b1), ("w2", w2), ("w3", w3), ("b3", b3)):
        write(out, n + ".dat", dat_bytes(a))
    write(out, "graph.nnef", f"""version 1.0;

graph qconv1d(x) -> (y)
{{
  x = external<scalar>(shape = [1, {C}, {L}]);
  w1 = variable<scalar>(label = 'w1', shape = [{O}, {C}, 3]);
  b1 = variable<integer>(label = 'b1', shape = [{O}]);
  w2 = variable<scalar>(label = 'w2', shape = [{O}, 1, 5]);
  w3 = variable<scalar>(label = 'w3', shape = [4, {O // 2}, 3]);
  b3 = variable<integer>(label = 'b3', shape = [4]);
  c1 = conv(x, w1, b1, padding = [(1, 1)], border = 'constant');
  r1 = relu(c1);
  c2 = conv(r1, w2, padding = [(2, 1)], stride = [2], groups = {O});
  y = conv(c2, w3, b3, padding = [(1, 1)], groups = 2);
}}
""".encode())
    write(out, "graph.quant", "".join(
        f'"{n}": zero_point_linear_quantize(zero_point = {z}, scale = {sc}, '
        f'bits = 8, signed = {str(sg).lower()}, symmetric = false);\n'
        for n, (sc, z, sg) in q.items()).encode())

    def requantize(acc, x, w, y):
        m = f32(f32(q[x][0]) * f32(q[w][0])) / f32(q[y][0])
        r = np.round(acc.astype(f32) * m) + q[y][1]
        return np.clip(r, -128 if q[y][2] else 0, 127 if q[y][2] else 255)

    def conv1d(x, w, stride, before, after, groups):
        x = np.pad(x, ((0, 0), (0, 0), (before, after)))
        k = w.shape[2]
        n = (x.shape[2] - k) // stride + 1
        acc = np.zeros((1, w.shape[0], n), np.int64)
        per = w.shape[0] // groups
        for o in range(w.shape[0]):
            g = o // per
            for ci in range(w.shape[1]):
                c = g * w.shape[1] + ci
                for j in range(k):
                    acc[0, o] += w[o, ci, j] * x[0, c, j:j + stride * n:stride]
        return acc

    x = rng.integers(0, 256, (1, C, L)).astype(np.uint8)
    acc1 = conv1d(x.astype(np.int64) - 120, w1.astype(np.int64), 1, 1, 1, 1)
    r1 = np.maximum(requantize(acc1 + b1[None, :, None], "x", "w1", "c1"), 90)
    acc2 = conv1d(r1.astype(np.int64) - 90, w2.astype(np.int64) + 2, 2, 2, 1, O)
    c2 = requantize(acc2, "r1", "w2", "c2")
    acc3 = conv1d(c2.astype(np.int64) - 7, w3.astype(np.int64), 1, 1, 1, 2)
    y = requantize(acc3 + b3[None, :, None], "c2", "w3", "y").astype(np.int8)
    np.savez(os.path.join(out, "io.npz"), x=x, y=y)


def stream_table(out):
    fixture("stream_table", out)
    table = np.arange(128, dtype=np.float32).reshape(64, 2) / 8
    write(out, "table.dat", dat_bytes(table))


def tract_stft(out):
    fixture("tract_stft", out)
    rng = np.random.default_rng(8)
    window = rng.uniform(0.5, 1.5, 4).astype(np.float32)
    write(out, "window.dat", dat_bytes(window))
    signal = rng.standard_normal((2, 12, 2)).astype(np.float32)
    complex_signal = signal[..., 0] + 1j * signal[..., 1]
    frame, stride = 7, 2
    padded = np.zeros(frame)
    padded[1:5] = window  # centred: (7 - 4) // 2 zeros before
    frames = [complex_signal[:, t:t + frame] * padded
              for t in range(0, 12 - frame + 1, stride)]
    spectrum = np.fft.fft(np.stack(frames, axis=1), axis=2)
    np.savez(os.path.join(out, "io.npz"), signal=signal,
             spectrum=np.stack([spectrum.real, spectrum.imag], -1)
             .astype(np.float32))


if __name__ == "__main__":
    {"conv_matmul": conv_matmul, "ops": ops, "dtypes": dtypes, "tgz": tgz,
     "hostile": hostile, "absolute": absolute,
     "short_dat": short_dat, "stdops": stdops,
     "tract_style": tract_style, "torch_style": torch_style,
     "tract_files": tract_files, "sdpa": sdpa, "sdpa_fused": sdpa_fused,
     "tract_gru": tract_gru,
     "tract_stft": tract_stft, "gdn": gdn, "causal_conv": causal_conv,
     "transformers_ops": transformers_ops,
     "stream_table": stream_table, "quantized": quantized,
     "quantized_convnet": quantized_convnet,
     "quantized_conv1d": quantized_conv1d,
     "computed_args": computed_args, "q4_linear": q4_linear}[sys.argv[1]](sys.argv[2])
