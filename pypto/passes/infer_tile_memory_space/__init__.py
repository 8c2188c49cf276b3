"""InferTileMemorySpace: every tile ends with a concrete memory space, every operand in a space its op reads.

Requires: SSAForm, IncoreTileOps / Produces: TileMemoryInferred / Invalidates: —
Reference: pass doc 17 (compiler-and-runtime.md §2 row 18): backward demand → forward resolution
→ insert tile.move → retarget target_memory → hoist loop-invariant Mat tiles.

Four steps, each its own module:
  1. backward demand + retargeting (tile_memory_demand.py): a tile.load / tile.create whose
     readers all demand one space lands there (a Vec load only the cube reads → Mat; a load
     followed only by a pl.move into one space lands there and the move goes);
  2. forward resolution (tile_memory_resolution.py): every tile Var — iter-args, loop / if
     return vars and aliases included — gets the space its producer puts it in;
  3. operand moves (operand_moves.py): a tile.move for each operand in a space its op cannot read;
  4. loop-invariant Mat residency (mat_load_hoisting.py): a Mat load of a loop-invariant GM
     window inside a sequential loop moves before the loop (with its Mat → Left / Right staging
     when only matmuls read that).

    before:  t: pl.Tile[[64], pl.FP32] = pl.tile.exp(x)
    after:   t: pl.Tile[[64], pl.FP32, pl.Mem.Vec] = pl.tile.exp(x)
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.enums import FunctionType
from pypto.ir.function import Function, Program
from pypto.ir.stmt import AssignStmt, EvalStmt
from pypto.ir.types import TileType
from pypto.ir.walks import statements
from pypto.passes.base import function_pass
from pypto.passes.infer_tile_memory_space.mat_load_hoisting import hoist_invariant_mat_loads
from pypto.passes.infer_tile_memory_space.operand_moves import insert_operand_moves
from pypto.passes.properties import IRProperty, PassProperties
from pypto.passes.infer_tile_memory_space.tile_memory_demand import retarget_loads_by_demand
from pypto.passes.infer_tile_memory_space.tile_memory_resolution import resolve_tile_memory


def _run(func: Function, program: Program) -> Function:
    if func.func_type is FunctionType.Orchestration:
        _reject_host_tiles(func)
        return func
    func = insert_operand_moves(resolve_tile_memory(retarget_loads_by_demand(func)))
    return hoist_invariant_mat_loads(func, program)


def _reject_host_tiles(func: Function) -> None:
    """A tile in host code is the "forgot `with pl.at(...)`" mistake: an error at the first tile op."""
    for node in statements(func.body):           # (only statements can be the offending op)
        expr = node.value if isinstance(node, AssignStmt) else node.expr if isinstance(node, EvalStmt) else None
        name = getattr(getattr(expr, "op", None), "name", "")
        if name.startswith("tile.") or (isinstance(node, AssignStmt) and isinstance(node.var.type, TileType)):
            raise UnsupportedError(f"tile op {name or 'result'} in host code ('{func.name}' runs on the host): tile "
                                   "ops run on a core", node.span,
                                   hint="put the tile ops inside `with pl.at(level=pl.Level.CORE_GROUP):`")


def infer_tile_memory_space():
    return function_pass("InferTileMemorySpace", _run,
                         PassProperties(required={IRProperty.SSAForm},
                                        produced={IRProperty.TileMemoryInferred}))
