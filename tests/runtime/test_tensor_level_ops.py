"""Tensor-level op coverage: each unified `pl.*` op with a tile form, written on Tensors inside
`pl.at`, converts (ConvertTensorToTileOps) and runs on the simulator equal to numpy."""

import numpy as np
import pytest

import pypto.language as pl
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

F, I = "FP32", "INT32"
S = "[16, 32]"
CASES = {
    # unary math
    "exp": ("pl.exp(x)", S, F, lambda x, y: np.exp(x)),
    "log": ("pl.log(y)", S, F, lambda x, y: np.log(y)),
    "sqrt": ("pl.sqrt(y)", S, F, lambda x, y: np.sqrt(y)),
    "rsqrt": ("pl.rsqrt(y)", S, F, lambda x, y: 1 / np.sqrt(y)),
    "recip": ("pl.recip(y)", S, F, lambda x, y: 1 / y),
    "abs": ("pl.abs(x)", S, F, lambda x, y: np.abs(x)),
    "neg": ("pl.neg(x)", S, F, lambda x, y: -x),
    "relu": ("pl.relu(x)", S, F, lambda x, y: np.maximum(x, 0)),
    # elementwise binary and scalar forms
    "add": ("pl.add(x, y)", S, F, lambda x, y: x + y),
    "sub": ("pl.sub(x, y)", S, F, lambda x, y: x - y),
    "mul": ("pl.mul(x, y)", S, F, lambda x, y: x * y),
    "div": ("pl.div(x, y)", S, F, lambda x, y: x / y),
    "maximum": ("pl.maximum(x, y)", S, F, np.maximum),
    "minimum": ("pl.minimum(x, y)", S, F, np.minimum),
    "adds": ("pl.add(x, 1.5)", S, F, lambda x, y: x + 1.5),
    "subs": ("pl.sub(x, 1.5)", S, F, lambda x, y: x - 1.5),
    "muls": ("pl.mul(x, 3.0)", S, F, lambda x, y: x * 3),
    "divs": ("pl.div(x, 4.0)", S, F, lambda x, y: x / 4),
    "maximums": ("pl.maximums(x, 0.25)", S, F, lambda x, y: np.maximum(x, 0.25)),
    "minimums": ("pl.minimums(x, 0.25)", S, F, lambda x, y: np.minimum(x, 0.25)),
    # reductions and broadcasts
    "row_sum": ("pl.row_sum(x)", "[16, 1]", F, lambda x, y: x.sum(1, keepdims=True)),
    "row_max": ("pl.row_max(x)", "[16, 1]", F, lambda x, y: x.max(1, keepdims=True)),
    "row_min": ("pl.row_min(x)", "[16, 1]", F, lambda x, y: x.min(1, keepdims=True)),
    "col_sum": ("pl.col_sum(x)", "[1, 32]", F, lambda x, y: x.sum(0, keepdims=True)),
    "col_max": ("pl.col_max(x)", "[1, 32]", F, lambda x, y: x.max(0, keepdims=True)),
    "row_expand_sub": ("pl.row_expand_sub(x, pl.row_max(x))", S, F, lambda x, y: x - x.max(1, keepdims=True)),
    "row_expand_mul": ("pl.row_expand_mul(x, pl.row_sum(y))", S, F, lambda x, y: x * y.sum(1, keepdims=True)),
    "col_expand_add": ("pl.col_expand_add(x, pl.col_min(y))", S, F, lambda x, y: x + y.min(0, keepdims=True)),
    "col_expand": ("pl.col_expand(x, pl.col_max(y))", S, F, lambda x, y: np.broadcast_to(y.max(0), x.shape)),
    "expands": ("pl.expands(x, 2.5)", S, F, lambda x, y: np.full_like(x, 2.5)),
    # shape / view
    "reshape": ("pl.reshape(x, [32, 16])", "[32, 16]", F, lambda x, y: x.reshape(32, 16)),
    "transpose": ("pl.transpose(x, 0, 1)", "[32, 16]", F, lambda x, y: x.T),
    "concat": ("pl.concat(x, y)", "[16, 64]", F, lambda x, y: np.concatenate([x, y], 1)),
    "slice": ("pl.slice(x, [8, 32], [4, 0])", "[8, 32]", F, lambda x, y: x[4:12]),
    # cast
    "cast": ("pl.cast(x, pl.INT32, mode=pl.CastMode.floor)", S, I, lambda x, y: np.floor(x).astype(np.int32)),
}
INT_CASES = {
    "and_": ("pl.and_(x, y)", S, I, np.bitwise_and),
    "or_": ("pl.or_(x, y)", S, I, np.bitwise_or),
    "xor": ("pl.xor(x, y)", S, I, np.bitwise_xor),
    "not_": ("pl.not_(x)", S, I, lambda x, y: ~x),
    "shls": ("pl.shls(x, 2)", S, I, lambda x, y: x << 2),
    "shrs": ("pl.shrs(x, 1)", S, I, lambda x, y: x >> 1),
}


def _program(expr, shape, out_dtype, in_dtype):
    return pl.parse(TEMPLATE.format(dt=in_dtype, shape=shape, odt=out_dtype, expr=expr))


def _check(case, in_dtype, x, y):
    expr, shape, odt, ref = case
    want = ref(x, y)
    out = np.zeros(want.shape, dtype=want.dtype)
    result = run(_program(expr, shape, odt, in_dtype))(x, y, out)
    got = out if result is None else result
    if np.issubdtype(want.dtype, np.floating):
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", list(CASES))
def test_float_op(name):
    rng = np.random.default_rng(len(name))
    x = rng.uniform(-2, 2, (16, 32)).astype(np.float32)
    y = rng.uniform(0.5, 2, (16, 32)).astype(np.float32)
    _check(CASES[name], "FP32", x, y)


@pytest.mark.parametrize("name", list(INT_CASES))
def test_int_op(name):
    rng = np.random.default_rng(len(name))
    x, y = (rng.integers(0, 1 << 12, (16, 32)).astype(np.int32) for _ in range(2))
    _check(INT_CASES[name], "INT32", x, y)
