"""Generic IR traversal driven by each node's FIELDS.

IRVisitor calls `visit_<snake_name>(node)` when a subclass defines it (e.g. `visit_call`,
`visit_for_stmt`; the most specific class of the node's MRO wins, so `visit_stmt` sees every
statement without a more specific hook), otherwise walks the node's fields; types are not
descended into. IRMutator does the same with `mutate_<snake_name>`, rebuilds bottom-up and returns
the very same node (tuple, list, dict) when nothing changed, so unchanged subtrees are shared
between the input and output programs.

Speed: traversal is most of a compile's time, so each visitor class gets a dispatch table
{value class: handler} filled once per class met (a hook, the children walk, a container walk, or
nothing for names / numbers / Types); a node is walked through its class's `_child_fields`
(pypto.ir.node). Tables live on the visitor class itself, so a class defined inside a function is
freed with it. A visitor that overrides `visit` (or a mutator overriding `mutate`) is walked the
plain way — every field, each value through `self.visit` — so its override sees everything.
Hooks are resolved on a class's first visit: set them in the class body, not by patching later.
"""

from __future__ import annotations

import re

from pypto.ir.node import Node, memo_of
from pypto.ir.types import Type

_SNAKE_CACHE: dict = {}
_HOOK_NAMES: dict = {}           # (prefix, node class) → hook name: one string object per name
_CONTAINERS = (Node, list, tuple, dict)


def _snake(cls) -> str:
    name = _SNAKE_CACHE.get(cls)
    if name is None:
        name = _SNAKE_CACHE[cls] = re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower()
    return name


def _hook_name(prefix: str, cls) -> str:
    name = _HOOK_NAMES.get((prefix, cls))
    if name is None:
        name = _HOOK_NAMES[(prefix, cls)] = prefix + _snake(cls)
    return name


def _hook_of(vcls, ncls, prefix: str):
    """The function of vcls's most specific `prefix<snake>` hook for node class ncls, or None."""
    for klass in ncls.__mro__:
        if klass is Node or klass is object:
            return None
        name = _hook_name(prefix, klass)
        if getattr(vcls, name, None) is not None:
            raw = next((k.__dict__[name] for k in vcls.__mro__ if name in k.__dict__), None)
            if isinstance(raw, (staticmethod, classmethod)):
                return lambda self, node, _name=name: getattr(self, _name)(node)
            return getattr(vcls, name)
    return None


# ---------------------------------------------------------------------------------------- visitor
def _visit_seq(self, seq) -> None:
    table = self._visit_table
    for x in seq:
        try:
            h = table[x.__class__]
        except KeyError:
            h = _visit_handler(type(self), x.__class__)
        if h is not None:
            h(self, x)


def _visit_dict(self, d) -> None:
    _visit_seq(self, d.values())


def _visit_seq_plain(self, seq) -> None:
    for x in seq:
        self.visit(x)


def _visit_dict_plain(self, d) -> None:
    for x in d.values():
        self.visit(x)


def _visit_handler(vcls, cls):
    """Resolve (and remember on vcls) what visiting a value of class cls does."""
    plain = vcls._plain_walk
    if cls is tuple or cls is list:
        h = _visit_seq_plain if plain else _visit_seq
    elif cls is dict:
        h = _visit_dict_plain if plain else _visit_dict
    elif issubclass(cls, Node) and not issubclass(cls, Type):
        h = _hook_of(vcls, cls, "visit_") or vcls.visit_children
    else:
        h = None
    vcls._visit_table[cls] = h
    return h


class IRVisitor:
    _visit_table: dict = {}
    _plain_walk = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._visit_table = {}
        cls._plain_walk = cls.visit is not IRVisitor.visit

    def visit(self, node):
        try:
            h = self._visit_table[node.__class__]
        except KeyError:
            h = _visit_handler(type(self), node.__class__)
        if h is not None:
            h(self, node)

    def visit_children(self, node: Node) -> None:
        if self._plain_walk:
            for name in node._field_names:
                value = getattr(node, name)
                if isinstance(value, _CONTAINERS):
                    self.visit(value)
            return
        table = self._visit_table
        for name in node._child_fields:
            value = getattr(node, name)
            try:
                h = table[value.__class__]
            except KeyError:
                h = _visit_handler(type(self), value.__class__)
            if h is not None:
                h(self, value)


# ---------------------------------------------------------------------------------------- mutator
def _mutate_each(self, seq) -> list:
    if self._plain_walk:
        return [self.mutate(x) for x in seq]
    table, out = self._mutate_table, []
    for x in seq:
        try:
            h = table[x.__class__]
        except KeyError:
            h = _mutate_handler(type(self), x.__class__)
        out.append(x if h is None else h(self, x))
    return out


def _mutate_tuple(self, seq):
    new = _mutate_each(self, seq)
    for a, b in zip(new, seq):
        if a is not b:
            return tuple(new)
    return seq


def _mutate_list(self, seq):
    new = _mutate_each(self, seq)
    for a, b in zip(new, seq):
        if a is not b:
            return new
    return seq


def _mutate_dict(self, d):
    out = {}
    changed = False
    for k, v in d.items():
        nv = out[k] = self.mutate(v)
        changed = changed or nv is not v
    return out if changed else d


def _mutate_handler(mcls, cls):
    """Resolve (and remember on mcls) what mutating a value of class cls does (None: keep it)."""
    if cls is tuple:
        h = _mutate_tuple
    elif cls is list:
        h = _mutate_list
    elif cls is dict:
        h = _mutate_dict
    elif issubclass(cls, Node) and not issubclass(cls, Type):
        h = _hook_of(mcls, cls, "mutate_") or mcls.mutate_children
    else:
        h = None
    mcls._mutate_table[cls] = h
    return h


