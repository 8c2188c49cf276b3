"""A kernel stages a long row into its window in UB-sized chunks (a loop carrying the window), then
`data = pld.tensor.allreduce(staged, ...)`: the collective works in place on the window, so rebinding
the parameter's name writes nothing more (no whole-row copy that could not fit the UB)."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.ir.expr import Call
from pypto.ir.visitor import collect

CHUNK = 8192


def staged_allreduce(ranks: int, size: int):
    @pl.program
    class StagedAllReduce:
        @pl.function(type=pl.FunctionType.InCore)
        def step(self, x: pl.Tensor[[1, size], pl.FP32], y: pl.Out[pl.Tensor[[1, size], pl.FP32]],
                 data: pl.InOut[pld.DistributedTensor[[1, size], pl.FP32]],
                 signal: pl.InOut[pld.DistributedTensor[[ranks, 1], pl.INT32]]) -> pl.Tensor[[1, size], pl.FP32]:
            for c, (d,) in pl.range(0, size, CHUNK, init_values=(data,)):
                n = pl.min(CHUNK, size - c)
                t = pl.load(x, [0, c], [1, CHUNK], valid_shape=[1, n])
                d = pl.store(t, [0, c], d)
                staged = pl.yield_(d)
            data = pld.tensor.allreduce(staged, signal, op=pld.ReduceOp.Sum)
            for c, (o,) in pl.range(0, size, CHUNK, init_values=(y,)):
                n = pl.min(CHUNK, size - c)
                t = pl.load(data, [0, c], [1, CHUNK], valid_shape=[1, n])
                o = pl.store(t, [0, c], o)
                done = pl.yield_(o)
            return done

        @pl.function(type=pl.FunctionType.Orchestration)
        def chip(self, x: pl.Tensor[[1, size], pl.FP32], y: pl.Out[pl.Tensor[[1, size], pl.FP32]],
                 data: pl.InOut[pld.DistributedTensor[[1, size], pl.FP32]],
                 signal: pl.InOut[pld.DistributedTensor[[ranks, 1], pl.INT32]]) -> pl.Tensor[[1, size], pl.FP32]:
            return self.step(x, y, data, signal)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[ranks, 1, size], pl.FP32], y: pl.Out[pl.Tensor[[ranks, 1, size], pl.FP32]]):
            data_buf = pld.alloc_window_buffer([1, size], dtype=pl.FP32)
            signal_buf = pld.alloc_window_buffer([ranks, 1], dtype=pl.INT32)
            for r in pl.range(pld.world_size()):
                data = pld.window(data_buf, [1, size], dtype=pl.FP32)
                signal = pld.window(signal_buf, [ranks, 1], dtype=pl.INT32)
                self.chip(x[r], y[r], data, signal, device=r)

    return StagedAllReduce


def test_the_rebinding_adds_no_write_back():
    step = staged_allreduce(2, 100).functions["step"]
    ops = [c.op.name for c in collect(step.body, lambda n: isinstance(n, Call) and not n.is_function_call())]
    assert "pld.tensor.allreduce" in ops and "tensor.assemble" not in ops


@pytest.mark.parametrize("ranks", [2, 3])
def test_a_row_longer_than_the_ub_reduces_in_place(ranks):
    size = 8 * CHUNK + 1          # 256 KiB of FP32: one whole-row tile would not fit the 188 KiB UB
    c = ir.compile(staged_allreduce(ranks, size), platform="a2a3sim",
                   distributed_config=DistributedConfig(device_ids=list(range(ranks))))
    x = np.random.default_rng(ranks).standard_normal((ranks, 1, size)).astype(np.float32)
    y = np.zeros_like(x)
    c(x, y)
    np.testing.assert_allclose(y, np.broadcast_to(x.sum(axis=0, keepdims=True), x.shape), rtol=1e-5, atol=1e-5)
