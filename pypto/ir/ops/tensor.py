"""tensor.* ops: whole-tensor operations in GM; ConvertTensorToTileOps lowers them to tile.* ops."""

from __future__ import annotations

from pypto.ir.dtypes import DataType
from pypto.ir.enums import TensorLayout
from pypto.ir.ops.common import expect_scalar, expect_tensor, expect_tuple, same_dtype, same_shape
from pypto.ir.ops.registry import SHARED, Kwarg, OpDef, register_op
from pypto.ir.types import TensorType, TensorView


def _create_type(args, kw):
    shape = expect_tuple("tensor.create", "shape", args[0])
    view = TensorView(layout=kw["layout"]) if kw["layout"] is not TensorLayout.ND else None
    return TensorType(shape, kw["dtype"], tensor_view=view)


register_op(OpDef("tensor.create", args=("shape",),
                  kwargs={"dtype": Kwarg(DataType), "layout": Kwarg(TensorLayout, TensorLayout.ND)},
                  deduce=_create_type, affinity=SHARED))


def _binary_type(name):
    def deduce(args, kw):
        a = expect_tensor(name, "lhs", args[0])
        b = expect_tensor(name, "rhs", args[1])
        same_dtype(name, a.dtype, b.dtype)
        same_shape(name, a.shape, b.shape)
        return TensorType(a.shape, a.dtype)
    return deduce


def _scalar_binary_type(name):
    def deduce(args, kw):
        a = expect_tensor(name, "lhs", args[0])
        expect_scalar(name, "rhs", args[1])
        return TensorType(a.shape, a.dtype)
    return deduce


for _n in ("add", "sub", "mul", "div"):
    register_op(OpDef(f"tensor.{_n}", args=("lhs", "rhs"), deduce=_binary_type(f"tensor.{_n}")))
    register_op(OpDef(f"tensor.{_n}s", args=("lhs", "rhs"), deduce=_scalar_binary_type(f"tensor.{_n}s")))
