"""benchmark on a distributed program: per-round, per-rank and per-dispatch views of the simulated run."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import ValueCheckError
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import benchmark
from pypto.runtime.benchmark import BenchmarkStats, DispatchTiming

N = 32


@pl.program
class TwoStagesOnRankZero:
    """Rank 0 runs two dispatches per round (a heavy one, then a light one), rank 1 runs one."""

    @pl.function(type=pl.FunctionType.InCore)
    def heavy(self, x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        t = pl.load(x, [0, 0], [N, N])
        for _ in pl.range(8):
            t = pl.add(pl.mul(t, 0.5), t)
        return pl.store(t, [0, 0], y)

    @pl.function(type=pl.FunctionType.InCore)
    def light(self, x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        return pl.store(pl.neg(pl.load(x, [0, 0], [N, N])), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def heavy_orch(self, x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        return self.heavy(x, y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def light_orch(self, x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        return self.light(x, y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[N, N], pl.FP32], a: pl.Out[pl.Tensor[[N, N], pl.FP32]],
             b: pl.Out[pl.Tensor[[N, N], pl.FP32]], c: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        self.heavy_orch(x, a, device=0)
        self.light_orch(x, b, device=0)
        self.light_orch(x, c, device=1)


def _run(rounds=3):
    c = ir.compile(TwoStagesOnRankZero, platform="a2a3sim", distributed_config=DistributedConfig(device_ids=[0, 1]))
    x = np.random.default_rng(0).standard_normal((N, N)).astype(np.float32)
    outs = [np.zeros_like(x) for _ in range(3)]
    stats = benchmark(c, [x, *outs], rounds=rounds, warmup=1)
    np.testing.assert_allclose(outs[0], x * 1.5 ** 8, rtol=1e-5)
    np.testing.assert_array_equal(outs[1], -x)
    np.testing.assert_array_equal(outs[2], -x)
    return stats


def test_per_dispatch_and_per_rank_views_line_up():
    stats = _run(rounds=3)
    assert stats.dispatch_tasks() == {(0, 0): "heavy_orch", (0, 1): "light_orch", (1, 0): "light_orch"}
    per_dispatch = stats.per_dispatch("device")
    assert set(per_dispatch) == {(0, 0), (0, 1), (1, 0)} and all(len(v) == 3 for v in per_dispatch.values())
    assert all(v > 0 for series in per_dispatch.values() for v in series)
    per_rank = stats.per_rank("device")
    assert set(per_rank) == {0, 1}
    # a rank's figure is the sum of its dispatches; the headline is the busiest rank, per round
    for k in range(3):
        assert per_rank[0][k] == pytest.approx(per_dispatch[(0, 0)][k] + per_dispatch[(0, 1)][k])
        assert stats.device_wall_us[k] == pytest.approx(max(per_rank[0][k], per_rank[1][k]))
    assert stats.per_round("device") == stats.samples == stats.device_wall_us
    assert stats.per_round("effective") == stats.device_wall_us
    # a dispatch's host window spans at least its own busy time; the union is the whole scheduler loop
    host = stats.per_dispatch("host")
    assert all(h >= d for key in host for h, d in zip(host[key], per_dispatch[key]))
    assert stats.per_round("union") == [inv["device_wall"] for inv in stats.invocations]
    assert stats.device_wall_us_min <= stats.device_wall_us_median
    groups = stats.dispatch_groups()
    assert all(isinstance(d, DispatchTiming) and d.effective_us == d.device_wall_us for d in groups[(0, 0)])
    text = stats.format_mean_tree(pid=0)
    assert "rank 0 slot=0 heavy_orch" in text and "rank 0 slot=1 light_orch" in text and "rank 1" not in text
    assert "rank 1 slot=0 light_orch" in stats.format_tree(launch=1)
    with pytest.raises(ValueCheckError, match="expected one of device, host, effective"):
        stats.per_rank("union")


def _grid(*names_per_rank):
    return {r: [DispatchTiming(n, 1.0, 2.0) for n in names] for r, names in enumerate(names_per_rank)}


def test_slots_that_change_meaning_or_shape_give_empty_views():
    inv = {"chip.run": 3.0, "bind": 1.0, "device_wall": 1.0, "write_back": 1.0}
    swapped = BenchmarkStats(2, 0, (inv, inv), (_grid(["a", "b"]), _grid(["b", "a"])), distributed=True)
    assert swapped.unstable_dispatch_slots and not swapped.fallback_flattened
    assert swapped.per_dispatch("device") == {} and swapped.dispatch_tasks() == {}
    assert swapped.per_rank("device") == {0: [2.0, 2.0]}              # round totals still line up
    reshaped = BenchmarkStats(2, 0, (inv, inv), (_grid(["a"]), _grid(["a", "a"])), distributed=True)
    assert reshaped.fallback_flattened and reshaped.per_rank("device") == {} and reshaped.per_round("union") == []
    assert reshaped.device_wall_us == [1.0, 2.0]


def test_a_chip_program_is_one_dispatch_on_rank_zero():
    from tests.runtime.test_worker import Affine
    compiled = ir.compile(Affine)
    x = np.ones((32, 64), np.float32)
    stats = benchmark(compiled, [x, x, np.zeros_like(x)], rounds=2, warmup=0)
    assert stats.dispatch_tasks() == {(0, 0): "main"}
    assert list(stats.per_rank("device")) == [0] and len(stats.per_dispatch("host")[(0, 0)]) == 2
    assert stats.device_wall_us == [inv["device_wall"] for inv in stats.invocations]   # the span, as before
