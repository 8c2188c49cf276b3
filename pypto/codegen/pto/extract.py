"""PTO emitter for tile.extract (mirrors pypto/ir/ops/extract.py).

    l = pl.tile.extract(m, r, c, [16, 32], target_memory=pl.Mem.Left)
        →  pto.textract ins(%m, %r, %c : !pto.tile_buf<loc=mat, ...>, index, index) outs(%l : !pto.tile_buf<loc=left, ...>)
"""

from __future__ import annotations

from pypto.codegen.pto.registry import emits


@emits("tile.extract")
def _extract(ctx):
    src, row, col = ctx.call.args[:3]
    ctx.emit(f"pto.textract ins({ctx.value(src)}, {ctx.index(row)}, {ctx.index(col)} : {ctx.type_of(src)}, index, "
             f"index) outs({ctx.result} : {ctx.result_type})")
