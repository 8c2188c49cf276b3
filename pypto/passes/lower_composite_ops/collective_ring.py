"""pld.tensor.allreduce(mode="ring") → reduce-scatter then allgather rounds of pld.tile.put to the right neighbour.

Seed 001, `pld.tensor.allreduce` (ring): the window is seen through one packed 2D view
(`tensor.view` to [1, prod(shape)]; a contiguous partial prefix keeps that physical shape and
carries valid_shape [1, prod(valid)]: collective_view.linear_geometry) whose SIZE valid elements
are split into P segments at floor(i * SIZE / P) (FP16: each inner boundary rounded up to 16
elements and clamped to SIZE, so every segment starts 32-byte aligned). Reduce-scatter round k:
rank r reads its own value of the receive slot (r - k - 1) mod P into a tile (before anyone
pushes), pushes segment (r - k) mod P to its right neighbour's same slot, then folds what its
left neighbour pushed; after P - 1 rounds rank r owns the reduced segment (r + 1) mod P.
Allgather round k pushes segment (r + 1 - k) mod P. Pushes go through one Vec staging tile
narrowed to each transfer's width with `tile.set_validshape`. Each round uses one row of the
[2 (P - 1), P] INT32 signal; each UB subchunk of a round is fenced by a ready generation
(2j + 1) and a push-done generation (2j + 2). The subchunk count is uniform across rounds
(the longest segment decides), so the epilogue retires 2 * subchunks from every non-self cell
of every row (2-element offsets). 14 For / 13 If.

    before:  data = pld.tensor.allreduce(data, signal, mode="ring")
    after:   flat = tensor.view(data, [1, SIZE]); stage = tile.create([1, CH]); for k in range(P - 1):
             for j: own = load(recv slot); barrier(row k, 2j + 1); put(flat, right, flat,
             set_validshape(stage, 1, w), send slot); barrier(row k, 2j + 2); store(add(own, load(recv slot)))
             ... allgather rounds ...; for row: for src != me: notify(signal, me, [row, src], -2 * n_sub)
"""

from __future__ import annotations

from pypto.errors import TypeCheckError
from pypto.ir.comm_enums import NotifyOp, ReduceOp, WaitCmp
from pypto.ir.dtypes import FP16, INT32
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import BinaryExpr, ConstInt, MakeTuple, UnaryExpr, const
from pypto.ir.types import DistributedTensorType
from pypto.passes.lower_composite_ops.builder import LoweringBuilder
from pypto.passes.lower_composite_ops.collective_protocol import UB_CHUNK_BYTES, CommHandles, chunk_cols, reduce
from pypto.passes.lower_composite_ops.collective_view import linear_geometry



def _validate_ring_signal(op: str, signal) -> None:
    t = signal.type
    if not isinstance(t, DistributedTensorType) or t.dtype is not INT32 or len(t.shape) != 2:
        raise TypeCheckError(f"{op}(mode='ring'): the signal must be a 2D INT32 pld.DistributedTensor "
                             f"[2 * (NR - 1), NR], got {t}")
    if isinstance(t.shape[1], ConstInt) and t.shape[1].value == 1:
        raise TypeCheckError(f"{op}(mode='ring'): a [NR, 1] mesh signal cannot serve a ring allreduce",
                             hint="ring signals have one row per round: shape [2 * (NR - 1), NR]")


def _row_barrier(b: LoweringBuilder, h: CommHandles, signal, row, generation) -> None:
    def notify(inner, peer):
        inner.emit_if(BinaryExpr("ne", peer, h.rank), lambda t: t.emit_eval(t.op(
            "pld.system.notify", [signal, peer, MakeTuple([row, h.rank]), const(1, INT32)],
            {"op": NotifyOp.AtomicAdd})))

    def wait(inner, src):
        inner.emit_if(BinaryExpr("ne", src, h.rank), lambda t: t.emit_eval(t.op(
            "pld.system.wait", [signal, MakeTuple([row, src]), generation], {"cmp": WaitCmp.Ge})))
    b.emit_for("peer", 0, h.nranks, 1, notify)
    b.emit_for("src", 0, h.nranks, 1, wait)


