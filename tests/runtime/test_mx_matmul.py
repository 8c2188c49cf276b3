"""tile.matmul_mx (+ _acc, _bias) on a5sim against an independent numpy MX reference; a2a3 rejects
MX with a clear error; the type rule names the wrong argument."""

import ml_dtypes
import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError, TypeCheckError
from pypto.ir.dtypes import FP8E4M3FN, FP8E8M0, FP32
from pypto.ir.enums import MemorySpace
from pypto.ir.ops.registry import create_op_call
from pypto.ir.expr import Var
from pypto.ir.types import TileType
from pypto.runtime import RunConfig

A5 = RunConfig(platform="a5sim")


@pl.jit
def mx_matmul(a: pl.Tensor[[16, 64], pl.FP8E4M3FN], sa: pl.Tensor[[16, 2], pl.FP8E8M0],
              b: pl.Tensor[[64, 32], pl.FP8E4M3FN], sb: pl.Tensor[[2, 32], pl.FP8E8M0],
              bias: pl.Tensor[[1, 32], pl.FP32], c: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
              d: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a_l = pl.move(pl.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        sa_l = pl.move(pl.load(sa, [0, 0], [16, 2], target_memory=pl.Mem.Mat), target_memory=pl.Mem.LeftScale)
        b_r = pl.move(pl.load(b, [0, 0], [64, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        sb_r = pl.move(pl.load(sb, [0, 0], [2, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.RightScale)
        bias_b = pl.move(pl.load(bias, [0, 0], [1, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Bias)
        z = pl.tile.matmul_mx(a_l, sa_l, b_r, sb_r)
        z2 = pl.tile.matmul_mx_acc(z, a_l, sa_l, b_r, sb_r)
        pl.store(z2, [0, 0], c)
        zb = pl.tile.matmul_mx_bias(a_l, sa_l, b_r, sb_r, bias_b)
        pl.store(zb, [0, 0], d)
    return c, d


def reference(a, sa, b, sb) -> np.ndarray:
    """Σ_k a[m,k]·2^(sa[m,k//32]-127) · b[k,n]·2^(sb[k//32,n]-127), element by element over the groups."""
    m, k = a.shape
    n = b.shape[1]
    out = np.zeros((m, n), np.float64)
    for g in range(k // 32):
        ks = slice(g * 32, (g + 1) * 32)
        ea = 2.0 ** (sa.view(np.uint8)[:, g].astype(np.float64) - 127)
        eb = 2.0 ** (sb.view(np.uint8)[g, :].astype(np.float64) - 127)
        out += np.outer(ea, eb) * (a[:, ks].astype(np.float64) @ b[ks, :].astype(np.float64))
    return out


def _inputs(seed=3):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-4, 4, (16, 64)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.uniform(-4, 4, (64, 32)).astype(ml_dtypes.float8_e4m3fn)
    sa = rng.integers(120, 134, (16, 2)).astype(np.uint8).view(ml_dtypes.float8_e8m0fnu)
    sb = rng.integers(120, 134, (2, 32)).astype(np.uint8).view(ml_dtypes.float8_e8m0fnu)
    bias = rng.uniform(-1, 1, (1, 32)).astype(np.float32)
    return a, sa, b, sb, bias


def test_mx_matmul_acc_bias_match_numpy_on_a5sim():
    a, sa, b, sb, bias = _inputs()
    c = np.full((16, 32), np.nan, np.float32)
    d = np.full((16, 32), np.nan, np.float32)
    mx_matmul(a, sa, b, sb, bias, c, d, config=A5)
    want = reference(a, sa, b, sb)
    np.testing.assert_allclose(c, (2 * want).astype(np.float32), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(d, (want + bias).astype(np.float32), rtol=1e-6, atol=1e-6)


def test_mx_matmul_is_rejected_on_a2a3():
    a, sa, b, sb, bias = _inputs()
    c = np.zeros((16, 32), np.float32)
    with pytest.raises(PyptoError, match=r"tile.matmul_mx \(MX matmul\) in .* exists on a5 \(Ascend950\) only, not on a2a3"):
        mx_matmul(a, sa, b, sb, bias, c, c.copy(), config=RunConfig(platform="a2a3sim"))


def _tile(shape, dtype, space):
    return Var("t", TileType(list(shape), dtype, memory_space=space))


def test_mx_matmul_type_rule_names_the_wrong_argument():
    lhs, rhs = _tile((16, 64), FP8E4M3FN, MemorySpace.Left), _tile((64, 32), FP8E4M3FN, MemorySpace.Right)
    sa, sb = _tile((16, 2), FP8E8M0, MemorySpace.LeftScale), _tile((2, 32), FP8E8M0, MemorySpace.RightScale)
    t = create_op_call("tile.matmul_mx", [lhs, sa, rhs, sb]).type
    assert t.dtype is FP32 and t.memory_space is MemorySpace.Acc
    with pytest.raises(TypeCheckError, match="'lhs_scale' must be \\[16, 2\\]"):
        create_op_call("tile.matmul_mx", [lhs, _tile((16, 4), FP8E8M0, MemorySpace.LeftScale), rhs, sb])
    with pytest.raises(TypeCheckError, match="'rhs_scale' must be in RightScale"):
        create_op_call("tile.matmul_mx", [lhs, sa, rhs, _tile((2, 32), FP8E8M0, MemorySpace.Mat)])
    with pytest.raises(TypeCheckError, match="'lhs' must be FP8E4M3FN or FP8E5M2"):
        create_op_call("tile.matmul_mx", [_tile((16, 64), FP32, MemorySpace.Left), sa, rhs, sb])
    with pytest.raises(TypeCheckError, match="'bias' must be \\[1, N\\]"):
        create_op_call("tile.matmul_mx_bias", [lhs, sa, rhs, sb, _tile((2, 32), FP32, MemorySpace.Bias)])
