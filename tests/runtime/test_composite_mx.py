"""pl.tile.tquant_mx on a5sim (the lowered raw + x2zz primitives) against an independent numpy
MX reference (OCP MXFP8 E4M3, one E8M0 exponent per 32 elements), for both group axes."""

import ml_dtypes
import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError
from pypto.runtime import RunConfig

A5 = RunConfig(platform="a5sim")


@pl.jit
def quant_axis1(src: pl.Tensor[[32, 128], pl.FP32], q: pl.Out[pl.Tensor[[32, 128], pl.FP8E4M3FN]],
                s: pl.Out[pl.Tensor[[32, 4], pl.FP8E8M0]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(src, [0, 0], [32, 128])
        pair = pl.tile.tquant_mx(t, group_axis=1)
        q = pl.store(pair[0], [0, 0], q)
        s = pl.store(pair[1], [0, 0], s)
    return q, s


@pl.jit
def quant_axis0(src: pl.Tensor[[32, 128], pl.FP32], q: pl.Out[pl.Tensor[[128, 32], pl.FP8E4M3FN]],
                s: pl.Out[pl.Tensor[[4, 32], pl.FP8E8M0]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(src, [0, 0], [32, 128])
        pair = pl.tile.tquant_mx(t, group_axis=0)
        q = pl.store(pair[0], [0, 0], q)
        s = pl.store(pair[1], [0, 0], s)
    return q, s


def reference_mx(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise MXFP8: each row split into blocks of 32; written element by element on purpose."""
    rows, cols = x.shape
    data = np.zeros((rows, cols), np.float64)
    scale = np.zeros((rows, cols // 32), np.float64)
    for r in range(rows):
        for g in range(cols // 32):
            block = x[r, 32 * g:32 * (g + 1)].astype(np.float64)
            amax = float(np.max(np.abs(block)))
            exp = int(np.floor(np.log2(amax))) - 8 if amax > 0 else -127
            scale[r, g] = 2.0 ** exp
            data[r, 32 * g:32 * (g + 1)] = np.clip(block / 2.0 ** exp, -448, 448)
    return data.astype(np.float32).astype(ml_dtypes.float8_e4m3fn), scale


def make_source(seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((32, 128)) * np.exp2(rng.integers(-6, 7, (32, 1)))   # per-row magnitudes
    x[3, :32] = 0.0                                                             # an all-zero group
    return x.astype(np.float32)


@pytest.mark.parametrize("seed", [0, 7])
def test_axis1_matches_numpy_mx(seed):
    x = make_source(seed)
    q = np.zeros((32, 128), ml_dtypes.float8_e4m3fn)
    s = np.zeros((32, 4), ml_dtypes.float8_e8m0fnu)
    quant_axis1(x, q, s, config=A5)
    want_q, want_s = reference_mx(x)
    np.testing.assert_array_equal(s.astype(np.float64), want_s)
    np.testing.assert_array_equal(q.view(np.uint8), want_q.view(np.uint8))
    # dequantized: saturated at ±448·scale above E4M3's range, else within half an E4M3 ulp
    # (2^-4 relative for normals, 2^-10·scale absolute in the subnormal range) of the source
    scale = np.repeat(s.astype(np.float64), 32, axis=1)
    deq = q.astype(np.float64) * scale
    sat = np.abs(x) / scale > 448
    assert sat.any() and (deq[sat] == np.sign(x[sat]) * 448 * scale[sat]).all()
    err = np.abs(deq - x)[~sat]
    assert (err <= np.maximum(2.0 ** -4 * np.abs(x), 2.0 ** -10 * scale)[~sat]).all()


@pytest.mark.parametrize("seed", [1, 8])
def test_axis0_matches_numpy_mx_of_the_transpose(seed):
    x = make_source(seed)
    q = np.zeros((128, 32), ml_dtypes.float8_e4m3fn)
    s = np.zeros((4, 32), ml_dtypes.float8_e8m0fnu)
    quant_axis0(x, q, s, config=A5)
    want_q, want_s = reference_mx(x)              # groups of the [N, K] source rows = columns of [K, N]
    np.testing.assert_array_equal(q.view(np.uint8), want_q.T.view(np.uint8))
    np.testing.assert_array_equal(s.astype(np.float64), want_s.T)


def test_a2a3sim_rejects_tquant_mx():
    x = make_source(0)
    with pytest.raises(PyptoError, match="a5"):
        quant_axis1(x, np.zeros((32, 128), ml_dtypes.float8_e4m3fn), np.zeros((32, 4), ml_dtypes.float8_e8m0fnu),
                    config=RunConfig(platform="a2a3sim"))


def test_mx_group_edge_cases():
    from pypto.runtime.sim.ops.mx import mx_quantize_groups
    groups = np.zeros((3, 32), np.float32)
    groups[1, 5] = np.nan
    groups[2, :] = 1.0
    data, exp = mx_quantize_groups(groups)
    assert exp.tolist() == [0, 255, 127 - 8]          # all zero → byte 0; NaN → 0xFF; amax 1 → 2^-8
    assert (data[0] == 0).all() and (data[2].view(ml_dtypes.float8_e4m3fn).astype(np.float32) == 256).all()
