"""SIM_OPS against numpy: every tile op on TileValues over plain numpy arrays, valid regions honoured."""

import ml_dtypes
import numpy as np
import pytest

from pypto.errors import SimulationError
from pypto.ir.dtypes import FP16, FP32, INT32
from pypto.ir.enums import CastMode, CmpType, MemorySpace, PadValue
from pypto.ir.ops import all_ops
from pypto.runtime.sim.ops import LOWERED_BEFORE_SIM, SIM_OPS
from pypto.runtime.sim.values import TileValue

RNG = np.random.default_rng(7)
POISON = -777.0


def tv(arr, valid=None):
    return TileValue(np.array(arr), valid if valid is not None else np.shape(arr))


def blank(shape, dtype=np.float32):
    return TileValue(np.full(shape, POISON, dtype=dtype), shape)


def run(name, out, *args, **kwargs):
    return SIM_OPS[name](None, out, *args, **kwargs)


def rand(shape, dtype=np.float32, lo=-4, hi=4):
    return RNG.uniform(lo, hi, size=shape).astype(dtype)


def test_every_registered_op_has_semantics_or_is_lowered():
    missing = [n for n in all_ops() if n.split(".")[0] in ("tile", "tensor", "system")
               and n not in SIM_OPS and n not in LOWERED_BEFORE_SIM]
    assert not missing


BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "maximum": np.maximum,
          "minimum": np.minimum}


@pytest.mark.parametrize("name", list(BINARY))
def test_binary_writes_only_valid_region(name):
    a, b = rand((16, 32)), rand((16, 32), lo=0.5, hi=4)
    out = blank((16, 32))
    res = run(f"tile.{name}", out, tv(a, (8, 20)), tv(b))
    assert res is out and out.valid == (8, 20)
    np.testing.assert_allclose(out.data[:8, :20], BINARY[name](a, b)[:8, :20], rtol=1e-6)
    assert (out.data[8:] == POISON).all() and (out.data[:, 20:] == POISON).all()


@pytest.mark.parametrize("name", list(BINARY))
def test_scalar_forms(name):
    a = rand((8, 16))
    out = blank((8, 16))
    run(f"tile.{name}s", out, tv(a), 1.5)
    np.testing.assert_allclose(out.data, BINARY[name](a, np.float32(1.5)), rtol=1e-6)


def test_fp16_computes_in_fp32_and_rounds_once():
    a = np.full((4, 16), 2048, np.float16)
    b = np.full((4, 16), 1.0, np.float16)
    out = blank((4, 16), np.float16)
    run("tile.add", out, tv(a), tv(b))
    assert out.data.dtype == np.float16 and (out.data == np.float16(2048 + 1.0)).all()
    bf = tv(rand((4, 16)).astype(ml_dtypes.bfloat16))
    out = blank((4, 16), ml_dtypes.bfloat16)
    run("tile.exp", out, bf)
    expected = np.exp(bf.data.astype(np.float32)).astype(ml_dtypes.bfloat16)
    assert (out.data == expected).all()


def test_integer_division_truncates_toward_zero():
    a = np.array([[7, -7, 7, -7]], np.int32)
    b = np.array([[2, 2, -2, -2]], np.int32)
    out = blank((1, 4), np.int32)
    run("tile.div", out, tv(a), tv(b))
    assert out.data.tolist() == [[3, -3, -3, 3]]


UNARY = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "recip": lambda x: 1 / x,
         "neg": np.negative, "abs": np.abs, "relu": lambda x: np.maximum(x, 0)}


@pytest.mark.parametrize("name", list(UNARY))
def test_unary(name):
    a = rand((8, 32), lo=0.1, hi=3) * (1 if name in ("exp", "log", "sqrt", "rsqrt") else np.sign(rand((8, 32))))
    a = a.astype(np.float32)
    out = blank((8, 32))
    run(f"tile.{name}", out, tv(a, (8, 30)))
    np.testing.assert_allclose(out.data[:, :30], UNARY[name](a)[:, :30], rtol=1e-6)
    assert (out.data[:, 30:] == POISON).all()


