"""InitMemRef: give every tile a MemRef backed by a `tile.alloc` at the top of its kernel.

Requires: SSAForm, IncoreTileOps, TileMemoryInferred / Produces: HasMemRefs / Invalidates: —
Reference: pass doc 31 (compiler-and-runtime.md §2, dump 32).

A new tile value gets its own allocation `mem = pl.tile.alloc(memory_space=..., size=<bytes>,
addr=-1)`; values that must live in the same buffer share it: in-place ops (OpDef.reuses_input),
plain aliases, iter args (their init's buffer), loop return vars (the iter arg's) and if
return vars (the then-branch's yielded value's).

    before:  t: pl.Tile[[64], pl.FP32, pl.Mem.Vec] = pl.tile.load(...)
    after:   mem_vec_0: pl.Ptr = pl.tile.alloc(memory_space=pl.Mem.Vec, size=256, addr=-1)
             t: pl.Tile[[64], pl.FP32, pl.MemRef(mem_vec_0, 0, 256), pl.Mem.Vec] = pl.tile.load(...)
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, GlobalVar, IterArg, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import Kwarg, OpDef, create_op_call, has_op, register_op
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, ScopeStmt, WhileStmt, YieldStmt
from pypto.ir.types import MemRef, PtrType, TileType
from pypto.ir.visitor import IRMutator
from pypto.passes.analysis import as_seq, body_list
from pypto.passes.manager import function_pass
from pypto.passes.properties import IRProperty, PassProperties


def ensure_alloc_op() -> None:
    """`tile.alloc` belongs to the op registry; declare it here only while pypto/ir/ops lacks it."""
    if not has_op("tile.alloc"):
        register_op(OpDef("tile.alloc", kwargs={"memory_space": Kwarg(MemorySpace), "size": Kwarg(int),
                                                "addr": Kwarg(int, -1)},
                          deduce=lambda args, kw: PtrType(), description="reserve an on-chip buffer"))


class _Planner:
    """Groups tile Vars that must share a buffer (union-find), then gives each group one allocation."""

    def __init__(self, func: Function):
        self.func = func
        self.parent: dict = {}          # tile Var → representative
        self.order: dict = {}           # tile Var → definition index (the earlier Var represents a group)
        self.memref: dict = {}
        self.allocs: list = []          # (base Var, space, size)
        self.counts: dict = {}

    # -- groups ----------------------------------------------------------------
    def find(self, v):
        while self.parent[v] is not v:
            self.parent[v] = self.parent[self.parent[v]]
            v = self.parent[v]
        return v

    def add(self, v) -> None:
        if isinstance(v, Var) and isinstance(v.type, TileType) and v not in self.parent:
            self.parent[v] = v
            self.order[v] = len(self.order)

    def union(self, a, b) -> None:
        """Same buffer for a and b (only between tiles of one memory space)."""
        if a not in self.parent or b not in self.parent:
            return
        if a.type.memory_space != b.type.memory_space:
            return
        ra, rb = self.find(a), self.find(b)
        if ra is not rb:
            first, second = (ra, rb) if self.order[ra] < self.order[rb] else (rb, ra)
            self.parent[second] = first

    # -- walk --------------------------------------------------------------------
    def body(self, stmt) -> None:
        for s in body_list(stmt):
            self.stmt(s)

    def stmt(self, s) -> None:
        if isinstance(s, AssignStmt):
            self.add(s.var)
            src = self.shared_source(s.value)
            if src is not None:
                self.union(src, s.var)
        elif isinstance(s, (ForStmt, WhileStmt)):
            for ia in s.iter_args:
                self.add(ia)
                if isinstance(ia.init_value, Var):
                    self.union(ia.init_value, ia)
            self.body(s.body)
            self.merge(s.return_vars, [s.body], s.iter_args)
        elif isinstance(s, IfStmt):
            self.body(s.then_body)
            if s.else_body is not None:
                self.body(s.else_body)
            self.merge(s.return_vars, [b for b in (s.then_body, s.else_body) if b is not None], ())
        elif isinstance(s, ScopeStmt):
            self.body(s.body)

    def merge(self, return_vars, bodies, carried) -> None:
        """A loop result names its iter arg's buffer, an if result the then-branch's yielded value's
        (the types the text form gives them). Only names join a group here, never an op's
        destination: an op result merged with the iter arg's buffer would overwrite the init value
        while it may still be live."""
        stmts = body_list(bodies[0]) if bodies else []
        values = stmts[-1].values if stmts and isinstance(stmts[-1], YieldStmt) else ()
        for i, rv in enumerate(return_vars):
            self.add(rv)
            if i < len(carried):
                self.union(carried[i], rv)
            elif i < len(values) and isinstance(values[i], Var):
                self.union(values[i], rv)

    def shared_source(self, value):
        """The tile a value must share its buffer with (alias, in-place op), if any."""
        if isinstance(value, Var):
            return value
        if isinstance(value, Call) and not isinstance(value.op, GlobalVar) and value.op.reuses_input is not None:
            i = value.op.reuses_input
            if i < len(value.args) and isinstance(value.args[i], Var):
                return value.args[i]
        return None

    # -- allocations ---------------------------------------------------------------
    def plan(self) -> dict:
        groups: dict = {}
        for v in self.parent:
            groups.setdefault(self.find(v), []).append(v)
        for root, members in groups.items():
            fixed = next((m.type.memref for m in members if m.type.memref is not None), None)
            ref = fixed if fixed is not None else self.new_alloc(root, members)
            for m in members:
                self.memref[m] = m.type.memref if m.type.memref is not None else ref
        return self.memref

    def new_alloc(self, root: Var, members: list) -> MemRef:
        sizes = [m.type.nbytes() for m in members]
        if any(sz is None for sz in sizes):
            bad = members[sizes.index(None)]
            raise UnsupportedError(f"InitMemRef: tile '{bad.name_hint}' in {self.func.name} has a dynamic shape, so "
                                   "its buffer size is unknown", bad.span,
                                   hint="give the tile a static physical shape and a dynamic valid_shape")
        space = root.type.memory_space or MemorySpace.Vec
        k = self.counts.get(space, 0)
        self.counts[space] = k + 1
        base = Var(f"mem_{space.name.lower()}_{k}", PtrType(), root.span)
        self.allocs.append((base, space, max(sizes)))
        return MemRef(base, 0, max(sizes))


class _Apply(IRMutator):
    def __init__(self, memref: dict):
        self.memref = memref
        self.vars: dict = {}

    def mutate_var(self, v: Var):
        got = self.vars.get(v)
        if got is not None:
            return got
        ref = self.memref.get(v)
        if ref is None or v.type.memref is ref:
            self.vars[v] = v
            return v
        t = v.type.replace(memref=ref)
        if isinstance(v, IterArg):
            new = IterArg(v.name_hint, t, self.mutate(v.init_value), v.span)
        else:
            new = Var(v.name_hint, t, v.span)
        self.vars[v] = new
        return new

    def mutate_assign_stmt(self, s: AssignStmt):
        var = self.mutate(s.var)
        value = self.mutate(s.value)
        if isinstance(value, Call) and isinstance(var.type, TileType) and isinstance(value.type, TileType):
            value = value.replace(type=var.type)
        return s.replace(var=var, value=value)


def _run(func: Function, program: Program) -> Function:
    planner = _Planner(func)
    planner.body(func.body)
    memref = planner.plan()
    if not memref:
        return func
    ensure_alloc_op()
    applier = _Apply(memref)
    body = applier.mutate(func.body)
    allocs = [AssignStmt(base, create_op_call("tile.alloc", [], {"memory_space": space, "size": size, "addr": -1},
                                              base.span), base.span)
              for base, space, size in planner.allocs]
    return func.replace(body=as_seq(allocs + body_list(body), func.body.span))


def init_mem_ref():
    return function_pass("InitMemRef", _run,
                         PassProperties(required={IRProperty.SSAForm, IRProperty.TileMemoryInferred},
                                        produced={IRProperty.HasMemRefs}))
