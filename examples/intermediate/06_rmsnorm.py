"""RMSNorm with tile-level ops, block by block over the rows.

y = x / sqrt(mean(x^2) + eps) * weight

What it shows:
  - explicit tiles: `pl.load` a [ROWS, N] block per loop iteration, `pl.store` it back;
  - tile-level row reductions take a scratch tile (`pl.create_tile`), as the vector
    instruction does;
  - `pl.col_expand_mul` broadcasts the [1, N] weight over the rows of the block.

Run:  python examples/intermediate/06_rmsnorm.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

M, N, ROWS, EPS = 64, 128, 16, 1e-6


@pl.jit
def rmsnorm(x: pl.Tensor, weight: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        w = pl.load(weight, [0, 0], [1, N])
        for i in pl.range(M // ROWS):
            t = pl.load(x, [i * ROWS, 0], [ROWS, N])
            scratch = pl.create_tile([ROWS, N], dtype=pl.FP32, target_memory=pl.Mem.Vec)
            ms: pl.Tile[[ROWS, 1], pl.FP32] = pl.row_sum(pl.mul(t, t), scratch)
            inv = pl.rsqrt(pl.add(pl.mul(ms, 1.0 / N), EPS))
            pl.store(pl.col_expand_mul(pl.row_expand_mul(t, inv), w), [i * ROWS, 0], y)
    return y


def main():
    rng = np.random.default_rng(21)
    x = rng.standard_normal((M, N), dtype=np.float32)
    weight = rng.uniform(0.5, 1.5, (1, N)).astype(np.float32)
    y = np.zeros_like(x)
    rmsnorm(x, weight, y, config=RunConfig())
    expected = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + EPS) * weight
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-5)
    print("OK")


if __name__ == "__main__":
    main()
