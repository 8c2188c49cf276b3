"""Host allgather / all_to_all / all_to_all_v with per-rank local inputs (stacked host tensors), on 4 ranks.

The HOST orchestrator calls the collective itself; LowerHostTensorCollectives turns it into a builtin
chip program dispatched on every rank, rank r reading its shard x[r] of the stacked input."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.errors import TypeCheckError
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.ir.expr import Call
from pypto.ir.visitor import collect
from pypto.runtime import RunConfig

N, C = 4, 16


def host_exchange(kind: str, XR: int, R: int):
    """x: [N, XR, C] stacked per-rank inputs → the host collective into an [R, C] window, surfaced as y[r]."""

    @pl.program
    class HostExchange:
        @pl.function(type=pl.FunctionType.InCore)
        def read_k(self, data: pld.DistributedTensor[[R, C], pl.FP32],
                   y: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
            t = pl.load(data, [0, 0], [R, C])
            y = pl.store(t, [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def read(self, data: pld.DistributedTensor[[R, C], pl.FP32],
                 y: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
            return self.read_k(data, y)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[N, XR, C], pl.FP32], y: pl.Out[pl.Tensor[[N, R, C], pl.FP32]]):
            buf = pld.alloc_window_buffer([R, C], dtype=pl.FP32)
            sbuf = pld.alloc_window_buffer([N, 1], dtype=pl.INT32)
            data = pld.window(buf, [R, C], dtype=pl.FP32)
            sig = pld.window(sbuf, [N, 1], dtype=pl.INT32)
            if kind == "allgather":
                data = pld.tensor.allgather(x, data, sig)
            else:
                data = pld.tensor.all_to_all(x, data, sig)
            for r in pl.range(pld.world_size()):
                self.read(data, y[r], device=r)

    return HostExchange


def host_all_to_all_v(M: int):
    R = N * M

    @pl.program
    class HostAllToAllV:
        @pl.function(type=pl.FunctionType.InCore)
        def read_k(self, data: pld.DistributedTensor[[R, C], pl.FP32], recv: pld.DistributedTensor[[N, 1], pl.INT32],
                   y: pl.Out[pl.Tensor[[R, C], pl.FP32]], rc: pl.Out[pl.Tensor[[N, 1], pl.INT32]]
                   ) -> tuple[pl.Tensor[[R, C], pl.FP32], pl.Tensor[[N, 1], pl.INT32]]:
            t = pl.load(data, [0, 0], [R, C])
            y = pl.store(t, [0, 0], y)
            for i in pl.range(N):
                v = pl.read(recv, [i, 0])
                rc = pl.write(rc, [i, 0], v)
            return y, rc

        @pl.function(type=pl.FunctionType.Orchestration)
        def read(self, data: pld.DistributedTensor[[R, C], pl.FP32], recv: pld.DistributedTensor[[N, 1], pl.INT32],
                 y: pl.Out[pl.Tensor[[R, C], pl.FP32]], rc: pl.Out[pl.Tensor[[N, 1], pl.INT32]]
                 ) -> tuple[pl.Tensor[[R, C], pl.FP32], pl.Tensor[[N, 1], pl.INT32]]:
            y, rc = self.read_k(data, recv, y, rc)
            return y, rc

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[N, R, C], pl.FP32], counts: pl.Tensor[[N, N, 1], pl.INT32],
                 y: pl.InOut[pl.Tensor[[N, R, C], pl.FP32]], rc: pl.Out[pl.Tensor[[N, N, 1], pl.INT32]]):
            buf = pld.alloc_window_buffer([R, C], dtype=pl.FP32)
            sbuf = pld.alloc_window_buffer([N, 1], dtype=pl.INT32)
            rbuf = pld.alloc_window_buffer([N, 1], dtype=pl.INT32)
            data = pld.window(buf, [R, C], dtype=pl.FP32)
            sig = pld.window(sbuf, [N, 1], dtype=pl.INT32)
            recv = pld.window(rbuf, [N, 1], dtype=pl.INT32)
            data = pld.tensor.all_to_all_v(x, data, sig, counts, recv)
            for r in pl.range(pld.world_size()):
                self.read(data, recv, y[r], rc[r], device=r)

    return HostAllToAllV


def _compile(prog):
    return ir.compile(prog, platform="a2a3sim", distributed_config=DistributedConfig(device_ids=list(range(N))))




def test_host_allgather_of_local_shards():
    c = _compile(host_exchange("allgather", 1, N))
    host = c.host_function
    assert not collect(host.body, lambda n: isinstance(n, Call) and not n.is_function_call()
                       and n.op.name == "pld.tensor.allgather")
    x = np.random.default_rng(0).standard_normal((N, 1, C)).astype(np.float32)
    for seed in range(2):
        y = np.zeros((N, N, C), np.float32)
        c(x, y, config=RunConfig(sim_schedule="random", sim_seed=seed))
        for r in range(N):
            np.testing.assert_array_equal(y[r], x[:, 0, :])
    assert all((b == 0).all() for b in c.last_windows[1].bufs), "the signal ends at zero"


def test_host_all_to_all_of_local_shards():
    c = _compile(host_exchange("all_to_all", N, N))
    x = np.random.default_rng(1).standard_normal((N, N, C)).astype(np.float32)
    y = np.zeros((N, N, C), np.float32)
    c(x, y, config=RunConfig(sim_schedule="random", sim_seed=3))
    np.testing.assert_array_equal(y, x.transpose(1, 0, 2))
    assert all((b == 0).all() for b in c.last_windows[1].bufs)


def test_host_all_to_all_v_with_local_counts():
    M = 3
    c = _compile(host_all_to_all_v(M))
    rng = np.random.default_rng(6)
    x = rng.standard_normal((N, N * M, C)).astype(np.float32)
    counts = rng.integers(0, M + 1, (N, N, 1)).astype(np.int32)
    counts[0, 1, 0] = 0                                               # a zero-row edge
    y = np.zeros((N, N * M, C), np.float32)
    rc = np.full((N, N, 1), -5, np.int32)
    c(x, counts, y, rc, config=RunConfig(sim_schedule="random", sim_seed=1))
    for r in range(N):
        for s in range(N):
            cnt = int(counts[s, r, 0])
            assert rc[r, s, 0] == cnt
            np.testing.assert_array_equal(y[r, s * M:s * M + cnt], x[s, r * M:r * M + cnt])
            assert (y[r, s * M + cnt:(s + 1) * M] == 0).all()


@pytest.mark.parametrize("kind, rows, want", [("allgather", N, "this rank's one chunk, \\[1, 16\\], got \\[4, 16\\]"),
                                              ("all_to_all", 2, "one row per rank of the window, \\[4, 16\\], got "
                                                                "\\[2, 16\\]")])
def test_a_shard_of_the_wrong_row_count_is_refused_at_the_collective(kind, rows, want):
    """Before: an allgather shard of N rows ran, and the simulator's builtin failed reshaping it (a raw
    ValueError at run time); the InCore recipe would have sent row 0 only. Now a TypeCheckError at the call."""
    with pytest.raises(TypeCheckError, match=want) as got:
        _compile(host_exchange(kind, rows, N))
    assert got.value.span is not None and got.value.span.is_known()
