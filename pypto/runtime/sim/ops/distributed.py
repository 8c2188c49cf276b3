"""Simulator semantics of the pld.* kernel ops (mirrors pypto/ir/ops/distributed.py).

The running Run knows its World (`ctx.run.world`, set by pypto.runtime.sim.world); a
DistributedTensor operand is a numpy view of one rank's window, so the peer's copy is the
same bytes of the peer's buffer. Signal cells are INT32: `notify` adds or sets atomically
(the scheduler is cooperative, nothing interleaves inside an op); `wait` returns a Block
the scheduler retries until the local cell compares true. Every remote access is
bounds-checked against the window and the world size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pypto.errors import SimulationError, TypeCheckError
from pypto.ir.comm_enums import NotifyOp, WaitCmp
from pypto.ir.enums import AtomicType
from pypto.runtime.sim.blocking import Block, may_block
from pypto.runtime.sim.ops.numeric import write_valid
from pypto.runtime.sim.values import TileValue


def _not_a_number(self, *other):
    raise TypeCheckError("a communication context (pld.get_comm_ctx) is a handle, not a number",
                         hint="read its rank with pld.rank(ctx) and its size with pld.nranks(ctx)")


@dataclass(frozen=True)
class CommCtx:
    """The value of pld.get_comm_ctx in the model; arithmetic on it is the user's mistake (a pointer on the chip)."""
    rank: int
    nranks: int

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _not_a_number
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __neg__ = __lt__ = __le__ = __gt__ = __ge__ = _not_a_number
    __int__ = __float__ = __index__ = _not_a_number


def _comm_ctx(value) -> CommCtx:
    if not isinstance(value, CommCtx):
        raise TypeCheckError(f"expects a communication context, got {type(value).__name__} {value!r}",
                             hint="pass the handle of pld.get_comm_ctx(window)")
    return value


def _world(ctx, what: str):
    world = getattr(ctx.run, "world", None)
    if world is None:
        raise SimulationError(f"{what} needs a distributed run (a program with a HOST orchestrator compiled with "
                              "distributed_config=DistributedConfig(device_ids=[...]))")
    return world


def _cell(arr: np.ndarray, offsets: tuple, what: str) -> tuple:
    idx = tuple(int(o) for o in offsets)
    if len(idx) != arr.ndim or any(not 0 <= o < n for o, n in zip(idx, arr.shape)):
        raise SimulationError(f"{what}: signal cell {list(idx)} is outside the signal window {list(arr.shape)}")
    return idx


def _region(arr: np.ndarray, offsets: tuple, extents: tuple, what: str) -> tuple:
    for d, (o, e, n) in enumerate(zip(offsets, extents, arr.shape)):
        if o < 0 or o + e > n:
            raise SimulationError(f"{what}: dim {d} window [{o}, {o + e}) is outside the window extent {n}",
                                  hint="remote offsets and shapes must stay inside the peer's window")
    return tuple(slice(int(o), int(o) + int(e)) for o, e in zip(offsets, extents))


def get_comm_ctx(ctx, out, dt):
    world = _world(ctx, "pld.get_comm_ctx")
    return CommCtx(world.rank_of(dt, "pld.get_comm_ctx"), world.domain_size(dt, "pld.get_comm_ctx"))


def notify(ctx, out, target, peer, offsets, value, op=NotifyOp.AtomicAdd):
    what = "pld.system.notify"
    remote = _world(ctx, what).peer_view(target, peer, what)
    idx = _cell(remote, offsets, what)
    if op is NotifyOp.Set:
        remote[idx] = np.int32(int(value))
    else:
        remote[idx] = np.int32(int(remote[idx]) + int(value))
    return None


@may_block
def wait(ctx, out, signal, offsets, expected, cmp=WaitCmp.Ge):
    what = "pld.system.wait"
    idx = _cell(signal, offsets, what)
    expected = int(expected)
    if cmp is WaitCmp.Eq:
        ready = lambda: int(signal[idx]) == expected    # noqa: E731
    else:
        ready = lambda: int(signal[idx]) >= expected    # noqa: E731
    if ready():
        return None
    world = getattr(ctx.run, "world", None)
    rank = world.rank_of(signal, what) if world is not None else "?"
    sym = "==" if cmp is WaitCmp.Eq else ">="
    return Block(ready, what, _CellState(f"rank {rank} signal cell {list(idx)}", signal, idx, f"{sym} {expected}"))


