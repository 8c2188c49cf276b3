"""Explicit pl.split_aiv regions (manual mode): pl.aiv_shard / pl.aic_gather boundaries, lane code
written by the author, placement errors."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import UnsupportedError
from pypto.runtime import RunConfig
from tests.helpers import f16, matmul_ref

SIMS = pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
rng = np.random.default_rng(17)


@pl.jit
def shard_exp(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        z = pl.matmul(a, b, out_dtype=pl.FP32)
        for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            h = pl.aiv_shard(z)
            c = pl.assemble(c, pl.exp(h), [aiv_id * 8, 0])
    return c


@pl.jit
def gather_matmul(a: pl.Tensor, w: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            x = pl.slice(a, [8, 32], [aiv_id * 8, 0])
            g = pl.aic_gather(pl.mul(x, x))
        c = pl.assemble(c, pl.matmul(g, w, out_dtype=pl.FP32), [0, 0])
    return c


@SIMS
def test_shard_gives_each_lane_its_rows(platform):
    a, b = f16(rng, 16, 32), f16(rng, 32, 16)
    c = np.full((16, 16), np.nan, np.float32)
    shard_exp(a, b, c, config=RunConfig(platform=platform))
    np.testing.assert_allclose(c, np.exp(matmul_ref(a, b)), rtol=1e-5, atol=1e-6)
    text = shard_exp.lower(a, b, c, config=RunConfig(platform=platform)).as_python()
    assert "pl.tile.tpush_to_aiv(z, split=1" in text and "pl.tile.tpop_from_aic(split=1" in text


@SIMS
def test_gather_rejoins_the_lanes_for_the_cube(platform):
    a, w = f16(rng, 16, 32), f16(rng, 32, 16)
    c = np.full((16, 16), np.nan, np.float32)
    gather_matmul(a, w, c, config=RunConfig(platform=platform))
    sq = (a * a).astype(np.float16)
    np.testing.assert_allclose(c, matmul_ref(sq, w), rtol=1e-3, atol=1e-3)


@pl.jit
def vector_outside(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        z = pl.matmul(a, b, out_dtype=pl.FP32)
        for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            h = pl.aiv_shard(z)
            c = pl.assemble(c, h, [aiv_id * 8, 0])
        c = pl.assemble(c, pl.exp(pl.slice(c, [16, 16], [0, 0])), [0, 0])
    return c


def test_a_vector_op_outside_every_region_is_rejected():
    with pytest.raises(UnsupportedError, match="vector op '.*' sits outside every pl.split_aiv region"):
        vector_outside.lower(f16(rng, 16, 32), f16(rng, 32, 16), np.zeros((16, 16), np.float32),
                             config=RunConfig(platform="a5sim"))
