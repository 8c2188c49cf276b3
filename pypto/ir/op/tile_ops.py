"""`pypto.ir.op.tile_ops`: the reference's module name for the tile.* builders (same as pypto.ir.op.tile)."""

from pypto.ir.op._family import OpFamily

_FAMILY = OpFamily("tile")


def __getattr__(name):
    return getattr(_FAMILY, name)
