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


@pl.program
class SkippedSplitLowering:
    @pl.function(type=pl.FunctionType.InCore, attrs={"split": pl.SplitMode.UP_DOWN})
    def k(self, x: pl.Tensor[[16, 128], pl.BF16], y: pl.Tensor[[128, 8], pl.BF16],
          out_0: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        xm = pl.load(x, [0, 0], [16, 128], target_memory=pl.Mem.Mat)
        xl = pl.move(xm, target_memory=pl.Mem.Left)
        ym = pl.load(y, [0, 0], [128, 8], target_memory=pl.Mem.Mat)
        yr = pl.move(ym, target_memory=pl.Mem.Right)
        z = pl.matmul(xl, yr)
        zv = pl.move(z, target_memory=pl.Mem.Vec)
        zt = pl.transpose(zv, axis1=0, axis2=1)
        out_0 = pl.store(zt, [0, 0], out_0)
        return out_0


def test_expand_mixed_kernel_alone_refuses_an_unsplittable_transpose():
    """Seed 004: run on its own (LowerAutoVectorSplit skipped), the pass keeps a whole-function internal
    check instead of expanding the kernel silently; the message names the skipped step."""
    from pypto.errors import InternalError
    from pypto.pypto_core import passes
    p = passes.convert_to_ssa()(SkippedSplitLowering)
    p = passes.infer_tile_memory_space()(passes.flatten_tile_nd_to_2d()(p))
    with pytest.raises(InternalError, match="LowerAutoVectorSplit") as err:
        passes.expand_mixed_kernel()(p)
    assert "swaps its split axis" in str(err.value) and err.value.span is not None
