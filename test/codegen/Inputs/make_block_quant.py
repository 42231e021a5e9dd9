#!/usr/bin/python3
"""An NNEF model whose weights are tract Q4_0 blocks, with numpy's result.

OUT/graph.nnef multiplies an input of 1 x S x 256 by an 80 x 256 matrix
stored as Q4_0 (OUT/weight.dat: vendor 'TR', item type 0x2040, blocks of
32 values along the 256, each an f16 scale then 16 bytes of 4-bit codes,
the low nibble first); OUT/io.npz holds an input at S = 5 and the product
numpy computes from the blocks decoded here; OUT/io_prompt.npz the same
at S = 40 (enough rows for the kernel to decode the weights first);
OUT/io_q8.npz the input at S = 5 with the product of its rows rounded to
8 bits per block of 32 (Q8_0), as the kernel of a decoding step rounds
them on a CPU that sums byte products.
"""
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
from q8_reference import q8_0  # noqa: E402  (test/)

N, K, S, PROMPT = 80, 256, 5, 40


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(7)
    blocks = N * K // 32
    scales = rng.uniform(-0.1, 0.1, blocks).astype(np.float16)
    codes = rng.integers(0, 16, (blocks, 32), dtype=np.uint8)
    packed = bytearray()
    for scale, block in zip(scales, codes):
        packed += scale.tobytes()
        packed += bytes(int(block[2 * i]) | int(block[2 * i + 1]) << 4
                        for i in range(16))
    header = bytearray(128)
    struct.pack_into("<2sBBII8IIHH", header, 0, b"\x4e\xef", 1, 0,
                     len(packed), 2, N, K, 0, 0, 0, 0, 0, 0, 0xFFFFFFFF,
                     0x2040, 0x5452)
    with open(os.path.join(out, "weight.dat"), "wb") as f:
        f.write(header + packed)
    with open(os.path.join(out, "graph.nnef"), "w") as f:
        f.write(f"""version 1.0;
extension tract_registry tract_core;
extension tract_symbol S;

graph network(input) -> (output)
{{
  input = tract_core_external(shape = [1, S, {K}], datum_type = 'f32');
  weight = variable<scalar>(label = 'weight', shape = [{N}, {K}]);
  output = matmul(input, weight, transposeA = false, transposeB = true);
}}
""")
    weights = ((codes.astype(np.float32) - 8) *
               scales.astype(np.float32)[:, None]).reshape(N, K)
    for name, rows in (("io.npz", S), ("io_prompt.npz", PROMPT)):
        x = rng.standard_normal((1, rows, K)).astype(np.float32)
        np.savez(os.path.join(out, name), input=x,
                 output=(x @ weights.T).astype(np.float32))
        if rows == S:
            np.savez(os.path.join(out, "io_q8.npz"), input=x,
                     output=(q8_0(x) @ weights.T).astype(np.float32))


if __name__ == "__main__":
    main()
