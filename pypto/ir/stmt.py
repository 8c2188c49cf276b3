"""IR statements: assignment, control flow (SSA style, with explicit carried values) and scopes.

Loop-carried values are IterArgs bound by the loop; the body ends in a YieldStmt giving the
next values; `return_vars` are the Vars bound to the final values after the loop / if.
"""

from __future__ import annotations

from typing import Optional, Sequence

from pypto.ir.enums import ForKind, Level, Role, SplitMode
from pypto.ir.expr import Expr, IterArg, Var
from pypto.ir.node import DEF, IGNORE, USUAL, IRTuple, Node, set_field
from pypto.ir.span import Span


class Stmt(Node):
    __slots__ = ()


class AssignStmt(Stmt):
    __slots__ = ("var", "value")
    FIELDS = (("var", DEF), ("value", USUAL))

    def __init__(self, var: Var, value: Expr, span: Optional[Span] = None):
        set_field(self, "var", var)
        set_field(self, "value", value)
        set_field(self, "span", span)


class EvalStmt(Stmt):
    """Evaluate an expression for its side effect (e.g. a store whose result is unused)."""
    __slots__ = ("expr",)
    FIELDS = (("expr", USUAL),)

    def __init__(self, expr: Expr, span: Optional[Span] = None):
        set_field(self, "expr", expr)
        set_field(self, "span", span)


class SeqStmts(Stmt):
    __slots__ = ("stmts",)
    FIELDS = (("stmts", USUAL),)

    def __init__(self, stmts: Sequence[Stmt], span: Optional[Span] = None):
        set_field(self, "stmts", IRTuple(stmts))
        set_field(self, "span", span)


class YieldStmt(Stmt):
    __slots__ = ("values",)
    FIELDS = (("values", USUAL),)

    def __init__(self, values: Sequence[Expr] = (), span: Optional[Span] = None):
        if isinstance(values, Span):  # the reference's (YieldStmt(span)) form
            values, span = (), values
        self._set(values=tuple(values), span=span)


class ReturnStmt(Stmt):
    __slots__ = ("values",)
    FIELDS = (("values", USUAL),)

    def __init__(self, values: Sequence[Expr] = (), span: Optional[Span] = None):
        if isinstance(values, Span):  # the reference's (ReturnStmt(span)) form
            values, span = (), values
        self._set(values=tuple(values), span=span)


class BreakStmt(Stmt):
    __slots__ = ()

    def __init__(self, span: Optional[Span] = None):
        self._set(span=span)


class ContinueStmt(Stmt):
    __slots__ = ()

    def __init__(self, span: Optional[Span] = None):
        self._set(span=span)


class IfStmt(Stmt):
    __slots__ = ("condition", "then_body", "else_body", "return_vars")
    FIELDS = (("condition", USUAL), ("then_body", USUAL), ("else_body", USUAL), ("return_vars", DEF))

    def __init__(self, condition: Expr, then_body: Stmt, else_body: Optional[Stmt] = None,
                 return_vars: Sequence[Var] = (), span: Optional[Span] = None):
        self._set(condition=condition, then_body=then_body, else_body=else_body,
                  return_vars=tuple(return_vars), span=span)


class ForStmt(Stmt):
    __slots__ = ("loop_var", "start", "stop", "step", "iter_args", "body", "return_vars", "kind", "attrs")
    FIELDS = (("loop_var", DEF), ("start", USUAL), ("stop", USUAL), ("step", USUAL), ("iter_args", DEF),
              ("body", USUAL), ("return_vars", DEF), ("kind", USUAL), ("attrs", USUAL))

    def __init__(self, loop_var: Var, start: Expr, stop: Expr, step: Expr, iter_args: Sequence[IterArg] = (),
                 body: Optional[Stmt] = None, return_vars: Sequence[Var] = (), kind: ForKind = ForKind.Sequential,
                 attrs: Optional[dict] = None, span: Optional[Span] = None):
        if isinstance(kind, Span):  # the reference's order: (..., return_vars, span, kind, attrs)
            kind, attrs, span = (attrs if isinstance(attrs, ForKind) else ForKind.Sequential,
                                 span if isinstance(span, dict) else None, kind)
        self._set(loop_var=loop_var, start=start, stop=stop, step=step, iter_args=tuple(iter_args),
                  body=body if body is not None else SeqStmts([]), return_vars=tuple(return_vars), kind=kind,
                  attrs=dict(attrs or {}), span=span)


class WhileStmt(Stmt):
    __slots__ = ("condition", "iter_args", "body", "return_vars")
    FIELDS = (("iter_args", DEF), ("condition", USUAL), ("body", USUAL), ("return_vars", DEF))

    def __init__(self, condition: Expr, iter_args: Sequence[IterArg] = (), body: Optional[Stmt] = None,
                 return_vars: Sequence[Var] = (), span: Optional[Span] = None):
        self._set(condition=condition, iter_args=tuple(iter_args), body=body if body is not None else SeqStmts([]),
                  return_vars=tuple(return_vars), span=span)


