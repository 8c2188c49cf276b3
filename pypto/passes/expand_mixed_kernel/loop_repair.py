"""Loop-carried state repair after the split, before and after DCE (seed 004, Algorithm step 6).

Each side keeps the shared control-flow skeleton, so a side may yield a value only the other
side computes, or keep a carry whose init value only the other side computed.

* `repair_yields`: a yield naming a value this side never binds falls back to the carry that
  stands for that slot — for a loop's trailing yield its own iter_arg ("悬空 yield 改写为
  identity yield"); for a branch, the iter_arg the other branch yields at that slot (each if
  reads its own carriers, so two guards writing two tensors keep two carries).
* `pull_init_values`: a kept carry whose init value this side does not define gets the
  original definition chain re-emitted before the loop, tracking lexically visible
  definitions (outer ones, params, loop vars, carries; branch-locals stay in their branch).

    if i == 0: ...; b = pl.yield_(acc_then)       # acc_then is vector-only
    else:      b = pl.yield_(acc)
    → (cube side)  if i == 0: ...; b = pl.yield_(acc)  else: b = pl.yield_(acc)
"""

from __future__ import annotations

from pypto.ir.expr import IterArg, Var
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, SeqStmts, WhileStmt, YieldStmt, child_bodies, flatten_to_stmts
from pypto.passes.analysis import used_vars
from pypto.ir.ops.registry import SHARED
from pypto.passes.expand_mixed_kernel.affinity import boundary_direction, stmt_affinity, stmt_call
from pypto.passes.expand_mixed_kernel.dce import has_effects


def _dangles(value, known: set) -> bool:
    return any(isinstance(v, Var) and v not in known for v in used_vars(value))


def _with_yield(stmts: list, carriers: list, known: set) -> list:
    """`stmts` with a dangling trailing-yield value replaced by its slot's carrier (when it has one)."""
    if not stmts or not isinstance(stmts[-1], YieldStmt):
        return stmts
    yld = stmts[-1]
    values = [carriers[i] if _dangles(v, known) and i < len(carriers) and carriers[i] is not None else v
              for i, v in enumerate(yld.values)]
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


def original_defs(body) -> dict:
    """Every Var the original kernel body binds by assignment (nested bodies included) → its statement."""
    found = {}
    for s in flatten_to_stmts(body):
        if isinstance(s, AssignStmt):
            found[s.var] = s
        for b in child_bodies(s):
            found.update(original_defs(b))
    return found


def pull_init_values(body, defs: dict, params, side: str) -> SeqStmts:
    """Re-emit, before each loop, the missing definitions its kept init values need."""
    return SeqStmts(_Puller(defs, side).block(flatten_to_stmts(body), set(params)), getattr(body, "span", None))


class _Puller:
    def __init__(self, defs: dict, side: str):
        self.defs = defs
        self.side = side

    def chain(self, v, visible: set, out: list, depth: int = 0) -> None:
        """Append v's definition (after those it needs) unless visible. What this side cannot
        re-emit (an effect, a cross-core move, the other core's work) stays free: the split reports it."""
        if v in visible or v not in self.defs or depth > 256:
            return
        s = self.defs[v]
        c = stmt_call(s)
        if has_effects(s.value) or (c is not None and boundary_direction(c) is not None) \
                or stmt_affinity(s) not in (SHARED, self.side):
            return
        visible.add(v)
        for dep in used_vars(s.value, include_types=True):
            if isinstance(dep, Var):
                self.chain(dep, visible, out, depth + 1)
        out.append(s)

    def block(self, stmts: list, visible: set) -> list:
        visible = set(visible)
        out = []
        for s in stmts:
            if isinstance(s, (ForStmt, WhileStmt)):
                for ia in s.iter_args:
                    for v in used_vars(ia.init_value, include_types=True):
                        if isinstance(v, Var):
                            self.chain(v, visible, out)
                inner = visible | set(s.iter_args) | ({s.loop_var} if isinstance(s, ForStmt) else set())
                s = s.replace(body=SeqStmts(self.block(flatten_to_stmts(s.body), inner), s.body.span))
            elif isinstance(s, IfStmt):
                arms = [SeqStmts(self.block(flatten_to_stmts(b), visible), b.span) if b is not None else None
                        for b in (s.then_body, s.else_body)]
                s = s.replace(then_body=arms[0], else_body=arms[1])
            out.append(s)
            if isinstance(s, AssignStmt):
                visible.add(s.var)
            visible |= set(getattr(s, "return_vars", ()))
        return out
