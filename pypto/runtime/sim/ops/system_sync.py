"""Simulator semantics of the system.* synchronisation, cache and geometry ops (mirrors
pypto/ir/ops/system_sync.py).

- sync_set / sync_wait: a counting flag per (cluster, event id, pipe): set adds one, wait blocks
  until it is positive and takes one (a wait with no matching set deadlocks, as on hardware);
  sync_src / sync_dst are the same within one core, per (set pipe, wait pipe, flag). A core runs
  its ops in order here, so a set before its wait is all the ordering they add.
- syncall soft: the GM workspace's first word counts arrivals; a participant arriving as the
  n-th waits until the count reaches the end of its round (ceil(n / used) * used). The hard
  FFTS barrier needs the whole device and is not modelled: it raises UnsupportedError.
- set_ffts / cacheinvalid: the simulator has no FFTS registers and no data cache (every GM read
  sees the latest write), so they have no effect.
- available_*_count: the platform's geometry.
"""

from __future__ import annotations

from pypto.errors import SimulationError, UnsupportedError
from pypto.runtime.sim.blocking import Block, may_block


def _run_state(ctx, name: str) -> dict:
    """Per-run bookkeeping of these ops (the flags, each participant's barrier round)."""
    state = getattr(ctx.run, name, None)
    if state is None:
        state = {}
        setattr(ctx.run, name, state)
    return state


def _flags(ctx) -> dict:
    return _run_state(ctx, "sync_flags")


def _flag_key(ctx, event_id, pipe) -> tuple:
    owner = id(ctx.cluster) if getattr(ctx, "cluster", None) is not None else getattr(ctx, "block_idx", 0)
    return owner, int(event_id), pipe


def sync_set(ctx, out, event_id, pipe=None, ffts_mode=None, core_type=None, **kwargs):
    flags = _flags(ctx)
    key = _flag_key(ctx, event_id, pipe)
    flags[key] = flags.get(key, 0) + 1
    return None


@may_block
def sync_wait(ctx, out, event_id, pipe=None, core_type=None, **kwargs):
    flags = _flags(ctx)
    key = _flag_key(ctx, event_id, pipe)
    if flags.get(key, 0) > 0:
        flags[key] -= 1
        return None
    return Block(lambda: flags.get(key, 0) > 0, "system.sync_wait", detail=f"event {int(event_id)} on {pipe}")


def sync_src(ctx, out, set_pipe=None, wait_pipe=None, event_id=0, **kwargs):
    flags = _flags(ctx)
    key = (id(ctx), set_pipe, wait_pipe, int(event_id))
    flags[key] = flags.get(key, 0) + 1
    return None


@may_block
def sync_dst(ctx, out, set_pipe=None, wait_pipe=None, event_id=0, **kwargs):
    flags = _flags(ctx)
    key = (id(ctx), set_pipe, wait_pipe, int(event_id))
    if flags.get(key, 0) > 0:
        flags[key] -= 1
        return None
    return Block(lambda: flags.get(key, 0) > 0, "system.sync_dst",
                 detail=f"flag {int(event_id)} {set_pipe} -> {wait_pipe} never set")


@may_block
def syncall(ctx, out, gm_workspace=None, used_cores=None, core_type="mix", mode="hard", **kwargs):
    if mode == "hard":
        raise UnsupportedError("system.syncall(mode='hard') is not simulated: the FFTS barrier spans every core "
                               "of the device", hint="use mode='soft' with a zeroed INT32 gm_workspace and used_cores")
    counter = gm_workspace.reshape(-1)
    used = int(used_cores)
    if used <= 0:
        raise SimulationError("system.syncall: used_cores must be positive in the simulator (0 asks the device "
                              "launch registers, which the simulator does not have)")
    rounds = _run_state(ctx, "syncall_rounds")
    target = rounds.get(id(ctx))
    if target is None:                      # first call of this barrier by this participant: arrive
        counter[0] += 1
        target = rounds[id(ctx)] = -(-int(counter[0]) // used) * used
    if int(counter[0]) >= target:
        del rounds[id(ctx)]
        return None
    return Block(lambda: int(counter[0]) >= target, "system.syncall", detail=f"{int(counter[0])} of {target} arrived")


def _no_effect(ctx, out, *args, **kwargs):
    return None


def table() -> dict:
    return {"system.sync_set": sync_set, "system.sync_wait": sync_wait, "system.syncall": syncall,
            "system.sync_src": sync_src, "system.sync_dst": sync_dst,
            "system.set_ffts": _no_effect, "system.cacheinvalid": _no_effect,
            "system.available_aiv_count": lambda ctx, out, **kw: 2 * int(ctx.platform.clusters),
            "system.available_cluster_count": lambda ctx, out, **kw: int(ctx.platform.clusters)}
