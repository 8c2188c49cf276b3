"""Split-K at the tensor level: the K axis walked in slices, the compiler keeps the chain in L0C.

`acc = matmul(a_slice0, b_slice0); for k: acc = matmul_acc(acc, a_slice_k, b_slice_k)` is
written on tensors; ConvertTensorToTileOps turns the slices into Mat loads and Left / Right
moves, and the accumulator stays one Acc tile across the loop. When [M, N] would not fit
L0C, the memory passes tile the output into blocks, each re-running the K chain.

What it shows:
  - tensor-level `pl.matmul` / `pl.matmul_acc` on `pl.slice` views inside `pl.at`;
  - a loop with a start, stop and step: `pl.range(KB, K, KB)`;
  - `RunConfig(sim_strict_memory=True)`: reading a never-written tile byte would be an error.

Run:  python examples/advanced/01_split_k.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

M, K, N, KB = 32, 256, 32, 64


@pl.jit
def split_k(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.matmul(pl.slice(a, [M, KB], [0, 0]), pl.slice(b, [KB, N], [0, 0]))
        for k in pl.range(KB, K, KB):
            acc = pl.matmul_acc(acc, pl.slice(a, [M, KB], [0, k]), pl.slice(b, [KB, N], [k, 0]))
        c[:] = acc
    return c


def main():
    rng = np.random.default_rng(30)
    a = rng.standard_normal((M, K), dtype=np.float32)
    b = rng.standard_normal((K, N), dtype=np.float32)
    c = np.zeros((M, N), np.float32)
    split_k(a, b, c, config=RunConfig(sim_strict_memory=True))
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-3)
    print("OK")


if __name__ == "__main__":
    main()
