"""SPMD: one kernel launched on several cores, each taking its own block of rows.

`with pl.spmd(n)` launches its body as n blocks; inside, `pl.tile.get_block_idx()` is this
block's index and `pl.tile.get_block_num()` the count. The simulator runs the blocks as
separate cores, so a wrong offset shows up as a wrong (or poisoned) row.

What it shows:
  - the `with pl.spmd(4):` form around a compute region, block index arithmetic for offsets;
  - the `for i in pl.spmd(4):` form at the tensor level, with `pl.slice` / `pl.assemble`.

Run:  python examples/intermediate/11_spmd.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

M, N, BLOCKS = 128, 64, 4
ROWS = M // BLOCKS


@pl.jit
def spmd_with(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.spmd(BLOCKS):
        with pl.at(level=pl.Level.CORE_GROUP):
            b = pl.tile.get_block_idx()
            rows = M // pl.tile.get_block_num()
            t = pl.load(x, [b * rows, 0], [ROWS, N])
            pl.store(pl.add(t, 1.0), [b * rows, 0], out)
    return out


@pl.jit
def spmd_for(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    for i in pl.spmd(BLOCKS):
        t = pl.slice(x, [ROWS, N], [i * ROWS, 0])
        out = pl.assemble(out, pl.exp(t), [i * ROWS, 0])
    return out


def main():
    x = np.random.default_rng(26).uniform(-1, 1, (M, N)).astype(np.float32)
    out = np.zeros_like(x)
    spmd_with(x, out, config=RunConfig())
    np.testing.assert_array_equal(out, x + 1)
    out = np.zeros_like(x)
    spmd_for(x, out, config=RunConfig(sim_schedule="random", sim_seed=7))
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-6)
    print("OK")


if __name__ == "__main__":
    main()
