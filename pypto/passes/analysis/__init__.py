"""Small IR helpers the passes share: statement lists, variable uses, fresh variables.

    body = as_seq([a, SeqStmts([b, c])])      # SeqStmts([a, b, c])
    uses = used_vars(stmt)                     # Vars read under stmt (binding sites excluded)
"""

from __future__ import annotations

from typing import Iterable, Optional

from pypto.ir.dtypes import INDEX
from pypto.ir.expr import BinaryExpr, Call, ConstInt, IterArg, Var
from pypto.ir.function import Function
from pypto.ir.node import DEF, Node, memo_of
from pypto.ir.stmt import SeqStmts, Stmt, flatten_to_stmts
from pypto.ir.types import Dims, ShapedType, TupleType, Type
from pypto.ir.visitor import IRMutator, IRVisitor  # noqa: F401
from pypto.ir.walks import EXPR, LEAF, STMT, VAR, collect, defined_vars, node_kind, preorder  # noqa: F401  (defined_vars, collect: re-exported)


def as_seq(stmts: Iterable[Stmt], span=None) -> SeqStmts:
    """A flat SeqStmts of the given statements (nested SeqStmts opened)."""
    flat: list = []
    for s in stmts:
        flat.extend(flatten_to_stmts(s))
    return SeqStmts(flat, span)


def as_seq_like(stmts: list, like) -> SeqStmts:
    """`as_seq(stmts, like.span)`, or `like` itself when it is a SeqStmts of exactly these statement
    objects: a body a pass left alone stays the same object, so the analyses cached on it stay valid."""
    if like.__class__ is SeqStmts and len(stmts) == len(like.stmts) and all(a is b for a, b in zip(stmts, like.stmts)):
        return like
    return as_seq(stmts, getattr(like, "span", None))


def body_list(stmt: Optional[Stmt]) -> list:
    return flatten_to_stmts(stmt)


def used_vars(node, include_types: bool = False) -> list:
    """Vars read under `node` (each once, first-use order); binding sites are not uses, but an
    IterArg's init value is (read at the loop header). include_types adds the symbolic dims in the
    types of the Vars met. A statement's answer is cached on it (nodes are immutable)."""
    order: dict = {}
    _uses_into(order, node, include_types)
    return list(order)


def _uses_into(order: dict, value, include_types: bool) -> None:
    try:
        h = _USES[value.__class__]
    except KeyError:
        h = _uses_handler(value.__class__)
    if h is not None:
        h(order, value, include_types)


def _uses_values(order: dict, values, include_types: bool) -> None:
    table = _USES
    for x in values:
        try:
            h = table[x.__class__]
        except KeyError:
            h = _uses_handler(x.__class__)
        if h is not None:
            h(order, x, include_types)


def _uses_dict(order: dict, d: dict, include_types: bool) -> None:
    if d:
        _uses_values(order, d.values(), include_types)


def _uses_var(order: dict, v: Var, include_types: bool) -> None:
    # a use of an IterArg reads the carried value, not its init (read at the loop header)
    order[v] = None
    if include_types:
        for d in vars_in_type(v.type):
            order[d] = None


def _uses_expr(order: dict, e, include_types: bool) -> None:
    """Expressions bind nothing: every Var under them is a use."""
    table = _USES
    for name in e._child_fields:
        x = getattr(e, name)
        try:
            h = table[x.__class__]
        except KeyError:
            h = _uses_handler(x.__class__)
        if h is not None:
            h(order, x, include_types)


def _uses_stmt(order: dict, s, include_types: bool) -> None:
    for v in _stmt_uses(s, include_types):
        order[v] = None


_USES: dict = {}                 # value class → how used_vars walks it (None: holds no Var)


def _uses_handler(cls):
    if cls is tuple or cls is list or cls is Dims:
        h = _uses_values
    elif cls is dict:
        h = _uses_dict
    else:
        h = {LEAF: None, VAR: _uses_var, EXPR: _uses_expr, STMT: _uses_stmt}[node_kind(cls)]
    _USES[cls] = h
    return h


