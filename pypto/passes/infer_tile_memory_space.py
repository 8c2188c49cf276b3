"""InferTileMemorySpace: every tile ends with a memory space.

Requires: SSAForm, IncoreTileOps / Produces: TileMemoryInferred / Invalidates: —
Reference: pass doc 17 (compiler-and-runtime.md §2, dump 18) — minimum form.

Three steps: backward demand — a Vec load read only by the cube (moves to Left / Right / Bias,
cube operands) is retargeted to Mat (tile_memory_demand.py); forward resolution — type
deduction already places loads (target_memory), matmul results (Acc) and elementwise results
(their lhs's space), and a tile still without a space is a vector-unit value, so it lands in Vec;
then a tile.move for each operand in a space its op cannot read (operand_moves.py).

    before:  t: pl.Tile[[64], pl.FP32] = ...
    after:   t: pl.Tile[[64], pl.FP32, pl.Mem.Vec] = ...
"""

from __future__ import annotations

from pypto.ir.enums import MemorySpace
from pypto.ir.function import Function, Program
from pypto.ir.types import TileType, TupleType
from pypto.passes.analysis import Retyper
from pypto.passes.manager import function_pass
from pypto.passes.operand_moves import insert_operand_moves
from pypto.passes.properties import IRProperty, PassProperties
from pypto.passes.tile_memory_demand import retarget_loads_by_demand


def _with_space(t):
    if isinstance(t, TileType) and t.memory_space is None:
        return TileType(t.shape, t.dtype, t.memref, t.tile_view, MemorySpace.Vec)
    if isinstance(t, TupleType):
        parts = [_with_space(x) for x in t.types]
        if any(p is not None for p in parts):
            return TupleType([p or x for p, x in zip(parts, t.types)])
    return None


def _run(func: Function, program: Program) -> Function:
    return insert_operand_moves(Retyper(_with_space).function(retarget_loads_by_demand(func)))


def infer_tile_memory_space():
    return function_pass("InferTileMemorySpace", _run,
                         PassProperties(required={IRProperty.SSAForm},
                                        produced={IRProperty.TileMemoryInferred}))
