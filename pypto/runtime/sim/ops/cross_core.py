"""Simulator semantics of the cross-core pipe ops (tpush / tpop / tfree, initialize_pipe, buffers).

Each cluster holds two rings per pipe id (pypto/runtime/sim/pipes.py): C2V, filled by the AIC
and drained by the AIV lane(s), and V2C the other way. `initialize_pipe` creates them (the
first side to run creates, the other checks the geometry); the AIV side also says how many
lanes take part, which fixes how many lanes must free a C2V slot and push a part of a V2C slot.
On a2a3 the rings live in GM: initialize_pipe binds each ring's slots to the bytes of the kernel's
`__gm_pipe_buffer` (InjectGMPipeBuffer) at the recorded offset inside the block's region, so pushes
write and pops read that buffer (a5: the ring's own array stands for the consumer's SRAM).
A pushed slot carries the whole tile (its physical box, valid region and dtype), so a pop can
check the layout contract (same dtype, the expected box) and a split pop can take its lane's
half: lane L of split code 1 / 3 (rows) or 2 / 4 (columns) owns rows / columns
[L*S, L*S + eL) with eL = clamp(valid - L*S, 0, S) and S the pair's lane_stride (a rebalanced
ragged boundary) or else the lane tile's extent; a split V2C pop places lane L's part at L*S.

    pl.system.aic_initialize_pipe(imp, v2c, dir_mask=3, slot_size=8192, slot_num=2)
    pl.tile.tpush_to_aiv(acc, split=0)        # blocks while both slots are in use
"""

from __future__ import annotations

import numpy as np

from pypto.errors import SimulationError
from pypto.runtime.sim.blocking import may_block
from pypto.runtime.sim.pipes import find_ring, get_ring

C2V, V2C = "c2v", "v2c"
GM_PIPE_BUFFER = "__gm_pipe_buffer"


def _axis(split: int):
    return None if not split else (0 if split in (1, 3) else 1)


def _init(ctx, dir_mask, slot_size, slot_num, id, aiv: bool):
    if ctx.cluster is None:
        raise SimulationError("initialize_pipe outside a cluster launch (call the kernel through its Group)")
    lanes = max(1, int(getattr(ctx, "subblock_num", 1))) if aiv else None
    for bit, direction in ((1, C2V), (2, V2C)):
        if not dir_mask & bit:
            continue
        region = _gm_ring(ctx, direction, id or 0, (slot_num or 2) * slot_size)
        ring = get_ring(ctx, (direction, id or 0), slot_num or 2, slot_size)
        if region is not None:
            ring.bind_gm(region)
        if lanes is not None:
            ring.set_lanes(lanes, 1) if direction == C2V else ring.set_lanes(1, lanes)
    return None


def _gm_ring(ctx, direction: str, pipe: int, nbytes: int):
    """a2a3: the bytes of `__gm_pipe_buffer` that hold this ring (None elsewhere / without a buffer).

    The buffer holds one region per block of the launch (an Spmd launch of core_num = n gets n
    regions; a plain Group call one): block b's region starts at b x (buffer bytes / block_num),
    and inside it the ring starts at the offset InjectGMPipeBuffer recorded
    (attrs["gm_pipe_offsets"]). A region too small for the ring is an error naming it."""
    agent = getattr(ctx, "agent", None)
    kernel = agent.code.func if agent is not None else None
    offsets = kernel.attrs.get("gm_pipe_offsets") if kernel is not None else None
    task = getattr(ctx, "task", None)
    if not offsets or task is None or ctx.platform.name != "a2a3":
        return None
    owner = task.code.func
    index = next((i for i, p in enumerate(owner.params) if p.name_hint == GM_PIPE_BUFFER), None)
    if index is None or index >= len(task.args):
        return None
    buffer = task.args[index]
    start = offsets.get(f"{direction}@{pipe}")
    blocks = max(1, int(getattr(ctx, "block_num", 1) or 1))
    have = int(getattr(buffer, "nbytes", 0)) // blocks
    if start is None or start + nbytes > have:
        where = "has no offset recorded" if start is None else f"needs bytes [{start}, {start + nbytes})"
        per = f" per block ({blocks} blocks)" if blocks > 1 else ""
        raise SimulationError(f"{direction.upper()} ring of pipe {pipe} in kernel {kernel.name} {where} of "
                              f"{GM_PIPE_BUFFER}, which holds {have} bytes{per}",
                              hint="the orchestration's tensor.create for the pipe buffer must hold every ring "
                                   "of every block (InjectGMPipeBuffer sizes it: core_num x slot_num x slot_size "
                                   "per ring)")
    if not isinstance(buffer, np.ndarray) or not buffer.flags.c_contiguous:
        raise SimulationError(f"{GM_PIPE_BUFFER} of kernel {kernel.name} is not a contiguous GM tensor",
                              hint="pass the tensor the orchestration created, not a strided view of another")
    base = int(getattr(ctx, "block_idx", 0) or 0) * have + start
    return buffer.reshape(-1).view(np.uint8)[base:base + nbytes]


