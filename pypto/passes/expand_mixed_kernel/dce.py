"""Dead-code elimination with loop-carry repair for one pruned core body (seed 004 steps 6–9).

After pruning, a side may keep a loop whose carried value the other side computes. Liveness
runs backwards from the return and from statements with effects (stores, transfers, pipe
setup, calls); a loop's iter_arg is live when its result is used after the loop, when the body
reads it, or when it feeds (through the loop's own yield) another live carry — the closure the
seed's multi-stage FIFO example needs. Dead iter_args lose their init, yield slot and result
var; empty loops and ifs disappear. Iterating to a fixpoint plays the seed's "DCE, normalize
again, DCE again".

    for i, (acc, o) in pl.range(4, init_values=(a0, out)):    # AIV side, acc only fed the cube
    →  for i, (o,) in pl.range(4, init_values=(out,)):
"""

from __future__ import annotations

from pypto.ir.expr import Call, GlobalVar, Var
from pypto.ir.ops.registry import READWRITE, WRITE
from pypto.ir.stmt import (AssignStmt, EvalStmt, ForStmt, IfStmt, ReturnStmt, SeqStmts, WhileStmt, YieldStmt,
                           flatten_to_stmts)
from pypto.ir.types import TensorType, UnknownType
from pypto.passes.analysis import used_vars, vars_in_type

_EFFECT_PREFIXES = ("system.", "pld.")
_EFFECT_OPS = {"tile.tpush_to_aiv", "tile.tpush_to_aic", "tile.tpop_from_aic", "tile.tpop_from_aiv", "tile.store"}


def has_effects(c) -> bool:
    if not isinstance(c, Call):
        return False
    if isinstance(c.op, GlobalVar):
        return True
    if c.op.name in _EFFECT_OPS or c.op.name.startswith(_EFFECT_PREFIXES) or isinstance(c.type, UnknownType):
        return True
    for i, eff in c.op.effects.items():
        if eff in (WRITE, READWRITE) and i < len(c.args) and isinstance(c.args[i].type, TensorType):
            return True
    return False


_dropped = [0]          # statements / carries removed by the current sweep


def eliminate(body, live_out: set) -> SeqStmts:
    """Repeat one backward sweep until nothing changes."""
    while True:
        _dropped[0] = 0
        new = _sweep(flatten_to_stmts(body), set(live_out))
        body = SeqStmts(new, getattr(body, "span", None))
        if not _dropped[0]:
            return body


def _uses(node) -> set:
    # a scalar named only by a type (a received tile's valid shape `[16, valid]`) is still a use
    return set(used_vars(node, include_types=True))


def _sweep(stmts: list, live: set) -> list:
    out = []
    for s in reversed(stmts):
        kept = _stmt(s, live)
        if kept is not None:
            out.append(kept)
        else:
            _dropped[0] += 1
    out.reverse()
    return out


def _stmt(s, live: set):
    if isinstance(s, (ReturnStmt, YieldStmt)):
        live |= _uses(s)
        return s
    if isinstance(s, AssignStmt):
        if s.var in live or has_effects(s.value):
            live |= _uses(s.value) | set(vars_in_type(s.var.type))
            return s
        return None
    if isinstance(s, EvalStmt):
        if has_effects(s.expr):
            live |= _uses(s.expr)
            return s
        return None
    if isinstance(s, ForStmt):
        return _loop(s, live)
    if isinstance(s, WhileStmt):
        return _loop(s, live, while_cond=s.condition)
    if isinstance(s, IfStmt):
        return _if(s, live)
    live |= _uses(s)
    return s


def _yield_of(body) -> tuple:
    stmts = flatten_to_stmts(body)
    if stmts and isinstance(stmts[-1], YieldStmt):
        return stmts[:-1], stmts[-1]
    return stmts, None


def _loop(s, live: set, while_cond=None):
    n = len(s.iter_args)
    keep = {i for i in range(n) if s.return_vars[i] in live}
    cond_uses = _uses(while_cond) if while_cond is not None else set()
    keep |= {i for i in range(n) if s.iter_args[i] in cond_uses}
    inner, yld = _yield_of(s.body)
    dropped_before = _dropped[0]
    while True:
        # Only the last (fixpoint) sweep of the body counts: an earlier sweep may drop a branch
        # result that the grown carry set then keeps, and counting that drop would make
        # `eliminate` believe something changed forever.
        _dropped[0] = dropped_before
        body_live = set(cond_uses)
        values = list(yld.values) if yld is not None else []
        for i in keep:
            if i < len(values):
                body_live |= _uses(values[i])
        new_inner = _sweep(inner, body_live)
        used = set()
        for x in new_inner:
            used |= _uses(x)
        for i in keep:
            if i < len(values):
                used |= _uses(values[i])
        grown = keep | {i for i in range(n) if s.iter_args[i] in used}
        if grown == keep:
            break
        keep = grown
    if not new_inner and not keep:
        return None
    idx = sorted(keep)
    _dropped[0] += n - len(idx)
    body = new_inner + ([YieldStmt([yld.values[i] for i in idx], yld.span)] if yld is not None and idx else [])
    new = s.replace(iter_args=tuple(s.iter_args[i] for i in idx), return_vars=tuple(s.return_vars[i] for i in idx),
                    body=SeqStmts(body, s.body.span))
    for i in idx:
        live |= _uses(s.iter_args[i].init_value)
    live |= used                  # the kept body reads values defined before the loop (e.g. a Mat operand)
    if isinstance(s, ForStmt):
        live |= _uses(s.start) | _uses(s.stop) | _uses(s.step)
    else:
        live |= cond_uses
    return new


def _if(s, live: set):
    keep = [i for i, rv in enumerate(s.return_vars) if rv in live]
    _dropped[0] += len(s.return_vars) - len(keep)
    branches = []
    for br in (s.then_body, s.else_body):
        if br is None:
            branches.append(None)
            continue
        inner, yld = _yield_of(br)
        blive = set()
        if yld is not None:
            for i in keep:
                blive |= _uses(yld.values[i])
        new_inner = _sweep(inner, blive)
        if yld is not None and keep:
            new_inner.append(YieldStmt([yld.values[i] for i in keep], yld.span))
        branches.append(new_inner)
    if not keep and not branches[0] and not branches[1]:
        return None
    for br in branches:
        for x in br or []:
            live |= _uses(x)
    live |= _uses(s.condition)
    else_body = SeqStmts(branches[1]) if branches[1] is not None else None
    return s.replace(then_body=SeqStmts(branches[0]), else_body=else_body,
                     return_vars=tuple(s.return_vars[i] for i in keep))


def free_vars(func_params, body) -> list:
    """Vars the body reads but neither the params nor the body define (a broken split)."""
    from pypto.passes.analysis import defined_vars
    known = set(func_params) | set(defined_vars(body))
    return [v for v in used_vars(body) if isinstance(v, Var) and v not in known]
