"""Mesh allreduce (seed 001 protocol) on the multi-rank simulator against numpy, under random schedules."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import RunConfig

from tests.distributed.programs import mesh_allreduce

NP_REDUCE = {pld.ReduceOp.Sum: np.sum, pld.ReduceOp.Max: np.max, pld.ReduceOp.Min: np.min, pld.ReduceOp.Prod: np.prod}
NP_DTYPE = {pl.FP32: np.float32, pl.FP16: np.float16}
_CACHE: dict = {}


def compiled(n, size, dtype, op, **kw):
    key = (n, size, dtype.name, op, tuple(sorted(kw.items())))
    if key not in _CACHE:
        _CACHE[key] = ir.compile(mesh_allreduce(n, size, dtype, op, **kw), platform="a2a3sim",
                                 distributed_config=DistributedConfig(device_ids=list(range(n))))
    return _CACHE[key]


def inputs(n, size, dtype, op, seed):
    rng = np.random.default_rng(seed)
    if op is pld.ReduceOp.Prod:                      # keep products in range
        x = rng.uniform(0.8, 1.25, (n, 1, size))
    else:
        x = rng.uniform(-4, 4, (n, 1, size))
    return x.astype(NP_DTYPE[dtype])


def expected(x, op, times=1):
    out = x
    for _ in range(times):
        red = NP_REDUCE[op](out.astype(np.float64), axis=0, keepdims=True)
        out = np.broadcast_to(red, x.shape).astype(x.dtype)
    return out


def run(c, x, n, config=None):
    y = np.zeros_like(x)
    sig = np.full((n, n, 1), -1, np.int32)
    c(x, y, sig, config=config)
    return y, sig


def check(y, x, op, dtype, times=1):
    ref = expected(x, op, times)
    tol = 1e-5 if dtype is pl.FP32 else 2e-2
    np.testing.assert_allclose(y.astype(np.float64), ref.astype(np.float64), rtol=tol, atol=tol)


OPS = [pld.ReduceOp.Sum, pld.ReduceOp.Max, pld.ReduceOp.Min, pld.ReduceOp.Prod]


CASES = [(2, 1, pl.FP32, pld.ReduceOp.Sum), (3, 17, pl.FP32, pld.ReduceOp.Max), (4, 4096, pl.FP32, pld.ReduceOp.Min),
         (8, 17, pl.FP32, pld.ReduceOp.Prod), (2, 17, pl.FP16, pld.ReduceOp.Sum), (3, 1, pl.FP16, pld.ReduceOp.Max),
         (8, 4096, pl.FP16, pld.ReduceOp.Min), (4, 17, pl.FP16, pld.ReduceOp.Prod)]


@pytest.mark.parametrize("n,size,dtype,op", CASES, ids=lambda v: getattr(v, "name", str(v)))
def test_mesh_allreduce_matches_numpy(n, size, dtype, op):
    c = compiled(n, size, dtype, op)
    x = inputs(n, size, dtype, op, seed=n * 100 + size)
    y, sig = run(c, x, n)
    check(y, x, op, dtype)
    assert (sig == 0).all(), "the epilogue retires every credit: the signal ends at zero"


@pytest.mark.parametrize("n,size,dtype", [(2, 65537, pl.FP32), (4, 65537, pl.FP16)], ids=["2r-fp32", "4r-fp16"])
def test_mesh_allreduce_large_multi_chunk(n, size, dtype):
    c = compiled(n, size, dtype, pld.ReduceOp.Sum)
    x = inputs(n, size, dtype, pld.ReduceOp.Sum, seed=1)
    y, sig = run(c, x, n, RunConfig(sim_schedule="random", sim_seed=5))
    check(y, x, pld.ReduceOp.Sum, dtype)
    assert (sig == 0).all()


@pytest.mark.parametrize("n,size,op", [(2, 17, pld.ReduceOp.Sum), (4, 17, pld.ReduceOp.Prod), (8, 1, pld.ReduceOp.Min)])
def test_mesh_allreduce_under_20_random_schedules(n, size, op):
    c = compiled(n, size, pl.FP32, op)
    for seed in range(20):
        x = inputs(n, size, pl.FP32, op, seed)
        y, sig = run(c, x, n, RunConfig(sim_schedule="random", sim_seed=seed))
        check(y, x, op, pl.FP32)
        assert (sig == 0).all()


def test_back_to_back_allreduces_reuse_one_signal():
    n, size = 4, 17
    c = compiled(n, size, pl.FP32, pld.ReduceOp.Sum, calls=3)
    for seed in range(3):
        x = inputs(n, size, pl.FP32, pld.ReduceOp.Sum, seed)
        y, sig = run(c, x, n, RunConfig(sim_schedule="random", sim_seed=seed))
        check(y, x, pld.ReduceOp.Sum, pl.FP32, times=3)
        assert (sig == 0).all()


def test_allreduce_inside_a_loop_reuses_one_signal():
    n, size = 3, 4096
    c = compiled(n, size, pl.FP32, pld.ReduceOp.Max, loop=4)
    for seed in range(3):
        x = inputs(n, size, pl.FP32, pld.ReduceOp.Max, seed)
        y, sig = run(c, x, n, RunConfig(sim_schedule="random", sim_seed=seed))
        check(y, x, pld.ReduceOp.Max, pl.FP32, times=4)
        assert (sig == 0).all()


# ---------------------------------------------------------------------- broken recipes the simulator must catch
def _compile_fresh(n, size, op, **kw):
    return ir.compile(mesh_allreduce(n, size, pl.FP32, op, **kw), platform="a2a3sim",
                      distributed_config=DistributedConfig(device_ids=list(range(n))))


def test_skipping_the_post_reduce_barrier_races_under_random_schedules(monkeypatch):
    """Without the per-chunk barrier a fast rank stores its sum while a slow peer still reads its input."""
    from pypto.passes.lower_composite_ops import collective_allreduce as rule
    from pypto.passes.lower_composite_ops import collective_protocol as proto     # the chunk loop's barriers
    real_barrier, real_reset = proto.emit_barrier, rule.emit_epilogue_reset
    monkeypatch.setattr(proto, "emit_barrier", lambda b, h, s, g: real_barrier(b, h, s, g) if g == 1 else None)
    monkeypatch.setattr(rule, "emit_epilogue_reset", lambda b, h, s, credits: real_reset(b, h, s, 1))
    n, size = 4, 17
    c = _compile_fresh(n, size, pld.ReduceOp.Sum)
    wrong = 0
    for seed in range(20):
        x = inputs(n, size, pl.FP32, pld.ReduceOp.Sum, seed)
        y, _ = run(c, x, n, RunConfig(sim_schedule="random", sim_seed=seed))
        wrong += not np.allclose(y, expected(x, pld.ReduceOp.Sum), rtol=1e-5, atol=1e-5)
    assert wrong > 0, "the race must show in some random schedule"
    x = inputs(n, size, pl.FP32, pld.ReduceOp.Sum, 0)
    monkeypatch.undo()
    y, sig = run(_compile_fresh(n, size, pld.ReduceOp.Sum), x, n, RunConfig(sim_schedule="random", sim_seed=0))
    check(y, x, pld.ReduceOp.Sum, pl.FP32)


def test_waiting_with_eq_deadlocks_under_random_schedules(monkeypatch):
    """Eq instead of Ge: a fast peer's next-call credit pushes the cell past the threshold, the wait never fires."""
    from pypto.errors import DeadlockError
    from pypto.ir.comm_enums import WaitCmp
    from pypto.ir.dtypes import INT32
    from pypto.ir.expr import BinaryExpr, MakeTuple, const
    from pypto.passes.lower_composite_ops import collective_protocol as proto

    def wait_all_eq(b, h, signal, generation):
        def body(inner, src):
            inner.emit_if(BinaryExpr("ne", src, h.rank), lambda t: t.emit_eval(t.op(
                "pld.system.wait", [signal, MakeTuple([src, const(0)]), const(generation, INT32)],
                {"cmp": WaitCmp.Eq})))
        b.emit_for("src", 0, h.nranks, 1, body)
    monkeypatch.setattr(proto, "emit_wait_all", wait_all_eq)
    n, size = 4, 17
    c = _compile_fresh(n, size, pld.ReduceOp.Sum, loop=3)
    failures = 0
    for seed in range(20):
        x = inputs(n, size, pl.FP32, pld.ReduceOp.Sum, seed)
        try:
            y, _ = run(c, x, n, RunConfig(sim_schedule="random", sim_seed=seed))
        except DeadlockError as e:
            assert "pld.system.wait" in str(e) and "waits for == " in str(e)
            failures += 1
    assert failures > 0, "an Eq wait must deadlock in some random schedule"
