"""Loops, branches and scopes: the statement forms and the values they carry."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.enums import ForKind, Level, SplitMode
from pypto.ir.expr import IterArg
from pypto.ir.stmt import (AssignStmt, BreakStmt, ClusterScopeStmt, ContinueStmt, ForStmt, HierarchyScopeStmt,
                           IfStmt, InCoreScopeStmt, SpmdScopeStmt, SplitAivScopeStmt, WhileStmt, YieldStmt)

DEBUG = False


def top(fn, kind):
    return [s for s in ir.flatten_to_stmts(fn.body) if isinstance(s, kind)]


def test_range_with_init_values_builds_iter_args_yield_and_return_vars():
    @pl.function(type=pl.FunctionType.InCore)
    def f(x: pl.Tensor[[64, 16], pl.FP32]) -> pl.Tensor[[64, 16], pl.FP32]:
        t0 = pl.load(x, [0, 0], [16, 16])
        for i, (acc,) in pl.range(1, 4, init_values=(t0,)):
            t = pl.load(x, [i * 16, 0], [16, 16])
            acc_next = pl.add(acc, t)
            acc_out = pl.yield_(acc_next)
        o = pl.add(acc_out, acc_out)
        return x
    loop = top(f, ForStmt)[0]
    assert [loop.start.value, loop.stop.value, loop.step.value] == [1, 4, 1]
    assert isinstance(loop.iter_args[0], IterArg) and loop.iter_args[0].init_value is top(f, AssignStmt)[0].var
    body = ir.flatten_to_stmts(loop.body)
    assert isinstance(body[-1], YieldStmt) and body[-1].values[0] is body[-2].var
    assert body[1].value.args[0] is loop.iter_args[0]
    after = top(f, AssignStmt)[-1]
    assert after.value.args[0] is loop.return_vars[0]
    assert ir.structural_equal(loop.return_vars[0].type, loop.iter_args[0].type)


@pytest.mark.parametrize("iterator, kind", [("pl.range", ForKind.Sequential), ("pl.parallel", ForKind.Parallel),
                                             ("pl.unroll", ForKind.Unroll), ("pl.pipeline", ForKind.Pipeline)])
def test_loop_kinds(iterator, kind):
    extra = ", stage=2" if kind is ForKind.Pipeline else ""
    f = pl.parse(f"@pl.function\ndef f(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:\n"
                 f"    for i in {iterator}(0, 8, 2{extra}):\n        pass\n    return n\n")
    loop = top(f, ForStmt)[0]
    assert loop.kind is kind and loop.step.value == 2
    if kind is ForKind.Pipeline:
        assert loop.attrs == {"stage": 2}


def test_runtime_bounds_are_scalars():
    @pl.function
    def f(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        for i in pl.range(n, n * 2):
            pass
        return n
    loop = top(f, ForStmt)[0]
    assert loop.start is f.params[0]


def test_loop_without_carries_rebinds_names_non_ssa():
    @pl.function(type=pl.FunctionType.InCore)
    def f(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
        acc = pl.load(x, [0], [16])
        for i in pl.range(4):
            acc = pl.add(acc, acc)
        return x
    first = top(f, AssignStmt)[0]
    inner = ir.flatten_to_stmts(top(f, ForStmt)[0].body)[0]
    assert inner.var is first.var and inner.value.args[0] is first.var


def test_if_with_yields_builds_phis_and_without_leaks_assignments():
    @pl.function
    def f(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        if n > 2:
            r = pl.yield_(n + 1)
        else:
            r = pl.yield_(n - 1)
        m: pl.Scalar[pl.INDEX] = 0
        if r == 3:
            m = r
        else:
            m = n
        return m
    phi_if, plain_if = top(f, IfStmt)
    assert len(phi_if.return_vars) == 1 and phi_if.return_vars[0].name_hint == "r"
    assert isinstance(ir.flatten_to_stmts(phi_if.else_body)[-1], YieldStmt)
    assert plain_if.return_vars == ()
    m_var = top(f, AssignStmt)[-1].var
    assert ir.flatten_to_stmts(plain_if.then_body)[0].var is m_var


def test_compile_time_if_keeps_only_the_taken_branch():
    @pl.function
    def f(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        if DEBUG:
            a = n + 1
        else:
            a = n + 2
        return a
    assert not top(f, IfStmt)
    assert top(f, AssignStmt)[0].value.rhs.value == 2


def test_while_forms_and_break_continue():
    @pl.function
    def f(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        i: pl.Scalar[pl.INDEX] = 0
        while i < n:
            i = i + 1
            if i == 3:
                break
            else:
                continue
        for (j,) in pl.while_(init_values=(i,)):
            pl.cond(j < 10)
            j_out = pl.yield_(j + 2)
        return j_out
    plain, carried = top(f, WhileStmt)
    assert plain.iter_args == () and plain.return_vars == ()
    branch = [s for s in ir.flatten_to_stmts(plain.body) if isinstance(s, IfStmt)][0]
    assert isinstance(ir.flatten_to_stmts(branch.then_body)[0], BreakStmt)
    assert isinstance(ir.flatten_to_stmts(branch.else_body)[0], ContinueStmt)
    assert carried.condition.lhs is carried.iter_args[0]
    # the loop bodies' assignments stay inside the loops; the function returns the carried loop's result
    (init,) = top(f, AssignStmt)
    assert init.var.name_hint == "i" and init.value.value == 0
    (ret,) = top(f, ir.ReturnStmt)
    assert ret.values[0] is carried.return_vars[0] and carried.return_vars[0].name_hint == "j_out"
    assert f.body.stmts[-1].values[0] is carried.return_vars[0]


def test_scopes():
    @pl.function(type=pl.FunctionType.Orchestration)
    def f(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="k"):
            y = pl.add(x, x)
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.LEFT_RIGHT)]):
            y = pl.add(y, x)
        with pl.at(level=pl.Level.HOST):
            z = pl.add(y, x)
        with pl.cluster():
            with pl.spmd(core_num=8):
                w = pl.add(z, x)
        return w
    a, b, h, c = [s for s in f.body.stmts if not isinstance(s, (AssignStmt,)) and hasattr(s, "body")]
    assert isinstance(a, InCoreScopeStmt) and a.name_hint == "k" and a.split is SplitMode.NONE
    assert isinstance(b, InCoreScopeStmt) and b.split is SplitMode.LEFT_RIGHT
    assert isinstance(h, HierarchyScopeStmt) and h.level is Level.HOST
    assert isinstance(c, ClusterScopeStmt)
    spmd = ir.flatten_to_stmts(c.body)[0]
    assert isinstance(spmd, SpmdScopeStmt) and spmd.core_num.value == 8
    # names assigned inside a scope stay visible after it (one Var per name)
    y1 = ir.flatten_to_stmts(a.body)[0].var
    assert ir.flatten_to_stmts(b.body)[0].var is y1


def test_split_aiv_region_binds_the_lane():
    @pl.function(type=pl.FunctionType.InCore)
    def f(x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            t = pl.load(x, [lane * 32, 0], [32, 64])
        return x
    region = top(f, SplitAivScopeStmt)[0]
    assert region.count == 2 and region.split is SplitMode.UP_DOWN
    load = ir.flatten_to_stmts(region.body)[0].value
    assert load.args[1].elements[0].lhs is region.lane_var


def test_augmented_assignment():
    @pl.function
    def f(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        k: pl.Scalar[pl.INDEX] = 1
        for i in pl.range(n):
            k += i
        return k
    inner = ir.flatten_to_stmts(top(f, ForStmt)[0].body)[0]
    assert inner.var is top(f, AssignStmt)[0].var and inner.value.op == "add"


def test_constant_rebinding_inside_a_loop_asks_for_an_annotation():
    with pytest.raises(pl.parser.ParserTypeError, match="compile-time constant"):
        pl.parse("@pl.function\ndef f(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:\n    k = 0\n"
                 "    for i in pl.range(n):\n        k = k + i\n    return n\n")


def test_spmd_for_form_binds_the_block_index():
    @pl.function(type=pl.FunctionType.Orchestration)
    def f(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        for b in pl.spmd(4):
            t = pl.load(x, [b * 16], [16])
        return x
    scope = f.body.stmts[0]
    assert isinstance(scope, SpmdScopeStmt) and scope.core_num.value == 4
    first, load = ir.flatten_to_stmts(scope.body)
    assert first.value.op.name == "tile.get_block_idx"
    assert load.value.args[1].elements[0].lhs is first.var


def test_incore_spelling_and_every_node_has_a_span():
    from pypto.ir.node import Node
    from pypto.ir.types import Type

    @pl.function(type=pl.FunctionType.Orchestration)
    def f(x: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
        with pl.incore():
            y = pl.add(x, x)
        for i, (acc,) in pl.range(n, init_values=(y,)):
            if i > 2:
                z = pl.yield_(acc)
            else:
                z = pl.yield_(y)
            acc_out = pl.yield_(z)
        return acc_out
    assert isinstance(f.body.stmts[0], InCoreScopeStmt)
    seen = []

    def walk(node):
        if isinstance(node, (list, tuple)):
            for x in node:
                walk(x)
            return
        if isinstance(node, dict):
            walk(list(node.values()))
            return
        if not isinstance(node, Node) or isinstance(node, Type):
            return
        seen.append(node)
        assert node.span is not None and node.span.is_known(), type(node).__name__
        assert node.span.filename == __file__
        for _, _, value in node.field_values():
            walk(value)
    walk(f)
    assert len(seen) > 20


def test_yield_targets_may_be_annotated():
    @pl.function
    def f(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[1], pl.FP32]:
        init: pl.Tensor[[1], pl.FP32] = pl.create_tensor([1], dtype=pl.FP32)
        for i, (acc,) in pl.range(64, init_values=(init,)):
            elem: pl.Tensor[[1], pl.FP32] = pl.slice(x, [1], [i])
            new_acc: pl.Tensor[[1], pl.FP32] = pl.add(acc, elem)
            acc_out: pl.Tensor[[1], pl.FP32] = pl.yield_(new_acc)
        return acc_out
    loop = top(f, ForStmt)[0]
    assert f.body.stmts[-1].values[0] is loop.return_vars[0]


def test_elif_chains_forward_their_phis():
    @pl.function
    def f(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        if n < 2:
            r = pl.yield_(n + 1)
        elif n < 5:
            r = pl.yield_(n + 2)
        else:
            r = pl.yield_(n + 3)
        return r
    outer = top(f, IfStmt)[0]
    inner = ir.flatten_to_stmts(outer.else_body)[0]
    forwarded = ir.flatten_to_stmts(outer.else_body)[-1]
    assert isinstance(forwarded, YieldStmt) and forwarded.values[0] is inner.return_vars[0]
    assert f.body.stmts[-1].values[0] is outer.return_vars[0]
    again = pl.parse(ir.python_print(f))
    ir.assert_structural_equal(f, again)


def test_range_unroll_kwarg_lands_in_attrs_and_is_validated():
    f = pl.parse("@pl.function\ndef f(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:\n"
                 "    for i in pl.range(8, unroll=4):\n        pass\n    return n\n")
    assert top(f, ForStmt)[0].attrs == {"unroll_factor": 4}
    for bad, pattern in (("unroll=0", "must be >= 1"), ("unroll=n", "compile-time constant"),
                         ("init_values=(n,), unroll=2", "cannot be combined")):
        target = "i, (a,)" if "init_values" in bad else "i"
        body = "        a2 = pl.yield_(a)\n" if "init_values" in bad else "        pass\n"
        with pytest.raises(pl.parser.ParserError, match=pattern):
            pl.parse(f"@pl.function\ndef f(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:\n"
                     f"    for {target} in pl.range(8, {bad}):\n{body}    return n\n")


def test_a_finished_loops_variable_name_takes_a_value_of_another_type():
    """`d` is first an INDEX loop var, then, in a later loop, an INT32 computed value: a new name, not a carry."""
    @pl.function(type=pl.FunctionType.InCore)
    def f(idx: pl.Tensor[[4], pl.INT32], out: pl.Out[pl.Tensor[[4], pl.INT32]]) -> pl.Tensor[[4], pl.INT32]:
        for d in pl.range(4):
            out = pl.write(out, [d], 0)
        for t in pl.range(4):
            e = pl.read(idx, [t])
            d = e // 2
            out = pl.write(out, [t], d)
        return out
    loops = [s for s in ir.flatten_to_stmts(f.body) if isinstance(s, ir.ForStmt)]
    assert len(loops) == 2
    inner = [s for s in ir.flatten_to_stmts(loops[1].body) if isinstance(s, AssignStmt) and s.var.name_hint == "d"]
    assert inner and inner[0].var.type.dtype is pl.INT32 and inner[0].var is not loops[0].loop_var


def test_returning_a_multi_result_call_returns_its_elements():
    import numpy as np

    @pl.program
    class Pair:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[8, 16], pl.FP32], a: pl.Out[pl.Tensor[[8, 16], pl.FP32]],
              b: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> tuple[pl.Tensor[[8, 16], pl.FP32], pl.Tensor[[8, 16], pl.FP32]]:
            t = pl.load(x, [0, 0], [8, 16])
            a = pl.store(pl.add(t, t), [0, 0], a)
            b = pl.store(pl.mul(t, t), [0, 0], b)
            return a, b

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[8, 16], pl.FP32], a: pl.Out[pl.Tensor[[8, 16], pl.FP32]],
                 b: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> tuple[pl.Tensor[[8, 16], pl.FP32], pl.Tensor[[8, 16], pl.FP32]]:
            return self.k(x, a, b)

    ret = ir.flatten_to_stmts(Pair.functions["main"].body)[-1]
    assert len(ret.values) == 2
    x = np.random.default_rng(2).standard_normal((8, 16)).astype(np.float32)
    a, b = ir.compile(Pair)(x)
    np.testing.assert_allclose(a, 2 * x, rtol=1e-6)
    np.testing.assert_allclose(b, x * x, rtol=1e-6)
