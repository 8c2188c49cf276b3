"""A failed run never changes a caller's array: every failure path of a call (binding, config, a kernel
error, a deadlock, a livelock, an output that cannot be written) is tried with two outputs, the first
of which a task has already written when the run fails; afterwards every array is byte-equal to its copy."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import DeadlockError, PyptoError, SimulationError, TypeCheckError, ValueCheckError
from pypto.runtime import RunConfig

SHAPE = (64, 128)


@pl.jit
def two_outputs(a: pl.Tensor, c1: pl.Out[pl.Tensor], c2: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [64, 128])
        pl.store(pl.add(t, t), [0, 0], c1)
    with pl.at(level=pl.Level.CORE_GROUP):
        u = pl.load(a, [0, 0], [64, 128])
        pl.store(pl.mul(u, u), [0, 0], c2)
    return c1, c2


@pl.jit
def second_task_spins(a: pl.Tensor, c1: pl.Out[pl.Tensor], c2: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [64, 128])
        pl.store(t, [0, 0], c1)
    with pl.at(level=pl.Level.CORE_GROUP):
        u = pl.load(a, [0, 0], [64, 128])
        while True:
            pass
        pl.store(u, [0, 0], c2)
    return c1, c2


def _arrays():
    rng = np.random.default_rng(5)
    a = rng.standard_normal(SHAPE, dtype=np.float32)
    return a, np.full(SHAPE, 7.0, np.float32), np.full(SHAPE, -3.0, np.float32)


def _deadlock_program():
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).parents[2] / "examples" / "utils" / "05_deadlock.py"
    spec = importlib.util.spec_from_file_location("deadlock_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Broken


def _read_only(arr):
    arr = arr.copy()
    arr.flags.writeable = False
    return arr


FAILURES = {
    "too few arguments": (lambda a, c1, c2: two_outputs(a, c1), PyptoError),
    "wrong dtype of the last output": (lambda a, c1, c2: two_outputs(a, c1, c2.astype(np.float64)), TypeCheckError),
    "wrong shape of the last output": (lambda a, c1, c2: two_outputs(a, c1, np.zeros((64, 64), np.float32)),
                                       PyptoError),
    "read-only second output": (lambda a, c1, c2: two_outputs(a, c1, _read_only(c2)), TypeCheckError),
    "livelock in the second task": (lambda a, c1, c2: second_task_spins(
        a, c1, c2, config=RunConfig(sim_watchdog_seconds=0.5)), SimulationError),
}


@pytest.mark.parametrize("case", list(FAILURES))
def test_a_failed_jit_call_changes_no_array(case):
    call, error = FAILURES[case]
    a, c1, c2 = _arrays()
    copies = [x.copy() for x in (a, c1, c2)]
    with pytest.raises(error):
        call(a, c1, c2)
    for got, want in zip((a, c1, c2), copies):
        assert got.tobytes() == want.tobytes()


def test_the_same_call_without_the_mistake_writes_both_outputs():
    a, c1, c2 = _arrays()
    two_outputs(a, c1, c2)
    np.testing.assert_allclose(c1, a + a, rtol=1e-6)
    np.testing.assert_allclose(c2, a * a, rtol=1e-6)


def test_a_compiled_program_for_another_platform_changes_nothing():
    a, c1, c2 = _arrays()
    compiled = ir.compile(pl.parse(_ADD_TEXT), platform="a2a3sim")
    copies = [x.copy() for x in (a, c1)]
    with pytest.raises(ValueCheckError, match="compiled for a2a3sim") as info:
        compiled(a, c1, config=RunConfig(platform="a5sim"))
    assert info.value.span is not None and info.value.span.filename == __file__    # the caller's line
    for got, want in zip((a, c1), copies):
        assert got.tobytes() == want.tobytes()


def test_a_deadlock_changes_nothing():
    x = np.random.default_rng(1).standard_normal((16, 16), dtype=np.float32)
    out = np.full((16, 16), 2.0, np.float32)
    copies = [x.copy(), out.copy()]
    with pytest.raises(DeadlockError):
        ir.compile(_deadlock_program())(x, out)
    assert x.tobytes() == copies[0].tobytes() and out.tobytes() == copies[1].tobytes()


_ADD_TEXT = """
import pypto.language as pl

@pl.program
class Add:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[64, 128], pl.FP32], c: pl.Out[pl.Tensor[[64, 128], pl.FP32]]):
        t: pl.Tile[[64, 128], pl.FP32] = pl.load(a, [0, 0], [64, 128])
        c = pl.store(t, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 128], pl.FP32], c: pl.Out[pl.Tensor[[64, 128], pl.FP32]]):
        c = self.kernel(a, c)
        return c
"""
