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


def mesh_allreduce(N: int, SIZE: int, dtype, op, *, calls: int = 1, loop: int = 0):
    """x[r] staged into the window, `calls` back-to-back allreduces (or one inside a loop of `loop` trips)
    on one shared signal, the window surfaced as y[r]; the signal window is surfaced as sig[r]."""

    @pl.program
    class MeshAllReduce:
        @pl.function(type=pl.FunctionType.InCore)
        def kern(self, x: pl.Tensor[[1, SIZE], dtype], y: pl.Out[pl.Tensor[[1, SIZE], dtype]],
                 sig: pl.Out[pl.Tensor[[N, 1], pl.INT32]], data: pld.DistributedTensor[[1, SIZE], dtype],
                 signal: pld.DistributedTensor[[N, 1], pl.INT32]) -> tuple[pl.Tensor[[1, SIZE], dtype],
                                                                            pl.Tensor[[N, 1], pl.INT32]]:
            for c0 in pl.range(0, SIZE, 4096):
                w = pl.min(4096, SIZE - c0)
                t = pl.load(x, [0, c0], [1, 4096], valid_shape=[1, w])
                data = pl.store(t, [0, c0], data)
            if loop:
                for _ in pl.range(loop):
                    data = pld.tensor.allreduce(data, signal, op=op)
            else:
                for _ in pl.unroll(calls):
                    data = pld.tensor.allreduce(data, signal, op=op)
            signal = pld.tensor.barrier(signal)          # every rank retired its credits before we look
            for c1 in pl.range(0, SIZE, 4096):
                w1 = pl.min(4096, SIZE - c1)
                u = pl.load(data, [0, c1], [1, 4096], valid_shape=[1, w1])
                y = pl.store(u, [0, c1], y)
            for i in pl.range(N):
                v = pl.read(signal, [i, 0])
                sig = pl.write(sig, [i, 0], v)
            return y, sig

        @pl.function(type=pl.FunctionType.Orchestration)
        def per_rank(self, x: pl.Tensor[[1, SIZE], dtype], y: pl.Out[pl.Tensor[[1, SIZE], dtype]],
                     sig: pl.Out[pl.Tensor[[N, 1], pl.INT32]], data: pld.DistributedTensor[[1, SIZE], dtype],
                     signal: pld.DistributedTensor[[N, 1], pl.INT32]) -> tuple[pl.Tensor[[1, SIZE], dtype],
                                                                                pl.Tensor[[N, 1], pl.INT32]]:
            y, sig = self.kern(x, y, sig, data, signal)
            return y, sig

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[N, 1, SIZE], dtype], y: pl.Out[pl.Tensor[[N, 1, SIZE], dtype]],
                 sig: pl.Out[pl.Tensor[[N, N, 1], pl.INT32]]):
            data_buf = pld.alloc_window_buffer([1, SIZE], dtype=dtype)
            signal_buf = pld.alloc_window_buffer([N, 1], dtype=pl.INT32)
            for r in pl.range(pld.world_size()):
                data = pld.window(data_buf, [1, SIZE], dtype=dtype)
                signal = pld.window(signal_buf, [N, 1], dtype=pl.INT32)
                self.per_rank(x[r], y[r], sig[r], data, signal, device=r)

    return MeshAllReduce


