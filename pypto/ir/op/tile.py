"""`pypto.ir.op.tile`: builders of tile.* op calls (`tile.add(a, b)`; see pypto.ir.op)."""

from pypto.ir.op._family import OpFamily

_FAMILY = OpFamily("tile")


def __getattr__(name):
    return getattr(_FAMILY, name)