def aic_initialize_pipe(ctx, out, *bufs, dir_mask=1, slot_size=0, slot_num=None, local_slot_num=None, id=None, **kw):
    return _init(ctx, dir_mask, slot_size, slot_num, id, aiv=False)


def aiv_initialize_pipe(ctx, out, *bufs, dir_mask=1, slot_size=0, slot_num=None, local_slot_num=None, id=None, **kw):
    return _init(ctx, dir_mask, slot_size, slot_num, id, aiv=True)


def reserve_buffer(ctx, out, name=None, size=0, base=-1, **kw):
    return max(int(base), 0)


def import_peer_buffer(ctx, out, name=None, peer_func=None, **kw):
    return 0


def _ring(ctx, direction: str, id, op: str):
    ring = find_ring(ctx, (direction, id or 0))
    if ring is None:
        raise SimulationError(f"{op}: pipe {id or 0} ({direction.upper()}) is not initialized on this cluster",
                              hint="call pl.system.aic_initialize_pipe / aiv_initialize_pipe first")
    return ring


def _replay_lane(ctx) -> bool:
    """Lane 1 of a dual-dispatched (a2a3, no split) AIV kernel pops empty tiles: it only keeps the handshake.
    A pl.split_aiv(NONE) kernel is dual-dispatched too, but both its lanes do real work."""
    agent = getattr(ctx, "agent", None)
    attrs = agent.code.func.attrs if agent is not None else {}
    return bool(_lane(ctx) == 1 and attrs.get("dual_aiv_dispatch") and not attrs.get("split_aiv"))


def _lane(ctx) -> int:
    return int(getattr(ctx, "subblock_idx", 0) or 0)


def _named(blk, op: str):
    """A ring's Block names the op the user wrote (the ring only knows push / pop)."""
    if blk is not None:
        blk.what = op
    return blk


def _payload(tile) -> tuple:
    return np.array(tile.data, copy=True), tuple(tile.valid)


@may_block
def tpush_to_aiv(ctx, out, tile, split=0, id=None, lane_stride=None, **kw):
    ring = _ring(ctx, C2V, id, "tile.tpush_to_aiv")
    data, valid = _payload(tile)
    return _named(ring.push_part(data, 0, meta=(valid, split)), "tile.tpush_to_aiv")


@may_block
def tpush_to_aic(ctx, out, tile, split=0, id=None, lane_stride=None, **kw):
    ring = _ring(ctx, V2C, id, "tile.tpush_to_aic")
    data, valid = _payload(tile)
    if _replay_lane(ctx):                        # the handshake only: an empty part
        data, valid = data.reshape(-1)[:0], (0,) * len(valid)
    lane = _lane(ctx) if ring.producers > 1 else 0
    return _named(ring.push_part(data, lane, meta=(valid, split)), "tile.tpush_to_aic")


def _contract(op, out, got: np.ndarray, want_shape) -> None:
    if got.dtype != out.data.dtype or tuple(got.shape) != tuple(want_shape):
        raise SimulationError(f"{op}: layout contract broken: the slot holds a {got.dtype} tile of box "
                              f"{tuple(got.shape)}, the pop expects {out.data.dtype} {tuple(want_shape)}",
                              hint="push and pop must agree on shape, dtype and split")