class IRMutator:
    _mutate_table: dict = {}
    _plain_walk = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._mutate_table = {}
        cls._plain_walk = cls.mutate is not IRMutator.mutate

    def mutate(self, node):
        try:
            h = self._mutate_table[node.__class__]
        except KeyError:
            h = _mutate_handler(type(self), node.__class__)
        return node if h is None else h(self, node)

    def mutate_children(self, node: Node) -> Node:
        changes = None
        if self._plain_walk:
            for name in node._field_names:
                value = getattr(node, name)
                if isinstance(value, _CONTAINERS):
                    nv = self.mutate(value)
                    if nv is not value:
                        changes = changes or {}
                        changes[name] = nv
        else:
            table = self._mutate_table
            for name in node._child_fields:
                value = getattr(node, name)
                try:
                    h = table[value.__class__]
                except KeyError:
                    h = _mutate_handler(type(self), value.__class__)
                if h is not None:
                    nv = h(self, value)
                    if nv is not value:
                        changes = changes or {}
                        changes[name] = nv
        return node if changes is None else node.replace(**changes)


class SplicingMutator(IRMutator):
    """An IRMutator whose statement hooks may return a SeqStmts to stand for several statements:
    a sequence that changed is rebuilt flat (nested sequences opened), an unchanged one is kept."""

    def mutate_seq_stmts(self, s):
        from pypto.ir.stmt import SeqStmts, flatten_to_stmts
        new = [self.mutate(x) for x in s.stmts]
        if all(a is b for a, b in zip(new, s.stmts)):
            return s
        return SeqStmts([y for x in new for y in flatten_to_stmts(x)], s.span)


class VarSubstituter(IRMutator):
    """Replace Vars by other expressions (a map keyed by the Var object)."""

    def __init__(self, mapping: dict):
        self.mapping = mapping

    def mutate_var(self, var):
        return self.mapping.get(var, var)


def substitute(node, mapping: dict):
    return VarSubstituter(mapping).mutate(node) if mapping else node


# ---------------------------------------------------------------------------------------- queries
# How the walks below treat a value, by its class: not an IR node (or a Type), a Var, another
# expression (walked inline), or a statement / function / program / other node (answers cached on it).
LEAF, VAR, EXPR, STMT = 0, 1, 2, 3
_KIND: dict = {}


def node_kind(cls) -> int:
    kind = _KIND.get(cls)
    if kind is None:
        from pypto.ir.expr import Expr, Var
        if not issubclass(cls, Node) or issubclass(cls, Type):
            kind = LEAF
        elif issubclass(cls, Var):
            kind = VAR
        else:
            kind = EXPR if issubclass(cls, Expr) else STMT
        kind = _KIND[cls] = kind
    return kind


def _walk(out: list, values) -> None:
    """Append to `out`, in pre-order, the IR nodes (types excluded) under `values`, a sequence of
    field values; statements contribute their cached pre-order (`preorder`)."""
    stack = list(values)
    stack.reverse()
    pop, kinds = stack.pop, _KIND
    while stack:
        n = pop()
        cls = n.__class__
        if cls is tuple or cls is list:
            stack.extend(reversed(n))
            continue
        if cls is dict:
            stack.extend(reversed(list(n.values())))
            continue
        kind = kinds.get(cls)
        if kind is None:
            kind = node_kind(cls)
        if kind == STMT:
            out.extend(preorder(n))
        elif kind != LEAF:
            out.append(n)
            fields = cls._child_fields
            for i in range(len(fields) - 1, -1, -1):
                stack.append(getattr(n, fields[i]))


def preorder(node) -> tuple:
    """Every IR node under `node` (itself included, types excluded) in pre-order. A statement's,
    function's or program's answer is cached on it, so unchanged statements are not walked again."""
    if node_kind(node.__class__) != STMT:
        out: list = []
        _walk(out, (node,))
        return tuple(out)
    memo = memo_of(node)
    got = memo.get("preorder")
    if got is None:
        out = [node]
        _walk(out, [getattr(node, name) for name in node._child_fields])
        got = memo["preorder"] = tuple(out)
    return got


def collect(node, predicate) -> list:
    """All nodes under `node` (types excluded) for which predicate(node) is true, in pre-order."""
    return [n for n in preorder(node) if predicate(n)]


def defined_vars(node) -> list:
    """Every binding site under `node` in pre-order (params, assignments, loop vars, iter args, return
    vars). Bindings live in statements and functions only (an expression binds nothing), so the walk
    visits those alone and caches each statement's answer on it."""
    return list(_defs(node))


def _defs(node) -> tuple:
    cls = node.__class__
    if cls is tuple or cls is list or cls is dict:
        out: list = []
        for x in (node.values() if cls is dict else node):
            xc = x.__class__
            if xc is tuple or xc is list or xc is dict or node_kind(xc) == STMT:
                out.extend(_defs(x))
        return tuple(out)
    if node_kind(cls) != STMT:
        return ()
    try:
        return node._memo["defs"]
    except (AttributeError, KeyError):
        pass
    out = []
    for name in cls._def_fields:
        value = getattr(node, name)
        out.extend(value if isinstance(value, tuple) else (value,))
    nested = False
    for name in cls._child_fields:
        value = getattr(node, name)
        vcls = value.__class__
        if vcls is tuple or vcls is list or vcls is dict or node_kind(vcls) == STMT:
            out.extend(_defs(value))
            nested = True
    got = tuple(out)
    if nested:                   # a leaf statement is quicker to redo than to cache
        memo_of(node)["defs"] = got
    return got
