"""Cube ops beyond matmul (gemv family, batched matmul) and the per-backend data-path checks."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import TypeCheckError, UnsupportedError
from pypto.ir import MemorySpace
from pypto.runtime import RunConfig
from pypto.runtime.sim.ops import SIM_OPS
from pypto.runtime.sim.values import TileValue

SIMS = pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
rng = np.random.default_rng(3)


@pl.jit
def gemv_relu(x: pl.Tensor, w: pl.Tensor, bias: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        left = pl.move(pl.load(x, [0, 0], [1, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        right = pl.move(pl.load(w, [0, 0], [64, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        b = pl.move(pl.load(bias, [0, 0], [1, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Bias)
        acc = pl.tile.gemv_bias(left, right, b)
        acc = pl.tile.gemv_acc(acc, left, right, acc_phase="final")
        v = pl.move(acc, target_memory=pl.Mem.Vec)
        pl.store(pl.relu(v), [0, 0], y)
    return y


@SIMS
def test_gemv_bias_acc_then_vector_relu(platform):
    x = rng.uniform(-1, 1, (1, 64)).astype(np.float16)
    w = rng.uniform(-1, 1, (64, 32)).astype(np.float16)
    bias = rng.uniform(-1, 1, (1, 32)).astype(np.float32)
    y = np.full((1, 32), np.nan, np.float32)
    gemv_relu(x, w, bias, y, config=RunConfig(platform=platform))
    prod = x.astype(np.float32) @ w.astype(np.float32)
    np.testing.assert_allclose(y, np.maximum(2 * prod + bias, 0), rtol=1e-5, atol=1e-5)


@pl.jit
def gemv_two_rows(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        left = pl.move(pl.load(x, [0, 0], [2, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        right = pl.move(pl.load(w, [0, 0], [64, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        pl.store(pl.tile.gemv(left, right), [0, 0], y)
    return y


def test_gemv_needs_a_row_vector():
    with pytest.raises(TypeCheckError, match="tile.gemv: argument 'lhs' must be a row vector"):
        gemv_two_rows.lower(np.zeros((2, 64), np.float16), np.zeros((64, 32), np.float16),
                            np.zeros((2, 32), np.float32))


def test_batch_matmul_semantics_per_batch_index():
    a = rng.uniform(-1, 1, (3, 4, 8)).astype(np.float16)
    b = rng.uniform(-1, 1, (3, 8, 5)).astype(np.float16)
    out = TileValue(np.full((3, 4, 5), np.nan, np.float32), (3, 4, 5))
    SIM_OPS["tile.batch_matmul"](None, out, TileValue(a, a.shape), TileValue(b, b.shape))
    ref = np.matmul(a.astype(np.float32), b.astype(np.float32))
    np.testing.assert_allclose(out.data, ref, rtol=1e-5)
    SIM_OPS["tile.batch_matmul_acc"](None, out, out, TileValue(a, a.shape), TileValue(b, b.shape))
    np.testing.assert_allclose(out.data, 2 * ref, rtol=1e-5)


@pl.jit
def store_from_mat(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Mat), [0, 0], y)
    return y


@SIMS
def test_a_store_from_mat_has_no_data_path(platform):
    with pytest.raises(UnsupportedError, match=r"tile.store of .*has no Mat → DDR data path"):
        store_from_mat.lower(np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32),
                             config=RunConfig(platform=platform))
