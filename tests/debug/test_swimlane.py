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
