"""PTO emitters for the MX quantization tile ops (mirrors pypto/ir/ops/tile_mx.py; a5 only).

    v = pl.tile.reinterpret_view(bytes, dtype=pl.FP8E4M3FN)  →  %v = pto.treshape %bytes : ... -> ...

tile.tquant_mx is composite (LowerCompositeOps rewrites it). Its primitives tquant_mx_raw
(two results) and tmov_x2zz have no spelling in the reference's PTO backend yet, so they are
declared not emitted: codegen names them instead of guessing an instruction.
"""

from __future__ import annotations

from pypto.codegen.pto.registry import emits, lowered_away, not_emitted
from pypto.codegen.pto.tile import _treshape

emits("tile.reinterpret_view", binds_result=True)(_treshape)
lowered_away("tile.tquant_mx", "LowerCompositeOps rewrites it into tquant_mx_raw / tmov_x2zz / reinterpret_view "
                               "(seed 001)")
not_emitted("tile.tquant_mx_raw", "the reference PTO backend has no TQUANT emitter with two results yet")
not_emitted("tile.tmov_x2zz", "the reference PTO backend has no spelling for the DN→ZZ exponent move yet")
