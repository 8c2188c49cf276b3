"""pld.* ops: communication windows, rank identity, signals, remote data movement, collectives.

Host-level ops (`pld.world_size`, `pld.alloc_window_buffer`, `pld.window`) describe the
per-rank symmetric windows; kernel-level ops read the rank identity from a window-bound
DistributedTensor's comm context, deposit / await INT32 signal cells in peer windows and
move data from / to a peer's copy of a window. `pld.tensor.<collective>` are composite
calls that LowerCompositeOps expands into those primitives (InCore) or
LowerHostTensorCollectives turns into builtin dispatches (host).

    ctx = pld.get_comm_ctx(signal)                        # handle (INT64)
    me = pld.rank(ctx)                                    # INT32
    pld.system.notify(signal, peer, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(signal, [src, 0], 1, cmp=pld.WaitCmp.Ge)
    t = pld.tile.remote_load(data, peer, [0, 0], [1, 64], [1, 64])
"""

from __future__ import annotations

from pypto.errors import TypeCheckError
from pypto.ir.comm_enums import NotifyOp, ReduceOp, WaitCmp
from pypto.ir.dtypes import INT32, INT64, DataType
from pypto.ir.expr import ConstInt
from pypto.ir.enums import AtomicType, MemorySpace
from pypto.ir.ops.common import describe, dims_equal, expect_scalar, expect_tile, expect_tuple
from pypto.ir.ops.registry import READ, READWRITE, SHARED, VECTOR, WRITE, Kwarg, OpDef, register_op
from pypto.ir.types import DistributedTensorType, ScalarType, TensorType, TileType, TileView, UnknownType

COLLECTIVES = ("allreduce", "barrier", "broadcast", "allgather", "reduce_scatter", "all_to_all", "all_to_all_v")


def expect_window(op: str, arg: str, e) -> DistributedTensorType:
    t = e.type
    if not isinstance(t, DistributedTensorType):
        raise TypeCheckError(f"{op}: argument '{arg}' must be a window-bound pld.DistributedTensor, got {describe(t)}",
                             hint="bind window memory with pld.window(pld.alloc_window_buffer(...), shape, dtype=...) "
                                  "on the host and pass it to the kernel")
    return t


def expect_signal(op: str, arg: str, e) -> DistributedTensorType:
    t = expect_window(op, arg, e)
    if t.dtype is not INT32:
        raise TypeCheckError(f"{op}: signal '{arg}' must hold INT32 cells, got {t.dtype.name}",
                             hint="allocate it with pld.alloc_window_buffer(shape, dtype=pl.INT32)")
    return t


def _offsets(op: str, arg: str, e, rank: int) -> tuple:
    offs = expect_tuple(op, arg, e)
    if len(offs) != rank:
        raise TypeCheckError(f"{op}: {arg} need one entry per dim ({rank}), got {len(offs)}")
    return offs


def _handle(args, kw):
    return ScalarType(INT64)


def _comm_ctx(args, kw):
    expect_window("pld.get_comm_ctx", "dt", args[0])
    return ScalarType(INT64)


def _rank_query(name):
    def deduce(args, kw):
        t = expect_scalar(name, "ctx", args[0])
        if isinstance(args[0], ConstInt) or t.dtype is not INT64:
            got = f"the constant {args[0].value}" if isinstance(args[0], ConstInt) else describe(t)
            raise TypeCheckError(f"{name}: argument 'ctx' must be a communication context, got {got}",
                                 hint="pass the handle of pld.get_comm_ctx(window)")
        return ScalarType(INT32)
    return deduce


def _alloc_window(args, kw):
    size = args[0]
    is_shape = hasattr(size, "elements")
    if is_shape and kw.get("dtype") is None:
        raise TypeCheckError("pld.alloc_window_buffer(shape): dtype= is required",
                             hint="pld.alloc_window_buffer([rows, cols], dtype=pl.FP32), or a byte count")
    if not is_shape:
        expect_scalar("pld.alloc_window_buffer", "size", size)
    return ScalarType(INT64)


def _window(args, kw):
    expect_scalar("pld.window", "buf", args[0])
    shape = expect_tuple("pld.window", "shape", args[1])
    if kw.get("dtype") is None:
        raise TypeCheckError("pld.window: dtype= is required", hint="pld.window(buf, [rows, cols], dtype=pl.FP32)")
    return DistributedTensorType(shape, kw["dtype"], window_buffer=args[0])


