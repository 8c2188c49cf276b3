"""Simulator semantics of prefetch.* (mirrors pypto/ir/ops/prefetch.py): the simulator has no L2, every
GM read already sees the latest bytes, so prefetching has no effect; handles are small integers."""

from __future__ import annotations


def table() -> dict:
    return {"prefetch.make_context": lambda ctx, out, **kw: 0,
            "prefetch.async_prefetch": lambda ctx, out, src, pctx, **kw: 0,
            "prefetch.session": lambda ctx, out, pctx, **kw: 0,
            "prefetch.wait": lambda ctx, out, event, session, **kw: None}
