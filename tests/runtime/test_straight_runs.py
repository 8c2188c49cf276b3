"""Straight runs: a chip call whose launch plan has only kernels that never block runs without the
scheduler's agent loop (launch._run_straight). It must give what the loop gives — the same tasks,
edges, happens-before sets, cores, results, errors and race check — and the watchdog must still stop
a kernel that never ends. `launch.STRAIGHT_RUNS` switches the path off to compare."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import SimulationError
from pypto.runtime import RunConfig
from pypto.runtime.sim import launch, launch_plan, scheduler
from pypto.runtime.sim.blocking import Block
from pypto.runtime.sim.race_detector import RaceDetector

R, C = 32, 64


@pl.jit
def diamond(x: pl.Tensor, y: pl.Tensor, mid: pl.Out[pl.Tensor], side: pl.Out[pl.Tensor], out: pl.Out[pl.Tensor]):
    """Four tasks: `mid` and `side` each wait for nothing, the third for `mid`, the last for both."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="double"):
        t = pl.load(x, [0, 0], [R, C])
        pl.store(pl.add(t, t), [0, 0], mid)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="square"):
        u = pl.load(y, [0, 0], [R, C])
        pl.store(pl.mul(u, u), [0, 0], side)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="bump"):
        m = pl.load(mid, [0, 0], [R, C])
        pl.store(pl.add(m, 1.0), [0, 0], mid)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="join"):
        a = pl.load(mid, [0, 0], [R, C])
        b = pl.load(side, [0, 0], [R, C])
        pl.store(pl.sub(a, b), [0, 0], out)
    return out


@pl.jit
def spins(x: pl.Tensor, first: pl.Out[pl.Tensor], second: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [R, C])
        pl.store(t, [0, 0], first)
    with pl.at(level=pl.Level.CORE_GROUP):
        u = pl.load(x, [0, 0], [R, C])
        while True:
            pass
        pl.store(u, [0, 0], second)
    return first, second