def defer_wait(ctx, out, signal, offsets, expected, cmp=WaitCmp.Ge):
    """Register a completion condition on the running task: the kernel goes on, the task's dependents
    wait (the scheduler completes the task once every registered cell is >= its threshold)."""
    what = "pld.system.defer_wait"
    idx = _cell(signal, offsets, what)
    expected = int(expected)
    task = getattr(ctx, "task", None)
    if task is None:
        raise SimulationError(f"{what}: only a kernel task can defer its completion")
    world = getattr(ctx.run, "world", None)
    rank = world.rank_of(signal, what) if world is not None else "?"
    state = _CellState(f"rank {rank} signal cell {list(idx)}", signal, idx, f">= {expected}")
    ready = lambda: int(signal[idx]) >= expected    # noqa: E731
    task.deferred = (task.deferred or []) + [Block(ready, what, state)]
    return None


class _CellState:
    """A Block detail that reads the cell when the deadlock is reported (not when the wait began)."""

    def __init__(self, name, signal, idx, want):
        self.name, self.signal, self.idx, self.want = name, signal, idx, want

    def __str__(self) -> str:
        return f"{self.name} = {int(self.signal[self.idx])}, waits for {self.want}"


def remote_load(ctx, out, target, peer, offsets, shape, valid_shape=None):
    what = "pld.tile.remote_load"
    remote = _world(ctx, what).peer_view(target, peer, what)
    valid = tuple(int(v) for v in (valid_shape if valid_shape is not None else shape))
    write_valid(out, remote[_region(remote, offsets, valid, what)])
    return out


def remote_store(ctx, out, src, target, peer, offsets, atomic=AtomicType.None_):
    what = "pld.tile.remote_store"
    remote = _world(ctx, what).peer_view(target, peer, what)
    region = _region(remote, offsets, src.valid, what)
    data = src.view().astype(remote.dtype, copy=False)
    if atomic is AtomicType.Add:
        remote[region] += data
    else:
        remote[region] = data
    return None


def tensor_remote_store(ctx, out, src, target, peer, offsets, atomic=AtomicType.None_):
    what = "pld.tensor.remote_store"
    remote = _world(ctx, what).peer_view(target, peer, what)
    region = _region(remote, offsets, src.shape, what)
    data = np.asarray(src).astype(remote.dtype, copy=False)
    if atomic is AtomicType.Add:
        remote[region] += data
    else:
        remote[region] = data
    return None


def _transfer_regions(dst, src, dst_offsets, src_offsets, shape, what):
    if shape is None:
        shape = src.shape
    dst_offsets = dst_offsets if dst_offsets is not None else (0,) * dst.ndim
    src_offsets = src_offsets if src_offsets is not None else (0,) * src.ndim
    if not dst.ndim == src.ndim == len(shape) == len(dst_offsets) == len(src_offsets):
        raise SimulationError(f"{what}: the destination {list(dst.shape)} and the source {list(src.shape)} "
                              f"(a region of {list(shape)}) do not have the same rank",
                              hint="declare the window and the tensor with shapes of one rank")
    return _region(dst, dst_offsets, shape, what), _region(src, src_offsets, shape, what)


def _region_args(staged: tuple) -> tuple:
    """The (dst_offsets, src_offsets, shape) after the one or two staging tiles (ping-pong) of a transfer."""
    region = tuple(a for a in staged if not isinstance(a, TileValue))
    return region if region else (None, None, None)


def put(ctx, out, dst, peer, src, *staged, atomic=AtomicType.None_):
    """Staged one-sided write: the transfer walks the stage tile's width, as TPUT slides over it."""
    what = "pld.tile.put"
    remote = _world(ctx, what).peer_view(dst, peer, what)
    d, s = _transfer_regions(remote, src, *_region_args(staged), what)
    data = src[s]
    if atomic is AtomicType.Add:
        remote[d] += data.astype(remote.dtype, copy=False)
    else:
        remote[d] = data
    return None


def get(ctx, out, dst, peer, src, *staged):
    what = "pld.tile.get"
    remote = _world(ctx, what).peer_view(src, peer, what)
    d, s = _transfer_regions(dst, remote, *_region_args(staged), what)
    dst[d] = remote[s]
    return None


def table() -> dict:
    return {"pld.get_comm_ctx": get_comm_ctx,
            "pld.rank": lambda ctx, out, c: _comm_ctx(c).rank,
            "pld.nranks": lambda ctx, out, c: _comm_ctx(c).nranks,
            "pld.system.notify": notify,
            "pld.system.wait": wait,
            "pld.system.defer_wait": defer_wait,
            "pld.tile.remote_load": remote_load,
            "pld.tile.remote_store": remote_store, "pld.tensor.remote_store": tensor_remote_store,
            "pld.tile.put": put,
            "pld.tile.get": get}
