"""Scalar expressions in the `arith` / `math` dialects: constants, binary and unary ops, casts.

    %c64_index = arith.constant 64 : index
    %t0 = arith.addi %i, %c64_index : index
    %t1 = arith.cmpi slt, %t0, %n : index

Operands of a BinaryExpr may differ in dtype (the IR types the result by the lhs); the rhs
is cast to the lhs's type first, exactly as the simulator computes it.
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.dtypes import BOOL, DataType
from pypto.codegen.pto.types import mlir_dtype

_INT_BINARY = {"add": "arith.addi", "sub": "arith.subi", "mul": "arith.muli", "floordiv": "arith.floordivsi",
               "floormod": "arith.remsi", "min": "arith.minsi", "max": "arith.maxsi", "bitand": "arith.andi",
               "bitor": "arith.ori", "bitxor": "arith.xori", "and": "arith.andi", "or": "arith.ori",
               "xor": "arith.xori", "shl": "arith.shli", "shr": "arith.shrsi", "pow": "math.ipowi",
               "truediv": "arith.divsi"}
_FLOAT_BINARY = {"add": "arith.addf", "sub": "arith.subf", "mul": "arith.mulf", "truediv": "arith.divf",
                 "floordiv": "arith.divf", "floormod": "arith.remf", "min": "arith.minimumf",
                 "max": "arith.maximumf", "pow": "math.powf"}
_INT_PREDICATES = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}
_FLOAT_PREDICATES = {"eq": "oeq", "ne": "one", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}


def _is_float(d: DataType) -> bool:
    return d.is_float()


def _is_index(d: DataType) -> bool:
    return d.name == "INDEX"


def cast_op(src: DataType, dst: DataType):
    """The arith op converting src to dst, or None when no conversion is needed."""
    if src is dst or mlir_dtype(src) == mlir_dtype(dst):
        return None
    if _is_index(src) or _is_index(dst):
        if _is_float(src) or _is_float(dst):
            raise UnsupportedError(f"PTO codegen: no direct cast between {src.name} and {dst.name}",
                                   hint="cast through an integer type")
        return "arith.index_cast"
    if _is_float(src) and _is_float(dst):
        return "arith.extf" if dst.bits > src.bits else "arith.truncf"
    if _is_float(src):
        return "arith.fptosi"
    if _is_float(dst):
        return "arith.uitofp" if src is BOOL else "arith.sitofp"
    if dst.bits > src.bits:
        return "arith.extui" if src is BOOL or not src.is_signed() else "arith.extsi"
    return "arith.trunci"


def binary_op(op: str, dtype: DataType) -> str:
    table = _FLOAT_BINARY if _is_float(dtype) else _INT_BINARY
    name = table.get(op)
    if name is None:
        raise UnsupportedError(f"PTO codegen: scalar operator '{op}' on {dtype.name} has no arith spelling")
    return name


def compare(op: str, dtype: DataType) -> tuple:
    """(op name, predicate) of a scalar comparison."""
    if _is_float(dtype):
        return "arith.cmpf", _FLOAT_PREDICATES[op]
    return "arith.cmpi", _INT_PREDICATES[op]


def float_literal(value: float) -> str:
    if value != value:
        return "0x7FC00000"
    if value in (float("inf"), float("-inf")):
        return "0x7F800000" if value > 0 else "0xFF800000"
    return f"{value:.6e}"
