"""Shared type-rule helpers for the op families (no implicit dtype promotion anywhere).

The tensor.* and tile.* families share their rules: a rule factory takes the op name and
looks at its prefix to decide whether operands must be Tensors or Tiles, e.g.

    register_op(OpDef("tile.exp", args=("x",), deduce=unary_rule("tile.exp", float_only=True)))
"""

from __future__ import annotations

from typing import Optional

from pypto.errors import TypeCheckError
from pypto.ir.dtypes import INDEX, UINT8, DataType
from pypto.ir.expr import BinaryExpr, ConstInt, Expr, MakeTuple, as_int
from pypto.ir.types import (ScalarType, ShapedType, TensorType, TensorView, TileType, TileView, TupleType, Type,
                            UnknownType, implicit_tile_view, static_dims)


# ---------------------------------------------------------------------------- argument checks
def expect_tile(op: str, arg: str, e: Expr) -> TileType:
    if not isinstance(e.type, TileType):
        raise TypeCheckError(f"{op}: argument '{arg}' must be a Tile, got {describe(e.type)}",
                             hint="load tensors into tiles with pl.load, or use the tensor-level op")
    return e.type


def expect_tensor(op: str, arg: str, e: Expr) -> TensorType:
    if not isinstance(e.type, TensorType):
        raise TypeCheckError(f"{op}: argument '{arg}' must be a Tensor, got {describe(e.type)}",
                             hint="tile values are stored to tensors with pl.store")
    return e.type


def expect_shaped(op: str, arg: str, e: Expr) -> ShapedType:
    """A Tile for tile.* ops, a Tensor for tensor.* ops."""
    if op.startswith("tile."):
        return expect_tile(op, arg, e)
    return expect_tensor(op, arg, e)


def expect_scalar(op: str, arg: str, e: Expr) -> ScalarType:
    if not isinstance(e.type, ScalarType):
        raise TypeCheckError(f"{op}: argument '{arg}' must be a scalar, got {describe(e.type)}",
                             hint="tile/tensor operands use the non-scalar form of the op")
    return e.type


def expect_tuple(op: str, arg: str, e: Expr) -> tuple:
    if not isinstance(e, MakeTuple):
        raise TypeCheckError(f"{op}: argument '{arg}' must be a list of integers or scalars, got {describe(e.type)}")
    for x in e.elements:
        if not isinstance(x.type, ScalarType) or not (x.type.dtype.is_int()):
            raise TypeCheckError(f"{op}: argument '{arg}' must hold integers, got an element of type {describe(x.type)}")
    _check_static_extents(op, arg, e.elements)
    return e.elements


def _check_static_extents(op: str, arg: str, elements) -> None:
    """Written shapes must be positive and valid extents non-negative: a negative extent used to run as
    Python's negative slicing (63 of 64 columns) and a zero shape to divide by zero in a later pass."""
    least = 1 if arg in ("shape", "shapes") else 0 if arg in ("valid_shape", "valid_shapes") else None
    if least is None:
        return
    for k, x in enumerate(elements):
        v = as_int(x)
        if v is not None and v < least:
            raise TypeCheckError(f"{op}: {arg}[{k}] is {v}; {'a shape' if least else 'a valid extent'} must be "
                                 f"{'positive' if least else 'zero or more'}",
                                 hint="check the sign and the arithmetic of this extent")


def expect_const_int(op: str, arg: str, e: Expr) -> int:
    v = as_int(e)
    if v is None:
        raise TypeCheckError(f"{op}: argument '{arg}' must be a compile-time integer")
    return v


def expect_axis(op: str, arg: str, e: Expr, rank: int) -> int:
    axis = expect_const_int(op, arg, e)
    if axis < 0:
        axis += rank
    if not 0 <= axis < rank:
        raise TypeCheckError(f"{op}: argument '{arg}' = {axis} is out of range for rank {rank}")
    return axis


def expect_float(op: str, arg: str, t: ShapedType) -> None:
    if not t.dtype.is_float():
        raise TypeCheckError(f"{op}: argument '{arg}' must have a floating-point dtype, got {t.dtype.name}",
                             hint=f"cast first, e.g. pl.cast(x, pl.FP32)")