CMP = {CmpType.EQ: np.equal, CmpType.NE: np.not_equal, CmpType.LT: np.less, CmpType.LE: np.less_equal,
       CmpType.GT: np.greater, CmpType.GE: np.greater_equal}


@pytest.mark.parametrize("cmp_type", list(CMP))
def test_cmp_packs_bits_lsb_first(cmp_type):
    a = RNG.integers(0, 3, size=(4, 64)).astype(np.float32)
    b = RNG.integers(0, 3, size=(4, 64)).astype(np.float32)
    out = blank((4, 32), np.uint8)
    run("tile.cmp", out, tv(a, (4, 20)), tv(b), cmp_type=cmp_type)
    assert out.valid == (4, 3)
    truth = CMP[cmp_type](a[:, :20], b[:, :20])
    bits = np.unpackbits(out.data[:, :3], axis=1, bitorder="little")[:, :20].astype(bool)
    assert (bits == truth).all()
    j = 9  # element 9 of row 0 → bit 1 of byte 1
    assert bool(out.data[0, j // 8] >> (j % 8) & 1) == truth[0, j]


def test_cmps():
    a = np.arange(16, dtype=np.float32).reshape(1, 16)
    out = blank((1, 32), np.uint8)
    run("tile.cmps", out, tv(a), 7.5, cmp_type=CmpType.GT)
    assert out.data[0, :2].tolist() == [0, 0xFF]


@pytest.mark.parametrize("mode,expected", [
    (CastMode.rint, [2, 2, -2, -2, 1, -1]),
    (CastMode.round, [3, 2, -3, -2, 1, -1]),
    (CastMode.floor, [2, 2, -3, -3, 1, -2]),
    (CastMode.ceil, [3, 3, -2, -2, 2, -1]),
    (CastMode.trunc, [2, 2, -2, -2, 1, -1]),
])
def test_cast_float_to_int_modes(mode, expected):
    a = np.array([[2.5, 2.4, -2.5, -2.4, 1.2, -1.2]], np.float32)
    out = blank((1, 6), np.int32)
    run("tile.cast", out, tv(a), target_type=INT32, mode=mode)
    assert out.data.tolist() == [expected]


def test_cast_saturates_and_float_narrowing_modes():
    out = blank((1, 3), np.int8)
    run("tile.cast", out, tv(np.array([[300.0, -300.0, np.nan]], np.float32)), mode=CastMode.rint)
    assert out.data.tolist() == [[127, -128, 0]]
    x = np.array([[1.0 + 2 ** -12, -(1.0 + 2 ** -12)]], np.float32)      # between two fp16 neighbours
    below, above = np.float16(1.0), np.nextafter(np.float16(1.0), np.float16(2))
    for mode, want in ((CastMode.floor, [below, -above]), (CastMode.ceil, [above, -below]),
                       (CastMode.trunc, [below, -below]), (CastMode.rint, [below, -below])):
        out = blank((1, 2), np.float16)
        run("tile.cast", out, tv(x), target_type=FP16, mode=mode)
        assert out.data.tolist() == [[float(w) for w in want]], mode
    tie = np.array([[1.0 + 2 ** -11]], np.float32)                       # halfway between 1.0 (even) and 1 + ulp
    for mode, want in ((CastMode.rint, 1.0), (CastMode.round, float(above)), (CastMode.odd, float(above))):
        out = blank((1, 1), np.float16)
        run("tile.cast", out, tv(tie), target_type=FP16, mode=mode)
        assert out.data[0, 0] == want, mode
    out = blank((1, 2), np.float16)
    run("tile.cast", out, tv(x), target_type=FP16, mode=CastMode.odd)     # inexact → odd last bit
    assert out.data.tolist() == [[float(above), -float(above)]]


@pytest.mark.parametrize("kind,fn", [("sum", np.sum), ("max", np.max), ("min", np.min)])
def test_reductions_honour_valid_region(kind, fn):
    a = rand((16, 32))
    a[:, 24:] = 1e6                       # outside the valid columns: must not count
    out = blank((16, 1))
    run(f"tile.row_{kind}", out, tv(a, (12, 24)), blank((16, 32)))
    assert out.valid == (12, 1)
    np.testing.assert_allclose(out.data[:12, 0], fn(a[:12, :24], axis=1), rtol=1e-5)
    assert (out.data[12:] == POISON).all()
    out = blank((1, 32))
    run(f"tile.col_{kind}", out, tv(a, (12, 24)))
    np.testing.assert_allclose(out.data[0, :24], fn(a[:12, :24], axis=0), rtol=1e-5)


EXPAND = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "max": np.maximum,
          "min": np.minimum, "expdif": lambda a, v: np.exp(a - v)}


@pytest.mark.parametrize("kind", ["", *EXPAND])
def test_row_and_col_expand(kind):
    a = rand((8, 16))
    row, col = rand((8, 1), lo=1, hi=2), rand((1, 16), lo=1, hi=2)
    suffix = f"_{kind}" if kind else ""
    fn = EXPAND.get(kind, lambda x, v: np.broadcast_to(v, x.shape))
    out = blank((8, 16))
    run(f"tile.row_expand{suffix}", out, tv(a), tv(row))
    np.testing.assert_allclose(out.data, fn(a, row), rtol=1e-6)
    out = blank((8, 16))
    run(f"tile.col_expand{suffix}", out, tv(a, (8, 10)), tv(col))
    np.testing.assert_allclose(out.data[:, :10], fn(a, col)[:, :10], rtol=1e-6)
    assert (out.data[:, 10:] == POISON).all()


def test_expands_full_create():
    out = blank((4, 8))
    run("tile.expands", out, tv(rand((4, 8)), (2, 8)), 3.0)
    assert (out.data[:2] == 3).all() and (out.data[2:] == POISON).all()
    out = blank((4, 8), np.float16)
    run("tile.full", out, (4, 8), dtype=FP16, value=0.1)
    assert (out.data == np.float16(0.1)).all() and out.valid == (4, 8)
    out = blank((4, 8))
    run("tile.create", out, (4, 8), dtype=FP32)
    assert (out.data == POISON).all() and out.valid == (4, 8)


def test_load_pads_per_pad_value_and_store_writes_valid_region():
    g = rand((32, 32))
    out = blank((16, 16))
    run("tile.load", out, g, (8, 4), (16, 16), (10, 12), target_memory=MemorySpace.Vec)
    assert out.valid == (10, 12)
    np.testing.assert_array_equal(out.data[:10, :12], g[8:18, 4:16])
    assert (out.data[10:] == POISON).all()                 # pad null: untouched
    out = blank((16, 16))
    run("tile.load", out, g, (8, 4), (16, 16), (10, 12), pad=PadValue.max)
    assert (out.data[10:] == np.inf).all() and (out.data[:10, 12:] == np.inf).all()
    out = blank((16, 16))
    run("tile.load", out, g, (8, 4), (16, 16), (10, 12), pad=PadValue.zero)
    assert (out.data[:, 12:] == 0).all()
    dst = np.zeros((32, 32), np.float32)
    res = run("tile.store", None, tv(rand((16, 16)), (10, 12)), (4, 4), dst)
    assert res is dst and (dst[4:14, 4:16] != 0).all() and (dst[14:] == 0).all() and (dst[:, 16:] == 0).all()
    with pytest.raises(SimulationError, match="outside the tensor extent"):
        run("tile.store", None, tv(rand((16, 16))), (20, 0), dst)


def test_move_reshape_transpose_slice():
    a = rand((8, 16))
    out = blank((8, 16))
    run("tile.move", out, tv(a, (8, 4)), target_memory=MemorySpace.Mat)
    assert out.valid == (8, 4) and (out.data[:, :4] == a[:, :4]).all()
    out = blank((16, 8))
    run("tile.reshape", out, tv(a), (16, 8))
    assert (out.data == a.reshape(16, 8)).all()
    out = blank((16, 8))
    run("tile.transpose", out, tv(a, (8, 5)), 0, 1)
    assert out.valid == (5, 8) and (out.data[:5] == a[:, :5].T).all()
    out = blank((4, 8))
    run("tile.slice", out, tv(a), (4, 8), (2, 4), (3, 8))
    assert out.valid == (3, 8) and (out.data[:3] == a[2:5, 4:12]).all()


def test_assemble_fillpad_read_write():
    target = tv(np.zeros((8, 8), np.float32))
    src = tv(np.ones((2, 4), np.float32))
    res = run("tile.assemble", target, target, src, (3, 2))
    assert res is target and target.data.sum() == 8 and (target.data[3:5, 2:6] == 1).all()
    x = tv(rand((4, 8)), (2, 3))
    run("tile.fillpad", x, x, pad_value=PadValue.min)
    assert x.valid == (4, 8) and (x.data[2:] == -np.inf).all() and (x.data[:2, 3:] == -np.inf).all()
    assert np.isfinite(x.data[:2, :3]).all()
    t = tv(np.arange(12, dtype=np.float32).reshape(3, 4))
    assert run("tile.read", None, t, (2, 1)) == 9.0
    run("tile.write", t, t, (0, 0), 5.0)
    assert t.data[0, 0] == 5.0


def test_tensor_ops():
    c = run("tensor.create", None, (4, 4), dtype=FP32)
    assert np.isnan(c).all()
    ci = run("tensor.create", None, (2, 2), dtype=INT32)
    assert (ci.view(np.uint8) == 0x5A).all()
    g = np.arange(16, dtype=np.float32).reshape(4, 4)
    s = run("tensor.slice", None, g, (2, 2), (1, 1))
    assert np.shares_memory(s, g) and s.tolist() == [[5, 6], [9, 10]]
    assert run("tensor.read", None, g, (3, 2)) == 14.0 and isinstance(run("tensor.dim", None, g, 1), int)
    run("tensor.write", None, g, (0, 0), 42)
    run("tensor.assemble", None, g, np.zeros((2, 2), np.float32), (2, 2))
    assert g[0, 0] == 42 and (g[2:, 2:] == 0).all()
    assert (run("tensor.full", None, (2, 3), dtype=INT32, value=7) == 7).all()
    with pytest.raises(SimulationError, match="outside"):
        run("tensor.read", None, g, (4, 0))


def test_system_ops_and_core_identity():
    class Ctx:
        block_idx, block_num, subblock_idx = 3, 8, 1
    assert SIM_OPS["tile.get_block_idx"](Ctx(), None) == 3
    assert SIM_OPS["tile.get_block_num"](Ctx(), None) == 8
    assert SIM_OPS["tile.get_subblock_idx"](Ctx(), None) == 1
    assert SIM_OPS["system.bar_all"](Ctx(), None) is None


INT_BINARY = {"and_": (np.bitwise_and, "ands"), "or_": (np.bitwise_or, "ors"), "xor": (np.bitwise_xor, "xors"),
              "shl": (np.left_shift, "shls"), "shr": (np.right_shift, "shrs")}


@pytest.mark.parametrize("name", list(INT_BINARY))
def test_bitwise(name):
    fn, s_name = INT_BINARY[name]
    a = RNG.integers(-1000, 1000, size=(4, 16)).astype(np.int32)
    b = RNG.integers(0, 8, size=(4, 16)).astype(np.int32)
    out = blank((4, 16), np.int32)
    run(f"tile.{name}", out, tv(a), tv(b), tv(b))          # trailing scratch tile is accepted where needed
    assert (out.data == fn(a, b)).all()
    run(f"tile.{s_name}", out, tv(a), 3)
    assert (out.data == fn(a, np.int32(3))).all()
    run("tile.not_", out, tv(a))
    assert (out.data == ~a).all()


def test_rem_fmod_trig_prelu():
    a = np.array([[7.0, -7.0, 7.5, -7.5]], np.float32)
    b = np.array([[2.0, 2.0, -2.0, -2.0]], np.float32)
    out = blank((1, 4))
    run("tile.rem", out, tv(a), tv(b), blank((1, 4)))
    assert out.data.tolist() == [[1.0, 1.0, -0.5, -1.5]]        # sign of the divisor
    run("tile.fmod", out, tv(a), tv(b))
    assert out.data.tolist() == [[1.0, -1.0, 1.5, -1.5]]        # sign of the dividend
    run("tile.rems", out, tv(a), 2.0, blank((1, 4)))
    assert out.data.tolist() == [[1.0, 1.0, 1.5, 0.5]]
    # tile.sin has no simulator semantics: LowerCompositeOps expands it (tests/runtime/test_composite_trig.py)
    run("tile.lrelu", out, tv(a), 0.5)
    assert out.data.tolist() == [[7.0, -3.5, 7.5, -3.75]]
    run("tile.prelu", out, tv(a), tv(np.full((1, 4), 0.25, np.float32)), blank((1, 4)))
    assert out.data.tolist() == [[7.0, -1.75, 7.5, -1.875]]
    x = rand((4, 8), lo=0.5, hi=1.5)
    out = blank((4, 1))
    run("tile.row_prod", out, tv(x), blank((4, 8)))
    np.testing.assert_allclose(out.data[:, 0], x.prod(axis=1), rtol=1e-5)


def test_sel_and_sels_follow_the_packed_mask():
    a, b = rand((4, 40)), rand((4, 40))
    mask = blank((4, 32), np.uint8)
    run("tile.cmp", mask, tv(a), tv(b), cmp_type=CmpType.GT)
    out = blank((4, 40))
    run("tile.sel", out, mask, tv(a), tv(b), blank((4, 40)))
    assert (out.data == np.maximum(a, b)).all()
    run("tile.sels", out, mask, tv(a), blank((4, 40)), -1.0)
    assert (out.data == np.where(a > b, a, -1.0)).all()


def test_matmul_family_accumulates_in_fp32():
    a = rand((16, 32)).astype(np.float16)
    b = rand((32, 8)).astype(np.float16)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    acc = blank((16, 8))
    run("tile.matmul", acc, tv(a), tv(b))
    np.testing.assert_allclose(acc.data, ref, rtol=1e-5)
    run("tile.matmul_acc", acc, acc, tv(a), tv(b))
    np.testing.assert_allclose(acc.data, 2 * ref, rtol=1e-5)
    run("tile.matmul_acc", acc, acc, tv(a), tv(b), True)         # init_cond true restarts the sum
    np.testing.assert_allclose(acc.data, ref, rtol=1e-5)
    bias = np.arange(8, dtype=np.float32).reshape(1, 8)
    run("tile.matmul_bias", acc, tv(a), tv(b), tv(bias))
    np.testing.assert_allclose(acc.data, ref + bias, rtol=1e-5)
    part = blank((16, 8))
    run("tile.matmul", part, tv(a, (10, 20)), tv(b, (32, 6)))    # valid M, K and N only
    assert part.valid == (10, 6)
    np.testing.assert_allclose(part.data[:10, :6], a[:10, :20].astype(np.float32) @ b[:20, :6].astype(np.float32),
                               rtol=1e-5)
    i8 = blank((2, 2), np.int32)
    run("tile.matmul", i8, tv(np.full((2, 64), 127, np.int8)), tv(np.full((64, 2), 127, np.int8)))
    assert (i8.data == 127 * 127 * 64).all()


def test_concat_and_transpose_view():
    a, b = rand((4, 8)), rand((4, 16))
    out = blank((4, 24))
    run("tile.concat", out, tv(a), tv(b))
    assert (out.data == np.concatenate([a, b], axis=1)).all()
    out = blank((8, 4))
    run("tile.transpose_view", out, tv(a))
    assert (out.data == a.T).all()


# ---------------------------------------------------------------------------- through the whole pipeline
# A few kernels compiled by the Default pipeline and run on a2a3sim: the op semantics above must
# agree with what the passes and the simulator hand them (kwargs, scratch tiles, masks, memory spaces).
import pypto.language as pl  # noqa: E402
from pypto.runtime import RunConfig  # noqa: E402


@pl.jit
def _cmp_sel_cast(x: pl.Tensor, y: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a = pl.load(x, [0, 0], [32, 64])
        b = pl.load(y, [0, 0], [32, 64])
        mask = pl.cmp(a, b, cmp_type=pl.CmpType.GT)
        tmp = pl.create_tile([32, 64], dtype=pl.FP32)
        half = pl.cast(pl.tile.sel(mask, a, b, tmp), pl.FP16, mode="rint")
        pl.store(pl.maximum(pl.cast(half, pl.FP32), 0.0), [0, 0], out)
    return out


@pl.jit
def _matmul_twice(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        left = pl.move(pl.load(a, [0, 0], [32, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        right = pl.move(pl.load(b, [0, 0], [64, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        acc = pl.matmul(left, right)
        acc = pl.matmul_acc(acc, left, right)
        pl.store(acc, [0, 0], c)
    return c


@pl.jit
def _pad_transpose_colsum(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a = pl.load(x, [0, 0], [32, 64], valid_shapes=[32, 40])
        f = pl.fillpad(a, pad_value=pl.PadValue.zero)
        t = pl.transpose(pl.transpose(f, 0, 1), 0, 1)
        pl.store(pl.col_expand_add(t, pl.col_sum(t)), [0, 0], out)
    return out


def test_pipeline_cmp_sel_cast():
    x, y = rand((32, 64)), rand((32, 64))
    out = np.zeros_like(x)
    _cmp_sel_cast(x, y, out, config=RunConfig())
    np.testing.assert_array_equal(out, np.maximum(np.maximum(x, y).astype(np.float16).astype(np.float32), 0))


def test_pipeline_matmul_accumulates():
    a, b = rand((32, 64)).astype(np.float16), rand((64, 32)).astype(np.float16)
    c = np.zeros((32, 32), np.float32)
    _matmul_twice(a, b, c, config=RunConfig())
    np.testing.assert_allclose(c, 2 * (a.astype(np.float32) @ b.astype(np.float32)), rtol=1e-4, atol=1e-3)


def test_pipeline_fillpad_transpose_col_sum():
    x = rand((32, 64))
    out = np.zeros_like(x)
    _pad_transpose_colsum(x, out, config=RunConfig())
    padded = np.where(np.arange(64) < 40, x, 0).astype(np.float32)
    np.testing.assert_allclose(out, padded + padded.sum(axis=0, keepdims=True), rtol=1e-5, atol=1e-5)


@pl.jit
def _slice_reshape_assemble(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a = pl.load(x, [0, 0], [32, 64])
        lower = pl.reshape(pl.reshape(pl.slice(a, [16, 64], [16, 0]), [32, 32]), [16, 64])
        big = pl.expands(pl.create_tile([32, 64], dtype=pl.FP32), 0.0)
        big = pl.tile.assemble(big, pl.expands(lower, pl.tile.read(lower, [0, 1])), [0, 0])
        big = pl.tile.write(pl.tile.assemble(big, lower, [16, 0]), [0, 0], 7.0)
        pl.store(big, [0, 0], out)
    return out


@pl.jit
def _row_max_of_partial_tile(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a = pl.load(x, [0, 0], [16, 64], valid_shapes=[16, 50])
        m = pl.row_max(a, pl.create_tile([16, 64], dtype=pl.FP32))
        pl.store(pl.row_expand_sub(pl.fillpad(a), m), [0, 0], out)
    return out


def test_pipeline_slice_reshape_assemble_read_write():
    x = rand((32, 64))
    out = np.zeros_like(x)
    _slice_reshape_assemble(x, out, config=RunConfig())
    ref = np.zeros_like(x)
    ref[:16], ref[16:], ref[0, 0] = x[16, 1], x[16:], 7.0
    np.testing.assert_array_equal(out, ref)


def test_pipeline_row_max_ignores_columns_outside_valid():
    x = rand((16, 64))
    out = np.zeros_like(x)
    _row_max_of_partial_tile(x, out, config=RunConfig())
    padded = np.where(np.arange(64) < 50, x, 0).astype(np.float32)
    np.testing.assert_allclose(out, padded - x[:, :50].max(axis=1, keepdims=True), rtol=1e-6)
