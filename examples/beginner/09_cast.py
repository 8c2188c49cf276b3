"""Changing dtypes: FP32 → FP16 and FP32 → INT32 with an explicit rounding mode.

What it shows:
  - `pl.cast(tile, target_type=pl.FP16)` (round-to-nearest by default);
  - `mode="floor"` / `mode="rint"`: the rounding mode of a float → int conversion;
  - numpy arrays of any supported dtype are accepted as kernel arguments (float16, int32).

Run:  python examples/beginner/09_cast.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

M, N = 16, 64


@pl.jit
def casts(x: pl.Tensor, half: pl.Out[pl.Tensor], floor_int: pl.Out[pl.Tensor], rint_int: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [M, N])
        pl.store(pl.cast(t, target_type=pl.FP16), [0, 0], half)
        pl.store(pl.cast(t, target_type=pl.INT32, mode="floor"), [0, 0], floor_int)
        pl.store(pl.cast(t, target_type=pl.INT32, mode="rint"), [0, 0], rint_int)
    return half, floor_int, rint_int


def main():
    x = np.random.default_rng(15).uniform(-100, 100, (M, N)).astype(np.float32)
    half = np.zeros((M, N), np.float16)
    floor_int, rint_int = np.zeros((M, N), np.int32), np.zeros((M, N), np.int32)
    casts(x, half, floor_int, rint_int, config=RunConfig())
    np.testing.assert_array_equal(half, x.astype(np.float16))
    np.testing.assert_array_equal(floor_int, np.floor(x).astype(np.int32))
    np.testing.assert_array_equal(rint_int, np.rint(x).astype(np.int32))
    print("OK")


if __name__ == "__main__":
    main()
