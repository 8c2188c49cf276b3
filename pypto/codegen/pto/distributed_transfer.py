"""pld.tensor.put / pld.tensor.get in PTO codegen (ops in pypto/ir/ops/distributed.py).

Both are expanded by LowerCompositeOps into Vec staging tiles and chunked pld.tile.put / get
(pypto/passes/lower_composite_ops/collective_transfer.py), so neither reaches a kernel's PTO text.
"""

from __future__ import annotations

from pypto.codegen.pto.registry import lowered_away

for _name in ("pld.tensor.put", "pld.tensor.get"):
    lowered_away(_name, "composite: LowerCompositeOps expands it into staging tiles and chunked pld.tile.put / get")
