"""pypto.set_log_level controls what pypto logs: silent at the default WARN, compile steps and pass
timings at INFO, per-thread overrides on their own thread only."""

import threading

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto.log_level import LogLevel, clear_thread_log_level, set_thread_log_level


@pl.jit
def twice(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:] = pl.mul(x, 2.0)
    return y


@pytest.fixture
def level():
    before = pypto.get_log_level()
    yield
    pypto.set_log_level(before)
    clear_thread_log_level()


def _compile_and_run(shape):
    x = np.ones(shape, np.float32)
    y = np.zeros_like(x)
    twice(x, y)                                     # a new shape: a fresh compile, then a run
    np.testing.assert_array_equal(y, 2 * x)


def test_default_level_prints_nothing(level, capsys):
    assert pypto.get_log_level() is LogLevel.WARN
    _compile_and_run((8, 16))
    assert "[pypto" not in capsys.readouterr().err


def test_info_logs_compile_steps_pass_timings_and_runs(level, capsys):
    pypto.set_log_level(LogLevel.INFO)
    _compile_and_run((8, 32))
    err = capsys.readouterr().err
    assert "[pypto INFO] compiling twice for a2a3sim" in err
    assert "[pypto INFO] pass ConvertToSSA" in err and " ms" in err
    assert "[pypto INFO] pass AllocateMemoryAddr" in err
    assert "[pypto INFO] running twice on a2a3sim" in err


def test_error_level_hides_info(level, capsys):
    pypto.set_log_level(LogLevel.ERROR)
    _compile_and_run((8, 48))
    assert "[pypto" not in capsys.readouterr().err


def test_a_thread_override_applies_to_that_thread_only(level, capsys):
    pypto.set_log_level(LogLevel.ERROR)

    def worker():
        set_thread_log_level(LogLevel.INFO)
        _compile_and_run((8, 64))
        clear_thread_log_level()

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert "pass ConvertToSSA" in capsys.readouterr().err
    _compile_and_run((8, 80))                      # this thread is still at ERROR
    assert "[pypto" not in capsys.readouterr().err


def test_clearing_a_thread_override_restores_the_quiet_logger(level):
    import logging
    from pypto.log_level import ROOT
    pypto.set_log_level(LogLevel.WARN)
    set_thread_log_level(LogLevel.DEBUG)
    assert ROOT.isEnabledFor(logging.DEBUG)
    clear_thread_log_level()
    assert not ROOT.isEnabledFor(logging.INFO)           # no pass timing work when nobody listens


def test_info_logs_a_distributed_run(level, capsys, tmp_path, monkeypatch):
    import runpy
    from pathlib import Path
    monkeypatch.chdir(tmp_path)
    pypto.set_log_level(LogLevel.INFO)
    example = Path(__file__).resolve().parents[1] / "examples" / "intermediate" / "04_allreduce.py"
    runpy.run_path(str(example), run_name="__main__")
    assert "[pypto INFO] running " in capsys.readouterr().err
