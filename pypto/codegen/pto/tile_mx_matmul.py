"""PTO emitters for the MX matmul ops (mirrors pypto/ir/ops/tile_mx_matmul.py), a5 only.

    pl.tile.matmul_mx(a, sa, b, sb)          →  pto.tmatmul.mx ins(%a, %sa, %b, %sb : ...) outs(%c : ...)
    pl.tile.matmul_mx_acc(c, a, sa, b, sb)   →  pto.tmatmul.mx.acc ins(%c, %a, %sa, %b, %sb : ...) outs(%c : ...)
    pl.tile.matmul_mx_bias(a, sa, b, sb, bb) →  pto.tmatmul.mx.bias ins(%a, %sa, %b, %sb, %bb : ...) outs(%c : ...)

The accumulating form reads the accumulator through the outs() buffer itself, as tile.matmul_acc does.
"""

from __future__ import annotations

from pypto.codegen.pto.registry import emits


@emits("tile.matmul_mx")
def _matmul_mx(ctx):
    ctx.emit_ins_outs("pto.tmatmul.mx")


@emits("tile.matmul_mx_bias")
def _matmul_mx_bias(ctx):
    ctx.emit_ins_outs("pto.tmatmul.mx.bias")


@emits("tile.matmul_mx_acc")
def _matmul_mx_acc(ctx):
    args = ctx.call.args
    dst, dst_type = ctx.result, ctx.result_type
    values = ", ".join([dst] + [ctx.value(a) for a in args[1:]])
    types = ", ".join([dst_type] + [ctx.type_of(a) for a in args[1:]])
    ctx.emit(f"pto.tmatmul.mx.acc ins({values} : {types}) outs({dst} : {dst_type})")