@may_block
def tpop_from_aic(ctx, out, split=0, id=None, lane_stride=None, **kw):
    ring = _ring(ctx, C2V, id, "tile.tpop_from_aic")
    lane = _lane(ctx) if ring.consumers > 1 else 0
    got = ring.pop(lane)
    if not isinstance(got, np.ndarray):
        return _named(got, "tile.tpop_from_aic")
    slot = ring.held_slot(lane)
    full = ring.parts[slot][0]
    valid, _ = ring.meta[slot]
    axis = _axis(split)
    if axis is None:
        _contract("tile.tpop_from_aic", out, full, out.data.shape)
        if _replay_lane(ctx):                    # no rows, the columns of the type's [rows x (1 - lane), N]
            out.valid = (0, *valid[1:])
            return out
        out.data[...] = full
        out.valid = valid
        return out
    stride = int(lane_stride) if lane_stride else out.data.shape[axis]
    want = list(full.shape)
    want[axis] = out.data.shape[axis]
    if full.dtype != out.data.dtype or full.shape[1 - axis] != out.data.shape[1 - axis] or \
            out.data.shape[axis] * 2 < full.shape[axis]:
        _contract("tile.tpop_from_aic", out, full, want)
    ext = min(max(valid[axis] - lane * stride, 0), out.data.shape[axis])
    src = np.take(full, range(lane * stride, lane * stride + ext), axis=axis)
    region = [slice(None)] * full.ndim
    region[axis] = slice(0, ext)
    out.data[tuple(region)] = src
    lane_valid = list(valid)
    lane_valid[axis] = ext
    out.valid = tuple(lane_valid)
    return out


@may_block
def tpop_from_aiv(ctx, out, split=0, id=None, lane_stride=None, **kw):
    ring = _ring(ctx, V2C, id, "tile.tpop_from_aiv")
    got = ring.pop(0)
    if not isinstance(got, np.ndarray):
        return _named(got, "tile.tpop_from_aiv")
    slot = ring.held_slot(0)
    parts = ring.parts[slot]
    valid, _ = ring.meta[slot]
    axis = _axis(split)
    if axis is None:                             # one part (lane 1 of a replayed dual dispatch pushes nothing)
        first = parts[0]
        _contract("tile.tpop_from_aiv", out, first, out.data.shape)
        out.data[...] = first
        out.valid = valid
        return out
    stride = int(lane_stride) if lane_stride else parts[0].shape[axis]
    for arr in parts.values():
        if arr.dtype != out.data.dtype or arr.shape[1 - axis] != out.data.shape[1 - axis] or \
                arr.shape[axis] * 2 < out.data.shape[axis]:
            _contract("tile.tpop_from_aiv", out, arr, out.data.shape)
    metas = ring.part_meta[slot]
    total = list(valid)
    total[axis] = 0
    for lane in sorted(parts):
        ext = int(metas[lane][0][axis])
        take = [slice(None)] * out.data.ndim
        take[axis] = slice(0, ext)
        put = [slice(None)] * out.data.ndim
        put[axis] = slice(lane * stride, lane * stride + ext)
        out.data[tuple(put)] = parts[lane][tuple(take)]
        if ext:
            total[axis] = lane * stride + ext
    out.valid = tuple(total)
    return out


def _free(direction, op):
    def free(ctx, out, tile, split=0, id=None, **kw):
        ring = _ring(ctx, direction, id, op)
        lane = _lane(ctx) if direction == C2V and ring.consumers > 1 else 0
        ring.free(lane)
        return None
    return free


def table() -> dict:
    return {"tile.tpush_to_aiv": tpush_to_aiv, "tile.tpush_to_aic": tpush_to_aic,
            "tile.tpop_from_aic": tpop_from_aic, "tile.tpop_from_aiv": tpop_from_aiv,
            "system.tfree_to_aic": _free(C2V, "system.tfree_to_aic"),
            "system.tfree_to_aiv": _free(V2C, "system.tfree_to_aiv"),
            "system.aic_initialize_pipe": aic_initialize_pipe, "system.aiv_initialize_pipe": aiv_initialize_pipe,
            "system.reserve_buffer": reserve_buffer, "system.import_peer_buffer": import_peer_buffer}
