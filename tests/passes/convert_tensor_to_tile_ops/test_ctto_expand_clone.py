"""tensor.expand_clone in a kernel writes src broadcast over target into target itself: a store loop for a
leading broadcast axis, a per-slab col_expand for the middle one, one row_expand for the last; each runs
numpy-equal to np.broadcast_to."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import UnsupportedError
from pypto.ir.enums import ParamDirection
from pypto.ir.equality import assert_structural_equal
from pypto.passes import convert_tensor_to_tile_ops
from pypto.runtime import RunConfig, run


@pl.program
class CloneLastAxis:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, s: pl.Tensor[[2, 4, 1], pl.FP32], t: pl.Tensor[[2, 4, 16], pl.FP32]) \
            -> pl.Tensor[[2, 4, 16], pl.FP32]:
        y: pl.Tensor[[2, 4, 16], pl.FP32] = pl.expand_clone(s, t)
        return y


@pl.program
class CloneLastAxisLowered:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, s: pl.Tensor[[2, 4, 1], pl.FP32], t: pl.Out[pl.Tensor[[2, 4, 16], pl.FP32]]) \
            -> pl.Tensor[[2, 4, 16], pl.FP32]:
        col: pl.Tile[[2, 4, 1], pl.FP32, pl.Mem.Vec] = pl.tile.load(s, [0, 0, 0], [2, 4, 1], [2, 4, 1],
                                                                    target_memory=pl.Mem.Vec)
        wide: pl.Tile[[2, 4, 16], pl.FP32, pl.Mem.Vec] = pl.tile.create([2, 4, 16], dtype=pl.FP32)
        spread: pl.Tile[[2, 4, 16], pl.FP32, pl.Mem.Vec] = pl.tile.row_expand(wide, col)
        y: pl.Tensor[[2, 4, 16], pl.FP32] = pl.tile.store(spread, [0, 0, 0], t)
        return y


def test_last_axis_clone_is_one_row_expand_into_target():
    after = convert_tensor_to_tile_ops()(CloneLastAxis)
    assert_structural_equal(after, CloneLastAxisLowered)
    assert after.get_function("kernel").param_directions[1] is ParamDirection.Out


@pl.program
class CloneTwoAxes:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, s: pl.Tensor[[1, 4, 1], pl.FP32], t: pl.Tensor[[2, 4, 16], pl.FP32]) \
            -> pl.Tensor[[2, 4, 16], pl.FP32]:
        y: pl.Tensor[[2, 4, 16], pl.FP32] = pl.expand_clone(s, t)
        return y


def test_two_broadcast_axes_are_a_clear_error():
    with pytest.raises(UnsupportedError, match="one axis"):
        convert_tensor_to_tile_ops()(CloneTwoAxes)


def _program(src_shape, shape):
    @pl.program
    class Clone:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, s: pl.Tensor[src_shape, pl.FP16], out: pl.Out[pl.Tensor[shape, pl.FP16]]) \
                -> pl.Tensor[shape, pl.FP16]:
            with pl.at(level=pl.Level.CORE_GROUP):
                out = pl.expand_clone(s, out)
            return out
    return Clone


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("src_shape", [[1, 4, 16], [3, 1, 16], [3, 4, 1]])
def test_expand_clone_matches_broadcast_to(platform, src_shape):
    shape = [3, 4, 16]
    s = np.random.default_rng(1).standard_normal(src_shape).astype(np.float16)
    got = np.zeros(shape, np.float16)
    run(_program(src_shape, shape), config=RunConfig(platform=platform))(s, got)
    np.testing.assert_array_equal(got, np.broadcast_to(s, shape))
