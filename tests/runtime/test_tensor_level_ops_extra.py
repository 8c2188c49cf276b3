"""Tensor-level coverage, the rest of the reference's unified `pl.*` table: every op with a tile form
not exercised by test_tensor_level_ops.py, written on Tensors inside `pl.at`, converted by
ConvertTensorToTileOps and run on the simulator, compared with numpy.

The partial ops part_* have their own test (test_part_ops.py). A name that is no op is reported
as an unknown op by the DSL (last test)."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError, UnsupportedError
from pypto.runtime import run

TEMPLATE = """
import pypto.language as pl

@pl.program
class Op:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.{dt}], y: pl.Tensor[[16, 32], pl.{dt}],
             out: pl.Out[pl.Tensor[{shape}, pl.{odt}]]) -> pl.Tensor[{shape}, pl.{odt}]:
        with pl.at(level=pl.Level.CORE_GROUP):
            r: pl.Tensor[{shape}, pl.{odt}] = {expr}
            out = pl.assemble(out, r, [0, 0])
        return out
"""

F, I, S = "FP32", "INT32", "[16, 32]"
ROW, COL = "[16, 1]", "[1, 32]"


def _rowv(v):
    return v[:, None]


CASES = {
    # remainders (rem: sign of the divisor; fmod: sign of the dividend) and their scalar forms
    "rem": ("pl.rem(x, y)", S, F, lambda x, y: np.remainder(x, y)),
    "rems": ("pl.rem(x, 0.75)", S, F, lambda x, y: np.remainder(x, np.float32(0.75))),
    "fmod": ("pl.fmod(x, y)", S, F, lambda x, y: np.fmod(x, y)),
    "fmods": ("pl.fmods(x, 0.75)", S, F, lambda x, y: np.fmod(x, np.float32(0.75))),
    # leaky / parametric relu
    "lrelu": ("pl.lrelu(x, 0.125)", S, F, lambda x, y: np.where(x > 0, x, x * np.float32(0.125))),
    "prelu": ("pl.prelu(x, y)", S, F, lambda x, y: np.where(x > 0, x, x * y)),
    # compare + select (tensor.select → tile.select → LowerCompositeOps' sel / sels)
    "select": ("pl.select(pl.cmp(x, y, cmp_type=pl.CmpType.GT), x, y)", S, F, lambda x, y: np.where(x > y, x, y)),
    "select_scalar": ("pl.select(pl.cmps(x, 0.0, cmp_type=pl.CmpType.LT), x, 0.0)", S, F,
                      lambda x, y: np.where(x < 0, x, 0).astype(np.float32)),
    "select_ne": ("pl.select(pl.cmp(x, y, cmp_type=pl.CmpType.NE), y, x)", S, F, lambda x, y: y),
    # trig (composite)
    "sin": ("pl.sin(x)", S, F, lambda x, y: np.sin(x)),
    "cos": ("pl.cos(x)", S, F, lambda x, y: np.cos(x)),
    # reductions not covered elsewhere
    "row_prod": ("pl.row_prod(y)", ROW, F, lambda x, y: y.prod(1, keepdims=True)),
    "col_min": ("pl.col_min(x)", COL, F, lambda x, y: x.min(0, keepdims=True)),
    "col_prod": ("pl.col_prod(y)", COL, F, lambda x, y: y.prod(0, keepdims=True)),
    # broadcasts not covered elsewhere
    "row_expand": ("pl.row_expand(x, pl.row_min(y))", S, F, lambda x, y: np.broadcast_to(_rowv(y.min(1)), x.shape)),
    "row_expand_add": ("pl.row_expand_add(x, pl.row_max(y))", S, F, lambda x, y: x + _rowv(y.max(1))),
    "row_expand_div": ("pl.row_expand_div(x, pl.row_sum(y))", S, F, lambda x, y: x / _rowv(y.sum(1))),
    "row_expand_max": ("pl.row_expand_max(x, pl.row_min(y))", S, F, lambda x, y: np.maximum(x, _rowv(y.min(1)))),
    "row_expand_min": ("pl.row_expand_min(x, pl.row_min(y))", S, F, lambda x, y: np.minimum(x, _rowv(y.min(1)))),
    "row_expand_expdif": ("pl.row_expand_expdif(x, pl.row_max(x))", S, F, lambda x, y: np.exp(x - _rowv(x.max(1)))),
    "col_expand_sub": ("pl.col_expand_sub(x, pl.col_max(y))", S, F, lambda x, y: x - y.max(0)),
    "col_expand_mul": ("pl.col_expand_mul(x, pl.col_sum(y))", S, F, lambda x, y: x * y.sum(0)),
    "col_expand_div": ("pl.col_expand_div(x, pl.col_sum(y))", S, F, lambda x, y: x / y.sum(0)),
    "col_expand_max": ("pl.col_expand_max(x, pl.col_min(y))", S, F, lambda x, y: np.maximum(x, y.min(0))),
    "col_expand_min": ("pl.col_expand_min(x, pl.col_min(y))", S, F, lambda x, y: np.minimum(x, y.min(0))),
    "col_expand_expdif": ("pl.col_expand_expdif(x, pl.col_max(x))", S, F, lambda x, y: np.exp(x - x.max(0))),
    # views
    "reinterpret_view": ("pl.reinterpret_view(x, pl.INT32)", S, I, lambda x, y: x.view(np.int32)),
    "fillpad": ("pl.fillpad(x)", S, F, lambda x, y: x),
}
INT_CASES = {
    "rem_int": ("pl.rem(x, y)", S, I, lambda x, y: np.remainder(x, y)),
    "ands": ("pl.and_(x, 0xF0F)", S, I, lambda x, y: x & 0xF0F),
    "ors": ("pl.or_(x, 0x101)", S, I, lambda x, y: x | 0x101),
    "xors": ("pl.xor(x, 0x3C3)", S, I, lambda x, y: x ^ 0x3C3),
    "shl": ("pl.shl(x, pl.ands(y, 7))", S, I, lambda x, y: x << (y & 7)),
    "shr": ("pl.shr(x, pl.ands(y, 7))", S, I, lambda x, y: x >> (y & 7)),
    "fmod_int": ("pl.fmod(pl.neg(x), y)", S, I, lambda x, y: np.fmod(-x, y)),
}


def _check(case, in_dtype, x, y):
    expr, shape, odt, ref = case
    want = ref(x, y)
    out = np.zeros(want.shape, dtype=want.dtype)
    result = run(pl.parse(TEMPLATE.format(dt=in_dtype, shape=shape, odt=odt, expr=expr)))(x, y, out)
    got = out if result is None else result
    if np.issubdtype(want.dtype, np.floating):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", list(CASES))
def test_float_op(name):
    rng = np.random.default_rng(len(name) + 3)
    x = rng.uniform(-2, 2, (16, 32)).astype(np.float32)
    y = rng.uniform(0.5, 1.5, (16, 32)).astype(np.float32)
    _check(CASES[name], "FP32", x, y)


@pytest.mark.parametrize("name", list(INT_CASES))
def test_int_op(name):
    rng = np.random.default_rng(len(name) + 5)
    x = rng.integers(1, 1 << 12, (16, 32)).astype(np.int32)
    y = rng.integers(1, 1 << 6, (16, 32)).astype(np.int32)
    _check(INT_CASES[name], "INT32", x, y)


def test_reinterpret_view_to_a_shape_of_other_bytes_is_rejected():
    with pytest.raises(PyptoError, match="tensor.reinterpret_view: shape=\\[32, 32\\] holds 4096 bytes, the source"):
        pl.parse(TEMPLATE.format(dt=F, shape="[32, 32]", odt=I, expr="pl.reinterpret_view(x, pl.INT32, shape=[32, 32])"))


def test_select_needs_a_packed_mask_tensor():
    with pytest.raises(PyptoError, match="tensor.select: argument 'cond' must be the packed"):
        pl.parse(TEMPLATE.format(dt=F, shape=S, odt=F, expr="pl.select(x, x, y)"))


@pytest.mark.parametrize("name", ["part_addd", "row_argmaxx", "col_argminn", "sort33"])
def test_unknown_ops_are_named(name):
    with pytest.raises(PyptoError, match=f"(?i)unknown .*'pl.{name}'"):
        pl.parse(TEMPLATE.format(dt=F, shape=S, odt=F, expr=f"pl.{name}(x, y)"))
