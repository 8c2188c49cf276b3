"""AllocateMemoryAddr: place each memory space's allocations and fill every `tile.alloc`'s addr.

Requires: HasMemRefs / Produces: AllocatedMemoryAddr / Invalidates: —
Reference: pass doc 34 (compiler-and-runtime.md §2, dump 35; the allocator policy of §5.5).

Per kernel and memory space, allocations are sorted by name (numeric suffixes in numeric
order) and placed one after another from 0, each start aligned to the platform's 32 bytes.
A space that overflows the platform capacity (`PassContext.current().platform`) raises a
CapacityError naming the space, the bytes needed and available, and the largest tiles.

    before:  mem_vec_0 = pl.tile.alloc(memory_space=pl.Mem.Vec, size=256, addr=-1)
             mem_vec_1 = pl.tile.alloc(memory_space=pl.Mem.Vec, size=100, addr=-1)
    after:   ... addr=0) ... addr=256)
"""

from __future__ import annotations

import re

from pypto.errors import CapacityError
from pypto.ir.enums import FunctionType, MemorySpace
from pypto.ir.expr import Call, GlobalVar
from pypto.ir.function import Function, Program
from pypto.ir.stmt import AssignStmt
from pypto.ir.types import TileType
from pypto.ir.visitor import defined_vars
from pypto.ir.visitor import IRMutator, collect_statements
from pypto.ir.walks import statements
from pypto.passes.context import current_platform
from pypto.passes.base import function_pass
from pypto.passes.properties import IRProperty, PassProperties

HARDWARE_NAME = {MemorySpace.Vec: "UB", MemorySpace.Mat: "L1", MemorySpace.Left: "L0A", MemorySpace.Right: "L0B",
                 MemorySpace.Acc: "L0C", MemorySpace.Bias: "BT", MemorySpace.LeftScale: "L0A scale",
                 MemorySpace.RightScale: "L0B scale"}


def _natural_key(name: str):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _is_alloc(s) -> bool:
    return (isinstance(s, AssignStmt) and isinstance(s.value, Call) and not isinstance(s.value.op, GlobalVar)
            and s.value.op.name == "tile.alloc")


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def _overflow(func: Function, space, needed: int, capacity: int, bases: set) -> CapacityError:
    tiles = {}
    for v in [*func.params, *defined_vars(func.body)]:
        if isinstance(v.type, TileType) and v.type.memref is not None and v.type.memref.base in bases:
            tiles.setdefault(v.type.memref.base, v)
    largest = sorted(tiles.values(), key=lambda v: -v.type.memref.size)[:3]
    listing = "; ".join(f"'{v.name_hint}' {v.type.memref.size} B" + (f" at {v.span}" if v.span and v.span.is_known()
                                                                        else "") for v in largest)
    label = f"{space.name} ({HARDWARE_NAME.get(space, space.name)})"
    return CapacityError(f"kernel {func.name}: the {label} buffers need {needed} bytes but the platform has "
                         f"{capacity} bytes", largest[0].span if largest else func.span,
                         hint="use smaller tiles (loop over blocks) or reuse buffers",
                         note=f"largest tiles: {listing}" if listing else "")


def _is_auto_ring_buffer(s) -> bool:
    return (isinstance(s, AssignStmt) and isinstance(s.value, Call) and not isinstance(s.value.op, GlobalVar)
            and s.value.op.name == "system.reserve_buffer" and s.value.kwargs.get("base", -1) == -1)


# On a5 a cross-core ring lives in the consumer's SRAM: the AIV's UB for C2V, the AIC's L1 for V2C.
# (On a2a3 it lives in GM, `__gm_pipe_buffer`, so an AUTO base there stays -1: no SRAM is taken.)
_RING_SPACE = {FunctionType.AIV: MemorySpace.Vec, FunctionType.AIC: MemorySpace.Mat}


def _place_ring_buffers(func: Function, platform, end_of: dict, addr_of: dict) -> None:
    """Give every `system.reserve_buffer(base=AUTO)` a base after the tiles of its consumer space, so a
    ring and the kernel's tiles together must fit the capacity (else CapacityError naming the ring)."""
    space = _RING_SPACE.get(func.func_type)
    if platform.name != "a5" or space is None:
        return
    for s in collect_statements(func.body, _is_auto_ring_buffer):
        offset = _align(end_of.get(space, 0), platform.alignment)
        addr_of[s] = offset
        end_of[space] = offset + int(s.value.kwargs["size"])
        capacity = platform.space_capacity(space)
        if end_of[space] > capacity:
            label = f"{space.name} ({HARDWARE_NAME.get(space, space.name)})"
            raise CapacityError(f"kernel {func.name}: the cross-core ring '{s.value.kwargs.get('name')}' "
                                f"({s.value.kwargs['size']} bytes) does not fit in {label} after the kernel's tiles: "
                                f"{end_of[space]} bytes needed, {capacity} available", s.span or func.span,
                                hint="lower the slot count (pl.cross_core_slot) or use smaller tiles")


def _run(func: Function, program: Program) -> Function:
    allocs = [s for s in statements(func.body) if _is_alloc(s)]
    platform = current_platform()
    if not allocs and not (platform.name == "a5" and collect_statements(func.body, _is_auto_ring_buffer)):
        return func
    by_space: dict = {}
    for s in allocs:
        by_space.setdefault(s.value.kwargs["memory_space"], []).append(s)
    addr_of: dict = {}
    end_of: dict = {}
    for space, stmts in by_space.items():
        offset = 0
        for s in sorted(stmts, key=lambda s: _natural_key(s.var.name_hint)):
            offset = _align(offset, platform.alignment)
            addr_of[s] = offset
            offset += s.value.kwargs["size"]
        capacity = platform.space_capacity(space)
        if offset > capacity:
            raise _overflow(func, space, offset, capacity, {s.var for s in stmts})
        end_of[space] = offset
    _place_ring_buffers(func, platform, end_of, addr_of)

    return func.replace(body=_FillAddresses(addr_of).mutate(func.body))


class _FillAddresses(IRMutator):
    """Writes each placed statement's address (`addr_of`: statement → byte offset) into its call."""

    def __init__(self, addr_of: dict):
        self.addr_of = addr_of

    def mutate_assign_stmt(self, s):
        addr = self.addr_of.get(s)
        if addr is not None:
            kwargs = dict(s.value.kwargs)
            kwargs["base" if s.value.op.name == "system.reserve_buffer" else "addr"] = addr
            return s.replace(value=s.value.replace(kwargs=kwargs))
        return s                      # an assignment holds no statement, so nothing placed below it


def allocate_memory_addr():
    return function_pass("AllocateMemoryAddr", _run,
                         PassProperties(required={IRProperty.HasMemRefs},
                                        produced={IRProperty.AllocatedMemoryAddr}))
