"""Simplify's rewrite-rule table (pypto/passes/simplify/rules.py): each local fold is one row,
checked here with Before / Expected programs, the cases it must leave alone, and a simulator run."""

import numpy as np

import pypto.language as pl
from pypto import ir
from pypto.ir import Call
from pypto.ir.visitor import collect
from pypto.passes.simplify.rules import RULES, Rule, apply_rules, rules_by_op
from pypto.pypto_core import passes
from pypto.runtime import RunConfig, run

T = pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec]
X = pl.Tensor[[16, 64], pl.FP32]


def _simplify(program):
    return passes.simplify()(passes.convert_to_ssa()(program))


@pl.program
class Before:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: X, out: pl.Out[X]) -> X:
        t: T = pl.load(x, [0, 0], [16, 64])
        u: T = pl.tile.muls(t, 1.0)
        w: T = pl.tile.divs(pl.tile.subs(u, 0.0), 1.0)
        v: T = pl.tile.add(w, t)
        r: X = pl.store(v, [0, 0], out)
        return r


@pl.program
class Expected:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: X, out: pl.Out[X]) -> X:
        t: T = pl.load(x, [0, 0], [16, 64])
        u: T = t
        w: T = u
        v: T = pl.tile.add(w, t)
        r: X = pl.store(v, [0, 0], out)
        return r


def test_identity_scalar_ops_fold_to_their_operand():
    ir.assert_structural_equal(_simplify(Before), _simplify(Expected))


@pl.program
class Kept:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: X, out: pl.Out[X]) -> X:
        first: pl.Tile[[16, 64], pl.FP32, pl.MemRef("keep"), pl.Mem.Vec] = pl.load(x, [0, 0], [16, 64])
        copy: T = pl.tile.muls(first, 1.0)          # a copy out of a user-declared buffer
        a: T = pl.tile.muls(copy, 2.0)
        b: T = pl.tile.adds(a, 0.0)                 # -0.0 + 0.0 is +0.0: not an identity
        c: T = pl.tile.subs(b, 1.0)
        r: X = pl.store(c, [0, 0], out)
        return r


def test_non_identities_and_pinned_buffers_are_left_alone():
    after = _simplify(Kept)["k"]
    names = [c.op.name for c in collect(after.body, lambda n: isinstance(n, Call) and not n.is_function_call())]
    assert names == ["tile.load", "tile.muls", "tile.muls", "tile.adds", "tile.subs", "tile.store"]


@pl.program
class Runnable:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: X, out: pl.Out[X]) -> X:
        t: T = pl.load(x, [0, 0], [16, 64])
        acc: T = pl.tile.muls(t, 1.0)
        for i in pl.range(2):
            acc = pl.tile.add(acc, pl.tile.divs(t, 1.0))
        r: X = pl.store(acc, [0, 0], out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: X, out: pl.Out[X]) -> X:
        r = self.k(x, out)
        return r


def test_folded_program_runs_numpy_equal():
    from pypto.passes import PassManager
    lowered = PassManager().run(Runnable)["k"]
    names = [c.op.name for c in collect(lowered.body, lambda n: isinstance(n, Call) and not n.is_function_call())]
    assert "tile.muls" not in names and "tile.divs" not in names
    x = np.random.default_rng(4).standard_normal((16, 64), dtype=np.float32)
    out = np.zeros_like(x)
    run(Runnable, x, out, config=RunConfig())
    np.testing.assert_array_equal(out, x + x + x)


def test_a_rule_is_one_row_of_data():
    def double_to_add(call):                    # tile.muls(x, 2.0) → tile.add(x, x)
        x, c = call.args
        return ir.create_op_call("tile.add", [x, x], {}) if getattr(c, "value", None) == 2 else None

    t = _simplify(Kept)["k"]
    (muls2,) = [c for c in collect(t.body, lambda n: isinstance(n, Call) and not n.is_function_call())
                if c.op.name == "tile.muls" and c.args[1].value == 2]
    table = rules_by_op((*RULES, Rule("tile.muls", double_to_add, "x * 2 is x + x")))
    new = apply_rules(muls2, table)
    assert new.op.name == "tile.add" and new.args[0] is new.args[1] is muls2.args[0]
    assert apply_rules(muls2) is muls2          # the default table has no such rule
    assert all(r.why for r in RULES) and len({(r.op, r.why) for r in RULES}) == len(RULES)
