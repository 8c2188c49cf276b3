"""Simulator semantics of GEMV (a matmul with M = 1) and batched matmul (one matmul per leading index).

The accumulator follows the cube unit: FP32 for float inputs, integer for integer inputs;
only the valid K of lhs enters the product, and the result's valid region is (M, N) valid.

    SIM_OPS["tile.gemv"](ctx, out, x_left, w_right)          # out[0, :N] = x[0, :K] @ w[:K, :N]
"""

from __future__ import annotations

import numpy as np

from pypto.runtime.sim.ops.numeric import is_float, write_valid
from pypto.runtime.sim.ops.tile import matmul, matmul_acc, matmul_bias


def gemv(ctx, out, lhs, rhs, acc_phase="unspecified", **kwargs):
    return matmul(ctx, out, lhs, rhs)


def gemv_acc(ctx, out, acc, lhs, rhs, init_cond=None, acc_phase="unspecified", **kwargs):
    return matmul_acc(ctx, out, acc, lhs, rhs, init_cond)


def gemv_bias(ctx, out, lhs, rhs, bias, acc_phase="unspecified", **kwargs):
    return matmul_bias(ctx, out, lhs, rhs, bias)


def _batched(lhs, rhs) -> np.ndarray:
    a = lhs.view()
    k = lhs.valid[-1]
    b = rhs.data[(*(slice(0, v) for v in rhs.valid[:-2]), slice(0, k), slice(0, rhs.valid[-1]))]
    acc = np.float32 if is_float(a.dtype) else np.int64
    return np.matmul(a.astype(acc), b.astype(acc))


def batch_matmul(ctx, out, lhs, rhs, **kwargs):
    return write_valid(out, _batched(lhs, rhs))


def batch_matmul_acc(ctx, out, acc, lhs, rhs, **kwargs):
    product = _batched(lhs, rhs)
    region = tuple(slice(0, d) for d in product.shape)
    return write_valid(out, acc.data[region].astype(product.dtype) + product)


def table() -> dict:
    return {"tile.gemv": gemv, "tile.gemv_acc": gemv_acc, "tile.gemv_bias": gemv_bias,
            "tile.batch_matmul": batch_matmul, "tile.batch_matmul_acc": batch_matmul_acc}
