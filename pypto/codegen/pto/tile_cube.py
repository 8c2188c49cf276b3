"""PTO emitters for the extra cube ops (mirrors pypto/ir/ops/tile_cube.py): GEMV and batched matmul.

    pl.tile.gemv(a, b)                 →  pto.tgemv ins(%a, %b : ..., ...) outs(%c : ...)
    pl.tile.gemv_acc(c, a, b)          →  pto.tgemv.acc ins(%c, %a, %b : ...) outs(%c : ...)   (in place)
    pl.tile.gemv_bias(a, b, bias)      →  pto.tgemv.bias ins(%a, %b, %bias : ...) outs(%c : ...)

A non-default `acc_phase` is spelled after the clause: `{accPhase = #pto<acc_phase partial>}`.
"""

from __future__ import annotations

from pypto.codegen.pto.registry import emits, lowered_away
from pypto.codegen.pto.tile import accumulate


def _phase(ctx) -> str:
    phase = ctx.call.kwargs.get("acc_phase", "unspecified")
    return "" if phase == "unspecified" else f" {{accPhase = #pto<acc_phase {phase}>}}"


@emits("tile.gemv")
def _gemv(ctx):
    ctx.emit_ins_outs("pto.tgemv", trailing=_phase(ctx))


@emits("tile.gemv_bias")
def _gemv_bias(ctx):
    ctx.emit_ins_outs("pto.tgemv.bias", trailing=_phase(ctx))


@emits("tile.gemv_acc")
def _gemv_acc(ctx):
    accumulate(ctx, "pto.tgemv.acc", "pto.tgemv", _phase(ctx))


lowered_away("tile.batch_matmul", "FlattenTileNdTo2D splits it into one 2-D tile.matmul per batch index")
lowered_away("tile.batch_matmul_acc", "FlattenTileNdTo2D splits it into one 2-D tile.matmul_acc per batch index")
