"""PTO emitters for the cross-core pipe ops (mirrors pypto/ir/ops/cross_core.py).

    pl.tile.tpush_to_aiv(z, split=0)           →  pto.tpush_to_aiv(%z : !pto.tile_buf<...>) {split = 0}
    z = pl.tile.tpop_from_aic(split=0)         →  %z = pto.tpop_from_aic {split = 0} -> !pto.tile_buf<...>
    pl.system.tfree_to_aic(z)                  →  pto.tfree_from_aic {split = 0}
    pl.system.aiv_initialize_pipe(c2v, v2c, dir_mask=1, slot_size=8192, slot_num=2)
        →  pto.aiv_initialize_pipe {dir_mask = 1, slot_size = 8192, slot_num = 2}
               (c2v_consumer_buf = %c2v : i32, v2c_consumer_buf = %v2c : i32)
    b = pl.system.reserve_buffer(name="c2v", size=16384, base=0)
        →  %b = pto.reserve_buffer {name = "c2v", size = 16384, location = #pto.address_space<vec>, auto = false,
               base = 0} -> i32
    b = pl.system.import_peer_buffer(name="c2v", peer_func="k_aiv")
        →  %b = pto.import_reserved_buffer {name = "c2v", peer_func = @k_aiv} -> i32

The pipe `id` is spelled only when given (ptoas defaults it to 0).
"""

from __future__ import annotations

import re

from pypto.errors import UnsupportedError
from pypto.ir.dtypes import INT32
from pypto.ir.enums import FunctionType
from pypto.ir.expr import ConstInt
from pypto.ir.types import static_dims
from pypto.codegen.pto.registry import emits
from pypto.codegen.pto.types import tile_buf_type


def _pipe_attrs(kw: dict) -> str:
    parts = [] if kw.get("id") is None else [f"id = {kw['id']}"]
    return "{" + ", ".join(parts + [f"split = {kw.get('split', 0)}"]) + "}"


def _push(target: str):
    def emit(ctx):
        tile = ctx.call.args[0]
        ctx.emit(f"pto.tpush_to_{target}({ctx.value(tile)} : {ctx.type_of(tile)}) {_pipe_attrs(ctx.call.kwargs)}")
    return emit


def _pop(target: str):
    def emit(ctx):
        var = ctx.result_var
        out = ctx.fresh(var.name_hint)
        out_type = tile_buf_type(var.type)
        valid = ""
        if static_dims(var.type.valid_shape) != static_dims(var.type.shape):
            valid = "(" + ", ".join(ctx.index(d) for d in var.type.valid_shape) + ")"
        ctx.emit(f"{out} = pto.tpop_from_{target}{valid} {_pipe_attrs(ctx.call.kwargs)} -> {out_type}")
        ctx.bind(var, out, out_type)
    return emit


def _free(target: str):
    def emit(ctx):
        ctx.emit(f"pto.tfree_from_{target} {_pipe_attrs(ctx.call.kwargs)}")
    return emit


emits("tile.tpush_to_aiv")(_push("aiv"))
emits("tile.tpush_to_aic")(_push("aic"))
emits("tile.tpop_from_aic", binds_result=True)(_pop("aic"))
emits("tile.tpop_from_aiv", binds_result=True)(_pop("aiv"))
emits("system.tfree_to_aic")(_free("aic"))
emits("system.tfree_to_aiv")(_free("aiv"))


def _buffer_operand(ctx, e) -> str:
    if isinstance(e, ConstInt):
        return ctx.const(e.value, INT32)
    return ctx.value_as(e, INT32)


def _initialize(target: str):
    def emit(ctx):
        kw = ctx.call.kwargs
        attrs = [] if kw.get("id") is None else [f"id = {kw['id']}"]
        attrs += [f"dir_mask = {kw['dir_mask']}", f"slot_size = {kw['slot_size']}"]
        attrs += [f"{k} = {kw[k]}" for k in ("slot_num", "local_slot_num") if kw.get(k) is not None]
        args = list(ctx.call.args) + [ConstInt(0, INT32)] * (2 - len(ctx.call.args))
        c2v, v2c = (_buffer_operand(ctx, a) for a in args[:2])
        gm = _gm_slot_buffer(ctx, kw)
        ctx.emit(f"pto.{target}_initialize_pipe {{{', '.join(attrs)}}} ({gm}c2v_consumer_buf = {c2v} : i32, "
                 f"v2c_consumer_buf = {v2c} : i32)")
    return emit


