#!/usr/bin/env python3
"""Development script: writes the models of onnxruntime's contrib ops that
language-model exports use, built with onnx's helper, with onnxruntime's
outputs: SimplifiedLayerNormalization (an RMS norm, in the ONNX domain as
onnxruntime registers it); SkipSimplifiedLayerNormalization and
SkipLayerNormalization (com.microsoft: the residual add fused with the
norm, with and without a bias, with the sum as a second output); and
MatMulNBits (4-bit weights in blocks of 32: without zero points and with
scales that f16 holds exactly, as tract's Q4_0 stores them; with f32
scales; with packed zero points and a bias; 8 bits in blocks of 16; at
accuracy level 4, for a decoding step's rows and a prompt's);
RotaryEmbedding (com.microsoft's: per-token positions, a constant or a
run-time first position, interleaved pairs, a partial rotary dim; the ONNX
domain's of opset 23); GroupQueryAttention (with a past and rotary
embeddings; a packed first prompt with interleaved rotary pairs and a
scale; a decode step without rotary); and the encoders' Attention (raw
and right-padding masks, causal, sizes of their own), the GELU forms, and
a BERT layer as onnxruntime's transformer optimizer writes it
(EmbedLayerNormalization, Attention, SkipLayerNormalization, FastGelu);
and weights large enough to be read in place (MatMulNBits' blocks, an f16
matrix cast to f32 and multiplied).
The lit test
frontends/onnx/contrib.test runs them.
"""
import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, mapping

HIDDEN = 32


def model(node, inputs, outputs, initializers, domains):
    graph = helper.make_graph(
        [node], node.op_type,
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
         for name, shape in inputs],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
         for name, shape in outputs],
        initializer=[helper.make_tensor(name, TensorProto.FLOAT, value.shape,
                                        value.flatten().tolist())
                     for name, value in initializers.items()])
    opsets = [helper.make_opsetid("", 17)]
    opsets += [helper.make_opsetid(domain, 1) for domain in domains]
    return helper.make_model(graph, opset_imports=opsets)


SEED = 7


def cases(rng):
    shape = ["B", "S", HIDDEN]
    gamma = rng.uniform(0.5, 1.5, size=HIDDEN).astype(np.float32)
    beta = rng.normal(size=HIDDEN).astype(np.float32)
    bias = rng.normal(size=HIDDEN).astype(np.float32) * 0.1
    x = rng.normal(size=(2, 5, HIDDEN)).astype(np.float32) * 3
    skip = rng.normal(size=(2, 5, HIDDEN)).astype(np.float32)

    yield "simplified_layer_norm", model(
        helper.make_node("SimplifiedLayerNormalization", ["x", "gamma"], ["y"],
                         axis=-1, epsilon=1e-6),
        [("x", shape)], [("y", shape)], {"gamma": gamma}, []), {"x": x}

    yield "skip_simplified_layer_norm", model(
        helper.make_node("SkipSimplifiedLayerNormalization",
                         ["x", "skip", "gamma"], ["y", "", "", "sum"],
                         domain="com.microsoft", epsilon=1e-6),
        [("x", shape), ("skip", shape)], [("y", shape), ("sum", shape)],
        {"gamma": gamma}, ["com.microsoft"]), {"x": x, "skip": skip}

    yield "skip_simplified_layer_norm_bias", model(
        helper.make_node("SkipSimplifiedLayerNormalization",
                         ["x", "skip", "gamma", "bias"], ["y"],
                         domain="com.microsoft", epsilon=1e-5),
        [("x", shape), ("skip", shape)], [("y", shape)],
        {"gamma": gamma, "bias": bias}, ["com.microsoft"]), \
        {"x": x, "skip": skip}

    yield "skip_layer_norm", model(
        helper.make_node("SkipLayerNormalization",
                         ["x", "skip", "gamma", "beta", "bias"],
                         ["y", "", "", "sum"], domain="com.microsoft",
                         epsilon=1e-5),
        [("x", shape), ("skip", shape)], [("y", shape), ("sum", shape)],
        {"gamma": gamma, "beta": beta, "bias": bias}, ["com.microsoft"]), \
        {"x": x, "skip": skip}


