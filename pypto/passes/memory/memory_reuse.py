"""MemoryReuse: let tiles whose lifetimes do not overlap share one allocation.

Requires: HasMemRefs / Produces: — / Invalidates: —
Reference: pass doc 33 (compiler-and-runtime.md §2, dump 34). Per kernel and memory space,
buffers (tile.alloc) are taken largest first and each joins the first earlier buffer group
none of whose members is live at the same time (memory_lifetimes.py); a buffer whose last read
is the statement that defines another may hand its bytes over only when that op is in-place
safe (no transposes / not_inplace_safe ops, no widening casts or broadcasts, no scratch
operands). Pipeline-loop stages stay apart; allocations nothing refers to any more are dropped.
Pinned allocations (user-declared `pl.MemRef("name")`, or an address given) are left alone:
nothing else is packed into them. An Acc tile carried through a loop or an if keeps the one buffer
InitMemRef gave its phi group (loop_carry_buffers.py), so no accumulator copy is ever needed.
a2a3 load + tpop hazard guard: there the AIV's `tpop_from_aic` lands through GM into UB by a
transfer the vector core does not order against its own `tile.load`s, so on a2a3 a buffer a tpop
writes never shares bytes with one a load writes, however their lifetimes fall (a5's pops arrive
over the direct on-chip path and are packed like any other tile).

    before:  mem_vec_0 (a: live 1..3), mem_vec_1 (b: live 2..4), mem_vec_2 (c: live 5..6)
    after:   c: pl.MemRef(mem_vec_0, 0, ...)      # mem_vec_2 dropped
"""

from __future__ import annotations

import bisect
from typing import Optional

from pypto.ir.expr import Call, GlobalVar
from pypto.ir.function import Function, Program
from pypto.ir.stmt import AssignStmt
from pypto.ir.types import MemRef, TileType
from pypto.ir.visitor import defined_vars
from pypto.ir.walks import statements
from pypto.passes.analysis import as_seq, body_list
from pypto.passes.context import current_platform
from pypto.passes.memory.init_mem_ref import apply_memrefs
from pypto.passes.base import function_pass
from pypto.passes.memory.memory_lifetimes import base_of, buffer_lifetimes, may_write_over
from pypto.passes.properties import IRProperty, PassProperties


def is_alloc(s) -> bool:
    return (isinstance(s, AssignStmt) and isinstance(s.value, Call) and not isinstance(s.value.op, GlobalVar)
            and s.value.op.name == "tile.alloc")


_TPOPS = frozenset({"tile.tpop_from_aic", "tile.tpop_from_aiv"})


def _written_by(func: Function) -> dict:
    """{base Var: names of the ops whose results live in it}."""
    out: dict = {}
    for s in statements(func.body):
        if not isinstance(s, AssignStmt):
            continue
        t = s.var.type
        if isinstance(t, TileType) and t.memref is not None and isinstance(s.value, Call) \
                and not isinstance(s.value.op, GlobalVar):
            out.setdefault(t.memref.base, set()).add(s.value.op.name)
    return out


def _conflict(a, b, life, stmt_at) -> bool:
    """Whether buffers a and b are live at the same time (a hand-over at one in-place-safe
    statement is not a conflict)."""
    la, lb = life[a], life[b]
    if la.last < lb.first or lb.last < la.first:
        return False
    for dying, born in ((a, b), (b, a)):
        ld, lb_ = life[dying], life[born]
        if ld.last == lb_.first and ld.first < lb_.first and may_write_over(stmt_at.get(ld.last), dying):
            if stmt_at[ld.last].var.type.memref.base is born:
                return False
    return True