def _gm_slot_buffer(ctx, kw) -> str:
    """a2a3 (after InjectGMPipeBuffer): the pipe's rings start at the byte offset the pass recorded in
    attrs["gm_pipe_offsets"] inside the `__gm_pipe_buffer` param; a later pipe id gets an addptr (FP32
    elements). Under an Spmd launch (attrs["gm_pipe_blocks"] = n) the buffer holds n regions and
    block b's rings start b regions in, so each block adds block_idx x region to the offset."""
    offsets = ctx.func.attrs.get("gm_pipe_offsets")
    param = next((p for p in ctx.func.params if p.name_hint == "__gm_pipe_buffer"), None)
    if not offsets or param is None:
        return ""
    pipe = kw.get("id") or 0
    starts = [at for key, at in offsets.items() if key.endswith(f"@{pipe}")]
    start = min(starts) // 4 if starts else 0
    blocks = int(ctx.func.attrs.get("gm_pipe_blocks", 1))
    ptr = ctx.value(param)
    if blocks > 1:
        region = static_dims(param.type.shape)[0] // blocks
        idx, scaled, offset = ctx.fresh("gm_block"), ctx.fresh("gm_region"), ctx.fresh("gm_offset")
        ctx.emit(f"{idx} = arith.index_cast {ctx.spmd('block_idx')} : i32 to index")
        ctx.emit(f"{scaled} = arith.muli {idx}, {ctx.const_index(region)} : index")
        ctx.emit(f"{offset} = arith.addi {scaled}, {ctx.const_index(start)} : index")
        moved = ctx.fresh("gm_slot_buffer")
        ctx.emit(f"{moved} = pto.addptr {ptr}, {offset} : !pto.ptr<f32> -> !pto.ptr<f32>")
        ptr = moved
    elif start > 0:
        moved = ctx.fresh("gm_slot_buffer")
        ctx.emit(f"{moved} = pto.addptr {ptr}, {ctx.const_index(start)} : !pto.ptr<f32> -> !pto.ptr<f32>")
        ptr = moved
    return f"gm_slot_buffer = {ptr} : !pto.ptr<f32>, "


emits("system.aic_initialize_pipe")(_initialize("aic"))
emits("system.aiv_initialize_pipe")(_initialize("aiv"))


def _identifier(value: str, what: str, span) -> str:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value or ""):
        raise UnsupportedError(f"PTO codegen: {what} {value!r} is not a plain identifier", span)
    return value


def _result_or_temp(ctx, hint: str) -> str:
    return ctx.result if ctx.result_var is not None else ctx.fresh(hint)


@emits("system.reserve_buffer")
def _reserve(ctx):
    kw = ctx.call.kwargs
    name = _identifier(kw["name"], "reserve_buffer name", ctx.call.span)
    location = {FunctionType.AIC: "mat", FunctionType.AIV: "vec"}.get(ctx.func.func_type, "vec")
    base = kw.get("base", -1)
    placed = base is not None and base >= 0 and ctx.emit_tile_addr
    tail = f"auto = false, base = {base}" if placed else "auto = true"
    ctx.emit(f"{_result_or_temp(ctx, name)} = pto.reserve_buffer {{name = \"{name}\", size = {kw['size']}, "
             f"location = #pto.address_space<{location}>, {tail}}} -> i32")


@emits("system.import_peer_buffer")
def _import(ctx):
    kw = ctx.call.kwargs
    name = _identifier(kw["name"], "import_peer_buffer name", ctx.call.span)
    peer = _identifier(kw["peer_func"], "import_peer_buffer peer_func", ctx.call.span)
    ctx.emit(f"{_result_or_temp(ctx, name + '_import')} = pto.import_reserved_buffer {{name = \"{name}\", "
             f"peer_func = @{peer}}} -> i32")
