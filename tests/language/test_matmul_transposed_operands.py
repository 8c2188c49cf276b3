"""Transposed matmul operands, as the reference writes them: `pl.matmul(a, b, b_trans=True)` on tiles
(the Mat operand becomes its transpose_view), `a_trans=True` likewise, and `pl.transpose(tensor)`
feeding a tensor-level matmul; checked against numpy on the simulator."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import UnsupportedError

RNG = np.random.default_rng(11)
A = RNG.uniform(-1, 1, (32, 64)).astype(np.float16)
BT = RNG.uniform(-1, 1, (16, 64)).astype(np.float16)      # B^T: [N, K]


def _ref(a, b):
    return a.astype(np.float32) @ b.astype(np.float32)


@pl.jit
def tile_b_trans(a: pl.Tensor, bt: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        left = pl.move(pl.load(a, [0, 0], [32, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        right = pl.load(bt, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
        pl.store(pl.matmul(left, right, b_trans=True), [0, 0], c)
    return c


@pl.jit
def tile_a_trans(at: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        left = pl.load(at, [0, 0], [64, 32], target_memory=pl.Mem.Mat)
        right = pl.move(pl.load(b, [0, 0], [64, 16], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        pl.store(pl.matmul(left, right, a_trans=True), [0, 0], c)
    return c


@pl.jit
def tensor_transpose(a: pl.Tensor, bt: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c[:] = pl.matmul(a, pl.transpose(bt, 0, 1), out_dtype=pl.FP32)
    return c


def test_tile_b_trans_matches_numpy():
    c = np.zeros((32, 16), np.float32)
    tile_b_trans(A, BT, c)
    np.testing.assert_allclose(c, _ref(A, BT.T), rtol=1e-3, atol=1e-3)


def test_tile_a_trans_matches_numpy():
    c = np.zeros((32, 16), np.float32)
    b = np.ascontiguousarray(BT.T)
    tile_a_trans(np.ascontiguousarray(A.T), b, c)
    np.testing.assert_allclose(c, _ref(A, b), rtol=1e-3, atol=1e-3)


def test_tensor_transpose_feeding_matmul_matches_numpy():
    c = np.zeros((32, 16), np.float32)
    tensor_transpose(A, BT, c)
    np.testing.assert_allclose(c, _ref(A, BT.T), rtol=1e-3, atol=1e-3)


def test_b_trans_of_a_tile_already_in_right_is_a_clear_error():
    @pl.jit
    def late(a: pl.Tensor, bt: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            left = pl.move(pl.load(a, [0, 0], [32, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
            right = pl.move(pl.load(bt, [0, 0], [16, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
            pl.store(pl.matmul(left, right, b_trans=True), [0, 0], c)
        return c

    with pytest.raises(UnsupportedError, match="b_trans=True transposes a tile in Mat"):
        late(A, BT, np.zeros((32, 16), np.float32))
