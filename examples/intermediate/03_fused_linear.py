"""A linear layer from two kernels: a cube matmul, then a vector bias-add + relu.

What it shows:
  - the cube path: load into Mat (L1), move to Left / Right (L0A / L0B), `pl.matmul` into Acc
    (L0C), store from Acc to GM;
  - `@pl.jit.incore` sub-kernels called by bare name from a `@pl.jit` entry; bare
    `pl.Tensor` annotations take their types from the call site;
  - `pl.create_tensor` for an intermediate in global memory; the simulator orders the two
    tasks by their data dependency (the matmul writes `mm`, the vector kernel reads it).

Run:  python examples/intermediate/03_fused_linear.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

M, K, N = 64, 64, 64


@pl.jit.incore
def matmul_kernel(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    a_l1 = pl.load(a, [0, 0], [M, K], target_memory=pl.MemorySpace.Mat)
    b_l1 = pl.load(b, [0, 0], [K, N], target_memory=pl.MemorySpace.Mat)
    a_l0 = pl.move(a_l1, target_memory=pl.MemorySpace.Left)
    b_l0 = pl.move(b_l1, target_memory=pl.MemorySpace.Right)
    acc = pl.matmul(a_l0, b_l0)
    pl.store(acc, [0, 0], out)
    return out


@pl.jit.incore
def bias_relu_kernel(x: pl.Tensor, bias: pl.Tensor, out: pl.Out[pl.Tensor]):
    tx = pl.load(x, [0, 0], [M, N])
    tb = pl.load(bias, [0, 0], [M, N])
    pl.store(pl.relu(pl.add(tx, tb)), [0, 0], out)
    return out


@pl.jit
def linear_relu(x: pl.Tensor, w: pl.Tensor, bias: pl.Tensor, y: pl.Out[pl.Tensor]):
    mm = pl.create_tensor([M, N], dtype=pl.FP32)
    mm = matmul_kernel(x, w, mm)
    y = bias_relu_kernel(mm, bias, y)
    return y


def main():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((M, K), dtype=np.float32)
    w = rng.standard_normal((K, N), dtype=np.float32)
    bias = rng.standard_normal((M, N), dtype=np.float32)
    for platform in ("a2a3sim", "a5sim"):
        y = np.zeros((M, N), np.float32)
        linear_relu(x, w, bias, y, config=RunConfig(platform=platform))
        np.testing.assert_allclose(y, np.maximum(x @ w + bias, 0), rtol=1e-4, atol=1e-4)
    print("OK")


if __name__ == "__main__":
    main()
