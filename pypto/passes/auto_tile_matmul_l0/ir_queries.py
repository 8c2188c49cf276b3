"""Small IR queries and index arithmetic shared by the AutoTileMatmulL0 modules."""

from __future__ import annotations

from typing import Optional

from pypto.ir.dtypes import INDEX
from pypto.ir.expr import BinaryExpr, Call, ConstInt, GlobalVar, Var, const
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, ScopeStmt, WhileStmt
from pypto.ir.types import ScalarType
from pypto.ir.visitor import collect_statements
from pypto.passes.analysis import as_seq, body_list, used_vars


def op_name(value) -> Optional[str]:
    if isinstance(value, Call) and not isinstance(value.op, GlobalVar):
        return value.op.name
    return None


def readers(node, var: Var) -> int:
    """How many leaf statements (assignments, yields, returns, evals) under `node` read `var`."""
    n = 0
    for x in leaf_stmts(node):
        if var in used_vars(x):
            n += 1
    return n


def leaf_stmts(node) -> list:
    out: list = []
    for s in body_list(node):
        if isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
            out.append(s.replace(body=as_seq([], s.body.span)))     # the header's reads (bounds, inits)
            out += leaf_stmts(s.body)
        elif isinstance(s, IfStmt):
            out.append(s.replace(then_body=as_seq([], None), else_body=None))
            out += leaf_stmts(s.then_body)
            if s.else_body is not None:
                out += leaf_stmts(s.else_body)
        else:
            out.append(s)
    return out


def segments(extent: int, size: int) -> list:
    """(start, stop, block size) runs covering [0, extent): the full blocks, then the partial one."""
    full = extent // size * size
    runs = [(0, full, size)] if full else []
    if full < extent:
        runs.append((full, extent, extent - full))
    return runs


def index_type():
    return ScalarType(INDEX)


def plus(base, offset, span):
    if isinstance(base, ConstInt) and base.value == 0:
        return offset
    if isinstance(base, ConstInt) and isinstance(offset, ConstInt):     # the parser folds `256 + 352`
        return const(base.value + offset.value, span=span)
    return BinaryExpr("add", base, offset, INDEX, span)


def all_assigns(node) -> list:
    """Every AssignStmt under `node`, in pre-order."""
    return collect_statements(node, lambda n: isinstance(n, AssignStmt))
