"""Building an output from blocks: `pl.slice` reads a window, `pl.assemble` writes one.

At the orchestration level a loop slices the input into row blocks, each block goes through
its own kernel call (one task per iteration), and `pl.assemble` places each result at its
offset of the output.

What it shows:
  - a `@pl.program` with an InCore kernel called in a loop from the Orchestration function;
  - `pl.slice(x, shape, offset)` and `pl.assemble(target, source, offset)` on tensors.

Run:  python examples/intermediate/08_assemble.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig, run

M, N, BLOCK = 128, 64, 32


@pl.program
class BlockwiseSquarePlusOne:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, t: pl.Tensor[[BLOCK, N], pl.FP32]) -> pl.Tensor[[BLOCK, N], pl.FP32]:
        y: pl.Tensor[[BLOCK, N], pl.FP32] = pl.add(pl.mul(t, t), 1.0)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M, N], pl.FP32],
             out: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        for i in pl.range(M // BLOCK):
            t: pl.Tensor[[BLOCK, N], pl.FP32] = pl.slice(x, [BLOCK, N], [i * BLOCK, 0])
            y: pl.Tensor[[BLOCK, N], pl.FP32] = self.block(t)
            out = pl.assemble(out, y, [i * BLOCK, 0])
        return out


def main():
    x = np.random.default_rng(23).standard_normal((M, N), dtype=np.float32)
    out = np.zeros_like(x)
    run(BlockwiseSquarePlusOne, x, out, config=RunConfig())
    np.testing.assert_allclose(out, x * x + 1, rtol=1e-6)
    print("OK")


if __name__ == "__main__":
    main()
