"""A matmul → softmax kernel under pl.split(UP_DOWN) whose query rows are ragged (valid V of a
16-row box) runs numpy-equal on both simulators: the lanes split the V valid rows evenly
(lane_stride = ceil(V / 2), seed 004 "split code"), where 13 or 14 rows used to be refused because
the physical half left lanes of 8 and 5 / 8 and 6 rows. The rows past V are never written.
A gather back to the cube (matmul → softmax → matmul) has no odd form: an even V runs, an odd one
is refused naming the extents that work."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import UnsupportedError
from pypto.runtime import RunConfig


def _kernel(valid: int):
    @pl.jit
    def qk_softmax(q: pl.Tensor, k: pl.Tensor, o: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
            qt = pl.load(q, [0, 0], [16, 32], valid_shapes=[valid, 32], target_memory=pl.Mem.Mat)
            kt = pl.load(k, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
            s = pl.matmul(qt, kt, b_trans=True, out_dtype=pl.FP32)
            tmp = pl.create_tile([16, 16], dtype=pl.FP32, target_memory=pl.Mem.Vec)
            e = pl.exp(pl.row_expand_sub(s, pl.row_max(s, tmp)))
            pl.store(pl.row_expand_div(e, pl.row_sum(e, tmp)), [0, 0], o)
        return o
    return qk_softmax


def _softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.filterwarnings("ignore:output 'o' was not written")
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("valid", [13, 14, 8, 5])
def test_ragged_rows_split_evenly_run_numpy_equal(platform, valid):
    rng = np.random.default_rng(valid)
    q = rng.uniform(-1, 1, (16, 32)).astype(np.float16)
    k = rng.uniform(-1, 1, (16, 32)).astype(np.float16)
    o = np.full((16, 16), 7.0, np.float32)
    _kernel(valid)(q, k, o, config=RunConfig(platform=platform))
    want = _softmax(q[:valid].astype(np.float32) @ k.astype(np.float32).T)
    np.testing.assert_allclose(o[:valid], want, rtol=1e-4, atol=1e-5)
    assert (o[valid:] == 7.0).all()


def test_the_transfer_carries_the_odd_code_and_the_stride():
    q, k = np.zeros((16, 32), np.float16), np.zeros((16, 32), np.float16)
    o = np.zeros((16, 16), np.float32)
    text = str(_kernel(13).lower(q, k, o, config=RunConfig(platform="a5sim")))
    assert "pl.tile.tpush_to_aiv(s, split=3, lane_stride=7)" in text
    assert "pl.tile.tpop_from_aic(split=3, lane_stride=7)" in text


def _attention(valid: int):
    """matmul → softmax → matmul: the probabilities go back to the cube (a gather at the same stride)."""
    @pl.jit
    def attn(q: pl.Tensor, k: pl.Tensor, v: pl.Tensor, o: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
            qt = pl.load(q, [0, 0], [16, 32], valid_shapes=[valid, 32], target_memory=pl.Mem.Mat)
            kt = pl.load(k, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
            s = pl.move(pl.matmul(qt, kt, b_trans=True, out_dtype=pl.FP32), target_memory=pl.Mem.Vec)
            tmp = pl.create_tile([16, 16], dtype=pl.FP32, target_memory=pl.Mem.Vec)
            e = pl.exp(pl.row_expand_sub(s, pl.row_max(s, tmp)))
            p = pl.move(pl.cast(pl.row_expand_div(e, pl.row_sum(e, tmp)), pl.FP16), target_memory=pl.Mem.Left)
            vt = pl.move(pl.load(v, [0, 0], [16, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
            pl.store(pl.matmul(p, vt, out_dtype=pl.FP32), [0, 0], o)
        return o
    return attn


def _inputs(seed):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, (16, 32)).astype(np.float16) for _ in range(3)]


@pytest.mark.filterwarnings("ignore:output 'o' was not written")
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("valid", [14, 12, 6])
def test_an_even_ragged_region_gathered_back_to_the_cube_runs_numpy_equal(platform, valid):
    q, k, v = _inputs(valid)
    o = np.full((16, 32), 7.0, np.float32)
    _attention(valid)(q, k, v, o, config=RunConfig(platform=platform))
    p = _softmax(q[:valid].astype(np.float32) @ k.astype(np.float32).T).astype(np.float16).astype(np.float32)
    np.testing.assert_allclose(o[:valid], p @ v.astype(np.float32), rtol=2e-3, atol=2e-3)
    assert (o[valid:] == 7.0).all()


@pytest.mark.parametrize("valid, lanes", [(13, "8 and 5"), (15, "8 and 7")])
def test_an_odd_ragged_region_gathered_back_is_refused_with_the_feasible_extents(valid, lanes):
    q, k, v = _inputs(0)
    with pytest.raises(UnsupportedError, match=f"valid extent of {valid} in a box of 16 leaves the two AIV lanes "
                                               f"{lanes} cells.*gather needs equal halves") as err:
        _attention(valid).lower(q, k, v, np.zeros((16, 32), np.float32), config=RunConfig(platform="a5sim"))
    assert "at most 8, or 16" in err.value.hint and "any even extent" in err.value.hint


@pl.jit
def _qk_left_right(q: pl.Tensor, k: pl.Tensor, o: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.LEFT_RIGHT)]):
        qt = pl.load(q, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
        kt = pl.load(k, [0, 0], [16, 32], valid_shapes=[13, 32], target_memory=pl.Mem.Mat)
        pl.store(pl.exp(pl.matmul(qt, kt, b_trans=True, out_dtype=pl.FP32)), [0, 0], o)
    return o


@pytest.mark.filterwarnings("ignore:output 'o' was not written")
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_ragged_columns_split_left_right_evenly_run_numpy_equal(platform):
    """13 valid columns of 16: lanes of 7 and 6 columns (TILE_LEFT_RIGHT_ODD, lane_stride 7)."""
    q, k, _ = _inputs(5)
    o = np.full((16, 16), 7.0, np.float32)
    _qk_left_right(q, k, o, config=RunConfig(platform=platform))
    np.testing.assert_allclose(o[:, :13], np.exp(q.astype(np.float32) @ k[:13].astype(np.float32).T),
                               rtol=1e-4, atol=1e-5)
    assert (o[:, 13:] == 7.0).all()
    text = str(_qk_left_right.lower(q, k, o, config=RunConfig(platform=platform)))
    assert "split=4, lane_stride=7" in text

