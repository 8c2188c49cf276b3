"""FlattenCallExpr: three-address form — no call nested inside another call's arguments, a
condition, a loop bound or a scalar operand; each nested call is hoisted into a fresh AssignStmt.

Requires: SSAForm, NormalizedStmtStructure / Produces: NoNestedCalls / Invalidates: —
Reference: pass doc 06 (compiler-and-runtime.md §2, dump 07).

    before:  y = pl.tile.add(pl.tile.load(x, ...), b)
    after:   t = pl.tile.load(x, ...)
             y = pl.tile.add(t, b)

A function call returned directly (`return self.kernel(...)`, the @pl.jit orchestrations' style) is
bound to a Var first, so every later pass and the simulator see `r = self.kernel(...); return r`.
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.expr import BinaryExpr, Call, IterArg, MakeTuple, TupleGetItem, UnaryExpr, Var
from pypto.ir.visitor import substitute
from pypto.ir.function import Function, Program
from pypto.ir.stmt import (AssignStmt, EvalStmt, ForStmt, IfStmt, ReturnStmt, ScopeStmt, SeqStmts, Stmt, WhileStmt,
                           YieldStmt)
from pypto.ir.types import TupleType
from pypto.ir.verifier import _has_call
from pypto.passes.analysis import as_seq, as_seq_like, body_list
from pypto.passes.base import function_pass
from pypto.passes.properties import IRProperty, PassProperties


def _flatten(e, pre: list, top: bool):
    """`e` with nested calls hoisted into `pre`; a call at the top position stays in place."""
    if isinstance(e, Call):
        args = tuple(_flatten(a, pre, False) for a in e.args)
        c = e.replace(args=args) if any(a is not b for a, b in zip(args, e.args)) else e
        if top:
            return c
        tmp = Var("t", c.type, c.span)
        pre.append(AssignStmt(tmp, c, c.span))
        return tmp
    if isinstance(e, MakeTuple):
        elems = tuple(_flatten(x, pre, False) for x in e.elements)
        return e if all(a is b for a, b in zip(elems, e.elements)) else MakeTuple(elems, e.span)
    if isinstance(e, BinaryExpr):
        lhs, rhs = _flatten(e.lhs, pre, False), _flatten(e.rhs, pre, False)
        return e if lhs is e.lhs and rhs is e.rhs else e.replace(lhs=lhs, rhs=rhs)
    if isinstance(e, UnaryExpr):
        x = _flatten(e.operand, pre, False)
        return e if x is e.operand else e.replace(operand=x)
    if isinstance(e, TupleGetItem):
        t = _flatten(e.tuple, pre, True)
        return e if t is e.tuple else e.replace(tuple=t)
    return e


def _returned(v, pre: list) -> list:
    """`return self.kernel(...)` (an orchestration's tail call) → bind the call, return its value(s) as Vars."""
    if not (isinstance(v, Call) and v.is_function_call()):
        return [_flatten(v, pre, True)]
    tmp = _flatten(v, pre, False)
    if not isinstance(tmp.type, TupleType):
        return [tmp]
    items = []
    for i in range(len(tmp.type.types)):
        item = Var("ret", tmp.type.types[i], v.span)
        pre.append(AssignStmt(item, TupleGetItem(tmp, i, v.span), v.span))
        items.append(item)
    return items


def _hoist_inits(loop, pre: list):
    """Loop-carried init values that are calls are computed before the loop."""
    mapping = {}
    for ia in loop.iter_args:
        init = _flatten(ia.init_value, pre, False)
        if init is not ia.init_value:
            mapping[ia] = IterArg(ia.name_hint, ia.type, init, ia.span)
    return substitute(loop, mapping) if mapping else loop


def _body(stmt) -> SeqStmts:
    out: list = []
    for s in body_list(stmt):
        out += _stmt(s)
    return as_seq_like(out, stmt)


def _stmt(s: Stmt) -> list:
    pre: list = []
    if isinstance(s, AssignStmt):
        new = s.replace(value=_flatten(s.value, pre, True))
    elif isinstance(s, EvalStmt):
        new = s.replace(expr=_flatten(s.expr, pre, True))
    elif isinstance(s, ReturnStmt):
        vals = tuple(x for v in s.values for x in _returned(v, pre))
        new = s.replace(values=vals) if len(vals) != len(s.values) or any(
            a is not b for a, b in zip(vals, s.values)) else s
    elif isinstance(s, YieldStmt):
        vals = tuple(_flatten(v, pre, True) for v in s.values)
        new = s.replace(values=vals) if any(a is not b for a, b in zip(vals, s.values)) else s
    elif isinstance(s, IfStmt):
        cond = _flatten(s.condition, pre, False)
        new = s.replace(condition=cond, then_body=_body(s.then_body),
                        else_body=_body(s.else_body) if s.else_body is not None else None)
    elif isinstance(s, ForStmt):
        s = _hoist_inits(s, pre)
        bounds = {k: _flatten(getattr(s, k), pre, False) for k in ("start", "stop", "step")}
        new = s.replace(body=_body(s.body), **bounds)
    elif isinstance(s, WhileStmt):
        if _has_call(s.condition):
            raise UnsupportedError("FlattenCallExpr: a while condition calls an op; it would have to be re-evaluated "
                                   "every iteration", s.span, hint="compute the condition into a loop-carried scalar")
        s = _hoist_inits(s, pre)
        new = s.replace(body=_body(s.body))
    elif isinstance(s, ScopeStmt):
        new = s.replace(body=_body(s.body))
    elif isinstance(s, SeqStmts):
        return body_list(_body(s))
    else:
        new = s
    return pre + [new]


def _run(func: Function, program: Program) -> Function:
    body = _body(func.body)
    if isinstance(func.body, SeqStmts) and len(body.stmts) == len(func.body.stmts) and all(
            a is b for a, b in zip(body.stmts, func.body.stmts)):
        return func
    return func.replace(body=body)


def flatten_call_expr():
    return function_pass("FlattenCallExpr", _run,
                         PassProperties(required={IRProperty.SSAForm, IRProperty.NormalizedStmtStructure},
                                        produced={IRProperty.NoNestedCalls}))
