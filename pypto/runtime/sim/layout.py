"""Where each tile of a final-IR kernel lives: the static part of the machine binding.

A tile var's bytes start at `addr(base) + byte_offset`, where `base` is the Ptr Var bound by
`base = tile.alloc(memory_space=..., size=..., addr=...)` at the top of the kernel. When both
parts are compile-time constants the view is bound once per core (`TileSlot`); otherwise the
generated code binds it when the statement runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from pypto.errors import SimulationError
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, ConstInt, Var
from pypto.ir.stmt import AssignStmt
from pypto.ir.types import TileType, static_dims
from pypto.ir.visitor import IRVisitor


@dataclass(frozen=True)
class Alloc:
    """One `tile.alloc`: the memory space, the byte size and the assigned address (-1: none)."""
    space: MemorySpace
    size: int
    addr: Optional[int]


@dataclass
class TileSlot:
    """A tile var with a static placement: bound to one TileValue per core, once."""
    name: str
    space: MemorySpace
    addr: int
    shape: tuple
    dtype: object          # numpy dtype
    valid: tuple
    span: object


def _kw_or_arg(call: Call, key: str, index: int):
    if key in call.kwargs:
        return call.kwargs[key]
    if index < len(call.args):
        return call.args[index]
    return None


def _const(v) -> Optional[int]:
    if isinstance(v, ConstInt):
        return v.value
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    return None


def read_alloc(call: Call) -> Alloc:
    space = _kw_or_arg(call, "memory_space", 0)
    if isinstance(space, str):
        space = MemorySpace[space]
    size = _const(_kw_or_arg(call, "size", 1)) or 0
    addr = _const(_kw_or_arg(call, "addr", 2))
    return Alloc(space, size, addr)


class _AllocFinder(IRVisitor):
    def __init__(self):
        self.allocs: dict = {}

    def visit_assign_stmt(self, stmt: AssignStmt):
        v = stmt.value
        if isinstance(v, Call) and not v.is_function_call() and v.op.name == "tile.alloc":
            self.allocs[stmt.var] = read_alloc(v)
        self.visit_children(stmt)


def find_allocs(func) -> dict:
    """Ptr Var → Alloc for every `tile.alloc` in the function."""
    finder = _AllocFinder()
    finder.visit(func.body)
    return finder.allocs


def static_placement(var: Var, allocs: dict):
    """(space, addr) when the tile's address is a compile-time constant, else None.

    Raises when the tile has a MemRef whose base is not a tile.alloc of this function.
    """
    t = var.type
    memref = t.memref
    alloc = allocs.get(memref.base)
    if alloc is None:
        raise SimulationError(f"tile '{var.name_hint}' has a MemRef whose base "
                              f"'{getattr(memref.base, 'name_hint', memref.base)}' is not bound by a tile.alloc "
                              "in its kernel", var.span)
    offset = _const(memref.byte_offset)
    if alloc.addr is None or offset is None:
        return None
    space = t.memory_space or alloc.space
    if alloc.addr < 0:
        return space, -1                      # not placed: binding reports it
    return space, alloc.addr + offset


def tile_valid(t: TileType) -> tuple:
    """The static valid region of a tile type (dynamic entries start at the full extent)."""
    shape = static_dims(t.shape)
    out = []
    for i, d in enumerate(t.valid_shape):
        out.append(d.value if isinstance(d, ConstInt) else shape[i])
    return tuple(out)
