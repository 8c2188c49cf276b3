"""A simulated run pauses automatic garbage collection while its scheduler loop runs and restores the
caller's setting afterwards, also when the run fails; young objects are still collected past a limit."""

import gc

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError
from pypto.runtime.sim import gc_pause


@pl.program
class Doubles:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0], [16, 16])
            out = pl.store(pl.add(t, t), [0, 0], out)
        return out


def _seen_during_run(monkeypatch) -> list:
    """gc.isenabled() as the kernel saw it, once per launch."""
    seen = []
    from pypto.runtime.sim import scheduler
    start = scheduler.Run._start_lane

    def spy(run, *args, **kwargs):
        seen.append(gc.isenabled())
        return start(run, *args, **kwargs)
    monkeypatch.setattr(scheduler.Run, "_start_lane", spy)
    return seen


def test_collection_is_paused_during_the_run_and_back_on_after(monkeypatch):
    seen = _seen_during_run(monkeypatch)
    x = np.ones((16, 16), np.float32)
    out = np.zeros_like(x)
    assert gc.isenabled()
    ir.compile(Doubles)(x, out)
    assert seen == [False]
    assert gc.isenabled()
    np.testing.assert_array_equal(out, x + x)


def test_a_failing_run_restores_collection(monkeypatch):
    from pypto.runtime.sim import scheduler

    def broken(run, *args, **kwargs):
        raise PyptoError("broken launch")
    monkeypatch.setattr(scheduler.Run, "_start_lane", broken)
    x = np.ones((16, 16), np.float32)
    with pytest.raises(PyptoError):
        ir.compile(Doubles)(x, np.zeros_like(x))
    assert gc.isenabled()


def test_a_caller_that_disabled_collection_keeps_it_disabled(monkeypatch):
    x = np.ones((16, 16), np.float32)
    gc.disable()
    try:
        ir.compile(Doubles)(x, np.zeros_like(x))
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_young_objects_are_collected_past_the_limit(monkeypatch):
    collected = []
    monkeypatch.setattr(gc_pause.gc, "collect", lambda generation=2: collected.append(generation))
    monkeypatch.setattr(gc_pause, "YOUNG_LIMIT", -1)
    gc_pause.collect_if_due()
    assert collected == [0]
    monkeypatch.setattr(gc_pause, "YOUNG_LIMIT", 10 ** 9)
    gc_pause.collect_if_due()
    assert collected == [0]
