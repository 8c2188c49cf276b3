"""The tensor-level division rule: operands may differ in dtype and broadcast against each other.

At the tensor level `a / b` is written the way numpy reads it: an [M, N] / [M, 1] row divisor, or
an INT16 / FP32 mix, is well-typed (the result takes the broadcast shape and the promoted dtype).
Whether the hardware can do it is ConvertTensorToTileOps' question (pto.tdiv needs one shape and
one dtype; pto.trowexpanddiv takes a float row divisor), asked where the tile form is chosen.
"""

from __future__ import annotations

from pypto.errors import TypeCheckError
from pypto.ir.dtypes import DataType, FP32
from pypto.ir.expr import ConstInt
from pypto.ir.ops.common import expect_shaped, fmt_shape, result_like


def promoted_dtype(a: DataType, b: DataType) -> DataType:
    """A float beats an integer; of two floats or two integers the wider wins (equal widths that
    differ, such as FP16 / BF16, meet in FP32)."""
    if a is b:
        return a
    if a.is_float() != b.is_float():
        return a if a.is_float() else b
    if a.get_bit() != b.get_bit():
        return a if a.get_bit() > b.get_bit() else b
    return FP32 if a.is_float() else a


def broadcast_shape(name: str, a, b) -> list:
    """numpy broadcasting over the trailing dims: a static 1 stretches to the other side."""
    if len(a) != len(b):
        raise TypeCheckError(f"{name}: operands of rank {len(a)} and {len(b)} do not broadcast",
                             hint="reshape the operands to one rank first")
    out = []
    for x, y in zip(a, b):
        xs = x.value if isinstance(x, ConstInt) else None
        ys = y.value if isinstance(y, ConstInt) else None
        if xs == 1 and ys != 1:
            out.append(y)
        elif ys == 1 or xs == ys or xs is None or ys is None:
            out.append(x)
        else:
            raise TypeCheckError(f"{name}: shapes {fmt_shape(a)} and {fmt_shape(b)} do not broadcast",
                                 hint="make one side's dim 1, or slice both to one shape")
    return out


def promoting_binary_rule(name: str):
    def deduce(args, kw):
        a = expect_shaped(name, "lhs", args[0])
        b = expect_shaped(name, "rhs", args[1])
        shape = broadcast_shape(name, a.shape, b.shape)
        dtype = promoted_dtype(a.dtype, b.dtype)
        same = len(shape) == len(a.shape) and all(s is d for s, d in zip(shape, a.shape))
        return result_like(a, dtype=dtype) if same else result_like(a, shape=shape, dtype=dtype, keep_view=False)
    return deduce
