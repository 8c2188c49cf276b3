"""Generic IR traversal driven by each node's FIELDS.

IRVisitor calls `visit_<snake_name>(node)` when a subclass defines it (e.g. `visit_call`,
`visit_for_stmt`), otherwise walks the node's fields; types are not descended into.
IRMutator rebuilds bottom-up and returns the very same node when nothing changed, so
unchanged subtrees are shared between the input and output programs.
"""

from __future__ import annotations

import re

from pypto.ir.node import Node
from pypto.ir.types import Type

_SNAKE_CACHE: dict = {}


def _snake(cls) -> str:
    name = _SNAKE_CACHE.get(cls)
    if name is None:
        name = _SNAKE_CACHE[cls] = re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower()
    return name


_HOOK_NAMES: dict = {}


def _hook(obj, cls, prefix: str):
    """The most specific visit_/mutate_ hook for cls (walking its MRO), or None.

    Hooks are methods of the visitor's class, so the name found for (visitor class, node class)
    is cached: a pass visits tens of thousands of nodes and the MRO walk dominated compile time."""
    key = (type(obj), cls, prefix)
    name = _HOOK_NAMES.get(key, "")
    if name == "":
        name = None
        for klass in cls.__mro__:
            if klass is Node or klass is object:
                break
            candidate = f"{prefix}{_snake(klass)}"
            if getattr(type(obj), candidate, None) is not None:
                name = candidate
                break
        _HOOK_NAMES[key] = name
    return None if name is None else getattr(obj, name)


class IRVisitor:
    def visit(self, node):
        if node is None:
            return
        if isinstance(node, (list, tuple)):
            for n in node:
                self.visit(n)
            return
        if isinstance(node, dict):
            for n in node.values():
                self.visit(n)
            return
        if not isinstance(node, Node) or isinstance(node, Type):
            return
        hook = _hook(self, type(node), "visit_")
        if hook is not None:
            hook(node)
        else:
            self.visit_children(node)

    def visit_children(self, node: Node) -> None:
        for _name, _kind, value in node.field_values():
            if isinstance(value, (Node, list, tuple, dict)):
                self.visit(value)


class IRMutator:
    def mutate(self, node):
        if node is None:
            return None
        if isinstance(node, tuple):
            new = tuple(self.mutate(n) for n in node)
            return node if all(a is b for a, b in zip(new, node)) else new
        if isinstance(node, list):
            return [self.mutate(n) for n in node]
        if isinstance(node, dict):
            changed = False
            out = {}
            for k, v in node.items():
                nv = self.mutate(v)
                changed |= nv is not v
                out[k] = nv
            return out if changed else node
        if not isinstance(node, Node) or isinstance(node, Type):
            return node
        hook = _hook(self, type(node), "mutate_")
        if hook is not None:
            return hook(node)
        return self.mutate_children(node)

    def mutate_children(self, node: Node) -> Node:
        changes = {}
        for name, _kind, value in node.field_values():
            if isinstance(value, (Node, tuple, list, dict)):
                nv = self.mutate(value)
                if nv is not value:
                    changes[name] = nv
        return node.replace(**changes) if changes else node


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


def collect(node, predicate) -> list:
    """All nodes under `node` (types excluded) for which predicate(node) is true, in pre-order."""
    found = []

    class _C(IRVisitor):
        def visit(self, n):
            if isinstance(n, Node) and not isinstance(n, Type) and predicate(n):
                found.append(n)
            super().visit(n)

    _C().visit(node)
    return found
