#!/usr/bin/python3
"""Exports the small Llama-style language model of the LLM tests.

A decoder as Llama writes it: a byte embedding (256 tokens), LAYERS layers
of rms_norm -> grouped-query attention with rotary embeddings -> rms_norm ->
SwiGLU MLP (each with its residual), a final rms_norm and the LM head. The
weights are random, seeded, and at PyTorch's default scales, so that the
logits spread.

The ONNX export has the form HuggingFace exporters give decoders:

  inputs   input_ids                  B, S       (i64)
           past_key_values.L.key      B, KV, P, D
           past_key_values.L.value    B, KV, P, D
  outputs  logits                     B, S, 256
           present.L.key              B, KV, P+S, D
           present.L.value            B, KV, P+S, D

with symbols B (batch), S (new tokens) and P (past tokens). Positions are
P..P+S-1, read from the past's length; the attention mask is causal over
the past and the new tokens.

Usage: make-llm-model.py OUT.onnx [--bundles PREFIX] [--prompt TEXT]
                                  [--steps N] [--config NAME]
                                  [--layers N] [--hidden N] [--heads N]
                                  [--kv-heads N] [--ffn N] [--vocab N]
                                  [--rope-theta X] [--tied]
                                  [--q4-0 [--q8-inputs] | --f16]
                                  [--contrib PATH]
                                  [--contrib-q4 PATH] [--nnef FOLDER]
                                  [--nnef-weights f32|f16|q4_0]

--config takes the shape of a released model (the weights stay random):
  smollm2-135m   hidden 576, 30 layers, 9 heads, 3 key/value heads,
                 MLP 1536, vocabulary 49152, tied embeddings, rope θ 100000
  llama-3.2-1b   hidden 2048, 16 layers, 32 heads, 8 key/value heads,
                 MLP 8192, vocabulary 128256, tied embeddings, rope θ 500000
the other options then change single values. A vocabulary above 256 takes
the prompt's bytes as token ids all the same. torch writes a model above
2 GB with its weights as external data, a file per tensor beside OUT.onnx:
give such a model a folder of its own.

The default size (4 layers of width 384, 6 query and 2 key/value heads of
64, an MLP of 1024: 6.5 million parameters) is the benchmark's; the tests
take a smaller one, which compiles faster.

--bundles writes PREFIX.0.npz for the prompt (P = 0) and PREFIX.1.npz ...
PREFIX.N.npz for N greedy decode steps (S = 1): each holds the inputs and
torch's outputs under the model's names, as `tract run --input-from-bundle`
and `--assert-output-bundle` read them; the token of each step is the
argmax of the previous step's last logits.

--q4-0 computes the bundles with the weights that tract's `block-quant`
transform quantizes replaced by their Q4_0 values (blocks of 32 along the
input axis, each value (q - 8) * d with an f16 scale d and a code q of 4
bits) and the output head's rounded to f16 (which block-quant stores so),
so that `tract -t block-quant` can be checked against them; the ONNX
export keeps the f32 weights. --f16 does the same for `-t f16-weights`:
the same weights rounded to f16, the products still summed in f32.
With --q8-inputs too, those products round their inputs to 8 bits per
block of 32 (Q8_0) when they have fewer than 16 rows, as tract's kernels
do on a CPU that sums byte products (AVX-512 VNNI, AArch64's dot product).

--nnef FOLDER writes the same model as tract NNEF the way torch-to-nnef
lays a causal language model out (graph.nnef and a .dat file per weight):
inputs input_ids and in_cache_key_{i} / in_cache_value_{i}, outputs
`outputs` and out_cache_key_{i} / out_cache_value_{i}, symbols S and P with
S >= 1, P >= 0, S+P < 4096 and scenarios pp (P == 0) and tg (S == 1),
tract_transformers_rms_norm, apply_rope and sdpa; --nnef-weights f16 or
q4_0 stores the weights of the products that -t f16-weights or -t
block-quant would store so as f16 (cast to f32 in the graph) or as Q4_0
blocks (tract's .dat item type 0x2040), with the values of --f16 or
--q4-0. The bundles then come
twice, PREFIX.nnef.N.npz holding them under those names.

--contrib writes the same model as onnxruntime's generative-AI exports lay
a decoder out, with its contrib ops: SimplifiedLayerNormalization,
SkipSimplifiedLayerNormalization (the residual add fused with the next
norm), GroupQueryAttention with its rotary embeddings, and the inputs
input_ids, attention_mask (B, P+S: ones) and the past keys and values;
--contrib-q4 the same with MatMulNBits (4-bit blocks of 32, no zero
points, accuracy level 4: onnxruntime may round A to 8 bits, as its
generative-AI builder writes them for CPUs) for the products that tract's
block-quant quantizes, their values those of --q4-0, and the output head's
weights as f16 (a Cast to f32 before its MatMul). The bundles then carry an attention_mask too.
"""
import argparse
import math
import os

