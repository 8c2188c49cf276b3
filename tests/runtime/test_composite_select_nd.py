"""N-D (rank 3) select takes the TSEL path (seed 001, "ND operands take the TSEL path").

TSELS is 2-D only and LowerCompositeOps runs before FlattenTileNdTo2D, so a rank-3 select with a
scalar branch lowers to tile.full + tile.sel; FlattenTileNdTo2D then folds data tiles [B, M, N] to
[B*M, N] and their packed masks [B, M, P] to [B*M, P]. Run on both simulators against np.where,
at tile level (pl.tile.select) and tensor level (pl.select inside pl.at)."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.ir.expr import Call, as_int
from pypto.ir.visitor import collect
from pypto.passes.context import PassContext
from pypto.passes.flatten_tile_nd_to_2d import flatten_tile_nd_to_2d
from pypto.passes.lower_composite_ops import lower_composite_ops
from pypto.runtime import RunConfig

B, M, N = 2, 8, 40          # N = 40: 5 mask bytes per row, padded to 32
PLATFORMS = ["a2a3sim", "a5sim"]


@pl.program
class TileNd:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[B, M, N], pl.FP32],
               out: pl.Out[pl.Tensor[[B, M, N], pl.FP32]]) -> pl.Tensor[[B, M, N], pl.FP32]:
        ta = pl.load(a, [0, 0, 0], [B, M, N])
        m = pl.tile.cmps(ta, 0.25, cmp_type=pl.CmpType.LT)
        y = pl.tile.select(m, ta, -7.5)
        res = pl.store(y, [0, 0, 0], out)
        return res


@pl.jit
def tile_two(a: pl.Tensor[[B, M, N], pl.FP32], b: pl.Tensor[[B, M, N], pl.FP32],
             out: pl.Out[pl.Tensor[[B, M, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0, 0], [B, M, N])
        tb = pl.load(b, [0, 0, 0], [B, M, N])
        out = pl.store(pl.tile.select(pl.tile.cmp(ta, tb, cmp_type=pl.CmpType.GT), ta, tb), [0, 0, 0], out)
    return out


@pl.jit
def tile_scalar_false(a: pl.Tensor[[B, M, N], pl.FP32], out: pl.Out[pl.Tensor[[B, M, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0, 0], [B, M, N])
        out = pl.store(pl.tile.select(pl.tile.cmps(ta, 0.25, cmp_type=pl.CmpType.LT), ta, -7.5), [0, 0, 0], out)
    return out


@pl.jit
def tile_scalar_true(a: pl.Tensor[[B, M, N], pl.FP32], out: pl.Out[pl.Tensor[[B, M, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0, 0], [B, M, N])
        out = pl.store(pl.tile.select(pl.tile.cmps(ta, 0.0, cmp_type=pl.CmpType.GE), 3.0, ta), [0, 0, 0], out)
    return out


@pl.jit
def tensor_two(a: pl.Tensor[[B, M, N], pl.FP32], b: pl.Tensor[[B, M, N], pl.FP32],
               out: pl.Out[pl.Tensor[[B, M, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        r = pl.select(pl.cmp(a, b, cmp_type=pl.CmpType.GT), a, b)
        out = pl.assemble(out, r, [0, 0, 0])
    return out


@pl.jit
def tensor_scalar(a: pl.Tensor[[B, M, N], pl.FP32], out: pl.Out[pl.Tensor[[B, M, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        r = pl.select(pl.cmps(a, 0.25, cmp_type=pl.CmpType.LT), a, -7.5)
        out = pl.assemble(out, r, [0, 0, 0])
    return out


def data(seed):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-1, 1, (B, M, N)).astype(np.float32), rng.uniform(-1, 1, (B, M, N)).astype(np.float32))


def calls(program, name):
    return collect(program, lambda n: isinstance(n, Call) and not n.is_function_call() and n.op.name == name)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_rank3_scalar_branch_lowers_to_full_and_sel_then_flattens(platform):
    with PassContext(platform=platform):
        lowered = lower_composite_ops()(TileNd)
        assert not calls(lowered, "tile.select") and not calls(lowered, "tile.sels")
        [full] = calls(lowered, "tile.full")
        [sel] = calls(lowered, "tile.sel")
        assert [as_int(d) for d in full.type.shape] == [B, M, N] and sel.type.rank == 3
        assert [as_int(d) for d in sel.args[0].type.shape] == [B, M, 32]     # the N-D packed mask
        flat = flatten_tile_nd_to_2d()(lowered)
    [sel] = calls(flat, "tile.sel")
    assert [as_int(d) for d in sel.type.shape] == [B * M, N]
    assert [as_int(d) for d in sel.args[0].type.shape] == [B * M, 32]
    assert [as_int(d) for d in sel.args[0].type.valid_shape] == [B * M, 5]
    [cmps] = calls(flat, "tile.cmps")
    assert [as_int(d) for d in cmps.type.shape] == [B * M, 32]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_tile_level_two_tiles(platform):
    a, b = data(1)
    out = np.zeros_like(a)
    tile_two(a, b, out, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(out, np.where(a > b, a, b))


@pytest.mark.parametrize("platform", PLATFORMS)
def test_tile_level_scalar_false(platform):
    a, _ = data(2)
    out = np.zeros_like(a)
    tile_scalar_false(a, out, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(out, np.where(a < 0.25, a, np.float32(-7.5)))


@pytest.mark.parametrize("platform", PLATFORMS)
def test_tile_level_scalar_true(platform):
    a, _ = data(3)
    out = np.zeros_like(a)
    tile_scalar_true(a, out, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(out, np.where(a >= 0, np.float32(3.0), a))


@pytest.mark.parametrize("platform", PLATFORMS)
def test_tensor_level_two_tensors(platform):
    a, b = data(4)
    out = np.zeros_like(a)
    tensor_two(a, b, out, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(out, np.where(a > b, a, b))


@pytest.mark.parametrize("platform", PLATFORMS)
def test_tensor_level_scalar(platform):
    a, _ = data(5)
    out = np.zeros_like(a)
    tensor_scalar(a, out, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(out, np.where(a < 0.25, a, np.float32(-7.5)))


@pl.jit
def _select_rank1_tiles(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0], [64])
        tb = pl.load(b, [0], [64])
        mask = pl.cmp(ta, tb, cmp_type=pl.CmpType.GT)
        pl.store(pl.tile.select(mask, ta, tb), [0], out)
    return out


@pl.jit
def _select_rank1_scalar(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0], [64])
        mask = pl.cmps(ta, 0.0, cmp_type=pl.CmpType.GT)
        pl.store(pl.tile.select(mask, ta, 0.0), [0], out)
    return out


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_rank1_select_is_not_rejected_for_its_rank(platform):
    """Seed 001: no select input is rejected for its rank — a 1-D select runs too."""
    rng = np.random.default_rng(11)
    a = rng.standard_normal(64).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    out = np.zeros_like(a)
    _select_rank1_tiles(a, b, out, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(out, np.where(a > b, a, b))
    out = np.zeros_like(a)
    _select_rank1_scalar(a, out, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(out, np.where(a > 0, a, np.float32(0)))