def matmul_nbits(rng, k, n, bits, block, zero_points, f16_scales, bias):
    """A MatMulNBits model of A (B, S, k) by random codes, with its
    initializers."""
    blocks = -(-k // block)
    per_byte = 8 // bits
    codes = rng.integers(0, 1 << bits, size=(n, blocks, block))
    if bits == 4:
        packed = (codes[..., 0::2] | (codes[..., 1::2] << 4)).astype(np.uint8)
    else:
        packed = codes.astype(np.uint8)
    scales = rng.uniform(0.01, 0.05, size=n * blocks).astype(np.float32)
    if f16_scales:
        scales = scales.astype(np.float16).astype(np.float32)
    inputs = ["a", "b", "scales"]
    initializers = [helper.make_tensor("b", TensorProto.UINT8, packed.shape,
                                       packed.tobytes(), raw=True),
                    helper.make_tensor("scales", TensorProto.FLOAT,
                                       scales.shape, scales.tolist())]
    if zero_points:
        zeros = rng.integers(0, 1 << bits, size=(n, blocks))
        if bits == 4:
            if blocks % 2:
                zeros = np.concatenate([zeros, np.zeros((n, 1), int)], 1)
            zeros = zeros[:, 0::2] | (zeros[:, 1::2] << 4)
        zeros = zeros.astype(np.uint8).flatten()
        initializers.append(helper.make_tensor(
            "zeros", TensorProto.UINT8, zeros.shape, zeros.tobytes(),
            raw=True))
        inputs.append("zeros")
    if bias:
        # Past the absent zero points and g_idx.
        inputs += [""] * (5 - len(inputs)) + ["bias"]
        values = rng.normal(size=n).astype(np.float32)
        initializers.append(helper.make_tensor("bias", TensorProto.FLOAT, [n],
                                               values.tolist()))
    node = helper.make_node("MatMulNBits", inputs, ["y"],
                            domain="com.microsoft", K=k, N=n, bits=bits,
                            block_size=block)
    graph = helper.make_graph(
        [node], "MatMulNBits",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["B", "S", k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", "S", n])],
        initializer=initializers)
    return helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])


def nbits_cases(rng):
    a = rng.normal(size=(2, 3, 64)).astype(np.float32)
    yield "matmul_nbits_q4_0", matmul_nbits(
        rng, 64, 32, 4, 32, zero_points=False, f16_scales=True,
        bias=False), {"a": a}
    yield "matmul_nbits_f32_scales", matmul_nbits(
        rng, 64, 32, 4, 32, zero_points=False, f16_scales=False,
        bias=False), {"a": a}
    yield "matmul_nbits_zero_points", matmul_nbits(
        rng, 64, 32, 4, 32, zero_points=True, f16_scales=False,
        bias=True), {"a": a}
    yield "matmul_nbits_8bits", matmul_nbits(
        rng, 64, 32, 8, 16, zero_points=True, f16_scales=False,
        bias=False), {"a": a}


def graph_model(node, inputs, outputs, initializers, opset=17):
    """A one-node model of com.microsoft's domain: inputs and outputs are
    (name, element type, shape), initializers numpy arrays."""
    def info(name, kind, shape):
        return helper.make_tensor_value_info(name, kind, shape)
    graph = helper.make_graph(
        [node], node.op_type, [info(*spec) for spec in inputs],
        [info(*spec) for spec in outputs],
        initializer=[helper.make_tensor(
            name, mapping.NP_TYPE_TO_TENSOR_TYPE[value.dtype], value.shape,
            value.flatten().tolist()) for name, value in initializers.items()])
    return helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", opset), helper.make_opsetid("com.microsoft", 1)])


def rotary_tables(positions, half, theta=10000.0):
    angles = np.outer(np.arange(positions),
                      theta ** (-np.arange(half) / half)).astype(np.float32)
    return np.cos(angles), np.sin(angles)


F32, I64, I32 = TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32


