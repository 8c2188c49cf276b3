"""Tensor-level kernels: write whole-tensor math, let the compiler insert loads and stores.

Inside `pl.at`, ops on `pl.Tensor` values are tensor ops; ConvertTensorToTileOps turns them
into tile ops with an entry load per input and an exit store per result.

What it shows:
  - tensor-level `pl.mul` / `pl.add` / `pl.exp` (a Python number selects the scalar form);
  - `out[:] = expr` writes a result into an output tensor (plain `out = expr` would only
    rebind the name);
  - `name_hint` names the outlined kernel.

Run:  python examples/beginner/03_tensor_level.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig


@pl.jit
def scaled_exp_residual(x: pl.Tensor, y: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="residual"):
        out[:] = pl.add(pl.mul(x, 0.5), pl.exp(y))
    return out


def main():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 64), dtype=np.float32)
    y = rng.uniform(-1.0, 1.0, (64, 64)).astype(np.float32)
    out = np.zeros_like(x)
    scaled_exp_residual(x, y, out, config=RunConfig())
    np.testing.assert_allclose(out, x * 0.5 + np.exp(y), rtol=1e-5, atol=1e-5)
    print("OK")


if __name__ == "__main__":
    main()
