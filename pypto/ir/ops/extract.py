"""tile.extract: copy a 2-D window of a Mat tile straight into Left / Right (one `pto.textract`).

AutoTileMatmulL0 emits it for the per-iteration operand slabs of a K loop: the window is read
from the Mat-resident operand and lands in the cube's input buffer, with no intermediate Mat
slice tile.

    l = pl.tile.extract(a_mat, mi, ko, [64, 32], target_memory=pl.Mem.Left)   # a_mat[mi:mi+64, ko:ko+32]
"""

from __future__ import annotations

from pypto.errors import TypeCheckError
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import as_int
from pypto.ir.ops.common import expect_scalar, expect_tile, expect_tuple, fmt_shape
from pypto.ir.ops.registry import CUBE, READ, Kwarg, OpDef, register_op
from pypto.ir.types import TileType

_TARGETS = (MemorySpace.Left, MemorySpace.Right, MemorySpace.Mat)


def _extract_type(args, kw):
    src = expect_tile("tile.extract", "src", args[0])
    if src.rank != 2:
        raise TypeCheckError(f"tile.extract: argument 'src' must be a 2-D tile, got rank {src.rank}")
    if src.memory_space is not None and src.memory_space is not MemorySpace.Mat:
        raise TypeCheckError(f"tile.extract: argument 'src' must be in Mat, got {src.memory_space.name}",
                             hint="load the operand into Mat first (pl.load(..., target_memory=pl.Mem.Mat))")
    expect_scalar("tile.extract", "index_row", args[1])
    expect_scalar("tile.extract", "index_col", args[2])
    shape = expect_tuple("tile.extract", "shape", args[3])
    if len(shape) != 2:
        raise TypeCheckError(f"tile.extract: argument 'shape' must have 2 entries, got {len(shape)}")
    if kw["target_memory"] not in _TARGETS:
        raise TypeCheckError(f"tile.extract: target_memory must be Left, Right or Mat, got {kw['target_memory'].name}")
    for k, (s, o, d) in enumerate(zip(shape, args[1:3], src.shape)):
        s, o, d = as_int(s), as_int(o), as_int(d)
        if s is not None and d is not None and (s > d or (o is not None and o + s > d)):
            raise TypeCheckError(f"tile.extract: dim {k}: window of {s} at {o} exceeds the source extent {d} "
                                 f"of {fmt_shape(src.shape)}")
    return TileType(shape, src.dtype, memory_space=kw["target_memory"])


register_op(OpDef("tile.extract", args=("src", "index_row", "index_col", "shape"),
                  kwargs={"target_memory": Kwarg(MemorySpace, MemorySpace.Left)},
                  deduce=_extract_type, affinity=CUBE, output_memory="target_memory", effects={0: READ},
                  input_memory={0: (MemorySpace.Mat,)},
                  description="Mat window [row:row+h, col:col+w] → a Left / Right (or Mat) tile"))
