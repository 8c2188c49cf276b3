"""DistributedWorker: several compiled programs on one world, sharing resident DeviceTensors across dispatches."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.ir.distributed_compiled_program import DistributedCompiledProgram, DistributedConfig
from pypto.runtime import DistributedWorker, RunConfig

R, C = 8, 32


@pl.jit.incore
def scale_into(src: pl.Tensor, state: pl.Out[pl.Tensor]):
    t = pl.load(src, [0, 0], [R, C])
    state = pl.store(pl.mul(t, 3.0), [0, 0], state)
    return state


@pl.jit
def write_chip(src: pl.Tensor, state: pl.Out[pl.Tensor]):
    state = scale_into(src, state)
    return state


@pl.jit.host
def write_state(src: pl.Tensor, state: pl.Out[pl.Tensor]):
    state = write_chip(src, state)
    return state


@pl.jit.incore
def add_state(x: pl.Tensor, state: pl.Tensor, out: pl.Out[pl.Tensor]):
    a = pl.load(x, [0, 0], [R, C])
    b = pl.load(state, [0, 0], [R, C])
    out = pl.store(pl.add(a, b), [0, 0], out)
    return out


@pl.jit
def read_chip(x: pl.Tensor, state: pl.Tensor, out: pl.Out[pl.Tensor]):
    out = add_state(x, state, out)
    return out


@pl.jit.host
def read_state(x: pl.Tensor, state: pl.Tensor, out: pl.Out[pl.Tensor]):
    out = read_chip(x, state, out)
    return out


def _programs(device_ids=(0,)):
    cfg = RunConfig(distributed_config=DistributedConfig(device_ids=list(device_ids)))
    sample = np.zeros((R, C), np.float32)
    w = write_state.compile(sample, sample, config=cfg)
    r = read_state.compile(sample, sample, sample, config=cfg)
    assert isinstance(w, DistributedCompiledProgram) and isinstance(r, DistributedCompiledProgram)
    return w, r


def test_two_programs_share_one_resident_tensor():
    w, r = _programs()
    src = np.random.default_rng(3).standard_normal((R, C)).astype(np.float32)
    with DistributedWorker([w, r]) as rt:
        state = rt.alloc_tensor((R, C), np.float32)
        rt.run(w, src, state)
        for step in range(3):
            x = np.full((R, C), float(step), np.float32)
            out = np.zeros_like(x)
            rt.run(r, x, state, out)
            np.testing.assert_allclose(out, x + 3 * src, rtol=1e-6)
        np.testing.assert_allclose(rt.copy_from(state), 3 * src, rtol=1e-6)
        assert rt.stats.runs == 4 and rt.stats.copies_to_device == 0
    assert state.freed, "closing the worker releases its tensors"


def test_prepare_extra_compiled_is_the_same_worker_and_rt_call_is_ambiguous():
    w, r = _programs()
    with w.prepare(extra_compiled=[r]) as rt:
        assert isinstance(rt, DistributedWorker) and rt.programs == [w, r]
        with pytest.raises(TypeError, match="ambiguous"):
            rt(np.zeros((R, C), np.float32), np.zeros((R, C), np.float32))
    with w.prepare() as rt:                      # one program: rt(...) dispatches it
        state = np.zeros((R, C), np.float32)
        rt(np.ones((R, C), np.float32), state)
        np.testing.assert_array_equal(state, 3.0)
        with pytest.raises(ValueError, match="not prepared"):
            rt.run(r, state, state, state)


def test_a_worker_takes_torch_dtypes_and_tensors():
    torch = pytest.importorskip("torch")
    w, r = _programs()
    with DistributedWorker([w, r]) as rt:
        state = rt.alloc_tensor((R, C), torch.float32)
        assert state.dtype is pl.FP32
        rt.run(w, torch.ones((R, C)), state)
        out = torch.zeros((R, C))
        rt.run(r, torch.ones((R, C)), state, out)
        assert torch.equal(out, torch.full((R, C), 4.0))


def test_programs_of_different_worlds_cannot_share_a_worker():
    w, _ = _programs()
    _, r2 = _programs(device_ids=(0, 1))
    with pytest.raises(ValueError, match="share a world"):
        DistributedWorker([w, r2])
    with pytest.raises(TypeError, match="distributed programs"):
        DistributedWorker([w, object()])
    with pytest.raises(TypeError, match="unexpected keyword"):
        w.prepare(bogus=True)


def test_stacked_tensors_and_submit_on_a_two_rank_world():
    import pypto.language.distributed as pld
    from pypto import ir

    @pl.program
    class Shards:
        @pl.function(type=pl.FunctionType.InCore)
        def inc_k(self, w: pl.Tensor[[1, C], pl.FP32], y: pl.Out[pl.Tensor[[1, C], pl.FP32]]) -> pl.Tensor[[1, C], pl.FP32]:
            y = pl.store(pl.adds(pl.load(w, [0, 0], [1, C]), 1.0), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def inc(self, w: pl.Tensor[[1, C], pl.FP32], y: pl.Out[pl.Tensor[[1, C], pl.FP32]]) -> pl.Tensor[[1, C], pl.FP32]:
            y = self.inc_k(w, y)
            return y

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, w: pl.Tensor[[2, 1, C], pl.FP32], y: pl.Out[pl.Tensor[[2, 1, C], pl.FP32]]):
            for r in pl.range(pld.world_size()):
                self.inc(w[r], y[r], device=r)

    c = ir.compile(Shards, platform="a2a3sim", distributed_config=DistributedConfig(device_ids=[0, 1]))
    weights = np.arange(2 * C, dtype=np.float32).reshape(2, 1, C)
    with c.prepare() as rt:
        stacked = rt.alloc_stacked_tensor(weights)
        assert stacked.shards == 2
        out = rt.alloc_stacked_tensor(np.zeros_like(weights))
        handle = rt.submit(c, stacked, out)
        assert handle.done and handle.result() is None
        back = np.zeros_like(weights)
        rt.copy_stacked_from(out, back)
        np.testing.assert_array_equal(back, weights + 1)
        bad = rt.submit(c, stacked)                       # wrong arity: the error comes back through result()
        with pytest.raises(Exception, match="takes 2 arguments"):
            bad.wait()
        with pytest.raises(ValueError, match="dim 0"):
            rt.alloc_stacked_tensor(np.zeros((3, 1, C), np.float32))


def test_registered_handles_dispatch_and_close_with_the_worker():
    w, r = _programs()
    src = np.random.default_rng(3).standard_normal((R, C)).astype(np.float32)
    x, out = np.ones((R, C), np.float32), np.zeros((R, C), np.float32)
    rt = DistributedWorker([w, r])
    state = rt.alloc_tensor((R, C), np.float32)
    assert len(rt._owned_tensors) == 1
    write = rt.register(w)
    assert write.compiled is w and rt.register(w).compiled is w and not write.closed
    write(src, state)
    rt.run(rt.register(r), x, state, out)            # run() takes a handle as well as the program
    np.testing.assert_allclose(out, 3 * src + 1, rtol=1e-6)
    other, _ = _programs(device_ids=(0, 1))
    with pytest.raises(ValueError, match="not prepared on this worker"):
        rt.register(other)
    rt.close()
    assert write.closed and state.freed and not rt._owned_tensors
    with pytest.raises(RuntimeError, match="called after close"):
        rt.register(w)
    with pytest.raises(RuntimeError, match="called after close"):
        write(src, state)


def test_raw_memory_is_per_rank():
    """malloc / copy_to / copy_from / free take worker_id: the rank whose memory they address."""
    w, _ = _programs(device_ids=(0, 1, 2))
    host = np.arange(16, dtype=np.int32)
    back = np.zeros_like(host)
    with w.prepare() as rt:
        ptrs = [rt.malloc(host.nbytes, worker_id=k) for k in range(3)]
        assert all(isinstance(p, int) for p in ptrs) and len(set(ptrs)) == 3
        for k, p in enumerate(ptrs):
            rt.copy_to(p, (host * (k + 1)).ctypes.data, host.nbytes, worker_id=k)
        rt.copy_from(back.ctypes.data, ptrs[2], host.nbytes, worker_id=2)
        np.testing.assert_array_equal(back, host * 3)
        with pytest.raises(ValueError, match="not inside a live allocation"):
            rt.copy_from(back.ctypes.data, ptrs[2], host.nbytes, worker_id=1)   # rank 1 does not own it
        with pytest.raises(ValueError, match="worker_id=3"):
            rt.malloc(8, worker_id=3)
        with pytest.raises(ValueError, match="not a live pointer"):
            rt.free(ptrs[0], worker_id=1)
        rt.free(ptrs[0], worker_id=0)
        t = rt.alloc_tensor((4,), np.float32, init=np.full(4, 2.0, np.float32), worker_id=1)
        assert t.worker_id == 1
        with pytest.raises(ValueError, match="lives on worker_id=1"):
            rt.free_tensor(t, worker_id=0)
        rt.free_tensor(t, worker_id=1)
