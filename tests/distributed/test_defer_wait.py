"""pld.system.defer_wait: the kernel does not spin, its task completes (and its dependents start) only
once the local signal cell reaches the threshold. Numpy-equal under random schedules, the race it closes,
and a condition that never holds reported as a deadlock naming the op."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.errors import DeadlockError, PyptoError
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import RunConfig

N, R, C = 3, 4, 16


def ring_handoff(*, defer: bool = True, threshold: int = 1):
    """send: put x[r] into rank (r + 1)'s window, then notify it; arm: defer on the left neighbour's notify
    (or, with defer=False, nothing); collect: the window into y[r] (depends on arm), then retire the credit."""

    @pl.program
    class Handoff:
        @pl.function(type=pl.FunctionType.InCore)
        def send(self, x: pl.Tensor[[R, C], pl.FP32], data: pl.InOut[pld.DistributedTensor[[R, C], pl.FP32]],
                 signal: pl.InOut[pld.DistributedTensor[[N, 1], pl.INT32]]) -> pld.DistributedTensor[[R, C], pl.FP32]:
            ctx = pld.get_comm_ctx(data)
            me = pld.rank(ctx)
            right = (me + 1) % pld.nranks(ctx)
            pld.tensor.put(data, right, x)
            pld.system.notify(signal, right, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
            return data

        @pl.function(type=pl.FunctionType.InCore)
        def arm(self, data: pl.InOut[pld.DistributedTensor[[R, C], pl.FP32]],
                signal: pl.InOut[pld.DistributedTensor[[N, 1], pl.INT32]]) -> pld.DistributedTensor[[R, C], pl.FP32]:
            pl.func_attr({"deferred_completion_waiter": True})       # a task-level waiter (the contract)
            ctx = pld.get_comm_ctx(data)
            me = pld.rank(ctx)
            left = (me + pld.nranks(ctx) - 1) % pld.nranks(ctx)
            if defer:
                pld.system.defer_wait(signal, [left, 0], threshold, cmp=pld.WaitCmp.Ge)
            return data

        @pl.function(type=pl.FunctionType.InCore)
        def collect(self, data: pld.DistributedTensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]],
                    signal: pl.InOut[pld.DistributedTensor[[N, 1], pl.INT32]]) -> pl.Tensor[[R, C], pl.FP32]:
            ctx = pld.get_comm_ctx(data)
            me = pld.rank(ctx)
            left = (me + pld.nranks(ctx) - 1) % pld.nranks(ctx)
            t = pl.load(data, [0, 0], [R, C])
            y = pl.store(t, [0, 0], y)
            pld.system.wait(signal, [left, 0], 1, cmp=pld.WaitCmp.Ge)          # the credit is there: retire it
            pld.system.notify(signal, me, [left, 0], -1, op=pld.NotifyOp.AtomicAdd)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def per_rank(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]],
                     data: pld.DistributedTensor[[R, C], pl.FP32],
                     signal: pld.DistributedTensor[[N, 1], pl.INT32]) -> pl.Tensor[[R, C], pl.FP32]:
            data = self.send(x, data, signal)
            data = self.arm(data, signal)
            y = self.collect(data, y, signal)
            return y

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[N, R, C], pl.FP32], y: pl.Out[pl.Tensor[[N, R, C], pl.FP32]]):
            data_buf = pld.alloc_window_buffer([R, C], dtype=pl.FP32)
            signal_buf = pld.alloc_window_buffer([N, 1], dtype=pl.INT32)
            for r in pl.range(pld.world_size()):
                data = pld.window(data_buf, [R, C], dtype=pl.FP32)
                signal = pld.window(signal_buf, [N, 1], dtype=pl.INT32)
                self.per_rank(x[r], y[r], data, signal, device=r)

    return Handoff


def _compile(prog):
    return ir.compile(prog, platform="a2a3sim", distributed_config=DistributedConfig(device_ids=list(range(N))))


def test_dependent_task_sees_the_pushed_data_under_random_schedules():
    c = _compile(ring_handoff())
    for seed in range(4):
        x = np.random.default_rng(seed).standard_normal((N, R, C)).astype(np.float32)
        y = np.zeros_like(x)
        c(x, y, config=RunConfig(sim_schedule="random", sim_seed=seed))
        np.testing.assert_array_equal(y, np.roll(x, 1, axis=0))


def test_without_the_deferred_condition_the_read_races():
    """Control: the same program with `arm` empty reads the window before the neighbour's push lands."""
    c = _compile(ring_handoff(defer=False))
    wrong = 0
    for seed in range(8):
        x = np.random.default_rng(seed).standard_normal((N, R, C)).astype(np.float32)
        y = np.zeros_like(x)
        try:
            c(x, y, config=RunConfig(sim_schedule="random", sim_seed=seed))
        except DeadlockError:
            continue
        wrong += not np.array_equal(y, np.roll(x, 1, axis=0))
    assert wrong > 0, "some schedule must run collect before the left neighbour's put"


