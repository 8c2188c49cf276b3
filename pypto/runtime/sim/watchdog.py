"""The livelock watchdog: a run that keeps going past its time budget stops with a SimulationError.

The deadlock detector sees agents that can never run again; it cannot see a loop that never ends
(`while True: pass` in a kernel or an orchestrator, a loop bound that runs away). Generated code
calls `tick(span)` at the top of every loop body, and the scheduler loop checks the same deadline
between steps, so both a spinning agent and agents that keep yielding to each other are stopped.
The budget is `RunConfig(sim_watchdog_seconds=...)` (wall time, generous by default).
"""

from __future__ import annotations

import time
from typing import Optional

from pypto.errors import SimulationError

CHECK_EVERY = 1024                # ticks between two reads of the clock


class WatchdogExpired(SimulationError):
    """The run outlived its budget; `span` is the loop the running agent was in."""


class Watchdog:
    def __init__(self, seconds: float):
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds

    def expired(self) -> bool:
        return time.monotonic() > self.deadline


_current: Optional[Watchdog] = None
_ticks = 0


def tick(span) -> None:
    """One loop iteration of generated code: raise WatchdogExpired at `span` once the budget is spent."""
    global _ticks
    _ticks += 1
    if _ticks % CHECK_EVERY == 0 and _current is not None and _current.expired():
        raise WatchdogExpired("loop still running when the watchdog expired", span)


class watching:
    """`with watching(seconds) as dog:` — the watchdog of one run (runs may nest: the outer one is restored)."""

    def __init__(self, seconds: Optional[float]):
        self.dog = Watchdog(seconds) if seconds else None

    def __enter__(self) -> Optional[Watchdog]:
        global _current
        self.outer, _current = _current, self.dog or _current
        return _current

    def __exit__(self, *exc) -> None:
        global _current
        _current = self.outer
