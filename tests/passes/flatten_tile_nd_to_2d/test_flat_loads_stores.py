"""FlattenTileNdTo2D at the GM boundary: a rank > 2 window is loaded straight into its 2-D tile
[prod(leading), last] (tile.load's `tile_shape` operand) and stored back through the N-D window
(tile.store's `shapes` operand) — no tile.reshape remains. Valid regions flatten when they are a
prefix of rows (partial last dim; partial leading dim only where it still means "the first rows")."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UnsupportedError
from pypto.ir.expr import Call
from pypto.ir.visitor import collect
from pypto.passes.flatten_tile_nd_to_2d import flatten_tile_nd_to_2d


def _op_names(prog, fn="k"):
    return [c.op.name for c in collect(prog[fn].body, lambda n: isinstance(n, Call))]


def test_rank3_load_and_store_become_2d_without_reshapes():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[4, 16, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[4, 16, 32], pl.FP32]]) -> pl.Tensor[[4, 16, 32], pl.FP32]:
            t: pl.Tile[[2, 8, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [1, 4, 0], [2, 8, 32], [2, 8, 32])
            z: pl.Tile[[2, 8, 32], pl.FP32, pl.Mem.Vec] = pl.tile.full([2, 8, 32], dtype=pl.FP32, value=0.0)
            for i, (acc,) in pl.range(3, init_values=(z,)):
                acc2: pl.Tile[[2, 8, 32], pl.FP32, pl.Mem.Vec] = pl.tile.add(acc, t)
                acc_rv = pl.yield_(acc2)
            out2: pl.Tensor[[4, 16, 32], pl.FP32] = pl.tile.store(acc_rv, [2, 0, 0], out)
            return out2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[4, 16, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[4, 16, 32], pl.FP32]]) -> pl.Tensor[[4, 16, 32], pl.FP32]:
            t: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [1, 4, 0], [2, 8, 32], [2, 8, 32], [16, 32])
            z: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.full([16, 32], dtype=pl.FP32, value=0.0)
            for i, (acc,) in pl.range(3, init_values=(z,)):
                acc2: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.add(acc, t)
                acc_rv = pl.yield_(acc2)
            out2: pl.Tensor[[4, 16, 32], pl.FP32] = pl.tile.store(acc_rv, [2, 0, 0], out, [2, 8, 32])
            return out2

    after = flatten_tile_nd_to_2d()(Before)
    ir.assert_structural_equal(after, Expected)
    assert "tile.reshape" not in _op_names(after)


def test_2d_tile_stored_into_a_rank3_tensor_names_its_window():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[4, 16, 32], pl.FP32]]) -> pl.Tensor[[4, 16, 32], pl.FP32]:
            t: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 32], [16, 32])
            out2: pl.Tensor[[4, 16, 32], pl.FP32] = pl.tile.store(t, [3, 0, 0], out)
            return out2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[4, 16, 32], pl.FP32]]) -> pl.Tensor[[4, 16, 32], pl.FP32]:
            t: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 32], [16, 32])
            out2: pl.Tensor[[4, 16, 32], pl.FP32] = pl.tile.store(t, [3, 0, 0], out, [1, 16, 32])
            return out2

    ir.assert_structural_equal(flatten_tile_nd_to_2d()(Before), Expected)


def test_partial_last_dim_keeps_its_valid_rectangle():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[2, 16, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[2, 16, 32], pl.FP32]]) -> pl.Tensor[[2, 16, 32], pl.FP32]:
            t: pl.Tile[[2, 16, 32], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[2, 16, 20])] = \
                pl.tile.load(x, [0, 0, 0], [2, 16, 32], [2, 16, 20])
            y: pl.Tile[[2, 16, 32], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[2, 16, 20])] = pl.tile.exp(t)
            out2: pl.Tensor[[2, 16, 32], pl.FP32] = pl.tile.store(y, [0, 0, 0], out)
            return out2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[2, 16, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[2, 16, 32], pl.FP32]]) -> pl.Tensor[[2, 16, 32], pl.FP32]:
            t: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[32, 20])] = \
                pl.tile.load(x, [0, 0, 0], [2, 16, 32], [2, 16, 20], [32, 32])
            y: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[32, 20])] = pl.tile.exp(t)
            out2: pl.Tensor[[2, 16, 32], pl.FP32] = pl.tile.store(y, [0, 0, 0], out, [2, 16, 20])
            return out2

    ir.assert_structural_equal(flatten_tile_nd_to_2d()(Before), Expected)


def test_partial_leading_dim_that_is_a_row_prefix_flattens_to_a_row_count():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[2, 16, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[2, 16, 32], pl.FP32]]) -> pl.Tensor[[2, 16, 32], pl.FP32]:
            t: pl.Tile[[2, 16, 32], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[1, 9, 32])] = \
                pl.tile.load(x, [0, 0, 0], [2, 16, 32], [1, 9, 32])
            out2: pl.Tensor[[2, 16, 32], pl.FP32] = pl.tile.store(t, [0, 0, 0], out)
            return out2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[2, 16, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[2, 16, 32], pl.FP32]]) -> pl.Tensor[[2, 16, 32], pl.FP32]:
            t: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[9, 32])] = \
                pl.tile.load(x, [0, 0, 0], [2, 16, 32], [1, 9, 32], [32, 32])
            out2: pl.Tensor[[2, 16, 32], pl.FP32] = pl.tile.store(t, [0, 0, 0], out, [1, 9, 32])
            return out2

    ir.assert_structural_equal(flatten_tile_nd_to_2d()(Before), Expected)


def test_dynamic_batch_count_becomes_a_dynamic_row_count():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[4, 8, 32], pl.FP32], n: pl.Scalar[pl.INDEX],
              out: pl.Out[pl.Tensor[[4, 8, 32], pl.FP32]]) -> pl.Tensor[[4, 8, 32], pl.FP32]:
            t: pl.Tile[[4, 8, 32], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[n, 8, 32])] = \
                pl.tile.load(x, [0, 0, 0], [4, 8, 32], [n, 8, 32])
            out2: pl.Tensor[[4, 8, 32], pl.FP32] = pl.tile.store(t, [0, 0, 0], out)
            return out2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[4, 8, 32], pl.FP32], n: pl.Scalar[pl.INDEX],
              out: pl.Out[pl.Tensor[[4, 8, 32], pl.FP32]]) -> pl.Tensor[[4, 8, 32], pl.FP32]:
            t: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[n * 8, 32])] = \
                pl.tile.load(x, [0, 0, 0], [4, 8, 32], [n, 8, 32], [32, 32])
            out2: pl.Tensor[[4, 8, 32], pl.FP32] = pl.tile.store(t, [0, 0, 0], out, [n, 8, 32])
            return out2

    ir.assert_structural_equal(flatten_tile_nd_to_2d()(Before), Expected)


def test_partial_leading_dim_that_is_not_a_row_prefix_is_rejected():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[2, 16, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[2, 16, 32], pl.FP32]]) -> pl.Tensor[[2, 16, 32], pl.FP32]:
            t: pl.Tile[[2, 16, 32], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[2, 9, 32])] = \
                pl.tile.load(x, [0, 0, 0], [2, 16, 32], [2, 9, 32])
            out2: pl.Tensor[[2, 16, 32], pl.FP32] = pl.tile.store(t, [0, 0, 0], out)
            return out2

    with pytest.raises(UnsupportedError, match=r"valid region \[2, 9, 32\].*not the first rows"):
        flatten_tile_nd_to_2d()(P)


def test_the_flattened_load_checks_its_tile_shape():
    from pypto.errors import TypeCheckError
    from pypto.ir import TensorType, Var, create_op_call
    from pypto.ir.dtypes import FP32
    x = Var("x", TensorType([2, 16, 32], FP32))
    good = create_op_call("tile.load", [x, [0, 0, 0], [2, 16, 32], [2, 16, 32], [32, 32]])
    assert [d.value for d in good.type.shape] == [32, 32]
    with pytest.raises(TypeCheckError, match="row-major flattening"):
        create_op_call("tile.load", [x, [0, 0, 0], [2, 16, 32], [2, 16, 32], [16, 64]])


def test_a_fifth_positional_load_argument_is_still_the_references_target_memory():
    """tile_shape is keyword-only in the DSL: pl.load(t, offs, shapes, valid, pl.Mem.Mat) keeps its meaning."""
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 32], pl.FP32]) -> pl.Tensor[[16, 32], pl.FP32]:
            t: pl.Tile[[16, 32], pl.FP32, pl.Mem.Mat] = pl.load(x, [0, 0], [16, 32], [16, 32], pl.Mem.Mat)
            return x

    load = collect(P["k"].body, lambda n: isinstance(n, Call))[0]
    assert len(load.args) == 4 and load.kwargs["target_memory"] is pl.Mem.Mat


def test_a_store_statement_without_a_result_gets_its_window_too():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[2, 16, 32], pl.FP32], out: pl.InOut[pl.Tensor[[2, 16, 32], pl.FP32]]):
            t: pl.Tile[[2, 16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0, 0], [2, 16, 32], [2, 16, 32])
            pl.tile.store(t, [0, 0, 0], out)

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[2, 16, 32], pl.FP32], out: pl.InOut[pl.Tensor[[2, 16, 32], pl.FP32]]):
            t: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0, 0], [2, 16, 32], [2, 16, 32], [32, 32])
            pl.tile.store(t, [0, 0, 0], out, [2, 16, 32])

    ir.assert_structural_equal(flatten_tile_nd_to_2d()(Before), Expected)
