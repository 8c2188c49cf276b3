"""MX scale V2C carriers on a5 (seed 004, "MX scale 的 V2C 传输"): a mixed kernel quantizes on the
vector core (pl.tile.tquant_mx) and multiplies on the cube (pl.tile.matmul_mx). The row/row A-side
scale is pushed as it is, the col/col B-side scale through its row/row transpose_view carrier, the
FP8 data through the NZ insert; a5sim matches an independent numpy MX reference; a2a3 rejects MX."""

import ml_dtypes
import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError
from pypto.ir.enums import MemorySpace, TileLayout
from pypto.ir.stmt import flatten_to_stmts
from pypto.passes.analysis import calls_in
from pypto.runtime import RunConfig

A5 = RunConfig(platform="a5sim")


@pl.jit
def mx_mixed(x: pl.Tensor[[16, 64], pl.FP32], w: pl.Tensor[[32, 64], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pa = pl.tile.tquant_mx(pl.load(x, [0, 0], [16, 64]), group_axis=1)     # [16, 64] FP8, [16, 2] row/row
        pb = pl.tile.tquant_mx(pl.load(w, [0, 0], [32, 64]), group_axis=0)     # [64, 32] FP8, [2, 32] col/col
        a_l = pl.move(pa[0], target_memory=pl.Mem.Left)
        sa_l = pl.move(pa[1], target_memory=pl.Mem.LeftScale)
        b_r = pl.move(pb[0], target_memory=pl.Mem.Right)
        sb_r = pl.move(pb[1], target_memory=pl.Mem.RightScale)
        pl.store(pl.tile.matmul_mx(a_l, sa_l, b_r, sb_r), [0, 0], c)
    return c


def _quantize_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, per block of 32: E8M0 exponent e = floor(log2 amax) - 8, data = E4M3(x / 2^e)."""
    rows, cols = x.shape
    data = np.zeros((rows, cols), np.float64)
    exps = np.zeros((rows, cols // 32), np.float64)
    for r in range(rows):
        for g in range(cols // 32):
            block = x[r, g * 32:(g + 1) * 32].astype(np.float64)
            amax = np.abs(block).max()
            e = np.floor(np.log2(amax)) - 8 if amax > 0 else -127
            exps[r, g] = 2.0 ** e
            scaled = np.clip(block / 2.0 ** e, -448, 448)
            data[r, g * 32:(g + 1) * 32] = scaled.astype(np.float32).astype(ml_dtypes.float8_e4m3fn)
    return data, exps


def reference(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    qa, ea = _quantize_rows(x)               # A: groups along K of each row of x
    qb, eb = _quantize_rows(w)               # B: groups along K of each row of w (= each column of w.T)
    a = qa * np.repeat(ea, 32, axis=1)
    b = qb * np.repeat(eb, 32, axis=1)
    return (a @ b.T).astype(np.float32)


def _inputs():
    rng = np.random.default_rng(11)
    return rng.uniform(-1, 1, (16, 64)).astype(np.float32), rng.uniform(-3, 3, (32, 64)).astype(np.float32)


def test_quantize_on_vector_multiply_on_cube_matches_numpy_mx_on_a5sim():
    x, w = _inputs()
    c = np.full((16, 32), np.nan, np.float32)
    mx_mixed(x, w, c, config=A5)
    np.testing.assert_allclose(c, reference(x, w), rtol=1e-6, atol=1e-6)


def _ops(func):
    return [(c.op.name, c) for c in calls_in(func.body) if hasattr(c.op, "name") and not c.is_function_call()]


def test_scales_cross_as_row_row_carriers_and_the_cube_sees_the_logical_layout():
    x, w = _inputs()
    lowered = mx_mixed.lower(x, w, np.zeros((16, 32), np.float32), config=A5)
    aiv, aic = lowered.get_function("mx_mixed_incore_0_aiv"), lowered.get_function("mx_mixed_incore_0_aic")
    pushes = [c.args[0].type for name, c in _ops(aiv) if name == "tile.tpush_to_aic"]
    scales = [t for t in pushes if t.dtype.name == "FP8E8M0"]
    data = [t for t in pushes if t.dtype.name == "FP8E4M3FN"]
    row = (TileLayout.row_major, TileLayout.row_major)
    layout = lambda t: (t.tile_view.blayout, t.tile_view.slayout)               # noqa: E731
    assert [tuple(d.value for d in t.shape) for t in scales] == [(16, 2), (32, 2)]   # B scale: [K/32, N] → [N, K/32]
    assert all(layout(t) == row for t in scales)                                 # no NZ insert for scales
    assert all(layout(t) == (TileLayout.col_major, TileLayout.row_major) for t in data)   # data: NZ
    views = [c for name, c in _ops(aiv) if name == "tile.transpose_view" and c.type.dtype.name == "FP8E8M0"]
    assert len(views) == 1
    pops = [c.type for name, c in _ops(aic) if name == "tile.tpop_from_aiv" and c.type.dtype.name == "FP8E8M0"]
    assert [tuple(d.value for d in t.shape) for t in pops] == [(16, 2), (32, 2)]
    mm = [c for name, c in _ops(aic) if name == "tile.matmul_mx"][0]
    rhs_scale = mm.args[3].type
    assert rhs_scale.memory_space is MemorySpace.RightScale
    assert tuple(d.value for d in rhs_scale.shape) == (2, 32) and layout(rhs_scale) == (TileLayout.col_major,
                                                                                         TileLayout.col_major)
    # the B-scale slot is freed after the carrier's move into RightScale (the view back is zero-copy)
    stmts = flatten_to_stmts(aic.body)
    carrier = [s.var for s in stmts if type(s).__name__ == "AssignStmt" and s.value.op.name == "tile.tpop_from_aiv"
               and tuple(d.value for d in s.var.type.shape) == (32, 2)][0]
    uses = [i for i, s in enumerate(stmts) for c in calls_in(s) if carrier in c.args]
    kinds = [calls_in(stmts[i])[0].op.name for i in uses]
    assert kinds == ["tile.move", "system.tfree_to_aiv"] and uses[0] < uses[1]


def test_mx_is_rejected_on_a2a3_with_the_clear_error():
    x, w = _inputs()
    with pytest.raises(PyptoError, match=r"tile.tquant_mx \(MX quantization\) exists on a5 \(Ascend950\) only"):
        mx_mixed(x, w, np.zeros((16, 32), np.float32), config=RunConfig(platform="a2a3sim"))


@pl.jit
def mx_vec_scales(a: pl.Tensor[[16, 64], pl.FP8E4M3FN], sa: pl.Tensor[[16, 2], pl.FP8E8M0],
                  b: pl.Tensor[[64, 32], pl.FP8E4M3FN], sb: pl.Tensor[[2, 32], pl.FP8E8M0],
                  c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    """Scales staged in Vec (row/row); the B scale's consumer asks for col/col: a real Vec → Vec move first."""
    with pl.at(level=pl.Level.CORE_GROUP):
        a_l = pl.move(pl.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        b_r = pl.move(pl.load(b, [0, 0], [64, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        sa_l = pl.move(pl.load(sa, [0, 0], [16, 2]), target_memory=pl.Mem.LeftScale)
        sb_r = pl.move(pl.load(sb, [0, 0], [2, 32]), target_memory=pl.Mem.RightScale,
                       blayout=pl.TileLayout.col_major, slayout=pl.TileLayout.col_major)
        pl.store(pl.tile.matmul_mx(a_l, sa_l, b_r, sb_r), [0, 0], c)
    return c


def test_a_layout_change_moves_in_vec_before_the_carrier_and_matches_numpy():
    rng = np.random.default_rng(4)
    a = rng.uniform(-4, 4, (16, 64)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.uniform(-4, 4, (64, 32)).astype(ml_dtypes.float8_e4m3fn)
    sa = rng.integers(120, 134, (16, 2)).astype(np.uint8)
    sb = rng.integers(120, 134, (2, 32)).astype(np.uint8)
    lowered = mx_vec_scales.lower(a, sa.view(ml_dtypes.float8_e8m0fnu), b, sb.view(ml_dtypes.float8_e8m0fnu),
                                  np.zeros((16, 32), np.float32), config=A5)
    aiv = lowered.get_function("mx_vec_scales_incore_0_aiv")
    names = [name for name, c in _ops(aiv) if name in ("tile.move", "tile.transpose_view", "tile.tpush_to_aic")]
    assert names[-3:] == ["tile.move", "tile.transpose_view", "tile.tpush_to_aic"]
    c = np.full((16, 32), np.nan, np.float32)
    mx_vec_scales(a, sa.view(ml_dtypes.float8_e8m0fnu), b, sb.view(ml_dtypes.float8_e8m0fnu), c, config=A5)
    ea = np.repeat(2.0 ** (sa.astype(np.float64) - 127), 32, axis=1)
    eb = np.repeat(2.0 ** (sb.astype(np.float64) - 127), 32, axis=0)
    want = (a.astype(np.float64) * ea) @ (b.astype(np.float64) * eb)
    np.testing.assert_allclose(c, want.astype(np.float32), rtol=1e-6, atol=1e-6)


@pl.jit
def mx_partial_scale(a: pl.Tensor[[16, 64], pl.FP8E4M3FN], sa: pl.Tensor[[16, 2], pl.FP8E8M0],
                     b: pl.Tensor[[64, 32], pl.FP8E4M3FN], sb: pl.Tensor[[2, 32], pl.FP8E8M0],
                     c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a_l = pl.move(pl.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        b_r = pl.move(pl.load(b, [0, 0], [64, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        sa_l = pl.move(pl.load(sa, [0, 0], [16, 2], valid_shape=[8, 2]), target_memory=pl.Mem.LeftScale)
        sb_r = pl.move(pl.load(sb, [0, 0], [2, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.RightScale)
        pl.store(pl.tile.matmul_mx(a_l, sa_l, b_r, sb_r), [0, 0], c)
    return c


def test_a_partially_valid_scale_sends_its_whole_box_and_keeps_the_logical_valid_region():
    rng = np.random.default_rng(6)
    a = rng.uniform(-4, 4, (16, 64)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.uniform(-4, 4, (64, 32)).astype(ml_dtypes.float8_e4m3fn)
    sa = rng.integers(120, 134, (16, 2)).astype(np.uint8)
    sb = rng.integers(120, 134, (2, 32)).astype(np.uint8)
    args = (a, sa.view(ml_dtypes.float8_e8m0fnu), b, sb.view(ml_dtypes.float8_e8m0fnu))
    lowered = mx_partial_scale.lower(*args, np.zeros((16, 32), np.float32), config=A5)
    aiv = lowered.get_function("mx_partial_scale_incore_0_aiv")
    aic = lowered.get_function("mx_partial_scale_incore_0_aic")
    widen = [c for name, c in _ops(aiv) if name == "tile.set_validshape"]
    assert len(widen) == 1 and widen[0].args[0].type.valid_shape[0].value == 8      # a private copy, widened
    pushed = [c.args[0].type for name, c in _ops(aiv) if name == "tile.tpush_to_aic"][0]
    assert [d.value for d in pushed.valid_shape] == [16, 2]                           # the whole box crosses
    popped = [c.type for name, c in _ops(aic) if name == "tile.tpop_from_aiv"][0]
    assert [d.value for d in popped.valid_shape] == [8, 2]                            # the consumer's logical view
    c = np.full((16, 32), np.nan, np.float32)
    mx_partial_scale(*args, c, config=A5)
    ea = np.repeat(2.0 ** (sa.astype(np.float64) - 127), 32, axis=1)
    eb = np.repeat(2.0 ** (sb.astype(np.float64) - 127), 32, axis=0)
    want = (a.astype(np.float64) * ea) @ (b.astype(np.float64) * eb)
    np.testing.assert_allclose(c[:8], want[:8].astype(np.float32), rtol=1e-6, atol=1e-6)   # rows 8.. are padding
