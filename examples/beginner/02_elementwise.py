"""Element-wise kernels over tensors larger than one tile.

A tile is a fixed-size window into on-chip memory (UB is 184 KB on a2a3), so a 512x128
tensor is processed in row blocks: the loop moves the offset, the tile shape stays fixed.

What it shows:
  - `pl.range` loops inside a compute region, offsets computed from the loop variable;
  - module-level Python constants folded into the kernel at compile time;
  - one `@pl.jit` function specialized twice, for two different shapes.

Run:  python examples/beginner/02_elementwise.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

BLOCK_ROWS = 64


@pl.jit
def blocked_mul_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    rows, cols = a.shape
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(rows // BLOCK_ROWS):
            ta = pl.load(a, [i * BLOCK_ROWS, 0], [BLOCK_ROWS, cols])
            tb = pl.load(b, [i * BLOCK_ROWS, 0], [BLOCK_ROWS, cols])
            prod = pl.mul(ta, tb)
            pl.store(pl.add(prod, ta), [i * BLOCK_ROWS, 0], c)
    return c


def main():
    rng = np.random.default_rng(0)
    config = RunConfig()
    for shape in [(512, 128), (256, 64)]:
        a = rng.standard_normal(shape, dtype=np.float32)
        b = rng.standard_normal(shape, dtype=np.float32)
        c = np.zeros(shape, dtype=np.float32)
        blocked_mul_add(a, b, c, config=config)
        np.testing.assert_allclose(c, a * b + a, rtol=1e-5, atol=1e-5)
    print("OK")


if __name__ == "__main__":
    main()
