"""pl.split(UP_DOWN / LEFT_RIGHT) mixed kernels: the AIV half runs on both lanes, each on its part
(even and odd extents), on a2a3sim and a5sim."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import UnsupportedError
from pypto.runtime import RunConfig
from tests.helpers import f16, matmul_ref

SIMS = pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
rng = np.random.default_rng(11)


@pl.jit
def up_down(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
        z = pl.matmul(a, b, out_dtype=pl.FP32)
        c = pl.assemble(c, pl.exp(pl.add(z, bias)), [0, 0])
    return c


@pl.jit
def left_right(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.LEFT_RIGHT)]):
        z = pl.matmul(a, b, out_dtype=pl.FP32)
        c = pl.assemble(c, pl.exp(pl.add(z, bias)), [0, 0])
    return c


@SIMS
@pytest.mark.parametrize("kernel, m, n", [(up_down, 16, 16), (up_down, 15, 16), (left_right, 16, 16),
                                          (left_right, 16, 15)], ids=["ud-even", "ud-odd", "lr-even", "lr-odd"])
def test_split_c2v_matches_numpy(platform, kernel, m, n):
    a, b = f16(rng, m, 32), f16(rng, 32, n)
    bias = rng.uniform(-1, 1, (m, n)).astype(np.float32)
    c = np.full((m, n), np.nan, np.float32)
    kernel(a, b, bias, c, config=RunConfig(platform=platform))
    np.testing.assert_allclose(c, np.exp(matmul_ref(a, b) + bias), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kernel, m, n, code", [(up_down, 16, 16, 1), (up_down, 15, 16, 3), (left_right, 16, 16, 2),
                                                (left_right, 16, 15, 4)])
def test_split_codes_and_dual_lane_aiv(kernel, m, n, code):
    lowered = kernel.lower(f16(rng, m, 32), f16(rng, 32, n), np.zeros((m, n), np.float32), np.zeros((m, n), np.float32),
                           config=RunConfig(platform="a5sim"))
    text = lowered.as_python()
    assert f"pl.tile.tpush_to_aiv(z, split={code}" in text
    assert f"pl.tile.tpop_from_aic(split={code}" in text and f"pl.system.tfree_to_aic(z_vec, split={code}" in text
    aiv = next(f for f in lowered.functions.values() if f.name.endswith("_aiv"))
    assert aiv.attrs["split"] in (pl.SplitMode.UP_DOWN, pl.SplitMode.LEFT_RIGHT)
    assert "pl.tile.get_subblock_idx()" in text


@pl.jit
def split_v2c(a: pl.Tensor, d: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
        x = pl.load(a, [0, 0], [16, 32])
        y = pl.load(d, [0, 0], [16, 32])
        left = pl.move(pl.add(x, y), target_memory=pl.Mem.Left)
        right = pl.move(pl.load(b, [0, 0], [32, 16], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        pl.store(pl.matmul(left, right), [0, 0], c)
    return c


@SIMS
def test_split_v2c_lanes_push_halves_the_cube_pops_the_whole(platform):
    a, d, b = f16(rng, 16, 32), f16(rng, 16, 32), f16(rng, 32, 16)
    c = np.full((16, 16), np.nan, np.float32)
    split_v2c(a, d, b, c, config=RunConfig(platform=platform))
    np.testing.assert_allclose(c, matmul_ref(a + d, b), rtol=1e-5, atol=1e-5)


@pl.jit
def split_col_sum(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
        z = pl.matmul(a, b, out_dtype=pl.FP32)
        c = pl.assemble(c, pl.col_sum(z), [0, 0])
    return c


def test_a_reduction_across_the_split_axis_is_rejected():
    with pytest.raises(UnsupportedError, match="UP_DOWN.*cannot be split across the two AIV lanes"):
        split_col_sum.lower(f16(rng, 16, 32), f16(rng, 32, 16), np.zeros((1, 16), np.float32),
                            config=RunConfig(platform="a5sim"))


@pl.jit
def split_loop(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
        acc = pl.create_tile([16, 16], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        s = pl.tile.full([16, 16], dtype=pl.FP32, value=0.0)
        for kk in pl.range(2):
            x2 = pl.add(pl.load(a, [0, kk * 32], [16, 32]), pl.load(a, [0, kk * 32], [16, 32]))
            right = pl.move(pl.load(b, [kk * 32, 0], [32, 16], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
            acc = pl.matmul_acc(acc, pl.move(x2, target_memory=pl.Mem.Left), right, kk == 0)
            s = pl.add(s, pl.move(acc, target_memory=pl.Mem.Vec))
        pl.store(s, [0, 0], c)
    return c


@SIMS
def test_split_loop_with_both_directions_and_carries(platform):
    a, b = f16(rng, 16, 64), f16(rng, 64, 16)
    c = np.full((16, 16), np.nan, np.float32)
    split_loop(a, b, c, config=RunConfig(platform=platform))
    a2 = (a + a).astype(np.float32)
    p1 = a2[:, :32] @ b[:32].astype(np.float32)
    np.testing.assert_allclose(c, 2 * p1 + a2[:, 32:] @ b[32:].astype(np.float32), rtol=1e-5, atol=1e-5)
