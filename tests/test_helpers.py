"""The shared test helpers do what they say (tests/helpers.py)."""

import numpy as np

import pypto.language as pl
from tests.helpers import f16, matmul_ref, op_calls, op_names, uniform


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 16])
        r = pl.store(pl.tile.exp(t), [0, 0], out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        r = self.k(x, out)
        return r


def test_op_names_lists_op_calls_in_order_without_function_calls():
    assert op_names(P["k"]) == ["tile.load", "tile.store", "tile.exp"]      # pre-order: a call before its operands
    assert op_names(P["main"]) == [] and op_names(P["k"].body) == op_names(P["k"])
    assert [c.op.name for c in op_calls(P["k"])] == op_names(P["k"])
    (exp,) = op_calls(P["k"], "tile.exp")
    assert exp.op.name == "tile.exp" and op_calls(P["k"], "tile.add") == []


def test_array_helpers():
    rng = np.random.default_rng(0)
    a, b = f16(rng, 4, 8), f16(rng, 8, 2)
    assert a.dtype == np.float16 and a.shape == (4, 8) and np.abs(a).max() <= 1
    np.testing.assert_array_equal(matmul_ref(a, b), a.astype(np.float32) @ b.astype(np.float32))
    u = uniform(rng, 3, 5, low=2, high=3)
    assert u.dtype == np.float32 and u.shape == (3, 5) and u.min() >= 2 and u.max() < 3
