"""The window of a tensor.slice: its valid region within the source, and the unit axes a rank-reducing
slice erases (`drop_dims`, numpy's integer indexing of an axis).

    x: Tensor[[3, 64]] valid [3, 12];  pl.slice(x, [1, 64], [1, 0], drop_dims=[0])
    → window [1, 64] at [1, 0], valid [1, 12] (the source has 12 valid columns); result [64], valid [12]

A window cannot be valid where its source is not, so a requested valid extent is narrowed to what the
source holds past the offset (where all three are compile-time integers). An erased axis must be a
static unit dim of the window, wholly valid.
"""

from __future__ import annotations

from pypto.errors import TypeCheckError
from pypto.ir.dtypes import INDEX
from pypto.ir.expr import ConstInt, Expr, MakeTuple, as_int
from pypto.ir.types import TensorType


def requested_valid(args) -> tuple | None:
    """The slice's valid_shape operand, or None when absent or written as [] (the form that lets
    drop_dims follow without a valid shape)."""
    if len(args) > 3 and isinstance(args[3], MakeTuple) and args[3].elements:
        return tuple(args[3].elements)
    return None


def window_valid(src, shape, offset, requested) -> tuple:
    """The window's valid extents at full rank: the requested ones (else the shape), narrowed to the
    part of a partially valid GM source that lies past the offset."""
    valid = list(requested if requested is not None else shape)
    if isinstance(src, TensorType) and src.tensor_view is not None and src.tensor_view.valid_shape:
        for k, (v, o, sv) in enumerate(zip(valid, offset, src.tensor_view.valid_shape)):
            v_, o_, sv_ = as_int(v), as_int(o), as_int(sv)
            if None not in (v_, o_, sv_) and max(0, sv_ - o_) < v_:
                valid[k] = ConstInt(max(0, sv_ - o_), INDEX)
    return tuple(valid)


def drop_axes(op: str, args, shape, valid) -> list[int]:
    """The axes the drop_dims operand (args[4]) erases, checked: distinct, in range, static unit dims of
    the window whose valid extent is 1, and not every axis."""
    if len(args) < 5:
        return []
    if not isinstance(args[4], MakeTuple):
        raise TypeCheckError(f"{op}: drop_dims must be a list of integers")
    axes = []
    for e in args[4].elements:
        axis = as_int(e)
        if axis is None:
            raise TypeCheckError(f"{op}: drop_dims entries must be compile-time integers")
        if not 0 <= axis < len(shape) or axis in axes:
            raise TypeCheckError(f"{op}: drop_dims axis {axis} is out of range for rank {len(shape)} or repeated")
        if as_int(shape[axis]) != 1:
            raise TypeCheckError(f"{op}: drop_dims axis {axis} has window extent {shape[axis]}; only a static "
                                 f"unit axis can be erased", hint="slice that axis to extent 1")
        if as_int(valid[axis]) != 1:
            raise TypeCheckError(f"{op}: drop_dims axis {axis} has valid extent {valid[axis]}, not 1; an erased "
                                 f"axis must be wholly valid", hint="keep the axis instead of dropping it")
        axes.append(axis)
    if len(axes) >= len(shape):
        raise TypeCheckError(f"{op}: drop_dims cannot erase every axis", hint="keep one unit axis, or pl.read one element")
    return axes


def kept(dims, axes: list[int]) -> list[Expr]:
    """`dims` without the erased axes."""
    return [d for k, d in enumerate(dims) if k not in axes]