def lower_ring_allreduce(call, args: tuple, b: LoweringBuilder):
    op_name = "pld.tensor.allreduce"
    target, signal = args[0], args[1]
    _validate_ring_signal(op_name, signal)
    geometry = linear_geometry(op_name, target)
    size = (geometry.valid or geometry.shape)[1]
    flat = geometry.bind_view(b, target)
    rop = call.kwargs.get("op", ReduceOp.Sum)
    dtype = target.type.dtype
    # a run-time length takes full 16 KiB subchunks (the same static UB contract as the mesh rule)
    chunk = chunk_cols(size, dtype.get_byte()) if isinstance(size, int) else UB_CHUNK_BYTES // dtype.get_byte()
    align = 16 if dtype is FP16 else 1
    h = CommHandles.of(b, signal)
    P = h.nranks
    stage = b.bind("ring_stage", b.op("tile.create", [MakeTuple([const(1), const(chunk)])],
                                      {"dtype": dtype, "target_memory": MemorySpace.Vec}))
    max_seg = b.bind("max_seg", BinaryExpr("add", BinaryExpr("floordiv", BinaryExpr("add", const(size), P),
                                                                     P), const(align - 1)))
    n_sub = b.bind("n_sub", BinaryExpr("floordiv", BinaryExpr("add", max_seg, const(chunk - 1)), const(chunk)))
    right = b.bind("right", BinaryExpr("floormod", BinaryExpr("add", h.rank, const(1)), P))

    def bound(bb, s):
        v = BinaryExpr("floordiv", BinaryExpr("mul", s, const(size)), P)
        if align > 1:
            v = BinaryExpr("min", BinaryExpr("mul", BinaryExpr("floordiv", BinaryExpr("add", v, const(align - 1)),
                                                                const(align)), const(align)), const(size))
        return bb.bind("seg_bound", v)

    def phase(reduce_phase: bool, data):
        def round_body(rb: LoweringBuilder, k, cur):
            row = k if reduce_phase else BinaryExpr("add", BinaryExpr("sub", P, const(1)), k)
            base = BinaryExpr("sub", h.rank, k) if reduce_phase else BinaryExpr("sub", BinaryExpr("add", h.rank,
                                                                                                  const(1)), k)
            s_send = rb.bind("s_send", BinaryExpr("floormod", BinaryExpr("add", base, P), P))
            s_recv = rb.bind("s_recv", BinaryExpr("floormod", BinaryExpr("add", BinaryExpr("sub", s_send,
                                                                                             const(1)), P), P))
            send_lo, send_hi = bound(rb, s_send), bound(rb, BinaryExpr("add", s_send, const(1)))
            recv_lo, recv_hi = bound(rb, s_recv), bound(rb, BinaryExpr("add", s_recv, const(1)))

            def sub_body(sb: LoweringBuilder, j, cur2):
                def width(lo, hi, name):
                    off = sb.bind(f"{name}_off", BinaryExpr("add", lo, BinaryExpr("mul", j, const(chunk))))
                    w = BinaryExpr("max", BinaryExpr("min", const(chunk), BinaryExpr("sub", hi, off)), const(0))
                    return off, sb.bind(f"{name}_cols", w)
                soff, sw = width(send_lo, send_hi, "send")
                roff, rw = width(recv_lo, recv_hi, "recv")
                shape = MakeTuple([const(1), const(chunk)])
                own = None
                if reduce_phase:             # my own value of the receive slot, before the left neighbour pushes
                    load_valid = MakeTuple([const(1), BinaryExpr("max", rw, const(1))])

                    def own_at(offs, name):
                        return lambda ob: ob.bind(name, ob.op("tile.load", [cur2, offs, shape, load_valid],
                                                              {"target_memory": MemorySpace.Vec}))
                    # an inactive subchunk (rw == 0) reads one in-bounds element so both branches share one type
                    own = sb.emit_if_expr(BinaryExpr("gt", rw, const(0)), own_at(MakeTuple([const(0), roff]), "own"),
                                          own_at(MakeTuple([const(0), const(0)]), "own_placeholder"))
                g = BinaryExpr("mul", j, const(2, INT32))
                _row_barrier(sb, h, signal, row, BinaryExpr("add", g, const(1, INT32)))       # ready

                def push(t: LoweringBuilder):
                    narrowed = t.bind("put_stage", t.op("tile.set_validshape", [stage, const(1), sw]))
                    t.emit_eval(t.op("pld.tile.put", [cur2, right, cur2, narrowed, MakeTuple([const(0), soff]),
                                                      MakeTuple([const(0), soff]), MakeTuple([const(1), sw])]))
                sb.emit_if(BinaryExpr("gt", sw, const(0)), push)
                _row_barrier(sb, h, signal, row, BinaryExpr("add", g, const(2, INT32)))       # push done
                if not reduce_phase:
                    return cur2

                def fold(tb: LoweringBuilder):
                    offs = MakeTuple([const(0), roff])
                    got = tb.bind("pushed", tb.op("tile.load", [cur2, offs, shape, MakeTuple([const(1), rw])],
                                                  {"target_memory": MemorySpace.Vec}))
                    red = tb.bind("folded", reduce(tb, rop, own, got))
                    return tb.bind("stored", tb.op("tile.store", [red, offs, cur2]))
                return sb.emit_if_expr(BinaryExpr("gt", rw, const(0)), fold, lambda eb: cur2)
            return rb.emit_for_reduce("sub", 0, n_sub, 1, cur, sub_body)
        return b.emit_for_reduce("rs_round" if reduce_phase else "ag_round", 0, BinaryExpr("sub", P, const(1)), 1,
                                 data, round_body)

    data = phase(True, flat)
    phase(False, data)
    neg = UnaryExpr("neg", BinaryExpr("mul", n_sub, const(2)))

    def reset_row(rb: LoweringBuilder, row):
        def per_src(inner, src):
            inner.emit_if(BinaryExpr("ne", src, h.rank), lambda t: t.emit_eval(t.op(
                "pld.system.notify", [signal, h.rank, MakeTuple([row, src]), neg], {"op": NotifyOp.AtomicAdd})))
        rb.emit_for("src", 0, P, 1, per_src)
    b.emit_for("row", 0, BinaryExpr("mul", BinaryExpr("sub", P, const(1)), const(2)), 1, reset_row)
    return target