def rotary_cases(rng):
    cos, sin = rotary_tables(32, 8)
    tables = {"cos": cos, "sin": sin}
    x = rng.normal(size=(2, 3, 64)).astype(np.float32)
    positions = rng.integers(0, 32, size=(2, 3))
    # Hidden 64 as 4 heads of 16, each token at its own position.
    yield "rotary_embedding", graph_model(
        helper.make_node("RotaryEmbedding", ["x", "positions", "cos", "sin"],
                         ["y"], domain="com.microsoft", num_heads=4),
        [("x", F32, ["B", "S", 64]), ("positions", I64, ["B", "S"])],
        [("y", F32, ["B", "S", 64])], tables), \
        {"x": x, "positions": positions}
    # (B, N, S, H) from a first position given as a constant, pairs
    # interleaved.
    yield "rotary_embedding_interleaved", graph_model(
        helper.make_node("RotaryEmbedding", ["x", "first", "cos", "sin"],
                         ["y"], domain="com.microsoft", interleaved=1),
        [("x", F32, ["B", 2, "S", 16])], [("y", F32, ["B", 2, "S", 16])],
        {**tables, "first": np.array([5], np.int64)}), \
        {"x": rng.normal(size=(1, 2, 4, 16)).astype(np.float32)}
    # Half of each head of 16 turns (tables of width 4), from a first
    # position read when the model runs.
    cos4, sin4 = rotary_tables(32, 4)
    yield "rotary_embedding_partial", graph_model(
        helper.make_node("RotaryEmbedding", ["x", "first", "cos", "sin"],
                         ["y"], domain="com.microsoft", num_heads=2,
                         rotary_embedding_dim=8),
        [("x", F32, ["B", "S", 32]), ("first", I64, [1])],
        [("y", F32, ["B", "S", 32])], {"cos": cos4, "sin": sin4}), \
        {"x": rng.normal(size=(2, 3, 32)).astype(np.float32),
         "first": np.array([7], np.int64)}
    # The ONNX domain's (opset 23): the tables come before the positions.
    yield "rotary_embedding_onnx", graph_model(
        helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "positions"],
                         ["y"], num_heads=4),
        [("x", F32, ["B", "S", 64]), ("positions", I64, ["B", "S"])],
        [("y", F32, ["B", "S", 64])], tables, opset=23), \
        {"x": x, "positions": positions}


def gqa_model(heads, kv_heads, head, packed, past, tables, **attributes):
    width = (heads + 2 * kv_heads if packed else heads) * head
    kv_width = kv_heads * head
    names = ["query", "" if packed else "key", "" if packed else "value",
             "past_key" if past else "", "past_value" if past else "",
             "seqlens_k", "total_sequence_length"]
    inputs = [("query", F32, ["B", "S", width])]
    if not packed:
        inputs += [("key", F32, ["B", "S", kv_width]),
                   ("value", F32, ["B", "S", kv_width])]
    if past:
        inputs += [(name, F32, ["B", kv_heads, "P", head])
                   for name in ("past_key", "past_value")]
    inputs += [("seqlens_k", I32, ["B"]), ("total_sequence_length", I32, [])]
    if tables:
        names += ["cos", "sin"]
        attributes["do_rotary"] = 1
    node = helper.make_node(
        "GroupQueryAttention", names,
        ["output", "present_key", "present_value"], domain="com.microsoft",
        num_heads=heads, kv_num_heads=kv_heads, **attributes)
    outputs = [("output", F32, ["B", "S", heads * head])] + [
        (name, F32, ["B", kv_heads, "T", head])
        for name in ("present_key", "present_value")]
    return graph_model(node, inputs, outputs, tables or {})


def gqa_inputs(rng, batch, length, past, heads, kv_heads, head, packed):
    normal = lambda *shape: rng.normal(size=shape).astype(np.float32)
    inputs = {}
    if packed:
        inputs["query"] = normal(batch, length, (heads + 2 * kv_heads) * head)
    else:
        inputs["query"] = normal(batch, length, heads * head)
        inputs["key"] = normal(batch, length, kv_heads * head)
        inputs["value"] = normal(batch, length, kv_heads * head)
    if past is not None:
        inputs["past_key"] = normal(batch, kv_heads, past, head)
        inputs["past_value"] = normal(batch, kv_heads, past, head)
    total = (past or 0) + length
    inputs["seqlens_k"] = np.full(batch, total - 1, np.int32)
    inputs["total_sequence_length"] = np.array(total, np.int32)
    return inputs


def gqa_cases(rng):
    cos, sin = rotary_tables(64, 8)
    tables = {"cos": cos, "sin": sin}
    # Two new tokens after three, 4 query heads on 2 key/value heads of 16,
    # turned at positions 3 and 4.
    yield "group_query_attention", gqa_model(
        4, 2, 16, packed=False, past=True, tables=tables), \
        gqa_inputs(rng, 1, 2, 3, 4, 2, 16, packed=False)
    # A first prompt of 5 with packed query, key and value, interleaved
    # rotary pairs and a given scale, for a batch of 2.
    yield "group_query_attention_prompt", gqa_model(
        4, 2, 16, packed=True, past=False, tables=tables,
        rotary_interleaved=1, scale=0.2), \
        gqa_inputs(rng, 2, 5, None, 4, 2, 16, packed=True)
    # One token after six, no rotary, 6 query heads on 3.
    yield "group_query_attention_decode", gqa_model(
        6, 3, 16, packed=False, past=True, tables=None), \
        gqa_inputs(rng, 2, 1, 6, 6, 3, 16, packed=False)


