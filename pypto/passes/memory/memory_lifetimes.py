"""Buffer lifetimes of one kernel for MemoryReuse: each tile.alloc's live interval over the
kernel's statements in program order, and whether a statement may write its result over a
buffer whose life ends there.

Positions number the statements depth-first; a loop owns the range from its header to its end
(return vars). A buffer touched both inside a loop and outside it (or carried by it) is live for
the whole loop, since every iteration reads it again; inside a `pl.pipeline` loop every buffer a
top-level `tile.load` of the body writes is live for the whole loop, so the next stage's prefetch
never lands on bytes the current stage still computes from (compute intermediates may share, as
in the reference: keeping every tile private overflows L0 on real kernels). A read of an if result (or of an alias of one) touches both branches' buffers, since the
result names the then value's buffer even when the else branch produced it.

    life, stmt_at = buffer_lifetimes(func)    # {base Var: Lifetime(first, last, defs)}, {position: AssignStmt}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from pypto.ir.enums import ForKind
from pypto.ir.expr import Call, GlobalVar, Var
from pypto.ir.function import Function
from pypto.ir.ops.registry import READ
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, ScopeStmt, WhileStmt
from pypto.ir.types import TileType, static_dims
from pypto.ir.visitor import collect_statements
from pypto.passes.analysis import body_list, used_vars
from pypto.passes.memory.loop_carry_buffers import yielded


@dataclass
class Lifetime:
    first: int
    last: int
    defs: list = field(default_factory=list)        # positions where a tile of the buffer is written


def base_of(v) -> Optional[Var]:
    t = getattr(v, "type", None)
    if isinstance(t, TileType) and t.memref is not None:
        return t.memref.base
    return None


def _may_read(func: Function) -> dict:
    """Var → the bases its reads may really touch. An if result names the then value's buffer, but
    when the else branch ran it is the else value's buffer (InitMemRef's inexact if results); an
    alias (`y = x`) reads whatever x reads."""
    sources: dict = {}
    for s in collect_statements(func.body, lambda n: isinstance(n, (IfStmt, AssignStmt))):
        if isinstance(s, AssignStmt):
            if isinstance(s.value, Var):
                sources.setdefault(s.var, []).append(s.value)
            continue
        for branch in (s.then_body, s.else_body):
            for k, value in enumerate(yielded(branch) if branch is not None else ()):
                if k < len(s.return_vars):
                    sources.setdefault(s.return_vars[k], []).append(value)
    out: dict = {}

    def bases(v, seen=()) -> frozenset:
        if v in out:
            return out[v]
        own = {base_of(v)} - {None}
        for src in sources.get(v, ()):
            if src not in seen:
                own |= bases(src, seen + (v,))
        out[v] = frozenset(own)
        return out[v]

    for v in sources:
        bases(v)
    return out


class _Walk:
    def __init__(self, may_read: dict):
        self.may_read = may_read
        self.pos = 0
        self.touch: dict = {}            # base → [positions]
        self.defs: dict = {}             # base → [positions of writes]
        self.loops: list = []            # (header, end, bases kept private for the whole loop)
        self.stmt_at: dict = {}          # position → AssignStmt

    def mark(self, v, pos: int, write: bool = False) -> None:
        for b in self.may_read.get(v, ()) if not write else ():
            self.touch.setdefault(b, []).append(pos)
        b = base_of(v)
        if b is not None:
            self.touch.setdefault(b, []).append(pos)
            if write:
                self.defs.setdefault(b, []).append(pos)

    def stmts(self, stmts: list) -> None:
        for s in stmts:
            self.stmt(s)

    def stmt(self, s) -> None:
        if isinstance(s, (ForStmt, WhileStmt)):
            self.pos += 1
            head = self.pos
            for ia in s.iter_args:
                self.mark(ia.init_value, head)
                self.mark(ia, head, write=True)
            if isinstance(s, ForStmt):
                for e in (s.start, s.stop, s.step):
                    for v in used_vars(e):
                        self.mark(v, head)
            else:
                for v in used_vars(s.condition):
                    self.mark(v, head)
            self.stmts(body_list(s.body))
            self.pos += 1
            for rv in s.return_vars:
                self.mark(rv, self.pos, write=True)
            for ia in s.iter_args:
                self.mark(ia, self.pos)
            private = _pipeline_loads(s) if isinstance(s, ForStmt) and s.kind is ForKind.Pipeline else frozenset()
            self.loops.append((head, self.pos, private))
        elif isinstance(s, IfStmt):
            self.pos += 1
            for v in used_vars(s.condition):
                self.mark(v, self.pos)
            self.stmts(body_list(s.then_body))
            if s.else_body is not None:
                self.stmts(body_list(s.else_body))
            self.pos += 1
            for rv in s.return_vars:
                self.mark(rv, self.pos, write=True)
        elif isinstance(s, ScopeStmt):
            self.stmts(body_list(s.body))
        else:
            self.pos += 1
            for v in used_vars(s):
                self.mark(v, self.pos)
            if isinstance(s, AssignStmt):
                self.mark(s.var, self.pos, write=True)
                self.stmt_at[self.pos] = s


def _pipeline_loads(loop: ForStmt) -> frozenset:
    """The buffers the pipeline loop's top-level tile.load statements write."""
    out = set()
    for s in body_list(loop.body):
        if isinstance(s, AssignStmt) and isinstance(s.value, Call) and getattr(s.value.op, "name", None) == "tile.load":
            b = base_of(s.var)
            if b is not None:
                out.add(b)
    return frozenset(out)


def buffer_lifetimes(func: Function) -> tuple:
    """({base: Lifetime}, {position: AssignStmt}) for the kernel's tile buffers."""
    w = _Walk(_may_read(func))
    for p in func.params:
        w.mark(p, 0, write=True)
    w.stmts(body_list(func.body))
    life = {b: Lifetime(min(ps), max(ps), sorted(set(w.defs.get(b, [])))) for b, ps in w.touch.items()}
    changed = True
    while changed:
        changed = False
        for head, end, private in w.loops:
            for b, lt in life.items():
                inside = any(head < p < end for p in w.touch[b])
                if not inside:
                    continue
                crosses = lt.first <= head or lt.last >= end or b in private
                if crosses and (lt.first > head or lt.last < end):
                    lt.first, lt.last = min(lt.first, head), max(lt.last, end)
                    changed = True
    return life, w.stmt_at


def may_write_over(stmt: Optional[AssignStmt], dying: Var) -> bool:
    """Whether `stmt` may write its result into the bytes of `dying` (a buffer whose last read is
    this statement): an op that reads each element before writing the same element — the operand
    has the result's shape and element size, the op reads it (not a scratch it writes), and the op
    is not marked not_inplace_safe (transposes and other element-permuting ops). Widening casts and
    broadcasts fail the shape / element-size test."""
    if stmt is None or not isinstance(stmt.value, Call) or isinstance(stmt.value.op, GlobalVar):
        return False
    op, out = stmt.value.op, stmt.var.type
    if getattr(op, "not_inplace_safe", False) or not isinstance(out, TileType):
        return False
    readers = [i for i, a in enumerate(stmt.value.args) if base_of(a) is dying]
    if not readers:
        return False
    for i in readers:
        a = stmt.value.args[i].type
        if op.effects.get(i) != READ:
            return False
        if static_dims(a.shape) != static_dims(out.shape) or a.dtype.get_bit() != out.dtype.get_bit():
            return False
    return True
