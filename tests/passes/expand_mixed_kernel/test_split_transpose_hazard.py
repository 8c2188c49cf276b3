"""A tile.transpose that swaps the split axis cannot be split across the AIV lanes: LowerAutoVectorSplit
rejects it (function-level pl.split) with the reference's actionable message (mode, pl.SplitMode.NONE,
"column slice"); a singleton split-axis source carries no split data and is kept."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import UnsupportedError
from pypto.runtime import RunConfig


def _transposing(mode):
    @pl.jit
    def mm_transpose(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(mode)]):
            z = pl.matmul(a, b, out_dtype=pl.FP32)
            c = pl.assemble(c, pl.transpose(pl.exp(z), 0, 1), [0, 0])
        return c
    return mm_transpose


@pytest.mark.parametrize("mode", [pl.SplitMode.UP_DOWN, pl.SplitMode.LEFT_RIGHT])
def test_transpose_swapping_the_split_axis_gets_an_actionable_message(mode):
    kernel = _transposing(mode)
    with pytest.raises(UnsupportedError) as err:
        kernel.lower(np.ones((16, 32), np.float16), np.ones((32, 16), np.float16), np.zeros((16, 16), np.float32),
                     config=RunConfig(platform="a5sim"))
    text = str(err.value)
    assert f"pl.split(pl.SplitMode.{mode.name})" in text and "swaps the split axis" in text
    assert "pl.SplitMode.NONE" in text and "column slice" in text


def _transpose_stmt(shape):
    from pypto import ir
    from pypto.ir.dtypes import FP32
    from pypto.ir.enums import MemorySpace
    from pypto.ir.ops import create_op_call
    from pypto.ir.stmt import EvalStmt
    from pypto.ir.types import TileType
    x = ir.Var("x", TileType(list(shape), FP32, memory_space=MemorySpace.Vec))
    return EvalStmt(create_op_call("tile.transpose", [x, 0, 1]))


def test_a_singleton_split_axis_source_is_not_a_hazard():
    from pypto.passes.lower_auto_vector_split import _transpose_hazard
    assert _transpose_hazard(_transpose_stmt((1, 16)), 0) is None      # UP_DOWN: 1 row, nothing to split
    assert _transpose_hazard(_transpose_stmt((16, 16)), 0) is not None
    assert _transpose_hazard(_transpose_stmt((16, 1)), 1) is None      # LEFT_RIGHT: 1 column


@pl.jit
def region_transpose(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        z = pl.matmul(a, b, out_dtype=pl.FP32)
        for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            h = pl.aiv_shard(z)
            c = pl.assemble(c, pl.transpose(pl.exp(h), 0, 1), [0, aiv_id * 8])
    return c


def test_transpose_inside_a_split_aiv_region_names_the_region_mode():
    with pytest.raises(UnsupportedError, match=r"pl\.split_aiv\(2, mode=pl\.SplitMode\.UP_DOWN\).*swaps the split axis"
                                               r"(.|\n)*pl\.SplitMode\.NONE(.|\n)*column slice"):
        region_transpose.lower(np.ones((16, 32), np.float16), np.ones((32, 16), np.float16),
                               np.zeros((16, 16), np.float32), config=RunConfig(platform="a5sim"))
