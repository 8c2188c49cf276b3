"""Swimlane timelines of simulated runs: a softmax, a mixed (cube + vector) matmul kernel and a task
graph each write dfx_outputs/swimlane.json in the Chrome trace event format, with one track per
core, a slice per task and per op, and flow arrows for pipes and dependencies."""

import json

import numpy as np
import pytest

import pypto.language as pl
from pypto.debug.swimlane import busy_time, check_chrome_trace, load_swimlane, track_names
from pypto.runtime import RunConfig

M, N, K = 32, 64, 64
TRACE = RunConfig(enable_chip_swimlane=True)


@pl.jit
def softmax(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [M, N])
        scratch = pl.create_tile([M, N], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        mx: pl.Tile[[M, 1], pl.FP32] = pl.row_max(t, scratch)
        e = pl.exp(pl.row_expand_sub(t, mx))
        s: pl.Tile[[M, 1], pl.FP32] = pl.row_sum(e, scratch)
        pl.store(pl.row_expand_div(e, s), [0, 0], y)
    return y


@pl.jit
def matmul_relu(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm_relu"):
        z = pl.matmul(a, b, out_dtype=pl.FP32)          # AIC
        c = pl.assemble(c, pl.relu(z), [0, 0])          # AIV, through a cross-core pipe
    return c


@pl.jit
def chain(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    a = pl.create_tensor([M, N], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="first"):
        a[:] = pl.exp(x)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="second"):
        out[:] = pl.mul(a, 2.0)
    return out


def _run(kernel, *args, config=TRACE):
    compiled = kernel.compile(*args)
    compiled(*args, config=config)
    return compiled, load_swimlane(compiled.last_timeline["swimlane"])


def _slices(trace, cat=None):
    return [e for e in trace["traceEvents"] if e["ph"] == "X" and (cat is None or e["cat"] == cat)]


def test_softmax_trace_is_a_valid_chrome_trace_with_ops_on_one_vector_core():
    x = np.random.default_rng(0).standard_normal((M, N), dtype=np.float32)
    y = np.zeros_like(x)
    compiled, trace = _run(softmax, x, y)
    assert compiled.last_timeline["swimlane"].parent.name == "dfx_outputs"
    assert check_chrome_trace(trace) == []
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)   # tracing changes no value
    tasks = _slices(trace, "task")
    assert len(tasks) == 1
    ops = [s for s in _slices(trace) if s["tid"] == tasks[0]["tid"] and s["cat"] != "task"]
    names = [s["name"] for s in ops]
    assert names[0] == "tile.load" and names[-1] == "tile.store" and "tile.row_max" in names
    assert all(s["args"]["line"].endswith(tuple(f":{n}" for n in range(1, 200))) or ":" in s["args"]["line"]
               for s in ops if s["name"].startswith("tile."))
    assert "test_swimlane.py" in ops[0]["args"]["line"]
    # ops follow each other inside their task's slice
    for a, b in zip(ops, ops[1:]):
        assert b["ts"] >= a["ts"] + a["dur"] - 1e-9
    task = tasks[0]
    assert task["ts"] <= ops[0]["ts"] and ops[-1]["ts"] + ops[-1]["dur"] <= task["ts"] + task["dur"] + 1e-9
    # the DMA of 32 x 64 FP32 costs what the cost model says (latency + bytes / bandwidth)
    from pypto.ir.platform import A2A3
    load = ops[0]
    assert load["args"]["bytes"] == M * N * 4
    assert load["dur"] == pytest.approx((A2A3.cost.dma_latency_ns + M * N * 4 / A2A3.cost.dma_bytes_per_ns) / 1000)
    assert any(name.startswith("AIV") for name in track_names(trace).values())


def test_mixed_matmul_has_cube_and_vector_tracks_and_a_pipe_flow():
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    _compiled, trace = _run(matmul_relu, a, b, c)
    assert check_chrome_trace(trace) == []
    np.testing.assert_allclose(c, np.maximum(a.astype(np.float32) @ b.astype(np.float32), 0), rtol=1e-3, atol=1e-3)
    names = track_names(trace)
    aic = {tid for (pid, tid), n in names.items() if n.startswith("AIC")}
    aiv = {tid for (pid, tid), n in names.items() if n.startswith("AIV")}
    assert aic and aiv
    by_name = {}
    for s in _slices(trace):
        by_name.setdefault(s["name"], []).append(s)
    assert by_name["tile.matmul"][0]["tid"] in aic and by_name["tile.matmul"][0]["cat"] == "cube"
    push = by_name["tile.tpush_to_aiv"][0]
    pops = by_name["tile.tpop_from_aic"]
    assert push["tid"] in aic and all(p["tid"] in aiv for p in pops)
    assert all(p["ts"] >= push["ts"] + push["dur"] - 1e-9 for p in pops)     # a pop never ends before its push
    flows = [e for e in trace["traceEvents"] if e["ph"] in ("s", "f") and e["cat"] == "pipe"]
    starts = [e for e in flows if e["ph"] == "s"]
    assert starts and all(e["tid"] in aic for e in starts)
    assert {e["tid"] for e in flows if e["ph"] == "f"} <= aiv
    counters = [e for e in trace["traceEvents"] if e["ph"] == "C"]
    assert counters and max(e["args"]["slots"] for e in counters) >= 1
    assert busy_time(trace)


def test_dependent_tasks_are_ordered_and_joined_by_a_dependency_arrow_and_deps_json(tmp_path):
    x = np.random.default_rng(2).standard_normal((M, N), dtype=np.float32)
    out = np.zeros_like(x)
    compiled, trace = _run(chain, x, out, config=RunConfig(enable_chip_swimlane=1, enable_dep_gen=True))
    assert check_chrome_trace(trace) == []
    np.testing.assert_allclose(out, 2 * np.exp(x), rtol=1e-5)
    first, second = sorted(_slices(trace, "task"), key=lambda s: s["args"]["task"])
    assert second["args"]["depends_on"] == [first["args"]["task"]]
    assert second["ts"] >= first["ts"] + first["dur"] - 1e-9
    arrows = [e for e in trace["traceEvents"] if e["ph"] in ("s", "f") and e["cat"] == "dependency"]
    assert [e["ph"] for e in arrows] == ["s", "f"]
    deps = json.loads(compiled.last_timeline["deps"].read_text())
    assert deps["edges"] == [{"rank": 0, "from": first["args"]["task"], "to": second["args"]["task"]}]


def test_environment_variable_turns_the_timeline_on(monkeypatch):
    monkeypatch.setenv("PYPTO_CHIP_SWIMLANE", "1")
    x = np.ones((M, N), np.float32)
    compiled = chain.compile(x, np.zeros_like(x))
    compiled(x, np.zeros_like(x))
    assert compiled.last_timeline["swimlane"].is_file()


def test_no_timeline_without_the_flag():
    x = np.ones((M, N), np.float32)
    compiled = chain.compile(x, np.zeros_like(x))
    compiled(x, np.zeros_like(x), config=RunConfig())
    assert getattr(compiled, "last_timeline", None) is None


@pytest.mark.parametrize("bad, expected", [
    ({"traceEvents": [{"ph": "X", "name": "a", "ts": 0, "pid": 0, "tid": 0}]}, "missing 'dur'"),
    ({"traceEvents": [{"ph": "X", "name": "a", "ts": 0, "dur": -1, "pid": 0, "tid": 0}]}, "negative duration"),
    ({"traceEvents": [{"ph": "Q", "name": "a"}]}, "unknown or missing phase"),
    ({"traceEvents": [{"ph": "s", "name": "a", "id": 1, "ts": 0, "pid": 0, "tid": 0}]}, "no finish"),
    ({"traceEvents": [{"ph": "C", "name": "c", "ts": 0, "pid": 0, "args": {"v": "x"}}]}, "counter values"),
    ({"traceEvents": [{"ph": "M", "name": "colour", "pid": 0, "args": {}}]}, "unknown metadata"),
    ({"events": []}, "no 'traceEvents'"),
])
def test_the_schema_check_rejects_malformed_traces(bad, expected):
    problems = check_chrome_trace(bad)
    assert problems and expected in problems[0]


@pl.program
class PopsTwice:
    """One push, two pops: the vector side blocks for ever (a DeadlockError)."""

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        c2v: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="c2v_buf", peer_func="vec")
        pl.system.aic_initialize_pipe(c2v, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=2)
        m: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        pl.tile.tpush_to_aiv(m, split=0)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, x: pl.Tensor[[16, 16], pl.FP32],
            out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        buf: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="c2v_buf", size=2048)
        pl.system.aiv_initialize_pipe(buf, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=2)
        for _ in pl.range(2):
            t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)
            out = pl.store(t, [0, 0], out)
            pl.system.tfree_to_aic(t)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def group(self, x: pl.Tensor[[16, 16], pl.FP32],
              out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        self.cube(x, out)
        r = self.vec(x, out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        r = self.group(x, out)
        return r


def test_a_deadlocked_run_still_writes_the_timeline_up_to_the_stall():
    from pypto import ir
    from pypto.errors import DeadlockError
    compiled = ir.compile(PopsTwice)
    x = np.ones((16, 16), np.float32)
    with pytest.raises(DeadlockError):
        compiled(x, np.zeros_like(x), config=TRACE)
    trace = load_swimlane(compiled.last_timeline["swimlane"])
    assert check_chrome_trace(trace) == []
    pops = [s for s in _slices(trace) if s["name"] == "tile.tpop_from_aic"]
    per_lane = {}
    for s in pops:
        per_lane[s["tid"]] = per_lane.get(s["tid"], 0) + 1
    assert pops and set(per_lane.values()) == {1}         # each vector lane's second pop never completed


def test_a_distributed_run_has_one_process_per_rank_and_signal_arrows_between_them(monkeypatch, tmp_path):
    import runpy
    from pathlib import Path
    monkeypatch.setenv("PYPTO_CHIP_SWIMLANE", "1")
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    example = Path(__file__).resolve().parents[2] / "examples" / "intermediate" / "04_allreduce.py"
    runpy.run_path(str(example), run_name="__main__")
    (path,) = list(tmp_path.glob("*/dfx_outputs/swimlane.json"))
    trace = load_swimlane(path)
    assert check_chrome_trace(trace) == []
    ranks = {e["pid"] for e in _slices(trace, "task")}
    assert len(ranks) > 1
    starts = {e["id"]: e for e in trace["traceEvents"] if e["ph"] == "s" and e["cat"] == "signal"}
    ends = [e for e in trace["traceEvents"] if e["ph"] == "f" and e["cat"] == "signal"]
    assert any(starts[e["id"]]["pid"] != e["pid"] for e in ends)      # a notify on one rank, its wait on another


@pl.jit
def side_by_side(x: pl.Tensor, y: pl.Tensor, a: pl.Out[pl.Tensor], b: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="left"):
        a[:] = pl.exp(x)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="right"):
        b[:] = pl.exp(y)                           # independent of left
    return a, b


def test_independent_tasks_overlap_on_different_cores():
    x = np.ones((M, N), np.float32)
    _compiled, trace = _run(side_by_side, x, x.copy(), np.zeros_like(x), np.zeros_like(x))
    left, right = sorted(_slices(trace, "task"), key=lambda s: s["args"]["task"])
    assert left["tid"] != right["tid"]
    assert right["ts"] < left["ts"] + left["dur"]     # both run at once, as on the chip


def test_the_cost_model_is_per_platform():
    from pypto.ir.platform import A2A3, A5
    x = np.ones((M, N), np.float32)
    config = RunConfig(platform="a5sim", enable_chip_swimlane=True)
    compiled = chain.compile(x, np.zeros_like(x), config=config)
    compiled(x, np.zeros_like(x), config=config)
    trace = load_swimlane(compiled.last_timeline["swimlane"])
    load = next(s for s in _slices(trace) if s["name"] == "tile.load")
    assert load["dur"] == pytest.approx((A5.cost.dma_latency_ns + M * N * 4 / A5.cost.dma_bytes_per_ns) / 1000)
    assert A5.cost.dma_bytes_per_ns != A2A3.cost.dma_bytes_per_ns
    assert "a5" in trace["otherData"]["platform"]


def test_scope_stats_count_tasks_and_times_per_scope():
    x = np.ones((M, N), np.float32)
    compiled, _trace = _run(chain, x, np.zeros_like(x), config=RunConfig(enable_chip_swimlane=True,
                                                                          enable_scope_stats=True))
    stats = json.loads(compiled.last_timeline["scope_stats"].read_text())
    assert set(stats) == {"first", "second"}
    assert all(row["tasks"] == 1 and row["total_ns"] > 0 and row["mean_ns"] == row["total_ns"] for row in stats.values())


@pl.program
class OneSlotTwoPushes:
    """slot_num=1: the second push must wait until the vector side freed the first slot."""

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        c2v: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="c2v_buf", peer_func="vec")
        pl.system.aic_initialize_pipe(c2v, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=1)
        m: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        pl.tile.tpush_to_aiv(m, split=0)
        pl.tile.tpush_to_aiv(m, split=0)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, x: pl.Tensor[[16, 16], pl.FP32],
            out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c2v: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="c2v_buf", size=1024)
        pl.system.aiv_initialize_pipe(c2v, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=1)
        for _ in pl.range(2):
            t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)
            e: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.exp(t)
            out = pl.store(e, [0, 0], out)
            pl.system.tfree_to_aic(t)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def group(self, x: pl.Tensor[[16, 16], pl.FP32],
              out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        self.cube(x, out)
        r = self.vec(x, out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        r = self.group(x, out)
        return r


def test_a_push_into_a_full_ring_waits_for_the_free_that_releases_its_slot():
    from pypto import ir
    compiled = ir.compile(OneSlotTwoPushes)
    x = np.ones((16, 16), np.float32)
    out = np.zeros_like(x)
    compiled(x, out, config=TRACE)
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-6)
    trace = load_swimlane(compiled.last_timeline["swimlane"])
    assert check_chrome_trace(trace) == []
    pushes = sorted((s for s in _slices(trace) if s["name"] == "tile.tpush_to_aiv"), key=lambda s: s["ts"])
    lane0 = min(s["tid"] for s in _slices(trace) if s["name"] == "system.tfree_to_aic")
    frees = sorted((s for s in _slices(trace) if s["name"] == "system.tfree_to_aic" and s["tid"] == lane0),
                   key=lambda s: s["ts"])
    assert len(pushes) == 2 and len(frees) == 2
    assert pushes[1]["ts"] >= frees[0]["ts"] + frees[0]["dur"] - 1e-9       # the stall on the full ring
    counters = [e["args"]["slots"] for e in trace["traceEvents"] if e["ph"] == "C"]
    assert max(counters) == 1                                               # never more than the one slot
