"""The packed 2-D view an allreduce walks (seed 001, `pld.tensor.allreduce`: "逻辑 [1, 所有维度乘积] 视图").

A fully valid packed ND window is one contiguous stream, seen as `[1, prod(shape)]`. A window
with a partial `TensorView.valid_shape` may have gaps between its valid rows once flattened, so
the mesh rule keeps it as one `[rows, cols]` rectangle instead: the leading dims collapse into
rows (`[2, 3, 4]` valid `[1, 3, 2]` → view `[6, 4]` valid `[3, 2]`). That is only possible when
the valid rows are a prefix of the collapsed rows: every leading dim before the first one whose
valid extent is not 1 has extent 1, every one after it is full. The ring rule needs more, a
valid region that is a row-major linear prefix, viewed as `[1, prod(shape)]` valid
`[1, prod(valid)]`. Strided and non-ND (DN) windows are rejected with the reason; an explicit
stride that is just the row-major packing (`[12, 4, 1]` on `[2, 3, 4]`) counts as packed. Dynamic dims
of a fully valid target make the length a runtime expression; a partial target needs a static
physical shape, its valid extents may be symbolic.

    g = packed_geometry(op, target)          # PackedGeometry(shape=(1, 24), valid=None, ...)
    flat = g.bind_view(b, target)            # flat = pl.tensor.view(target, [1, 24])
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Optional

from pypto.errors import UnsupportedError
from pypto.ir.enums import TensorLayout
from pypto.ir.expr import BinaryExpr, ConstInt, MakeTuple, const
from pypto.ir.ops.view_valid import is_packed_stride
from pypto.ir.types import DistributedTensorType
from pypto.passes.lower_composite_ops.builder import LoweringBuilder


@dataclass(frozen=True)
class PackedGeometry:
    shape: tuple                 # the physical 2-D view (ints; an Expr for a dynamic fully valid window)
    valid: Optional[tuple]       # its valid rectangle (ints or Exprs), None when the whole window is valid

    def bind_view(self, b: LoweringBuilder, target):
        args = [target, MakeTuple([const(d) for d in self.shape])]
        if self.valid is not None:
            args.append(MakeTuple([const(d) for d in self.valid]))
        return b.bind("target_2d", b.op("tensor.view", args))


def _static(op: str, what: str, dims) -> tuple:
    vals = tuple(d.value if isinstance(d, ConstInt) else None for d in dims)
    if None in vals:
        raise UnsupportedError(f"{op}: the {what} {[str(d) for d in dims]} is not static; only static window extents "
                               "are lowered", hint="give the window static dims (a dynamic extent needs a runtime "
                                                   "bound the recipe does not build yet)")
    return vals


def window_dims(op: str, target, allow_dynamic: bool = False) -> tuple:
    """(shape, valid or None) of a window-bound target, after the packed-ND checks every recipe shares.
    With allow_dynamic, a fully valid target may have dynamic dims (returned as their Exprs)."""
    t = target.type
    if not isinstance(t, DistributedTensorType):
        raise UnsupportedError(f"{op}: the target must be a window-bound pld.DistributedTensor")
    view = t.tensor_view
    partial = view is not None and bool(view.valid_shape)
    # the layout first: a DN window's explicit stride is its column-major packing, the DN is the reason
    if view is not None and view.layout is not TensorLayout.ND:
        kind = "partial view" if partial else "target"
        raise UnsupportedError(f"{op}: a {view.layout.name} {kind} cannot be walked as a row-major 2-D view (the lowering only supports ND layout)",
                               hint="use an ND window")
    if view is not None and view.stride and not is_packed_stride(view.stride, t.shape):
        raise UnsupportedError(f"{op}: a strided target (stride={[str(s) for s in view.stride]}) is not a packed "
                               "window; the lowering requires a packed source", hint="allreduce a packed window, then copy out the strided part")
    if allow_dynamic and not partial and any(not isinstance(d, ConstInt) for d in t.shape):
        return tuple(d.value if isinstance(d, ConstInt) else d for d in t.shape), None
    shape = _static(op, "target shape", t.shape)
    if not shape or prod(shape) == 0:
        raise UnsupportedError(f"{op}: an empty target {list(shape)} has nothing to reduce")
    valid = None
    if partial:
        valid = tuple(v.value if isinstance(v, ConstInt) else v for v in view.valid_shape) if allow_dynamic \
            else _static(op, "valid_shape", view.valid_shape)
    if valid is not None and (len(valid) != len(shape) or any(
            isinstance(v, int) and not 0 < v <= d for v, d in zip(valid, shape))):
        raise UnsupportedError(f"{op}: valid_shape {list(valid)} does not fit the target {list(shape)} (each "
                               "valid extent must be in 1 .. its dim)")
    if valid == shape:
        valid = None
    return shape, valid


def _is_prefix(valid, shape) -> bool:
    """The valid box is the first prod(valid) row-major positions: dims before the first whose valid
    extent is not 1 have extent 1, dims after it are whole. A symbolic extent is neither 1 nor whole."""
    first = next((i for i, v in enumerate(valid) if not (isinstance(v, int) and v == 1)), len(valid))
    return all(isinstance(v, int) and v == d for v, d in zip(valid[first + 1:], shape[first + 1:]))


def linear_geometry(op: str, target) -> PackedGeometry:
    """[1, prod(shape)]; a partial target must be a row-major linear prefix (the ring's view). Extents may
    be dynamic / symbolic: the length is then an INDEX expression."""
    shape, valid = window_dims(op, target, allow_dynamic=True)
    n = _product(shape)
    if valid is None:
        return PackedGeometry((1, n), None)
    if not _is_prefix(valid, shape):
        raise UnsupportedError(f"{op}: valid_shape {list(valid)} of {list(shape)} is not a contiguous row-major "
                               "prefix, so no [1, SIZE] view carries it", hint="use mode='mesh' for a partial "
                                                                               "rectangle")
    return PackedGeometry((1, n), (1, _product(valid)))


def _product(dims):
    """prod(dims) as an int when every dim is static, else as an INDEX expression."""
    if all(isinstance(d, int) for d in dims):
        return prod(dims)
    out = None
    for d in dims:
        if d == 1:
            continue
        out = const(d) if out is None else BinaryExpr("mul", out, const(d))
    return out if out is not None else 1


def rectangle_geometry(op: str, target) -> PackedGeometry:
    """A fully valid target → [1, prod(shape)] (dims may be dynamic); a partial one (static physical
    shape) → [prod(leading), last] with its valid rectangle, whose extents may be symbolic."""
    shape, valid = window_dims(op, target, allow_dynamic=True)
    if valid is None:
        return PackedGeometry((1, _product(shape)), None)
    if len(shape) == 1:
        return PackedGeometry((1, shape[0]), (1, valid[0]))
    lead_shape, lead_valid = shape[:-1], valid[:-1]
    if not _is_prefix(lead_valid, lead_shape):
        raise UnsupportedError(f"{op}: the valid rows of valid_shape {list(valid)} in {list(shape)} are not "
                               "contiguous after collapsing the leading dims: such a valid_shape cannot be represented by a single 2D view",
                               hint="make every leading dim after the first partial one full")
    return PackedGeometry((prod(lead_shape), shape[-1]), (_product(lead_valid), valid[-1]))
