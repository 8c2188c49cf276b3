"""pld.tensor.allreduce (mode="mesh") → ready barrier, chunked remote_load reduction, per-chunk barriers.

Seed 001, `pld.tensor.allreduce`: the [1, SIZE] window is walked in UB chunks of at most 16 KiB
(shrunk to the smallest 32-byte-aligned width for small static sizes). Generation 1 is a ready
barrier (every rank staged its data). Per chunk c: load my slice, fold in every peer's slice
(`pld.tile.remote_load`, tail chunks carry valid_shape=[1, min(chunk, SIZE - c0)]) with the
ReduceOp's tile op, barrier on generation 2 + c (no rank overwrites its slice while a slower
peer may still read it), then store. The epilogue retires 1 + chunk_count credits. 7 For / 6 If.

    before:  data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum)
    after:   ready barrier; for c0 in range(0, SIZE, CH): acc = load; for p: if p != me: acc = add(acc,
             remote_load(p)); barrier(2 + c0 // CH); data = store(acc)  ...; cells -= 1 + ceil(SIZE / CH)
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.comm_enums import ReduceOp
from pypto.ir.dtypes import INT32
from pypto.ir.expr import BinaryExpr, ConstInt, MakeTuple, UnaryExpr, const
from pypto.ir.enums import MemorySpace
from pypto.ir.types import DistributedTensorType
from pypto.passes.lower_composite.builder import LoweringBuilder
from pypto.passes.lower_composite.collective_protocol import (CommHandles, chunk_cols, emit_barrier,
                                                              emit_epilogue_reset, reduce, validate_mesh_signal)


def _static_row_size(op: str, target) -> int:
    t = target.type
    if not isinstance(t, DistributedTensorType):
        raise UnsupportedError(f"{op}: the target must be a window-bound pld.DistributedTensor")
    dims = [d.value if isinstance(d, ConstInt) else None for d in t.shape]
    if len(dims) != 2 or dims[0] != 1 or dims[1] is None:
        raise UnsupportedError(f"{op} on a target of shape {list(t.shape)}: only static [1, SIZE] targets are "
                               "lowered so far (no ND → 2D tensor.view, no partial valid rectangles)")
    if t.tensor_view is not None and t.tensor_view.valid_shape:
        raise UnsupportedError(f"{op}: partial-valid targets are not lowered yet")
    return dims[1]


def lower_allreduce_rule(call, args: tuple, b: LoweringBuilder):
    op_name = "pld.tensor.allreduce"
    if len(args) < 2:
        raise UnsupportedError(f"{op_name} without a signal outside a HOST orchestrator",
                               hint="pass an INT32 [NR, 1] signal window (only the host form may omit it)")
    if call.kwargs.get("core_num", 1) != 1:
        raise UnsupportedError(f"{op_name}: core_num={call.kwargs['core_num']} in an InCore function",
                               hint="InCore collectives run on one core")
    mode = call.kwargs.get("mode", "mesh")
    if mode not in ("mesh", "ring"):
        raise UnsupportedError(f"{op_name}(mode={mode!r}): the modes are 'mesh' and 'ring'")
    target, signal = args[0], args[1]
    if mode == "ring":
        from pypto.passes.lower_composite.collective_ring import lower_ring_allreduce
        return lower_ring_allreduce(call, args, b, _static_row_size(op_name, target))
    validate_mesh_signal(op_name, signal)
    size = _static_row_size(op_name, target)
    rop = call.kwargs.get("op", ReduceOp.Sum)
    dtype = target.type.dtype
    chunk = chunk_cols(size, dtype.get_byte())
    n_chunks = -(-size // chunk)
    h = CommHandles.of(b, signal)
    emit_barrier(b, h, signal, 1)                                   # ready: every rank staged its data

    def chunk_body(cb: LoweringBuilder, c0, data):
        valid = cb.bind("valid_cols", BinaryExpr("min", const(chunk), BinaryExpr("sub", const(size), c0)))
        shape, offs = MakeTuple([const(1), const(chunk)]), MakeTuple([const(0), c0])
        vshape = MakeTuple([const(1), valid])
        mine = cb.bind("local", cb.op("tile.load", [data, offs, shape, vshape], {"target_memory": MemorySpace.Vec}))

        def peer_body(pb: LoweringBuilder, peer, acc):
            def fold(tb: LoweringBuilder):
                remote = tb.bind("remote", tb.op("pld.tile.remote_load", [data, peer, offs, shape, vshape]))
                return tb.bind("folded", reduce(tb, rop, acc, remote))
            return pb.emit_if_expr(BinaryExpr("ne", peer, h.rank), fold, lambda eb: acc)
        acc = cb.emit_for_reduce("peer", 0, h.nranks, 1, mine, peer_body)
        generation = BinaryExpr("add", const(2, INT32), BinaryExpr("floordiv", c0, const(chunk)))
        emit_barrier(cb, h, signal, generation)                      # nobody still reads this chunk of mine
        return cb.bind("stored", cb.op("tile.store", [acc, offs, data]))

    result = b.emit_for_reduce("c0", 0, size, chunk, target, chunk_body)
    emit_epilogue_reset(b, h, signal, 1 + n_chunks)
    return result
