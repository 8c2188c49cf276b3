"""Hello world: add two tensors on one simulated vector core.

What it shows:
  - `@pl.jit` compiles the function for the shapes and dtypes of the arrays you pass;
  - `with pl.at(level=pl.Level.CORE_GROUP)` is one on-chip compute region: load tiles from
    global memory, compute on them, store the result back;
  - `pl.Out[...]` marks `c` as an output: the kernel writes into the array you pass.

Run:  python examples/beginner/01_hello_world.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

ROWS, COLS = 64, 128


@pl.jit
def tile_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tile_a = pl.load(a, [0, 0], [ROWS, COLS])
        tile_b = pl.load(b, [0, 0], [ROWS, COLS])
        tile_c = pl.add(tile_a, tile_b)
        pl.store(tile_c, [0, 0], c)
    return c


def main():
    a = np.full((ROWS, COLS), 2.0, dtype=np.float32)
    b = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS)
    c = np.zeros((ROWS, COLS), dtype=np.float32)
    tile_add(a, b, c, config=RunConfig(platform="a2a3sim"))
    np.testing.assert_allclose(c, a + b, rtol=1e-5, atol=1e-5)
    print("OK")


if __name__ == "__main__":
    main()
