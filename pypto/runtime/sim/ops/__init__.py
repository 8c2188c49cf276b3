"""Simulator op semantics, keyed by op name (docs/internals.md §4).

    SIM_OPS["tile.add"](ctx, out, lhs, rhs) → out      # TileValues in, result written into out

`ctx` is the simulator's per-call context; the ops here need at most `ctx.result_type` (the
Call's type: tile.load reads its pad value from it unless `pad=` is passed).
"""

from pypto.runtime.sim.ops import tensor as _tensor
from pypto.runtime.sim.ops import tile as _tile

SIM_OPS: dict = {**_tile.table(), **_tensor.table()}
LOWERED_BEFORE_SIM: frozenset = _tensor.lowered_before_sim()

__all__ = ["LOWERED_BEFORE_SIM", "SIM_OPS"]
