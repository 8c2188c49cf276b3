"""Simulator semantics of tensor.view, tile.set_validshape and tile.fillpad_inplace (pypto/ir/ops/view_valid.py).

tensor.view is a numpy reshape that must stay a view of the same bytes (so stores through it,
and a peer's remote access to a window viewed this way, reach the original buffer);
set_validshape keeps the tile's bytes and changes only its valid region; fillpad_inplace
writes the pad value outside the valid region and makes the whole tile valid.
"""

from __future__ import annotations

import numpy as np

from pypto.errors import SimulationError
from pypto.ir.enums import PadValue
from pypto.runtime.sim.ops.numeric import fill_outside, pad_scalar


def view(ctx, out, x, shape, valid_shape=None, **kwargs):
    dims = tuple(int(d) for d in shape)
    if int(np.prod(dims)) != x.size:
        raise SimulationError(f"tensor.view: shape {list(dims)} holds {int(np.prod(dims))} elements, the source "
                              f"{list(x.shape)} holds {x.size}")
    flat = x.reshape(dims)
    if x.size and not np.shares_memory(flat, x):
        raise SimulationError(f"tensor.view: the source {list(x.shape)} is not packed row-major; a view at "
                              f"{list(dims)} would be a copy")
    return flat


def set_validshape(ctx, out, x, rows, cols, **kwargs):
    rows, cols = int(rows), int(cols)
    if not (0 <= rows <= x.data.shape[0] and 0 <= cols <= x.data.shape[1]):
        raise SimulationError(f"tile.set_validshape: valid [{rows}, {cols}] is outside the tile {list(x.data.shape)}")
    if out.data is not x.data and not np.shares_memory(out.data, x.data):
        out.data[...] = x.data
    out.valid = (rows, cols)
    return out


def fillpad_inplace(ctx, out, x, pad_value=PadValue.zero, **kwargs):
    if out.data is not x.data and not np.shares_memory(out.data, x.data):
        out.data[...] = x.data
    fill_outside(out.data, x.valid, pad_scalar(pad_value, out.data.dtype))
    out.valid = out.data.shape
    return out


def table() -> dict:
    return {"tensor.view": view, "tile.set_validshape": set_validshape, "tile.fillpad_inplace": fillpad_inplace}
