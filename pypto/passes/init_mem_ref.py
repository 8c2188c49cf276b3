"""InitMemRef: give every tile a MemRef backed by a `tile.alloc` at the top of its kernel.

Requires: SSAForm, IncoreTileOps, TileMemoryInferred / Produces: HasMemRefs / Invalidates: —
Reference: pass doc 31 (compiler-and-runtime.md §2, dump 32).

A new tile value gets its own allocation `mem = pl.tile.alloc(memory_space=..., size=<bytes>,
addr=-1)`; values that must live in the same buffer share it: in-place ops (OpDef.reuses_input),
plain aliases, if return vars (the then-branch's yielded value's) and each loop carry — init,
iter arg, yielded value and return var in one buffer, with a `tile.move` copy inserted where
sharing would overwrite a live value (see loop_carry_buffers.py).

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
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, ScopeStmt, WhileStmt
from pypto.ir.types import MemRef, PtrType, TileType
from pypto.ir.visitor import IRMutator
from pypto.passes.analysis import as_seq, body_list
from pypto.passes.loop_carry_buffers import BufferGroups, insert_carry_copies, shared_source, yielded
from pypto.passes.manager import function_pass
from pypto.passes.properties import IRProperty, PassProperties


class _Planner:
    """Groups tile Vars that must share a buffer, then gives each group one allocation."""

    def __init__(self, func: Function):
        self.func = func
        self.groups = BufferGroups()
        self.memref: dict = {}
        self.allocs: list = []          # (base Var, space, size)
        self.counts: dict = {}

    def body(self, stmt) -> None:
        for s in body_list(stmt):
            self.stmt(s)

    def stmt(self, s) -> None:
        g = self.groups
        if isinstance(s, AssignStmt):
            g.add(s.var)
            src = shared_source(s.value)
            if src is not None:
                g.union(src, s.var)
        elif isinstance(s, (ForStmt, WhileStmt)):
            # one buffer per carry (insert_carry_copies made that safe): init, iter arg, yield, result
            for ia in s.iter_args:
                g.add(ia)
                if isinstance(ia.init_value, Var):
                    g.union(ia.init_value, ia)
            self.body(s.body)
            values = yielded(s.body)
            for k, rv in enumerate(s.return_vars):
                g.add(rv)
                if k < len(s.iter_args):
                    g.union(s.iter_args[k], rv)
                    if k < len(values) and isinstance(values[k], Var):
                        g.union(values[k], rv)
        elif isinstance(s, IfStmt):
            self.body(s.then_body)
            if s.else_body is not None:
                self.body(s.else_body)
            # an if result names the then-branch value's buffer (the type the text form gives it)
            for rv, v in zip(s.return_vars, yielded(s.then_body)):
                g.add(rv)
                if isinstance(v, Var):
                    g.union(v, rv)
        elif isinstance(s, ScopeStmt):
            self.body(s.body)

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


def _run(func: Function, program: Program) -> Function:
    func = insert_carry_copies(func)
    planner = _Planner(func)
    for p in func.params:
        planner.groups.add(p)
    planner.body(func.body)
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