def _notify(args, kw):
    t = expect_signal("pld.system.notify", "target", args[0])
    expect_scalar("pld.system.notify", "peer", args[1])
    _offsets("pld.system.notify", "offsets", args[2], t.rank)
    expect_scalar("pld.system.notify", "value", args[3])
    return UnknownType()


def _wait(args, kw):
    t = expect_signal("pld.system.wait", "signal", args[0])
    _offsets("pld.system.wait", "offsets", args[1], t.rank)
    expect_scalar("pld.system.wait", "expected", args[2])
    return UnknownType()


def _defer_wait(args, kw):
    name = "pld.system.defer_wait"
    t = expect_signal(name, "signal", args[0])
    _offsets(name, "offsets", args[1], t.rank)
    expect_scalar(name, "expected", args[2])
    if kw.get("cmp", WaitCmp.Ge) is not WaitCmp.Ge:
        raise TypeCheckError(f"{name}: cmp must be pld.WaitCmp.Ge, got {kw['cmp'].name}",
                             hint="a deferred completion condition is a threshold (Ge): a fast peer may pass "
                                  "an exact value before the scheduler looks")
    return UnknownType()


def _remote_load(args, kw):
    name = "pld.tile.remote_load"
    t = expect_window(name, "target", args[0])
    expect_scalar(name, "peer", args[1])
    _offsets(name, "offsets", args[2], t.rank)
    shape = expect_tuple(name, "shape", args[3])
    valid = expect_tuple(name, "valid_shape", args[4]) if len(args) > 4 else shape
    if len(shape) != 2 or len(valid) != 2:
        raise TypeCheckError(f"{name}: shape and valid_shape must be 2D, got {len(shape)}D / {len(valid)}D",
                             hint="view the window as 2D first")
    return TileType(shape, t.dtype, tile_view=TileView(valid_shape=valid), memory_space=MemorySpace.Vec)


def _remote_store(args, kw):
    name = "pld.tile.remote_store"
    src = expect_tile(name, "src", args[0])
    t = expect_window(name, "target", args[1])
    expect_scalar(name, "peer", args[2])
    _offsets(name, "offsets", args[3], t.rank)
    if src.dtype is not t.dtype:
        raise TypeCheckError(f"{name}: tile dtype {src.dtype.name} differs from the window's {t.dtype.name}")
    return UnknownType()


def _tensor_remote_store(args, kw):
    name = "pld.tensor.remote_store"
    src = args[0].type
    if not isinstance(src, TensorType):
        raise TypeCheckError(f"{name}: argument 'src' must be a Tensor, got {describe(src)}",
                             hint="a tile goes through pld.tile.remote_store")
    t = expect_window(name, "target", args[1])
    expect_scalar(name, "peer", args[2])
    _offsets(name, "offsets", args[3], t.rank)
    if src.dtype is not t.dtype:
        raise TypeCheckError(f"{name}: tensor dtype {src.dtype.name} differs from the window's {t.dtype.name}")
    return UnknownType()


def _same_as_target(name, signal_index, optional_signal=False):
    def deduce(args, kw):
        t = expect_window(name, "target", args[0])
        if len(args) > signal_index:
            expect_signal(name, "signal", args[signal_index])
        elif not optional_signal:
            raise TypeCheckError(f"{name}: a signal window is required")
        return t
    return deduce


def _barrier(args, kw):
    return expect_signal("pld.tensor.barrier", "signal", args[0])


def _allgather(args, kw):
    name = "pld.tensor.allgather"
    if not isinstance(args[0].type, TensorType):
        raise TypeCheckError(f"{name}: local_data must be a tensor, got {describe(args[0].type)}")
    t = expect_window(name, "target", args[1])
    expect_signal(name, "signal", args[2])
    return t


def _all_to_all(args, kw):
    name = "pld.tensor.all_to_all"
    t = expect_window(name, "target", args[1])
    expect_signal(name, "signal", args[2])
    return t


register_op(OpDef("pld.world_size", deduce=_handle, affinity=SHARED, description="number of ranks (host only)"))
register_op(OpDef("pld.alloc_window_buffer", args=("size",), kwargs={"dtype": Kwarg((DataType, type(None)), None)},
                  deduce=_alloc_window, affinity=SHARED,
                  description="a zero-initialised symmetric window on every rank (bytes, or shape + dtype)"))
