"""Simulator semantics of the system.* barriers and the core-identity queries.

Each simulated core runs its ops in program order, one at a time, so every pipeline barrier
and GM fence is already satisfied: they are no-ops here (their cross-core cousins, pipes and
signals, block through the scheduler instead).
"""

from __future__ import annotations


def _no_op(ctx, out, **kwargs):
    return None


def table() -> dict:
    ops = {f"system.{n}": _no_op for n in ("bar_v", "bar_m", "bar_all", "fence")}
    ops["tile.get_block_idx"] = lambda ctx, out, **kw: int(getattr(ctx, "block_idx", 0))
    ops["tile.get_block_num"] = lambda ctx, out, **kw: int(getattr(ctx, "block_num", 1))
    ops["tile.get_subblock_idx"] = lambda ctx, out, **kw: int(getattr(ctx, "subblock_idx", 0))
    return ops
