"""Core affinity of ops and statements (seed 004, "亲和性分类"), and CV boundary moves.

An op runs on the cube side (AIC), the vector side (AIV), either (SHARED: scalars, control,
calls) or both (MIXED: a `tile.move` whose source and target memories sit on different sides
— a CV boundary, turned into a tpush / tpop pair). Ops without a declared affinity follow the
memory their tile operands live in; a SHARED op with a tile result (e.g. `tile.create`) goes
where that tile lives.

    move(acc: Acc → Vec)   → MIXED, boundary C2V        matmul → CUBE        add(Vec) → VECTOR
    sync_set(4, core_type="aiv") → VECTOR (an explicit sync's core_type routes it to one lane)
"""

from __future__ import annotations

from typing import Optional

from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, GlobalVar
from pypto.ir.ops.registry import CUBE, MIXED, SHARED, VECTOR
from pypto.ir.stmt import AssignStmt, EvalStmt, ForStmt, IfStmt, SeqStmts, WhileStmt
from pypto.ir.types import TileType

CUBE_SPACES = frozenset({MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc, MemorySpace.Bias,
                         MemorySpace.LeftScale, MemorySpace.RightScale})
C2V, V2C = "c2v", "v2c"


def side_of_space(space) -> Optional[str]:
    if space is None:
        return None
    return CUBE if space in CUBE_SPACES else VECTOR if space is MemorySpace.Vec else None


def boundary_direction(c: Call) -> Optional[str]:
    """C2V / V2C for a `tile.move` that crosses the cube ↔ vector line (or a split region's
    `tile.aiv_shard` / `tile.aic_gather`), else None."""
    if isinstance(c.op, GlobalVar):
        return None
    if c.op.name in ("tile.aiv_shard", "tile.aic_gather"):
        return C2V if c.op.name == "tile.aiv_shard" else V2C
    if c.op.name != "tile.move" or not isinstance(c.args[0].type, TileType):
        return None
    src = side_of_space(c.args[0].type.memory_space)
    dst = side_of_space(c.kwargs.get("target_memory"))
    if src is None or dst is None or src == dst:
        return None
    return C2V if src == CUBE else V2C


# A call attr a split_aiv region leaves on a statement it placed on one core kind (e.g. a notify the
# author wrote inside the region): the placed side keeps it, the other drops it; stripped after the split.
PLACEMENT_ATTR = "core_placement"
_PLACED = {"aiv": VECTOR, "aic": CUBE}


def call_affinity(c: Call) -> str:
    """VECTOR, CUBE, SHARED or MIXED for one call."""
    placed = _PLACED.get(c.attrs.get(PLACEMENT_ATTR)) if c.attrs else None
    if placed is not None:
        return placed
    if isinstance(c.op, GlobalVar):
        return SHARED
    lane = _PLACED.get(c.kwargs.get("core_type")) if "core_type" in c.kwargs else None
    if lane is not None:             # an explicit sync event names the one core type that raises / awaits it
        return lane
    if boundary_direction(c) is not None:
        return MIXED
    if c.op.affinity not in (None, SHARED):
        return c.op.affinity
    if c.op.affinity == SHARED:
        space = c.type.memory_space if isinstance(c.type, TileType) else None
        return side_of_space(space) or SHARED
    if c.op.name == "tile.load":
        return side_of_space(c.kwargs.get("target_memory")) or VECTOR
    spaces = [a.type.memory_space for a in c.args if isinstance(a.type, TileType)]
    if isinstance(c.type, TileType):
        spaces.append(c.type.memory_space)
    spaces = [s for s in spaces if s is not None]
    if not spaces:
        return SHARED
    return side_of_space(spaces[0]) or SHARED


def stmt_call(s) -> Optional[Call]:
    value = s.value if isinstance(s, AssignStmt) else s.expr if isinstance(s, EvalStmt) else None
    return value if isinstance(value, Call) else None


def stmt_affinity(s) -> str:
    """The side(s) a statement needs: a compound statement is MIXED when its body holds both sides."""
    c = stmt_call(s)
    if c is not None:
        return call_affinity(c)
    children = []
    if isinstance(s, SeqStmts):
        children = list(s.stmts)
    elif isinstance(s, (ForStmt, WhileStmt)):
        children = [s.body]
    elif isinstance(s, IfStmt):
        children = [s.then_body] + ([s.else_body] if s.else_body is not None else [])
    sides = {stmt_affinity(ch) for ch in children} - {SHARED}
    if MIXED in sides or sides == {CUBE, VECTOR}:
        return MIXED
    return sides.pop() if sides else SHARED
