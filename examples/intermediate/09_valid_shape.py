"""Ragged data: a tile of fixed capacity whose valid region is a run-time value.

A tile has a static shape (its buffer) and a *valid shape*, which may be a run-time scalar:
only that region is read from GM and written back; the rest is padding. `cols` is a scalar
parameter of the program, so ONE compiled program handles every width up to the tile's 64
columns (a `@pl.jit` scalar argument would instead compile one specialization per value).

What it shows:
  - `pl.load(..., valid_shapes=[rows, cols])` with a scalar `cols` (`pl.Scalar[pl.INDEX]`);
  - `pl.fillpad` makes the padding a known value (zero), so a row reduction over the whole
    tile is correct;
  - a store writes only the valid region. `y` is `pl.InOut` because the check relies on the
    rest of it keeping its old contents: the simulator starts every `pl.Out` buffer as poison
    (NaN), as the chip makes no promise about memory a kernel does not write.

Run:  python examples/intermediate/09_valid_shape.py
"""

import numpy as np

import pypto.language as pl
from pypto import ir

M, CAP = 16, 64


@pl.program
class RaggedRows:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[M, CAP], pl.FP32], y: pl.InOut[pl.Tensor[[M, CAP], pl.FP32]],
               sums: pl.Out[pl.Tensor[[M, 1], pl.FP32]], cols: pl.Scalar[pl.INDEX]):
        t: pl.Tile[[M, CAP], pl.FP32] = pl.load(x, [0, 0], [M, CAP], valid_shapes=[M, cols])
        y = pl.store(pl.mul(t, 3.0), [0, 0], y)                  # only the valid [M, cols] region
        full: pl.Tile[[M, CAP], pl.FP32] = pl.fillpad(t, pad_value=pl.PadValue.zero)
        scratch: pl.Tile[[M, CAP], pl.FP32] = pl.create_tile([M, CAP], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        sums = pl.store(pl.row_sum(full, scratch), [0, 0], sums)
        return y, sums

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M, CAP], pl.FP32], y: pl.InOut[pl.Tensor[[M, CAP], pl.FP32]],
             sums: pl.Out[pl.Tensor[[M, 1], pl.FP32]], cols: pl.Scalar[pl.INDEX]):
        y, sums = self.kernel(x, y, sums, cols)
        return y, sums


def main():
    compiled = ir.compile(RaggedRows)                  # compiled once, run with three widths
    x = np.random.default_rng(24).standard_normal((M, CAP), dtype=np.float32)
    for cols in (64, 40, 7):
        y = np.full_like(x, -9.0)
        sums = np.zeros((M, 1), np.float32)
        compiled(x, y, sums, cols)
        np.testing.assert_allclose(y[:, :cols], 3 * x[:, :cols], rtol=1e-6)
        assert (y[:, cols:] == -9.0).all(), "the store wrote outside the valid region"
        np.testing.assert_allclose(sums, x[:, :cols].sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-5)
    print("OK")


if __name__ == "__main__":
    main()
