"""The shared detector of an unsplittable transpose (seed 004, "不可切分的转置"), and the
whole-function fallback check ExpandMixedKernel keeps for callers that skipped LowerAutoVectorSplit.

A `tile.transpose` that swaps the split axis cannot be split over the two AIV lanes: each lane's
half moves to the other dim while the split still halves the original one. LowerAutoVectorSplit
reports it to the author (with the mode and the fixes). This pass can be run on its own after
InferTileMemorySpace, where nothing checks its required properties; without the fallback such a
kernel would be expanded silently and SplitVectorKernel would compute wrong shapes. The failure is
a skipped pass step, not something the author can read off the source: an InternalError that
names the step.
"""

from __future__ import annotations

from pypto.errors import InternalError
from pypto.ir.expr import ConstInt, GlobalVar
from pypto.ir.function import Function
from pypto.ir.types import TileType
from pypto.passes.analysis import calls_in
from pypto.passes.expand_mixed_kernel.split_code import AXIS, split_mode


def _axis_arg(e, rank: int):
    v = e.value if isinstance(e, ConstInt) else e if isinstance(e, int) else None
    return None if v is None else v % rank


def transpose_split_hazard(body, axis: int):
    """The first `tile.transpose` whose source is not a singleton on the split axis (a dynamic extent
    counts as non-singleton), or None. A singleton source carries no split data (a broadcast no-op)."""
    for c in calls_in(body):
        if isinstance(c.op, GlobalVar) or c.op.name != "tile.transpose" or not isinstance(c.args[0].type, TileType):
            continue
        shape = c.args[0].type.shape
        swapped = {_axis_arg(c.args[1], len(shape)), _axis_arg(c.args[2], len(shape))}
        if axis not in swapped and None not in swapped:
            continue
        extent = shape[axis] if axis < len(shape) else None
        if isinstance(extent, ConstInt) and extent.value == 1:
            continue
        return c
    return None


def check_no_split_transpose(func: Function) -> None:
    """The fallback: a function-level split kernel reaching this pass with a hazard transpose."""
    mode = split_mode(func.attrs)
    if mode is None or func.attrs.get("split_aiv"):
        return
    call = transpose_split_hazard(func.body, AXIS[mode])
    if call is not None:
        raise InternalError(f"ExpandMixedKernel: kernel {func.name} (split {mode.name}) still holds a tile.transpose "
                            "that swaps its split axis; LowerAutoVectorSplit, which rejects it, did not run before "
                            "this pass (property AivSplitLoweredValid does not hold)", call.span)
