"""pld.* ops in PTO codegen (mirrors pypto/ir/ops/distributed.py).

Host-level ops describe windows and ranks for the host orchestrator and never enter a kernel;
the collectives are composite and are expanded before codegen. The kernel-level primitives
address windows through the CommCtx parameter MaterializeDistTensorCtx gives every kernel, one
per DistributedTensor parameter, in parameter order (`!pto.ptr<i64>`). The CommContext it points
to holds i64 words: [0] this rank, [1] the number of ranks, [2 + r] the byte address of rank r's
window region. A window value of the kernel is its parameter's pointer (or an alias of it), so a
peer's copy is that pointer moved by (base[peer] - base[me]) / element bytes:

    pld.system.notify(sig, peer, [me, 0], 1)  →  %d = (ctx[2 + peer] - ctx[2 + ctx[0]]) / 4
                                                 %p = pto.addptr %sig, %d ; %v = pto.make_tensor_view %p, ...
                                                 %pv = pto.partition_view %v, offsets = [..], sizes = [1, 1]
                                                 pto.comm.tnotify(%pv, %c1 : ..., i32)
                                                     {notifyOp = #pto<notify_op atomic_add>}
    pld.system.wait(sig, [src, 0], g)         →  pto.comm.twait(%pv_local, %g : ..., i32) {cmp = #pto<wait_cmp ge>}
    pld.tile.remote_load / remote_store       →  pto.tload / pto.tstore on the peer's partition view
    pld.tile.put / get                        →  pto.comm.tput / pto.comm.tget(%dst_pv, %src_pv, buf(%stage) : ...)
"""

from __future__ import annotations

from pypto.codegen.pto.registry import emits, lowered_away, not_emitted
from pypto.codegen.pto.types import partition_view_type, ptr_type, tensor_view_type
from pypto.errors import UnsupportedError
from pypto.ir.comm_enums import NotifyOp, WaitCmp
from pypto.ir.dtypes import INT32, INT64
from pypto.ir.enums import AtomicType
from pypto.ir.expr import MakeTuple, const
from pypto.ir.types import CommCtxType, DistributedTensorType
from pypto.ir.ops.distributed import transfer_parts

for _name in ("pld.world_size", "pld.alloc_window_buffer", "pld.window", "pld.stacked_index"):
    lowered_away(_name, "host-level: it shapes the host orchestration (orchestration artifact), never a kernel")
for _name in ("allreduce", "barrier", "broadcast", "allgather", "reduce_scatter", "all_to_all", "all_to_all_v"):
    lowered_away(f"pld.tensor.{_name}", "composite: LowerCompositeOps (in kernels) or LowerHostTensorCollectives "
                                        "(host) expands it into signals and remote moves (seeds 000 / 001 / 002)")
lowered_away("pld.get_comm_ctx", "MaterializeDistTensorCtx replaces it in kernels by the kernel's CommCtx parameter; "
                                 "orchestrations pass the context at the call")

_CTX = "!pto.ptr<i64>"
_NOTIFY = {NotifyOp.AtomicAdd: "atomic_add", NotifyOp.Set: "set"}
_WAIT = {WaitCmp.Eq: "eq", WaitCmp.Ge: "ge"}


def _comm_ctx(ctx, window) -> str:
    """The CommCtx parameter of the kernel parameter `window` is (an alias of)."""
    params = ctx.func.params
    windows = [p for p in params if isinstance(p.type, DistributedTensorType)]
    ctxs = [p for p in params if isinstance(p.type, CommCtxType)]
    local = ctx.value(window)
    for p, c in zip(windows, ctxs):
        if ctx.value(p) == local:
            return ctx.value(c)
    raise UnsupportedError(f"PTO codegen: {ctx.call.op.name} on window '{getattr(window, 'name_hint', window)}' "
                           f"of kernel {ctx.func.name}, which has no CommCtx parameter for it", ctx.call.span,
                           hint="MaterializeDistTensorCtx (Default pipeline) adds one per DistributedTensor parameter")


def _word(ctx, cptr: str, index: str) -> str:
    out = ctx.fresh("comm")
    ctx.emit(f"{out} = pto.load_scalar {cptr}[{index}] : {_CTX} -> i64")
    return out


def _peer_view(ctx, window, peer) -> str:
    """make_tensor_view of the peer rank's copy of `window` (same shape, strides and layout)."""
    cptr = _comm_ctx(ctx, window)
    me = ctx.fresh("me")
    ctx.emit(f"{me} = arith.index_cast {_word(ctx, cptr, ctx.const_index(0))} : i64 to index")
    two = ctx.const_index(2)
    slots = []
    for rank in (me, ctx.index(peer)):
        slot = ctx.fresh("slot")
        ctx.emit(f"{slot} = arith.addi {rank}, {two} : index")
        slots.append(_word(ctx, cptr, slot))
    delta, elems, shift = ctx.fresh("delta"), ctx.fresh("delems"), ctx.fresh("shift")
    ctx.emit(f"{delta} = arith.subi {slots[1]}, {slots[0]} : i64")
    ctx.emit(f"{elems} = arith.divsi {delta}, {ctx.const(window.type.dtype.bits // 8, INT64)} : i64")
    ctx.emit(f"{shift} = arith.index_cast {elems} : i64 to index")
    ptr = ctx.fresh("peer_ptr")
    ctx.emit(f"{ptr} = pto.addptr {ctx.value(window)}, {shift} : {ptr_type(window.type)} -> {ptr_type(window.type)}")
    return ctx._tensor_view_of(window, ptr)


