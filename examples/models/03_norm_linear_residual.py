"""A transformer sub-layer: y = x + RMSNorm(x) @ W, over row blocks on several cores.

Two SPMD launches: in the first, each block normalises its own band of rows (vector) into
a GM scratch tensor; in the second, each block projects its band (cube) and adds the
residual (vector). The cube reads its operands from GM / L1, not from a vector result, so
the normalised rows go through GM; the second launch follows the first because it reads
what the first wrote.

What it shows:
  - `for b in pl.spmd(n)` at the orchestration level with a per-block slice;
  - a vector launch feeding a mixed launch through GM;
  - `pl.col_expand_mul` for the norm weight, `pl.rsqrt` for the inverse RMS.

Run:  python examples/models/03_norm_linear_residual.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

BLOCKS, BAND, H, EPS = 2, 16, 32, 1e-6
T = BLOCKS * BAND


@pl.jit
def norm_linear_residual(x: pl.Tensor, norm_w: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    normed = pl.create_tensor([T, H], dtype=pl.FP32)
    for b in pl.spmd(BLOCKS):                            # task 1: vector, one band per block
        xb = pl.slice(x, [BAND, H], [b * BAND, 0])
        ms = pl.mul(pl.row_sum(pl.mul(xb, xb)), 1.0 / H)
        nb = pl.col_expand_mul(pl.row_expand_mul(xb, pl.rsqrt(pl.add(ms, EPS))), norm_w)
        normed = pl.assemble(normed, nb, [b * BAND, 0])
    for b in pl.spmd(BLOCKS):                            # task 2: mixed, after task 1 (reads normed)
        proj = pl.matmul(pl.slice(normed, [BAND, H], [b * BAND, 0]), w, out_dtype=pl.FP32)
        y = pl.assemble(y, pl.add(proj, pl.slice(x, [BAND, H], [b * BAND, 0])), [b * BAND, 0])
    return y


def main():
    rng = np.random.default_rng(42)
    x = rng.standard_normal((T, H), dtype=np.float32)
    norm_w = rng.uniform(0.5, 1.5, (1, H)).astype(np.float32)
    w = rng.uniform(-0.3, 0.3, (H, H)).astype(np.float32)
    y = np.zeros_like(x)
    norm_linear_residual(x, norm_w, w, y, config=RunConfig())
    normed = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + EPS) * norm_w
    np.testing.assert_allclose(y, x + normed @ w, rtol=1e-4, atol=1e-4)
    print("OK")


if __name__ == "__main__":
    main()
