"""Row-wise softmax: reductions along rows and broadcasts back across them.

softmax(x)[i, j] = exp(x[i, j] - max_j x[i, :]) / sum_j exp(x[i, j] - max_j x[i, :])

What it shows:
  - row reductions `pl.row_max` / `pl.row_sum`, which keep the reduced dim ([M, 1]) and, on
    tiles, take a scratch tile made with `pl.create_tile`;
  - row broadcasts `pl.row_expand_sub` / `pl.row_expand_div`;
  - local `pl.Tile[...]` annotations.

Run:  python examples/intermediate/01_softmax.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

M, N = 64, 64


@pl.jit
def row_softmax(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tile_x = pl.load(x, [0, 0], [M, N])
        scratch = pl.create_tile([M, N], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        row_max: pl.Tile[[M, 1], pl.FP32] = pl.row_max(tile_x, scratch)
        shifted = pl.row_expand_sub(tile_x, row_max)
        numer = pl.exp(shifted)
        row_sum: pl.Tile[[M, 1], pl.FP32] = pl.row_sum(numer, scratch)
        pl.store(pl.row_expand_div(numer, row_sum), [0, 0], y)
    return y


def reference(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main():
    x = np.random.default_rng(2).standard_normal((M, N), dtype=np.float32) * 4
    y = np.zeros_like(x)
    row_softmax(x, y, config=RunConfig())
    np.testing.assert_allclose(y, reference(x), rtol=1e-5, atol=1e-6)
    print("OK")


if __name__ == "__main__":
    main()
