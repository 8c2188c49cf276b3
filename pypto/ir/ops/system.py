"""system.* ops: barriers and core-identity queries (no data operands).

Barriers order a core's own pipelines (vector / cube / all) or its GM writes; they carry
no values, so their result type is UnknownType and they appear as expression statements:

    pl.system.bar_v()                    # wait for the vector pipeline to drain
    i = pl.tile.get_block_idx()          # this block's index within an spmd launch (INDEX)
"""

from __future__ import annotations

from pypto.ir.dtypes import INDEX
from pypto.ir.ops.registry import CUBE, SHARED, VECTOR, OpDef, register_op
from pypto.ir.types import ScalarType, UnknownType


def _nothing(args, kw):
    return UnknownType()


def _index(args, kw):
    return ScalarType(INDEX)


for _name, _affinity, _why in (("bar_v", VECTOR, "drain the vector pipeline"),
                               ("bar_m", CUBE, "drain the cube (matrix) pipeline"),
                               ("bar_all", SHARED, "drain every pipeline of this core"),
                               ("fence", SHARED, "order this core's GM writes before later ones")):
    register_op(OpDef(f"system.{_name}", deduce=_nothing, affinity=_affinity, description=_why))

# Core identity: which spmd block / AIV lane this kernel instance is (0 outside an spmd launch).
for _name, _why in (("get_block_idx", "this block's index in its spmd launch"),
                    ("get_block_num", "the number of blocks of the spmd launch"),
                    ("get_subblock_idx", "the AIV lane (0 or 1) inside the cluster")):
    register_op(OpDef(f"tile.{_name}", deduce=_index, affinity=SHARED, description=_why))
    # the tensor-level spelling (ConvertTensorToTileOps turns it into the tile op)
    register_op(OpDef(f"tensor.{_name}", deduce=_index, affinity=SHARED, description=_why))
