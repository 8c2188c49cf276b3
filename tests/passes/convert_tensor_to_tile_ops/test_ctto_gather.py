"""tensor.gather along the last axis lowers to row-absolute flat indices and one tile.gather (both index
layouts: the whole-tile sequence when an index row fills 32-byte blocks, the per-row base otherwise),
and runs numpy-equal to np.take_along_axis."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import UnsupportedError
from pypto.ir.equality import assert_structural_equal
from pypto.passes import convert_tensor_to_tile_ops
from pypto.passes.context import PassContext
from pypto.runtime import RunConfig, run

RNG = np.random.default_rng(9)


@pl.program
class GatherRows:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[2, 8], pl.FP32], i: pl.Tensor[[2, 5], pl.INT32]) -> pl.Tensor[[2, 5], pl.FP32]:
        g: pl.Tensor[[2, 5], pl.FP32] = pl.gather(x, -1, i)
        return g


@pl.program
class GatherRowsLowered:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[2, 8], pl.FP32], i: pl.Tensor[[2, 5], pl.INT32],
               ret0_out: pl.Out[pl.Tensor[[2, 5], pl.FP32]]) -> pl.Tensor[[2, 5], pl.FP32]:
        xt: pl.Tile[[2, 8], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [2, 8], [2, 8], target_memory=pl.Mem.Vec)
        it: pl.Tile[[2, 5], pl.INT32, pl.Mem.Vec] = pl.tile.load(i, [0, 0], [2, 5], [2, 5], target_memory=pl.Mem.Vec)
        rows: pl.Tile[[1, 2], pl.INT32, pl.Mem.Vec] = pl.tile.ci(pl.const(0, pl.INT32), [1, 2], dtype=pl.INT32)
        col: pl.Tile[[2, 1], pl.INT32, pl.Mem.Vec] = pl.tile.reshape(rows, [2, 1])
        base: pl.Tile[[2, 1], pl.INT32, pl.Mem.Vec] = pl.tile.muls(col, pl.const(8, pl.INT32))
        flat: pl.Tile[[2, 5], pl.INT32, pl.Mem.Vec] = pl.tile.row_expand_add(it, base)
        scratch: pl.Tile[[2, 5], pl.INT32, pl.Mem.Vec] = pl.tile.create([2, 5], dtype=pl.INT32,
                                                                        target_memory=pl.Mem.Vec)
        picked: pl.Tile[[2, 5], pl.FP32, pl.Mem.Vec] = pl.tile.gather(xt, flat, scratch)
        g: pl.Tile[[2, 5], pl.FP32, pl.Mem.Vec] = picked
        stored: pl.Tensor[[2, 5], pl.FP32] = pl.tile.store(g, [0, 0], ret0_out)
        return stored


def test_row_relative_index_becomes_flat_then_one_gather():
    with PassContext(platform="a5"):
        assert_structural_equal(convert_tensor_to_tile_ops()(GatherRows), GatherRowsLowered)


@pl.program
class GatherRowsPerRow:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[2, 8], pl.FP32], i: pl.Tensor[[2, 5], pl.INT32],
               ret0_out: pl.Out[pl.Tensor[[2, 5], pl.FP32]]) -> pl.Tensor[[2, 5], pl.FP32]:
        acc0: pl.Tile[[2, 5], pl.FP32, pl.Mem.Vec] = pl.tile.create([2, 5], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        for r, (acc,) in pl.range(2, init_values=(acc0,)):
            xr: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [r, 0], [1, 8], [1, 8],
                                                                    target_memory=pl.Mem.Vec)
            ir_: pl.Tile[[1, 5], pl.INT32, pl.Mem.Vec] = pl.tile.load(i, [r, 0], [1, 5], [1, 5],
                                                                      target_memory=pl.Mem.Vec)
            scratch: pl.Tile[[1, 5], pl.INT32, pl.Mem.Vec] = pl.tile.create([1, 5], dtype=pl.INT32,
                                                                            target_memory=pl.Mem.Vec)
            row: pl.Tile[[1, 5], pl.FP32, pl.Mem.Vec] = pl.tile.gather(xr, ir_, scratch)
            merged: pl.Tile[[2, 5], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(acc, row, [r, 0])
            done = pl.yield_(merged)
        g: pl.Tile[[2, 5], pl.FP32, pl.Mem.Vec] = done
        stored: pl.Tensor[[2, 5], pl.FP32] = pl.tile.store(g, [0, 0], ret0_out)
        return stored


def test_a2a3_walks_the_rows():
    with PassContext(platform="a2a3"):
        assert_structural_equal(convert_tensor_to_tile_ops()(GatherRows), GatherRowsPerRow)


@pl.program
class GatherFirstAxis:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[4, 8], pl.FP32], i: pl.Tensor[[2, 8], pl.INT32]) -> pl.Tensor[[2, 8], pl.FP32]:
        g: pl.Tensor[[2, 8], pl.FP32] = pl.gather(x, 0, i)
        return g


def test_gather_along_another_axis_is_a_clear_error():
    with pytest.raises(UnsupportedError, match="last axis"):
        convert_tensor_to_tile_ops()(GatherFirstAxis)


def _program(rows, src_cols, k, dtype, idx_dtype):
    @pl.program
    class Gather:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[rows, src_cols], dtype], idx: pl.Tensor[[rows, k], idx_dtype],
                 out: pl.Out[pl.Tensor[[rows, k], dtype]]) -> pl.Tensor[[rows, k], dtype]:
            with pl.at(level=pl.Level.CORE_GROUP):
                out = pl.assemble(out, pl.gather(x, -1, idx), [0, 0])
            return out
    return Gather


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("rows, src_cols, k, dtype, idx_dtype", [
    (8, 32, 5, pl.FP32, pl.INT32),      # per-row base (5 int32 do not fill a block)
    (4, 16, 64, pl.FP32, pl.INT32),     # whole-tile sequence, K > source columns
    (4, 16, 16, pl.FP16, pl.INT16),     # INT16 index widened, then narrowed
])
def test_gather_matches_take_along_axis(platform, rows, src_cols, k, dtype, idx_dtype):
    x = RNG.standard_normal((rows, src_cols)).astype(dtype.to_numpy())
    idx = RNG.integers(0, src_cols, (rows, k)).astype(idx_dtype.to_numpy())
    got = np.zeros((rows, k), dtype.to_numpy())
    run(_program(rows, src_cols, k, dtype, idx_dtype), config=RunConfig(platform=platform))(x, idx, got)
    np.testing.assert_array_equal(got, np.take_along_axis(x, idx.astype(np.int64), 1))


@pl.program
class GatherOfAWindow:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 16], pl.FP32], idx: pl.Tensor[[4, 8], pl.INT32],
             out: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            whole: pl.Tensor[[4, 16], pl.FP32] = pl.create_tensor([4, 16], dtype=pl.FP32)
            whole = pl.assemble(whole, x, [0, 0])
            right = whole[:, 8:16]
            out = pl.assemble(out, pl.gather(right, -1, idx), [0, 0])
        return out


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_gather_of_a_column_window_reads_the_window(platform):
    """The window (columns 8..15 of an on-chip tile) is copied into a packed tile before the flat gather."""
    x = RNG.standard_normal((4, 16)).astype(np.float32)
    idx = RNG.integers(0, 8, (4, 8)).astype(np.int32)
    got = np.zeros((4, 8), np.float32)
    run(GatherOfAWindow, config=RunConfig(platform=platform))(x, idx, got)
    np.testing.assert_array_equal(got, np.take_along_axis(x[:, 8:16], idx.astype(np.int64), 1))