PEER_PVIEW = "pview_peer"      # a partition of another rank's window says so in its SSA name


def _partition(ctx, view: str, tensor, offsets, sizes, name: str = "pview") -> tuple:
    offs = ctx.indices(offsets) if isinstance(offsets, MakeTuple) else [ctx.const_index(0)] * len(sizes)
    ptype = partition_view_type(sizes, tensor.type.dtype)
    pv = ctx.fresh(name)
    ctx.emit(f"{pv} = pto.partition_view {view}, offsets = [{', '.join(offs)}], sizes = "
             f"[{', '.join(ctx.index(s) for s in sizes)}] : {tensor_view_type(tensor.type)} -> {ptype}")
    return pv, ptype


def _cell(ctx, view: str, signal, offsets, name: str = "pview") -> tuple:
    return _partition(ctx, view, signal, offsets, [const(1)] * len(signal.type.shape), name)


@emits("pld.rank", "pld.nranks")
def _rank(ctx):
    word = _word(ctx, ctx.value(ctx.call.args[0]), ctx.const_index(0 if ctx.call.op.name == "pld.rank" else 1))
    ctx.emit(f"{ctx.result} = arith.trunci {word} : i64 to i32")


@emits("pld.system.notify")
def _notify(ctx):
    target, peer, offsets, value = ctx.call.args
    pv, ptype = _cell(ctx, _peer_view(ctx, target, peer), target, offsets, PEER_PVIEW)
    op = _NOTIFY[ctx.call.kwargs.get("op", NotifyOp.AtomicAdd)]
    ctx.emit(f"pto.comm.tnotify({pv}, {ctx.value_as(value, INT32)} : {ptype}, i32) {{notifyOp = #pto<notify_op {op}>}}")


@emits("pld.system.wait")
def _wait(ctx):
    signal, offsets, expected = ctx.call.args
    pv, ptype = _cell(ctx, ctx.tensor_view(signal), signal, offsets)
    cmp = _WAIT[ctx.call.kwargs.get("cmp", WaitCmp.Ge)]
    ctx.emit(f"pto.comm.twait({pv}, {ctx.value_as(expected, INT32)} : {ptype}, i32) {{cmp = #pto<wait_cmp {cmp}>}}")


@emits("pld.tile.remote_load")
def _remote_load(ctx):
    target, peer, offsets, shape = ctx.call.args[:4]
    valid = ctx.call.args[4] if len(ctx.call.args) > 4 else shape
    pv, ptype = _partition(ctx, _peer_view(ctx, target, peer), target, offsets, list(valid.elements), PEER_PVIEW)
    ctx.emit(f"pto.tload ins({pv} : {ptype}) outs({ctx.result} : {ctx.result_type})")


def _atomic(kind) -> str:
    return "atomic_add" if kind is AtomicType.Add else "atomic_none"


@emits("pld.tile.remote_store")
def _remote_store(ctx):
    src, target, peer, offsets = ctx.call.args
    sizes = [const(1)] * (len(target.type.shape) - 2) + list(src.type.valid_shape)
    pv, ptype = _partition(ctx, _peer_view(ctx, target, peer), target, offsets, sizes, PEER_PVIEW)
    atomic = ctx.call.kwargs.get("atomic", AtomicType.None_)
    attr = " {atomicType = #pto<atomic_type atomic_add>}" if atomic is AtomicType.Add else ""
    ctx.emit(f"pto.tstore ins({ctx.value(src)} : {ctx.type_of(src)}) outs({pv} : {ptype}){attr}")


def _transfer(ctx, mnemonic: str, remote_index: int) -> None:
    """tput (remote_index 0: dst is the peer's window) / tget (1: src is): one partition view per side,
    staged through the Vec tile `stage`."""
    args = ctx.call.args
    dst, peer, src = args[:3]
    stages, region = transfer_parts(args)
    if region:
        dst_offs, src_offs, shape = region[0], region[1], list(region[2].elements)
    else:
        dst_offs = src_offs = None
        shape = list(dst.type.shape)
    views = [ctx.tensor_view(dst), ctx.tensor_view(src)]
    views[remote_index] = _peer_view(ctx, (dst, src)[remote_index], peer)
    names = ["pview", "pview"]
    names[remote_index] = PEER_PVIEW
    dpv, dtype_ = _partition(ctx, views[0], dst, dst_offs, shape, names[0])
    spv, stype = _partition(ctx, views[1], src, src_offs, shape, names[1])
    attr = f" {{atomicType = #pto<atomic_type {_atomic(ctx.call.kwargs.get('atomic'))}>}}" if remote_index == 0 else ""
    bufs = ", ".join(ctx.value(t) for t in stages)            # two: the ping-pong pair
    buf_types = ", ".join(ctx.type_of(t) for t in stages)
    ctx.emit(f"{mnemonic}({dpv}, {spv}, buf({bufs}) : {dtype_}, {stype}, {buf_types}){attr}")


@emits("pld.tile.put")
def _put(ctx):
    _transfer(ctx, "pto.comm.tput", 0)


@emits("pld.tile.get")
def _get(ctx):
    _transfer(ctx, "pto.comm.tget", 1)



not_emitted("pld.tensor.remote_store", "the GM-to-peer-GM form needs a staging tile the IR does not name; write "
                                       "pl.load + pld.tile.remote_store (one pto.tstore on the peer's view) instead")
