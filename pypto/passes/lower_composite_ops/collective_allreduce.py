"""pld.tensor.allreduce (mode="mesh") → ready barrier, chunked remote_load reduction, per-chunk barriers.

Seed 001, `pld.tensor.allreduce`. A fully valid packed window (any rank, e.g. [2, 3, 4]) is
viewed as one [1, SIZE] row (`tensor.view`, no copy) and walked in UB chunks of at most 16 KiB,
shrunk to the smallest 32-byte-aligned width for small static sizes. Generation 1 is a ready
barrier (every rank staged its data). Per chunk c: load my slice with valid_shape
[1, min(chunk, SIZE - c0)] and zero its padding (`tile.fillpad_inplace`, so the carried
accumulator keeps one fixed, fully valid type), fold in every peer's slice (`remote_load` with
the same valid_shape, padded the same way) with the ReduceOp's tile op, barrier on generation
2 + c (no rank overwrites its slice while a slower peer may still read it), narrow the result
back to the tail (`tile.set_validshape`) and store it. Epilogue: 1 + chunk_count credits. A
window with dynamic dims walks full 16 KiB chunks up to its runtime length, and its credit total
1 + ceil(SIZE / CH) is a runtime expression.
7 For / 6 If. A window with a partial valid_shape keeps one [rows, cols] rectangle
(collective_view.rectangle_geometry) that must fit one 16 KiB tile (a symbolic valid box uses the
window's static physical rectangle as the tile, with the symbolic extents as valid_shape): ready
barrier, one load, peer fold, post-reduce barrier, store, epilogue 2 (6 For / 5 If).

    before:  data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum)
    after:   flat = tensor.view(data, [1, SIZE]); barrier(1); for c0 in range(0, SIZE, CH): acc = fillpad(load);
             for p: if p != me: acc = add(acc, fillpad(remote_load(p))); barrier(2 + c0 // CH);
             store(set_validshape(acc, 1, valid)) ...; cells -= 1 + ceil(SIZE / CH)
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.comm_enums import ReduceOp
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import BinaryExpr, MakeTuple, const
from pypto.passes.lower_composite_ops.builder import LoweringBuilder
from pypto.passes.lower_composite_ops.collective_protocol import (UB_CHUNK_BYTES, CommHandles, chunk_cols, emit_barrier,
                                                              emit_chunked_peer_fold, emit_epilogue_reset, reduce,
                                                              validate_mesh_signal)
from pypto.passes.lower_composite_ops.collective_view import rectangle_geometry


def _check_call(call, args) -> str:
    op_name = "pld.tensor.allreduce"
    if len(args) < 2:
        raise UnsupportedError(f"{op_name} requires an explicit signal outside host orchestrator functions",
                               hint="pass an INT32 [NR, 1] signal window (only the host form may omit it)")
    if call.kwargs.get("core_num", 1) != 1:
        raise UnsupportedError(f"{op_name}: core_num={call.kwargs['core_num']} (a multi-core request) is supported only in a HOST orchestrator, not in an InCore function",
                               hint="InCore collectives run on one core")
    mode = call.kwargs.get("mode", "mesh")
    if mode not in ("mesh", "ring"):
        raise UnsupportedError(f"{op_name}(mode={mode!r}): the modes are 'mesh' and 'ring'")
    return mode


def lower_allreduce_rule(call, args: tuple, b: LoweringBuilder):
    op_name = "pld.tensor.allreduce"
    if _check_call(call, args) == "ring":
        from pypto.passes.lower_composite_ops.collective_ring import lower_ring_allreduce
        return lower_ring_allreduce(call, args, b)
    target, signal = args[0], args[1]
    validate_mesh_signal(op_name, signal)
    geometry = rectangle_geometry(op_name, target)
    rop = call.kwargs.get("op", ReduceOp.Sum)
    if geometry.valid is not None:
        return _lower_rectangle(op_name, target, signal, geometry, rop, b)
    size = geometry.shape[1]
    dtype = target.type.dtype
    if isinstance(size, int):
        chunk = chunk_cols(size, dtype.get_byte())
        credits = 1 + -(-size // chunk)
    else:                  # a dynamic length: full 16 KiB chunks, the credit total is a runtime expression
        chunk = UB_CHUNK_BYTES // dtype.get_byte()
        credits = b.bind("reset_total", BinaryExpr("add", const(1), BinaryExpr(
            "floordiv", BinaryExpr("add", size, const(chunk - 1)), const(chunk))))
    flat = geometry.bind_view(b, target)
    h = CommHandles.of(b, signal)
    emit_barrier(b, h, signal, 1)                                   # ready: every rank staged its data

    emit_chunked_peer_fold(b, h, signal, flat, const(0), size, chunk, rop)
    emit_epilogue_reset(b, h, signal, credits)
    return target


def _lower_rectangle(op_name, target, signal, geometry, rop, b: LoweringBuilder):
    """The single-rectangle path of a partial-valid window: exactly two barriers (ready + post-reduce)."""
    dtype = target.type.dtype
    static_valid = all(isinstance(v, int) for v in geometry.valid)
    rows, cols = geometry.valid if static_valid else geometry.shape     # a symbolic box uses the physical one
    kind = "partial valid rectangle" if static_valid else "physical rectangle behind a symbolic valid_shape"
    if rows * cols * dtype.get_byte() > UB_CHUNK_BYTES:
        raise UnsupportedError(f"{op_name}: the {kind} [{rows}, {cols}] {dtype.name} "
                               f"({rows * cols * dtype.get_byte()} bytes) exceeds one mesh chunk: a partial valid_shape must fit within one {UB_CHUNK_BYTES}-byte mesh chunk "
                               "(chunking a partial rectangle with row gaps is not supported)",
                               hint="allreduce a fully valid window, or a valid region of at most 16 KiB")
    flat = geometry.bind_view(b, target)
    h = CommHandles.of(b, signal)
    emit_barrier(b, h, signal, 1)
    offs = MakeTuple([const(0), const(0)])
    shape = MakeTuple([const(rows), const(cols)])
    valid = MakeTuple([const(v) for v in geometry.valid])
    mine = b.bind("acc_initial", b.op("tile.load", [flat, offs, shape, valid], {"target_memory": MemorySpace.Vec}))

    def peer_body(pb: LoweringBuilder, peer, acc):
        def fold(tb: LoweringBuilder):
            got = tb.bind("recv", tb.op("pld.tile.remote_load", [flat, peer, offs, shape, valid]))
            return tb.bind("acc_next", reduce(tb, rop, acc, got))
        return pb.emit_if_expr(BinaryExpr("ne", peer, h.rank), fold, lambda eb: acc)
    acc = b.emit_for_reduce("peer", 0, h.nranks, 1, mine, peer_body)
    emit_barrier(b, h, signal, 2)                                   # post-reduce: nobody still reads my rectangle
    b.bind("store_ret", b.op("tile.store", [acc, offs, flat]))
    emit_epilogue_reset(b, h, signal, 2)
    return target
