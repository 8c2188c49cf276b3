"""pl.tile.select on the simulator matches np.where for every branch form on both backends
(the lowered tile.sel / tile.sels with backend scratch, run as final IR)."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig

R, C = 16, 64


@pl.jit
def two_tiles(a: pl.Tensor[[R, C], pl.FP32], b: pl.Tensor[[R, C], pl.FP32], out: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [R, C])
        tb = pl.load(b, [0, 0], [R, C])
        out = pl.store(pl.tile.select(pl.tile.cmp(ta, tb, cmp_type=pl.CmpType.GT), ta, tb), [0, 0], out)
    return out


@pl.jit
def scalar_false(a: pl.Tensor[[R, C], pl.FP32], out: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [R, C])
        out = pl.store(pl.tile.select(pl.tile.cmps(ta, 0.25, cmp_type=pl.CmpType.LT), ta, -7.5), [0, 0], out)
    return out


@pl.jit
def scalar_true(a: pl.Tensor[[R, C], pl.FP32], out: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [R, C], valid_shape=[12, 40])
        out = pl.store(pl.tile.select(pl.tile.cmps(ta, 0.0, cmp_type=pl.CmpType.GE), 3.0, ta), [0, 0], out)
    return out


@pl.jit
def bf16_scalar_false(a: pl.Tensor[[R, C], pl.BF16], out: pl.Out[pl.Tensor[[R, C], pl.BF16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [R, C])
        out = pl.store(pl.tile.select(pl.tile.cmps(ta, 0.0, cmp_type=pl.CmpType.GT), ta, 1.0), [0, 0], out)
    return out


PLATFORMS = ["a2a3sim", "a5sim"]


def data(seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, (R, C)).astype(np.float32), rng.uniform(-1, 1, (R, C)).astype(np.float32)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_tile_tile(platform):
    a, b = data(1)
    out = np.zeros((R, C), np.float32)
    two_tiles(a, b, out, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(out, np.where(a > b, a, b))


@pytest.mark.parametrize("platform", PLATFORMS)
def test_tile_scalar(platform):
    a, _ = data(2)
    out = np.zeros((R, C), np.float32)
    scalar_false(a, out, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(out, np.where(a < 0.25, a, np.float32(-7.5)))


@pytest.mark.parametrize("platform", PLATFORMS)
def test_scalar_tile_on_a_narrowed_valid_region(platform):
    a, _ = data(3)
    out = np.zeros((R, C), np.float32)
    scalar_true(a, out, config=RunConfig(platform=platform))
    # only the valid region is stored (an Out tensor's other elements are unspecified)
    np.testing.assert_array_equal(out[:12, :40], np.where(a[:12, :40] >= 0, np.float32(3.0), a[:12, :40]))


@pytest.mark.parametrize("platform", PLATFORMS)
def test_bf16_tile_scalar_goes_through_tsel(platform):
    import ml_dtypes
    a = data(4)[0].astype(ml_dtypes.bfloat16)
    out = np.zeros((R, C), ml_dtypes.bfloat16)
    bf16_scalar_false(a, out, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(out, np.where(a.astype(np.float32) > 0, a, ml_dtypes.bfloat16(1.0)))
