"""The rounding of a Q4_0 product's rows in a decoding step, as tract's
kernels do it on a CPU that sums byte products, for the tests' references
(numpy)."""
import numpy as np


def q8_0(x):
    """`x` with each run of 32 along its last axis rounded to 8 bits: the
    scale is the largest magnitude over 127, each code the value times 127
    over that magnitude, rounded to nearest (ties to even), in f32. The
    result, codes times scales, is f64."""
    blocks = x.reshape(-1, 32)
    largest = np.abs(blocks).max(axis=1, keepdims=True)
    inverse = np.divide(np.float32(127), largest,
                        out=np.zeros_like(largest), where=largest > 0)
    codes = np.round(blocks * inverse)
    return (codes.astype(np.float64) *
            (largest / np.float32(127)).astype(np.float64)).reshape(x.shape)