def int8_nbits_cases(rng):
    """MatMulNBits at accuracy level 4, where onnxruntime (and tract's
    kernel of a decoding step) may round A to 8 bits per block: 6 rows,
    and 20 (a prompt's, which tract multiplies in f32)."""
    for name, rows in (("matmul_nbits_q4_0_int8", 3),
                       ("matmul_nbits_q4_0_int8_prompt", 10)):
        model = matmul_nbits(rng, 128, 48, 4, 32, zero_points=False,
                             f16_scales=True, bias=False)
        model.graph.node[0].attribute.append(
            helper.make_attribute("accuracy_level", 4))
        yield name, model, {
            "a": rng.normal(size=(2, rows, 128)).astype(np.float32)}


def all_cases(rng):
    yield from cases(rng)
    yield from nbits_cases(rng)
    yield from rotary_cases(rng)
    yield from gqa_cases(rng)
    # Its own generator: the cases above keep their values.
    yield from int8_nbits_cases(np.random.default_rng(SEED + 1))
    yield from attention_cases(np.random.default_rng(SEED + 2))
    yield from mapped_weight_cases(np.random.default_rng(SEED + 3))


def mapped_weight_cases(rng):
    """Weights large enough (64 KB and more) that the import reads them in
    place from the model's file and the compiler writes what it makes of
    them into memory of its own: MatMulNBits' 4-bit blocks (128 KB of
    codes, stored again as Q4_0 and laid out for the kernel; at accuracy
    level 4, so that its NNEF export, read back, matches too), and an f16
    matrix cast to f32 and multiplied (256 KB, a language model's output
    head as its exports store it: transposed, then laid out)."""
    model = matmul_nbits(rng, 1024, 256, 4, 32, zero_points=False,
                         f16_scales=True, bias=False)
    # As language models are exported: A may be rounded to bytes, as
    # tract's NNEF Q4_0 products round it where the CPU sums byte products.
    model.graph.node[0].attribute.append(
        helper.make_attribute("accuracy_level", 4))
    yield "matmul_nbits_q4_0_mapped", model, {
        "a": rng.normal(size=(1, 4, 1024)).astype(np.float32)}
    k, n = 256, 512
    weights = (rng.normal(size=(k, n)) * 0.1).astype(np.float16)
    graph = helper.make_graph(
        [helper.make_node("Cast", ["w"], ["w32"], to=TensorProto.FLOAT),
         helper.make_node("MatMul", ["x", "w32"], ["y"])],
        "f16_weights",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, n])],
        initializer=[helper.make_tensor("w", TensorProto.FLOAT16, [k, n],
                                        weights.tobytes(), raw=True)])
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)])
    yield "matmul_f16_weights_mapped", model, {
        "x": rng.normal(size=(1, 3, k)).astype(np.float32)}


def attention_cases(rng):
    """com.microsoft's Attention (BERT's, as onnxruntime's transformer
    optimizer fuses it): a raw 2-D mask; right-padding ends (1-D); causal
    without a mask and with one; query, key and value sizes of their own
    with a scale."""
    def attention(name, batch, length, sizes, mask, **attributes):
        width = 24
        init = {"w": rng.normal(size=(width, sum(sizes))).astype(np.float32)
                * 0.3,
                "b": rng.normal(size=(sum(sizes),)).astype(np.float32) * 0.1}
        inputs = [("x", TensorProto.FLOAT, [batch, length, width])]
        feeds = {"x": rng.normal(size=(batch, length, width)).astype(
            np.float32)}
        names = ["x", "w", "b"]
        if mask is not None:
            inputs.append(("m", TensorProto.INT32, list(mask.shape)))
            feeds["m"] = mask
            names.append("m")
        node = helper.make_node("Attention", names, ["y"], num_heads=4,
                                domain="com.microsoft", **attributes)
        return name, graph_model(node, inputs,
                                 [("y", TensorProto.FLOAT, None)], init), feeds

    raw = np.ones((2, 6), np.int32)
    raw[1, 4:] = 0
    yield attention("attention_mask_2d", 2, 6, [32, 32, 32], raw)
    yield attention("attention_mask_ends", 2, 6, [32, 32, 32],
                    np.array([6, 3], np.int32))
    yield attention("attention_causal", 1, 5, [32, 32, 32], None,
                    unidirectional=1)
    yield attention("attention_causal_mask", 2, 6, [32, 32, 32], raw,
                    unidirectional=1)
    yield attention("attention_sizes", 1, 5, [16, 16, 32], None,
                    qkv_hidden_sizes=[16, 16, 32], scale=0.3)
    yield from gelu_cases(rng)
    yield bert_encoder(rng)


