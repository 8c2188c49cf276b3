"""Numpy semantics of the MX matmul ops (mirrors pypto/ir/ops/tile_mx_matmul.py).

Each FP8 element is decoded exactly (ml_dtypes) and multiplied by its group's power of two,
2^(E8M0 byte - 127) — the lhs group runs along a row of K (lhs_scale[m, k // 32]), the rhs group
down a column of K (rhs_scale[k // 32, n]); byte 0xFF is NaN. The products are summed in float64
and rounded once to the FP32 accumulator (the cube's MX MAD is exact per group; one rounding at
the end keeps the reference independent of summation order).
"""

from __future__ import annotations

import numpy as np

from pypto.runtime.sim.ops.numeric import write_valid

GROUP = 32


def _exponents(scale) -> np.ndarray:
    """E8M0 scale bytes → float64 powers of two (NaN for the 0xFF byte)."""
    raw = np.asarray(scale).view(np.uint8).astype(np.float64)
    return np.where(raw == 255, np.nan, np.exp2(raw - 127))


def mx_product(lhs, lhs_scale, rhs, rhs_scale) -> np.ndarray:
    k = lhs.valid[1]
    a = lhs.data[:lhs.valid[0], :k].astype(np.float64)
    b = rhs.data[:k, :rhs.valid[1]].astype(np.float64)
    sa = np.repeat(_exponents(lhs_scale.data[:a.shape[0], :(k + GROUP - 1) // GROUP]), GROUP, axis=1)[:, :k]
    sb = np.repeat(_exponents(rhs_scale.data[:(k + GROUP - 1) // GROUP, :b.shape[1]]), GROUP, axis=0)[:k, :]
    return ((a * sa) @ (b * sb)).astype(np.float32)


def matmul_mx(ctx, out, lhs, lhs_scale, rhs, rhs_scale, **kwargs):
    return write_valid(out, mx_product(lhs, lhs_scale, rhs, rhs_scale))


def matmul_mx_acc(ctx, out, acc, lhs, lhs_scale, rhs, rhs_scale, **kwargs):
    product = mx_product(lhs, lhs_scale, rhs, rhs_scale)
    rows, cols = product.shape
    return write_valid(out, (acc.data[:rows, :cols].astype(np.float64) + product).astype(np.float32))


def matmul_mx_bias(ctx, out, lhs, lhs_scale, rhs, rhs_scale, bias, **kwargs):
    product = mx_product(lhs, lhs_scale, rhs, rhs_scale)
    return write_valid(out, (product + bias.data[:1, :product.shape[1]].astype(np.float32)).astype(np.float32))


def table() -> dict:
    return {"tile.matmul_mx": matmul_mx, "tile.matmul_mx_acc": matmul_mx_acc, "tile.matmul_mx_bias": matmul_mx_bias}
