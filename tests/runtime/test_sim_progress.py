"""The progress line of long simulated runs: only on a terminal, only after the delay."""

import io
import sys

from pypto.runtime.sim.progress import TICK_STEPS, RunProgress


class _Run:
    live = {1: None, 2: None}


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_silent_when_stderr_is_not_a_terminal(monkeypatch):
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert RunProgress.for_terminal([_Run()]) is None


def test_shown_on_a_terminal_once_the_delay_passed(monkeypatch):
    monkeypatch.setattr(sys, "stderr", _Tty())
    progress = RunProgress.for_terminal([_Run()])
    assert progress is not None
    progress.delay = 3600.0
    progress.tick()
    assert progress.bar is None                       # a short run shows nothing
    progress.delay = 0.0
    progress.tick()
    assert progress.bar is not None
    assert progress.describe() == f"simulating: 2 task(s) in flight, {2 * TICK_STEPS} scheduler steps"
    progress.close()
    assert progress.bar is None
