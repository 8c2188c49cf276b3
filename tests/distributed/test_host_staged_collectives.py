"""Host collectives on staged windows: chips fill a window in one dispatch, the HOST orchestrator runs the
collective on it with a rank-1 `[world_size]` signal, and later dispatches read the result."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import RunConfig

W = 32
NR = pl.dynamic("NR")


def staged(kind: str):
    """stage x[r] into a window, run `kind` on the host, read the [NR, W] result window back into y[r]."""
    SR = 1 if kind == "allgather" else NR        # rows each rank stages: its chunk, or one per peer

    @pl.inline
    def stage_view(buf):
        if kind == "allgather":
            v = pld.window(buf, [1, W], dtype=pl.FP32)
        else:
            v = pld.window(buf, [pld.world_size(), W], dtype=pl.FP32)
        return v

    @pl.program
    class Staged:
        @pl.function(type=pl.FunctionType.InCore)
        def put_k(self, x: pl.Tensor[[SR, W], pl.FP32], st: pl.InOut[pld.DistributedTensor[[SR, W], pl.FP32]],
                  n: pl.Scalar[pl.INDEX]) -> pld.DistributedTensor[[SR, W], pl.FP32]:
            for j in pl.range(x.shape[0]):
                t = pl.load(x, [j, 0], [1, W])
                st = pl.store(t, [j, 0], st)
            return st

        @pl.function(type=pl.FunctionType.Orchestration)
        def put(self, x: pl.Tensor[[SR, W], pl.FP32], st: pl.InOut[pld.DistributedTensor[[SR, W], pl.FP32]],
                n: pl.Scalar[pl.INDEX]) -> pld.DistributedTensor[[SR, W], pl.FP32]:
            st = self.put_k(x, st, n)
            return st

        @pl.function(type=pl.FunctionType.InCore)
        def get_k(self, d: pld.DistributedTensor[[NR, W], pl.FP32], y: pl.Out[pl.Tensor[[NR, W], pl.FP32]],
                  n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[NR, W], pl.FP32]:
            for j in pl.range(n):
                t = pl.load(d, [j, 0], [1, W])
                y = pl.store(t, [j, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def get(self, d: pld.DistributedTensor[[NR, W], pl.FP32], y: pl.Out[pl.Tensor[[NR, W], pl.FP32]],
                n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[NR, W], pl.FP32]:
            y = self.get_k(d, y, n)
            return y

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, xs: pl.Tensor[[NR, SR, W], pl.FP32], ys: pl.Out[pl.Tensor[[NR, NR, W], pl.FP32]]):
            if kind == "allgather":
                st_buf = pld.alloc_window_buffer(W * pl.FP32.get_byte())
            else:
                st_buf = pld.alloc_window_buffer(pld.world_size() * W * pl.FP32.get_byte())
            data_buf = pld.alloc_window_buffer(pld.world_size() * W * pl.FP32.get_byte())
            sig_buf = pld.alloc_window_buffer(pld.world_size() * pl.INT32.get_byte())
            for r in pl.range(pld.world_size()):
                self.put(xs[r], stage_view(st_buf), pld.world_size(), device=r)
            st = stage_view(st_buf)
            data = pld.window(data_buf, [pld.world_size(), W], dtype=pl.FP32)
            sig = pld.window(sig_buf, [pld.world_size()], dtype=pl.INT32)
            if kind == "allgather":
                data = pld.tensor.allgather(st, data, sig)
            if kind == "all_to_all":
                data = pld.tensor.all_to_all(st, data, sig)
            if kind == "reduce_scatter":
                st = pld.tensor.reduce_scatter(st, sig, op=pld.ReduceOp.Sum)
                data = st
            for r in pl.range(pld.world_size()):
                self.get(data, ys[r], pld.world_size(), device=r)

    return Staged


EXPECTED = {
    # rank r's result window, from every rank's staged rows xs[src]
    "allgather": lambda xs, r: xs[:, 0],                      # row src = rank src's chunk
    "all_to_all": lambda xs, r: xs[:, r],                     # row src = what rank src staged for r
}


@pytest.mark.parametrize("mode,n", [("native", 2), ("native", 4), ("recipe", 2), ("recipe", 4)])
@pytest.mark.parametrize("kind", ["allgather", "all_to_all", "reduce_scatter"])
def test_host_collective_on_a_staged_window(kind, mode, n):
    c = ir.compile(staged(kind), platform="a2a3sim", distributed_config=DistributedConfig(device_ids=list(range(n))))
    rows = 1 if kind == "allgather" else n
    xs = np.random.default_rng(n).standard_normal((n, rows, W)).astype(np.float32)
    for seed in (0, 1):
        ys = np.zeros((n, n, W), np.float32)
        c(xs, ys, config=RunConfig(sim_schedule="random", sim_seed=seed, sim_host_collectives=mode))
        for r in range(n):
            if kind == "reduce_scatter":       # my row is the sum over ranks; the others keep what I staged
                np.testing.assert_allclose(ys[r, r], xs[:, r].sum(axis=0), rtol=1e-5, atol=1e-5)
                others = [j for j in range(n) if j != r]
                np.testing.assert_array_equal(ys[r, others], xs[r, others])
            else:
                np.testing.assert_array_equal(ys[r], EXPECTED[kind](xs, r))
    sig = [w for w in c.last_windows if w.nbytes == n * 4]
    assert sig and all((b == 0).all() for w in sig for b in w.bufs), "the signal ends at zero (self-cleaning)"
