"""Row reductions and row broadcasts of rank > 2 tiles and tensors (the reference allows them:
the leading axes are batch). FlattenTileNdTo2D makes the leading axes rows, so on the simulators
a [B, M, N] softmax-style normalization matches numpy; a scratch tile smaller than x is rejected
(the hardware uses it whole, so a small one would give silently wrong sums)."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import TypeCheckError
from pypto.runtime import RunConfig

PLATFORMS = ["a2a3sim", "a5sim"]


@pl.jit
def tile_normalize(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0, 0], [2, 8, 64])
        tmp = pl.create_tile([2, 8, 64], dtype=pl.FP32)
        s = pl.row_sum(t, tmp)
        pl.store(pl.row_expand_div(t, s), [0, 0, 0], out)
    return out


@pl.jit
def tensor_normalize(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        m = pl.row_max(x)
        e = pl.exp(pl.row_expand_sub(x, m))
        out = pl.row_expand_div(e, pl.row_sum(e))
    return out


@pytest.mark.parametrize("platform", PLATFORMS)
def test_tile_row_sum_of_a_rank3_tile_matches_numpy(platform):
    x = np.random.default_rng(1).random((2, 8, 64), dtype=np.float32) + 0.5
    out = np.zeros_like(x)
    tile_normalize(x, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out, x / x.sum(-1, keepdims=True), rtol=1e-6)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_tensor_level_softmax_over_the_last_axis_of_a_rank3_tensor(platform):
    x = np.random.default_rng(2).standard_normal((4, 8, 32), dtype=np.float32)
    out = np.zeros_like(x)
    tensor_normalize(x, out, config=RunConfig(platform=platform))
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(-1, keepdims=True), rtol=1e-5)


def test_a_scratch_tile_smaller_than_x_is_rejected():
    @pl.jit
    def small_tmp(x: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0], [8, 64])
            tmp = pl.create_tile([8, 32], dtype=pl.FP32)
            pl.store(pl.row_sum(t, tmp), [0, 0], out)
        return out

    x = np.ones((8, 64), np.float32)
    with pytest.raises(TypeCheckError, match="tmp .* is smaller than x"):
        small_tmp(x, np.zeros((8, 1), np.float32))


def test_col_reductions_stay_2d():
    @pl.jit
    def col3d(x: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0, 0], [2, 8, 64])
            pl.store(pl.col_max(t), [0, 0, 0], out)
        return out

    with pytest.raises(TypeCheckError, match="must be 2-D"):
        col3d(np.ones((2, 8, 64), np.float32), np.zeros((2, 1, 64), np.float32))
