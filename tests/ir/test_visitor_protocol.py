"""ir.IRVisitor / ir.IRMutator: the reference's hook protocol over pypto nodes."""

import pypto.language as pl
from pypto import ir
from pypto.ir.dtypes import INDEX


@pl.program
class TwoLoops:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 16])
        for i in pl.range(2):
            for j in pl.range(3):
                t = pl.add(t, t)
        out = pl.store(t, [0, 0], out)
        return out


class _OpNames(ir.IRVisitor):
    def __init__(self):
        super().__init__()
        self.names = []

    def visit_call(self, op):
        self.names.append(op.op.name)
        super().visit_call(op)


def test_call_hook_fires_at_every_depth():
    v = _OpNames()
    v.visit_program(TwoLoops)
    assert v.names == ["tile.load", "tile.add", "tile.store"]


def test_statement_hooks_see_nested_loops_through_visit_stmt():
    class Loops(ir.IRVisitor):
        count = 0

        def visit_for_stmt(self, op):
            self.count += 1
            super().visit_for_stmt(op)

    v = Loops()
    v.visit_stmt(TwoLoops.get_function("k").body)
    assert v.count == 2


def test_operator_hooks_and_generic_fallback():
    a, b = ir.Var("a", ir.ScalarType(INDEX)), ir.Var("b", ir.ScalarType(INDEX))
    expr = ir.Min(ir.Neg(a, INDEX, ir.Span.unknown()), ir.Add(a, b, INDEX, ir.Span.unknown()), INDEX,
                  ir.Span.unknown())
    assert isinstance(expr, ir.Min) and not isinstance(expr, ir.Max)
    assert isinstance(expr.lhs, ir.Neg) and isinstance(expr.lhs, ir.UnaryExpr)

    seen = []

    class Hooks(ir.IRVisitor):
        def visit_min(self, op):
            seen.append("min")
            super().visit_min(op)

        def visit_binary_expr(self, op):  # every operator's default hook ends here (min via super(), add directly)
            seen.append(op.op)
            super().visit_binary_expr(op)

        def visit_neg(self, op):
            seen.append("neg")

    Hooks().visit_expr(expr)
    assert seen == ["min", "min", "neg", "add"]


def test_mutator_rewrites_and_shares_unchanged_nodes():
    class MarkStores(ir.IRMutator):
        def visit_call(self, op):
            new = super().visit_call(op)
            if new.op.name == "tile.store":
                return ir.Call(new.op, list(new.args), dict(new.kwargs), {"marked": True}, new.type, new.span)
            return new

    after = MarkStores().visit_program(TwoLoops)
    assert after is not TwoLoops
    stores = [c for c in _calls(after) if c.op.name == "tile.store"]
    assert stores and all(c.attrs["marked"] for c in stores)
    assert all("marked" not in c.attrs for c in _calls(after) if c.op.name != "tile.store")

    class Nothing(ir.IRMutator):
        pass

    assert Nothing().visit_program(TwoLoops) is TwoLoops


def _calls(program):
    v = _Collect()
    v.visit_program(program)
    return v.calls


class _Collect(ir.IRVisitor):
    def __init__(self):
        self.calls = []

    def visit_call(self, op):
        self.calls.append(op)
        super().visit_call(op)
