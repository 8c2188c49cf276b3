"""pld.tensor.reduce_scatter → ready barrier, fold every peer's row `my_rank`, post-reduce barrier, store (seed 001).

target [NR, SIZE] holds all NR chunks on every rank; afterwards row r of rank r is the
element-wise reduction (Sum / Max / Min / Prod) of row r over all ranks. The post-reduce
barrier keeps a fast rank from overwriting its row while a slow peer still reads it (the same
WAR hazard as allreduce). A row that fits one 16 KiB UB tile is the seed's five-phase form
(generations 1 and 2, epilogue -2, 6 For / 6 If). A longer row is walked in 16 KiB chunks like
the mesh allreduce: per chunk a load with valid_shape [1, min(CH, SIZE - c0)] zero-padded in
place, the peer fold, a barrier on generation 2 + c0 // CH, the tail narrowed with
tile.set_validshape, the store; the epilogue retires 1 + ceil(SIZE / CH) (7 For / 6 If).

    before:  target = pld.tensor.reduce_scatter(target, signal, op=pld.ReduceOp.Sum)
    after:   barrier(1); acc = load(target[me]); for p: if p != me: acc = add(acc, remote_load(p, [me, 0]));
             barrier(2); target = store(acc, [me, 0]); cells -= 2
"""

from __future__ import annotations

from pypto.ir.comm_enums import ReduceOp
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import BinaryExpr, MakeTuple, const
from pypto.passes.lower_composite_ops.builder import LoweringBuilder
from pypto.passes.lower_composite_ops.collective_protocol import (UB_CHUNK_BYTES, CommHandles, emit_barrier,
                                                              emit_chunked_peer_fold, emit_epilogue_reset, reduce,
                                                              static_cols, validate_mesh_signal)


def lower_reduce_scatter_rule(call, args: tuple, b: LoweringBuilder):
    op = "pld.tensor.reduce_scatter"
    target, signal = args
    validate_mesh_signal(op, signal)
    size = static_cols(op, target.type)        # rows (one per rank) may be a dynamic rank count
    dtype = target.type.dtype
    rop = call.kwargs.get("op", ReduceOp.Sum)
    h = CommHandles.of(b, signal)
    emit_barrier(b, h, signal, 1)
    if size * dtype.get_byte() > UB_CHUNK_BYTES:
        return _lower_chunked(target, signal, size, UB_CHUNK_BYTES // dtype.get_byte(), rop, h, b)
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


def _lower_chunked(target, signal, size: int, chunk: int, rop, h: CommHandles, b: LoweringBuilder):
    """Rows longer than one UB tile: one generation per chunk, so the epilogue retires 1 + chunk count."""
    result = emit_chunked_peer_fold(b, h, signal, target, h.rank, size, chunk, rop)
    emit_epilogue_reset(b, h, signal, 1 + -(-size // chunk))
    return result
