"""Scalar operands: a tile combined with a number, and a scalar kernel argument.

What it shows:
  - `pl.add(tile, 1.5)` selects the scalar form (`tile.adds`), likewise mul / maximum / minimum;
  - a Python number on the left of a commutative op moves to the right (`2.0 * t` is `t * 2.0`);
  - a scalar parameter annotated with a dtype (`s: pl.FP32`) is part of the jit specialization:
    each distinct value compiles once, then the cached program is reused.

Run:  python examples/beginner/04_scalar_ops.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

ROWS, COLS = 32, 64


@pl.jit
def clamp_affine(x: pl.Tensor, y: pl.Out[pl.Tensor], scale: pl.FP32):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [ROWS, COLS])
        t = pl.add(pl.mul(t, scale), 1.5)          # tile.muls, then tile.adds
        t = pl.minimum(pl.maximum(t, -1.0), 4.0)   # clamp to [-1, 4]
        pl.store(t, [0, 0], y)
    return y


def main():
    x = np.random.default_rng(10).standard_normal((ROWS, COLS), dtype=np.float32) * 3
    for scale in (0.5, 2.0):
        y = np.zeros_like(x)
        clamp_affine(x, y, scale, config=RunConfig())
        np.testing.assert_allclose(y, np.clip(x * scale + 1.5, -1.0, 4.0), rtol=1e-6, atol=1e-6)
    print("OK")


if __name__ == "__main__":
    main()
