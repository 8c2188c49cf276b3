"""A GEMV accumulator is one fractal row high: physical [16, N], valid [1, N], in Acc's own layout."""

import pytest

from pypto.errors import TypeCheckError
from pypto.ir import MemorySpace
from pypto.ir.dtypes import BF16, FP32
from pypto.ir.expr import ConstInt, Var
from pypto.ir.ops.registry import create_op_call
from pypto.ir.types import TileType


def _tile(shape, space, dtype=BF16, valid=None, name="t"):
    t = TileType(shape, dtype, memory_space=space)
    return Var(name, t.with_valid_shape(valid) if valid else t)


def _dims(shape):
    return [d.value if isinstance(d, ConstInt) else d for d in shape]


LHS, RHS = _tile((1, 128), MemorySpace.Left, name="x"), _tile((128, 64), MemorySpace.Right, name="w")


def test_gemv_writes_a_16_row_accumulator_with_one_valid_row():
    acc = create_op_call("tile.gemv", [LHS, RHS]).type
    assert _dims(acc.shape) == [16, 64] and _dims(acc.valid_shape) == [1, 64]
    assert acc.memory_space is MemorySpace.Acc and acc.dtype is FP32
    assert acc.effective_view.fractal == 1024                      # Acc's own layout, stored as no view


def test_gemv_acc_takes_only_a_gemv_accumulator():
    acc = Var("acc", create_op_call("tile.gemv", [LHS, RHS]).type)
    again = create_op_call("tile.gemv_acc", [acc, LHS, RHS]).type
    assert _dims(again.shape) == [16, 64] and _dims(again.valid_shape) == [1, 64]
    flat = _tile((1, 64), MemorySpace.Acc, dtype=FP32, name="flat")
    with pytest.raises(TypeCheckError, match="a GEMV accumulator"):
        create_op_call("tile.gemv_acc", [flat, LHS, RHS])


def test_gemv_bias_needs_a_one_row_bias_of_the_accumulator_dtype():
    bias = _tile((1, 64), MemorySpace.Bias, dtype=FP32, name="b")
    acc = create_op_call("tile.gemv_bias", [LHS, RHS, bias]).type
    assert _dims(acc.shape) == [16, 64] and _dims(acc.valid_shape) == [1, 64]
    with pytest.raises(TypeCheckError, match="like the accumulator"):
        create_op_call("tile.gemv_bias", [LHS, RHS, _tile((1, 64), MemorySpace.Bias, dtype=BF16, name="b16")])


def test_gemv_still_needs_a_row_vector():
    with pytest.raises(TypeCheckError, match="row vector"):
        create_op_call("tile.gemv", [_tile((2, 128), MemorySpace.Left), RHS])
