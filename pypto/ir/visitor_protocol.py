"""The reference's visitor protocol (`ir.IRVisitor` / `ir.IRMutator`), over pypto's generic traversal.

A subclass overrides per-node hooks named after the reference's classes (`visit_call`,
`visit_for_stmt`, `visit_min`, `visit_tuple_get_item_expr`, ...) and calls `super().visit_<x>(op)`
to keep the default recursion. Entry points: `visit_program`, `visit_function`, `visit_stmt`,
`visit_expr`; the last two dispatch on the node's kind, so an override fires at any depth.
The mutator's hooks return the replacement node; unchanged subtrees are returned as they are.

pypto's own passes use `pypto.ir.visitor` (hooks found by the node's class hierarchy); these
two classes only add the reference's dispatch on top, so both styles share one IR.
"""

from __future__ import annotations

import re

from pypto.ir import expr as E
from pypto.ir import stmt as S
from pypto.ir import visitor as _base
from pypto.ir.function import Function, Program
from pypto.ir.node import Node
from pypto.ir.reference_nodes import HOOK_NAME
from pypto.ir.types import Type


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


# pypto class → the reference's hook suffix where the names differ
_RENAMED = {E.TupleGetItem: "tuple_get_item_expr", S.InCoreScopeStmt: "in_core_scope_stmt", E.IterArg: "iter_arg"}
_HOOKS: dict = {}


def hook_name(node) -> str:
    """`visit_<reference class name in snake case>` for a node."""
    cls = type(node)
    if cls in (E.BinaryExpr, E.UnaryExpr):
        ref = HOOK_NAME.get((cls, node.op))
        if ref is not None:
            return "visit_" + _snake(ref)
        return "visit_cast" if node.op == "cast" else "visit_" + _snake(cls.__name__)
    name = _HOOKS.get(cls)
    if name is None:
        name = _HOOKS[cls] = "visit_" + _RENAMED.get(cls, _snake(cls.__name__))
    return name


def _children(node):
    for _name, _kind, value in node.field_values():
        if isinstance(value, (Node, tuple, list)) and not isinstance(value, Type):
            yield _name, value


class IRVisitor(_base.IRVisitor):
    """Read-only traversal with the reference's hooks (see the module docstring)."""

    def visit(self, node):
        if isinstance(node, Program):
            return self.visit_program(node)
        if isinstance(node, Function):
            return self.visit_function(node)
        if isinstance(node, S.Stmt):
            return self.visit_stmt(node)
        if isinstance(node, E.Expr):
            return self.visit_expr(node)
        if isinstance(node, (tuple, list)):
            for n in node:
                self.visit(n)

    def visit_program(self, program: Program) -> None:
        for func in program.functions.values():
            self.visit_function(func)

    def visit_function(self, func: Function) -> None:
        for p in func.params:
            self.visit_expr(p)
        self.visit_stmt(func.body)

    def visit_stmt(self, stmt) -> None:
        if stmt is not None:
            getattr(self, hook_name(stmt), self._visit_fields)(stmt)

    def visit_expr(self, expr) -> None:
        if expr is not None:
            getattr(self, hook_name(expr), self._visit_fields)(expr)

    def _visit_fields(self, node) -> None:
        for _name, value in _children(node):
            self.visit(value)

    def visit_binary_expr(self, op) -> None:
        self._visit_fields(op)

    def visit_unary_expr(self, op) -> None:
        self._visit_fields(op)


class IRMutator(_base.IRMutator):
    """Copy-on-write rewriting with the reference's hooks (see the module docstring)."""

    def mutate(self, node):
        if isinstance(node, Program):
            return self.visit_program(node)
        if isinstance(node, Function):
            return self.visit_function(node)
        if isinstance(node, S.Stmt):
            return self.visit_stmt(node)
        if isinstance(node, E.Expr):
            return self.visit_expr(node)
        if isinstance(node, (tuple, list)):
            new = [self.mutate(n) for n in node]
            if all(a is b for a, b in zip(new, node)):
                return node
            return tuple(new) if isinstance(node, tuple) else new
        return node

    def visit_program(self, program: Program) -> Program:
        new = [self.visit_function(f) for f in program.functions.values()]
        if all(a is b for a, b in zip(new, program.functions.values())):
            return program
        return program.with_functions(new)

    def visit_function(self, func: Function) -> Function:
        return func.replace(body=self.visit_stmt(func.body))

    def visit_stmt(self, stmt):
        if stmt is None:
            return None
        return getattr(self, hook_name(stmt), self._mutate_fields)(stmt)

    def visit_expr(self, expr):
        if expr is None:
            return None
        return getattr(self, hook_name(expr), self._mutate_fields)(expr)

    def _mutate_fields(self, node):
        changes = {}
        for name, value in _children(node):
            new = self.mutate(value)
            if new is not value:
                changes[name] = new
        return node.replace(**changes) if changes else node

    def visit_binary_expr(self, op):
        return self._mutate_fields(op)

    def visit_unary_expr(self, op):
        return self._mutate_fields(op)


def _install_default_hooks() -> None:
    """Give both classes a default `visit_<x>` for every node kind, so `super().visit_<x>(op)` works."""
    names = {"visit_" + _snake(n) for n in HOOK_NAME.values()} | {"visit_cast"}
    for module in (E, S):
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, Node) and obj.__module__ == module.__name__:
                names.add("visit_" + _RENAMED.get(obj, _snake(obj.__name__)))
    names -= {"visit_expr", "visit_stmt", "visit_binary_expr", "visit_unary_expr"}
    for name in names:
        if name not in IRVisitor.__dict__:
            setattr(IRVisitor, name, IRVisitor._visit_fields)
        if name not in IRMutator.__dict__:
            setattr(IRMutator, name, IRMutator._mutate_fields)
    for ref_name in set(HOOK_NAME.values()):  # the operator hooks fall back to the generic binary / unary hook
        hook = "visit_" + _snake(ref_name)
        generic = "visit_binary_expr" if any(k[0] is E.BinaryExpr and v == ref_name for k, v in HOOK_NAME.items()) \
            else "visit_unary_expr"
        setattr(IRVisitor, hook, lambda self, op, _g=generic: getattr(self, _g)(op))
        setattr(IRMutator, hook, lambda self, op, _g=generic: getattr(self, _g)(op))


_install_default_hooks()
