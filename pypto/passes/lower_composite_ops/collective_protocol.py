"""The self-cleaning credit-barrier protocol every InCore collective rule shares (seed 001, "屏障-信号协议").

A mesh signal is an INT32 window of shape [NR, 1]: cell [s, 0] on rank r counts the credits
rank s deposited on r. Each barrier generation g of one call: every rank adds 1 to its own
row on every peer (`notify`, AtomicAdd only — never Set, which could overwrite credits a fast
peer already pushed), then waits until each peer's cell on itself is >= g (Ge, never Eq: a
fast peer may already have pushed the cell past g). Thresholds are call-local and start at 1.
The epilogue retires this call's N credits from every non-self cell with AtomicAdd(-N)
(N may be a runtime expression), keeping credits of the next call that arrived early, so a
signal ends at zero after each call and one buffer serves back-to-back calls, also in loops.

    h = CommHandles.of(b, signal)                 # ctx / rank / nranks
    emit_barrier(b, h, signal, 1)                 # notify-all + wait-all (Ge 1)
    emit_epilogue_reset(b, h, signal, 1)          # cells -= 1
"""

from __future__ import annotations

from dataclasses import dataclass

from pypto.errors import TypeCheckError, ValueCheckError
from pypto.ir.comm_enums import NotifyOp, ReduceOp, WaitCmp
from pypto.ir.dtypes import INT32
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import BinaryExpr, ConstInt, Expr, MakeTuple, UnaryExpr, Var, const
from pypto.ir.types import DistributedTensorType
from pypto.passes.lower_composite_ops.builder import LoweringBuilder

UB_CHUNK_BYTES = 16 * 1024          # one Vec tile of a collective holds at most 16 KiB
ALIGN_BYTES = 32


@dataclass
class CommHandles:
    ctx: Var
    rank: Var
    nranks: Var

    @staticmethod
    def of(b: LoweringBuilder, window: Expr) -> "CommHandles":
        ctx = b.bind("comm_ctx", b.op("pld.get_comm_ctx", [window]))
        return CommHandles(ctx, b.bind("my_rank", b.op("pld.rank", [ctx])), b.bind("nranks", b.op("pld.nranks", [ctx])))


def validate_mesh_signal(op: str, signal: Expr) -> None:
    """ValidateMeshSignalShape: a mesh signal is [NR, 1] INT32 (ring signals use another cell layout)."""
    t = signal.type
    if not isinstance(t, DistributedTensorType) or t.dtype is not INT32:
        raise TypeCheckError(f"{op}: the signal must be an INT32 pld.DistributedTensor, got {t}")
    if len(t.shape) != 2 or not (isinstance(t.shape[1], ConstInt) and t.shape[1].value == 1):
        raise ValueCheckError(f"{op}: a mesh signal holds one cell per rank, [NR, 1], so signal shape[1] must be 1; "
                              f"got {[str(d) for d in t.shape]}",
                              hint="a ring signal is [2*(NR-1), NR]: ring and mesh signals address cells differently, "
                                   "give each protocol its own buffer")


def _cell(rank_expr: Expr) -> MakeTuple:
    return MakeTuple([rank_expr, const(0)])


def emit_notify_all(b: LoweringBuilder, h: CommHandles, signal: Expr, value=1) -> None:
    """+value on my row of every peer's signal (AtomicAdd; peers only, never self)."""
    def body(inner: LoweringBuilder, peer: Var) -> None:
        inner.emit_if(BinaryExpr("ne", peer, h.rank), lambda t: t.emit_eval(t.op(
            "pld.system.notify", [signal, peer, _cell(h.rank), const(value, INT32)], {"op": NotifyOp.AtomicAdd})))
    b.emit_for("peer", 0, h.nranks, 1, body)


def emit_wait_all(b: LoweringBuilder, h: CommHandles, signal: Expr, generation) -> None:
    """Wait until every peer's cell on this rank is >= generation (call-local threshold)."""
    def body(inner: LoweringBuilder, src: Var) -> None:
        inner.emit_if(BinaryExpr("ne", src, h.rank), lambda t: t.emit_eval(t.op(
            "pld.system.wait", [signal, _cell(src), const(generation, INT32)], {"cmp": WaitCmp.Ge})))
    b.emit_for("src", 0, h.nranks, 1, body)


def emit_barrier(b: LoweringBuilder, h: CommHandles, signal: Expr, generation) -> None:
    emit_notify_all(b, h, signal)
    emit_wait_all(b, h, signal, generation)


def emit_epilogue_reset(b: LoweringBuilder, h: CommHandles, signal: Expr, credits) -> None:
    """Retire this call's `credits` from every non-self cell of my own signal (AtomicAdd(-credits))."""
    neg = const(-credits, INT32) if isinstance(credits, int) else UnaryExpr("neg", credits)

    def body(inner: LoweringBuilder, src: Var) -> None:
        inner.emit_if(BinaryExpr("ne", src, h.rank), lambda t: t.emit_eval(t.op(
            "pld.system.notify", [signal, h.rank, _cell(src), neg], {"op": NotifyOp.AtomicAdd})))
    b.emit_for("src", 0, h.nranks, 1, body)


