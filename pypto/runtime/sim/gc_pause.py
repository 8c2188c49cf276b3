"""Automatic garbage collection paused while a simulated run steps its agents.

A run keeps every Task, access entry and race record alive until it ends, so the collector's
automatic passes over them find nothing to free; once the run has made enough objects they
also trigger full collections, each a walk over the whole heap (the compiled programs' IR
included). On a 10,000-task run that was ~40 % of the run's time. While the scheduler loop
runs, automatic collection is off; the loop calls `collect_if_due` once per step, which runs
a young-generation collection after YOUNG_LIMIT new objects, so cyclic garbage a long run
makes (agents and their generators) is still freed and memory stays bounded. The previous
state is restored when the run ends, also when it fails.

    with collections_paused():
        while ...:
            collect_if_due()
"""

from __future__ import annotations

import gc

YOUNG_LIMIT = 200_000        # objects allocated (net) since the last collection before the loop collects


class collections_paused:
    """`with collections_paused():` — no automatic collection inside (nested uses and threads keep the
    outermost state: whoever found collection enabled enables it again)."""
    __slots__ = ("was_enabled",)

    def __enter__(self) -> None:
        self.was_enabled = gc.isenabled()
        if self.was_enabled:
            gc.disable()

    def __exit__(self, *exc) -> None:
        if self.was_enabled:
            gc.enable()


def collect_if_due() -> None:
    """A young-generation collection once YOUNG_LIMIT objects were allocated since the last one."""
    if gc.get_count()[0] > YOUNG_LIMIT:
        gc.collect(0)
