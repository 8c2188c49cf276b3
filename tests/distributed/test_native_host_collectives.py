"""Host collectives run as runtime builtins (a rendezvous, then numpy) agree with the compiled recipe."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import RunConfig
from pypto.runtime.sim.world import World

from tests.distributed.programs import host_allreduce

W = 32


def _config(mode, seed=0):
    return RunConfig(sim_schedule="random", sim_seed=seed, sim_host_collectives=mode)


def _compile(prog, n):
    return ir.compile(prog, platform="a2a3sim", distributed_config=DistributedConfig(device_ids=list(range(n))))


@pytest.mark.parametrize("op", [pld.ReduceOp.Sum, pld.ReduceOp.Min, pld.ReduceOp.Prod])
def test_allreduce_native_and_recipe_agree(op):
    n, size = 3, 40
    c = _compile(host_allreduce(n, size, op), n)
    x = np.random.default_rng(7).uniform(0.5, 1.5, (n, 1, size)).astype(np.float32)
    got = {}
    for mode in ("native", "recipe"):
        y = np.zeros_like(x)
        c(x, y, config=_config(mode))
        got[mode] = y
    ref = {pld.ReduceOp.Sum: np.sum, pld.ReduceOp.Min: np.min, pld.ReduceOp.Prod: np.prod}[op](x, axis=0)
    np.testing.assert_allclose(got["native"], np.broadcast_to(ref, x.shape), rtol=1e-5)
    np.testing.assert_allclose(got["native"], got["recipe"], rtol=1e-5)


def broadcast_and_barrier(N: int, root: int):
    @pl.program
    class Bcast:
        @pl.function(type=pl.FunctionType.InCore)
        def put_k(self, x: pl.Tensor[[1, W], pl.FP32],
                  d: pl.InOut[pld.DistributedTensor[[1, W], pl.FP32]]) -> pld.DistributedTensor[[1, W], pl.FP32]:
            d = pl.store(pl.load(x, [0, 0], [1, W]), [0, 0], d)
            return d

        @pl.function(type=pl.FunctionType.Orchestration)
        def put(self, x: pl.Tensor[[1, W], pl.FP32],
                d: pl.InOut[pld.DistributedTensor[[1, W], pl.FP32]]) -> pld.DistributedTensor[[1, W], pl.FP32]:
            d = self.put_k(x, d)
            return d

        @pl.function(type=pl.FunctionType.InCore)
        def get_k(self, d: pld.DistributedTensor[[1, W], pl.FP32],
                  y: pl.Out[pl.Tensor[[1, W], pl.FP32]]) -> pl.Tensor[[1, W], pl.FP32]:
            y = pl.store(pl.load(d, [0, 0], [1, W]), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def get(self, d: pld.DistributedTensor[[1, W], pl.FP32],
                y: pl.Out[pl.Tensor[[1, W], pl.FP32]]) -> pl.Tensor[[1, W], pl.FP32]:
            y = self.get_k(d, y)
            return y

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[N, 1, W], pl.FP32], y: pl.Out[pl.Tensor[[N, 1, W], pl.FP32]]):
            d_buf = pld.alloc_window_buffer([1, W], dtype=pl.FP32)
            s_buf = pld.alloc_window_buffer([N, 1], dtype=pl.INT32)
            d = pld.window(d_buf, [1, W], dtype=pl.FP32)
            s = pld.window(s_buf, [N, 1], dtype=pl.INT32)
            for r in pl.range(pld.world_size()):
                self.put(x[r], d, device=r)
            s = pld.tensor.barrier(s)
            d = pld.tensor.broadcast(d, s, root=root)
            for r in pl.range(pld.world_size()):
                self.get(d, y[r], device=r)

    return Bcast


@pytest.mark.parametrize("mode", ["native", "recipe"])
def test_broadcast_after_a_barrier(mode):
    n, root = 3, 2
    c = _compile(broadcast_and_barrier(n, root), n)
    x = np.random.default_rng(2).standard_normal((n, 1, W)).astype(np.float32)
    y = np.zeros_like(x)
    c(x, y, config=_config(mode, seed=4))
    np.testing.assert_array_equal(y, np.broadcast_to(x[root], x.shape))
    (sig,) = [w for w in c.last_windows if w.nbytes == n * 4]
    assert all((b == 0).all() for b in sig.bufs)


def test_native_mode_computes_once_per_call_and_recipe_mode_never():
    """The builtin folds every member once; the recipe mode simulates the compiled notify / wait / remote_load."""
    from pypto.runtime.sim import host_collectives
    n, size = 2, 8192
    c = _compile(host_allreduce(n, size), n)
    x = np.ones((n, 1, size), np.float32)
    y = np.zeros_like(x)
    calls = []
    original = host_collectives._compute
    host_collectives._compute = lambda call: (calls.append(call.op), original(call))
    try:
        c(x, y, config=_config("native"))
        c(x, y, config=_config("recipe"))
    finally:
        host_collectives._compute = original
    assert calls == ["pld.tensor.allreduce"]              # once per call, for every member; never in recipe mode
    np.testing.assert_array_equal(y, 2.0)


def test_window_memory_is_reused_and_zeroed():
    pool: dict = {}
    first = World(2, pool=pool)
    w = first.alloc_window(64)
    w.bufs[1][:] = 7
    first.release()
    second = World(2, pool=pool)
    again = second.alloc_window(64)
    assert any(b is w.bufs[1] for b in again.bufs)        # the same memory, lent again
    assert all((b == 0).all() for b in again.bufs)        # and zero, as a fresh window is


def test_an_unknown_collective_mode_is_an_error():
    c = _compile(host_allreduce(2, 16), 2)
    x = np.zeros((2, 1, 16), np.float32)
    with pytest.raises(ValueError, match="sim_host_collectives"):
        c(x, np.zeros_like(x), config=RunConfig(sim_host_collectives="fast"))


def two_domains():
    @pl.program
    class TwoDomains:
        @pl.function(type=pl.FunctionType.InCore)
        def put_k(self, x: pl.Tensor[[1, W], pl.FP32],
                  d: pl.InOut[pld.DistributedTensor[[1, W], pl.FP32]]) -> pld.DistributedTensor[[1, W], pl.FP32]:
            d = pl.store(pl.load(x, [0, 0], [1, W]), [0, 0], d)
            return d

        @pl.function(type=pl.FunctionType.Orchestration)
        def put(self, x: pl.Tensor[[1, W], pl.FP32],
                d: pl.InOut[pld.DistributedTensor[[1, W], pl.FP32]]) -> pld.DistributedTensor[[1, W], pl.FP32]:
            d = self.put_k(x, d)
            return d

        @pl.function(type=pl.FunctionType.InCore)
        def get_k(self, d: pld.DistributedTensor[[1, W], pl.FP32],
                  y: pl.Out[pl.Tensor[[1, W], pl.FP32]]) -> pl.Tensor[[1, W], pl.FP32]:
            y = pl.store(pl.load(d, [0, 0], [1, W]), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def get(self, d: pld.DistributedTensor[[1, W], pl.FP32],
                y: pl.Out[pl.Tensor[[1, W], pl.FP32]]) -> pl.Tensor[[1, W], pl.FP32]:
            y = self.get_k(d, y)
            return y

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[4, 1, W], pl.FP32], y: pl.Out[pl.Tensor[[4, 1, W], pl.FP32]]):
            a_buf = pld.alloc_window_buffer([1, W], dtype=pl.FP32)
            b_buf = pld.alloc_window_buffer([1, W], dtype=pl.FP32)
            a = pld.window(a_buf, [1, W], dtype=pl.FP32)
            b = pld.window(b_buf, [1, W], dtype=pl.FP32)
            for r in pl.range(0, 2):
                self.put(x[r], a, device=r)
            for r2 in pl.range(2, 4):
                self.put(x[r2], b, device=r2)
            a = pld.tensor.allreduce(a)
            b = pld.tensor.allreduce(b)
            for r3 in pl.range(0, 2):
                self.get(a, y[r3], device=r3)
            for r4 in pl.range(2, 4):
                self.get(b, y[r4], device=r4)

    return TwoDomains


@pytest.mark.parametrize("mode", ["native", "recipe"])
def test_one_builtin_in_two_disjoint_domains(mode):
    c = _compile(two_domains(), 4)
    x = np.random.default_rng(9).standard_normal((4, 1, W)).astype(np.float32)
    y = np.zeros_like(x)
    c(x, y, config=_config(mode, seed=1))
    np.testing.assert_allclose(y[:2], np.broadcast_to(x[:2].sum(axis=0), (2, 1, W)), rtol=1e-6)
    np.testing.assert_allclose(y[2:], np.broadcast_to(x[2:].sum(axis=0), (2, 1, W)), rtol=1e-6)
