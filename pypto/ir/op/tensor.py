"""`pypto.ir.op.tensor`: builders of tensor.* op calls (`tensor.add(a, b)`; see pypto.ir.op)."""

from pypto.ir.op._family import OpFamily

_FAMILY = OpFamily("tensor")


def __getattr__(name):
    return getattr(_FAMILY, name)