class _Group:
    """Buffers sharing one allocation: their lifetimes sorted by first use. Members never conflict,
    so their intervals are disjoint or touch at one hand-over point, and sorted by first use they are
    sorted by last use too: the members a new interval can overlap are one run found by bisection."""

    def __init__(self, holder, written: dict):
        self.holder = holder
        self.firsts: list = []
        self.members: list = []          # (first, last, base), sorted by first
        self.has_load = self.has_tpop = False
        self.written = written

    def add(self, v, lt) -> None:
        i = bisect.bisect_right(self.firsts, lt.first)
        self.firsts.insert(i, lt.first)
        self.members.insert(i, (lt.first, lt.last, v))
        ops = self.written.get(v, ())
        self.has_load = self.has_load or "tile.load" in ops
        self.has_tpop = self.has_tpop or bool(_TPOPS.intersection(ops))

    def accepts(self, v, life, stmt_at) -> bool:
        ops = self.written.get(v, ())
        if ("tile.load" in ops and self.has_tpop) or (self.has_load and _TPOPS.intersection(ops)):
            return False                 # the a2a3 load + tpop hazard, against any member
        lt = life[v]
        j = bisect.bisect_right(self.firsts, lt.last) - 1
        while j >= 0 and self.members[j][1] >= lt.first:
            if _conflict(v, self.members[j][2], life, stmt_at):
                return False
            j -= 1
        return True


def plan_reuse(func: Function, allocs: Optional[list] = None) -> dict:
    """{dropped base Var: the base Var it now shares}, largest buffers placed first; each joins the
    first group (in creation order) that accepts it. `allocs`: the function's tile.alloc statements,
    if the caller found them already."""
    if allocs is None:
        allocs = [s for s in statements(func.body) if is_alloc(s)]
    life, stmt_at = buffer_lifetimes(func)
    written = _written_by(func) if current_platform().name == "a2a3" else {}
    order = {s.var: i for i, s in enumerate(allocs)}
    by_space: dict = {}
    for s in allocs:
        if s.value.kwargs["addr"] < 0 and not s.value.kwargs.get("pinned") and s.var in life:
            by_space.setdefault(s.value.kwargs["memory_space"], []).append(s)
    merged: dict = {}
    for stmts in by_space.values():
        groups: list = []
        for s in sorted(stmts, key=lambda s: (-s.value.kwargs["size"], order[s.var])):
            group = next((g for g in groups if g.accepts(s.var, life, stmt_at)), None)
            if group is None:
                group = _Group(s.var, written)
                groups.append(group)
            else:
                merged[s.var] = group.holder
            group.add(s.var, life[s.var])
    return merged


def _run(func: Function, program: Program) -> Function:
    allocs = [s for s in statements(func.body) if is_alloc(s)]
    if not allocs:                                # no tile buffers (an orchestration function): nothing to share
        return func
    merged = plan_reuse(func, allocs)
    memref: dict = {}
    defs = defined_vars(func.body)
    for v in [*func.params, *defs]:
        t = v.type
        if isinstance(t, TileType) and t.memref is not None and t.memref.base in merged:
            memref[v] = MemRef(merged[t.memref.base], t.memref.byte_offset, t.memref.size)
    body = apply_memrefs(func.body, memref) if memref else func.body
    # the bases still named: the params' (apply_memrefs retypes the body only), and each binding's
    # base after the merge (what defined_vars(body) would show, without walking the new body)
    used = {b for b in map(base_of, func.params) if b is not None}
    used.update(merged.get(b, b) for b in map(base_of, defs) if b is not None)
    kept = [s for s in body_list(body) if not (is_alloc(s) and s.var not in used)]
    if not memref and len(kept) == len(body_list(body)):
        return func
    return func.replace(body=as_seq(kept, func.body.span))


def peak_before_reuse(func: Function, alignment: int = 32) -> dict:
    """{MemorySpace: bytes} the kernel would need with one buffer per value group (InitMemRef's plan:
    aliases, in-place results and loop carries together, nothing else shared), all placed side by
    side — what MemoryReuse starts from. Works on final IR too, since the groups are recomputed."""
    from pypto.passes.memory.loop_carry_buffers import plan_carry_buffers
    _func, groups = plan_carry_buffers(func)
    sizes: dict = {}
    for v in groups.parent:
        if v.type.memref is None and v.type.nbytes() is None:
            continue
        root = groups.find(v)
        n = v.type.memref.size if v.type.memref is not None else v.type.nbytes()
        sizes[root] = max(sizes.get(root, 0), n)
    peak: dict = {}
    for root, n in sizes.items():
        space = root.type.memory_space
        if space is not None:
            peak[space] = peak.get(space, 0) + (n + alignment - 1) // alignment * alignment
    return peak


def memory_reuse():
    return function_pass("MemoryReuse", _run, PassProperties(required={IRProperty.HasMemRefs}))