register_op(OpDef("pld.window", args=("buf", "shape"), kwargs={"dtype": Kwarg((DataType, type(None)), None)},
                  deduce=_window, affinity=SHARED, description="a typed DistributedTensor view of a window buffer"))
register_op(OpDef("pld.get_comm_ctx", args=("dt",), deduce=_comm_ctx, affinity=SHARED,
                  description="the communication context of a window-bound tensor"))
register_op(OpDef("pld.rank", args=("ctx",), deduce=_rank_query("pld.rank"), affinity=SHARED,
                  description="this rank's index in the comm domain"))
register_op(OpDef("pld.nranks", args=("ctx",), deduce=_rank_query("pld.nranks"), affinity=SHARED,
                  description="the number of ranks in the comm domain"))
register_op(OpDef("pld.system.notify", args=("target", "peer", "offsets", "value"),
                  kwargs={"op": Kwarg(NotifyOp, NotifyOp.AtomicAdd)}, deduce=_notify, affinity=SHARED,
                  self_loading=True, description="deposit a value into the peer's INT32 signal cell (atomic)"))
register_op(OpDef("pld.system.wait", args=("signal", "offsets", "expected"),
                  kwargs={"cmp": Kwarg(WaitCmp, WaitCmp.Ge)}, deduce=_wait, affinity=SHARED, effects={0: READ},
                  self_loading=True, description="block until the local signal cell compares true against expected"))
register_op(OpDef("pld.system.defer_wait", args=("signal", "offsets", "expected"),
                  kwargs={"cmp": Kwarg(WaitCmp, WaitCmp.Ge)}, deduce=_defer_wait, affinity=SHARED, effects={0: READ},
                  self_loading=True, description="the enclosing task completes (its dependents may start) only once "
                                                 "the local signal cell is >= expected; the kernel does not spin"))
register_op(OpDef("pld.tile.remote_load", args=("target", "peer", "offsets", "shape", "valid_shape"), min_args=4,
                  deduce=_remote_load, affinity=VECTOR, output_memory=MemorySpace.Vec, self_loading=True,
                  description="a peer's window slice into a local Vec tile"))
register_op(OpDef("pld.tile.remote_store", args=("src", "target", "peer", "offsets"),
                  kwargs={"atomic": Kwarg(AtomicType, AtomicType.None_)}, deduce=_remote_store, affinity=VECTOR,
                  input_memory={0: {MemorySpace.Vec}}, self_loading=True,
                  effects={1: WRITE},        # the window is written (a peer's copy of it): a reader orders after
                  description="a local Vec tile into a peer's window slice"))
register_op(OpDef("pld.tensor.remote_store", args=("src", "target", "peer", "offsets"),
                  kwargs={"atomic": Kwarg(AtomicType, AtomicType.None_)}, deduce=_tensor_remote_store, affinity=VECTOR,
                  effects={0: READ, 1: WRITE}, self_loading=True,
                  description="a local GM tensor into a peer's window slice"))
# Composite collectives: expanded by LowerCompositeOps (InCore) or LowerHostTensorCollectives (host).
register_op(OpDef("pld.tensor.barrier", args=("signal",), deduce=_barrier, affinity=SHARED, effects={0: READWRITE},
                  reuses_input=0, self_loading=True, description="self-clearing cross-rank barrier"))
register_op(OpDef("pld.tensor.allreduce", args=("target", "signal"), min_args=1,
                  kwargs={"op": Kwarg(ReduceOp, ReduceOp.Sum), "mode": Kwarg(str, "mesh"), "core_num": Kwarg(int, 1)},
                  deduce=_same_as_target("pld.tensor.allreduce", 1, optional_signal=True), affinity=SHARED,
                  effects={0: READWRITE, 1: READWRITE}, reuses_input=0, self_loading=True,
                  description="in-place allreduce of a window over all ranks"))
register_op(OpDef("pld.tensor.broadcast", args=("target", "signal"), kwargs={"root": Kwarg(int, 0)},
                  deduce=_same_as_target("pld.tensor.broadcast", 1), affinity=SHARED,
                  effects={0: READWRITE, 1: READWRITE}, reuses_input=0, self_loading=True,
                  description="the root rank's window to every rank"))
