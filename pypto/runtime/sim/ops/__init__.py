"""Simulator op semantics, keyed by op name (docs/internals.md §4).

    SIM_OPS["tile.add"](ctx, out, lhs, rhs) → out      # TileValues in, result written into out

`ctx` is the simulator's per-call context. The ops read from it at most: `block_idx`,
`block_num`, `subblock_idx` (core identity) and, when no `pad=` kwarg is passed,
`result_type` (tile.load fills outside the valid region per that type's pad value).
"""

from pypto.runtime.sim.ops import system as _system
from pypto.runtime.sim.ops import tensor as _tensor
from pypto.runtime.sim.ops import tile as _tile

SIM_OPS: dict = {**_tile.table(), **_tensor.table(), **_system.table()}
LOWERED_BEFORE_SIM: frozenset = _tensor.lowered_before_sim()

__all__ = ["LOWERED_BEFORE_SIM", "SIM_OPS"]
