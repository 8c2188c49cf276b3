"""Dead-code elimination with loop-carry pruning for one pruned core body (seed 004 steps 7–9).

Liveness runs backwards from the return and from statements with effects (stores, transfers,
pipe setup, calls). Which carries live ("哪些 carry 算存活"): a loop's iter_arg is live when its
result is used after the loop, when the while condition reads it, when a kept statement of the
body reads it — a kept branch's yield counts, the loop's own trailing yield does not — or when
it feeds, through that trailing yield, another live carry (the closure a multi-stage FIFO
needs). Dead iter_args lose their init, yield slot and result; a branch kept for its effects or
results keeps all its results; empty loops and branches disappear. Sweeps only ever remove, and
they repeat until one removes nothing — the seed's "DCE, normalize again, DCE again".

    for i, (acc, o) in pl.range(4, init_values=(a0, out)):    # AIV side, acc only fed the cube
    →  for i, (o,) in pl.range(4, init_values=(out,)):
"""

from __future__ import annotations

from pypto.ir.expr import Call, GlobalVar, Var
from pypto.ir.ops.registry import READWRITE, WRITE
from pypto.ir.stmt import (AssignStmt, EvalStmt, ForStmt, IfStmt, ReturnStmt, SeqStmts, WhileStmt, YieldStmt,
                           child_bodies, flatten_to_stmts)
from pypto.ir.types import TensorType, TileType, UnknownType
from pypto.passes.analysis import defined_vars, used_vars, vars_in_type

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


def any_effects(stmts) -> bool:
    """Whether any statement in `stmts` (nested bodies included) has an effect."""
    for s in stmts:
        value = s.value if isinstance(s, AssignStmt) else s.expr if isinstance(s, EvalStmt) else None
        if has_effects(value) or isinstance(s, ReturnStmt):
            return True
        if any(any_effects(flatten_to_stmts(b)) for b in child_bodies(s)):
            return True
    return False


def size(stmts) -> int:
    """Statements, carries and results in a body: what a sweep can remove."""
    n = 0
    for s in stmts:
        n += 1 + len(getattr(s, "iter_args", ())) + len(getattr(s, "return_vars", ()))
        for b in child_bodies(s):
            n += size(flatten_to_stmts(b))
    return n


def eliminate(body, live_out: set, params=None, foreign=frozenset()) -> SeqStmts:
    """Sweep until a sweep removes nothing. With `params`, a branch result whose yield names a Var
    neither they nor the body bind is dropped (the carry it fell back to is gone). `foreign`: the
    memory spaces of the other core; a carry of a tile there is never live on this side (an AIC
    function holds only cube and shared work, seed 004 "仅包含 Cube + 共享操作")."""
    stmts = flatten_to_stmts(body)
    while True:                       # terminates: every round removes something or stops
        known = None if params is None else set(params) | set(defined_vars(SeqStmts(stmts)))
        new = _Sweeper(known, foreign).sweep(stmts, set(live_out))
        if size(new) == size(stmts):
            return SeqStmts(new, getattr(body, "span", None))
        stmts = new


def _uses(node) -> set:
    # a scalar named only by a type (a received tile's valid shape `[16, valid]`) is still a use
    return set(used_vars(node, include_types=True))


def _yield_of(body) -> tuple:
    stmts = flatten_to_stmts(body)
    if stmts and isinstance(stmts[-1], YieldStmt):
        return stmts[:-1], stmts[-1]
    return stmts, None


class _Sweeper:
    def __init__(self, known, foreign):
        self.known = known
        self.foreign = foreign

    def sweep(self, stmts: list, live: set) -> list:
        out = []
        for s in reversed(stmts):
            kept = self.stmt(s, live)
            if kept is not None:
                out.append(kept)
        out.reverse()
        return out

    def stmt(self, s, live: set):
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
            return self.loop(s, live)
        if isinstance(s, WhileStmt):
            return self.loop(s, live, while_cond=s.condition)
        if isinstance(s, IfStmt):
            return self.branch(s, live)
        live |= _uses(s)
        return s

    def loop(self, s, live: set, while_cond=None):
        n = len(s.iter_args)
        passive = {i for i in range(n) if isinstance(s.iter_args[i].type, TileType)
                   and s.iter_args[i].type.memory_space in self.foreign}
        keep = {i for i in range(n) if s.return_vars[i] in live}
        cond_uses = _uses(while_cond) if while_cond is not None else set()
        keep |= {i for i in range(n) if s.iter_args[i] in cond_uses}
        keep -= passive
        inner, yld = _yield_of(s.body)
        values = list(yld.values) if yld is not None else []
        while True:                   # terminates: `keep` only grows, and has at most n members
            body_live = set(cond_uses)
            for i in keep:
                if i < len(values):
                    body_live |= _uses(values[i])
            new_inner = self.sweep(inner, body_live)
            used = set()
            for x in new_inner:
                used |= _uses(x)
            for i in keep:
                if i < len(values):
                    used |= _uses(values[i])
            grown = keep | {i for i in range(n) if s.iter_args[i] in used and i not in passive}
            if grown == keep:
                break
            keep = grown
        if not new_inner and not keep:
            return None
        idx = sorted(keep)
        body = new_inner + ([YieldStmt([values[i] for i in idx], yld.span)] if yld is not None and idx else [])
        new = s.replace(iter_args=tuple(s.iter_args[i] for i in idx),
                        return_vars=tuple(s.return_vars[i] for i in idx), body=SeqStmts(body, s.body.span))
        for i in idx:
            live |= _uses(s.iter_args[i].init_value)
        live |= used                  # the kept body reads values defined before the loop (e.g. a Mat operand)
        if isinstance(s, ForStmt):
            live |= _uses(s.start) | _uses(s.stop) | _uses(s.step)
        else:
            live |= cond_uses
        return new

    def _dangling(self, value) -> bool:
        return self.known is not None and any(isinstance(v, Var) and v not in self.known for v in _uses(value))

    def branch(self, s, live: set):
        arms = [_yield_of(b) if b is not None else None for b in (s.then_body, s.else_body)]
        # a result whose yield still names a value this side never binds has no carrier: drop it
        slots = [i for i in range(len(s.return_vars))
                 if not any(arm is not None and arm[1] is not None and i < len(arm[1].values)
                            and self._dangling(arm[1].values[i]) for arm in arms)]
        wanted = any(s.return_vars[i] in live for i in slots)
        if not wanted and not any(arm is not None and any_effects(arm[0]) for arm in arms):
            return None
        branches = []
        for arm in arms:
            if arm is None:
                branches.append(None)
                continue
            inner, yld = arm
            blive = set()
            if yld is not None:
                for i in slots:
                    blive |= _uses(yld.values[i])
            new_inner = self.sweep(inner, blive)
            if yld is not None and slots:
                new_inner.append(YieldStmt([yld.values[i] for i in slots], yld.span))
            branches.append(new_inner)
        for br in branches:
            for x in br or []:
                live |= _uses(x)
        live |= _uses(s.condition)
        else_body = SeqStmts(branches[1]) if branches[1] else None         # an emptied else goes
        return s.replace(then_body=SeqStmts(branches[0]), else_body=else_body,
                         return_vars=tuple(s.return_vars[i] for i in slots))


def free_vars(func_params, body) -> list:
    """Vars the body reads but neither the params nor the body define (a broken split)."""
    known = set(func_params) | set(defined_vars(body))
    return [v for v in used_vars(body) if isinstance(v, Var) and v not in known]
