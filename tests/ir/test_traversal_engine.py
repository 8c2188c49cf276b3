"""The traversal engine (pypto.ir.visitor): hook dispatch, the plain walk of visitors that override
visit / mutate, identity-preserving mutation, and the cached analyses (collect / preorder,
defined_vars, used_vars) checked against straightforward reference walks over every program a
pass pipeline produces for a few kernels."""

import gc
import weakref

import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.dtypes import FP32, INDEX
from pypto.ir.expr import Expr, IterArg, Var
from pypto.ir.node import DEF, PLAIN_FIELD_NAMES, Node
from pypto.ir.types import ScalarType, TileType, Type
from pypto.ir.visitor import IRMutator, IRVisitor
from pypto.ir.walks import collect, defined_vars, preorder
from pypto.passes import PassContext, PassManager, VerificationLevel
from pypto.passes.analysis import used_vars, vars_in_type

_LOOP = '''
import pypto.language as pl


@pl.program
class Loop:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 128], pl.FP32], n: pl.Scalar[pl.INDEX],
             out: pl.Out[pl.Tensor[[16, 128], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            acc = pl.load(a, [0, 0], [16, 128])
            for i in pl.range(1, 4):
                t = pl.load(a, [i * 16, 0], [16, 128])
                if i == n:
                    acc = pl.sub(acc, t)
                else:
                    acc = pl.add(acc, t)
            out = pl.store(acc, [0, 0], out)
        return out
'''

_MIXED = '''
import pypto.language as pl


@pl.program
class Mixed:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 32], pl.FP16], b: pl.Tensor[[32, 32], pl.FP16],
             out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            left = pl.move(pl.load(a, [0, 0], [32, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
            right = pl.move(pl.load(b, [0, 0], [32, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
            acc = pl.move(pl.matmul(left, right), target_memory=pl.Mem.Vec)
            out = pl.store(pl.exp(acc), [0, 0], out)
        return out
'''


def _stages(src: str) -> list:
    """The program after the frontend and after every pass of the Default pipeline."""
    program = pl.parse(src)
    out = [program]
    with PassContext(verification_level=VerificationLevel.NONE, platform="a2a3"):
        for p in PassManager.get_strategy().passes:
            program = p(program)
            out.append(program)
    return out


@pytest.fixture(scope="module")
def corpus() -> list:
    """Every function of every stage, plus each function's statements."""
    nodes = []
    for src in (_LOOP, _MIXED):
        for program in _stages(src):
            for f in program.functions.values():
                nodes.append(f)
                nodes += [n for n in _ref_preorder(f.body) if isinstance(n, ir.Stmt)]
    return nodes


# ----------------------------------------------------------------- reference walks (every field)
def _values(x):
    if isinstance(x, (tuple, list)):
        return list(x)
    if isinstance(x, dict):
        return list(x.values())
    return [x]


def _ref_preorder(x) -> list:
    if isinstance(x, (tuple, list, dict)):
        return [n for v in _values(x) for n in _ref_preorder(v)]
    if not isinstance(x, Node) or isinstance(x, Type):
        return []
    return [x] + [n for _name, _kind, v in x.field_values() for n in _ref_preorder(v)]


def _ref_defined(x) -> list:
    return [v for n in _ref_preorder(x) for _name, kind, value in n.field_values() if kind == DEF
            for v in (value if isinstance(value, tuple) else (value,))]


def _ref_uses(x, include_types: bool, order: dict) -> None:
    if isinstance(x, (tuple, list, dict)):
        for v in _values(x):
            _ref_uses(v, include_types, order)
    elif isinstance(x, Var):
        order.setdefault(x, None)
        for d in (vars_in_type(x.type) if include_types else ()):
            order.setdefault(d, None)
    elif isinstance(x, Node) and not isinstance(x, Type):
        for _name, kind, value in x.field_values():
            if kind != DEF:
                _ref_uses(value, include_types, order)
                continue
            for v in (value if isinstance(value, tuple) else (value,)):
                if isinstance(v, IterArg):
                    _ref_uses(v.init_value, include_types, order)
                for d in (vars_in_type(v.type) if include_types and isinstance(v, Var) else ()):
                    order.setdefault(d, None)


# ----------------------------------------------------------------- cached analyses = reference walks
def test_preorder_collect_and_defined_vars_match_a_walk_of_every_field(corpus):
    for node in corpus:
        want = _ref_preorder(node)
        assert list(preorder(node)) == want
        assert list(preorder(node)) == want                          # the cached answer
        assert collect(node, lambda n: isinstance(n, ir.Call)) == [n for n in want if isinstance(n, ir.Call)]
        assert defined_vars(node) == _ref_defined(node) == defined_vars(node)


