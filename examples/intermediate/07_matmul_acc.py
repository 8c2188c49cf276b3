"""Accumulating over K: C = sum_k A[:, k-block] @ B[k-block, :] in one Acc tile.

A K dimension too long for L0A / L0B is walked in blocks; `pl.matmul` starts the
accumulator with the first block and `pl.matmul_acc` adds every further block in place.

What it shows:
  - a `pl.range` loop carrying a tile (`acc`) from one iteration to the next;
  - `pl.matmul_acc(acc, left, right)` (cube, in place into Acc).

Run:  python examples/intermediate/07_matmul_acc.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

M, K, N, KB = 32, 256, 32, 64


@pl.jit
def matmul_k_blocks(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        left = pl.move(pl.load(a, [0, 0], [M, KB], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        right = pl.move(pl.load(b, [0, 0], [KB, N], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        acc = pl.matmul(left, right)
        for k in pl.range(1, K // KB):
            left = pl.move(pl.load(a, [0, k * KB], [M, KB], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
            right = pl.move(pl.load(b, [k * KB, 0], [KB, N], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
            acc = pl.matmul_acc(acc, left, right)
        pl.store(acc, [0, 0], c)
    return c


def main():
    rng = np.random.default_rng(22)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    matmul_k_blocks(a, b, c, config=RunConfig())
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-4, atol=1e-3)
    print("OK")


if __name__ == "__main__":
    main()
