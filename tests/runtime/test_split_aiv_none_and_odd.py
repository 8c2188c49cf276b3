"""pl.split_aiv regions beyond even halves: task-parallel lanes (mode NONE: both lanes run the whole
region on full tiles, each picks its work by its lane index) and odd extents (lane 0 gets the
larger half, lane 1 one less: split codes 3 / 4), numpy-equal on both simulators."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import UnsupportedError
from pypto.runtime import RunConfig
from tests.helpers import f16, matmul_ref

SIMS = pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
rng = np.random.default_rng(23)


@pl.jit
def task_parallel(a: pl.Tensor, b: pl.Tensor, d: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        z = pl.matmul(a, b, out_dtype=pl.FP32)
        for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.NONE):
            h = pl.aiv_shard(z)                                   # the whole tile on each lane
            x = pl.slice(d, [16, 16], [aiv_id * 16, 0])            # each lane its own addend
            c = pl.assemble(c, pl.add(pl.exp(h), x), [aiv_id * 16, 0])
    return c


@SIMS
def test_none_lanes_both_run_the_whole_region(platform):
    a, b, d = f16(rng, 16, 32), f16(rng, 32, 16), rng.uniform(-1, 1, (32, 16)).astype(np.float32)
    c = np.full((32, 16), np.nan, np.float32)
    task_parallel(a, b, d, c, config=RunConfig(platform=platform))
    e = np.exp(matmul_ref(a, b))
    np.testing.assert_allclose(c, np.concatenate([e, e]) + d, rtol=1e-5, atol=1e-6)


def test_none_lanes_are_dual_dispatched_without_the_replay():
    args = (f16(rng, 16, 32), f16(rng, 32, 16), np.zeros((32, 16), np.float32), np.zeros((32, 16), np.float32))
    lowered = task_parallel.lower(*args, config=RunConfig(platform="a2a3sim"))
    aiv = next(f for f in lowered.functions.values() if f.name.endswith("_aiv"))
    assert aiv.attrs["dual_aiv_dispatch"] is True and aiv.attrs["split_aiv"] is True
    text = lowered.as_python()
    assert "pl.tile.tpop_from_aic(split=0" in text and "_lane0" not in text     # lane 1 stores too


@pl.jit
def none_gather(a: pl.Tensor, w: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.NONE):
            x = pl.slice(a, [16, 32], [0, 0])
            g = pl.aic_gather(pl.mul(x, x))
        c = pl.assemble(c, pl.matmul(g, w, out_dtype=pl.FP32), [0, 0])
    return c


def test_a_gather_in_a_none_region_is_rejected():
    with pytest.raises(UnsupportedError, match=r"pl\.aic_gather inside a pl\.split_aiv\(2, mode=pl\.SplitMode\.NONE\)"):
        none_gather.lower(f16(rng, 16, 32), f16(rng, 32, 16), np.zeros((16, 16), np.float32),
                          config=RunConfig(platform="a5sim"))


@pl.jit
def shard_rows(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        z = pl.matmul(a, b, out_dtype=pl.FP32)
        for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            h = pl.aiv_shard(z)
            c = pl.assemble(c, pl.exp(h), [aiv_id * 8, 0])
    return c


@pl.jit
def shard_cols(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        z = pl.matmul(a, b, out_dtype=pl.FP32)
        for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT):
            h = pl.aiv_shard(z)
            c = pl.assemble(c, pl.exp(h), [0, aiv_id * 8])
    return c


@SIMS
@pytest.mark.parametrize("kernel, m, n, code", [(shard_rows, 15, 16, 3), (shard_cols, 16, 15, 4)],
                         ids=["up-down-15-rows", "left-right-15-cols"])
def test_odd_extent_gives_lane0_the_ceil_and_lane1_the_floor(platform, kernel, m, n, code):
    a, b = f16(rng, m, 32), f16(rng, 32, n)
    c = np.full((m, n), np.nan, np.float32)
    kernel(a, b, c, config=RunConfig(platform=platform))
    np.testing.assert_allclose(c, np.exp(matmul_ref(a, b)), rtol=1e-5, atol=1e-6)
    text = kernel.lower(a, b, c, config=RunConfig(platform=platform)).as_python()
    lane = "[8, 16]" if m == 15 else "[16, 8]"                 # the lane tile: ceil(15 / 2) = 8
    assert f"pl.tile.tpush_to_aiv(z, split={code}" in text
    assert f"h: pl.Tile[{lane}, pl.FP32" in text and f"pl.tile.tpop_from_aic(split={code}" in text
    assert f"pl.system.tfree_to_aic(h, split={code}" in text