def same_dtype(op: str, a: DataType, b: DataType, what: str = "operands") -> None:
    if a is not b:
        raise TypeCheckError(f"{op}: {what} have different dtypes {a.name} and {b.name}; pypto does not promote implicitly",
                             hint=f"cast one side explicitly, e.g. pl.cast(x, pl.{a.name})")


def scalar_fits(op: str, t: ShapedType, s: ScalarType, arg: str = "rhs") -> None:
    """A scalar operand is converted to the tile's dtype; only float → integer is refused (it would truncate)."""
    if (t.dtype.is_int() or t.dtype.kind == "bool") and s.dtype.is_float():
        raise TypeCheckError(f"{op}: argument '{arg}' is a {s.dtype.name} scalar but the operand is {t.dtype.name}",
                             hint=f"use an integer literal, or pl.cast the operand to a float dtype")


def dims_equal(a, b) -> bool:
    """Shapes equal where both dims are static; two symbolic dims are accepted (cannot disprove)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, ConstInt) and isinstance(y, ConstInt):
            if x.value != y.value:
                return False
        elif isinstance(x, ConstInt) != isinstance(y, ConstInt):
            continue  # static vs symbolic: cannot disprove either
    return True


def same_shape(op: str, a, b, what: str = "operands") -> None:
    if not dims_equal(a, b):
        raise TypeCheckError(f"{op}: {what} have different shapes {fmt_shape(a)} and {fmt_shape(b)}",
                             hint="broadcast explicitly with row_expand_* / col_expand_*, or slice to one shape")


def fmt_shape(shape) -> str:
    return "[" + ", ".join(str(d.value) if isinstance(d, ConstInt) else getattr(d, "name_hint", "?") for d in shape) + "]"


def describe(t: Optional[Type]) -> str:
    if isinstance(t, TileType):
        return f"Tile{fmt_shape(t.shape)} {t.dtype.name}"
    if isinstance(t, TensorType):
        return f"Tensor{fmt_shape(t.shape)} {t.dtype.name}"
    if isinstance(t, ScalarType):
        return f"Scalar {t.dtype.name}"
    if isinstance(t, TupleType):             # several results (a call returning a tuple)
        return f"a tuple of {len(t.types)} values ({', '.join(describe(x) for x in t.types)})"
    if isinstance(t, UnknownType):
        return "nothing (a call without a result)"
    return type(t).__name__


def static_or_none(shape) -> Optional[tuple]:
    return static_dims(shape)


def is_full(shape, valid) -> bool:
    return static_dims(shape) is not None and static_dims(shape) == static_dims(valid)


# ---------------------------------------------------------------------------- result types
def result_like(t: ShapedType, shape=None, dtype: Optional[DataType] = None, valid=None,
                keep_view: bool = True) -> ShapedType:
    """A result of the same kind (and memory space) as `t`, without `t`'s MemRef.

    keep_view keeps the operand's view (layout, pad, valid_shape) — right for elementwise ops;
    shape-changing ops pass keep_view=False and get a plain view with only `valid`.
    """
    shape = t.shape if shape is None else shape
    dtype = t.dtype if dtype is None else dtype
    if isinstance(t, TileType):
        view = t.tile_view if keep_view else None
        if valid is not None:
            view = (view or implicit_tile_view(t.memory_space)).replace(valid_shape=tuple(valid))
        return TileType(shape, dtype, tile_view=view, memory_space=t.memory_space)
    if valid is None and keep_view and t.tensor_view is not None and t.tensor_view.valid_shape:
        valid = t.tensor_view.valid_shape
    view = TensorView(valid_shape=valid) if valid is not None and not is_full(shape, valid) else None
    return type(t)(shape, dtype, tensor_view=view)      # a stored-into window stays a DistributedTensor


def ceil_div_expr(e: Expr, k: int) -> Expr:
    v = as_int(e)
    if v is not None:
        return ConstInt(-(-v // k), INDEX)
    return BinaryExpr("floordiv", BinaryExpr("add", e, ConstInt(k - 1, INDEX)), ConstInt(k, INDEX))


def packed_mask_shape(op: str, shape, valid) -> tuple[tuple, tuple]:
    """The packed predicate mask of cmp / cmps (and the mask select reads): UINT8 [..., roundup(ceil(N/8), 32)].

    One bit per element, LSB first: element j of a row is bit j % 8 of byte j // 8. Rows are
    padded to 32 bytes (the vector unit's block); valid_shape[-1] = ceil(valid_N / 8). Rank > 2
    operands keep their leading dims (a rank-1 [N] operand has a rank-1 mask), so FlattenTileNdTo2D folds a [B, M, N] operand's mask
    [B, M, P] to [B*M, P] exactly as it folds the operand to [B*M, N].
    """
    if len(shape) < 1:
        raise TypeCheckError(f"{op}: comparisons need an operand of rank >= 1, got a rank-0 operand")
    n = as_int(shape[-1])
    if n is None:
        raise TypeCheckError(f"{op}: the column count must be static to size the packed mask")
    nbytes = -(-n // 8)
    cols = -(-nbytes // 32) * 32
    return (*shape[:-1], ConstInt(cols, INDEX)), (*valid[:-1], ceil_div_expr(valid[-1], 8))


MASK_DTYPE = UINT8


# ---------------------------------------------------------------------------- rule factories
def expect_int(op: str, arg: str, t: ShapedType) -> None:
    if not t.dtype.is_int():
        raise TypeCheckError(f"{op}: argument '{arg}' must have an integer dtype, got {t.dtype.name}",
                             hint="bitwise ops work on integers; pl.cast first")


def _check_dtype_kind(name: str, t: ShapedType, kind: Optional[str]) -> None:
    if kind == "float":
        expect_float(name, "lhs", t)
    elif kind == "int":
        expect_int(name, "lhs", t)


def _check_scratch(name: str, args, first: int) -> None:
    """Trailing scratch-tile arguments some hardware ops need (their contents are clobbered)."""
    for k in range(first, len(args)):
        expect_shaped(name, "tmp", args[k])


def binary_rule(name: str, kind: Optional[str] = None):
    """lhs op rhs, both of one shape and dtype; kind = "float" / "int" restricts the dtype."""
    def deduce(args, kw):
        a = expect_shaped(name, "lhs", args[0])
        b = expect_shaped(name, "rhs", args[1])
        same_dtype(name, a.dtype, b.dtype, "arguments 'lhs' and 'rhs'")
        same_shape(name, a.shape, b.shape)
        _check_dtype_kind(name, a, kind)
        _check_scratch(name, args, 2)
        return result_like(a)
    return deduce


def scalar_binary_rule(name: str, kind: Optional[str] = None, narrows_scalar: bool = False):
    """lhs op scalar, the result in lhs's dtype. narrows_scalar: a float scalar on an integer operand is
    accepted and converted to the operand's dtype (truncated toward zero), as pto.tsubs takes it."""
    def deduce(args, kw):
        a = expect_shaped(name, "lhs", args[0])
        s = expect_scalar(name, "rhs", args[1])
        if not narrows_scalar:
            scalar_fits(name, a, s)
        _check_dtype_kind(name, a, kind)
        _check_scratch(name, args, 2)
        return result_like(a)
    return deduce


def unary_rule(name: str, float_only: bool = False, kind: Optional[str] = None):
    def deduce(args, kw):
        a = expect_shaped(name, "x", args[0])
        if float_only or kind == "float":
            expect_float(name, "x", a)
        elif kind == "int":
            expect_int(name, "x", a)
        return result_like(a)
    return deduce


def fp32_only_rule(name: str):
    """sin / cos: LowerCompositeOps expands them with an FP32-only recipe (Cody-Waite constants and
    polynomial tuned for FP32), so any other dtype is refused when the call is built."""
    def deduce(args, kw):
        a = expect_shaped(name, "x", args[0])
        if a.dtype.name != "FP32":
            raise TypeCheckError(f"{name}: argument 'x' must be FP32 (32-bit floating-point), got {a.dtype.name}",
                                 hint="pl.cast(x, pl.FP32) first and cast the result back if needed")
        return result_like(a)
    return deduce


def ternary_rule(name: str, scalar: bool = False):
    """lhs op rhs op rhs2 (addc / subc); with scalar=True rhs is a scalar (addsc / subsc). The tile operands
    share one shape and dtype."""
    def deduce(args, kw):
        a = expect_shaped(name, "lhs", args[0])
        if scalar:
            scalar_fits(name, a, expect_scalar(name, "rhs", args[1]))
        else:
            b = expect_shaped(name, "rhs", args[1])
            same_dtype(name, a.dtype, b.dtype, "arguments 'lhs' and 'rhs'")
            same_shape(name, a.shape, b.shape, "arguments 'lhs' and 'rhs'")
        c = expect_shaped(name, "rhs2", args[2])
        same_dtype(name, a.dtype, c.dtype, "arguments 'lhs' and 'rhs2'")
        same_shape(name, a.shape, c.shape, "arguments 'lhs' and 'rhs2'")
        return result_like(a)
    return deduce


def cast_rule(name: str):
    def deduce(args, kw):
        a = expect_shaped(name, "x", args[0])
        return result_like(a, dtype=kw["target_type"])
    return deduce


def mask_result(name: str, a: ShapedType) -> ShapedType:
    shape, valid = packed_mask_shape(name, a.shape, a.valid_shape)
    return result_like(a, shape=shape, dtype=MASK_DTYPE, valid=valid, keep_view=False)


def cmp_rule(name: str):
    def deduce(args, kw):
        a = expect_shaped(name, "lhs", args[0])
        b = expect_shaped(name, "rhs", args[1])
        same_dtype(name, a.dtype, b.dtype, "arguments 'lhs' and 'rhs'")
        same_shape(name, a.shape, b.shape)
        return mask_result(name, a)
    return deduce


def cmps_rule(name: str):
    def deduce(args, kw):
        a = expect_shaped(name, "lhs", args[0])
        scalar_fits(name, a, expect_scalar(name, "rhs", args[1]))
        return mask_result(name, a)
    return deduce


def reduce_rule(name: str, axis: int, dtype: Optional[DataType] = None):
    """row_* (axis=1) reduce the last axis of a rank >= 2 operand, keeping it as 1 ([..., M, 1]; the
    leading axes are batch, as the reference allows: FlattenTileNdTo2D makes them rows); col_*
    (axis=0) → [1, N] of a 2-D operand. A scratch tile, when given, must match x's dtype and rank
    and be at least x's size (the hardware uses it whole: a smaller one gives silently wrong sums)."""
    def deduce(args, kw):
        a = expect_shaped(name, "x", args[0])
        if axis == 1 and a.rank < 2:
            raise TypeCheckError(f"{name}: argument 'x' must have at least 2 dimensions, got rank {a.rank}")
        if axis == 0 and a.rank != 2:
            raise TypeCheckError(f"{name}: argument 'x' must be 2-D, got rank {a.rank}")
        if len(args) > 1:
            tmp = expect_shaped(name, "tmp", args[1])
            same_dtype(name, a.dtype, tmp.dtype, "x and tmp")
            _check_reduce_scratch(name, a, tmp)
        one = ConstInt(1, INDEX)
        if axis == 1:
            shape, valid = (*a.shape[:-1], one), (*a.valid_shape[:-1], one)
        else:
            shape, valid = (one, a.shape[1]), (one, a.valid_shape[1])
        return result_like(a, shape=shape, valid=valid, dtype=dtype, keep_view=False)
    return deduce


def _check_reduce_scratch(name: str, x, tmp) -> None:
    if tmp.rank != x.rank:
        raise TypeCheckError(f"{name}: tmp must have x's rank, got tmp {fmt_shape(tmp.shape)} for x {fmt_shape(x.shape)}",
                             hint="tmp = pl.create_tile(<x's shape>, dtype=<x's dtype>)")
    xs, ts = static_dims(x.shape), static_dims(tmp.shape)
    if xs is not None and ts is not None and any(t < d for t, d in zip(ts, xs)):
        raise TypeCheckError(f"{name}: tmp {fmt_shape(tmp.shape)} is smaller than x {fmt_shape(x.shape)}; the "
                             f"reduction uses the whole scratch tile", hint="give tmp at least x's shape")


def expand_rule(name: str, axis: int):
    """row_expand* (axis=1): vec is [..., M, 1] for a rank >= 2 target [..., M, N]; col_expand*
    (axis=0): vec is [..., 1, N] (leading dims as the target's). Result like the target."""
    def deduce(args, kw):
        a = expect_shaped(name, "target", args[0])
        v = expect_shaped(name, "vec", args[1])
        same_dtype(name, a.dtype, v.dtype, "target and vec")
        if axis == 1 and (a.rank < 2 or v.rank != a.rank):
            raise TypeCheckError(f"{name}: target must have at least 2 dimensions and vec the same rank, got "
                                 f"{fmt_shape(a.shape)} and {fmt_shape(v.shape)}")
        if axis == 0 and (a.rank < 2 or v.rank != a.rank):
            raise TypeCheckError(f"{name}: target and vec must be 2-D (or N-D [..., 1, N] over [..., M, N])")
        one = ConstInt(1, INDEX)
        want = (*a.shape[:-1], one) if axis == 1 else (*a.shape[:-2], one, a.shape[-1])
        if not dims_equal(v.shape, want):
            kind = "row vector [..., M, 1]" if axis == 1 else "column vector [1, N]"
            raise TypeCheckError(f"{name}: vec must be a {kind} matching target {fmt_shape(a.shape)}, got "
                                 f"{fmt_shape(v.shape)}", hint="reduce with row_sum/row_max (→ [M,1]) or col_* (→ [1,N])")
        return result_like(a)
    return deduce


def numel(shape) -> Optional[int]:
    dims = static_dims(shape)
    if dims is None:
        return None
    n = 1
    for d in dims:
        n *= d
    return n


def reshape_rule(name: str):
    def deduce(args, kw):
        a = expect_shaped(name, "x", args[0])
        shape = expect_tuple(name, "shape", args[1])
        before, after = numel(a.shape), numel(shape)
        if before is not None and after is not None and before != after:
            raise TypeCheckError(f"{name}: cannot reshape {fmt_shape(a.shape)} ({before} elements) to "
                                 f"{fmt_shape(shape)} ({after} elements)", hint="the element count must not change")
        if isinstance(a, TileType) and not is_full(a.shape, a.valid_shape):
            unit_mapped = _unit_axis_valid(a, shape)
            if unit_mapped is not None:
                return result_like(a, shape=shape, valid=unit_mapped, keep_view=False)
            rows = _row_prefix_rows(a, shape)
            if rows is None:
                raise TypeCheckError(f"{name}: cannot reshape a tile whose valid region is partial",
                                     hint="pl.fillpad the tile first")
            return result_like(a, shape=shape, valid=(rows, *shape[1:]), keep_view=False)
        return result_like(a, shape=shape, keep_view=False)
    return deduce


def _unit_axis_valid(a: TileType, shape):
    """The result's valid region when a reshape only erases or inserts static unit axes ([1, 64] ↔ [64]):
    the other axes keep their valid extents in order. An erased unit axis must be wholly valid (extent
    1); an inserted one is. Anything else: None."""
    def non_unit(dims):
        return [k for k, d in enumerate(dims) if as_int(d) != 1]
    src_keep, dst_keep = non_unit(a.shape), non_unit(shape)
    if static_dims(a.shape) is None or static_dims(shape) is None or \
            [as_int(a.shape[k]) for k in src_keep] != [as_int(shape[k]) for k in dst_keep]:
        return None
    valid = list(a.valid_shape)
    if any(as_int(valid[k]) != 1 for k in range(len(valid)) if k not in src_keep):
        return None
    kept = iter(valid[k] for k in src_keep)
    return tuple(next(kept) if k in dst_keep else ConstInt(1, INDEX) for k in range(len(shape)))


def _row_prefix_rows(a: TileType, shape):
    """The result's valid rows when a partial valid region survives a row-major reshape exactly.

    A region whose only partial extent is the first (valid = [r, full, ...]) is the first
    r x (row size) elements; a reshape that only merges the leading axes (the result's trailing
    dims are the source's trailing dims) keeps it a prefix of r x (merged dims) result rows. Dual AIV dispatch relies on it: lane 1's replay tiles have r = rows x (1 - lane) and
    may feed a flattened ND load's reshape. Anything else is not exact: None."""
    src, valid = list(a.shape), list(a.valid_shape)
    if not src or static_dims(src[1:]) is None or static_dims(src[1:]) != static_dims(valid[1:]):
        return None
    for k in range(1, len(src) + 1):
        if len(src) - k == len(shape) - 1 and dims_equal(src[k:], shape[1:]) and \
                static_dims(src[k:]) is not None and static_dims(shape[1:]) is not None:
            merged = numel(src[1:k]) if k > 1 else 1
            if merged == 1:
                return valid[0]
            if isinstance(valid[0], ConstInt):
                return ConstInt(valid[0].value * merged, INDEX)
            return BinaryExpr("mul", valid[0], ConstInt(merged, INDEX))
    return None


def transpose_rule(name: str):
    def deduce(args, kw):
        a = expect_shaped(name, "x", args[0])
        i = expect_axis(name, "axis1", args[1], a.rank)
        j = expect_axis(name, "axis2", args[2], a.rank)
        if len(args) > 3:
            same_dtype(name, a.dtype, expect_shaped(name, "tmp", args[3]).dtype, "x and tmp")
        shape, valid = list(a.shape), list(a.valid_shape)
        shape[i], shape[j] = shape[j], shape[i]
        valid[i], valid[j] = valid[j], valid[i]
        return result_like(a, shape=tuple(shape), valid=tuple(valid), keep_view=False)
    return deduce


def slice_rule(name: str):
    """slice(x, shape, offset[, valid_shape[, drop_dims]]): a window of x; static windows are bounds-checked.
    A GM window is valid only where x is; drop_dims erases unit axes (pypto/ir/ops/slice_window.py)."""
    from pypto.ir.ops import slice_window

    def deduce(args, kw):
        a = expect_shaped(name, "x", args[0])
        shape = expect_tuple(name, "shape", args[1])
        offset = expect_tuple(name, "offset", args[2])
        if len(args) > 3:
            expect_tuple(name, "valid_shape", args[3])
        valid = slice_window.requested_valid(args)
        if not (len(shape) == len(offset) == a.rank) or (valid is not None and len(valid) != a.rank):
            raise TypeCheckError(f"{name}: shape, offset and valid_shape need one entry per dim ({a.rank})")
        for k, (s, o, d) in enumerate(zip(shape, offset, a.shape)):
            s, o, d = as_int(s), as_int(o), as_int(d)
            if s is not None and o is not None and d is not None and o + s > d:
                raise TypeCheckError(f"{name}: dim {k}: window [{o}, {o + s}) exceeds the extent {d}",
                                     hint="shrink the slice or pass a smaller valid_shape")
        check_valid_within(name, shape, valid)
        if isinstance(a, TensorType):
            valid = slice_window.window_valid(a, shape, offset, valid)
        axes = slice_window.drop_axes(name, args, shape, valid or shape)
        if axes:
            shape, valid = slice_window.kept(shape, axes), slice_window.kept(valid or shape, axes)
        result = result_like(a, shape=shape, valid=valid, keep_view=False)
        pad = kw.get("pad_value")
        if pad is None:
            return result
        if isinstance(result, TileType):      # the window reads `pad` outside its valid region
            return result.replace(tile_view=result.effective_view.replace(pad=pad))
        return result.replace(tensor_view=(result.tensor_view or TensorView()).replace(pad=pad))
    return deduce


def check_valid_within(op: str, shape, valid) -> None:
    """A static valid extent cannot exceed the shape it describes (the copy would overrun the tile)."""
    for k, (s, v) in enumerate(zip(shape, valid or ())):
        s, v = as_int(s), as_int(v)
        if s is not None and v is not None and v > s:
            raise TypeCheckError(f"{op}: valid extent {v} of dim {k} exceeds the shape {s}",
                                 hint="the valid shape must fit inside the shape")


def assemble_rule(name: str):
    """assemble(target, source, offset): write source into target at offset; the result is the updated target."""
    def deduce(args, kw):
        t = expect_shaped(name, "target", args[0])
        s = expect_shaped(name, "source", args[1])
        offset = expect_tuple(name, "offset", args[2])
        if not fixpipe_converts(s, t):
            same_dtype(name, t.dtype, s.dtype, "target and source")
        if len(offset) != t.rank or s.rank != t.rank:
            raise TypeCheckError(f"{name}: target, source and offset must have the same rank ({t.rank})")
        for k, (o, sd, td) in enumerate(zip(offset, s.shape, t.shape)):
            o, sd, td = as_int(o), as_int(sd), as_int(td)
            if o is not None and sd is not None and td is not None and o + sd > td:
                raise TypeCheckError(f"{name}: dim {k}: source extent {sd} at offset {o} exceeds the target extent {td}")
        return result_like(t)
    return deduce


def fixpipe_converts(src, dst) -> bool:
    """Whether the FIXPIPE writeback of an FP32 Acc tile converts it on the way to `dst` (an FP16 / BF16
    Mat tile, or a GM tensor): the cube drains L0C with round-half-to-even (CastMode.rint)."""
    from pypto.ir.dtypes import BF16, FP16, FP32
    from pypto.ir.enums import MemorySpace
    if not (isinstance(src, TileType) and src.memory_space is MemorySpace.Acc and src.dtype is FP32):
        return False
    to_mat = isinstance(dst, TileType) and dst.memory_space is MemorySpace.Mat
    return (to_mat or isinstance(dst, TensorType)) and dst.dtype in (FP16, BF16)


def fillpad_rule(name: str):
    """fillpad: the region outside valid_shape gets pad_value, so the result is fully valid."""
    def deduce(args, kw):
        a = expect_shaped(name, "x", args[0])
        if isinstance(a, TileType):
            view = a.effective_view.replace(valid_shape=(), pad=kw["pad_value"])
            return TileType(a.shape, a.dtype, tile_view=view, memory_space=a.memory_space)
        return TensorType(a.shape, a.dtype)
    return deduce


def read_rule(name: str):
    def deduce(args, kw):
        a = expect_shaped(name, "src", args[0])
        idx = expect_tuple(name, "indices", args[1])
        if len(idx) != a.rank:
            raise TypeCheckError(f"{name}: indices need one entry per dim ({a.rank}), got {len(idx)}")
        return ScalarType(a.dtype)
    return deduce


def write_rule(name: str):
    def deduce(args, kw):
        a = expect_shaped(name, "dst", args[0])
        idx = expect_tuple(name, "indices", args[1])
        s = expect_scalar(name, "value", args[2])
        if len(idx) != a.rank:
            raise TypeCheckError(f"{name}: indices need one entry per dim ({a.rank}), got {len(idx)}")
        scalar_fits(name, a, s, "value")
        return result_like(a)
    return deduce


def expands_rule(name: str):
    def deduce(args, kw):
        a = expect_shaped(name, "target", args[0])
        scalar_fits(name, a, expect_scalar(name, "scalar", args[1]), "scalar")
        return result_like(a)
    return deduce


def concat_rule(name: str):
    """concat(src0, src1): side by side along the columns; rows and dtype must agree."""
    def deduce(args, kw):
        a = expect_shaped(name, "src0", args[0])
        b = expect_shaped(name, "src1", args[1])
        same_dtype(name, a.dtype, b.dtype, "arguments 'src0' and 'src1'")
        if a.rank != 2 or b.rank != 2 or not dims_equal(a.shape[:1], b.shape[:1]):
            raise TypeCheckError(f"{name}: needs 2-D operands with the same row count, got {fmt_shape(a.shape)} and "
                                 f"{fmt_shape(b.shape)}")
        ca, cb = as_int(a.shape[1]), as_int(b.shape[1])
        cols = ConstInt(ca + cb, INDEX) if ca is not None and cb is not None else \
            BinaryExpr("add", a.shape[1], b.shape[1])
        return result_like(a, shape=(a.shape[0], cols), keep_view=False)
    return deduce
