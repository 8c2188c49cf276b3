"""Loop-carried state repair after the split, before DCE (seed 004, Algorithm step 6).

Each side keeps the shared control-flow skeleton, so a side may yield a value only the other
side computes.

* `repair_yields`: a yield naming a value this side never binds falls back to the carry that
  stands for that slot — for a loop's trailing yield its own iter_arg ("悬空 yield 改写为
  identity yield"); for a branch, the iter_arg the other branch yields at that slot (each if
  reads its own carriers, so two guards writing two tensors keep two carries).

A kept carry's init value never goes missing here ("为保留下来的 iter_args 补回缺失的 init value
定义" holds by construction): shared and same-side definitions stay on the side, a Vec constant
fill crossing to the cube is re-created typed for the cube's space (construct.py), a tensor
version the other side wrote is repointed to this side's (versions.py), and a carry in the other
core's memory is not kept (dce.py). Anything else is a value only the other core computes, which
the split reports.

    if i == 0: ...; b = pl.yield_(acc_then)       # acc_then is vector-only
    else:      b = pl.yield_(acc)
    → (cube side)  if i == 0: ...; b = pl.yield_(acc)  else: b = pl.yield_(acc)

* `check_stale_carries` (after DCE): that fallback is only right while nothing on this side
  reads the carry — DCE then drops it. A carry this side still reads (a condition, an operand,
  a bound, its loop's result) would keep its initial value here while the other core updates it:
  an UnsupportedError at the loop names the carry, its update and the kernel.
"""

from __future__ import annotations

from typing import NamedTuple

from pypto.errors import UnsupportedError
from pypto.ir.expr import IterArg, Var
from pypto.ir.stmt import (AssignStmt, EvalStmt, ForStmt, IfStmt, ReturnStmt, SeqStmts, WhileStmt, YieldStmt,
                           child_bodies, flatten_to_stmts)
from pypto.passes.analysis import used_vars


class Fallback(NamedTuple):
    """A yield slot repaired to its carry: the carry (an IterArg) and the value only the other side binds."""
    carry: IterArg
    update: object


def _dangles(value, known: set) -> bool:
    return any(isinstance(v, Var) and v not in known for v in used_vars(value))


def _with_yield(stmts: list, carriers: list, known: set, fallbacks: list) -> list:
    """`stmts` with a dangling trailing-yield value replaced by its slot's carrier (when it has one)."""
    if not stmts or not isinstance(stmts[-1], YieldStmt):
        return stmts
    yld = stmts[-1]
    values = []
    for i, v in enumerate(yld.values):
        if _dangles(v, known) and i < len(carriers) and carriers[i] is not None:
            fallbacks.append(Fallback(carriers[i], v))
            v = carriers[i]
        values.append(v)
    if all(a is b for a, b in zip(values, yld.values)):
        return stmts
    return stmts[:-1] + [yld.replace(values=tuple(values))]


def _branch_carriers(s: IfStmt) -> list:
    """Per result slot: the one iter_arg the branches yield there, or None (none, or two differ)."""
    carriers = []
    for i in range(len(s.return_vars)):
        seen = set()
        for b in (s.then_body, s.else_body):
            stmts = flatten_to_stmts(b) if b is not None else []
            if stmts and isinstance(stmts[-1], YieldStmt) and i < len(stmts[-1].values) \
                    and isinstance(stmts[-1].values[i], IterArg):
                seen.add(stmts[-1].values[i])
        carriers.append(seen.pop() if len(seen) == 1 else None)
    return carriers


def repair_yields(body, known: set) -> tuple:
    """(`body` with dangling yields → the carrier of their slot inside every loop and branch, the
    Fallbacks made)."""
    fallbacks: list = []
    return SeqStmts(_repair(flatten_to_stmts(body), [], known, fallbacks), getattr(body, "span", None)), fallbacks


def _repair(stmts: list, carriers: list, known: set, fallbacks: list) -> list:
    out = []
    for s in stmts:
        if isinstance(s, (ForStmt, WhileStmt)):
            inner = _repair(flatten_to_stmts(s.body), [], known, fallbacks)
            s = s.replace(body=SeqStmts(_with_yield(inner, list(s.iter_args), known, fallbacks), s.body.span))
        elif isinstance(s, IfStmt):
            mine = _branch_carriers(s)
            arms = [SeqStmts(_repair(flatten_to_stmts(b), mine, known, fallbacks), b.span) if b is not None else None
                    for b in (s.then_body, s.else_body)]
            s = s.replace(then_body=arms[0], else_body=arms[1])
        out.append(s)
    return _with_yield(out, carriers, known, fallbacks) if carriers else out


def _walk(stmts):
    for s in stmts:
        yield s
        for b in child_bodies(s):
            yield from _walk(flatten_to_stmts(b))


def _trailing_yield(body):
    stmts = flatten_to_stmts(body) if body is not None else []
    return stmts[-1].values if stmts and isinstance(stmts[-1], YieldStmt) else ()


def _same_value(stmts: list, seeds: set) -> set:
    """The Vars that only pass a repaired carry on: yields, branch / loop results, loop inits."""
    chain = set(seeds)
    grew = True
    while grew:
        before = len(chain)
        for s in stmts:
            if isinstance(s, (ForStmt, WhileStmt)):
                trailing = _trailing_yield(s.body)
                for i, (ia, rv) in enumerate(zip(s.iter_args, s.return_vars)):
                    if ia.init_value in chain or (i < len(trailing) and trailing[i] in chain):
                        chain.add(ia)
                    if ia in chain:
                        chain.add(rv)
            elif isinstance(s, IfStmt):
                for body in (s.then_body, s.else_body):
                    for v, rv in zip(_trailing_yield(body), s.return_vars):
                        if v in chain:
                            chain.add(rv)
        grew = len(chain) > before
    return chain


def _reads(s) -> list:
    """What one statement reads itself (not through its nested bodies, not its yields)."""
    if isinstance(s, (AssignStmt, EvalStmt, ReturnStmt)):
        return used_vars(s)
    if isinstance(s, IfStmt):
        return used_vars(s.condition)
    if isinstance(s, WhileStmt):
        return used_vars(s.condition) + [v for ia in s.iter_args if not isinstance(ia.init_value, Var)
                                         for v in used_vars(ia.init_value)]
    if isinstance(s, ForStmt):
        inits = [v for ia in s.iter_args if not isinstance(ia.init_value, Var) for v in used_vars(ia.init_value)]
        return used_vars(s.start) + used_vars(s.stop) + used_vars(s.step) + inits
    return []


def check_stale_carries(body, fallbacks: list, kernel: str, side: str) -> None:
    """After DCE: a repaired carry this side still reads is a value it would never see updated."""
    if not fallbacks:
        return
    stmts = list(_walk(flatten_to_stmts(body)))
    loops = {id(ia): s for s in stmts if isinstance(s, (ForStmt, WhileStmt)) for ia in s.iter_args}
    for fb in fallbacks:
        loop = loops.get(id(fb.carry))
        if loop is None:                       # DCE dropped the carry: nothing here reads it
            continue
        chain = _same_value(stmts, {fb.carry})
        if any(v in chain for s in stmts for v in _reads(s)):
            update = ", ".join(v.name_hint for v in used_vars(fb.update)) or "its update"
            raise UnsupportedError(f"ExpandMixedKernel: kernel {kernel}: the {side} side reads the loop carry "
                                   f"'{fb.carry.name_hint}', but its update ({update}) is computed only by the "
                                   f"other core, so the carry would keep its initial value here", loop.span,
                                   hint="compute the update on both sides (a scalar), or move the value across "
                                        "with pl.move (a tile)")
