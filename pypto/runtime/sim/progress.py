"""A progress line for long simulated runs: shown on stderr (rich) once a run has taken more than
about two seconds and stderr is a terminal; silent otherwise (pipes, CI, tests).

    progress = RunProgress.for_terminal(runs)     # None when stderr is not a terminal
    progress.tick()                                # the scheduler loop calls it every few thousand steps
    progress.close()
"""

from __future__ import annotations

import sys
import time
from typing import Optional

DELAY_SECONDS = 2.0
TICK_STEPS = 2048                     # scheduler steps between two looks at the clock


class RunProgress:
    def __init__(self, runs: list, delay: float = DELAY_SECONDS, start: Optional[float] = None):
        self.runs = runs
        self.delay = delay
        self.start = time.perf_counter() if start is None else start
        self.steps = 0
        self.bar = None
        self.task = None

    @classmethod
    def for_terminal(cls, runs: list, start: Optional[float] = None) -> Optional["RunProgress"]:
        """`start`: the run's perf_counter start, when the progress line is made after the run began."""
        stream = sys.stderr
        return cls(runs, start=start) if stream is not None and hasattr(stream, "isatty") and stream.isatty() else None

    def describe(self) -> str:
        flight = sum(len(r.live) for r in self.runs)
        ranks = f"{len(self.runs)} ranks, " if len(self.runs) > 1 else ""
        return f"simulating: {ranks}{flight} task(s) in flight, {self.steps} scheduler steps"

    def tick(self) -> None:
        self.steps += TICK_STEPS
        if self.bar is None:
            if time.perf_counter() - self.start < self.delay:
                return
            from rich.console import Console
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
            self.bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                                console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task(self.describe(), total=None)
        self.bar.update(self.task, description=self.describe())

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
