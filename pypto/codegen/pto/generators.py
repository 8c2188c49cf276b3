"""PTO emitters for the generating tile ops (mirrors pypto/ir/ops/generators.py).

    m = pl.tile.tri(d, [64, 64])          →  "pto.ttri"(%d, %m) {upperOrLower = 0} : (i32, !pto.tile_buf<...>) -> ()
    r = pl.tile.random(k0, ..., c3, s)    →  "pto.trandom"(%k0, ..., %c3, %r) {rounds = 10 : i32} : (i32, ..., ...) -> ()
    w = pl.tile.fillpad_expand(t, s)      →  pto.tfillpad_expand ins(%t : ...) outs(%w : ...)
"""

from __future__ import annotations

from pypto.ir.dtypes import INT32
from pypto.codegen.pto.registry import emits


@emits("tile.tri")
def _tri(ctx):
    diagonal = ctx.value_as(ctx.call.args[0], INT32)
    side = 1 if ctx.call.kwargs.get("upper") else 0
    ctx.emit(f'"pto.ttri"({diagonal}, {ctx.result}) {{upperOrLower = {side}}} : (i32, {ctx.result_type}) -> ()')


@emits("tile.random")
def _random(ctx):
    seeds = [ctx.value_as(a, INT32) for a in ctx.call.args[:6]]
    rounds = ctx.call.kwargs.get("rounds", 10)
    ctx.emit(f'"pto.trandom"({", ".join(seeds)}, {ctx.result}) {{rounds = {rounds} : i32}} : '
             f'({", ".join(["i32"] * 6)}, {ctx.result_type}) -> ()')


@emits("tile.fillpad_expand")
def _fillpad_expand(ctx):
    ctx.emit_ins_outs("pto.tfillpad_expand", ctx.call.args[:1])
