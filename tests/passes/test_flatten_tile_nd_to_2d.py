"""FlattenTileNdTo2D: rank > 2 kernel tiles become [prod(leading), last]; transpose gets its scratch."""

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


def test_rank3_tiles_flatten_through_compute_and_loops():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[2, 16, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[2, 16, 32], pl.FP32]]) -> pl.Tensor[[2, 16, 32], pl.FP32]:
            t: pl.Tile[[2, 16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0, 0], [2, 16, 32], [2, 16, 32])
            z: pl.Tile[[2, 16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.full([2, 16, 32], dtype=pl.FP32, value=0.0)
            for i, (acc,) in pl.range(3, init_values=(z,)):
                acc2: pl.Tile[[2, 16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.add(acc, t)
                acc_rv = pl.yield_(acc2)
            out2: pl.Tensor[[2, 16, 32], pl.FP32] = pl.tile.store(acc_rv, [0, 0, 0], out)
            return out2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[2, 16, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[2, 16, 32], pl.FP32]]) -> pl.Tensor[[2, 16, 32], pl.FP32]:
            t_nd: pl.Tile[[2, 16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0, 0], [2, 16, 32], [2, 16, 32])
            t: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.reshape(t_nd, [32, 32])
            z: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.full([32, 32], dtype=pl.FP32, value=0.0)
            for i, (acc,) in pl.range(3, init_values=(z,)):
                acc2: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.add(acc, t)
                acc_rv = pl.yield_(acc2)
            acc_nd: pl.Tile[[2, 16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.reshape(acc_rv, [2, 16, 32])
            out2: pl.Tensor[[2, 16, 32], pl.FP32] = pl.tile.store(acc_nd, [0, 0, 0], out)
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
    assert names == ["tile.load", "tile.reshape", "tile.create", "tile.create",
                     "tile.slice", "tile.transpose", "tile.assemble",
                     "tile.slice", "tile.transpose", "tile.assemble", "tile.reshape", "tile.store"]
    transposes = [s.value for s in body if isinstance(s, ir.AssignStmt) and s.value.op.name == "tile.transpose"]
    assert all(len(c.args) == 4 and c.type.rank == 2 for c in transposes)
