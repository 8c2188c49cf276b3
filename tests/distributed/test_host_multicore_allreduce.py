"""Host allreduce with core_num=k: a synchronized grid of k AIV blocks per rank, each on its own signal lane."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.errors import PyptoError
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import RunConfig


def multicore(N: int, SIZE: int, K: int, *, signal=None, mode="mesh", calls: int = 2, op=pld.ReduceOp.Sum):
    """stage x[r], `calls` allreduces with core_num=K (signal None: synthesized; "flat": [NR]; (rows, stride)),
    read back y[r]."""

    @pl.program
    class MultiCore:
        @pl.function(type=pl.FunctionType.InCore)
        def stage_k(self, x: pl.Tensor[[1, SIZE], pl.FP32],
                    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]]) -> pld.DistributedTensor[[1, SIZE], pl.FP32]:
            t = pl.load(x, [0, 0], [1, SIZE])
            data = pl.store(t, [0, 0], data)
            return data

        @pl.function(type=pl.FunctionType.InCore)
        def read_k(self, data: pld.DistributedTensor[[1, SIZE], pl.FP32],
                   y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]) -> pl.Tensor[[1, SIZE], pl.FP32]:
            t = pl.load(data, [0, 0], [1, SIZE])
            y = pl.store(t, [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def stage(self, x: pl.Tensor[[1, SIZE], pl.FP32],
                  data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]]) -> pld.DistributedTensor[[1, SIZE], pl.FP32]:
            data = self.stage_k(x, data)
            return data

        @pl.function(type=pl.FunctionType.Orchestration)
        def read(self, data: pld.DistributedTensor[[1, SIZE], pl.FP32],
                 y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]) -> pl.Tensor[[1, SIZE], pl.FP32]:
            y = self.read_k(data, y)
            return y

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[N, 1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[N, 1, SIZE], pl.FP32]]):
            data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
            if signal == "flat":
                sig_buf = pld.alloc_window_buffer([N], dtype=pl.INT32)
            elif signal is not None:
                sig_buf = pld.alloc_window_buffer([signal[0], signal[1]], dtype=pl.INT32)
            data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
            for r in pl.range(pld.world_size()):
                self.stage(x[r], data, device=r)
            for _ in pl.unroll(calls):
                if signal is None:
                    data = pld.tensor.allreduce(data, op=op, mode=mode, core_num=K)
                elif signal == "flat":
                    data = pld.tensor.allreduce(data, pld.window(sig_buf, [N], dtype=pl.INT32), op=op, core_num=K)
                else:
                    data = pld.tensor.allreduce(data, pld.window(sig_buf, [signal[0], signal[1]], dtype=pl.INT32),
                                                op=op, core_num=K)
            for r in pl.range(pld.world_size()):
                self.read(data, y[r], device=r)

    return MultiCore


def _run(prog, n, size, seed=0):
    c = ir.compile(prog, platform="a2a3sim", distributed_config=DistributedConfig(device_ids=list(range(n))))
    x = np.random.default_rng(seed).standard_normal((n, 1, size)).astype(np.float32)
    y = np.zeros_like(x)
    # the recipe mode runs the compiled grid of blocks (the native builtin would not look at core_num)
    c(x, y, config=RunConfig(sim_schedule="random", sim_seed=seed, sim_host_collectives="recipe"))
    return c, x, y


@pytest.mark.parametrize("n,size,k", [(4, 1000, 4), (2, 1300, 3)])
def test_blocks_share_the_payload_and_every_lane_self_cleans(n, size, k):
    c, x, y = _run(multicore(n, size, k), n, size)        # two back-to-back calls on one synthesized signal
    np.testing.assert_allclose(y, np.broadcast_to(n * x.sum(axis=0), x.shape), rtol=1e-4, atol=1e-4)
    (sig,) = [w for w in c.last_windows if w.nbytes == 64 * k * 4]
    assert all((b == 0).all() for b in sig.bufs)
    spmd = [f for f in c.chip.lowered.functions.values() if f.attrs.get("core_num") == k]
    assert spmd and spmd[0].attrs.get("sync_start") is True


def test_an_explicit_signal_with_a_wider_stride_and_max():
    n, size, k = 2, 600, 2
    c, x, y = _run(multicore(n, size, k, signal=(n, 8), op=pld.ReduceOp.Max, calls=1), n, size, seed=5)
    np.testing.assert_array_equal(y, np.broadcast_to(x.max(axis=0), x.shape))


@pytest.mark.parametrize("kwargs,message", [
    ({"mode": "ring"}, "requires core_num == 1"),
    ({"signal": "flat"}, "one lane per block"),
    ({"signal": (2, 1)}, "stride 1 < core_num"),
])
def test_multicore_misuse_is_reported(kwargs, message):
    with pytest.raises(PyptoError, match=message):
        ir.compile(multicore(2, 512, 2, calls=1, **kwargs), platform="a2a3sim",
                   distributed_config=DistributedConfig(device_ids=[0, 1]))


def test_more_blocks_than_aiv_cores_is_rejected_at_compile_time():
    with pytest.raises(PyptoError, match="exceeds the 48 AIV cores"):
        ir.compile(multicore(2, 512, 49, calls=1), platform="a2a3sim",
                   distributed_config=DistributedConfig(device_ids=[0, 1]))
