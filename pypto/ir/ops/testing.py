"""Test-only ops: registered so compiler unit tests can build IR a real program never contains (the
reference ships the same op for the same purpose). They are absent from all_ops(), so the DSL, the
simulator and codegen tables and the op catalog never see them; get_op / create_op_call find them.

    call = ir.create_op_call("test.tensor_op_no_conv", [x], {}, span)   # a tensor op with no tile conversion
"""

from __future__ import annotations

from pypto.ir.ops.common import expect_tensor
from pypto.ir.ops.registry import OpDef, register_op

# ConvertTensorToTileOps must refuse a tensor op it has no conversion for (an InternalError: a compiler gap).
register_op(OpDef("test.tensor_op_no_conv", args=("x",), family="tensor",
                  deduce=lambda args, kw: expect_tensor("test.tensor_op_no_conv", "x", args[0]),
                  description="a tensor op without a tile conversion (tests the missing-conversion error)"))
