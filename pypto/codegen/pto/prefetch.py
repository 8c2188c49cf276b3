"""PTO entries of prefetch.* (mirrors pypto/ir/ops/prefetch.py): the async GM → L2 prefetch family.

    %ctx = pto.make_prefetch_async_context(%ws : !pto.ptr<i8>) -> !pto.prefetch_async_context
    %pv  = pto.partition_view %x_view, offsets = [0, 0], sizes = [1, 4096] : ... -> ...
    %evt = pto.tprefetch_async(%pv, %ctx : <partition type>, !pto.prefetch_async_context) -> !pto.async_event
    %ses = pto.get_prefetch_async_session %ctx : !pto.prefetch_async_context -> !pto.async_session
    %ok  = pto.comm.wait_async_event(%evt, %ses : !pto.async_event, !pto.async_session) -> i1

The SDMA workspace the context needs is the runtime's, not a program operand: it becomes a hidden
`!pto.ptr<i8>` parameter of the kernel (appended once, like the other runtime-owned pointers).
In our IR the handles are INT64 scalars; in PTO they carry the opaque types above.
"""

from __future__ import annotations

from pypto.codegen.pto.registry import emits
from pypto.errors import UnsupportedError
from pypto.ir.dtypes import INDEX
from pypto.ir.expr import ConstInt, MakeTuple
from pypto.ir.types import TensorType

CONTEXT_TYPE = "!pto.prefetch_async_context"
EVENT_TYPE = "!pto.async_event"
SESSION_TYPE = "!pto.async_session"
WORKSPACE_TYPE = "!pto.ptr<i8>"


def _handle_result(ctx, type_str: str) -> str:
    var = ctx.result_var
    if var is None:
        raise UnsupportedError(f"{ctx.call.op.name}: the handle must be assigned to a name (later prefetch "
                               "ops refer to it)", ctx.call.span)
    name = ctx.fresh(var.name_hint)
    ctx.bind(var, name)
    ctx._types[name] = type_str                  # the opaque PTO type, not the IR's INT64 stand-in
    return name


@emits("prefetch.make_context")
def _make_context(ctx):
    workspace = ctx.hidden_param("prefetch_sdma_workspace", WORKSPACE_TYPE)
    out = _handle_result(ctx, CONTEXT_TYPE)
    ctx.emit(f"{out} = pto.make_prefetch_async_context({workspace} : {WORKSPACE_TYPE}) -> {CONTEXT_TYPE}")


@emits("prefetch.async_prefetch")
def _async_prefetch(ctx):
    src, handle = ctx.call.args
    dims = src.type.static_shape() if isinstance(src.type, TensorType) else None
    if dims is None or any(d != 1 for d in dims[:-1]):
        raise UnsupportedError("prefetch.async_prefetch: the source must be a flat, contiguous GM tensor with a "
                               f"static shape whose dims are all 1 but the last ([N], [1, N], ...), got "
                               f"{list(dims) if dims is not None else src.type}", ctx.call.span,
                               hint="prefetch a [1, N] view of the region (TPREFETCH_ASYNC's own rule)")
    offsets = MakeTuple([ConstInt(0, INDEX) for _ in dims])
    view, view_type = ctx.partition_view(src, offsets, [ConstInt(d, INDEX) for d in dims])
    out = _handle_result(ctx, EVENT_TYPE)
    ctx.emit(f"{out} = pto.tprefetch_async({view}, {ctx.value(handle)} : {view_type}, {CONTEXT_TYPE}) "
             f"-> {EVENT_TYPE}")


@emits("prefetch.session")
def _session(ctx):
    (handle,) = ctx.call.args
    out = _handle_result(ctx, SESSION_TYPE)
    ctx.emit(f"{out} = pto.get_prefetch_async_session {ctx.value(handle)} : {CONTEXT_TYPE} -> {SESSION_TYPE}")


@emits("prefetch.wait")
def _wait(ctx):
    event, session = ctx.call.args
    done = ctx.fresh("prefetch_done")
    ctx.emit(f"{done} = pto.comm.wait_async_event({ctx.value(event)}, {ctx.value(session)} : {EVENT_TYPE}, "
             f"{SESSION_TYPE}) -> i1")
