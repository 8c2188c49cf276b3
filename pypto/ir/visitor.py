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
(pypto.ir.node). A class whose hooks are all for statements (or functions, programs) does not
enter expressions at all: no hook could fire there and nothing could change. Tables live on the
visitor class itself, so a class defined inside a function is freed with it. A visitor that overrides `visit` (or a mutator overriding `mutate`) is walked the
plain way — every field, each value through `self.visit` — so its override sees everything.
Hooks are collected when a class is defined: set them in the class body, not by patching later.
The cached whole-subtree queries (preorder, collect, defined_vars) live in pypto.ir.walks and are
re-exported here.
"""

from __future__ import annotations

import re

from pypto.ir.node import Node
from pypto.ir.stmt import SeqStmts, Stmt, flatten_to_stmts
from pypto.ir.types import Dims, Type
# whole-subtree queries, cached on the nodes (re-exported: passes import them from here)
from pypto.ir.walks import (EXPR, LEAF, STMT, VAR, collect, collect_statements, defined_vars,  # noqa: F401
                             node_kind, preorder)

_SNAKE_CACHE: dict = {}
_HOOK_NAMES: dict = {}           # (prefix, node class) → its hook names: one string object per name
_CONTAINERS = (Node, list, tuple, dict)


def _snake(cls) -> str:
    name = _SNAKE_CACHE.get(cls)
    if name is None:
        name = _SNAKE_CACHE[cls] = re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower()
    return name


def _hook_names(prefix: str, ncls) -> tuple:
    """The hook names for node class ncls, most specific first (its MRO up to Node)."""
    names = _HOOK_NAMES.get((prefix, ncls))
    if names is None:
        names = []
        for klass in ncls.__mro__:
            if klass is Node or klass is object:
                break
            names.append(prefix + _snake(klass))
        names = _HOOK_NAMES[(prefix, ncls)] = tuple(names)
    return names


def _class_hooks(vcls, prefix: str) -> dict:
    """{hook name: attribute as defined} of a visitor class and its bases (the subclass's wins)."""
    hooks: dict = {}
    for klass in reversed(vcls.__mro__[:-1]):          # object has no hooks
        for name, raw in vars(klass).items():
            if name.startswith(prefix):
                hooks[name] = raw
    return hooks


def _hook_of(vcls, ncls, prefix: str, hooks: dict):
    """The function of vcls's most specific `prefix<snake>` hook for node class ncls, or None."""
    for name in _hook_names(prefix, ncls):
        raw = hooks.get(name)
        if raw is not None:
            if isinstance(raw, (staticmethod, classmethod)):
                return lambda self, node, _name=name: getattr(self, _name)(node)
            return getattr(vcls, name)
    return None


def _statement_hook_names(prefix: str) -> set:
    """The hook names that can only be reached outside expressions: those of the statement classes,
    functions and programs, and the children walk itself."""
    from pypto.ir.function import Function, Program
    names = {prefix + "children", prefix + _snake(Function), prefix + _snake(Program)}
    todo = [Stmt]
    while todo:
        klass = todo.pop()
        todo += klass.__subclasses__()
        names.add(prefix + _snake(klass))
    return names


def _skips_expressions(wcls, prefix: str, hooks: dict) -> bool:
    """Whether a visitor / mutator class can leave every expression alone: it walks the usual way (no
    override of the walk) and has hooks for statement-like nodes only, so entering an expression
    could neither call a hook nor change a node. Any other hook name counts as an expression hook."""
    cached = wcls.__dict__.get("_skips_expr")
    if cached is None:
        walk = IRVisitor.visit_children if prefix == "visit_" else IRMutator.mutate_children
        own_walk = getattr(wcls, prefix + "children") is walk
        cached = (not wcls._plain_walk and own_walk
                  and all(name in _statement_hook_names(prefix) for name in hooks))
        wcls._skips_expr = cached
    return cached


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
    if cls is tuple or cls is list or cls is Dims:
        h = _visit_seq_plain if plain else _visit_seq
    elif cls is dict:
        h = _visit_dict_plain if plain else _visit_dict
    elif issubclass(cls, Node) and not issubclass(cls, Type):
        h = _hook_of(vcls, cls, "visit_", vcls._visit_hooks)
        if h is None:
            # a node class with no child fields (Var, ConstInt, ...) has nothing to walk, nor has an
            # expression for a visitor of statements only: skip the call
            bare = not plain and vcls.visit_children is IRVisitor.visit_children and (
                not cls._child_fields or (node_kind(cls) != STMT and _skips_expressions(vcls, "visit_", vcls._visit_hooks)))
            h = None if bare else vcls.visit_children
    else:
        h = None
    vcls._visit_table[cls] = h
    return h


class IRVisitor:
    _visit_table: dict = {}
    _visit_hooks: dict = {}
    _plain_walk = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._visit_table = {}
        cls._visit_hooks = _class_hooks(cls, "visit_")
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
def _mutate_each(self, seq):
    """The mutated elements as a list, or None when every element came back unchanged."""
    if self._plain_walk:
        new = [self.mutate(x) for x in seq]
        return new if any(a is not b for a, b in zip(new, seq)) else None
    table, out = self._mutate_table, None
    for i, x in enumerate(seq):
        try:
            h = table[x.__class__]
        except KeyError:
            h = _mutate_handler(type(self), x.__class__)
        nx = x if h is None else h(self, x)
        if out is not None:
            out.append(nx)
        elif nx is not x:
            out = list(seq[:i])
            out.append(nx)
    return out


def _mutate_tuple(self, seq):
    new = _mutate_each(self, seq)
    return seq if new is None else (Dims(new) if type(seq) is Dims else tuple(new))


def _mutate_list(self, seq):
    new = _mutate_each(self, seq)
    return seq if new is None else new


def _mutate_dict(self, d):
    if not d:
        return d
    if self._plain_walk:
        out = {}
        changed = False
        for k, v in d.items():
            nv = out[k] = self.mutate(v)
            changed = changed or nv is not v
        return out if changed else d
    table, new = self._mutate_table, None          # values are mostly plain (numbers, enums): no call
    for k, v in d.items():
        try:
            h = table[v.__class__]
        except KeyError:
            h = _mutate_handler(type(self), v.__class__)
        if h is not None:
            nv = h(self, v)
            if nv is not v:
                if new is None:
                    new = {}
                new[k] = nv
    if new is None:
        return d
    return {k: new[k] if k in new else v for k, v in d.items()}


def _mutate_handler(mcls, cls):
    """Resolve (and remember on mcls) what mutating a value of class cls does (None: keep it)."""
    if cls is tuple or cls is Dims:
        h = _mutate_tuple
    elif cls is list:
        h = _mutate_list
    elif cls is dict:
        h = _mutate_dict
    elif issubclass(cls, Node) and not issubclass(cls, Type):
        h = _hook_of(mcls, cls, "mutate_", mcls._mutate_hooks)
        if h is None:
            # a node class with no child fields comes back as it is, and so does an expression for a
            # mutator of statements only: skip the call
            bare = not mcls._plain_walk and mcls.mutate_children is IRMutator.mutate_children and (
                not cls._child_fields
                or (node_kind(cls) != STMT and _skips_expressions(mcls, "mutate_", mcls._mutate_hooks)))
            h = None if bare else mcls.mutate_children
    else:
        h = None
    mcls._mutate_table[cls] = h
    return h


class IRMutator:
    _mutate_table: dict = {}
    _mutate_hooks: dict = {}
    _plain_walk = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._mutate_table = {}
        cls._mutate_hooks = _class_hooks(cls, "mutate_")
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
