"""InitMemRef: give every tile a MemRef backed by a `tile.alloc` at the top of its kernel.

Requires: SSAForm, IncoreTileOps, TileMemoryInferred / Produces: HasMemRefs / Invalidates: —
Reference: pass doc 31 (compiler-and-runtime.md §2, dump 32).

A new tile value gets its own allocation `mem = pl.tile.alloc(memory_space=..., size=<bytes>,
addr=-1)`; values that must live in the same buffer share it: in-place ops (OpDef.reuses_input),
plain aliases, if return vars (the then-branch's yielded value's, and the else value's when it
can live there too) and each loop carry — init, iter arg, yielded value and return var in one
buffer, with a `tile.move` copy inserted where sharing would overwrite a live value
(loop_carry_buffers.py decides the groups).

    before:  t: pl.Tile[[64], pl.FP32, pl.Mem.Vec] = pl.tile.load(...)
    after:   mem_vec_0: pl.Ptr = pl.tile.alloc(memory_space=pl.Mem.Vec, size=256, addr=-1)
             t: pl.Tile[[64], pl.FP32, pl.MemRef(mem_vec_0, 0, 256), pl.Mem.Vec] = pl.tile.load(...)
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, IterArg, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt
from pypto.ir.types import MemRef, PtrType, TileType
from pypto.ir.visitor import IRMutator
from pypto.passes.analysis import as_seq, body_list
from pypto.passes.loop_carry_buffers import BufferGroups, plan_carry_buffers
from pypto.passes.manager import function_pass
from pypto.passes.properties import IRProperty, PassProperties


class _Planner:
    """Gives each buffer group (from loop_carry_buffers) one allocation."""

    def __init__(self, func: Function, groups: BufferGroups):
        self.func = func
        self.groups = groups
        self.memref: dict = {}
        self.allocs: list = []          # (base Var, space, size)
        self.counts: dict = {}

    def plan(self) -> dict:
        by_root: dict = {}
        for v in self.groups.parent:
            by_root.setdefault(self.groups.find(v), []).append(v)
        for root, members in by_root.items():
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


def apply_memrefs(body, memref: dict):
    """`body` with each Var in `memref` retyped to its MemRef (uses, iter args and call types follow)."""
    return _Apply(memref).mutate(body)


def _run(func: Function, program: Program) -> Function:
    func, groups = plan_carry_buffers(func)
    planner = _Planner(func, groups)
    memref = planner.plan()
    if not memref:
        return func
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