def test_used_vars_match_a_walk_of_every_field(corpus):
    for node in corpus:
        for include_types in (False, True):
            want: dict = {}
            _ref_uses(node, include_types, want)
            assert used_vars(node, include_types) == list(want) == used_vars(node, include_types)


def test_plain_fields_hold_no_ir_node_but_types(corpus):
    """The engine skips fields named in PLAIN_FIELD_NAMES; they must never hold a node it would enter."""
    for node in corpus:
        for n in _ref_preorder(node):
            for name in n._field_names:
                if name in PLAIN_FIELD_NAMES:
                    bad = [v for v in _values(getattr(n, name)) if isinstance(v, Node) and not isinstance(v, Type)]
                    assert not bad, (type(n).__name__, name, bad)


def _node_classes(cls=Node):
    for sub in cls.__subclasses__():
        yield sub
        yield from _node_classes(sub)


def test_expressions_bind_nothing():
    """defined_vars / used_vars walk expressions without looking for binding sites."""
    for cls in _node_classes():
        if issubclass(cls, Expr):
            assert cls._def_fields == (), cls.__name__


def test_a_replaced_node_starts_with_an_empty_cache():
    x = Var("x", ScalarType(INDEX))
    body = ir.SeqStmts([ir.AssignStmt(x, ir.ConstInt(1)), ir.ReturnStmt([x])])
    assert defined_vars(body) == [x]
    y = Var("y", ScalarType(INDEX))
    changed = body.replace(stmts=(ir.AssignStmt(y, ir.ConstInt(2)), ir.ReturnStmt([y])))
    assert defined_vars(changed) == [y] and used_vars(changed) == [y]


# ----------------------------------------------------------------- dispatch
def _tile_var(name="t"):
    return Var(name, TileType([16, 16], FP32))


def test_the_most_specific_hook_of_the_node_class_wins():
    x = Var("x", ScalarType(INDEX))
    body = ir.SeqStmts([ir.AssignStmt(x, ir.ConstInt(1)), ir.EvalStmt(x), ir.ReturnStmt([x])])
    seen = []

    class Stmts(IRVisitor):
        def visit_stmt(self, s):
            seen.append(type(s).__name__)
            self.visit_children(s)

        def visit_eval_stmt(self, s):
            seen.append("eval!")

    Stmts().visit(body)
    assert seen == ["SeqStmts", "AssignStmt", "eval!", "ReturnStmt"]


def test_static_method_hooks_and_containers_are_dispatched():
    seen = []

    class Names(IRVisitor):
        @staticmethod
        def visit_var(v):
            seen.append(v.name_hint)

    Names().visit([(Var("a", ScalarType(INDEX)),), {"k": Var("b", ScalarType(INDEX))}, "text", None, 3])
    assert seen == ["a", "b"]


def test_a_visitor_overriding_visit_sees_every_field_value_including_types():
    t = _tile_var()
    seen = []

    class All(IRVisitor):
        def visit(self, n):
            seen.append(type(n).__name__)
            super().visit(n)

    All().visit(ir.EvalStmt(t))
    assert seen == ["EvalStmt", "Var", "TileType"]       # the type is offered, but not walked into


def test_a_class_defined_per_call_is_freed_with_its_dispatch_table():
    def one_walk():
        class Local(IRVisitor):
            def visit_var(self, v):
                pass

        Local().visit(ir.EvalStmt(_tile_var()))
        return weakref.ref(Local)

    ref = one_walk()
    gc.collect()
    assert ref() is None


# ----------------------------------------------------------------- mutation
def test_the_mutator_returns_the_same_objects_when_nothing_changes():
    program = pl.parse(_LOOP)
    assert IRMutator().mutate(program) is program
    value = (program, [program], {"p": program})
    assert IRMutator().mutate(value) is value
    assert IRMutator().mutate(value[1]) is value[1]


def test_a_changed_leaf_rebuilds_its_path_and_shares_the_rest():
    x, y = Var("x", ScalarType(INDEX)), Var("y", ScalarType(INDEX))
    keep = ir.AssignStmt(y, ir.ConstInt(1))
    body = ir.SeqStmts([keep, ir.EvalStmt(x)])

    class Rename(IRMutator):
        def mutate_var(self, v):
            return y if v is x else v

    new = Rename().mutate(body)
    assert new is not body and new.stmts[0] is keep and new.stmts[1].expr is y


def test_a_mutator_overriding_mutate_can_descend_into_types():
    n, m = Var("n", ScalarType(INDEX)), Var("m", ScalarType(INDEX))
    t = Var("t", TileType([n, 16], FP32))

    class IntoTypes(IRMutator):
        def mutate(self, node):
            return self.mutate_children(node) if isinstance(node, Type) else super().mutate(node)

        def mutate_var(self, v):
            return m if v is n else v.replace(type=self.mutate(v.type))

    new = IntoTypes().mutate(ir.EvalStmt(t))
    assert new.expr.type.shape[0] is m
