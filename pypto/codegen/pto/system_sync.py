"""PTO emitters for the system.* synchronisation, cache and geometry ops (mirrors pypto/ir/ops/system_sync.py).

    pl.system.sync_set(3, pipe=pl.PipeType.MTE3)   →  pto.sync.set <PIPE_MTE3>, 3
    pl.system.syncall()                            →  pto.syncall() mode = #pto.sync_all_mode<hard>, core_type = ...
    pl.system.set_ffts(ws)                         →  pto.set_ffts %ws : !pto.ptr<i64>
    pl.system.cacheinvalid()                       →  pto.cmo.cacheinvalid all #pto.address_space<gm>
"""

from __future__ import annotations

from pypto.ir.dtypes import INT32
from pypto.ir.expr import ConstInt
from pypto.codegen.pto.gather_index import whole_view
from pypto.codegen.pto.registry import emits, not_emitted
from pypto.codegen.pto.types import ptr_type


def _sync(kind: str):
    def emit(ctx):
        pipe = ctx.call.kwargs["pipe"].name
        event = ctx.call.args[0]
        code = str(event.value) if isinstance(event, ConstInt) else ctx.index(event)
        mode = ctx.call.kwargs.get("ffts_mode")
        ctx.emit(f"pto.sync.{kind} <PIPE_{pipe}>, {code}" + (f" {{ffts_mode = {mode} : i32}}" if mode is not None else ""))
    return emit


emits("system.sync_set")(_sync("set"))
emits("system.sync_wait")(_sync("wait"))


@emits("system.syncall")
def _syncall(ctx):
    kw = ctx.call.kwargs
    core = {"mix": "mix", "aiv_only": "aiv", "aic_only": "aic"}[kw["core_type"]]
    if kw["mode"] == "hard":
        ctx.emit(f"pto.syncall() mode = #pto.sync_all_mode<hard>, core_type = #pto.sync_core_type<{core}>")
        return
    ws, used = ctx.call.args
    pv, ptype = whole_view(ctx, ws)
    ctx.emit(f"pto.syncall({pv}, {ctx.value_as(used, INT32)} : {ptype}, i32) "
             f"mode = #pto.sync_all_mode<soft>, core_type = #pto.sync_core_type<{core}>")


@emits("system.set_ffts")
def _set_ffts(ctx):
    ws = ctx.call.args[0]
    ctx.emit(f"pto.set_ffts {ctx.value(ws)} : {ptr_type(ws.type)}")


@emits("system.cacheinvalid")
def _cacheinvalid(ctx):
    if ctx.call.args:
        pv, ptype = whole_view(ctx, ctx.call.args[0])
        ctx.emit(f"pto.cmo.cacheinvalid {pv} single_cache_line : {ptype}")
    else:
        ctx.emit("pto.cmo.cacheinvalid all #pto.address_space<gm>")


not_emitted("system.available_aiv_count", "the device geometry is a host-side launch fact: the reference folds it "
                                          "into the launch, not into kernel code")
not_emitted("system.available_cluster_count", "the device geometry is a host-side launch fact: the reference folds "
                                              "it into the launch, not into kernel code")
not_emitted("system.sync_src", "intra-core pipe flags are placed by the reference's sync insertion, which emits no "
                               "same-name instruction; hand-written flags have no PTO spelling here")
not_emitted("system.sync_dst", "intra-core pipe flags are placed by the reference's sync insertion, which emits no "
                               "same-name instruction; hand-written flags have no PTO spelling here")
