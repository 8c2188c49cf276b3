"""pto-isa split codes of a transfer between the AIC and two AIV lanes (seed 004, "split code").

Lane L of a tile split along `axis` with stride S (the lane tile's extent: the physical half,
rounded up) owns eL = clamp(V - L*S, 0, S) elements of the valid extent V:

    code 1 / 2   UP_DOWN / LEFT_RIGHT        e0 == e1       (lane 1 starts at e1 * pitch)
    code 3 / 4   their odd variants           e0 == e1 + 1   (lane 1 starts at (e1 + 1) * pitch)

Any other pair cannot be placed by pto-isa and is rejected with the extents that would work.
Vector → cube gathers have no odd form. S is the physical half unless the transfer carries
lane_stride (LowerAutoVectorSplit split a ragged boundary's valid region evenly, ragged_rebalance.py).
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.enums import SplitMode
from pypto.ir.expr import ConstInt
from pypto.ir.types import TileType

AXIS = {SplitMode.UP_DOWN: 0, SplitMode.LEFT_RIGHT: 1}


def split_mode(attrs: dict):
    mode = attrs.get("split")
    if mode is None:
        return None
    mode = mode if isinstance(mode, SplitMode) else SplitMode(int(mode))
    return None if mode is SplitMode.NONE else mode


def lane_stride(extent: int) -> int:
    return (extent + 1) // 2


def lane_extents(valid: int, stride: int) -> tuple:
    return tuple(min(max(valid - lane * stride, 0), stride) for lane in (0, 1))


def _static(e, what, span):
    if not isinstance(e, ConstInt):
        raise UnsupportedError(f"pl.split: the {what} of a cross-core tile must be static to split it across "
                               f"the AIV lanes", span)
    return e.value


def transfer_code(full: TileType, mode: SplitMode, gather: bool = False, span=None, stride=None) -> int:
    """The split code for a full-width tile moved between the AIC and the two lanes; `stride` is the
    partition stride when LowerAutoVectorSplit rebalanced a ragged boundary (else the physical half)."""
    axis = AXIS[mode]
    extent = _static(full.shape[axis], "shape", span)
    valid = _static(full.valid_shape[axis], "valid shape", span)
    stride = lane_stride(extent) if stride is None else stride
    e0, e1 = lane_extents(valid, stride)
    even, odd = (1, 3) if axis == 0 else (2, 4)
    if e0 == e1 or e1 == 0:
        return even
    if e0 == e1 + 1 and not gather:
        return odd
    feasible = f"at most {stride}, or {2 * stride}" + ("" if gather else f" or {2 * stride - 1}")
    balanced_hint = (", or any even extent when every split vector tile of the kernel derives from the tile the cube "
            "produced (the lanes then split it evenly)") if gather else ""
    raise UnsupportedError(f"pl.split({mode.name}): a valid extent of {valid} in a box of {extent} leaves the two "
                           f"AIV lanes {e0} and {e1} cells, which the cross-core pipe cannot place"
                           + (" (a vector → cube gather needs equal halves)" if gather else ""), span,
                           hint=f"use a valid extent in {feasible} for this box{balanced_hint}")
