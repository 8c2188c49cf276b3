"""Joining tiles: `pl.concat` along columns, and writing pieces into one output with offsets.

What it shows:
  - `pl.concat(a, b)` puts two tiles with the same row count side by side ([M, Na + Nb]);
  - two stores at different offsets fill one output tensor piece by piece.

Run:  python examples/beginner/07_concat.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

M, NA, NB = 16, 32, 32


@pl.jit
def concat_then_stack(a: pl.Tensor, b: pl.Tensor, side: pl.Out[pl.Tensor], stacked: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [M, NA])
        tb = pl.load(b, [0, 0], [M, NB])
        pl.store(pl.concat(ta, tb), [0, 0], side)       # [M, NA + NB]
        pl.store(ta, [0, 0], stacked)                    # rows 0..M-1
        pl.store(pl.mul(tb, 2.0), [M, 0], stacked)       # rows M..2M-1
    return side, stacked


def main():
    rng = np.random.default_rng(13)
    a = rng.standard_normal((M, NA), dtype=np.float32)
    b = rng.standard_normal((M, NB), dtype=np.float32)
    side = np.zeros((M, NA + NB), np.float32)
    stacked = np.zeros((2 * M, NA), np.float32)
    concat_then_stack(a, b, side, stacked, config=RunConfig())
    np.testing.assert_array_equal(side, np.concatenate([a, b], axis=1))
    np.testing.assert_array_equal(stacked, np.concatenate([a, 2 * b], axis=0))
    print("OK")


if __name__ == "__main__":
    main()
