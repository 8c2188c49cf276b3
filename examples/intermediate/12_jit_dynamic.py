"""`@pl.jit` specialization, and dynamic dims that share one compiled program.

By default a jit function compiles once per distinct argument signature (shapes, dtypes,
scalar values) and caches the result. A dim declared `pl.dynamic("M")` stays symbolic: every
row count shares one compiled program, and the kernel reads M at run time.

What it shows:
  - `M = pl.dynamic("M")` in a full annotation `pl.Tensor[[M, 64], pl.FP32]`;
  - `M // BLOCK` as a loop bound computed at run time;
  - `.compile(...)` returns the cached `CompiledProgram`: the same object for every M.

Run:  python examples/intermediate/12_jit_dynamic.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

M = pl.dynamic("M")
N, BLOCK = 64, 32


@pl.jit
def scale_rows(x: pl.Tensor[[M, N], pl.FP32], out: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(M // BLOCK):
            t = pl.load(x, [i * BLOCK, 0], [BLOCK, N])
            pl.store(pl.mul(t, 0.25), [i * BLOCK, 0], out)
    return out


@pl.jit
def static_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    rows, cols = a.shape
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(a, [0, 0], [rows, cols]), pl.load(b, [0, 0], [rows, cols])), [0, 0], c)
    return c


def main():
    rng = np.random.default_rng(27)
    programs = set()
    for rows in (32, 96, 160):
        x = rng.standard_normal((rows, N), dtype=np.float32)
        out = np.zeros_like(x)
        scale_rows(x, out, config=RunConfig())
        np.testing.assert_allclose(out, x * 0.25, rtol=1e-6)
        programs.add(id(scale_rows.compile(x, out)))
    assert len(programs) == 1, "a dynamic dim must not recompile"

    shapes = [(16, 32), (32, 32), (16, 32)]
    compiled = []
    for shape in shapes:
        a, b = rng.standard_normal(shape, dtype=np.float32), rng.standard_normal(shape, dtype=np.float32)
        c = np.zeros(shape, np.float32)
        static_add(a, b, c)
        np.testing.assert_allclose(c, a + b, rtol=1e-6)
        compiled.append(static_add.compile(a, b, c))
    assert compiled[0] is compiled[2] and compiled[0] is not compiled[1], "one specialization per shape"
    print("OK")


if __name__ == "__main__":
    main()
