"""InitMemRef: give every tile a MemRef backed by a `tile.alloc` at the top of its kernel.

Requires: SSAForm, IncoreTileOps, TileMemoryInferred / Produces: HasMemRefs / Invalidates: —
Reference: pass doc 31 (compiler-and-runtime.md §2, dump 32).

A new tile value gets its own allocation `mem = pl.tile.alloc(memory_space=..., size=<bytes>,
addr=-1)`; values that must live in the same buffer share it: in-place ops (OpDef.reuses_input),
plain aliases, iter args (their init's buffer) and loop / if return vars (the yield's buffer).

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
    """Decides each tile Var's MemRef, walking the function in program order."""

    def __init__(self, func: Function):
        self.func = func
        self.memref: dict = {}
        self.allocs: list = []          # (base Var, space, size)
        self.counts: dict = {}

    def new_alloc(self, var: Var) -> MemRef:
        t = var.type
        size = t.nbytes()
        if size is None:
            raise UnsupportedError(f"InitMemRef: tile '{var.name_hint}' in {self.func.name} has a dynamic shape, so "
                                   "its buffer size is unknown", var.span,
                                   hint="give the tile a static physical shape and a dynamic valid_shape")
        space = t.memory_space or MemorySpace.Vec
        k = self.counts.get(space, 0)
        self.counts[space] = k + 1
        base = Var(f"mem_{space.name.lower()}_{k}", PtrType(), var.span)
        self.allocs.append((base, space, size))
        return MemRef(base, 0, size)

    def assign(self, var: Var, ref) -> None:
        if isinstance(var.type, TileType):
            if var.type.memref is not None:
                self.memref[var] = var.type.memref
            else:
                self.memref[var] = ref if ref is not None else self.new_alloc(var)

    def source_ref(self, value):
        """The MemRef a value must share, if any (alias, in-place op)."""
        if isinstance(value, Var):
            return self.memref.get(value)
        if isinstance(value, Call) and not isinstance(value.op, GlobalVar) and value.op.reuses_input is not None:
            i = value.op.reuses_input
            if i < len(value.args) and isinstance(value.args[i], Var) and isinstance(value.type, TileType):
                src = value.args[i]
                ref = self.memref.get(src)
                if ref is not None and src.type.memory_space == value.type.memory_space:
                    return ref
        return None

    def body(self, stmt) -> None:
        for s in body_list(stmt):
            self.stmt(s)

    def stmt(self, s) -> None:
        if isinstance(s, AssignStmt):
            self.assign(s.var, self.source_ref(s.value))
        elif isinstance(s, (ForStmt, WhileStmt)):
            for ia in s.iter_args:
                self.assign(ia, self.memref.get(ia.init_value) if isinstance(ia.init_value, Var) else None)
            self.body(s.body)
            self.bind_returns(s.return_vars, s.body)
        elif isinstance(s, IfStmt):
            self.body(s.then_body)
            if s.else_body is not None:
                self.body(s.else_body)
            self.bind_returns(s.return_vars, s.then_body)
        elif isinstance(s, ScopeStmt):
            self.body(s.body)

    def bind_returns(self, return_vars, body) -> None:
        stmts = body_list(body)
        values = stmts[-1].values if stmts and isinstance(stmts[-1], YieldStmt) else ()
        for i, rv in enumerate(return_vars):
            v = values[i] if i < len(values) else None
            self.assign(rv, self.memref.get(v) if isinstance(v, Var) else None)


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
    if not planner.memref:
        return func
    ensure_alloc_op()
    applier = _Apply(planner.memref)
    body = applier.mutate(func.body)
    allocs = [AssignStmt(base, create_op_call("tile.alloc", [], {"memory_space": space, "size": size, "addr": -1},
                                              base.span), base.span)
              for base, space, size in planner.allocs]
    return func.replace(body=as_seq(allocs + body_list(body), func.body.span))


def init_mem_ref():
    return function_pass("InitMemRef", _run,
                         PassProperties(required={IRProperty.SSAForm, IRProperty.TileMemoryInferred},
                                        produced={IRProperty.HasMemRefs}))
