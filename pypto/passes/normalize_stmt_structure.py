"""NormalizeStmtStructure: every body field is one flat SeqStmts.

Requires: — / Produces: NormalizedStmtStructure / Invalidates: —
Reference: pass doc 91 (compiler-and-runtime.md §2, dump 06).

    before:  for i in ...: <AssignStmt>            SeqStmts([a, SeqStmts([b, c])])
    after:   for i in ...: SeqStmts([<AssignStmt>])  SeqStmts([a, b, c])
    (function, for / while, if branches and scope bodies all become flat SeqStmts)
"""

from __future__ import annotations

from pypto.ir.function import Function, Program
from pypto.ir.stmt import ForStmt, IfStmt, ScopeStmt, SeqStmts, Stmt, WhileStmt
from pypto.ir.visitor import IRMutator
from pypto.passes.analysis import as_seq
from pypto.passes.base import function_pass
from pypto.passes.properties import IRProperty, PassProperties


def _flat(body):
    if body is None:
        return None
    flat = as_seq([body], body.span)
    if isinstance(body, SeqStmts) and len(flat.stmts) == len(body.stmts) and all(
            a is b for a, b in zip(flat.stmts, body.stmts)):
        return body
    return flat


class _Normalizer(IRMutator):
    def mutate_seq_stmts(self, s: SeqStmts):
        return _flat(self.mutate_children(s))

    def mutate_stmt(self, s: Stmt):
        s = self.mutate_children(s)
        if isinstance(s, IfStmt):
            return s.replace(then_body=_flat(s.then_body), else_body=_flat(s.else_body))
        if isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
            return s.replace(body=_flat(s.body))
        return s


def normalize_body(stmt: Stmt) -> SeqStmts:
    """The statement normalized and wrapped as a flat SeqStmts (used by other passes too)."""
    return _flat(_Normalizer().mutate(stmt))


def _run(func: Function, program: Program) -> Function:
    return func.replace(body=normalize_body(func.body))


def normalize_stmt_structure():
    return function_pass("NormalizeStmtStructure", _run,
                         PassProperties(produced={IRProperty.NormalizedStmtStructure}))
