"""LayerNorm over the last axis, written at the tensor level.

y = (x - mean) / sqrt(var + eps) * gamma + beta, with mean and var per row.

What it shows:
  - row reductions with a scalar scale (`pl.mul(pl.row_sum(x), 1 / N)` is the row mean);
  - row broadcasts (`pl.row_expand_sub`, `pl.row_expand_mul`) of an [M, 1] column;
  - column broadcasts (`pl.col_expand_mul`, `pl.col_expand_add`) of a [1, N] row (gamma, beta);
  - `pl.rsqrt`.

Run:  python examples/intermediate/05_layernorm.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

M, N, EPS = 32, 64, 1e-5


@pl.jit
def layernorm(x: pl.Tensor, gamma: pl.Tensor, beta: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="layernorm"):
        mean = pl.mul(pl.row_sum(x), 1.0 / N)
        centered = pl.row_expand_sub(x, mean)
        var = pl.mul(pl.row_sum(pl.mul(centered, centered)), 1.0 / N)
        normed = pl.row_expand_mul(centered, pl.rsqrt(pl.add(var, EPS)))
        y[:] = pl.col_expand_add(pl.col_expand_mul(normed, gamma), beta)
    return y


def reference(x, gamma, beta):
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * gamma + beta


def main():
    rng = np.random.default_rng(20)
    x = rng.standard_normal((M, N), dtype=np.float32) * 2 + 1
    gamma = rng.uniform(0.5, 1.5, (1, N)).astype(np.float32)
    beta = rng.standard_normal((1, N), dtype=np.float32)
    y = np.zeros_like(x)
    layernorm(x, gamma, beta, y, config=RunConfig())
    np.testing.assert_allclose(y, reference(x, gamma, beta), rtol=1e-4, atol=1e-4)
    print("OK")


if __name__ == "__main__":
    main()