import numpy as np
import torch

VOCAB = 256
TIED = False
HIDDEN = 384
LAYERS = 4
HEADS = 6
KV_HEADS = 2
HEAD_DIM = HIDDEN // HEADS
FFN = 1024
EPS = 1e-5
ROPE_THETA = 10000.0
MAX_POSITIONS = 4096


class RmsNorm(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(width).uniform_(0.8, 1.2))

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return x * torch.rsqrt(variance + EPS) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Attention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = torch.nn.Linear(HIDDEN, HEADS * HEAD_DIM, bias=False)
        self.k_proj = torch.nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM, bias=False)
        self.v_proj = torch.nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM, bias=False)
        self.o_proj = torch.nn.Linear(HEADS * HEAD_DIM, HIDDEN, bias=False)

    def forward(self, x, cos, sin, mask, past_key, past_value):
        batch, seq = x.shape[0], x.shape[1]
        q = self.q_proj(x).view(batch, seq, HEADS, HEAD_DIM).transpose(1, 2)
        k = self.k_proj(x).view(batch, seq, KV_HEADS, HEAD_DIM).transpose(1, 2)
        v = self.v_proj(x).view(batch, seq, KV_HEADS, HEAD_DIM).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        key = torch.cat((past_key, k), dim=2)
        value = torch.cat((past_value, v), dim=2)
        # Grouped-query attention: each key/value head serves HEADS/KV_HEADS
        # query heads (HuggingFace's repeat_kv).
        total = key.shape[2]
        groups = HEADS // KV_HEADS
        k_rep = key[:, :, None].expand(batch, KV_HEADS, groups, total,
                                       HEAD_DIM).reshape(batch, HEADS, total,
                                                         HEAD_DIM)
        v_rep = value[:, :, None].expand(batch, KV_HEADS, groups, total,
                                         HEAD_DIM).reshape(batch, HEADS,
                                                           total, HEAD_DIM)
        scores = q @ k_rep.transpose(2, 3) / math.sqrt(HEAD_DIM) + mask
        probs = torch.softmax(scores, dim=-1)
        out = (probs @ v_rep).transpose(1, 2).reshape(batch, seq,
                                                      HEADS * HEAD_DIM)
        return self.o_proj(out), key, value


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = torch.nn.Linear(HIDDEN, FFN, bias=False)
        self.up_proj = torch.nn.Linear(HIDDEN, FFN, bias=False)
        self.down_proj = torch.nn.Linear(FFN, HIDDEN, bias=False)

    def forward(self, x):
        gate = self.gate_proj(x)
        return self.down_proj(gate * torch.sigmoid(gate) * self.up_proj(x))


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.input_layernorm = RmsNorm(HIDDEN)
        self.self_attn = Attention()
        self.post_attention_layernorm = RmsNorm(HIDDEN)
        self.mlp = Mlp()

    def forward(self, x, cos, sin, mask, past_key, past_value):
        attended, key, value = self.self_attn(self.input_layernorm(x), cos,
                                              sin, mask, past_key, past_value)
        x = x + attended
        return x + self.mlp(self.post_attention_layernorm(x)), key, value


class Decoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = torch.nn.Embedding(VOCAB, HIDDEN)
        self.layers = torch.nn.ModuleList(Layer() for _ in range(LAYERS))
        self.norm = RmsNorm(HIDDEN)
        self.lm_head = torch.nn.Linear(HIDDEN, VOCAB, bias=False)
        if TIED:
            self.lm_head.weight = self.embed_tokens.weight
        inv_freq = 1.0 / ROPE_THETA ** (
            torch.arange(0, HEAD_DIM, 2, dtype=torch.float32) / HEAD_DIM)
        angles = torch.outer(torch.arange(MAX_POSITIONS, dtype=torch.float32),
                             inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos_cached", angles.cos(), persistent=False)
        self.register_buffer("sin_cached", angles.sin(), persistent=False)

    def forward(self, input_ids, *past):
        seq = input_ids.shape[1]
        past_len = past[0].shape[2]
        positions = torch.arange(past_len, past_len + seq)
        cos = self.cos_cached[positions][None, None]
        sin = self.sin_cached[positions][None, None]
        # Query i (at position past_len + i) sees keys 0..past_len + i.
        rows = torch.arange(seq)[:, None] + past_len
        cols = torch.arange(past_len + seq)[None, :]
        mask = torch.zeros(seq, past_len + seq).masked_fill(
            cols > rows, torch.finfo(torch.float32).min)
        x = self.embed_tokens(input_ids)
        presents = []
        for index, layer in enumerate(self.layers):
            x, key, value = layer(x, cos, sin, mask, past[2 * index],
                                  past[2 * index + 1])
            presents += [key, value]
        return (self.lm_head(self.norm(x)), *presents)


def q4_0_blocks(weight):
    """`weight` (out, in) with each run of 32 inputs through Q4_0: the value
    of largest magnitude maps to code 0, its scale d = value / -8 in f16,
    the others to the code floor(x / d + 8.5) clamped to 0..15. Returns the
    codes (out, in / 32, 32) and the scales (out, in / 32), as f32."""
    w = weight.detach().numpy().astype(np.float32)
    blocks = w.reshape(-1, 32)
    extreme = blocks[np.arange(len(blocks)), np.abs(blocks).argmax(axis=1)]
    scale = (extreme / np.float32(-8)).astype(np.float16).astype(np.float32)
    inverse = np.divide(np.float32(1), scale, out=np.zeros_like(scale),
                        where=scale != 0)
    scaled = blocks * inverse[:, None]
    codes = np.clip(np.floor(scaled + np.float32(8.5)), 0, 15)
    rows = w.shape[0]
    return codes.reshape(rows, -1, 32), scale.reshape(rows, -1)


def q4_0(weight):
    """`weight` with its values replaced by their Q4_0 ones, (q - 8) * d."""
    codes, scale = q4_0_blocks(weight)
    values = (codes - np.float32(8)) * scale[..., None]
    return torch.from_numpy(values.astype(np.float32).reshape(weight.shape))


def q8_0(x):
    """`x` with each run of 32 along its last axis rounded to 8 bits, as
    tract's kernels round the rows of a Q4_0 product's decoding step: the
    scale is the largest magnitude over 127, each code the value times 127
    over that magnitude, rounded to nearest (ties to even), in f32."""
    blocks = x.reshape(-1, 32)
    largest = blocks.abs().amax(dim=1, keepdim=True)
    inverse = torch.where(largest > 0, 127 / largest,
                          torch.zeros_like(largest))
    codes = torch.round(blocks * inverse)
    return (codes * (largest / 127)).reshape(x.shape)


def round_inputs(module, inputs):
    """A forward pre-hook: the input of a product of fewer than 16 rows,
    through q8_0."""
    x = inputs[0]
    if x.numel() // x.shape[-1] < 16:
        return (q8_0(x),)
    return None


def block_quantized(name, module):
    """Whether tract's block-quant stores the weights of `module` as Q4_0:
    the products with at least 2^14 weights, an input axis in blocks of 32
    and outputs in groups of 16, but the output head."""
    out_features, in_features = module.weight.shape
    return ("lm_head" not in name and in_features * out_features >= 1 << 14
            and in_features % 32 == 0 and out_features % 16 == 0)


def half_stored(name, module):
    """Whether tract's f16-weights stores the weights of `module` as f16:
    block_quantized's products, whatever the size of their input axis."""
    out_features, in_features = module.weight.shape
    return ("lm_head" not in name and in_features * out_features >= 1 << 14
            and out_features % 16 == 0)


def quantize_as_tract(model, halves, q8_inputs=False):
    """The weights tract's block-quant quantizes, as Q4_0 values, and the
    output head's rounded to f16 (or, with `halves`, those of the same
    products that -t f16-weights stores, rounded to f16; an input axis of
    any size); with `q8_inputs`, the Q4_0 products round the inputs of a
    decoding step (round_inputs)."""
    for name, module in model.named_modules():
        if not isinstance(module, torch.nn.Linear):
            continue
        if "lm_head" in name:
            # Block-quant stores the output head as f16 (untied from the
            # embedding table, which stays f32).
            if not halves:
                module.weight = torch.nn.Parameter(
                    module.weight.data.half().float())
            continue
        out_features, in_features = module.weight.shape
        if halves:
            if half_stored(name, module):
                module.weight.data = module.weight.data.half().float()
        elif block_quantized(name, module):
            module.weight.data = q4_0(module.weight.data)
            if q8_inputs:
                module.register_forward_pre_hook(round_inputs)


def contrib_export(model, path, q4):
    """Writes `model` as onnxruntime's generative-AI exports lay a decoder
    out with its contrib ops: SimplifiedLayerNormalization, then
    SkipSimplifiedLayerNormalization (the residual add fused with the next
    norm), GroupQueryAttention with its rotary embeddings (tables of
    MAX_POSITIONS rows) and, with `q4`, MatMulNBits (4-bit blocks of 32
    without zero points: the Q4_0 values of block_quantized products) in
    place of MatMul. Inputs input_ids (B, S), attention_mask (B, P+S) and
    the past keys and values (B, KV, P, D); outputs logits and the present
    ones, under the names of the plain export."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes, initializers = [], []

    def constant(name, array):
        initializers.append(numpy_helper.from_array(array, name))
        return name

    def node(op, inputs, outputs, domain=None, **attributes):
        nodes.append(helper.make_node(op, inputs, outputs, name=outputs[0],
                                      domain=domain, **attributes))
        return outputs[0]

    def linear(name, module, x, out):
        weight = module.weight.detach()
        if q4 and block_quantized(name, module):
            codes, scales = q4_0_blocks(weight)
            codes = codes.astype(np.uint8)
            packed = codes[..., 0::2] | (codes[..., 1::2] << 4)
            rows, columns = weight.shape
            return node("MatMulNBits",
                        [x, constant(name + ".qweight", packed),
                         constant(name + ".scales", scales)], [out],
                        domain="com.microsoft", K=columns, N=rows, bits=4,
                        block_size=32, accuracy_level=4)
        if q4 and name == "lm_head":
            # The output head as f16, as block-quant stores it.
            half = constant(name + ".weight",
                            weight.numpy().T.astype(np.float16))
            return node("MatMul", [x, node("Cast", [half],
                                           [name + ".weight_f32"],
                                           to=TensorProto.FLOAT)], [out])
        return node("MatMul", [x, constant(name + ".weight",
                                           weight.numpy().T.copy())], [out])

    def norm_weight(name, norm):
        return constant(name, norm.weight.detach().numpy())

    # Each sequence's length less one, and the total, as GQA reads them.
    ones = constant("axes.1", np.array([1], np.int64))
    one = constant("one", np.array(1, np.int64))
    summed = node("ReduceSum", ["attention_mask", ones], ["mask_sum"],
                  keepdims=0)
    last = node("Sub", [summed, one], ["seqlens_k_i64"])
    seqlens = node("Cast", [last], ["seqlens_k"], to=TensorProto.INT32)
    shape = node("Shape", ["attention_mask"], ["mask_shape"])
    total = node("Gather", [shape, one], ["total_i64"], axis=0)
    total = node("Cast", [total], ["total_sequence_length"],
                 to=TensorProto.INT32)
    half = HEAD_DIM // 2
    cos = constant("cos_cache", model.cos_cached[:, :half].numpy().copy())
    sin = constant("sin_cache", model.sin_cached[:, :half].numpy().copy())

    x = node("Gather", [constant("embed_tokens.weight",
                                 model.embed_tokens.weight.detach().numpy()),
                        "input_ids"], ["embedded"], axis=0)
    residual = x
    normed = node("SimplifiedLayerNormalization",
                  [x, norm_weight("layers.0.input_layernorm.weight",
                                  model.layers[0].input_layernorm)],
                  ["layers.0.input_norm"], axis=-1, epsilon=EPS)
    for index, layer in enumerate(model.layers):
        prefix = f"layers.{index}"
        attention = layer.self_attn
        q, k, v = (linear(f"{prefix}.self_attn.{part}_proj",
                          getattr(attention, f"{part}_proj"), normed,
                          f"{prefix}.{part}")
                   for part in "qkv")
        attended = node(
            "GroupQueryAttention",
            [q, k, v, f"past_key_values.{index}.key",
             f"past_key_values.{index}.value", seqlens, total, cos, sin],
            [f"{prefix}.attention", f"present.{index}.key",
             f"present.{index}.value"], domain="com.microsoft",
            num_heads=HEADS, kv_num_heads=KV_HEADS, do_rotary=1)
        projected = linear(f"{prefix}.self_attn.o_proj", attention.o_proj,
                           attended, f"{prefix}.o")
        post = node("SkipSimplifiedLayerNormalization",
                    [projected, residual,
                     norm_weight(f"{prefix}.post_attention_layernorm.weight",
                                 layer.post_attention_layernorm)],
                    [f"{prefix}.post_norm", "", "", f"{prefix}.residual1"],
                    domain="com.microsoft", epsilon=EPS)
        residual = f"{prefix}.residual1"
        mlp = layer.mlp
        gate = linear(f"{prefix}.mlp.gate_proj", mlp.gate_proj, post,
                      f"{prefix}.gate")
        up = linear(f"{prefix}.mlp.up_proj", mlp.up_proj, post,
                    f"{prefix}.up")
        sigmoid = node("Sigmoid", [gate], [f"{prefix}.sigmoid"])
        silu = node("Mul", [gate, sigmoid], [f"{prefix}.silu"])
        product = node("Mul", [silu, up], [f"{prefix}.gated"])
        down = linear(f"{prefix}.mlp.down_proj", mlp.down_proj, product,
                      f"{prefix}.down")
        if index + 1 < len(model.layers):
            following = model.layers[index + 1].input_layernorm
            weight = norm_weight(f"layers.{index + 1}.input_layernorm.weight",
                                 following)
            output = f"layers.{index + 1}.input_norm"
        else:
            weight = norm_weight("norm.weight", model.norm)
            output = "final_norm"
        normed = node("SkipSimplifiedLayerNormalization",
                      [down, residual, weight],
                      [output, "", "", f"{prefix}.residual2"],
                      domain="com.microsoft", epsilon=EPS)
        residual = f"{prefix}.residual2"
    linear("lm_head", model.lm_head, normed, "logits")

    def info(name, kind, shape):
        return helper.make_tensor_value_info(name, kind, shape)
    past_shape = ["B", KV_HEADS, "P", HEAD_DIM]
    present_shape = ["B", KV_HEADS, "P+S", HEAD_DIM]
    inputs = [info("input_ids", TensorProto.INT64, ["B", "S"]),
              info("attention_mask", TensorProto.INT64, ["B", "P+S"])]
    outputs = [info("logits", TensorProto.FLOAT, ["B", "S", VOCAB])]
    for index in range(LAYERS):
        for kind in ("key", "value"):
            inputs.append(info(f"past_key_values.{index}.{kind}",
                               TensorProto.FLOAT, past_shape))
            outputs.append(info(f"present.{index}.{kind}", TensorProto.FLOAT,
                                present_shape))
    graph = helper.make_graph(nodes, "decoder", inputs, outputs,
                              initializer=initializers)
    exported = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    size = sum(len(tensor.raw_data) for tensor in initializers)
    if size < 2 << 30:
        onnx.save_model(exported, path)
    else:
        # Above protobuf's 2 GB: the weights in one file beside the model.
        onnx.save_model(exported, path, save_as_external_data=True,
                        all_tensors_to_one_file=True,
                        location=os.path.basename(path) + ".data",
                        size_threshold=1024)


def nnef_export(model, folder, weights):
    """Writes `model` as tract NNEF the way torch-to-nnef lays a causal
    language model out: graph.nnef over inputs input_ids (1, S) and
    in_cache_key_{i} / in_cache_value_{i} (1, KV, P, D), outputs `outputs`
    (the logits) and out_cache_key_{i} / out_cache_value_{i}; symbols S and
    P with S >= 1, P >= 0 and S+P < MAX_POSITIONS, scenarios pp (P == 0)
    and tg (S == 1); tract_transformers_rms_norm, apply_rope and sdpa; a
    .dat file per weight, the products' in `weights` (f32, f16, or q4_0 for
    those tract's block-quant quantizes, the others f32)."""
    import struct

    os.makedirs(folder, exist_ok=True)
    lines = []
    declared = []

    def dat(label, array, kind):
        header = bytearray(128)
        dims = list(array.shape) + [0] * (8 - array.ndim)
        if kind == "q4_0":
            codes, scales = q4_0_blocks(torch.from_numpy(array))
            codes = codes.astype(np.uint8)
            packed = codes[..., 0::2] | (codes[..., 1::2] << 4)
            halves = scales.astype(np.float16)
            blocks = np.concatenate(
                [halves.reshape(-1, 1).view(np.uint8),
                 packed.reshape(-1, 16)], axis=1)
            data = blocks.tobytes()
            bits, code, vendor = 0xFFFFFFFF, 0x2040, 0x5452
        else:
            dtype = np.float16 if kind == "f16" else np.float32
            data = np.ascontiguousarray(array, dtype).tobytes()
            bits, code, vendor = 8 * np.dtype(dtype).itemsize, 0, 0
        struct.pack_into("<2sBBII8IIHH", header, 0, b"\x4e\xef", 1, 0,
                         len(data), array.ndim, *dims, bits, code, vendor)
        with open(os.path.join(folder, label + ".dat"), "wb") as f:
            f.write(header + data)

    def variable(name, array, kind="f32"):
        dat(name, array, kind)
        shape = ", ".join(str(d) for d in array.shape)
        stored = name + "_f16" if kind == "f16" else name
        lines.append(f"  {stored} = variable<scalar>(label = '{name}', "
                     f"shape = [{shape}]);")
        if kind == "f16":
            # f16 weights, f32 products (as -t f16-weights computes them).
            let(name, f"tract_core_cast({stored}, to = 'f32')")
        return name

    def let(name, expression):
        lines.append(f"  {name} = {expression};")
        return name

    def linear(name, module, x, out):
        weight = module.weight.detach().numpy()
        kind = "f32"
        if weights == "f16" and half_stored(name, module):
            kind = "f16"
        elif weights == "q4_0" and block_quantized(name, module):
            kind = "q4_0"
        w = variable(name.replace(".", "_"), weight, kind)
        return let(out, f"matmul({x}, {w}, transposeA = false, "
                        "transposeB = true)")

    def norm(x, module, name, out):
        weight = variable(name, module.weight.detach().numpy()[None, None])
        normed = let(out + "_rms", f"tract_transformers_rms_norm({x}, "
                                   f"axis = 2, eps = {EPS})")
        return let(out, f"mul({normed}, {weight})")

    def heads(x, count, out):
        split = let(out + "_split", f"reshape({x}, shape = [0, 0, {count}, "
                                    f"{HEAD_DIM}])")
        return let(out, f"transpose({split}, axes = [0, 2, 1, 3])")

    inputs, outputs = ["input_ids"], ["outputs"]
    for index in range(LAYERS):
        inputs += [f"in_cache_key_{index}", f"in_cache_value_{index}"]
        outputs += [f"out_cache_key_{index}", f"out_cache_value_{index}"]
    let("input_ids", "tract_core_external(shape = [1, S], "
                     "datum_type = 'i64')")
    for name in inputs[1:]:
        let(name, f"tract_core_external(shape = [1, {KV_HEADS}, P, "
                  f"{HEAD_DIM}], datum_type = 'f32')")
    table = variable("embed_tokens_weight",
                     model.embed_tokens.weight.detach().numpy())
    x = let("embedded", f"tract_core_gather({table}, input_ids, axis = 0)")
    # The rotary tables' rows of positions P .. P+S-1, as (1, 1, S, D).
    for kind, values in (("cos", model.cos_cached), ("sin", model.sin_cached)):
        rows = variable(f"{kind}_table", values.numpy())
        sliced = let(f"{kind}_rows", f"slice({rows}, axes = [0], "
                                     "begin = [P], end = [P + S])")
        let(kind, f"unsqueeze({sliced}, axes = [0, 1])")
    for index, layer in enumerate(model.layers):
        prefix = f"layers.{index}"
        tag = f"l{index}"
        attention = layer.self_attn
        normed = norm(x, layer.input_layernorm,
                      f"{tag}_input_layernorm", f"{tag}_normed")
        q, k, v = (linear(f"{prefix}.self_attn.{part}_proj",
                          getattr(attention, f"{part}_proj"), normed,
                          f"{tag}_{part}") for part in "qkv")
        q = heads(q, HEADS, f"{tag}_q_heads")
        k = heads(k, KV_HEADS, f"{tag}_k_heads")
        v = heads(v, KV_HEADS, f"{tag}_v_heads")
        q = let(f"{tag}_q_rope", f"tract_transformers_apply_rope({q}, cos, "
                                 "sin)")
        k = let(f"{tag}_k_rope", f"tract_transformers_apply_rope({k}, cos, "
                                 "sin)")
        keys = let(f"out_cache_key_{index}",
                   f"concat([in_cache_key_{index}, {k}], axis = 2)")
        values = let(f"out_cache_value_{index}",
                     f"concat([in_cache_value_{index}, {v}], axis = 2)")
        attended = let(f"{tag}_attended",
                       f"tract_transformers_sdpa({q}, {keys}, {values}, "
                       "is_causal = true)")
        moved = let(f"{tag}_moved", f"transpose({attended}, "
                                    "axes = [0, 2, 1, 3])")
        merged = let(f"{tag}_merged", f"reshape({moved}, shape = [0, 0, "
                                      f"{HEADS * HEAD_DIM}])")
        projected = linear(f"{prefix}.self_attn.o_proj", attention.o_proj,
                           merged, f"{tag}_o")
        x = let(f"{tag}_residual1", f"add({x}, {projected})")
        post = norm(x, layer.post_attention_layernorm,
                    f"{tag}_post_attention_layernorm", f"{tag}_post")
        mlp = layer.mlp
        gate = linear(f"{prefix}.mlp.gate_proj", mlp.gate_proj, post,
                      f"{tag}_gate")
        up = linear(f"{prefix}.mlp.up_proj", mlp.up_proj, post, f"{tag}_up")
        silu = let(f"{tag}_silu", f"mul({gate}, sigmoid({gate}))")
        gated = let(f"{tag}_gated", f"mul({silu}, {up})")
        down = linear(f"{prefix}.mlp.down_proj", mlp.down_proj, gated,
                      f"{tag}_down")
        x = let(f"{tag}_residual2", f"add({x}, {down})")
    final = norm(x, model.norm, "norm_weight", "final_normed")
    linear("lm_head", model.lm_head, final, "outputs")

    header = [
        "version 1.0;",
        "",
        "extension tract_registry tract_core;",
        "extension tract_registry tract_transformers;",
        "extension tract_symbol S;",
        "extension tract_symbol P;",
        "extension tract_assert S >= 1;",
        "extension tract_assert P >= 0;",
        f"extension tract_assert S+P < {MAX_POSITIONS};",
        "extension tract_assert pp: P == 0;",
        "extension tract_assert tg: S == 1;",
        "",
        f"graph network({', '.join(inputs)}) -> ({', '.join(outputs)})",
        "{",
    ]
    with open(os.path.join(folder, "graph.nnef"), "w") as f:
        f.write("\n".join(header + lines + ["}", ""]))


def names():
    inputs, outputs = ["input_ids"], ["logits"]
    for layer in range(LAYERS):
        for kind in ("key", "value"):
            inputs.append(f"past_key_values.{layer}.{kind}")
            outputs.append(f"present.{layer}.{kind}")
    return inputs, outputs


def empty_past(batch):
    return [torch.zeros(batch, KV_HEADS, 0, HEAD_DIM)
            for _ in range(2 * LAYERS)]


CONFIGS = {
    "smollm2-135m": dict(hidden=576, layers=30, heads=9, kv_heads=3,
                         ffn=1536, vocab=49152, tied=True,
                         rope_theta=100000.0),
    "llama-3.2-1b": dict(hidden=2048, layers=16, heads=32, kv_heads=8,
                         ffn=8192, vocab=128256, tied=True,
                         rope_theta=500000.0),
}


def main():
    global LAYERS, HIDDEN, HEADS, KV_HEADS, HEAD_DIM, FFN, VOCAB, TIED
    global ROPE_THETA
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--bundles", metavar="PREFIX")
    parser.add_argument("--prompt", default="The tract compiler says: ")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--config", choices=sorted(CONFIGS))
    parser.add_argument("--layers", type=int)
    parser.add_argument("--hidden", type=int)
    parser.add_argument("--heads", type=int)
    parser.add_argument("--kv-heads", type=int)
    parser.add_argument("--ffn", type=int)
    parser.add_argument("--vocab", type=int)
    parser.add_argument("--rope-theta", type=float)
    parser.add_argument("--tied", action="store_true", default=None)
    stored = parser.add_mutually_exclusive_group()
    stored.add_argument("--q4-0", action="store_true")
    stored.add_argument("--f16", action="store_true")
    parser.add_argument("--q8-inputs", action="store_true")
    parser.add_argument("--contrib", metavar="PATH")
    parser.add_argument("--contrib-q4", metavar="PATH")
    parser.add_argument("--nnef", metavar="FOLDER")
    parser.add_argument("--nnef-weights", choices=("f32", "f16", "q4_0"),
                        default="f32")
    args = parser.parse_args()
    shape = dict(hidden=HIDDEN, layers=LAYERS, heads=HEADS,
                 kv_heads=KV_HEADS, ffn=FFN, vocab=VOCAB, tied=TIED,
                 rope_theta=ROPE_THETA)
    shape.update(CONFIGS.get(args.config, {}))
    shape.update((key, value) for key, value in vars(args).items()
                 if key in shape and value is not None)
    LAYERS, HIDDEN, HEADS, KV_HEADS, FFN = (shape["layers"], shape["hidden"],
                                            shape["heads"], shape["kv_heads"],
                                            shape["ffn"])
    VOCAB, TIED, ROPE_THETA = shape["vocab"], shape["tied"], shape["rope_theta"]
    HEAD_DIM = HIDDEN // HEADS

    torch.manual_seed(0)
    model = Decoder().eval()
    inputs, outputs = names()
    dynamic = {"input_ids": {0: "B", 1: "S"}, "logits": {0: "B", 1: "S"}}
    for name in inputs[1:]:
        dynamic[name] = {0: "B", 2: "P"}
    for name in outputs[1:]:
        dynamic[name] = {0: "B", 2: "P+S"}
    example_ids = torch.zeros(1, 3, dtype=torch.int64)
    example_past = [torch.randn(1, KV_HEADS, 2, HEAD_DIM)
                    for _ in range(2 * LAYERS)]
    with torch.no_grad():
        torch.onnx.export(model, (example_ids, *example_past), args.out,
                          input_names=inputs, output_names=outputs,
                          dynamic_axes=dynamic, opset_version=17)
    if args.contrib:
        contrib_export(model, args.contrib, q4=False)
    if args.contrib_q4:
        contrib_export(model, args.contrib_q4, q4=True)
    if args.nnef:
        nnef_export(model, args.nnef, args.nnef_weights)
    if not args.bundles:
        return
    if args.q4_0 or args.f16:
        quantize_as_tract(model, halves=args.f16,
                          q8_inputs=args.q4_0 and args.q8_inputs)
    ids = torch.tensor([list(args.prompt.encode())], dtype=torch.int64)
    past = empty_past(1)
    with torch.no_grad():
        for step in range(args.steps + 1):
            results = model(ids, *past)
            arrays = {name: tensor.numpy()
                      for name, tensor in zip(inputs, (ids, *past))}
            # The contrib export's: every token of the past and the new ones.
            arrays["attention_mask"] = np.ones(
                (1, past[0].shape[2] + ids.shape[1]), np.int64)
            arrays.update((name, tensor.numpy())
                          for name, tensor in zip(outputs, results))
            np.savez(f"{args.bundles}.{step}.npz", **arrays)
            if args.nnef:
                # The same under torch-to-nnef's names.
                renamed = {"input_ids": arrays["input_ids"],
                           "outputs": arrays["logits"]}
                for index in range(LAYERS):
                    for kind in ("key", "value"):
                        renamed[f"in_cache_{kind}_{index}"] = arrays[
                            f"past_key_values.{index}.{kind}"]
                        renamed[f"out_cache_{kind}_{index}"] = arrays[
                            f"present.{index}.{kind}"]
                np.savez(f"{args.bundles}.nnef.{step}.npz", **renamed)
            past = list(results[1:])
            ids = results[0][:, -1].argmax(-1, keepdim=True)


if __name__ == "__main__":
    main()