def gelu_cases(rng):
    """com.microsoft's Gelu, BiasGelu, FastGelu (with a bias) and
    QuickGelu."""
    x = rng.normal(size=(2, 3, 16)).astype(np.float32) * 2
    bias = rng.normal(size=(16,)).astype(np.float32)
    for name, op, with_bias, attributes in [
            ("ms_gelu", "Gelu", False, {}),
            ("bias_gelu", "BiasGelu", True, {}),
            ("fast_gelu", "FastGelu", True, {}),
            ("quick_gelu", "QuickGelu", False, {"alpha": 1.5})]:
        node = helper.make_node(op, ["x", "b"] if with_bias else ["x"],
                                ["y"], domain="com.microsoft", **attributes)
        yield name, graph_model(node, [("x", TensorProto.FLOAT, [2, 3, 16])],
                                [("y", TensorProto.FLOAT, None)],
                                {"b": bias} if with_bias else {}), {"x": x}


def bert_encoder(rng):
    """A BERT layer as onnxruntime's transformer optimizer writes it:
    EmbedLayerNormalization (words, positions, segments, a mask whose
    counts are the mask_index), Attention, SkipLayerNormalization, the
    feed-forward MatMul, FastGelu with its bias, MatMul and
    SkipLayerNormalization."""
    hidden, vocab, batch, length = 32, 50, 2, 7
    f = np.float32

    def normal(*shape, scale=0.3):
        return (rng.normal(size=shape) * scale).astype(f)
    init = {"words": normal(vocab, hidden), "positions": normal(16, hidden),
            "segments": normal(2, hidden), "g0": 1 + normal(hidden),
            "b0": normal(hidden), "wqkv": normal(hidden, 3 * hidden),
            "bqkv": normal(3 * hidden, scale=0.1), "g1": 1 + normal(hidden),
            "b1": normal(hidden), "w1": normal(hidden, 64),
            "bias1": normal(64, scale=0.1), "w2": normal(64, hidden),
            "g2": 1 + normal(hidden), "b2": normal(hidden),
            "bias2": normal(hidden, scale=0.1)}
    ms = {"domain": "com.microsoft"}
    nodes = [
        helper.make_node("EmbedLayerNormalization",
                         ["ids", "segment_ids", "words", "positions",
                          "segments", "g0", "b0", "mask"],
                         ["emb", "mask_index"], epsilon=1e-12, **ms),
        helper.make_node("Attention", ["emb", "wqkv", "bqkv", "mask_index"],
                         ["att"], num_heads=4, **ms),
        helper.make_node("SkipLayerNormalization", ["att", "emb", "g1", "b1"],
                         ["h1"], epsilon=1e-12, **ms),
        helper.make_node("MatMul", ["h1", "w1"], ["ff1"]),
        helper.make_node("FastGelu", ["ff1", "bias1"], ["act"], **ms),
        helper.make_node("MatMul", ["act", "w2"], ["ff2"]),
        helper.make_node("SkipLayerNormalization",
                         ["ff2", "h1", "g2", "b2", "bias2"], ["y"],
                         epsilon=1e-12, **ms)]
    i32 = TensorProto.INT32
    graph = helper.make_graph(
        nodes, "bert_layer",
        [helper.make_tensor_value_info("ids", i32, [batch, length]),
         helper.make_tensor_value_info("segment_ids", i32, [batch, length]),
         helper.make_tensor_value_info("mask", i32, [batch, length])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=[helper.make_tensor(n, TensorProto.FLOAT, v.shape,
                                        v.flatten().tolist())
                     for n, v in init.items()])
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    mask = np.ones((batch, length), np.int32)
    mask[1, 5:] = 0
    segment = np.zeros((batch, length), np.int32)
    segment[:, 4:] = 1
    return "bert_layer", model, {
        "ids": rng.integers(0, vocab, size=(batch, length)).astype(np.int32),
        "segment_ids": segment, "mask": mask}


def write_inconsistent_lengths(out):
    """Inputs of group_query_attention whose seqlens_k says that the second
    of the past's three positions is the last one written (onnxruntime's
    shared past and present buffers, or padding): tract refuses them when
    the model runs."""
    inputs = gqa_inputs(np.random.default_rng(SEED), 1, 2, 3, 4, 2, 16,
                        packed=False)
    inputs["seqlens_k"] = np.array([3], np.int32)
    inputs["total_sequence_length"] = np.array(4, np.int32)
    np.savez(Path(out) / "group_query_attention_lengths.npz", **inputs)


if __name__ == "__main__":
    # Options, onnxruntime and the bundles as for the real models' references.
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts" /
                           "reference-outputs"))
    from make_references import write_cases
    write_cases(__doc__, SEED, all_cases, __file__)
    write_inconsistent_lengths(Path(__file__).resolve().parent)
