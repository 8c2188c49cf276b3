"""Batched matmul on the simulators (a2a3sim, a5sim) against numpy: FlattenTileNdTo2D splits
`tile.batch_matmul(_acc)` into one 2-D matmul per batch index, each fed by Mat → Left / Right
extracts of that batch's rows (the whole-batch moves disappear), and stores each batch's Acc tile
through the N-D output window. `pl.batch_matmul` is the unified name of the tile op."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import UnsupportedError
from pypto.ir.expr import Call
from pypto.ir.visitor import collect
from pypto.passes.convert_to_ssa import convert_to_ssa
from pypto.passes.flatten_tile_nd_to_2d import flatten_tile_nd_to_2d
from pypto.runtime import RunConfig, run

PLATFORMS = ["a2a3sim", "a5sim"]


@pl.program
class BatchMatmul:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[3, 16, 32], pl.FP32], b: pl.Tensor[[3, 32, 16], pl.FP32],
          out: pl.Out[pl.Tensor[[3, 16, 16], pl.FP32]]) -> pl.Tensor[[3, 16, 16], pl.FP32]:
        ta = pl.load(a, [0, 0, 0], [3, 16, 32], target_memory=pl.Mem.Mat)
        tb = pl.load(b, [0, 0, 0], [3, 32, 16], target_memory=pl.Mem.Mat)
        tl = pl.move(ta, target_memory=pl.Mem.Left)
        tr = pl.move(tb, target_memory=pl.Mem.Right)
        c = pl.batch_matmul(tl, tr)
        r = pl.store(c, [0, 0, 0], out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[3, 16, 32], pl.FP32], b: pl.Tensor[[3, 32, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[3, 16, 16], pl.FP32]]) -> pl.Tensor[[3, 16, 16], pl.FP32]:
        r = self.k(a, b, out)
        return r


@pl.program
class BatchMatmulAcc:
    """out = a1 @ b1 + a2 @ b2 per [2, 2] batch index (rank 4), accumulated in Acc."""
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a1: pl.Tensor[[2, 2, 16, 32], pl.FP32], b1: pl.Tensor[[2, 2, 32, 16], pl.FP32],
          a2: pl.Tensor[[2, 2, 16, 32], pl.FP32], b2: pl.Tensor[[2, 2, 32, 16], pl.FP32],
          out: pl.Out[pl.Tensor[[2, 2, 16, 16], pl.FP32]]) -> pl.Tensor[[2, 2, 16, 16], pl.FP32]:
        l1 = pl.move(pl.load(a1, [0, 0, 0, 0], [2, 2, 16, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        r1 = pl.move(pl.load(b1, [0, 0, 0, 0], [2, 2, 32, 16], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        l2 = pl.move(pl.load(a2, [0, 0, 0, 0], [2, 2, 16, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        r2 = pl.move(pl.load(b2, [0, 0, 0, 0], [2, 2, 32, 16], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        c = pl.tile.batch_matmul(l1, r1)
        c2 = pl.tile.batch_matmul_acc(c, l2, r2)
        r = pl.store(c2, [0, 0, 0, 0], out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a1: pl.Tensor[[2, 2, 16, 32], pl.FP32], b1: pl.Tensor[[2, 2, 32, 16], pl.FP32],
             a2: pl.Tensor[[2, 2, 16, 32], pl.FP32], b2: pl.Tensor[[2, 2, 32, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[2, 2, 16, 16], pl.FP32]]) -> pl.Tensor[[2, 2, 16, 16], pl.FP32]:
        r = self.k(a1, b1, a2, b2, out)
        return r


@pl.program
class BatchKLoop:
    """out = a @ b per batch, K = 64 in four K steps of 16: a loop carrying the batched accumulator."""
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[2, 16, 64], pl.FP32], b: pl.Tensor[[2, 64, 16], pl.FP32],
          out: pl.Out[pl.Tensor[[2, 16, 16], pl.FP32]]) -> pl.Tensor[[2, 16, 16], pl.FP32]:
        l0 = pl.move(pl.load(a, [0, 0, 0], [2, 16, 16], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        r0 = pl.move(pl.load(b, [0, 0, 0], [2, 16, 16], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        c = pl.batch_matmul(l0, r0)
        for k in pl.range(1, 4):
            lk = pl.move(pl.load(a, [0, 0, k * 16], [2, 16, 16], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
            rk = pl.move(pl.load(b, [0, k * 16, 0], [2, 16, 16], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
            c = pl.tile.batch_matmul_acc(c, lk, rk)
        r = pl.store(c, [0, 0, 0], out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[2, 16, 64], pl.FP32], b: pl.Tensor[[2, 64, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[2, 16, 16], pl.FP32]]) -> pl.Tensor[[2, 16, 16], pl.FP32]:
        r = self.k(a, b, out)
        return r


@pl.program
class BatchResultToVector:
    """The batched product moves to Vec (per batch, assembled into one [2 * 16, 16] tile) for a vector op."""
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[2, 16, 32], pl.FP32], b: pl.Tensor[[2, 32, 16], pl.FP32],
          out: pl.Out[pl.Tensor[[2, 16, 16], pl.FP32]]) -> pl.Tensor[[2, 16, 16], pl.FP32]:
        tl = pl.move(pl.load(a, [0, 0, 0], [2, 16, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        tr = pl.move(pl.load(b, [0, 0, 0], [2, 32, 16], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        c = pl.batch_matmul(tl, tr)
        v = pl.move(c, target_memory=pl.Mem.Vec)
        r = pl.store(pl.tile.adds(v, 1.0), [0, 0, 0], out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[2, 16, 32], pl.FP32], b: pl.Tensor[[2, 32, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[2, 16, 16], pl.FP32]]) -> pl.Tensor[[2, 16, 16], pl.FP32]:
        r = self.k(a, b, out)
        return r


@pl.program
class BatchResultReturned:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[2, 16, 32], pl.FP32], b: pl.Tensor[[2, 32, 16], pl.FP32]) -> pl.Tile[[2, 16, 16], pl.FP32]:
        tl = pl.move(pl.load(a, [0, 0, 0], [2, 16, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        tr = pl.move(pl.load(b, [0, 0, 0], [2, 32, 16], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        c = pl.batch_matmul(tl, tr)
        return c


def _rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_split_replaces_the_whole_batch_moves_with_per_batch_extracts():
    names = [c.op.name for c in collect(flatten_tile_nd_to_2d()(convert_to_ssa()(BatchMatmul))["k"].body,
                                        lambda n: isinstance(n, Call))]
    assert names.count("tile.matmul") == 3 and names.count("tile.extract") == 6 and names.count("tile.store") == 3
    assert "tile.move" not in names and "tile.batch_matmul" not in names


@pytest.mark.parametrize("platform", PLATFORMS)
def test_rank3_batch_matmul_matches_numpy(platform):
    a, b = _rand((3, 16, 32), 1), _rand((3, 32, 16), 2)
    out = np.zeros((3, 16, 16), np.float32)
    run(BatchMatmul, a, b, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_rank4_batch_matmul_acc_matches_numpy(platform):
    a1, b1, a2, b2 = (_rand(s, i) for i, s in enumerate([(2, 2, 16, 32), (2, 2, 32, 16)] * 2))
    out = np.zeros((2, 2, 16, 16), np.float32)
    run(BatchMatmulAcc, a1, b1, a2, b2, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out, a1 @ b1 + a2 @ b2, rtol=1e-4, atol=1e-4)


def test_the_k_loop_carries_one_acc_tile_per_batch():
    from pypto.ir.stmt import ForStmt
    from pypto.passes.flatten_call_expr import flatten_call_expr
    flat = flatten_tile_nd_to_2d()(flatten_call_expr()(convert_to_ssa()(BatchKLoop)))
    loop, = collect(flat["k"].body, lambda n: isinstance(n, ForStmt))
    assert [[d.value for d in ia.type.shape] for ia in loop.iter_args] == [[16, 16], [16, 16]]
    assert len(loop.return_vars) == 2


@pytest.mark.parametrize("platform", PLATFORMS)
def test_k_loop_carrying_a_batched_accumulator_matches_numpy(platform):
    a, b = _rand((2, 16, 64), 7), _rand((2, 64, 16), 8)
    out = np.zeros((2, 16, 16), np.float32)
    run(BatchKLoop, a, b, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_batched_result_moved_to_vec_feeds_a_vector_op(platform):
    a, b = _rand((2, 16, 32), 9), _rand((2, 32, 16), 10)
    out = np.zeros((2, 16, 16), np.float32)
    run(BatchResultToVector, a, b, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out, a @ b + 1, rtol=1e-4, atol=1e-4)


def test_batched_result_used_otherwise_is_reported_by_name():
    with pytest.raises(UnsupportedError, match="tile.batch_matmul result, is used by something other than tile.store"):
        flatten_tile_nd_to_2d()(BatchResultReturned)
