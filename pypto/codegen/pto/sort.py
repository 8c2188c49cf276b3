"""PTO emitters for the sorting ops (mirrors pypto/ir/ops/sort.py; tile.sort32 is 1:1 via its OpDef).

    m = pl.tile.mrgsort_format1(s, 64)      →  pto.tmrgsort ins(%s, %c64_i32 : ..., i32) outs(%m : ...)
    m = pl.tile.mrgsort_format2(a, b, t)    →  %exe = arith.constant dense<0> : vector<4xi16>
                                               pto.tmrgsort ins(%a, %b, %t {exhausted = false} : ...) outs(%m, %exe : ..., vector<4xi16>)
"""

from __future__ import annotations

from pypto.ir.dtypes import INT32
from pypto.codegen.pto.registry import emits


@emits("tile.mrgsort_format1")
def _format1(ctx):
    src, block_len = ctx.call.args
    ctx.emit(f"pto.tmrgsort ins({ctx.value(src)}, {ctx.value_as(block_len, INT32)} : {ctx.type_of(src)}, i32) "
             f"outs({ctx.result} : {ctx.result_type})")


@emits("tile.mrgsort_format2")
def _format2(ctx):
    args = ctx.call.args
    executed = ctx.fresh("executed")
    ctx.emit(f"{executed} = arith.constant dense<0> : vector<4xi16>")
    flag = "true" if ctx.call.kwargs.get("exhausted") else "false"
    names = ", ".join(ctx.value(a) for a in args)
    types = ", ".join(ctx.type_of(a) for a in args)
    ctx.emit(f"pto.tmrgsort ins({names} {{exhausted = {flag}}} : {types}) "
             f"outs({ctx.result}, {executed} : {ctx.result_type}, vector<4xi16>)")
