"""Activation functions built from the vector unit's primitives: relu, sigmoid, silu, gelu.

The vector unit has `relu`, `exp`, `recip`, ... but no gelu or silu instruction; they are a
few lines of tensor-level math (ConvertTensorToTileOps turns each op into its tile form):
  sigmoid(x) = 1 / (1 + exp(-x))
  silu(x)    = x * sigmoid(x)
  gelu(x)   ~= x * sigmoid(1.702 * x)          (the sigmoid approximation of gelu)

What it shows:
  - tensor-level math in one `pl.at` region, several outputs written with `out[:] = ...`;
  - `pl.neg`, `pl.exp`, `pl.recip`, and scalar forms (`pl.adds` via `pl.add(t, 1.0)`).

Run:  python examples/beginner/05_activations.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig


@pl.jit
def activations(x: pl.Tensor, relu_out: pl.Out[pl.Tensor], silu_out: pl.Out[pl.Tensor],
                gelu_out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="activations"):
        relu_out[:] = pl.relu(x)
        sig = pl.recip(pl.add(pl.exp(pl.neg(x)), 1.0))
        silu_out[:] = pl.mul(x, sig)
        sig_g = pl.recip(pl.add(pl.exp(pl.mul(x, -1.702)), 1.0))
        gelu_out[:] = pl.mul(x, sig_g)
    return relu_out, silu_out, gelu_out


def main():
    x = np.random.default_rng(11).uniform(-4, 4, (32, 64)).astype(np.float32)
    relu, silu, gelu = (np.zeros_like(x) for _ in range(3))
    activations(x, relu, silu, gelu, config=RunConfig())
    sigmoid = lambda v: 1.0 / (1.0 + np.exp(-v))
    np.testing.assert_allclose(relu, np.maximum(x, 0), rtol=1e-6)
    np.testing.assert_allclose(silu, x * sigmoid(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gelu, x * sigmoid(1.702 * x), rtol=1e-5, atol=1e-6)
    print("OK")


if __name__ == "__main__":
    main()
