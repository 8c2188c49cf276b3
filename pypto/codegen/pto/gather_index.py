"""PTO emitters for gather / scatter by mask and from GM (mirrors pypto/ir/ops/gather_index.py;
tile.gather and tile.gatherb are 1:1 via their OpDefs).

    e = pl.tile.gather_mask(s, mask_pattern=1)  →  pto.tgather ins(%s, {maskPattern = #pto.mask_pattern<P0101>} : ...) outs(%e : ...)
    d = pl.tile.scatter_mask(d, s, mask_pattern=1)
        →  pto.tscatter ins(%s, {maskPattern = #pto.mask_pattern<P0101>} : ..., "row") outs(%d : ...)
    r = pl.tile.mgather(table, idx)             →  pto.mgather ins(%pv, %idx : ..., ...) outs(%r : ...) {coalesce = #pto<coalesce row>}
    t = pl.tile.mscatter(src, idx, t)           →  pto.mscatter ins(%src, %idx : ..., ...) outs(%pv : ...)
"""

from __future__ import annotations

from pypto.ir.expr import ConstInt, MakeTuple
from pypto.ir.ops.gather_index import COALESCE, GATHER_OOB, MASK_PATTERNS
from pypto.codegen.pto.registry import emits


def whole_view(ctx, tensor):
    """A partition view over the whole GM tensor."""
    zeros = MakeTuple([ConstInt(0) for _ in tensor.type.shape])
    return ctx.partition_view(tensor, zeros, list(tensor.type.shape))


def _masked_src(ctx, src) -> str:
    """`%src, {maskPattern = #pto.mask_pattern<P0101>} : T` — the pattern rides inside ins() after src."""
    pattern = MASK_PATTERNS[ctx.call.kwargs["mask_pattern"]]
    return f"{ctx.value(src)}, {{maskPattern = #pto.mask_pattern<{pattern}>}} : {ctx.type_of(src)}"


@emits("tile.gather_mask")
def _gather_mask(ctx):
    ctx.emit(f"pto.tgather ins({_masked_src(ctx, ctx.call.args[0])}) outs({ctx.result} : {ctx.result_type})")


@emits("tile.scatter_mask")
def _scatter_mask(ctx):
    """In place (the result is dst's buffer); the row axis follows the masked source."""
    ctx.emit(f"pto.tscatter ins({_masked_src(ctx, ctx.call.args[1])}, \"row\") outs({ctx.result} : {ctx.result_type})")


def _mode(value, names) -> int:
    return names.index(value) if isinstance(value, str) else int(value)


@emits("tile.mgather")
def _mgather(ctx):
    mem, idx = ctx.call.args[:2]
    pv, ptype = whole_view(ctx, mem)
    coalesce = COALESCE[_mode(ctx.call.kwargs["coalesce"], COALESCE)]
    oob = _mode(ctx.call.kwargs["gather_oob"], GATHER_OOB)
    attrs = f"coalesce = #pto<coalesce {coalesce}>" + (f", gatherOob = #pto<gather_oob {GATHER_OOB[oob]}>" if oob else "")
    ctx.emit(f"pto.mgather ins({pv}, {ctx.value(idx)} : {ptype}, {ctx.type_of(idx)}) outs({ctx.result} : "
             f"{ctx.result_type}) {{{attrs}}}")


@emits("tile.mscatter")
def _mscatter(ctx):
    src, idx, out = ctx.call.args
    pv, ptype = whole_view(ctx, out)
    ctx.emit(f"pto.mscatter ins({ctx.value(src)}, {ctx.value(idx)} : {ctx.type_of(src)}, {ctx.type_of(idx)}) "
             f"outs({pv} : {ptype})")
    if ctx.result_var is not None:
        ctx.alias_tensor(ctx.result_var, out)
