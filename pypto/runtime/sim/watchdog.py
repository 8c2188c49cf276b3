"""The livelock watchdog: a run that keeps going past its time budget stops with a SimulationError.

The deadlock detector sees agents that can never run again; it cannot see a loop that never ends
(`while True: pass` in a kernel or an orchestrator, a loop bound that runs away). Generated code
calls `tick(span)` at the top of every loop body, and the scheduler loop checks the same deadline
between steps, so both a spinning agent and agents that keep yielding to each other are stopped.
Plain Python run inside a call (a HOST SubWorker's body) has no ticks: `watching_python()` traces
its lines instead, for as long as it runs. The budget is `RunConfig(sim_watchdog_seconds=...)` (wall
time, generous by default).
"""

from __future__ import annotations

import sys
import time
from typing import Optional

from pypto.errors import SimulationError

CHECK_EVERY = 1024                # ticks between two reads of the clock


class WatchdogExpired(SimulationError):
    """The run outlived its budget; `span` is the loop the running agent was in."""


class Watchdog:
    """One run's budget; `with Watchdog(seconds):` puts it in force (runs may nest: the outer one is restored)."""
    __slots__ = ("seconds", "deadline", "outer")

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds

    def expired(self) -> bool:
        return time.monotonic() > self.deadline

    def __enter__(self) -> "Watchdog":
        global _current
        self.outer, _current = _current, self
        return self

    def __exit__(self, *exc) -> None:
        global _current
        _current = self.outer


_current: Optional[Watchdog] = None
_ticks = 0


def tick(span) -> None:
    """One loop iteration of generated code: raise WatchdogExpired at `span` once the budget is spent."""
    global _ticks
    _ticks += 1
    if _ticks % CHECK_EVERY == 0 and _current is not None and _current.expired():
        raise WatchdogExpired("loop still running when the watchdog expired", span)


def ticks(span, n: int) -> None:
    """`n` loop iterations at once (a fused loop): the budget is read as often as `n` single ticks would."""
    global _ticks
    before = _ticks
    _ticks += n
    if _ticks // CHECK_EVERY != before // CHECK_EVERY and _current is not None and _current.expired():
        raise WatchdogExpired("loop still running when the watchdog expired", span)


def current_watchdog() -> Optional[Watchdog]:
    """The watchdog in force (the innermost `watching` with a budget), None without one."""
    return _current


class _Unchanged:
    """`watching(None)`: the watchdog in force stays (one shared object: entering it changes nothing)."""
    __slots__ = ()

    def __enter__(self) -> Optional[Watchdog]:
        return _current

    def __exit__(self, *exc) -> None:
        pass


_UNCHANGED = _Unchanged()


def watching(seconds: Optional[float]):
    """`with watching(seconds) as dog:` — the watchdog of one run (a budget of None or 0 keeps the one in force;
    `dog` is the watchdog in force inside, None without one)."""
    return Watchdog(seconds) if seconds else _UNCHANGED


class watching_python:
    """`with watching_python():` — the current watchdog over plain Python code (a line tracer reads the
    clock every CHECK_EVERY lines; WatchdogExpired at the line then running). Off without a watchdog,
    or when a debugger already traces."""

    def __enter__(self) -> None:
        self.installed = _current is not None and sys.gettrace() is None
        if self.installed:
            sys.settrace(_line_tracer(_current))

    def __exit__(self, *exc) -> None:
        if self.installed:
            sys.settrace(None)


def _line_tracer(dog: Watchdog):
    from pypto.ir.span import Span
    lines = 0

    def on_line(frame, event, arg):
        nonlocal lines
        if event == "line":
            lines += 1
            if lines % CHECK_EVERY == 0 and dog.expired():
                raise WatchdogExpired("loop still running when the watchdog expired",
                                      Span(frame.f_code.co_filename, frame.f_lineno, 1))
        return on_line

    return lambda frame, event, arg: on_line
