"""Reductions along rows and columns at the tensor level.

Row reductions keep the reduced axis ([M, N] → [M, 1]); column reductions give [1, N]. At the
tensor level the compiler supplies the scratch tiles the vector instructions need.

What it shows:
  - `pl.row_sum`, `pl.row_max`, `pl.col_sum`, `pl.col_max` on tensors;
  - several outputs of different shapes from one kernel.

Run:  python examples/beginner/08_reductions.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

M, N = 32, 64


@pl.jit
def reductions(x: pl.Tensor, rsum: pl.Out[pl.Tensor], rmax: pl.Out[pl.Tensor], csum: pl.Out[pl.Tensor],
               cmax: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="reduce"):
        rsum[:] = pl.row_sum(x)
        rmax[:] = pl.row_max(x)
        csum[:] = pl.col_sum(x)
        cmax[:] = pl.col_max(x)
    return rsum, rmax, csum, cmax


def main():
    x = np.random.default_rng(14).standard_normal((M, N), dtype=np.float32)
    rsum, rmax = np.zeros((M, 1), np.float32), np.zeros((M, 1), np.float32)
    csum, cmax = np.zeros((1, N), np.float32), np.zeros((1, N), np.float32)
    reductions(x, rsum, rmax, csum, cmax, config=RunConfig())
    np.testing.assert_allclose(rsum, x.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(rmax, x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(csum, x.sum(axis=0, keepdims=True), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(cmax, x.max(axis=0, keepdims=True))
    print("OK")


if __name__ == "__main__":
    main()