register_op(OpDef("pld.tensor.reduce_scatter", args=("target", "signal"), kwargs={"op": Kwarg(ReduceOp, ReduceOp.Sum)},
                  deduce=_same_as_target("pld.tensor.reduce_scatter", 1), affinity=SHARED,
                  effects={0: READWRITE, 1: READWRITE}, reuses_input=0, self_loading=True,
                  description="row r of the [NR, SIZE] window becomes the reduction of every rank's row r"))
register_op(OpDef("pld.tensor.allgather", args=("local_data", "target", "signal"), deduce=_allgather, affinity=SHARED,
                  effects={0: READ, 1: READWRITE, 2: READWRITE}, reuses_input=1, self_loading=True,
                  description="every rank's chunk into row `rank` of every rank's [NR, SIZE] window"))
register_op(OpDef("pld.tensor.all_to_all", args=("input", "target", "signal"), deduce=_all_to_all, affinity=SHARED,
                  effects={0: READ, 1: READWRITE, 2: READWRITE}, reuses_input=1, self_loading=True,
                  description="row d of every rank's input into row `rank` of rank d's window"))


def _stacked_index(args, kw):
    t = args[0].type
    if not isinstance(t, TensorType) or len(t.shape) < 2:
        raise TypeCheckError(f"pld.stacked_index: x[r] needs a stacked host tensor of rank >= 2, got {describe(t)}")
    expect_scalar("pld.stacked_index", "rank", args[1])
    return TensorType(t.shape[1:], t.dtype)


register_op(OpDef("pld.stacked_index", args=("x", "rank"), deduce=_stacked_index, affinity=SHARED,
                  self_loading=True, description="x[r] in a host orchestrator: rank r's shard of a stacked tensor"))


def transfer_parts(args) -> tuple:
    """(stages, region) of a pld.tile.put / get call: its one or two Vec staging tiles (two: the ping-pong
    pair TPUT / TGET alternates between) and its (dst_offsets, src_offsets, shape), or () for the whole
    tensors. The optional second stage is told from the region by its type."""
    stages = list(args[3:4])
    if len(args) > 4 and isinstance(args[4].type, TileType):
        stages.append(args[4])
    return stages, tuple(args[3 + len(stages):])


def _transfer(name: str, window_arg: int):
    """pld.tile.put / get: (dst, peer, src, stage[, stage2][, dst_offsets, src_offsets, shape]) — one side is
    a peer window."""
    def deduce(args, kw):
        dst, src = args[0].type, args[2].type
        if not isinstance(dst, TensorType) or not isinstance(src, TensorType):
            raise TypeCheckError(f"{name}: dst and src must be tensors, got {describe(dst)} / {describe(src)}")
        expect_window(name, "dst" if window_arg == 0 else "src", args[window_arg])
        expect_scalar(name, "peer", args[1])
        stages, region = transfer_parts(args)
        stage = expect_tile(name, "stage", stages[0])
        if dst.dtype is not src.dtype or stage.dtype is not src.dtype:
            raise TypeCheckError(f"{name}: dst, src and stage need one dtype, got {dst.dtype.name}, {src.dtype.name}, "
                                 f"{stage.dtype.name}")
        if len(stages) == 2 and (stages[1].type.dtype is not stage.dtype
                                 or not dims_equal(stages[1].type.shape, stage.shape)):
            raise TypeCheckError(f"{name}: the ping-pong staging tiles need one shape and dtype, got "
                                 f"{describe(stage)} and {describe(stages[1].type)}")
        if len(region) not in (0, 3):
            raise TypeCheckError(f"{name}: dst_offsets, src_offsets and shape go together, got {len(region)} of them")
        if region:
            _offsets(name, "dst_offsets", region[0], dst.rank)
            _offsets(name, "src_offsets", region[1], src.rank)
            expect_tuple(name, "shape", region[2])
        return UnknownType()
    return deduce


# The optional stage2 is present only as a tile (the ping-pong pair of pipeline=True); a 7-operand call
# is the single-stage region form (transfer_parts tells them apart).
_TRANSFER_ARGS = ("dst", "peer", "src", "stage", "stage2", "dst_offsets", "src_offsets", "shape")
register_op(OpDef("pld.tile.put", args=_TRANSFER_ARGS,
                  min_args=4, kwargs={"atomic": Kwarg(AtomicType, AtomicType.None_)}, deduce=_transfer("pld.tile.put", 0),
                  affinity=VECTOR, self_loading=True,
                  description="one-sided write of a local slice into a peer's window, staged through a Vec tile"))
