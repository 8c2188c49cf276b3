"""Dual AIV dispatch (a2a3, no split): which AIVs get it, and lane 1's replay tiles are empty in the IR's types.

ExpandMixedKernel stamps attrs dual_aiv_dispatch on every a2a3 AIV without a split mode that
drives a cross-core pipe (stamp_dual_dispatch); SplitVectorKernel lowers the marked ones. Seed 004, step 12 and "对于 Ascend910（a2a3）…双 AIV 派发" (compiler-and-runtime.md §2, dump 24):
a no-split mixed kernel on a2a3 runs its one AIV body on both vector lanes; lane 0 does the
work, lane 1 only replays the cross-core handshakes, with every tile it produces forced to
valid_shape [0, 0] and its stores masked. SplitVectorKernel binds `lane = get_subblock_idx()`,
scales the Vec loads' valid extents by (1 - lane) and puts the stores under `if lane == 0`.
This helper makes the tile *types* say the same: every Vec tile of the body (pops, loads and
what is computed from them, loop carries included) gets valid rows = rows × (1 - lane), so lane
1's replay path is visibly empty in the lowered IR, not only in the simulator. Idempotent.

Only the row extent is scaled: zero valid rows already make the tile empty, and keeping the
other extents whole keeps every replay tile's valid region a row prefix — which a row-major
`tile.reshape` maps exactly (the reshape rule accepts a row-prefix region, e.g. a flattened ND
load reshaped to [16, 16]); scaling every extent would make such a reshape untypeable.

    before:  v: Tile[[16, 16], FP32, Vec] = tpop_from_aic(split=0)
    after:   v: Tile[[16, 16], FP32, Vec, TileView(valid_shape=[16 * (1 - lane), 16])]
                 = tpop_from_aic(split=0)
"""

from __future__ import annotations

from pypto.ir.dtypes import INDEX
from pypto.ir.enums import MemorySpace
from pypto.ir.equality import structural_equal
from pypto.ir.expr import BinaryExpr, Var, const
from pypto.ir.function import Function
from pypto.ir.types import TileType
from pypto.passes.analysis import Retyper


TRANSFERS = ("tile.tpush_to_aiv", "tile.tpop_from_aiv", "tile.tpop_from_aic", "tile.tpush_to_aic")


def needs_dual_dispatch(func: Function, platform_name: str) -> bool:
    """a2a3: an AIV kernel without a split mode that drives a cross-core pipe (built by the split or
    written by hand) runs on both vector lanes so the AIC's handshakes stay symmetric (seed 004, step
    12). A pl.split_aiv kernel is left to SplitVectorKernel's split path (its lanes share the work)."""
    from pypto.ir.enums import FunctionType
    from pypto.ir.expr import GlobalVar
    from pypto.passes.analysis import calls_in
    from pypto.passes.expand_mixed_kernel.split_code import split_mode
    if platform_name != "a2a3" or func.func_type is not FunctionType.AIV or split_mode(func.attrs) is not None:
        return False
    if func.attrs.get("split_aiv") or func.attrs.get("dual_aiv_dispatch"):
        return False
    return any(not isinstance(c.op, GlobalVar) and c.op.name in TRANSFERS for c in calls_in(func.body))


def stamp_dual_dispatch(func: Function, platform_name: str) -> Function:
    """`func` marked dual_aiv_dispatch when it needs it (SplitVectorKernel lowers the lane-1 replay)."""
    if not needs_dual_dispatch(func, platform_name):
        return func
    return func.replace(attrs={**func.attrs, "dual_aiv_dispatch": True})


def _masked(dim, keep) -> bool:
    return isinstance(dim, BinaryExpr) and dim.op == "mul" and structural_equal(dim.rhs, keep,
                                                                                enable_auto_mapping=False)


def replay_valid_shapes(func: Function, lane: Var) -> Function:
    """`func` (a dual-dispatched AIV) with each Vec tile's valid rows scaled by (1 - lane)."""
    keep = BinaryExpr("sub", const(1, INDEX), lane)

    def new_type(t):
        if not isinstance(t, TileType) or t.memory_space not in (MemorySpace.Vec, None) or not t.valid_shape:
            return None
        rows, *rest = t.valid_shape
        if _masked(rows, keep):
            return None
        return t.with_valid_shape([BinaryExpr("mul", rows, keep), *rest])

    return Retyper(new_type).function(func)
