"""A single matmul on the cube unit: C[M, N] = A[M, K] @ B[K, N].

The cube core reads its operands from dedicated buffers: a tile comes from GM into Mat (L1),
moves to Left (L0A) or Right (L0B), and `pl.matmul` writes an FP32 accumulator in Acc (L0C),
which stores straight to GM. FP16 inputs, FP32 result — the usual mixed precision.

What it shows:
  - `target_memory=pl.Mem.Mat` on the load, `pl.move` to Left / Right;
  - storing an Acc tile to GM (the fixpipe path);
  - the same kernel on both simulated platforms.

Run:  python examples/beginner/06_matmul.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

M, K, N = 32, 64, 48


@pl.jit
def matmul(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a_l1 = pl.load(a, [0, 0], [M, K], target_memory=pl.Mem.Mat)
        b_l1 = pl.load(b, [0, 0], [K, N], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(a_l1, target_memory=pl.Mem.Left), pl.move(b_l1, target_memory=pl.Mem.Right))
        pl.store(acc, [0, 0], c)
    return c


def main():
    rng = np.random.default_rng(12)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    for platform in ("a2a3sim", "a5sim"):
        c = np.zeros((M, N), np.float32)
        matmul(a, b, c, config=RunConfig(platform=platform))
        np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-4, atol=1e-4)
    print("OK")


if __name__ == "__main__":
    main()
