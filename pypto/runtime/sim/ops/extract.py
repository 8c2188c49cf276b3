"""Numpy semantics of tile.extract (mirrors pypto/ir/ops/extract.py): a window of a Mat tile
copied into the destination tile, bounds-checked against the source's physical shape."""

from __future__ import annotations

from pypto.errors import SimulationError
from pypto.runtime.sim.ops.numeric import write_valid


def extract(ctx, out, src, index_row, index_col, shape, **kwargs):
    r, c = int(index_row), int(index_col)
    h, w = int(shape[0]), int(shape[1])
    rows, cols = src.data.shape
    if r < 0 or c < 0 or r + h > rows or c + w > cols:
        raise SimulationError(f"tile.extract: window [{r}:{r + h}, {c}:{c + w}] is outside the source tile "
                              f"{rows}x{cols}")
    return write_valid(out, src.data[r:r + h, c:c + w])


def table() -> dict:
    return {"tile.extract": extract}
