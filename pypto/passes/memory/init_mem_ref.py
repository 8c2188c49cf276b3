"""InitMemRef: give every tile a MemRef backed by a `tile.alloc` at the top of its kernel, and every
tensor a DDR MemRef (GM is the runtime's: no alloc, never placed; ddr_memrefs.py).

Requires: SSAForm, IncoreTileOps, TileMemoryInferred / Produces: HasMemRefs / Invalidates: —
Reference: pass doc 31 (compiler-and-runtime.md §2, dump 32).

Pinned declarations (`pl.MemRef("name")`, `pl.MemRef("name", slots=N)[k]`, see
pypto/language/memref_decl.py) get one `tile.alloc(..., pinned=True)` per name, sized for every
tile bound to it. A new tile value gets its own allocation `mem = pl.tile.alloc(memory_space=..., size=<bytes>,
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

from pypto.errors import TypeCheckError, UnsupportedError
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, ConstInt, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt
from pypto.ir.types import MemRef, PtrType, TileType
from pypto.ir.visitor import defined_vars
from pypto.passes.analysis import VarMemRefs
from pypto.passes.memory.ddr_memrefs import attach_ddr_memrefs
from pypto.passes.memory.loop_carry_buffers import BufferGroups, plan_carry_buffers
from pypto.passes.base import function_pass
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


class _Apply(VarMemRefs):
    """Tiles take their MemRef; a call defining a tile takes its Var's new type."""

    def mutate_assign_stmt(self, s: AssignStmt):
        var = self.mutate(s.var)
        value = self.mutate(s.value)
        if isinstance(value, Call) and isinstance(var.type, TileType) and isinstance(value.type, TileType):
            value = value.replace(type=var.type)
        return s.replace(var=var, value=value)


def apply_memrefs(body, memref: dict):
    """`body` with each Var in `memref` retyped to its MemRef (uses, iter args and call types follow)."""
    return _Apply(memref).mutate(body)


def _declared_allocs(func: Function) -> tuple:
    """Bind the user's pinned declarations (`pl.MemRef("name"[, slots=N])[k]`: MemRef bases bound
    nowhere) to one allocation per name: (func with those tiles rebased, [(base, space, size)])."""
    defined = [*func.params, *defined_vars(func.body)]
    bound = set(defined)
    tiles = [v for v in defined if isinstance(v.type, TileType) and v.type.memref is not None
             and v.type.memref.base not in bound]
    if not tiles:
        return func, []
    by_name: dict = {}
    for v in tiles:
        by_name.setdefault(v.type.memref.base.name_hint, []).append(v)
    memref, allocs = {}, []
    for name, members in by_name.items():
        spaces = {m.type.memory_space or MemorySpace.Vec for m in members}
        if len(spaces) > 1:
            raise TypeCheckError(f"InitMemRef: pinned allocation '{name}' in {func.name} is bound to tiles in "
                                 f"{' and '.join(sorted(s.name for s in spaces))}", members[0].span,
                                 hint="one declared allocation lives in one memory space")
        size = 0
        for m in members:
            offset = m.type.memref.byte_offset
            end = (offset.value if isinstance(offset, ConstInt) else 0) + (m.type.nbytes() or 0)
            size = max(size, m.type.memref.size, end)
        base = Var(name, PtrType(), members[0].span)
        allocs.append((base, spaces.pop(), size))
        for m in members:
            memref[m] = MemRef(base, m.type.memref.byte_offset, m.type.memref.size or m.type.nbytes() or 0)
    return func.replace(body=apply_memrefs(func.body, memref)), allocs


def _run(func: Function, program: Program) -> Function:
    func, tiles, allocs = _tile_plan(func)
    return attach_ddr_memrefs(func, tiles, allocs)      # tensors and tiles retyped in one walk


def _tile_plan(func: Function) -> tuple:
    """(func with its pinned tiles bound and its loop-carry copies in, {tile Var: MemRef} still to
    apply, the `tile.alloc` statements to put first in its body)."""
    if not any(isinstance(v.type, TileType) for v in (*func.params, *defined_vars(func.body))):
        return func, {}, []                       # no tiles (an orchestration function): no buffers to plan
    func, pinned = _declared_allocs(func)
    func, groups = plan_carry_buffers(func)
    planner = _Planner(func, groups)
    memref = planner.plan()
    if not memref and not pinned:
        return func, {}, []
    allocs = []
    for k, (base, space, size) in enumerate(pinned + planner.allocs):
        kwargs = {"memory_space": space, "size": size, "addr": -1, "pinned": k < len(pinned)}
        allocs.append(AssignStmt(base, create_op_call("tile.alloc", [], kwargs, base.span), base.span))
    return func, memref, allocs


def init_mem_ref():
    return function_pass("InitMemRef", _run,
                         PassProperties(required={IRProperty.SSAForm, IRProperty.TileMemoryInferred},
                                        produced={IRProperty.HasMemRefs}))