def collective(kind: str, N: int, SIZE: int, dtype=pl.FP32, op=pld.ReduceOp.Sum, root: int = 0):
    """One InCore collective on a [N, SIZE] window: x[r] staged (or pushed), the window surfaced as y[r],
    the signal (after a closing barrier) as sig[r]."""
    XR = 1 if kind == "allgather" else N
    staged = kind in ("reduce_scatter", "broadcast")

    @pl.program
    class Collective:
        @pl.function(type=pl.FunctionType.InCore)
        def kern(self, x: pl.Tensor[[XR, SIZE], dtype], y: pl.Out[pl.Tensor[[N, SIZE], dtype]],
                 sig: pl.Out[pl.Tensor[[N, 1], pl.INT32]], data: pld.DistributedTensor[[N, SIZE], dtype],
                 signal: pld.DistributedTensor[[N, 1], pl.INT32]) -> tuple[pl.Tensor[[N, SIZE], dtype],
                                                                            pl.Tensor[[N, 1], pl.INT32]]:
            if staged:
                t = pl.load(x, [0, 0], [N, SIZE])
                data = pl.store(t, [0, 0], data)
            if kind == "allgather":
                data = pld.tensor.allgather(x, data, signal)
            if kind == "all_to_all":
                data = pld.tensor.all_to_all(x, data, signal)
            if kind == "reduce_scatter":
                data = pld.tensor.reduce_scatter(data, signal, op=op)
            if kind == "broadcast":
                data = pld.tensor.broadcast(data, signal, root=root)
            signal = pld.tensor.barrier(signal)
            u = pl.load(data, [0, 0], [N, SIZE])
            y = pl.store(u, [0, 0], y)
            for i in pl.range(N):
                v = pl.read(signal, [i, 0])
                sig = pl.write(sig, [i, 0], v)
            return y, sig

        @pl.function(type=pl.FunctionType.Orchestration)
        def per_rank(self, x: pl.Tensor[[XR, SIZE], dtype], y: pl.Out[pl.Tensor[[N, SIZE], dtype]],
                     sig: pl.Out[pl.Tensor[[N, 1], pl.INT32]], data: pld.DistributedTensor[[N, SIZE], dtype],
                     signal: pld.DistributedTensor[[N, 1], pl.INT32]) -> tuple[pl.Tensor[[N, SIZE], dtype],
                                                                                pl.Tensor[[N, 1], pl.INT32]]:
            y, sig = self.kern(x, y, sig, data, signal)
            return y, sig

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[N, XR, SIZE], dtype], y: pl.Out[pl.Tensor[[N, N, SIZE], dtype]],
                 sig: pl.Out[pl.Tensor[[N, N, 1], pl.INT32]]):
            data_buf = pld.alloc_window_buffer([N, SIZE], dtype=dtype)
            signal_buf = pld.alloc_window_buffer([N, 1], dtype=pl.INT32)
            for r in pl.range(pld.world_size()):
                data = pld.window(data_buf, [N, SIZE], dtype=dtype)
                signal = pld.window(signal_buf, [N, 1], dtype=pl.INT32)
                self.per_rank(x[r], y[r], sig[r], data, signal, device=r)

    return Collective


def ring_allreduce(N: int, SIZE: int, dtype, op, *, calls: int = 1):
    """x[r] staged, `calls` ring allreduces on one [2(N-1), N] signal, a closing mesh barrier on its own
    signal, then the window as y[r] and the ring signal as sig[r]."""
    SR = max(2 * (N - 1), 1)

    @pl.program
    class RingAllReduce:
        @pl.function(type=pl.FunctionType.InCore)
        def kern(self, x: pl.Tensor[[1, SIZE], dtype], y: pl.Out[pl.Tensor[[1, SIZE], dtype]],
                 sig: pl.Out[pl.Tensor[[SR, N], pl.INT32]], data: pld.DistributedTensor[[1, SIZE], dtype],
                 signal: pld.DistributedTensor[[SR, N], pl.INT32],
                 fence: pld.DistributedTensor[[N, 1], pl.INT32]) -> tuple[pl.Tensor[[1, SIZE], dtype],
                                                                           pl.Tensor[[SR, N], pl.INT32]]:
            for c0 in pl.range(0, SIZE, 4096):
                w = pl.min(4096, SIZE - c0)
                t = pl.load(x, [0, c0], [1, 4096], valid_shape=[1, w])
                data = pl.store(t, [0, c0], data)
            for _ in pl.range(calls):
                data = pld.tensor.allreduce(data, signal, op=op, mode="ring")
            fence = pld.tensor.barrier(fence)
            for c1 in pl.range(0, SIZE, 4096):
                w1 = pl.min(4096, SIZE - c1)
                u = pl.load(data, [0, c1], [1, 4096], valid_shape=[1, w1])
                y = pl.store(u, [0, c1], y)
            for i in pl.range(SR):
                for j in pl.range(N):
                    v = pl.read(signal, [i, j])
                    sig = pl.write(sig, [i, j], v)
            return y, sig

        @pl.function(type=pl.FunctionType.Orchestration)
        def per_rank(self, x: pl.Tensor[[1, SIZE], dtype], y: pl.Out[pl.Tensor[[1, SIZE], dtype]],
                     sig: pl.Out[pl.Tensor[[SR, N], pl.INT32]], data: pld.DistributedTensor[[1, SIZE], dtype],
                     signal: pld.DistributedTensor[[SR, N], pl.INT32],
                     fence: pld.DistributedTensor[[N, 1], pl.INT32]) -> tuple[pl.Tensor[[1, SIZE], dtype],
                                                                               pl.Tensor[[SR, N], pl.INT32]]:
            y, sig = self.kern(x, y, sig, data, signal, fence)
            return y, sig

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[N, 1, SIZE], dtype], y: pl.Out[pl.Tensor[[N, 1, SIZE], dtype]],
                 sig: pl.Out[pl.Tensor[[N, SR, N], pl.INT32]]):
            data_buf = pld.alloc_window_buffer([1, SIZE], dtype=dtype)
            signal_buf = pld.alloc_window_buffer([SR, N], dtype=pl.INT32)
            fence_buf = pld.alloc_window_buffer([N, 1], dtype=pl.INT32)
            for r in pl.range(pld.world_size()):
                data = pld.window(data_buf, [1, SIZE], dtype=dtype)
                signal = pld.window(signal_buf, [SR, N], dtype=pl.INT32)
                fence = pld.window(fence_buf, [N, 1], dtype=pl.INT32)
                self.per_rank(x[r], y[r], sig[r], data, signal, fence, device=r)

    return RingAllReduce


