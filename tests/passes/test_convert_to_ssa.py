"""ConvertToSSA: parser-style non-SSA IR → SSA with if-phis and loop iter_args."""

import pytest

from pypto import ir
from pypto.errors import UnsupportedError
from pypto.ir import (AssignStmt, BinaryExpr, ConstInt, ForStmt, FunctionType as FT, IfStmt, IterArg, Program,
                      ReturnStmt, SeqStmts, Var, WhileStmt, YieldStmt)
from pypto.pypto_core import passes
from pass_irb import IDX, func

C = ConstInt


def add(a, b):
    return BinaryExpr("add", a, b)


def prog(params, stmts):
    return Program([func("f", params, [IDX], stmts)], "P")


def test_loop_reassignment_becomes_iter_arg():
    # x = 0; for i in range(4): x = x + i; return x
    x, i = Var("x", IDX), Var("i", IDX)
    before = prog([], [AssignStmt(x, C(0)), ForStmt(i, C(0), C(4), C(1), body=SeqStmts([AssignStmt(x, add(x, i))])),
                       ReturnStmt([x])])
    x0, i2, x2, rv = Var("x", IDX), Var("i", IDX), Var("x", IDX), Var("x", IDX)
    ia = IterArg("x", IDX, x0)
    expected = prog([], [AssignStmt(x0, C(0)),
                         ForStmt(i2, C(0), C(4), C(1), [ia], SeqStmts([AssignStmt(x2, add(ia, i2)), YieldStmt([x2])]),
                                 [rv]),
                         ReturnStmt([rv])])
    ir.assert_structural_equal(passes.convert_to_ssa()(before), expected)


def test_if_assignment_builds_phi_with_else_yield():
    # x = n; if x < 3: x = 1;  return x
    n, x = Var("n", IDX), Var("x", IDX)
    before = prog([n], [AssignStmt(x, n), IfStmt(BinaryExpr("lt", x, C(3)), SeqStmts([AssignStmt(x, C(1))])),
                        ReturnStmt([x])])
    n2, x0, x1, rv = Var("n", IDX), Var("x", IDX), Var("x", IDX), Var("x", IDX)
    expected = prog([n2], [AssignStmt(x0, n2),
                           IfStmt(BinaryExpr("lt", x0, C(3)), SeqStmts([AssignStmt(x1, C(1)), YieldStmt([x1])]),
                                  SeqStmts([YieldStmt([x0])]), [rv]),
                           ReturnStmt([rv])])
    ir.assert_structural_equal(passes.convert_to_ssa()(before), expected)


def test_value_dead_after_if_gets_no_phi():
    n, x = Var("n", IDX), Var("x", IDX)
    before = prog([n], [AssignStmt(x, n), IfStmt(BinaryExpr("lt", x, C(3)), SeqStmts([AssignStmt(x, C(1))])),
                        ReturnStmt([n])])
    after = passes.convert_to_ssa()(before)
    assert after["f"].body.stmts[1].return_vars == ()


def test_while_carries_condition_variable():
    # x = 0; while x < 10: x = x + 3; return x
    x = Var("x", IDX)
    before = prog([], [AssignStmt(x, C(0)),
                       WhileStmt(BinaryExpr("lt", x, C(10)), body=SeqStmts([AssignStmt(x, add(x, C(3)))])),
                       ReturnStmt([x])])
    x0, x1, rv = Var("x", IDX), Var("x", IDX), Var("x", IDX)
    ia = IterArg("x", IDX, x0)
    expected = prog([], [AssignStmt(x0, C(0)),
                         WhileStmt(BinaryExpr("lt", ia, C(10)), [ia],
                                   SeqStmts([AssignStmt(x1, add(ia, C(3))), YieldStmt([x1])]), [rv]),
                         ReturnStmt([rv])])
    ir.assert_structural_equal(passes.convert_to_ssa()(before), expected)


def test_ssa_input_is_unchanged():
    x0, x2, rv, i = Var("x", IDX), Var("x", IDX), Var("x", IDX), Var("i", IDX)
    ia = IterArg("x", IDX, x0)
    p = prog([], [AssignStmt(x0, C(0)),
                  ForStmt(i, C(0), C(4), C(1), [ia], SeqStmts([AssignStmt(x2, add(ia, i)), YieldStmt([x2])]), [rv]),
                  ReturnStmt([rv])])
    ir.assert_structural_equal(passes.convert_to_ssa()(p), p)


def test_loop_local_temporary_is_not_carried():
    # for i in range(4): t = i + 1   (t never read after) → no iter_args
    t, i = Var("t", IDX), Var("i", IDX)
    p = prog([], [AssignStmt(t, C(0)), ForStmt(i, C(0), C(4), C(1), body=SeqStmts([AssignStmt(t, add(i, C(1)))])),
                  ReturnStmt([C(0)])])
    loop = passes.convert_to_ssa()(p)["f"].body.stmts[1]
    assert loop.iter_args == () and loop.return_vars == ()