@pl.jit
def matmul_then_vector(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        left = pl.move(pl.load(a, [0, 0], [16, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        right = pl.move(pl.load(b, [0, 0], [32, 16], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        v = pl.move(pl.matmul(left, right), target_memory=pl.Mem.Vec)
        pl.store(pl.mul(v, v), [0, 0], c)
    return c


def _inputs():
    rng = np.random.default_rng(11)
    return rng.standard_normal((R, C), dtype=np.float32), rng.standard_normal((R, C), dtype=np.float32)


def _plan(fn, *args):
    sim = fn.compile(*args).sim
    return launch_plan.launch_plan(sim, sim.entry_code(fn.compile(*args).entry))


def _record(monkeypatch) -> tuple:
    """Spies: every task added (id, kernel, predecessor ids, happens-before set), every lane started
    (task id, core, lane) and every straight run."""
    tasks, lanes, straight = [], [], []
    add, start, run_straight = scheduler.Run._add, scheduler.Run._start_lane, launch._run_straight

    def logged_add(run, task, preds):
        add(run, task, preds)
        tasks.append((task.id, task.code.name, sorted({p.id for p in preds}), task.ancestors))

    def logged_start(run, task, code, ctx, *rest, **kw):
        lanes.append((task.id, code.name, ctx.core.name if ctx.core is not None else None, ctx.subblock_idx))
        return start(run, task, code, ctx, *rest, **kw)

    def counted(*args, **kwargs):
        straight.append(1)
        return run_straight(*args, **kwargs)
    monkeypatch.setattr(scheduler.Run, "_add", logged_add)
    monkeypatch.setattr(scheduler.Run, "_start_lane", logged_start)
    monkeypatch.setattr(launch, "_run_straight", counted)
    return tasks, lanes, straight


def _both_ways(monkeypatch, call) -> dict:
    """{straight: (what `call` returned or raised, task log, lane log, straight runs)} for the path on and off."""
    got = {}
    for on in (True, False):
        with monkeypatch.context() as m:
            m.setattr(launch, "STRAIGHT_RUNS", on)
            tasks, lanes, straight = _record(m)
            try:
                value = call()
            except Exception as e:            # the error is part of what must agree
                value = (type(e).__name__, str(e))
            got[on] = (value, tasks, lanes, len(straight))
    return got


def test_a_plan_of_plain_kernels_never_blocks():
    x, y = _inputs()
    z = np.zeros_like(x)
    plan = _plan(diamond, x, y, z, z, z)
    assert plan is not None and plan.never_blocks


def test_a_kernel_with_pipes_or_a_group_blocks():
    """Decided from the kernels' code: a pipe op makes a kernel a generator; a Group starts member lanes."""
    x, _ = _inputs()
    a, b = x[:16, :32].astype(np.float16), x[:32, :16].astype(np.float16)
    sim = matmul_then_vector.compile(a, b, np.zeros((16, 16), np.float32)).sim
    by_type = {c.func.func_type.name: c for c in sim.functions.values()}
    plain = next(c for c in diamond.compile(x, x, x, x, x).sim.functions.values() if c.name.startswith("double"))

    def plan_of(*codes):
        return launch_plan.LaunchPlan([SimpleNamespace(code=c) for c in codes], None, False)
    assert plan_of(plain).never_blocks
    assert by_type["AIV"].is_generator and not plan_of(plain, by_type["AIV"]).never_blocks
    assert not plan_of(by_type["Group"]).never_blocks


def test_the_straight_run_matches_the_agent_loop(monkeypatch):
    x, y = _inputs()

    def call():
        mid, side, out = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
        diamond(x, y, mid, side, out)
        return mid, side, out
    got = _both_ways(monkeypatch, call)
    assert got[True][3] == 1 and got[False][3] == 0
    (mid, side, out), tasks, lanes, _ = got[True]
    np.testing.assert_allclose(out, (x + x + 1.0) - y * y, rtol=1e-6)
    for a, b in zip(got[True][0], got[False][0]):
        assert a.tobytes() == b.tobytes()
    assert tasks == got[False][1] and lanes == got[False][2]
    assert [t[2] for t in tasks] == [[], [], [0], [1, 2]]          # the edges the OverlapMap gives
    assert [t[0] for t in lanes] == [0, 1, 2, 3]                    # started in ready order


def test_a_kernel_error_reads_the_same(monkeypatch):
    x, y = _inputs()
    sim = diamond.compile(x, y, x, x, x).sim
    code = next(c for c in sim.functions.values() if c.name.startswith("bump"))

    def broken(ctx, *args):
        raise ValueError("the kernel broke")
    monkeypatch.setattr(code, "fn", broken)

    def call():
        out = np.full_like(x, 5.0)
        diamond(x, y, np.zeros_like(x), np.zeros_like(x), out)
        return out
    got = _both_ways(monkeypatch, call)
    assert got[True][0] == got[False][0]
    kind, message = got[True][0]
    assert kind == "SimulationError" and "the kernel broke" in message and "task #2 bump" in message
    assert got[True][1] == got[False][1] and got[True][2] == got[False][2]


def test_the_race_check_runs_once_per_straight_run(monkeypatch):
    checks = []
    check = RaceDetector.check
    monkeypatch.setattr(RaceDetector, "check", lambda self: checks.append(len(self.records)) or check(self))
    x, y = _inputs()
    got = _both_ways(monkeypatch, lambda: diamond(x, y, np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)))
    assert got[True][3] == 1
    assert len(checks) == 2 and checks[0] == checks[1] > 0          # the same records, on and off


def test_a_deferred_completion_hands_the_run_to_the_agent_loop(monkeypatch):
    """A kernel that registers a completion condition (as pld.system.defer_wait does) leaves an agent; the
    loop finishes the task, its dependents run after it, and the run is the loop's."""
    x, y = _inputs()
    sim = diamond.compile(x, y, x, x, x).sim
    code = next(c for c in sim.functions.values() if c.name.startswith("double"))
    body = code.fn
    polled = []

    def deferring(ctx, *args):
        body(ctx, *args)
        ctx.task.deferred = [Block(lambda: polled.append(1) or len(polled) > 1, "test condition")]
    monkeypatch.setattr(code, "fn", deferring)

    def call():
        polled.clear()
        out = np.zeros_like(x)
        diamond(x, y, np.zeros_like(x), np.zeros_like(x), out)
        return out, len(polled)
    got = _both_ways(monkeypatch, call)
    assert got[True][3] == 1
    (out, polls), tasks, lanes, _ = got[True]
    assert polls >= 2                                              # the loop waited for the condition
    np.testing.assert_allclose(out, (x + x + 1.0) - y * y, rtol=1e-6)
    assert out.tobytes() == got[False][0][0].tobytes() and polls == got[False][0][1]
    assert tasks == got[False][1] and lanes == got[False][2]


def test_the_watchdog_stops_a_spinning_kernel_on_the_straight_path(monkeypatch):
    x, _ = _inputs()
    assert _plan(spins, x, x, x).never_blocks                     # a loop is no blocking op
    first, second = np.full_like(x, 7.0), np.full_like(x, -3.0)
    _, _, straight = _record(monkeypatch)
    with pytest.raises(SimulationError, match="watchdog budget") as e:
        spins(x, first, second, config=RunConfig(sim_watchdog_seconds=0.3))
    assert straight == [1]
    assert "running a loop at" in str(e.value) and "test_straight_runs.py" in str(e.value)
    assert (first == 7.0).all() and (second == -3.0).all()         # a failed run changes no array


@pl.jit
def squares(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [R, C])
        pl.store(pl.mul(t, t), [0, 0], out)
    return out


@pytest.mark.parametrize("straight", [True, False])
def test_overflow_inside_a_run_is_data_and_the_callers_error_state_stays(monkeypatch, straight):
    """A kernel that overflows gives inf without a warning or an error, on both paths; the caller's numpy
    error state (here: raise on overflow) is in force again after the call, also after a second call."""
    import warnings
    monkeypatch.setattr(launch, "STRAIGHT_RUNS", straight)
    x = np.full((R, C), 1e30, np.float32)
    out = np.zeros_like(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(over="raise"):
            for _ in range(2):
                squares(x, out)
                assert np.isinf(out).all()
                with pytest.raises(FloatingPointError):
                    np.float32(1e30) * np.float32(1e30)
    assert np.geterr()["over"] != "raise"


def test_a_one_task_plan_keeps_no_race_records_and_a_longer_one_does(monkeypatch):
    """A race needs two tasks: a straight run of a one-task plan runs without a RaceDetector; the four-task
    diamond still records and checks its accesses."""
    detectors = []
    init = scheduler.Run.__init__

    def spied(run, *args, **kwargs):
        init(run, *args, **kwargs)
        detectors.append(run.race)
    monkeypatch.setattr(scheduler.Run, "__init__", spied)
    monkeypatch.setattr(scheduler.Run, "restart", lambda run, *a: pytest.fail("a fresh Run per call here"))
    monkeypatch.setattr(launch_plan.LaunchPlan, "spare_run", property(lambda plan: None, lambda plan, run: None))
    x, y = _inputs()
    out = np.zeros_like(x)
    squares(x, out)
    np.testing.assert_allclose(out, x * x, rtol=1e-6)
    diamond(x, y, np.zeros_like(x), np.zeros_like(x), np.zeros_like(x))
    assert detectors[0] is None and isinstance(detectors[1], RaceDetector)


def test_a_kept_run_starts_like_a_new_one(monkeypatch):
    """The Run a straight run keeps for the next call: the same task ids, lanes and results call after call,
    with other arrays each time; it holds none of the last call's arrays; a run that failed is not kept."""
    x, y = _inputs()
    logs = []
    for k in range(3):
        with monkeypatch.context() as m:
            tasks, lanes, straight = _record(m)
            mid, side, out = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
            diamond(x + k, y, mid, side, out)
        np.testing.assert_allclose(out, (2 * (x + k) + 1.0) - y * y, rtol=1e-5)
        logs.append((tasks, lanes))
    assert logs[0] == logs[1] == logs[2] and straight == [1]
    plan = _plan(diamond, x, y, x, x, x)
    kept = plan.spare_run
    assert kept is not None and not kept.tasks and kept._known_bounds is None and kept.race.records == []
    sim = diamond.compile(x, y, x, x, x).sim
    code = next(c for c in sim.functions.values() if c.name.startswith("bump"))

    def broken(ctx, *args):
        raise ValueError("the kernel broke")
    with monkeypatch.context() as m:
        m.setattr(code, "fn", broken)
        with pytest.raises(SimulationError, match="the kernel broke"):
            diamond(x, y, np.zeros_like(x), np.zeros_like(x), np.zeros_like(x))
    assert plan.spare_run is None                                   # the failed run's Run was not kept
    out = np.zeros_like(x)
    diamond(x, y, np.zeros_like(x), np.zeros_like(x), out)
    np.testing.assert_allclose(out, (x + x + 1.0) - y * y, rtol=1e-6)
