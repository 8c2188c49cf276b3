"""FlattenCallExpr binds `return self.kernel(...)` of an orchestration function to a Var (Before / Expected),
so later passes, the simulator and codegen only meet returned Vars."""

from __future__ import annotations

import numpy as np

import pypto.language as pl
from pypto import ir
from pypto.ir.expr import Call
from pypto.ir.stmt import ReturnStmt
from pypto.pypto_core import passes


@pl.program
class Before:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[8, 16], pl.FP32],
          y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [8, 16])
        y = pl.store(pl.add(t, t), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(self, x: pl.Tensor[[8, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        return self.k(x, y)


@pl.program
class Expected:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[8, 16], pl.FP32],
          y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [8, 16])
        t1 = pl.add(t, t)
        y = pl.store(t1, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(self, x: pl.Tensor[[8, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        r = self.k(x, y)
        return r


def _front(p):
    return passes.normalize_stmt_structure()(passes.convert_to_ssa()(p))


def test_returned_kernel_call_is_bound_to_a_var():
    after = passes.flatten_call_expr()(_front(Before))
    ir.assert_structural_equal(after, _front(Expected))
    (ret,) = [s for s in after.get_function("orch").body.stmts if isinstance(s, ReturnStmt)]
    assert not any(isinstance(v, Call) for v in ret.values)
    assert not ir.verifier.verify_property("NoNestedCalls", after)


def test_returned_op_call_stays_in_place():
    @pl.program
    class OpReturn:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[8, 16], pl.FP32]) -> pl.Tensor[[8, 16], pl.FP32]:
            return pl.add(x, x)

    after = passes.flatten_call_expr()(_front(OpReturn))
    (ret,) = after.get_function("k").body.stmts
    assert isinstance(ret.values[0], Call) and ret.values[0].op.name == "tensor.add"


def test_tail_call_orchestration_runs_on_the_simulator():
    c = ir.compile(Before, platform="a2a3sim")
    x = np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)
    y = np.zeros_like(x)
    c(x, y)
    np.testing.assert_allclose(y, x + x, rtol=1e-6)
