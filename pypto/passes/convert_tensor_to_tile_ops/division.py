"""tensor.div → the tile division the hardware has for that operand pair.

tensor.div broadcasts and promotes like numpy (pypto/ir/ops/promoting_binary.py); the vector unit
does not. pto.tdiv divides two tiles of one shape, one valid region and one dtype, so a mixed-dtype
pair is first cast to the result dtype. The one broadcast it has is pto.trowexpanddiv: an [M, N]
dividend over an [M, 1] float divisor, one divisor scalar per row, so the divisor's valid rows must
cover the dividend's. Every other broadcast is refused here, naming what the instruction needs.
"""

from __future__ import annotations

from pypto.errors import InternalError, ValueCheckError
from pypto.ir.enums import CastMode
from pypto.ir.expr import ConstInt
from pypto.ir.ops.common import fmt_shape
from pypto.ir.ops.registry import create_op_call
from pypto.ir.types import TensorType
from pypto.passes.convert_tensor_to_tile_ops.registry import converts, tile_op


def _static(d):
    return d.value if isinstance(d, ConstInt) else None


def _dims_same(a, b) -> bool:
    if _static(a) is not None and _static(b) is not None:
        return _static(a) == _static(b)
    return a is b or (type(a) is not ConstInt and type(b) is not ConstInt and a == b)


def _valid(ctx, arg, tile) -> tuple:
    """The operand's valid region as the author declared it (a GM tensor's view), else its tile's."""
    plain = ctx.plain(arg)
    t = plain.type if isinstance(plain.type, TensorType) else tile.type
    return tuple(t.valid_shape)


def _cast_to(ctx, tile, dtype, call):
    if tile.type.dtype is dtype:
        return tile
    return ctx.bind(f"{getattr(tile, 'name_hint', 'x')}_{dtype.name.lower()}",
                    create_op_call("tile.cast", [tile], {"target_type": dtype, "mode": CastMode.round}, call.span))


def _rows_covered(divisor_rows, dividend_rows) -> bool:
    """True when the divisor is known valid on every valid dividend row (equal, or both static and larger)."""
    if _dims_same(divisor_rows, dividend_rows):
        return True
    a, b = _static(divisor_rows), _static(dividend_rows)
    return a is not None and b is not None and a >= b


@converts("tensor.div")
def _div(call, ctx):
    lhs, rhs = ctx.tile(call.args[0]), ctx.tile(call.args[1])
    out = call.type
    ls, rs = list(lhs.type.shape), list(rhs.type.shape)
    dtype = out.dtype
    if all(_dims_same(x, y) for x, y in zip(ls, rs)) and len(ls) == len(rs):
        lv, rv = _valid(ctx, call.args[0], lhs), _valid(ctx, call.args[1], rhs)
        if len(lv) != len(rv) or not all(_dims_same(x, y) for x, y in zip(lv, rv)):
            raise ValueCheckError("ConvertTensorToTileOps: tensor.div lowers to pto.tdiv, which requires src0, src1, "
                                  "and dst to have the same valid_shape", call.span,
                                  hint="slice both operands to one valid region first")
        return tile_op(ctx, "tile.div", [_cast_to(ctx, lhs, dtype, call), _cast_to(ctx, rhs, dtype, call)], call)
    row_vector = lambda s: len(s) == 2 and _static(s[1]) == 1                        # noqa: E731
    if len(ls) == 2 and row_vector(rs) and _dims_same(ls[0], rs[0]) and _static(ls[1]) != 1:
        if call.kwargs.get("high_precision"):
            raise InternalError("ConvertTensorToTileOps: tensor.div(high_precision=True) does not support row "
                                "broadcasting (pto.trowexpanddiv has no high-precision form)", call.span)
        if not dtype.is_float() or dtype.get_bit() not in (16, 32) or dtype.name == "BF16":
            raise InternalError(f"ConvertTensorToTileOps: tensor.div row broadcasting supports only FP16 or FP32 "
                                f"(pto.trowexpanddiv), got {dtype.name}", call.span)
        lv, rv = _valid(ctx, call.args[0], lhs), _valid(ctx, call.args[1], rhs)
        if not _rows_covered(rv[0], lv[0]):
            raise ValueCheckError("ConvertTensorToTileOps: tensor.div row broadcasting reads one divisor per "
                                  "dividend row, so it needs the divisor valid rows to cover the dividend's",
                                  call.span, hint="give the [M, 1] divisor at least the dividend's valid rows")
        return tile_op(ctx, "tile.row_expand_div",
                       [_cast_to(ctx, lhs, dtype, call), _cast_to(ctx, rhs, dtype, call)], call)
    if len(rs) == 2 and row_vector(ls) and _dims_same(ls[0], rs[0]) and _static(rs[1]) != 1:
        raise InternalError("ConvertTensorToTileOps: tensor.div with a row-vector lhs broadcast ([M, 1] / [M, N]) "
                            "has no tile form: pto.trowexpanddiv divides the matrix by the row vector", call.span)
    raise ValueCheckError(f"ConvertTensorToTileOps: tensor.div of shapes {fmt_shape(ls)} and {fmt_shape(rs)}: pto.tdiv "
                          "requires src0, src1, and dst to have the same physical shape", call.span,
                          hint="broadcast explicitly (row_expand / col_expand) before dividing")
