"""UnrollLoops (`passes.unroll_loops()`): a `pl.unroll` loop with constant bounds becomes one copy of its
body per iteration.

In copy k the loop variable is the constant start + k·step and the iter_args are the values the
previous copy yielded (the init values for the first); every Var local to the body gets a fresh
copy, so SSA input stays single-assignment. A Var the body reads before assigning it (non-SSA input,
`x = f(x)` on an outer `x`) gets a fresh version per copy, each copy reading the previous one, and
the code after the loop reads the last version: the unrolled code is straight-line single-assignment,
which is also what the DSL parser makes of it when the printed program is read back. (When such a
Var is assigned inside nested control flow of the body, it keeps its identity instead: each copy
re-assigns it, as the loop did.) The loop's return_vars are bound to the last yield.
Other loops are left alone; an unroll loop whose bounds are not constants is a clear error.
"""

from __future__ import annotations

from pypto.errors import ValueCheckError
from pypto.ir.enums import ForKind
from pypto.ir.expr import ConstInt, IterArg, Var, as_int
from pypto.ir.stmt import AssignStmt, ForStmt, SeqStmts, YieldStmt, flatten_to_stmts
from pypto.ir.visitor import IRMutator, SplicingMutator, defined_vars
from pypto.passes.analysis import used_vars


def _read_before_assigned(stmts: list) -> set:
    """Vars a statement list reads before (or without) binding them itself: values from outside the loop."""
    seen: set = set()
    outer: set = set()
    for s in stmts:
        reads = set(used_vars(s.value)) if isinstance(s, AssignStmt) else set(used_vars(s)) - set(defined_vars(s))
        outer |= reads - seen
        seen |= set(defined_vars(s))
    return outer


class _FreshCopy(IRMutator):
    """Copies statements, giving each Var they define a new identity and substituting `bound` values."""

    def __init__(self, bound: dict, defined: set, versioned: frozenset = frozenset()):
        self.map = dict(bound)
        self.defined = defined
        self.versioned = versioned

    def mutate_assign_stmt(self, s):
        if s.var not in self.versioned:
            return self.mutate_children(s)
        value = self.mutate(s.value)                 # reads the previous version
        self.map[s.var] = new = Var(s.var.name_hint, s.var.type, s.var.span)
        return AssignStmt(new, value, s.span)

    def mutate_var(self, var):
        new = self.map.get(var)
        if new is None and var in self.defined:
            new = var.replace(init_value=self.mutate(var.init_value)) if isinstance(var, IterArg) else \
                Var(var.name_hint, var.type, var.span)
            self.map[var] = new
        return var if new is None else new


def _top_level_versionable(body: list, outer: set) -> frozenset:
    """The outer Vars the body re-assigns only in its own top-level AssignStmts."""
    top = {s.var for s in body if isinstance(s, AssignStmt)} & outer
    nested = set()
    for s in body:
        if not isinstance(s, AssignStmt):
            nested |= set(defined_vars(s))
    return frozenset(top - nested)


class _Unroller(SplicingMutator):
    """Unrolls loops in program order; `latest` maps a re-assigned outer Var to its last version,
    so the statements after an unrolled loop read it."""

    def __init__(self):
        self.latest: dict = {}

    def mutate_var(self, var):
        return self.latest.get(var, var)

    def mutate_for_stmt(self, loop: ForStmt):
        loop = self.mutate_children(loop)
        if loop.kind is not ForKind.Unroll:
            return loop
        start, stop, step = as_int(loop.start), as_int(loop.stop), as_int(loop.step)
        if start is None or stop is None or not step:
            raise ValueCheckError("UnrollLoops: a pl.unroll loop needs constant start, stop and a non-zero step",
                                  loop.span)
        body = flatten_to_stmts(loop.body)
        tail = body[-1] if body and isinstance(body[-1], YieldStmt) else None
        if tail is not None:
            body = body[:-1]
        outer = _read_before_assigned(body)
        defined = set(defined_vars(body)) - outer
        versioned = _top_level_versionable(body, outer)
        current = {v: v for v in versioned}
        values = [ia.init_value for ia in loop.iter_args]
        out = []
        for i in range(start, stop, step):
            bound = {loop.loop_var: ConstInt(i, loop.loop_var.type.dtype, loop.span)}
            bound.update(zip(loop.iter_args, values))
            bound.update(current)
            copier = _FreshCopy(bound, defined, versioned)
            out.extend(copier.mutate(s) for s in body)
            current = {v: copier.map[v] for v in versioned}
            if tail is not None:
                values = [copier.mutate(v) for v in tail.values]
        self.latest.update((v, new) for v, new in current.items() if new is not v)
        out.extend(AssignStmt(rv, v, loop.span) for rv, v in zip(loop.return_vars, values))
        return SeqStmts(out, loop.span)


def unroll_program(program):
    new = [f.replace(body=_Unroller().mutate(f.body)) for f in program.functions.values()]
    if all(a is b for a, b in zip(new, program.functions.values())):
        return program
    return program.with_functions(new)
