"""Row-major flattening of an N-D GM window into a 2-D tile: the one rule that the flattened
forms of tile.load / tile.store and the FlattenTileNdTo2D pass share (no ops are registered here).

The DMA walks a window [d0, .., d(k-1), dk] row by row in row-major order, so the window lands
in a tile [d0 * .. * d(k-1), dk] with the same bytes. A tile has one valid rectangle
[rows, cols], so the window's valid region [v0, .., vk] must be the first `rows` rows of that
walk: every leading dim after the last partial one is whole, and every leading dim before it
has valid extent 1. Only then does the valid region survive flattening.

    flat_shape([2, 16, 32])                          -> [32, 32]
    flat_valid([2, 16, 32], [2, 16, 20])             -> (32, 20)     partial last dim
    flat_valid([2, 16, 32], [1, 9, 32])              -> (9, 32)      rows 0..8
    flat_valid([2, 16, 32], [2, 9, 32])              -> UnsupportedError (rows 0..8 and 16..24)
"""

from __future__ import annotations

from typing import Optional

from pypto.errors import UnsupportedError
from pypto.ir.dtypes import INDEX
from pypto.ir.expr import BinaryExpr, ConstInt, Expr, as_int


def flat_shape(shape, what: str, span=None) -> list:
    """[d0, ..., dk] → [d0 * ... * d(k-1), dk]; the physical dims must be static."""
    dims = [as_int(d) for d in shape]
    if any(d is None for d in dims):
        raise UnsupportedError(f"FlattenTileNdTo2D: {what} has a dynamic physical shape; rank > 2 tiles must be "
                               "static to flatten", span, hint="give the tile a static shape (valid_shape may vary)")
    lead = 1
    for d in dims[:-1]:
        lead *= d
    return [lead, dims[-1]]


def flat_valid(shape, valid, what: str, span=None) -> tuple:
    """(rows, cols) of the flattened valid region, as Exprs; UnsupportedError when the N-D valid
    region is not a prefix of rows (see the module docstring)."""
    dims = [as_int(d) for d in shape]
    lead_valid = list(valid[:-1])
    k = len(lead_valid) - 1
    while k >= 0 and as_int(lead_valid[k]) == dims[k]:
        k -= 1                                    # dims k+1.. are whole
    tail = 1
    for d in dims[k + 1:-1]:
        tail *= d
    if k < 0:
        return ConstInt(tail, INDEX), valid[-1]
    before = [as_int(v) for v in lead_valid[:k]]
    if any(v != 1 and d != 1 for v, d in zip(before, dims[:k])):
        raise UnsupportedError(
            f"FlattenTileNdTo2D: {what} has valid region {_fmt(valid)} in shape {_fmt(shape)}; its valid rows are "
            "not the first rows of the flattened [rows, cols] tile, so one 2-D valid region cannot describe it",
            span, hint="make every leading dim after the first partial one whole, or split the window per leading "
                       "index (one 2-D tile each)")
    return _times(lead_valid[k], tail), valid[-1]


def _times(v: Expr, tail: int) -> Expr:
    known: Optional[int] = as_int(v)
    if known is not None:
        return ConstInt(known * tail, INDEX)
    return v if tail == 1 else BinaryExpr("mul", v, ConstInt(tail, v.type.dtype))


def _fmt(dims) -> str:
    return "[" + ", ".join(str(as_int(d)) if as_int(d) is not None else getattr(d, "name_hint", "?")
                           for d in dims) + "]"


def flat_load_type(tensor_type, shapes, valid, tile_shape, space):
    """Result type of the flattened tile.load: [prod(leading), last] with the flattened valid region."""
    from pypto.errors import TypeCheckError
    from pypto.ir.types import TileType
    if len(shapes) < 2:
        raise TypeCheckError("tile.load: argument 'tile_shape' flattens an N-D window; the window has rank "
                             f"{len(shapes)}", hint="drop tile_shape for a 1-D window")
    flat = flat_shape(shapes, "tile.load window")
    if [as_int(d) for d in tile_shape] != flat:
        raise TypeCheckError(f"tile.load: argument 'tile_shape' must be the row-major flattening {flat} of the "
                             f"window {_fmt(shapes)}, got {_fmt(tile_shape)}")
    rows, cols = flat_valid(shapes, valid, "tile.load window")
    tt = TileType(flat, tensor_type.dtype, memory_space=space)
    if as_int(rows) == flat[0] and as_int(cols) == flat[1]:
        return tt
    return tt.with_valid_shape((rows, cols))


def flat_store_check(tile_type, shapes, out_type) -> None:
    """The flattened tile.store: a 2-D tile whose valid [rows, cols] is the window `shapes` row-major."""
    from pypto.errors import TypeCheckError
    if tile_type.rank != 2 or len(shapes) != out_type.rank:
        raise TypeCheckError(f"tile.store: argument 'shapes' names an N-D window of the output tensor (rank "
                             f"{out_type.rank}) for a 2-D tile; got a rank {tile_type.rank} tile and {len(shapes)} "
                             "shapes")
    lead = 1
    for d in shapes[:-1]:
        lead = None if lead is None or as_int(d) is None else lead * as_int(d)
    rows, cols = (as_int(v) for v in tile_type.valid_shape)
    for what, want, got in (("rows", lead, rows), ("cols", as_int(shapes[-1]), cols)):
        if want is not None and got is not None and want != got:
            raise TypeCheckError(f"tile.store: window {_fmt(shapes)} has {want} {what} row-major, but the tile's "
                                 f"valid region {_fmt(tile_type.valid_shape)} has {got}")
