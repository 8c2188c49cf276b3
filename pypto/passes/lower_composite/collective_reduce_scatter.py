"""pld.tensor.reduce_scatter → ready barrier, fold every peer's row `my_rank`, post-reduce barrier, store (seed 001).

target [NR, SIZE] holds all NR chunks on every rank; afterwards row r of rank r is the
element-wise reduction (Sum / Max / Min / Prod) of row r over all ranks. The post-reduce
barrier (generation 2) keeps a fast rank from overwriting its row while a slow peer still
reads it (the same WAR hazard as allreduce). Epilogue -2. 6 For / 6 If.

    before:  target = pld.tensor.reduce_scatter(target, signal, op=pld.ReduceOp.Sum)
    after:   barrier(1); acc = load(target[me]); for p: if p != me: acc = add(acc, remote_load(p, [me, 0]));
             barrier(2); target = store(acc, [me, 0]); cells -= 2
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.comm_enums import ReduceOp
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import BinaryExpr, MakeTuple, const
from pypto.passes.lower_composite.builder import LoweringBuilder
from pypto.passes.lower_composite.collective_protocol import (UB_CHUNK_BYTES, CommHandles, emit_barrier,
                                                              emit_epilogue_reset, reduce, static_2d,
                                                              validate_mesh_signal)


def lower_reduce_scatter_rule(call, args: tuple, b: LoweringBuilder):
    op = "pld.tensor.reduce_scatter"
    target, signal = args
    validate_mesh_signal(op, signal)
    rows, size = static_2d(op, target.type)
    dtype = target.type.dtype
    if size * dtype.get_byte() > UB_CHUNK_BYTES:
        raise UnsupportedError(f"{op}: rows of {size} {dtype.name} exceed one 16 KiB UB chunk (no chunk loop yet)")
    rop = call.kwargs.get("op", ReduceOp.Sum)
    h = CommHandles.of(b, signal)
    emit_barrier(b, h, signal, 1)
    offs, shape = MakeTuple([h.rank, const(0)]), MakeTuple([const(1), const(size)])
    mine = b.bind("local", b.op("tile.load", [target, offs, shape, shape], {"target_memory": MemorySpace.Vec}))

    def peer_body(pb: LoweringBuilder, peer, acc):
        def fold(tb: LoweringBuilder):
            remote = tb.bind("remote", tb.op("pld.tile.remote_load", [target, peer, offs, shape, shape]))
            return tb.bind("folded", reduce(tb, rop, acc, remote))
        return pb.emit_if_expr(BinaryExpr("ne", peer, h.rank), fold, lambda eb: acc)
    acc = b.emit_for_reduce("peer", 0, h.nranks, 1, mine, peer_body)
    emit_barrier(b, h, signal, 2)
    stored = b.bind("stored", b.op("tile.store", [acc, offs, target]))
    emit_epilogue_reset(b, h, signal, 2)
    return stored
