"""Both vector lanes: `pl.split(UP_DOWN)` gives each AIV half of a cube result.

A cluster has one AIC and two AIVs. With `optimizations=[pl.split(pl.SplitMode.UP_DOWN)]`
the vector half of a mixed kernel runs on both AIV lanes, each on half the rows (LEFT_RIGHT:
half the columns); `pl.tile.get_subblock_idx()` tells a lane which half is its own. Odd
sizes work: the two halves then differ by one row.

What it shows:
  - `pl.split(...)` in `pl.at(optimizations=[...])`;
  - the same kernel for an even and an odd row count, and for both split directions.

Run:  python examples/advanced/03_split_vector.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

K = 32


@pl.jit
def up_down(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
        z = pl.matmul(a, b, out_dtype=pl.FP32)
        c = pl.assemble(c, pl.relu(pl.add(z, bias)), [0, 0])
    return c


@pl.jit
def left_right(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.LEFT_RIGHT)]):
        z = pl.matmul(a, b, out_dtype=pl.FP32)
        c = pl.assemble(c, pl.relu(pl.add(z, bias)), [0, 0])
    return c


def main():
    rng = np.random.default_rng(32)
    for kernel, m, n in ((up_down, 16, 16), (up_down, 15, 16), (left_right, 16, 16)):
        a = rng.uniform(-1, 1, (m, K)).astype(np.float16)
        b = rng.uniform(-1, 1, (K, n)).astype(np.float16)
        bias = rng.uniform(-1, 1, (m, n)).astype(np.float32)
        c = np.full((m, n), np.nan, np.float32)
        kernel(a, b, bias, c, config=RunConfig())
        expected = np.maximum(a.astype(np.float32) @ b.astype(np.float32) + bias, 0)
        np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)
    print("OK")


if __name__ == "__main__":
    main()
