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
"""

from __future__ import annotations

from pypto.ir.expr import IterArg, Var
from pypto.ir.stmt import ForStmt, IfStmt, SeqStmts, WhileStmt, YieldStmt, flatten_to_stmts
from pypto.passes.analysis import used_vars


def _dangles(value, known: set) -> bool:
    return any(isinstance(v, Var) and v not in known for v in used_vars(value))


def _with_yield(stmts: list, carriers: list, known: set) -> list:
    """`stmts` with a dangling trailing-yield value replaced by its slot's carrier (when it has one)."""
    if not stmts or not isinstance(stmts[-1], YieldStmt):
        return stmts
    yld = stmts[-1]
    values = [carriers[i] if _dangles(v, known) and i < len(carriers) and carriers[i] is not None else v
              for i, v in enumerate(yld.values)]
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


def repair_yields(body, known: set) -> SeqStmts:
    """Dangling yields → the carrier of their slot, inside every loop and branch of `body`."""
    return SeqStmts(_repair(flatten_to_stmts(body), [], known), getattr(body, "span", None))


def _repair(stmts: list, carriers: list, known: set) -> list:
    out = []
    for s in stmts:
        if isinstance(s, (ForStmt, WhileStmt)):
            inner = _repair(flatten_to_stmts(s.body), [], known)
            s = s.replace(body=SeqStmts(_with_yield(inner, list(s.iter_args), known), s.body.span))
        elif isinstance(s, IfStmt):
            mine = _branch_carriers(s)
            arms = [SeqStmts(_repair(flatten_to_stmts(b), mine, known), b.span) if b is not None else None
                    for b in (s.then_body, s.else_body)]
            s = s.replace(then_body=arms[0], else_body=arms[1])
        out.append(s)
    return _with_yield(out, carriers, known) if carriers else out
