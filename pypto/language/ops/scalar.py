"""Scalar forms of the unified DSL ops: when every operand is a scalar, `pl.<op>` is plain arithmetic.

    pl.min(i, 4)            → BinaryExpr("min", i, 4)
    pl.cast(n, pl.FP32)     → UnaryExpr("cast", n) with dtype FP32
    pl.scalar_add(a, b, dtype=pl.INT32)   (the printer's form for a non-default result dtype)
"""

from __future__ import annotations

from typing import Optional

from pypto.errors import TypeCheckError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import CmpType
from pypto.ir.expr import BINARY_OPS, BinaryExpr, Expr, UnaryExpr
from pypto.ir.span import Span
from pypto.ir.types import ScalarType

# unified DSL name → scalar BinaryExpr operator
SCALAR_BINARY = {"add": "add", "sub": "sub", "mul": "mul", "maximum": "max", "minimum": "min", "max": "max",
                 "min": "min", "adds": "add", "subs": "sub", "muls": "mul", "maximums": "max", "minimums": "min"}
SCALAR_UNARY = {"neg": "neg", "abs": "abs"}
_CMP = {CmpType.EQ: "eq", CmpType.NE: "ne", CmpType.LT: "lt", CmpType.LE: "le", CmpType.GT: "gt", CmpType.GE: "ge"}


def is_scalar_expr(e) -> bool:
    return isinstance(e, Expr) and isinstance(e.type, ScalarType)


def build_scalar(name: str, args: list, kwargs: dict, span: Optional[Span]) -> Optional[Expr]:
    """The scalar expression for `pl.<name>(args)` when all operands are scalars, else None."""
    if not args or not all(is_scalar_expr(a) for a in args if isinstance(a, Expr)):
        return None
    if name == "cast":
        target = kwargs.get("target_type", args[1] if len(args) > 1 else None)
        if not isinstance(target, DataType):
            raise TypeCheckError("pl.cast: argument 'target_type' must be a dtype such as pl.FP32", span)
        return UnaryExpr("cast", args[0], target, span)
    if not all(isinstance(a, Expr) for a in args):
        return None
    if name in SCALAR_UNARY and len(args) == 1:
        return UnaryExpr(SCALAR_UNARY[name], args[0], span=span)
    if len(args) != 2:
        return None
    lhs, rhs = args
    if name in SCALAR_BINARY:
        return BinaryExpr(SCALAR_BINARY[name], lhs, rhs, span=span)
    if name in ("div", "divs"):
        # scalar division follows the operands' kind: true division for floats, floor division for integers
        op = "truediv" if lhs.type.dtype.is_float() else "floordiv"
        return BinaryExpr(op, lhs, rhs, span=span)
    if name in ("cmp", "cmps"):
        cmp_type = kwargs.get("cmp_type", CmpType.EQ)
        cmp_type = CmpType[cmp_type] if isinstance(cmp_type, str) else CmpType(cmp_type)
        return BinaryExpr(_CMP[cmp_type], lhs, rhs, span=span)
    if name.startswith("scalar_") and name[len("scalar_"):] in BINARY_OPS:
        dtype = kwargs.get("dtype")
        return BinaryExpr(name[len("scalar_"):], lhs, rhs, dtype, span=span)
    return None


SCALAR_ONLY_PATHS = frozenset({"min", "max"} | {f"scalar_{op}" for op in BINARY_OPS})
