"""A mixed kernel: a cube matmul and vector ops in ONE compute region.

The cube core (AIC) does the matmul, the vector cores (AIV) do the elementwise work.
ExpandMixedKernel splits the region into an AIC function, an AIV function and a Group that
launches both on one cluster; the Acc tile travels from cube to vector through a cross-core
pipe (`tpush_to_aiv` / `tpop_from_aic`), which the compiler inserts.

What it shows:
  - writing the whole computation in one `pl.at` region at the tensor level;
  - `.compile(...)` to look at the split: the function types of the lowered program;
  - the simulator running AIC and AIV concurrently with a real pipe between them.

Run:  python examples/advanced/02_mixed_kernel.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

M, K, N = 32, 64, 32


@pl.jit
def matmul_bias_gelu(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm_bias_act"):
        z = pl.add(pl.matmul(a, b, out_dtype=pl.FP32), bias)                  # AIC, then AIV
        sig = pl.recip(pl.add(pl.exp(pl.mul(z, -1.702)), 1.0))
        c = pl.assemble(c, pl.mul(z, sig), [0, 0])                             # gelu (sigmoid form)
    return c


def main():
    rng = np.random.default_rng(31)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    bias = rng.uniform(-1, 1, (M, N)).astype(np.float32)
    c = np.zeros((M, N), np.float32)
    compiled = matmul_bias_gelu.compile(a, b, bias, c)       # cached: the call below reuses it
    kinds = {f.func_type.name for f in compiled.lowered.functions.values()}
    assert {"AIC", "AIV", "Group"} <= kinds, kinds
    matmul_bias_gelu(a, b, bias, c, config=RunConfig())
    z = a.astype(np.float32) @ b.astype(np.float32) + bias
    np.testing.assert_allclose(c, z / (1 + np.exp(-1.702 * z)), rtol=1e-4, atol=1e-5)
    print("OK")


if __name__ == "__main__":
    main()