def test_a_condition_that_never_holds_is_a_deadlock_naming_defer_wait():
    c = _compile(ring_handoff(threshold=2))
    x = np.zeros((N, R, C), np.float32)
    with pytest.raises(DeadlockError, match=r"deferred completion\).*pld.system.defer_wait.*waits for >= 2"):
        c(x, np.zeros_like(x))


def test_defer_wait_takes_only_ge():
    with pytest.raises(PyptoError, match="pld.system.defer_wait: cmp must be pld.WaitCmp.Ge"):
        @pl.program
        class Bad:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, signal: pl.InOut[pld.DistributedTensor[[N, 1], pl.INT32]]) -> pld.DistributedTensor[[N, 1], pl.INT32]:
                pld.system.defer_wait(signal, [0, 0], 1, cmp=pld.WaitCmp.Eq)
                return signal


def waiters_before_their_publisher(waiters: int):
    """Each rank submits `waiters` deferred waiters (each with a consumer gated on it) and only then the task
    that writes the peer's window and raises its signal: the orchestration must reach that last submit
    while the waiters still hold the window (only their completion is deferred, not the host)."""
    W = 8

    @pl.program
    class LatePublisher:
        @pl.function(type=pl.FunctionType.Orchestration)
        def chip(self, tag: pl.Tensor[[1, W], pl.INT32], got: pl.Out[pl.Tensor[[waiters, W], pl.INT32]],
                 box: pl.InOut[pld.DistributedTensor[[1, W], pl.INT32]],
                 flag: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
                 peer: pl.Scalar[pl.INT32]) -> pl.Tensor[[waiters, W], pl.INT32]:
            with pl.manual_scope():
                for k in pl.range(waiters):
                    with pl.at(level=pl.Level.CORE_GROUP, name_hint="waiter") as armed:
                        pld.system.defer_wait(signal=flag, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
                    with pl.at(level=pl.Level.CORE_GROUP, name_hint="reader", deps=[armed]):
                        got = pl.store(pl.load(box, [0, 0], [1, W]), [k, 0], got)
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="publisher"):
                    pld.tile.remote_store(pl.load(tag, [0, 0], [1, W]), target=box, peer=peer, offsets=[0, 0])
                    pld.system.notify(target=flag, peer=peer, offsets=[0, 0], value=1, op=pld.NotifyOp.Set)
            return got

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, tags: pl.Tensor[[2, 1, W], pl.INT32], got: pl.Out[pl.Tensor[[2, waiters, W], pl.INT32]]):
            box_buf = pld.alloc_window_buffer([1, W], dtype=pl.INT32)
            flag_buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
            for r in pl.range(2):
                self.chip(tags[r], got[r], pld.window(box_buf, [1, W], dtype=pl.INT32),
                          pld.window(flag_buf, [1, 1], dtype=pl.INT32), 1 - r, device=r)

    return LatePublisher


@pytest.mark.parametrize("waiters", [1, 5])
def test_the_orchestration_reaches_a_publisher_submitted_after_its_waiters(waiters):
    c = ir.compile(waiters_before_their_publisher(waiters), platform="a2a3sim",
                   distributed_config=DistributedConfig(device_ids=[0, 1]))
    tags = np.arange(16, dtype=np.int32).reshape(2, 1, 8) + 100
    got = np.zeros((2, waiters, 8), np.int32)
    c(tags, got, config=RunConfig(sim_schedule="random", sim_seed=waiters))
    np.testing.assert_array_equal(got[0], np.broadcast_to(tags[1], (waiters, 8)))   # rank 0 reads rank 1's tag
    np.testing.assert_array_equal(got[1], np.broadcast_to(tags[0], (waiters, 8)))
