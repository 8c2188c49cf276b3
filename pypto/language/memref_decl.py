"""User-declared (pinned) allocations in tile annotations: `pl.MemRef("name")`,
`pl.MemRef("name", slots=N)[k]` and the printed form `pl.MemRef("name", offset, size)`.

A tile annotated with a declaration lives in the allocation of that name: every tile naming it
shares it, and MemoryReuse never packs another tile into it. With `slots=N` the allocation holds
N slots of the tile's (32-byte aligned) size and `[k]` picks one — k may be a runtime value such
as `i % 2`, which is how a loop ping-pongs between buffers:

    a: pl.Tile[[64, 64], pl.FP32, pl.MemRef("ping"), pl.Mem.Vec] = pl.load(x, [0, 0], [64, 64])
    b: pl.Tile[[64, 64], pl.FP32, pl.MemRef("buf", slots=2)[i % 2], pl.Mem.Vec] = pl.load(...)

In the IR a declaration is a MemRef whose base Ptr Var is bound nowhere (its name_hint is the
declared name); InitMemRef gives each name one `tile.alloc(..., pinned=True)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from pypto.errors import TypeCheckError
from pypto.ir.dtypes import INDEX
from pypto.ir.expr import BinaryExpr, ConstInt, Expr, Var
from pypto.ir.types import MemRef, PtrType, TileType

ALIGNMENT = 32


@dataclass(frozen=True)
class MemRefDecl:
    name: str
    slots: Optional[int] = None
    index: Any = None                 # slot index: int or scalar Expr
    byte_offset: Any = None           # the printed three-argument form
    size: Optional[int] = None

    def __getitem__(self, index) -> "MemRefDecl":
        if self.slots is None:
            raise TypeCheckError(f"pl.MemRef({self.name!r}) has no slots to index",
                                 hint=f'declare them: pl.MemRef("{self.name}", slots=2)[i % 2]')
        if isinstance(index, int) and not 0 <= index < self.slots:
            raise TypeCheckError(f"pl.MemRef({self.name!r}, slots={self.slots})[{index}]: slot index out of range")
        return MemRefDecl(self.name, self.slots, index)

    def resolve(self, tile: TileType) -> MemRef:
        """The IR MemRef of a tile bound to this declaration (the base is a fresh unbound Ptr Var)."""
        base = Var(self.name, PtrType())
        if self.byte_offset is not None:
            return MemRef(base, self.byte_offset, self.size or 0)
        nbytes = tile.nbytes()
        if nbytes is None:
            raise TypeCheckError(f"pl.MemRef({self.name!r}) needs a tile with a static shape")
        slot = (nbytes + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
        if self.slots is None:
            return MemRef(base, 0, nbytes)
        if self.index is None:
            raise TypeCheckError(f"pl.MemRef({self.name!r}, slots={self.slots}) needs a slot index",
                                 hint=f'pl.MemRef("{self.name}", slots={self.slots})[k]')
        k = self.index
        if isinstance(k, int):
            offset = ConstInt(k * slot, INDEX)
        elif isinstance(k, Expr):
            offset = BinaryExpr("mul", k, ConstInt(slot, INDEX), INDEX)
        else:
            raise TypeCheckError(f"pl.MemRef({self.name!r}, slots=...)[k]: k must be an integer, got {k!r}")
        return MemRef(base, offset, slot * self.slots)


def declare(name: str, byte_offset=None, size=None, slots: Optional[int] = None) -> MemRefDecl:
    if slots is not None and (not isinstance(slots, int) or slots < 1):
        raise TypeCheckError(f"pl.MemRef({name!r}, slots=...): slots must be a positive integer, got {slots!r}")
    if (byte_offset is None) != (size is None):
        raise TypeCheckError(f"pl.MemRef({name!r}, ...) takes only a name, or a name, byte offset and size")
    return MemRefDecl(name, slots, None, byte_offset, size)
