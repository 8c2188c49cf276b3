"""SPMD over mixed kernels: four clusters, each a cube matmul feeding its vector cores.

`with pl.spmd(4)` launches the body once per block; each block here is a whole mixed kernel
(AIC + AIV on one cluster), working on its own 16-row band of A. The simulator runs the
four clusters concurrently.

What it shows:
  - tile-level cube path (`pl.Mem.Mat` → Left / Right → `pl.matmul`) then
    `pl.move(acc, target_memory=pl.Mem.Vec)` — the crossing to the vector side;
  - `pl.tile.get_block_idx()` for the band offset.

Run:  python examples/advanced/04_spmd_mixed.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

BLOCKS, BAND, K, N = 4, 16, 32, 16


@pl.jit
def banded(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.spmd(BLOCKS):
        i = pl.tile.get_block_idx()
        left = pl.move(pl.load(a, [i * BAND, 0], [BAND, K], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        right = pl.move(pl.load(b, [0, 0], [K, N], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        v = pl.move(pl.matmul(left, right), target_memory=pl.Mem.Vec)
        pl.store(pl.mul(v, v), [i * BAND, 0], c)
    return c


def main():
    rng = np.random.default_rng(33)
    a = rng.uniform(-1, 1, (BLOCKS * BAND, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = np.zeros((BLOCKS * BAND, N), np.float32)
    banded(a, b, c, config=RunConfig(sim_schedule="random", sim_seed=3))
    z = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c, z * z, rtol=1e-5, atol=1e-6)
    print("OK")


if __name__ == "__main__":
    main()
