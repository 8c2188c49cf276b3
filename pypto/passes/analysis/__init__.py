"""Small IR helpers the passes share: statement lists, variable uses, fresh variables.

    body = as_seq([a, SeqStmts([b, c])])      # SeqStmts([a, b, c])
    uses = used_vars(stmt)                     # Vars read under stmt (binding sites excluded)
"""

from __future__ import annotations

from typing import Iterable, Optional

from pypto.ir.dtypes import INDEX
from pypto.ir.expr import BinaryExpr, Call, ConstInt, IterArg, Var
from pypto.ir.function import Function
from pypto.ir.node import DEF, Node
from pypto.ir.stmt import SeqStmts, Stmt, flatten_to_stmts
from pypto.ir.types import ShapedType, TupleType, Type
from pypto.ir.visitor import IRMutator, IRVisitor


def as_seq(stmts: Iterable[Stmt], span=None) -> SeqStmts:
    """A flat SeqStmts of the given statements (nested SeqStmts opened)."""
    flat: list = []
    for s in stmts:
        flat.extend(flatten_to_stmts(s))
    return SeqStmts(flat, span)


def body_list(stmt: Optional[Stmt]) -> list:
    return flatten_to_stmts(stmt)


class _Uses(IRVisitor):
    """Records Vars in use positions (not binding sites), in first-use order."""

    def __init__(self, include_types: bool):
        self.order: dict = {}
        self.include_types = include_types

    def visit(self, n):
        if isinstance(n, Var):
            # a use of an IterArg reads the carried value, not its init (read at the loop header)
            self.order.setdefault(n, None)
            if self.include_types:
                for d in vars_in_type(n.type):
                    self.order.setdefault(d, None)
            return
        if isinstance(n, Node) and not isinstance(n, Type):
            for _name, kind, value in n.field_values():
                if kind == DEF:
                    for v in (value if isinstance(value, tuple) else (value,)):
                        if isinstance(v, IterArg):
                            self.visit(v.init_value)
                        if self.include_types and isinstance(v, Var):
                            for d in vars_in_type(v.type):
                                self.order.setdefault(d, None)
                elif isinstance(value, (Node, tuple, list, dict)):
                    self.visit(value)
            return
        super().visit(n)


def used_vars(node, include_types: bool = False) -> list:
    """Vars read under `node` (each once, first-use order); binding sites are not uses."""
    u = _Uses(include_types)
    u.visit(node)
    return list(u.order)


def vars_in_type(t) -> list:
    """Symbolic dims (Vars) inside a type's shape / view."""
    out: list = []
    if isinstance(t, ShapedType):
        dims = list(t.shape)
        view = getattr(t, "tile_view", None) or getattr(t, "tensor_view", None)
        if view is not None:
            dims += list(view.valid_shape) + list(view.stride)
        for d in dims:
            out += [v for v in used_vars(d) if isinstance(v, Var)] if not isinstance(d, Var) else [d]
    elif isinstance(t, TupleType):
        for x in t.types:
            out += vars_in_type(x)
    return out


def defined_vars(node) -> list:
    from pypto.ir.verifier import defined_vars as _dv
    return _dv(node)


def calls_in(node) -> list:
    found: list = []

    class _C(IRVisitor):
        def visit_call(self, c):
            found.append(c)
            self.visit_children(c)

    _C().visit(node)
    return found


def alpha_rename(stmt: Stmt, mapping: Optional[dict] = None) -> tuple:
    """A copy of `stmt` whose binding sites are fresh Vars (uses follow); `mapping` seeds extra substitutions.

    Returns (new_stmt, full_mapping)."""
    from pypto.ir.visitor import substitute
    mapping = dict(mapping or {})
    defs = defined_vars(stmt)
    for v in defs:
        if not isinstance(v, IterArg):
            mapping[v] = Var(v.name_hint, v.type, v.span)
    for v in defs:
        if isinstance(v, IterArg):
            mapping[v] = IterArg(v.name_hint, v.type, substitute(v.init_value, mapping), v.span)
    return substitute(stmt, mapping), mapping


class Retyper(IRMutator):
    """Gives Vars (and op-call results) new types via `new_type(old_type) -> Type | None`, consistently:
    every occurrence of one Var maps to the same new Var."""

    def __init__(self, new_type):
        self.new_type = new_type
        self.vars: dict = {}

    def var(self, v: Var) -> Var:
        got = self.vars.get(v)
        if got is not None:
            return got
        t = self.new_type(v.type)
        if isinstance(v, IterArg):
            init = self.mutate(v.init_value)
            new = v if t is None and init is v.init_value else IterArg(v.name_hint, t or v.type, init, v.span)
        else:
            new = v if t is None else Var(v.name_hint, t, v.span)
        self.vars[v] = new
        return new

    def mutate_var(self, v: Var):
        return self.var(v)

    def mutate_call(self, c: Call):
        c = self.mutate_children(c)
        t = self.new_type(c.type)
        return c if t is None else c.replace(type=t)

    def function(self, f: Function) -> Function:
        params = tuple(self.var(p) for p in f.params)
        body = self.mutate(f.body)
        rets = tuple(self.new_type(t) or t for t in f.return_types)
        if all(a is b for a, b in zip(params, f.params)) and body is f.body:
            return f
        return f.replace(params=params, body=body, return_types=rets)


def add_index(base, offset):
    """base + offset as an INDEX Expr, folding constants and a zero on either side."""
    if isinstance(offset, ConstInt) and offset.value == 0:
        return base
    if isinstance(base, ConstInt) and base.value == 0:
        return offset
    if isinstance(base, ConstInt) and isinstance(offset, ConstInt):
        return ConstInt(base.value + offset.value, INDEX)
    return BinaryExpr("add", base, offset, INDEX)


class VarMemRefs(IRMutator):
    """Gives each Var of `memref` (Var → MemRef) that MemRef in its type, consistently: every
    occurrence maps to one new Var, an IterArg keeps its (rewritten) init. Subclasses decide
    which defining calls take the new type."""

    def __init__(self, memref: dict):
        self.memref = memref
        self.vars: dict = {}

    def mutate_var(self, v: Var):
        got = self.vars.get(v)
        if got is not None:
            return got
        ref = self.memref.get(v)
        if ref is None or v.type.memref is ref:
            new = v
        elif isinstance(v, IterArg):
            new = IterArg(v.name_hint, v.type.replace(memref=ref), self.mutate(v.init_value), v.span)
        else:
            new = Var(v.name_hint, v.type.replace(memref=ref), v.span)
        self.vars[v] = new
        return new
