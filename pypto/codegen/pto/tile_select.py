"""tile.select in PTO codegen (mirrors pypto/ir/ops/tile_select.py).

tile.select is the scratch-free selection; LowerCompositeOps rewrites it into the 1:1 forms
tile.sel / tile.sels (pto.tsel / pto.tsels, emitted by tile.py) with their scratch tiles.
"""

from __future__ import annotations

from pypto.codegen.pto.registry import lowered_away

lowered_away("tile.select", "LowerCompositeOps rewrites it into tile.sel / tile.sels with scratch (seed 001)")
