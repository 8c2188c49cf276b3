"""A tensor row reduction's scratch tile holds whole 128-column blocks even when the row is narrower,
and the reduction still runs numpy-equal."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.ir.expr import Call, GlobalVar
from pypto.ir.walks import preorder
from pypto.passes import convert_tensor_to_tile_ops
from pypto.runtime import RunConfig, run


@pl.program
class NarrowRowMin:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[8, 48], pl.FP32]) -> pl.Tensor[[8, 1], pl.FP32]:
        m: pl.Tensor[[8, 1], pl.FP32] = pl.row_min(x)
        return m


def test_scratch_is_padded_to_whole_blocks():
    body = convert_tensor_to_tile_ops()(NarrowRowMin).get_function("kernel").body
    creates = [n for n in preorder(body) if isinstance(n, Call) and not isinstance(n.op, GlobalVar)
               and n.op.name == "tile.create"]
    assert [[d.value for d in c.type.shape] for c in creates] == [[8, 128]]


@pl.program
class RowMinMax:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 48], pl.FP32], lo: pl.Out[pl.Tensor[[8, 1], pl.FP32]],
             hi: pl.Out[pl.Tensor[[8, 1], pl.FP32]]) -> tuple[pl.Tensor[[8, 1], pl.FP32], pl.Tensor[[8, 1], pl.FP32]]:
        with pl.at(level=pl.Level.CORE_GROUP):
            lo = pl.assemble(lo, pl.row_min(x), [0, 0])
            hi = pl.assemble(hi, pl.row_max(x), [0, 0])
        return lo, hi


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_narrow_row_reductions_match_numpy(platform):
    x = np.random.default_rng(3).standard_normal((8, 48)).astype(np.float32)
    lo, hi = np.zeros((8, 1), np.float32), np.zeros((8, 1), np.float32)
    run(RowMinMax, config=RunConfig(platform=platform))(x, lo, hi)
    np.testing.assert_array_equal(lo, x.min(axis=1, keepdims=True))
    np.testing.assert_array_equal(hi, x.max(axis=1, keepdims=True))
