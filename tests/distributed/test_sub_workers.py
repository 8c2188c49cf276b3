"""HOST SubWorkers: Python callbacks of a distributed program, run between chip dispatches with the chip results."""

from __future__ import annotations

import traceback

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError, SimulationError
from pypto.ir.distributed_compiled_program import DistributedConfig

R, C = 8, 16
SEEN: list = []


@pl.program
class TwoSteps:
    @pl.function(type=pl.FunctionType.InCore)
    def double_k(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        t = pl.load(x, [0, 0], [R, C])
        y = pl.store(pl.add(t, t), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def accumulate_k(self, x: pl.Tensor[[R, C], pl.FP32],
                     y: pl.InOut[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        a = pl.load(x, [0, 0], [R, C])
        b = pl.load(y, [0, 0], [R, C])
        y = pl.store(pl.add(a, b), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def double(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        return self.double_k(x, y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def accumulate(self, x: pl.Tensor[[R, C], pl.FP32],
                   y: pl.InOut[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        return self.accumulate_k(x, y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def snapshot(y: pl.Tensor[[R, C], pl.FP32]):
        SEEN.append(y.clone() if hasattr(y, "clone") else y.copy())

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        y1 = self.double(x, y)
        self.snapshot(y1)
        y2 = self.accumulate(x, y1)
        return y2


def _compile(prog):
    return ir.compile(prog, platform="a2a3sim", distributed_config=DistributedConfig(device_ids=[0]))


def test_a_concrete_sub_worker_sees_the_results_of_the_dispatches_before_it_only():
    SEEN.clear()
    c = _compile(TwoSteps)
    x = np.random.default_rng(1).standard_normal((R, C)).astype(np.float32)
    y = np.zeros_like(x)
    c(x, y)
    assert len(SEEN) == 1
    np.testing.assert_array_equal(SEEN[0], x + x)          # after `double`, before `accumulate`
    np.testing.assert_array_equal(y, x + x + x)
    assert not TwoSteps.get_function("snapshot").requires_runtime_binding


def test_a_sub_worker_gets_torch_tensors_when_called_with_torch():
    torch = pytest.importorskip("torch")
    SEEN.clear()
    c = _compile(TwoSteps)
    x = torch.ones((R, C), dtype=torch.float32)
    y = torch.zeros((R, C), dtype=torch.float32)
    c(x, y)
    assert torch.equal(y, torch.full((R, C), 3.0))
    assert torch.equal(SEEN[0], torch.full((R, C), 2.0))


def _abstract_program(body_is_ellipsis: bool = True):
    if body_is_ellipsis:
        @pl.program
        class Hook:
            @pl.function(type=pl.FunctionType.InCore)
            def neg_k(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
                t = pl.load(x, [0, 0], [R, C])
                y = pl.store(pl.neg(t), [0, 0], y)
                return y

            @pl.function(type=pl.FunctionType.Orchestration)
            def neg(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
                return self.neg_k(x, y)

            @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
            def observe(y: pl.Tensor[[R, C], pl.FP32]):
                """Bound at prepare()."""
                ...

            @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
            def host(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
                y1 = self.neg(x, y)
                self.observe(y1)
                return y1
        return Hook

    @pl.program
    class NoOp:
        @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
        def observe(y: pl.Tensor[[R, C], pl.FP32]):
            pass
    return NoOp


def test_an_ellipsis_body_is_runtime_bound_and_a_pass_body_is_not():
    assert _abstract_program().get_function("observe").requires_runtime_binding
    assert not _abstract_program(False).get_function("observe").requires_runtime_binding


def test_prepare_binds_the_callback_and_it_receives_the_argument_list():
    c = _compile(_abstract_program())
    got = []
    x = np.arange(R * C, dtype=np.float32).reshape(R, C)
    y = np.zeros_like(x)
    with c.prepare(callbacks={"observe": lambda args: got.append(np.array(args[0], copy=True))}) as rt:
        rt(x, y)
        rt(x + 1, y)
    assert len(got) == 2
    np.testing.assert_array_equal(got[0], -x)
    np.testing.assert_array_equal(got[1], -(x + 1))


def test_prepare_rejects_missing_unknown_and_uncallable_callbacks():
    c = _compile(_abstract_program())
    with pytest.raises(ValueError, match="observe"):
        c.prepare()
    with pytest.raises(ValueError, match="nosuch"):
        c.prepare(callbacks={"observe": print, "nosuch": print})
    with pytest.raises(ValueError, match="not callable"):
        c.prepare(callbacks={"observe": 3})


def test_an_unbound_callback_fails_at_dispatch_and_leaves_the_outputs_alone():
    c = _compile(_abstract_program())
    x = np.ones((R, C), np.float32)
    y = np.full_like(x, 7.0)
    with pytest.raises(SimulationError, match="observe.*runtime-bound"):
        c(x, y)
    np.testing.assert_array_equal(y, 7.0)


CHECK_MODE = {"mode": "raise"}                 # what CopyThenCheck's SubWorker does: raise, or never return


@pl.program
class CopyThenCheck:
    @pl.function(type=pl.FunctionType.InCore)
    def copy_k(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        y = pl.store(pl.load(x, [0, 0], [R, C]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def copy(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        return self.copy_k(x, y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def check(y: pl.Tensor[[R, C], pl.FP32]):
        while CHECK_MODE["mode"] == "spin":
            pass                                          # SPIN-LINE
        raise RuntimeError(f"checked {y.shape}")      # BOOM-LINE

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        y1 = self.copy(x, y)
        self.check(y1)
        return y1


def test_a_failing_sub_worker_reports_the_users_own_line():
    c = _compile(CopyThenCheck)
    with pytest.raises(RuntimeError, match=r"checked \(8, 16\)") as info:
        c(np.ones((R, C), np.float32), np.zeros((R, C), np.float32))
    last = traceback.extract_tb(info.value.__traceback__)[-1]
    assert last.filename == __file__ and "BOOM-LINE" in open(__file__).read().splitlines()[last.lineno - 1]


def test_a_sub_worker_that_never_returns_is_stopped_by_the_watchdog_at_its_loop():
    import sys
    from pypto.runtime import RunConfig
    if sys.gettrace() is not None:
        pytest.skip("a debugger or coverage tracer is active: the watchdog leaves Python callbacks to it")
    c = _compile(CopyThenCheck)
    CHECK_MODE["mode"] = "spin"
    try:
        with pytest.raises(SimulationError, match="watchdog budget") as info:
            c(np.ones((R, C), np.float32), np.zeros((R, C), np.float32), config=RunConfig(sim_watchdog_seconds=0.3))
    finally:
        CHECK_MODE["mode"] = "raise"
    span = info.value.span
    line = open(__file__).read().splitlines()[span.line - 1]
    assert span.filename == __file__ and ("SPIN-LINE" in line or "CHECK_MODE" in line), (span, line)
    assert sys.gettrace() is None                  # the tracer is gone after the run


def test_a_sub_worker_with_self_is_a_parse_error():
    with pytest.raises(PyptoError, match="SubWorker 'cb' takes 'self'"):
        @pl.program
        class WithSelf:
            @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
            def cb(self, y: pl.Tensor[[R, C], pl.FP32]):
                ...


def test_sub_worker_overrides_replace_a_concrete_body_and_unknown_names_are_rejected():
    SEEN.clear()
    c = _compile(TwoSteps)
    got = []
    x = np.ones((R, C), np.float32)
    y = np.zeros_like(x)
    with c.prepare(sub_worker_overrides={"snapshot": lambda args: got.append(np.array(args[0]))}) as rt:
        rt(x, y)
    assert not SEEN and len(got) == 1                     # the override ran instead of the body
    np.testing.assert_array_equal(got[0], 2.0)
    with pytest.raises(ValueError, match="sub_worker_overrides names \\['nope'\\]"):
        c.prepare(sub_worker_overrides={"nope": print})
