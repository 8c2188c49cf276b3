"""FlattenTileNdTo2D and transposes: the 2-D transpose gets its scratch tile here (seed 003); rank > 2
transposes run as a loop of 2-D transposes over pages of the flattened tile when they swap the last
two non-unit axes, are a plain reshape when only size-1 axes move, and are rejected otherwise."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UnsupportedError
from pypto.passes.flatten_tile_nd_to_2d import flatten_tile_nd_to_2d


def test_transpose_scratch_is_materialized_here():
    """Seed 003: the 3-arg tile.transpose of ConvertTensorToTileOps gets tile.create + the 4-arg form."""
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[32, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
            x_tile: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [32, 64], [32, 64])
            y: pl.Tile[[64, 32], pl.FP32, pl.Mem.Vec] = pl.tile.transpose(x_tile, 0, 1)
            out2: pl.Tensor[[64, 32], pl.FP32] = pl.tile.store(y, [0, 0], out)
            return out2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[32, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
            x_tile: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [32, 64], [32, 64])
            tmp: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.create([32, 64], dtype=pl.FP32,
                                                                         target_memory=pl.Mem.Vec)
            y: pl.Tile[[64, 32], pl.FP32, pl.Mem.Vec] = pl.tile.transpose(x_tile, 0, 1, tmp)
            out2: pl.Tensor[[64, 32], pl.FP32] = pl.tile.store(y, [0, 0], out)
            return out2

    ir.assert_structural_equal(flatten_tile_nd_to_2d()(Before), Expected)


def test_transpose_of_leading_axes_of_a_rank3_tile_is_unsupported():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[2, 16, 32], pl.FP32]) -> pl.Tensor[[2, 16, 32], pl.FP32]:
            t: pl.Tile[[2, 16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0, 0], [2, 16, 32], [2, 16, 32])
            y: pl.Tile[[16, 2, 32], pl.FP32, pl.Mem.Vec] = pl.tile.transpose(t, 0, 1)
            return x

    with pytest.raises(UnsupportedError, match=r"rank 3 tile over axes \[0, 1\] is not supported"):
        flatten_tile_nd_to_2d()(P)


def test_rank3_transpose_of_the_last_two_axes_runs_page_by_page():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[2, 16, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[2, 32, 16], pl.FP32]]) -> pl.Tensor[[2, 32, 16], pl.FP32]:
            t: pl.Tile[[2, 16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0, 0], [2, 16, 32], [2, 16, 32])
            y: pl.Tile[[2, 32, 16], pl.FP32, pl.Mem.Vec] = pl.tile.transpose(t, 1, 2)
            out2: pl.Tensor[[2, 32, 16], pl.FP32] = pl.tile.store(y, [0, 0, 0], out)
            return out2

    body = flatten_tile_nd_to_2d()(P)["k"].body.stmts
    names = [s.value.op.name for s in body if isinstance(s, ir.AssignStmt)]
    assert names == ["tile.load", "tile.create", "tile.create",
                     "tile.slice", "tile.transpose", "tile.assemble",
                     "tile.slice", "tile.transpose", "tile.assemble", "tile.store"]
    transposes = [s.value for s in body if isinstance(s, ir.AssignStmt) and s.value.op.name == "tile.transpose"]
    assert all(len(c.args) == 4 and c.type.rank == 2 for c in transposes)


def test_rank4_transpose_of_axes_1_3_is_a_loop_of_2d_transposes():
    """[2, 16, 1, 32] with axes 1 and 3 swapped: the size-1 axis does not count, so it is the last two
    non-unit axes per page of the [32, 32] flattened tile: two [16, 32] → [32, 16] transposes."""
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[2, 16, 1, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[2, 32, 1, 16], pl.FP32]]) -> pl.Tensor[[2, 32, 1, 16], pl.FP32]:
            t: pl.Tile[[2, 16, 1, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0, 0, 0], [2, 16, 1, 32],
                                                                            [2, 16, 1, 32])
            y: pl.Tile[[2, 32, 1, 16], pl.FP32, pl.Mem.Vec] = pl.tile.transpose(t, 1, 3)
            out2: pl.Tensor[[2, 32, 1, 16], pl.FP32] = pl.tile.store(y, [0, 0, 0, 0], out)
            return out2

    body = flatten_tile_nd_to_2d()(P)["k"].body.stmts
    calls = [s.value for s in body if isinstance(s, ir.AssignStmt)]
    transposes = [c for c in calls if c.op.name == "tile.transpose"]
    assert len(transposes) == 2
    assert all([d.value for d in c.type.shape] == [32, 16] and len(c.args) == 4 for c in transposes)
    assert [d.value for d in calls[-1].args[0].type.shape] == [64, 16]      # the store reads [2*32*1, 16]


def test_transpose_that_only_moves_a_unit_axis_is_the_same_flattened_tile():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[1, 16, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[16, 1, 32], pl.FP32]]) -> pl.Tensor[[16, 1, 32], pl.FP32]:
            t: pl.Tile[[1, 16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0, 0], [1, 16, 32], [1, 16, 32])
            y: pl.Tile[[16, 1, 32], pl.FP32, pl.Mem.Vec] = pl.tile.transpose(t, 0, 1)
            out2: pl.Tensor[[16, 1, 32], pl.FP32] = pl.tile.store(y, [0, 0, 0], out)
            return out2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[1, 16, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[16, 1, 32], pl.FP32]]) -> pl.Tensor[[16, 1, 32], pl.FP32]:
            t: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0, 0], [1, 16, 32], [1, 16, 32],
                                                                     [16, 32])
            out2: pl.Tensor[[16, 1, 32], pl.FP32] = pl.tile.store(t, [0, 0, 0], out, [16, 1, 32])
            return out2

    ir.assert_structural_equal(flatten_tile_nd_to_2d()(Before), Expected)
