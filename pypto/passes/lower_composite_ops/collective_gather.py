"""pld.tensor.allgather / all_to_all → push-based pld.tile.put + one credit barrier (seed 001).

allgather(local_data [1, SIZE], target [NR, SIZE], signal): one Vec staging tile [1, stage_cols]
(min(SIZE, 16 KiB chunk), rounded down to a 32-byte row below a chunk: FP32 SIZE=17 → 16), then
every rank puts its chunk into row `my_rank` of every rank's window (self included), barrier on
generation 1, epilogue -1. 4 For / 3 If. The window itself is the gathered result.
all_to_all(input [NR, SIZE], target [NR, SIZE], signal): row d of my input goes to row `my_rank`
of rank d's window, same barrier and epilogue.

    before:  target = pld.tensor.allgather(local, target, signal)
    after:   stage = tile.create([1, 16]); for p in range(n): pld.tile.put(target, p, local, stage,
             [me, 0], [0, 0], [1, SIZE]); barrier(1); cells -= 1
"""

from __future__ import annotations

from pypto.errors import TypeCheckError, UnsupportedError
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import MakeTuple, const
from pypto.passes.lower_composite_ops.builder import LoweringBuilder
from pypto.passes.lower_composite_ops.collective_protocol import (CommHandles, emit_barrier, emit_epilogue_reset,
                                                              stage_cols, static_2d, validate_mesh_signal)


def _stage(b: LoweringBuilder, op: str, size: int, dtype):
    cols = stage_cols(op, size, dtype.get_byte())
    return b.bind("put_stage", b.op("tile.create", [MakeTuple([const(1), const(cols)])],
                                    {"dtype": dtype, "target_memory": MemorySpace.Vec}))


def _push_rows(op: str, source, target, signal, b: LoweringBuilder, row_of_source, want_rows=None):
    validate_mesh_signal(op, signal)
    rows, size = static_2d(op, target.type)
    want_rows = rows if want_rows is None else want_rows
    src_rows, src_size = static_2d(op, source.type)
    if src_size != size:
        raise UnsupportedError(f"{op}: source rows have {src_size} elements, the window rows {size}")
    if src_rows != want_rows:                # (the puts read `want_rows` rows: the others would be dropped)
        what = "this rank's one chunk" if want_rows == 1 else "one row per rank of the window"
        raise TypeCheckError(f"{op}: the source is {what}, [{want_rows}, {size}], got [{src_rows}, {src_size}]",
                             hint="pass one row per destination: a slice or a reshape of the data")
    h = CommHandles.of(b, signal)
    stage = _stage(b, op, size, target.type.dtype)

    def body(inner: LoweringBuilder, peer):
        inner.emit_eval(inner.op("pld.tile.put", [
            target, peer, source, stage, MakeTuple([h.rank, const(0)]), MakeTuple([row_of_source(peer), const(0)]),
            MakeTuple([const(1), const(size)])]))
    b.emit_for("peer", 0, h.nranks, 1, body)
    emit_barrier(b, h, signal, 1)
    emit_epilogue_reset(b, h, signal, 1)
    return target


def lower_allgather_rule(call, args: tuple, b: LoweringBuilder):
    local, target, signal = args
    return _push_rows("pld.tensor.allgather", local, target, signal, b, lambda peer: const(0), want_rows=1)


def lower_all_to_all_rule(call, args: tuple, b: LoweringBuilder):
    inp, target, signal = args
    return _push_rows("pld.tensor.all_to_all", inp, target, signal, b, lambda peer: peer)
