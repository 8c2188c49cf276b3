"""`pypto.ir.op.tensor_ops`: the reference's module name for the tensor.* builders (same as pypto.ir.op.tensor)."""

from pypto.ir.op._family import OpFamily

_FAMILY = OpFamily("tensor")


def __getattr__(name):
    return getattr(_FAMILY, name)
