"""Values the parser juggles: IR Exprs, compile-time Python values, and a few markers.

Compile-time values (closure / global ints, floats, dtypes, enums, lists) stay Python objects
so arithmetic on them folds at parse time; they become IR constants only where an IR operand
is needed (`to_expr`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from pypto.ir.dtypes import DataType
from pypto.ir.enums import ParamDirection
from pypto.ir.expr import ConstBool, ConstFloat, ConstInt, Expr, MakeTuple
from pypto.ir.span import Span
from pypto.ir.types import ScalarType, TensorType, TileType, Type
from pypto.language.parser.diagnostics import ParserTypeError


@dataclass(frozen=True)
class Directed:
    """`pl.Out[T]` / `pl.InOut[T]` as seen by the parser."""
    direction: ParamDirection
    type: Any


@dataclass(frozen=True)
class MultiReturn:
    """`tuple[T1, T2]` in a return annotation: several return values."""
    types: tuple


@dataclass(frozen=True)
class SelfRef:
    """`self` inside a @pl.program method."""


@dataclass(frozen=True)
class MethodRef:
    """`self.f`: a function of the program being parsed."""
    name: str


def is_python_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, enum.Enum)


def to_expr(v: Any, span: Span | None = None, what: str = "value") -> Expr:
    """An IR operand for `v` (numbers → constants, lists → MakeTuple)."""
    if isinstance(v, Expr):
        return v
    if isinstance(v, bool):
        return ConstBool(v, span)
    if isinstance(v, int) and not isinstance(v, enum.Enum):
        return ConstInt(v, span=span)
    if isinstance(v, float):
        return ConstFloat(v, span=span)
    if isinstance(v, (list, tuple)):
        return MakeTuple([to_expr(x, span, what) for x in v], span)
    raise ParserTypeError(f"expected an IR {what} (a variable, number or list), got {describe_value(v)}", span)


def to_op_arg(v: Any, span: Span | None = None) -> Any:
    """A positional op argument: numbers and lists become IR, dtypes / enums / strings stay Python."""
    if isinstance(v, (DataType, enum.Enum, str)) or v is None:
        return v
    if isinstance(v, (list, tuple)) and any(isinstance(x, (DataType, str)) for x in v):
        return list(v)
    return to_expr(v, span, "argument")


def is_scalar_expr(v) -> bool:
    return isinstance(v, Expr) and isinstance(v.type, ScalarType)


def is_shaped_expr(v) -> bool:
    return isinstance(v, Expr) and isinstance(v.type, (TensorType, TileType))


def describe_value(v: Any) -> str:
    if isinstance(v, Expr):
        from pypto.ir.ops.common import describe
        return f"{describe(v.type)} value"
    if isinstance(v, Type):
        return f"the type {v!r}"
    if isinstance(v, type):
        return f"the class {v.__module__}.{v.__qualname__}"
    return f"{type(v).__name__} {v!r}"
