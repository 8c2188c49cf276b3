"""tile.select(cond, on_true, on_false): the scratch-free per-element selection (seed 001, tile.select).

    y = pl.tile.select(pl.tile.cmps(t, 0.0, cmp_type=pl.CmpType.GT), t, 0.0)     # relu-like

`cond` is always a packed predicate mask, i.e. exactly the result type of tile.cmp / tile.cmps
for the result's geometry: UINT8 [..., roundup(ceil(N/8), 32)] (leading dims kept) with
valid_shape[-1] = ceil(valid_N / 8). `is_packed_predicate_mask` is the one place that decides it; this type rule
and the LowerCompositeOps rule both call it. A 0/1 value tile is deliberately not a second
accepted form: its valid extent counts elements while a mask's counts bytes, so a shape-based
guess could silently re-compare the mask's bytes and lose its bits.

Branches: two tiles (same physical shape, valid shape and dtype: TSEL neither broadcasts nor
converts), or one tile and one literal scalar (materialized with tile.full or folded into
TSELS, so it must be a compile-time constant and the tile's shape static). Explicit tile.sel /
tile.sels remain the 1:1 forms with caller-managed scratch.
"""

from __future__ import annotations

from pypto.errors import TypeCheckError
from pypto.ir.expr import ConstFloat, ConstInt, Expr, UnaryExpr, as_int
from pypto.ir.ops.common import (MASK_DTYPE, describe, dims_equal, expect_scalar, fmt_shape, packed_mask_shape,
                                 result_like, same_dtype, scalar_fits)
from pypto.ir.ops.registry import READ, VECTOR, OpDef, register_op
from pypto.ir.types import TileType, Type, static_dims


def _same_exprs(a, b) -> bool:
    """Equal where both are static; identical objects otherwise."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        vx, vy = as_int(x), as_int(y)
        if vx is not None and vy is not None:
            if vx != vy:
                return False
        elif x is not y and (vx is not None or vy is not None):
            return False
    return True


def is_packed_predicate_mask(mask_type: Type, shape, valid_shape) -> bool:
    """Whether mask_type is the packed predicate tile.cmp / tile.cmps yield for a [shape] operand."""
    if not isinstance(mask_type, TileType) or mask_type.dtype is not MASK_DTYPE or len(shape) < 1:
        return False
    if as_int(shape[-1]) is None:
        return False
    want_shape, want_valid = packed_mask_shape("tile.select", shape, valid_shape)
    return _same_exprs(mask_type.shape, want_shape) and _same_exprs(mask_type.valid_shape, want_valid)


def literal_value(e: Expr):
    """The Python number of a literal scalar branch (None when it is not a compile-time constant)."""
    if isinstance(e, (ConstInt, ConstFloat)):
        return e.value
    if isinstance(e, UnaryExpr) and e.op == "neg" and isinstance(e.operand, (ConstInt, ConstFloat)):
        return -e.operand.value
    return None


def _check_scalar_branch(arg: str, e: Expr, tile: TileType) -> None:
    s = expect_scalar("tile.select", arg, e)
    if literal_value(e) is None:
        raise TypeCheckError(f"tile.select: scalar argument '{arg}' must be a compile-time constant, got a runtime "
                             f"{describe(s)}", hint="the scalar is broadcast with tile.full, which takes a literal; "
                                                    "for a runtime bound, load it as a tile and pass tile branches")
    scalar_fits("tile.select", tile, s, arg)
    if static_dims(tile.shape) is None:
        raise TypeCheckError(f"tile.select: a scalar branch needs a static tile shape, got {fmt_shape(tile.shape)}",
                             hint="the scalar is materialized by tile.full, which has static extents only")


def _select_type(args, kw):
    cond, on_true, on_false = args
    t_tile, f_tile = isinstance(on_true.type, TileType), isinstance(on_false.type, TileType)
    if not (t_tile or f_tile):
        raise TypeCheckError("tile.select: 'on_true' and 'on_false' are both scalars; at least one must be a Tile",
                             hint="a scalar-only choice is ordinary scalar arithmetic")
    ref: TileType = on_true.type if t_tile else on_false.type
    if t_tile and f_tile:
        other: TileType = on_false.type
        same_dtype("tile.select", ref.dtype, other.dtype, "arguments 'on_true' and 'on_false'")
        if not dims_equal(ref.shape, other.shape) or not _same_exprs(ref.shape, other.shape):
            raise TypeCheckError(f"tile.select: 'on_true' {fmt_shape(ref.shape)} and 'on_false' "
                                 f"{fmt_shape(other.shape)} have different shapes; select does not broadcast",
                                 hint="broadcast explicitly (row_expand / col_expand) to one shape first")
        if not _same_exprs(ref.valid_shape, other.valid_shape):
            raise TypeCheckError(f"tile.select: 'on_true' and 'on_false' have different valid shapes "
                                 f"{fmt_shape(ref.valid_shape)} and {fmt_shape(other.valid_shape)}",
                                 hint="select neither broadcasts nor narrows: give both branches one valid_shape "
                                      "(set the loads' valid_shape, or pl.fillpad the narrower one)")
    elif t_tile:
        _check_scalar_branch("on_false", on_false, ref)
    else:
        _check_scalar_branch("on_true", on_true, ref)
    if ref.rank < 1:
        raise TypeCheckError("tile.select: the branches must be tiles, not rank-0 values")
    if not is_packed_predicate_mask(cond.type, ref.shape, ref.valid_shape):
        want, want_valid = packed_mask_shape("tile.select", ref.shape, ref.valid_shape)
        raise TypeCheckError(f"tile.select: argument 'cond' must be the packed {MASK_DTYPE.name} predicate mask "
                             f"{fmt_shape(want)} (valid {fmt_shape(want_valid)}) of a {fmt_shape(ref.shape)} "
                             f"comparison, got {describe(cond.type)}",
                             hint="build it with pl.tile.cmp / pl.tile.cmps on operands of this shape; a 0/1 value "
                                  "tile converts with pl.tile.cmps(v, 0, cmp_type=1)")
    return result_like(ref)


register_op(OpDef("tile.select", args=("cond", "on_true", "on_false"), deduce=_select_type, affinity=VECTOR,
                  output_memory="inherit", effects={0: READ, 1: READ, 2: READ},
                  description="cond ? on_true : on_false per element (composite: LowerCompositeOps lowers it to "
                              "tile.sel / tile.sels with backend-planned scratch)"))
