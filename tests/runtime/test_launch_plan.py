"""Launch plans: an orchestration that only submits kernel calls on its parameters is replayed from
task templates; the run it gives (results, task edges, ready order) is the one its generated code
gives, and anything else takes the general path."""

import numpy as np

import pypto.language as pl
from pypto import ir
from pypto.runtime import RunConfig
from pypto.runtime.sim import launch_plan as plans
from pypto.runtime.sim import scheduler


@pl.program
class TwoStages:
    """`second` reads what `first` wrote into `mid`: the plan must make it wait for `first`."""
    @pl.function(type=pl.FunctionType.InCore)
    def first(self, x: pl.Tensor[[16, 16], pl.FP32],
              mid: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 16])
        return pl.store(pl.add(t, t), [0, 0], mid)

    @pl.function(type=pl.FunctionType.InCore)
    def second(self, mid: pl.Tensor[[16, 16], pl.FP32], y: pl.Tensor[[16, 16], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        a = pl.load(mid, [0, 0], [16, 16])
        b = pl.load(y, [0, 0], [16, 16])
        return pl.store(pl.mul(a, b), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Tensor[[16, 16], pl.FP32],
             mid: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        mid = self.first(x, mid)
        out = self.second(mid, y, out)
        return out


@pl.program
class Looped:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 16], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]):
        for i in pl.range(2):
            with pl.at(level=pl.Level.CORE_GROUP):
                t = pl.load(x, [i * 16, 0], [16, 16])
                out = pl.store(pl.add(t, t), [i * 16, 0], out)
        return out


def _inputs():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((16, 16), dtype=np.float32)
    y = rng.standard_normal((16, 16), dtype=np.float32)
    return x, y


def _plan_of(compiled):
    sim = compiled.sim
    return plans.launch_plan(sim, sim.entry_code(compiled.entry))


def _task_log(monkeypatch):
    """Every task the run adds: (id, kernel, ids of the tasks it waits for, happens-before set)."""
    log = []
    add = scheduler.Run._add

    def logged(run, task, preds):
        add(run, task, preds)
        log.append((task.id, task.code.name, sorted({p.id for p in preds}), task.ancestors))
    monkeypatch.setattr(scheduler.Run, "_add", logged)
    return log


def test_a_straight_orchestration_gets_a_plan_with_the_overlap_edge():
    plan = _plan_of(ir.compile(TwoStages))
    assert plan is not None
    assert [t.code.name for t in plan.templates] == ["first", "second"]
    assert [t.params for t in plan.templates] == [(0, 2), (2, 1, 3)]
    assert [t.preds for t in plan.templates] == [(), (0,)]
    assert plan.returns == (("param", 3),)


def test_the_replayed_run_matches_the_generated_code(monkeypatch):
    compiled = ir.compile(TwoStages)
    x, y = _inputs()
    runs = {}
    replays = []
    replay = plans.LaunchPlan.replay
    monkeypatch.setattr(plans.LaunchPlan, "replay", lambda self, run, args: replays.append(1) or replay(self, run, args))
    for label in ("plan", "code"):
        if label == "code":
            assert replays == [1]                                         # the first run was replayed
            monkeypatch.setattr(plans, "launch_plan", lambda sim, code: None)
            import pypto.runtime.sim.launch as launch
            monkeypatch.setattr(launch, "launch_plan", lambda sim, code: None)
        log = _task_log(monkeypatch)
        mid, out = np.zeros_like(x), np.zeros_like(x)
        compiled(x, y, mid, out, config=RunConfig())
        runs[label] = (mid.copy(), out.copy(), list(log))
    np.testing.assert_array_equal(runs["plan"][1], (x + x) * y)
    for a, b in zip(runs["plan"], runs["code"]):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
        else:
            assert a == b
    assert replays == [1]                                                  # the second was not
    assert runs["plan"][2][1][2] == [runs["plan"][2][0][0]]          # second waits for first


def test_a_plan_longer_than_the_task_window_runs_the_generated_code(monkeypatch):
    compiled = ir.compile(TwoStages)
    assert not _plan_of(compiled).fits(1)
    replayed = []
    monkeypatch.setattr(plans.LaunchPlan, "replay", lambda self, run, args: replayed.append(1))
    x, y = _inputs()
    mid, out = np.zeros_like(x), np.zeros_like(x)
    compiled(x, y, mid, out, config=RunConfig(sim_task_window=1))
    assert not replayed
    np.testing.assert_array_equal(out, (x + x) * y)


def test_an_orchestration_with_a_loop_has_no_plan():
    compiled = ir.compile(Looped)
    assert _plan_of(compiled) is None
    x = np.arange(32 * 16, dtype=np.float32).reshape(32, 16)
    out = np.zeros_like(x)
    compiled(x, out)
    np.testing.assert_array_equal(out, x + x)


def test_an_argument_marked_no_dep_takes_the_general_path(monkeypatch):
    import dataclasses
    compiled = ir.compile(TwoStages)
    code = compiled.sim.entry_code(compiled.entry)
    assert plans._make_plan(compiled.sim, code) is not None
    marked = dataclasses.replace(code.sites[1], no_dep=(2,))           # as `self.second(mid, y, pl.no_dep(out))`
    monkeypatch.setattr(code, "sites", [code.sites[0], marked])
    assert plans._make_plan(compiled.sim, code) is None