register_op(OpDef("pld.tile.get", args=_TRANSFER_ARGS,
                  min_args=4, deduce=_transfer("pld.tile.get", 2), affinity=VECTOR, self_loading=True,
                  description="one-sided read of a peer's window slice into a local tensor, staged through a Vec tile"))


def _all_to_all_v(args, kw):
    name = "pld.tensor.all_to_all_v"
    t = expect_window(name, "target", args[1])
    expect_signal(name, "signal", args[2])
    counts = args[3].type
    if not isinstance(counts, TensorType) or counts.dtype is not INT32:
        raise TypeCheckError(f"{name}: send_counts must be an INT32 tensor [NR, 1], got {describe(counts)}")
    expect_signal(name, "recv_counts", args[4])
    return t


register_op(OpDef("pld.tensor.all_to_all_v", args=("input", "target", "signal", "send_counts", "recv_counts"),
                  deduce=_all_to_all_v, affinity=SHARED, effects={0: READ, 1: READWRITE, 2: READWRITE, 3: READ,
                                                                   4: READWRITE},
                  reuses_input=1, self_loading=True,
                  description="variable-row personalised exchange (MPI_Alltoallv): rows [d*M, d*M + send_counts[d]) "
                              "of my input land at rows [me*M, ...) of rank d's window"))


def _tensor_transfer(name: str, window_arg: int):
    """pld.tensor.put / get: (dst, peer, src[, dst_offsets, src_offsets, shape]); the staging is internal."""
    def deduce(args, kw):
        if len(args) not in (3, 6):
            raise TypeCheckError(f"{name}: takes (dst, peer, src) or (dst, peer, src, dst_offsets, src_offsets, "
                                 f"shape), got {len(args)} positional arguments",
                                 hint="dst_offsets, src_offsets and shape go together")
        dst, src = args[0].type, args[2].type
        if not isinstance(dst, TensorType) or not isinstance(src, TensorType):
            raise TypeCheckError(f"{name}: dst and src must be tensors, got {describe(dst)} / {describe(src)}")
        expect_window(name, "dst" if window_arg == 0 else "src", args[window_arg])
        expect_scalar(name, "peer", args[1])
        if dst.dtype is not src.dtype:
            raise TypeCheckError(f"{name}: dst and src need one dtype, got {dst.dtype.name} / {src.dtype.name}")
        if len(args) == 6:
            _offsets(name, "dst_offsets", args[3], dst.rank)
            _offsets(name, "src_offsets", args[4], src.rank)
            expect_tuple(name, "shape", args[5])
        rows, cols = kw.get("chunk_rows", 0), kw.get("chunk_cols", 0)
        if rows < 0 or cols < 0:
            raise TypeCheckError(f"{name}: chunk_rows / chunk_cols must be >= 0 (0 = the whole extent), "
                                 f"got {rows} / {cols}")
        if kw.get("pipeline") and not (rows > 0 and cols > 0):
            raise TypeCheckError(f"{name}: pipeline=True needs chunk_rows and chunk_cols > 0",
                                 hint="the two ping-pong staging tiles are [chunk_rows, chunk_cols]")
        return UnknownType()
    return deduce


_CHUNK_KWARGS = {"chunk_rows": Kwarg(int, 0), "chunk_cols": Kwarg(int, 0), "pipeline": Kwarg(bool, False)}
# Tensor-level one-sided copies: LowerCompositeOps turns each into Vec staging tile(s) + chunked pld.tile.put / get.
register_op(OpDef("pld.tensor.put", args=("dst", "peer", "src", "dst_offsets", "src_offsets", "shape"), min_args=3,
                  kwargs={"atomic": Kwarg(AtomicType, AtomicType.None_), **_CHUNK_KWARGS},
                  deduce=_tensor_transfer("pld.tensor.put", 0), affinity=VECTOR, effects={0: WRITE, 2: READ},
                  self_loading=True, description="one-sided write of a local tensor region into a peer's window"))
register_op(OpDef("pld.tensor.get", args=("dst", "peer", "src", "dst_offsets", "src_offsets", "shape"), min_args=3,
                  kwargs=dict(_CHUNK_KWARGS), deduce=_tensor_transfer("pld.tensor.get", 2), affinity=VECTOR,
                  effects={0: WRITE, 2: READ}, self_loading=True,
                  description="one-sided read of a peer's window region into a local tensor"))
