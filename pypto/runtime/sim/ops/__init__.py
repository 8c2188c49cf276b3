"""Simulator op semantics, keyed by op name (docs/internals.md §4).

    SIM_OPS["tile.add"](ctx, out, lhs, rhs) → out      # TileValues in, result written into out

`ctx` is the simulator's per-call context. The ops read from it at most: `block_idx`,
`block_num`, `subblock_idx` (core identity) and, when no `pad=` kwarg is passed,
`result_type` (tile.load fills outside the valid region per that type's pad value).
"""

import importlib
import pkgutil

from pypto.runtime.sim.ops import tensor as _tensor


def _collect() -> dict:
    """Merge the `table()` of every module in this package: a new op family is one new file."""
    ops: dict = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        table = getattr(module, "table", None)
        if table is not None:
            for name, fn in table().items():
                if name in ops:
                    raise RuntimeError(f"simulator op {name} defined twice (in {info.name})")
                ops[name] = fn
    return ops


SIM_OPS: dict = _collect()
LOWERED_BEFORE_SIM: frozenset = _tensor.lowered_before_sim(SIM_OPS)

__all__ = ["LOWERED_BEFORE_SIM", "SIM_OPS"]
