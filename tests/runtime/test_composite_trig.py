"""pl.sin / pl.cos run on the simulator as LowerCompositeOps' primitive sequence (not np.sin):
error bounds of seed 001 over ±2π·1024, the special points, NaN propagation; the simulator refuses
an un-lowered tile.sin."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import SimulationError
from pypto.ir.dtypes import FP32
from pypto.ir.expr import Var
from pypto.runtime.sim.ops import SIM_OPS
from pypto.runtime.sim.values import TileValue

ROWS, COLS, BLOCK = 32, 64, 8           # 2048 samples, processed in [8, 64] blocks
RANGE = 2 * np.pi * 1024


def make_kernel(fn):
    @pl.jit
    def trig(x: pl.Tensor[[ROWS, COLS], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(0, ROWS, BLOCK):
                t = pl.load(x, [i, 0], [BLOCK, COLS])
                y = fn(t)
                out = pl.store(y, [i, 0], out)
        return out
    return trig


SIN, COS = make_kernel(pl.sin), make_kernel(pl.cos)
KERNELS = {"sin": (SIN, np.sin), "cos": (COS, np.cos)}


def run(name, x):
    kernel, _ = KERNELS[name]
    out = np.zeros((ROWS, COLS), np.float32)
    kernel(x.reshape(ROWS, COLS).astype(np.float32), out)
    return out.reshape(x.shape)


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_random_samples_match_numpy(name):
    for seed in (0, 1, 42):
        x = np.random.default_rng(seed).uniform(-RANGE, RANGE, ROWS * COLS).astype(np.float32)
        got = run(name, x)
        want = KERNELS[name][1](x).astype(np.float32)
        np.testing.assert_allclose(got, want, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("name, expect", [("sin", [0, 1, 0, -1, 0]), ("cos", [1, 0, -1, 0, 1])])
def test_special_points_and_nan(name, expect):
    x = np.zeros(ROWS * COLS, np.float32)
    x[:5] = np.array([0, np.pi / 2, np.pi, 3 * np.pi / 2, 2 * np.pi], np.float32)
    x[5] = np.nan
    got = run(name, x)
    np.testing.assert_allclose(got[:5], np.array(expect, np.float32), atol=1e-5)
    assert np.isnan(got[5])


def test_simulator_refuses_unlowered_sin():
    t = TileValue(np.ones((4, 8), np.float32), (4, 8))
    with pytest.raises(SimulationError, match="tile.sin reached the simulator un-lowered"):
        SIM_OPS["tile.sin"](None, TileValue(np.zeros((4, 8), np.float32), (4, 8)), t)
