"""What a blocked agent waits for.

A simulator op that cannot proceed yet (a `tpop` on an empty ring, a `wait` on a signal, the
host reading a tensor a running task still writes) returns a `Block`. The generated code
yields it to the scheduler and retries the op once `ready()` holds; when no agent can run,
the scheduler reports every Block's `what`, `detail` and source span in a DeadlockError.

    def tpop(ctx, out, pipe):
        ring = ...
        if ring.empty():
            return Block(lambda: not ring.empty(), "tile.tpop_from_aic", detail=f"ring {pipe} empty")
"""

from __future__ import annotations

from typing import Callable, Optional


class Block:
    __slots__ = ("ready", "what", "detail", "span")

    def __init__(self, ready: Callable[[], bool], what: str, detail: str = "", span=None):
        self.ready = ready
        self.what = what
        self.detail = detail
        self.span = span

    def at(self, span) -> "Block":
        """Attach the span of the statement that blocked (the generated code knows it)."""
        if self.span is None:
            self.span = span
        return self

    def describe(self) -> str:
        where = f" at {self.span}" if self.span is not None and self.span.is_known() else ""
        detail = f" ({self.detail})" if self.detail else ""
        return f"blocked on {self.what}{where}{detail}"


def may_block(fn):
    """Mark a SIM_OPS function that can return a Block (the code generator emits a retry loop)."""
    fn.may_block = True
    return fn


def is_blocking_op(fn) -> bool:
    return bool(getattr(fn, "may_block", False))
