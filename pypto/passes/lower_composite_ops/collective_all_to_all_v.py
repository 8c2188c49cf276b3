"""pld.tensor.all_to_all_v → atomic count clearing, per-destination ready waits, counted pushes (seed 001).

input [NR * M, C] (rows for destination d start at d * M), target window [NR * M, C] (sender s
lands at row s * M; target.shape[0] % NR == 0), send_counts [NR, 1] INT32 (local), recv_counts
[NR, 1] INT32 window. Each receiver first clears its recv_counts cells atomically (AtomicAdd of
minus the current value: a scalar store could write back a whole cache line over neighbours'
counts) and announces ready (generation 1). The destination loop reads send_counts[d] at run
time, clamps it to [0, M], waits for d's ready credit (d != me), and for a positive count
publishes it with AtomicAdd into d's recv_counts[me] and pushes the rows with pld.tile.put.
Zero-row destinations publish nothing. Generation 2 confirms the exchange; the epilogue retires
both credits.

    before:  target = pld.tensor.all_to_all_v(inp, target, signal, send_counts, recv_counts)
    after:   clear recv_counts; notify-all; for d: cnt = min(max(read(send_counts, [d, 0]), 0), M);
             wait(d, >= 1); if cnt > 0: notify(recv_counts, d, [me, 0], cnt); put(rows); barrier(2); cells -= 2
"""

from __future__ import annotations

from pypto.errors import UnsupportedError, ValueCheckError
from pypto.ir.comm_enums import NotifyOp, WaitCmp
from pypto.ir.dtypes import INT32
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import BinaryExpr, ConstInt, MakeTuple, UnaryExpr, const
from pypto.passes.lower_composite_ops.builder import LoweringBuilder
from pypto.passes.lower_composite_ops.collective_protocol import (UB_CHUNK_BYTES, CommHandles, emit_epilogue_reset,
                                                              emit_notify_all, emit_wait_all, stage_cols, static_2d,
                                                              validate_mesh_signal)


def _static_max_recv(op: str, rows: int, signal):
    """MAX_RECV = target rows / NR, a constant when the [NR, 1] signal has a static NR (the clamp then
    bounds every count by a literal capacity); None for a dynamic NR (computed from pld.nranks)."""
    nr = signal.type.shape[0]
    if not isinstance(nr, ConstInt):
        return None
    if nr.value <= 0 or rows % nr.value:
        raise ValueCheckError(f"{op}: the target has {rows} rows, not a multiple of NR = {nr.value} (the signal's "
                              "shape[0]); receiver slots are rows s * MAX_RECV", hint="make target rows NR * MAX_RECV")
    return const(rows // nr.value)


def lower_all_to_all_v_rule(call, args: tuple, b: LoweringBuilder):
    op = "pld.tensor.all_to_all_v"
    inp, target, signal, send_counts, recv_counts = args
    validate_mesh_signal(op, signal)
    rows, cols = static_2d(op, target.type)
    if static_2d(op, inp.type) != (rows, cols):
        raise UnsupportedError(f"{op}: input and target must both be [NR * MAX_RECV, C]")
    dtype = target.type.dtype
    h = CommHandles.of(b, signal)
    max_recv = _static_max_recv(op, rows, signal)
    if max_recv is None:
        max_recv = b.bind("max_recv", BinaryExpr("floordiv", const(rows), h.nranks))

    def clear(cb: LoweringBuilder, s):
        cur = cb.bind("stale_count", cb.op("tensor.read", [recv_counts, MakeTuple([s, const(0)])]))
        cb.emit_eval(cb.op("pld.system.notify", [recv_counts, h.rank, MakeTuple([s, const(0)]), UnaryExpr("neg", cur)],
                           {"op": NotifyOp.AtomicAdd}))
    b.emit_for("slot", 0, h.nranks, 1, clear)
    emit_notify_all(b, h, signal)                                   # ready (generation 1)
    width = stage_cols(op, cols, dtype.get_byte())
    stage_rows = max(1, min(rows, UB_CHUNK_BYTES // (width * dtype.get_byte())))
    stage = b.bind("a2av_stage", b.op("tile.create", [MakeTuple([const(stage_rows), const(width)])],
                                      {"dtype": dtype, "target_memory": MemorySpace.Vec}))

    def per_dest(db: LoweringBuilder, d):
        raw = db.bind("send_count", db.op("tensor.read", [send_counts, MakeTuple([d, const(0)])]))
        cnt = db.bind("count", BinaryExpr("min", BinaryExpr("max", raw, const(0, INT32)), max_recv))
        db.emit_if(BinaryExpr("ne", d, h.rank), lambda t: t.emit_eval(t.op(
            "pld.system.wait", [signal, MakeTuple([d, const(0)]), const(1, INT32)], {"cmp": WaitCmp.Ge})))

        def push(pb: LoweringBuilder):
            pb.emit_eval(pb.op("pld.system.notify", [recv_counts, d, MakeTuple([h.rank, const(0)]), cnt],
                               {"op": NotifyOp.AtomicAdd}))
            pb.emit_eval(pb.op("pld.tile.put", [
                target, d, inp, stage, MakeTuple([BinaryExpr("mul", h.rank, max_recv), const(0)]),
                MakeTuple([BinaryExpr("mul", d, max_recv), const(0)]), MakeTuple([cnt, const(cols)])]))
        db.emit_if(BinaryExpr("gt", cnt, const(0, INT32)), push)
    b.emit_for("dest", 0, h.nranks, 1, per_dest)
    emit_notify_all(b, h, signal)
    emit_wait_all(b, h, signal, 2)                                  # the exchange is complete everywhere
    emit_epilogue_reset(b, h, signal, 2)
    return target
