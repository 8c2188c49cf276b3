"""Shared type-rule helpers for the op families (no implicit dtype promotion anywhere)."""

from __future__ import annotations

from typing import Optional

from pypto.errors import TypeCheckError
from pypto.ir.dtypes import DataType
from pypto.ir.expr import ConstInt, Expr, MakeTuple
from pypto.ir.types import ScalarType, TensorType, TileType, Type, static_dims


def expect_tile(op: str, arg: str, e: Expr) -> TileType:
    if not isinstance(e.type, TileType):
        raise TypeCheckError(f"{op}: argument '{arg}' must be a Tile, got {describe(e.type)}",
                             hint="load tensors into tiles with pl.load, or use the tensor-level op")
    return e.type


def expect_tensor(op: str, arg: str, e: Expr) -> TensorType:
    if not isinstance(e.type, TensorType):
        raise TypeCheckError(f"{op}: argument '{arg}' must be a Tensor, got {describe(e.type)}")
    return e.type


def expect_scalar(op: str, arg: str, e: Expr) -> ScalarType:
    if not isinstance(e.type, ScalarType):
        raise TypeCheckError(f"{op}: argument '{arg}' must be a scalar, got {describe(e.type)}")
    return e.type


def expect_tuple(op: str, arg: str, e: Expr) -> tuple:
    if not isinstance(e, MakeTuple):
        raise TypeCheckError(f"{op}: argument '{arg}' must be a list of integers or scalars")
    return e.elements


def same_dtype(op: str, a: DataType, b: DataType, what: str = "operands") -> None:
    if a is not b:
        raise TypeCheckError(f"{op}: {what} have different dtypes {a.name} and {b.name}; pypto does not promote implicitly",
                             hint=f"cast one side explicitly, e.g. pl.cast(x, pl.{a.name})")


def dims_equal(a, b) -> bool:
    """Shapes equal where both are static; symbolic dims are accepted when structurally the same Var."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, ConstInt) and isinstance(y, ConstInt):
            if x.value != y.value:
                return False
        elif x is not y and not (isinstance(x, ConstInt) or isinstance(y, ConstInt)):
            continue  # two symbolic dims: cannot disprove
    return True


def same_shape(op: str, a, b, what: str = "operands") -> None:
    if not dims_equal(a, b):
        raise TypeCheckError(f"{op}: {what} have different shapes {fmt_shape(a)} and {fmt_shape(b)}",
                             hint="broadcast explicitly with row_expand_* / col_expand_*")


def fmt_shape(shape) -> str:
    return "[" + ", ".join(str(d.value) if isinstance(d, ConstInt) else getattr(d, "name_hint", "?") for d in shape) + "]"


def describe(t: Type) -> str:
    if isinstance(t, TileType):
        return f"Tile{fmt_shape(t.shape)} {t.dtype.name}"
    if isinstance(t, TensorType):
        return f"Tensor{fmt_shape(t.shape)} {t.dtype.name}"
    if isinstance(t, ScalarType):
        return f"Scalar {t.dtype.name}"
    return type(t).__name__


def static_or_none(shape) -> Optional[tuple]:
    return static_dims(shape)