def all_to_all_v(N: int, M: int, C: int):
    """Variable-row exchange: rank r sends send_counts[r][d] rows (clamped to [0, M]) to each rank d."""
    R = N * M

    @pl.program
    class AllToAllV:
        @pl.function(type=pl.FunctionType.InCore)
        def kern(self, x: pl.Tensor[[R, C], pl.FP32], counts: pl.Tensor[[N, 1], pl.INT32],
                 y: pl.Out[pl.Tensor[[R, C], pl.FP32]], rc: pl.Out[pl.Tensor[[N, 1], pl.INT32]],
                 data: pld.DistributedTensor[[R, C], pl.FP32], signal: pld.DistributedTensor[[N, 1], pl.INT32],
                 recv: pld.DistributedTensor[[N, 1], pl.INT32]) -> tuple[pl.Tensor[[R, C], pl.FP32],
                                                                          pl.Tensor[[N, 1], pl.INT32]]:
            data = pld.tensor.all_to_all_v(x, data, signal, counts, recv)
            u = pl.load(data, [0, 0], [R, C])
            y = pl.store(u, [0, 0], y)
            for i in pl.range(N):
                v = pl.read(recv, [i, 0])
                rc = pl.write(rc, [i, 0], v)
            return y, rc

        @pl.function(type=pl.FunctionType.Orchestration)
        def per_rank(self, x: pl.Tensor[[R, C], pl.FP32], counts: pl.Tensor[[N, 1], pl.INT32],
                     y: pl.Out[pl.Tensor[[R, C], pl.FP32]], rc: pl.Out[pl.Tensor[[N, 1], pl.INT32]],
                     data: pld.DistributedTensor[[R, C], pl.FP32], signal: pld.DistributedTensor[[N, 1], pl.INT32],
                     recv: pld.DistributedTensor[[N, 1], pl.INT32]) -> tuple[pl.Tensor[[R, C], pl.FP32],
                                                                              pl.Tensor[[N, 1], pl.INT32]]:
            y, rc = self.kern(x, counts, y, rc, data, signal, recv)
            return y, rc

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[N, R, C], pl.FP32], counts: pl.Tensor[[N, N, 1], pl.INT32],
                 y: pl.InOut[pl.Tensor[[N, R, C], pl.FP32]], rc: pl.Out[pl.Tensor[[N, N, 1], pl.INT32]]):
            data_buf = pld.alloc_window_buffer([R, C], dtype=pl.FP32)
            signal_buf = pld.alloc_window_buffer([N, 1], dtype=pl.INT32)
            recv_buf = pld.alloc_window_buffer([N, 1], dtype=pl.INT32)
            for r in pl.range(pld.world_size()):
                data = pld.window(data_buf, [R, C], dtype=pl.FP32)
                signal = pld.window(signal_buf, [N, 1], dtype=pl.INT32)
                recv = pld.window(recv_buf, [N, 1], dtype=pl.INT32)
                self.per_rank(x[r], counts[r], y[r], rc[r], data, signal, recv, device=r)

    return AllToAllV


def host_allreduce(N: int, SIZE: int, op=pld.ReduceOp.Sum):
    """A host-orchestrator allreduce with no signal: stage per rank, one host call, read back per rank."""

    @pl.program
    class HostAllReduce:
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
            data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
            for r in pl.range(pld.world_size()):
                self.stage(x[r], data, device=r)
            data = pld.tensor.allreduce(data, op=op)
            for r in pl.range(pld.world_size()):
                self.read(data, y[r], device=r)

    return HostAllReduce