def test_name_first_assigned_in_loop_and_read_after_is_rejected():
    t, i = Var("t", IDX), Var("i", IDX)
    p = prog([], [ForStmt(i, C(0), C(4), C(1), body=SeqStmts([AssignStmt(t, i)])), ReturnStmt([t])])
    with pytest.raises(UnsupportedError, match="'t' is first assigned inside a loop"):
        passes.convert_to_ssa()(p)


def test_result_verifies_as_ssa():
    x, i = Var("x", IDX), Var("i", IDX)
    p = prog([], [AssignStmt(x, C(0)), AssignStmt(x, add(x, C(1))),
                  ForStmt(i, C(0), C(4), C(1), body=SeqStmts([AssignStmt(x, add(x, i))])), ReturnStmt([x])])
    assert ir.verifier.verify_property("SSAForm", p)
    assert not ir.verifier.verify_property("SSAForm", passes.convert_to_ssa()(p))


# -- parser-produced (non-SSA) programs ---------------------------------------------
import pypto.language as pl  # noqa: E402


def test_parser_while_and_break_become_ssa():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            total: pl.Scalar[pl.INDEX] = 0
            k: pl.Scalar[pl.INDEX] = 0
            while k < n:
                total = total + k
                k = k + 1
            for i in pl.range(8):
                if i == n:
                    break
                total = total + i
            return total

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            total: pl.Scalar[pl.INDEX] = 0
            k: pl.Scalar[pl.INDEX] = 0
            for (t1, k1) in pl.while_(init_values=(total, k)):
                pl.cond(k1 < n)
                t2: pl.Scalar[pl.INDEX] = t1 + k1
                k2: pl.Scalar[pl.INDEX] = k1 + 1
                t_rv, k_rv = pl.yield_(t2, k2)
            for i, (t3,) in pl.range(8, init_values=(t_rv,)):
                if i == n:
                    break
                t4: pl.Scalar[pl.INDEX] = t3 + i
                t_rv2 = pl.yield_(t4)
            return t_rv2

    ir.assert_structural_equal(passes.convert_to_ssa()(Before), Expected)


def test_reassignment_before_break_is_rejected():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            total: pl.Scalar[pl.INDEX] = 0
            for i in pl.range(8):
                total = total + i
                if i == n:
                    break
            return total

    with pytest.raises(UnsupportedError, match="'total' is re-assigned before a break"):
        passes.convert_to_ssa()(Before)


def test_a_store_result_first_bound_in_a_loop_starts_from_the_out_parameter():
    # the reference's batched QK kernel: `r = pl.store(t, [b * 16, 0], out)` per batch, `return r`
    # after the loop; the carry starts from `out` (the store target), so a zero-trip loop returns it
    import numpy as np
    from pypto.runtime import run

    @pl.program
    class Batched:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[64, 32], pl.FP32], n: pl.Scalar[pl.INDEX],
              out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
            for b in pl.range(n):
                t = pl.load(x, [b * 16, 0], [16, 32])
                r = pl.store(pl.exp(t), [b * 16, 0], out)
            return r

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 32], pl.FP32], out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) \
                -> pl.Tensor[[64, 32], pl.FP32]:
            out = self.k(x, 3, out)
            return out

    k = passes.convert_to_ssa()(Batched)["k"]
    loop = next(s for s in k.body.stmts if isinstance(s, ForStmt))
    assert [ia.init_value for ia in loop.iter_args] == [k.params[2]]
    x = np.random.default_rng(2).standard_normal((64, 32)).astype(np.float32)
    out = np.zeros((64, 32), np.float32)
    run(Batched, x, out)
    np.testing.assert_allclose(out[:48], np.exp(x[:48]), rtol=1e-5)


def test_slice_type_follows_the_renamed_bound():
    # q = 0; for i in range(2): y = x[q : n]; q = q + 1   (the extent n - q does not cancel)
    import pypto.language as pl

    @pl.program
    class Slicing:
        @pl.function
        def f(self, x: pl.Tensor[[128, 64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[128, 64], pl.FP32]:
            q_base: pl.Scalar[pl.INDEX] = 0
            for i in pl.range(2):
                y = x[q_base:n, 0:64]
                q_base = q_base + 1
            return x

    after = passes.convert_to_ssa()(Slicing)
    loop = next(s for s in after.functions["f"].body.stmts if isinstance(s, ForStmt))
    y_def = loop.body.stmts[0]
    carried_q = loop.iter_args[0]
    from pypto.passes.analysis import vars_in_type
    assert carried_q in vars_in_type(y_def.var.type), y_def.var.type
    assert carried_q in vars_in_type(y_def.value.type)
    text = after.as_python() if hasattr(after, "as_python") else str(after)
    assert "pl.dynamic" not in text