REDUCE_TILE_OPS = {ReduceOp.Sum: "tile.add", ReduceOp.Max: "tile.maximum", ReduceOp.Min: "tile.minimum",
                   ReduceOp.Prod: "tile.mul"}


def reduce(b: LoweringBuilder, op: ReduceOp, acc: Expr, x: Expr) -> Expr:
    return b.op(REDUCE_TILE_OPS[op], [acc, x])


def emit_chunked_peer_fold(b: LoweringBuilder, h: CommHandles, signal: Expr, data: Expr, row: Expr, size,
                           chunk: int, rop: ReduceOp) -> Expr:
    """The mesh chunk loop over row `row` of `data` (seed 001; mesh allreduce and long-row reduce_scatter):
    per chunk of at most `chunk` columns, load it with valid_shape [1, min(CH, SIZE - c0)] padded in
    place, fold every peer's same chunk into it, barrier on generation 2 + c0 // CH (nobody still
    reads this chunk of mine), narrow the tail with set_validshape and store it. Returns the
    updated `data`; the caller's epilogue retires 1 + the chunk count."""
    def chunk_body(cb: LoweringBuilder, c0, data):
        # written inline (not bound to a scalar) so the load, the peers' remote loads and the tail's
        # set_validshape carry one structural extent expression
        valid = BinaryExpr("min", const(chunk), BinaryExpr("sub", size if not isinstance(size, int) else const(size),
                                                          c0))
        offs, shape = MakeTuple([row, c0]), MakeTuple([const(1), const(chunk)])
        vshape = MakeTuple([const(1), valid])
        loaded = cb.bind("local", cb.op("tile.load", [data, offs, shape, vshape], {"target_memory": MemorySpace.Vec}))
        mine = cb.bind("acc_initial", cb.op("tile.fillpad_inplace", [loaded]))

        def peer_body(pb: LoweringBuilder, peer, acc):
            def fold(tb: LoweringBuilder):
                got = tb.bind("remote", tb.op("pld.tile.remote_load", [data, peer, offs, shape, vshape]))
                padded = tb.bind("recv", tb.op("tile.fillpad_inplace", [got]))
                return tb.bind("folded", reduce(tb, rop, acc, padded))
            return pb.emit_if_expr(BinaryExpr("ne", peer, h.rank), fold, lambda eb: acc)
        acc = cb.emit_for_reduce("peer", 0, h.nranks, 1, mine, peer_body)
        emit_barrier(cb, h, signal, BinaryExpr("add", const(2, INT32), BinaryExpr("floordiv", c0, const(chunk))))
        tail = cb.bind("store_value", cb.op("tile.set_validshape", [acc, const(1), valid]))
        return cb.bind("stored", cb.op("tile.store", [tail, offs, data]))

    return b.emit_for_reduce("c0", 0, size, chunk, data, chunk_body)


def chunk_cols(size: int, itemsize: int) -> int:
    """Elements per UB chunk: at most 16 KiB, shrunk to the smallest 32-byte-aligned width covering `size`."""
    unit = ALIGN_BYTES // itemsize
    return min(UB_CHUNK_BYTES // itemsize, -(-size // unit) * unit)


def stage_cols(op: str, size: int, itemsize: int) -> int:
    """Width of a put / get staging tile: min(SIZE, chunk), rounded down to a 32-byte row when below a chunk."""
    chunk = UB_CHUNK_BYTES // itemsize
    unit = ALIGN_BYTES // itemsize
    cols = min(size, chunk)
    if cols < chunk:
        cols = cols // unit * unit
    if cols <= 0:
        from pypto.errors import UnsupportedError
        raise UnsupportedError(f"{op}: a transfer of {size} element(s) is shorter than one 32-byte unit "
                               f"({unit} elements); no aligned staging width fits it")
    return cols


def static_2d(op: str, t) -> tuple:
    """(rows, cols) of a static 2D window; collectives other than mesh allreduce lower only those."""
    from pypto.errors import UnsupportedError
    dims = [d.value if isinstance(d, ConstInt) else None for d in t.shape]
    if len(dims) != 2 or None in dims:
        raise UnsupportedError(f"{op} on a tensor of shape {list(t.shape)}: only static 2D [rows, cols] windows "
                               "are lowered")
    return dims[0], dims[1]


def static_cols(op: str, t) -> int:
    """The static column count of a 2D [rows, cols] window whose rows may be dynamic (a rank-count dim
    such as `pl.dynamic("NR")`): a collective that addresses rows by rank index never needs their number."""
    from pypto.errors import UnsupportedError
    dims = list(t.shape)
    if len(dims) != 2 or not isinstance(dims[1], ConstInt):
        raise UnsupportedError(f"{op} on a tensor of shape {dims}: only 2D [rows, cols] windows with a static "
                               "column count are lowered")
    return dims[1].value