def _stmt_uses(n: Node, include_types: bool) -> tuple:
    """The uses of a statement (function, ...), cached on it."""
    key = "uses+types" if include_types else "uses"
    try:
        return n._memo[key]
    except (AttributeError, KeyError):
        pass
    order: dict = {}
    for name, binds in n._use_fields:
        value = getattr(n, name)
        if not binds:
            _uses_into(order, value, include_types)
            continue
        for v in (value if isinstance(value, tuple) else (value,)):
            if isinstance(v, IterArg):
                _uses_into(order, v.init_value, include_types)
            if include_types and isinstance(v, Var):
                for d in vars_in_type(v.type):
                    order[d] = None
    got = memo_of(n)[key] = tuple(order)
    return got


def vars_in_type(t) -> list:
    """Symbolic dims (Vars) inside a type's shape / view, and in a MemRef's byte offset (cached on the type)."""
    if not isinstance(t, (ShapedType, TupleType)):
        return []
    memo = memo_of(t)
    got = memo.get("dims")
    if got is None:
        got = memo["dims"] = tuple(_vars_in_type(t))
    return list(got)


def _vars_in_type(t) -> list:
    out: list = []
    if isinstance(t, ShapedType):
        dims = list(t.shape)
        view = getattr(t, "tile_view", None) or getattr(t, "tensor_view", None)
        if view is not None:
            dims += list(view.valid_shape) + list(view.stride)
        memref = getattr(t, "memref", None)
        if memref is not None and not isinstance(memref.byte_offset, ConstInt):
            dims.append(memref.byte_offset)     # a slot picked per iteration: MemRef("ub", slots=2)[i % 2]
        for d in dims:
            out += [v for v in used_vars(d) if isinstance(v, Var)] if not isinstance(d, Var) else [d]
    elif isinstance(t, TupleType):
        for x in t.types:
            out += vars_in_type(x)
    return out


def calls_in(node) -> list:
    """Every Call under `node`, in pre-order (a statement's answer is cached on it: nodes are immutable,
    and the passes ask again about the same statements)."""
    if node_kind(node.__class__) != STMT:
        return [n for n in preorder(node) if isinstance(n, Call)]
    memo = memo_of(node)
    got = memo.get("calls")
    if got is None:
        got = memo["calls"] = tuple([n for n in preorder(node) if isinstance(n, Call)])
    return list(got)


def alpha_rename(stmt: Stmt, mapping: Optional[dict] = None) -> tuple:
    """A copy of `stmt` whose binding sites are fresh Vars (uses follow); `mapping` seeds extra substitutions.

    Returns (new_stmt, full_mapping)."""
    mapping = dict(mapping or {})
    defs = defined_vars(stmt)
    for v in defs:
        if not isinstance(v, IterArg):
            mapping[v] = Var(v.name_hint, v.type, v.span)
    for v in defs:          # a type naming a renamed scalar (a valid shape `[valid, 64]`) follows it
        if not isinstance(v, IterArg) and substitute_type(v.type, mapping) is not v.type:
            mapping[v] = Var(v.name_hint, substitute_type(v.type, mapping), v.span)
    for v in defs:
        if isinstance(v, IterArg):
            mapping[v] = IterArg(v.name_hint, substitute_type(v.type, mapping),
                                 substitute_with_types(v.init_value, mapping), v.span)
    return substitute_with_types(stmt, mapping), mapping


class _TypeWalkSubstituter(IRMutator):
    """Walks into a type's fields (shape, valid shape, strides), replacing Vars."""

    def __init__(self, mapping: dict):
        self.mapping = mapping

    def mutate(self, node):
        if isinstance(node, Type):
            return self.mutate_children(node)
        return super().mutate(node)

    def mutate_var(self, v):
        return self.mapping.get(v, v)


def substitute_type(t, mapping: dict):
    """`t` with the Vars among its symbolic dims replaced (the same object when none is mapped)."""
    if mapping and any(mapping.get(v, v) is not v for v in vars_in_type(t)):
        return _TypeWalkSubstituter(mapping).mutate(t)
    return t


class _SubstituterWithTypes(IRMutator):
    """Like `substitute`, and the result types the calls carry follow too (visitors never enter types)."""

    def __init__(self, mapping: dict):
        self.mapping = mapping

    def mutate_var(self, v):
        return self.mapping.get(v, v)

    def mutate_call(self, c):
        c = self.mutate_children(c)
        t = substitute_type(c.type, self.mapping)
        return c if t is c.type else c.replace(type=t)


def substitute_with_types(node, mapping: dict):
    """`node` with Vars replaced by `mapping`, in expressions and in the types of the calls under it."""
    return _SubstituterWithTypes(mapping).mutate(node) if mapping else node


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