class ScopeStmt(Stmt):
    """Base of the block-level scopes (`with pl.at(...)`, `pl.cluster`, `pl.spmd`, ...)."""
    __slots__ = ("body", "name_hint")


class InCoreScopeStmt(ScopeStmt):
    """`with pl.at(level=pl.Level.CORE_GROUP)`: outlined into an InCore function.

    `slot_num` / `local_slot_num` come from `pl.cross_core_slot(...)`: the depth of the
    cross-core rings ExpandMixedKernel builds for the outlined kernel (None: the default).
    `windowize` (`pl.at(..., windowize=True)`) opts the outlined kernel into OptimizeOrchTensors
    pattern 5 (attrs["windowize"])."""
    __slots__ = ("split", "slot_num", "local_slot_num", "windowize")
    FIELDS = (("split", USUAL), ("slot_num", USUAL), ("local_slot_num", USUAL), ("windowize", USUAL), ("body", USUAL),
              ("name_hint", IGNORE))

    def __init__(self, body: Stmt, name_hint: str = "", split: SplitMode = SplitMode.NONE, span: Optional[Span] = None,
                 slot_num: Optional[int] = None, local_slot_num: Optional[int] = None, windowize: bool = False):
        self._set(body=body, name_hint=name_hint, split=split, slot_num=slot_num, local_slot_num=local_slot_num,
                  windowize=windowize, span=span)


class ClusterScopeStmt(ScopeStmt):
    __slots__ = ()
    FIELDS = (("body", USUAL), ("name_hint", IGNORE))

    def __init__(self, body: Stmt, name_hint: str = "", span: Optional[Span] = None):
        self._set(body=body, name_hint=name_hint, span=span)


class HierarchyScopeStmt(ScopeStmt):
    __slots__ = ("level", "role")
    FIELDS = (("level", USUAL), ("role", USUAL), ("body", USUAL), ("name_hint", IGNORE))

    def __init__(self, body: Stmt, level: Level, role: Optional[Role] = None, name_hint: str = "",
                 span: Optional[Span] = None):
        self._set(body=body, level=level, role=role, name_hint=name_hint, span=span)


class SpmdScopeStmt(ScopeStmt):
    __slots__ = ("core_num", "sync_start")
    FIELDS = (("core_num", USUAL), ("sync_start", USUAL), ("body", USUAL), ("name_hint", IGNORE))

    def __init__(self, body: Stmt, core_num: Expr, sync_start: bool = False, name_hint: str = "",
                 span: Optional[Span] = None):
        self._set(body=body, core_num=core_num, sync_start=bool(sync_start), name_hint=name_hint, span=span)


class SplitAivScopeStmt(ScopeStmt):
    """`for aiv_id in pl.split_aiv(2, mode=...)`: an explicit AIV-lane region."""
    __slots__ = ("lane_var", "split", "count")
    FIELDS = (("lane_var", DEF), ("split", USUAL), ("count", USUAL), ("body", USUAL), ("name_hint", IGNORE))

    def __init__(self, lane_var: Var, body: Stmt, split: SplitMode, count: int = 2, name_hint: str = "",
                 span: Optional[Span] = None):
        self._set(lane_var=lane_var, body=body, split=split, count=int(count), name_hint=name_hint, span=span)


class CommDomainScopeStmt(ScopeStmt):
    """`with pld.comm_domain([buf, ...], devices=[...]):` in a HOST orchestrator (MaterializeCommDomainScopes).

    `buffers` are the Vars bound by `pld.alloc_window_buffer` (the domain's window slots, bound before
    the scope); `devices` the ranks that touch them (None: every rank of the world)."""
    __slots__ = ("buffers", "devices")
    FIELDS = (("buffers", USUAL), ("devices", USUAL), ("body", USUAL), ("name_hint", IGNORE))

    def __init__(self, body: Stmt, buffers: Sequence[Var], devices: Optional[Sequence[int]] = None,
                 name_hint: str = "", span: Optional[Span] = None):
        devices = None if devices is None else tuple(int(d) for d in devices)
        self._set(body=body, buffers=tuple(buffers), devices=devices, name_hint=name_hint, span=span)


def flatten_to_stmts(stmt: Optional[Stmt]) -> list[Stmt]:
    """The statements of a body as a flat list (nested SeqStmts opened)."""
    if stmt is None:
        return []
    if isinstance(stmt, SeqStmts):
        out: list[Stmt] = []
        for s in stmt.stmts:
            if isinstance(s, SeqStmts):
                out.extend(flatten_to_stmts(s))
            else:
                out.append(s)
        return out
    return [stmt]


def child_bodies(stmt: Stmt) -> list:
    """The nested statement bodies of a control-flow statement (loop body; if branches)."""
    if isinstance(stmt, (ForStmt, WhileStmt)):
        return [stmt.body]
    if isinstance(stmt, IfStmt):
        return [stmt.then_body] + ([stmt.else_body] if stmt.else_body is not None else [])
    return []
