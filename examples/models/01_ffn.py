"""A gated feed-forward block (SwiGLU): out = (silu(x @ W_gate) * (x @ W_up)) @ W_down.

Two tasks: the first is a mixed kernel (two cube matmuls, then the vector gate); its result
goes through GM to the second, a plain cube matmul.

What it shows:
  - several matmuls and vector ops in one mixed region (`out_dtype=pl.FP32` on the matmuls);
  - silu from vector primitives: x * 1 / (1 + exp(-x));
  - an intermediate GM tensor (`pl.create_tensor`) linking two regions.

Run:  python examples/models/01_ffn.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

T, H, F = 16, 32, 64          # tokens, hidden size, feed-forward size


@pl.jit
def swiglu_ffn(x: pl.Tensor, w_gate: pl.Tensor, w_up: pl.Tensor, w_down: pl.Tensor, out: pl.Out[pl.Tensor]):
    h = pl.create_tensor([T, F], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="gate_up"):
        g = pl.matmul(x, w_gate, out_dtype=pl.FP32)
        u = pl.matmul(x, w_up, out_dtype=pl.FP32)
        silu = pl.mul(g, pl.recip(pl.add(pl.exp(pl.neg(g)), 1.0)))
        h[:] = pl.mul(silu, u)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="down"):
        out[:] = pl.matmul(h, w_down, out_dtype=pl.FP32)
    return out


def main():
    rng = np.random.default_rng(41)
    x = rng.uniform(-1, 1, (T, H)).astype(np.float32)
    w_gate, w_up = (rng.uniform(-0.5, 0.5, (H, F)).astype(np.float32) for _ in range(2))
    w_down = rng.uniform(-0.5, 0.5, (F, H)).astype(np.float32)
    out = np.zeros((T, H), np.float32)
    swiglu_ffn(x, w_gate, w_up, w_down, out, config=RunConfig())
    g, u = x @ w_gate, x @ w_up
    np.testing.assert_allclose(out, (g / (1 + np.exp(-g)) * u) @ w_down, rtol=1e-4, atol=1e-5)
    print("OK")


if __name__ == "__main__":
    main()
