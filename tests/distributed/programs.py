"""Distributed test programs, built per rank count (the reference's examples/distributed shapes)."""

from __future__ import annotations

import pypto.language as pl
import pypto.language.distributed as pld


def handrolled_barrier(N: int, expected: int = 1):
    """Every rank notifies every peer (AtomicAdd), waits Ge(1) on each, then surfaces its signal column."""

    @pl.program
    class HandBarrier:
        @pl.function(type=pl.FunctionType.InCore)
        def kern(self, y: pl.Out[pl.Tensor[[N, 1], pl.INT32]],
                 signal: pld.DistributedTensor[[N, 1], pl.INT32]) -> pl.Tensor[[N, 1], pl.INT32]:
            ctx = pld.get_comm_ctx(signal)
            my_rank = pld.rank(ctx)
            for peer in pl.range(N):
                if peer != my_rank:
                    pld.system.notify(signal, peer=peer, offsets=[my_rank, 0], value=1, op=pld.NotifyOp.AtomicAdd)
            for src in pl.range(N):
                if src != my_rank:
                    pld.system.wait(signal, offsets=[src, 0], expected=expected, cmp=pld.WaitCmp.Ge)
            for i in pl.range(N):
                val = pl.read(signal, [i, 0])
                y = pl.write(y, [i, 0], val)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def per_rank(self, y: pl.Out[pl.Tensor[[N, 1], pl.INT32]],
                     signal: pld.DistributedTensor[[N, 1], pl.INT32]) -> pl.Tensor[[N, 1], pl.INT32]:
            y = self.kern(y, signal)
            return y

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, y: pl.Out[pl.Tensor[[N, N, 1], pl.INT32]]):
            signal_buf = pld.alloc_window_buffer([N, 1], dtype=pl.INT32)
            for r in pl.range(pld.world_size()):
                signal = pld.window(signal_buf, [N, 1], dtype=pl.INT32)
                self.per_rank(y[r], signal, device=r)

    return HandBarrier


def builtin_barrier_shift(N: int, SIZE: int = 64, *, use_barrier: bool = True):
    """Stage x into the window, pld.tensor.barrier, then remote_load the next rank's slice: y[r] = x[(r+1) % N]."""

    @pl.program
    class BarrierShift:
        @pl.function(type=pl.FunctionType.InCore)
        def kern(self, x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
                 data: pld.DistributedTensor[[1, SIZE], pl.FP32],
                 signal: pld.DistributedTensor[[N, 1], pl.INT32]) -> pl.Tensor[[1, SIZE], pl.FP32]:
            ctx = pld.get_comm_ctx(data)
            my_rank = pld.rank(ctx)
            nranks = pld.nranks(ctx)
            local = pl.load(x, [0, 0], [1, SIZE])
            data = pl.store(local, [0, 0], data)
            if use_barrier:
                signal = pld.tensor.barrier(signal)
            peer = (my_rank + 1) % nranks
            recv = pld.tile.remote_load(data, peer=peer, offsets=[0, 0], shape=[1, SIZE])
            y = pl.store(recv, [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def per_rank(self, x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
                     data: pld.DistributedTensor[[1, SIZE], pl.FP32],
                     signal: pld.DistributedTensor[[N, 1], pl.INT32]) -> pl.Tensor[[1, SIZE], pl.FP32]:
            y = self.kern(x, y, data, signal)
            return y

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[N, 1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[N, 1, SIZE], pl.FP32]]):
            data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
            signal_buf = pld.alloc_window_buffer([N, 1], dtype=pl.INT32)
            for r in pl.range(pld.world_size()):
                data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
                signal = pld.window(signal_buf, [N, 1], dtype=pl.INT32)
                self.per_rank(x[r], y[r], data, signal, device=r)

    return BarrierShift
