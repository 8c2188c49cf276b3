"""A HOST orchestrator that writes its chip work inline (pl.at CHIP blocks, dispatched without device=),
and programs whose rank count is a symbolic dim (`NR = pl.dynamic(...)`, `NR * SIZE` in a shape)."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.errors import TypeCheckError
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.ir.expr import BinaryExpr, ConstInt

ROWS = 32
NR = pl.dynamic("NR")
COLS = 48


@pl.program
class InlineChipWork:
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[ROWS, ROWS], pl.FP32], y: pl.Tensor[[ROWS, ROWS], pl.FP32],
             prod: pl.Out[pl.Tensor[[ROWS, ROWS], pl.FP32]], diff: pl.Out[pl.Tensor[[ROWS, ROWS], pl.FP32]]):
        with pl.at(level=pl.Level.CHIP, role=pl.Role.Orchestrator):
            with pl.at(level=pl.Level.CORE_GROUP):
                t = pl.mul(x, y)
                pl.assemble(prod, t, [0, 0])
        with pl.at(level=pl.Level.CHIP, role=pl.Role.Orchestrator):
            with pl.at(level=pl.Level.CORE_GROUP):
                u = pl.sub(x, y)
                pl.assemble(diff, u, [0, 0])


@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_inline_chip_blocks_run_round_robin_over_the_chips(ranks):
    c = ir.compile(InlineChipWork, platform="a2a3sim", distributed_config=DistributedConfig(device_ids=list(range(ranks))))
    assert set(c.chip.lowered.functions) >= {"host_chip_orch_0", "host_chip_orch_1"}
    rng = np.random.default_rng(ranks)
    x, y = (rng.standard_normal((ROWS, ROWS)).astype(np.float32) for _ in range(2))
    prod, diff = np.zeros_like(x), np.zeros_like(x)
    c(x, y, prod, diff)
    np.testing.assert_allclose(prod, x * y, rtol=1e-6)
    np.testing.assert_allclose(diff, x - y, rtol=1e-6)
    c(x, 2 * y, prod, diff)                     # the round-robin count starts again each call
    np.testing.assert_allclose(diff, x - 2 * y, rtol=1e-6)


def test_a_window_dispatch_still_needs_a_device():
    @pl.program
    class NoDevice:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[1, 16], pl.FP32], w: pl.InOut[pld.DistributedTensor[[1, 16], pl.FP32]]):
            t = pl.load(x, [0, 0], [1, 16])
            pl.store(t, [0, 0], w)

        @pl.function(type=pl.FunctionType.Orchestration)
        def chip(self, x: pl.Tensor[[1, 16], pl.FP32], w: pl.InOut[pld.DistributedTensor[[1, 16], pl.FP32]]):
            self.k(x, w)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[1, 16], pl.FP32]):
            buf = pld.alloc_window_buffer([1, 16], dtype=pl.FP32)
            w = pld.window(buf, [1, 16], dtype=pl.FP32)
            self.chip(x, w)

    c = ir.compile(NoDevice, platform="a2a3sim", distributed_config=DistributedConfig(device_ids=[0, 1]))
    with pytest.raises(TypeCheckError, match="with a window but without device=r"):
        c(np.ones((1, 16), np.float32))


def test_symbolic_dims_take_python_arithmetic():
    n = pl.dynamic("n")
    e = n * 4 + 1
    assert isinstance(e, BinaryExpr) and e.op == "add" and isinstance(e.rhs, ConstInt)
    assert isinstance(3 * n, BinaryExpr) and (3 * n).lhs.value == 3
    assert isinstance(n // 2 - n % 2, BinaryExpr)
    with pytest.raises(TypeError):
        n * 1.5                                   # only integer arithmetic builds a dim
    with pytest.raises(TypeError):
        n * pl.dynamic("f", pl.FP32)


@pl.program
class GatherByDynamicRanks:
    """Each rank publishes its row, a barrier, then every rank reads every peer's row into a
    [1, NR * COLS] output: a composite dim that Python evaluates when the class body runs."""

    @pl.function(type=pl.FunctionType.InCore)
    def gather(self, x: pl.Tensor[[1, COLS], pl.FP32], out: pl.Out[pl.Tensor[[1, NR * COLS], pl.FP32]],
               data: pl.InOut[pld.DistributedTensor[[1, COLS], pl.FP32]],
               signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]) -> pl.Tensor[[1, NR * COLS], pl.FP32]:
        nranks = pld.nranks(pld.get_comm_ctx(data))
        data = pl.store(pl.load(x, [0, 0], [1, COLS]), [0, 0], data)
        signal = pld.tensor.barrier(signal)
        for i in pl.range(nranks):
            row = pld.tile.remote_load(data, peer=i, offsets=[0, 0], shape=[1, COLS])
            out = pl.store(row, [0, i * COLS], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def gather_orch(self, x: pl.Tensor[[1, COLS], pl.FP32], out: pl.Out[pl.Tensor[[1, NR * COLS], pl.FP32]],
                    data: pl.InOut[pld.DistributedTensor[[1, COLS], pl.FP32]],
                    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]) -> pl.Tensor[[1, NR * COLS], pl.FP32]:
        return self.gather(x, out, data, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[NR, 1, COLS], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, NR * COLS], pl.FP32]]):
        data_buf = pld.alloc_window_buffer(COLS * pl.FP32.get_byte())
        signal_buf = pld.alloc_window_buffer(pld.world_size() * pl.INT32.get_byte())
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, COLS], dtype=pl.FP32)
            signal = pld.window(signal_buf, [pld.world_size(), 1], dtype=pl.INT32)
            self.gather_orch(x[r], y[r], data, signal, device=r)


@pytest.mark.parametrize("ranks", [2, 3])
def test_a_rank_count_dim_in_shapes_and_window_sizes(ranks):
    c = ir.compile(GatherByDynamicRanks, platform="a2a3sim",
                   distributed_config=DistributedConfig(device_ids=list(range(ranks))))
    x = np.random.default_rng(7).standard_normal((ranks, 1, COLS)).astype(np.float32)
    y = np.zeros((ranks, 1, ranks * COLS), np.float32)
    c(x, y)
    np.testing.assert_array_equal(y, np.broadcast_to(x.reshape(1, 1, ranks * COLS), y.shape))


@pl.program
class HostReduceScatterDynamicRows:
    @pl.function(type=pl.FunctionType.InCore)
    def stage(self, x: pl.Tensor[[NR, COLS], pl.FP32], data: pl.InOut[pld.DistributedTensor[[NR, COLS], pl.FP32]],
              n: pl.Scalar[pl.INT32]) -> pld.DistributedTensor[[NR, COLS], pl.FP32]:
        for i in pl.range(n):
            data = pl.store(pl.load(x, [i, 0], [1, COLS]), [i, 0], data)
        return data

    @pl.function(type=pl.FunctionType.Orchestration)
    def stage_orch(self, x: pl.Tensor[[NR, COLS], pl.FP32], data: pl.InOut[pld.DistributedTensor[[NR, COLS], pl.FP32]],
                   n: pl.Scalar[pl.INT32]) -> pld.DistributedTensor[[NR, COLS], pl.FP32]:
        return self.stage(x, data, n)

    @pl.function(type=pl.FunctionType.InCore)
    def pick(self, data: pld.DistributedTensor[[NR, COLS], pl.FP32], out: pl.Out[pl.Tensor[[1, COLS], pl.FP32]],
             me: pl.Scalar[pl.INT32]) -> pl.Tensor[[1, COLS], pl.FP32]:
        return pl.store(pl.load(data, [me, 0], [1, COLS]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def pick_orch(self, data: pld.DistributedTensor[[NR, COLS], pl.FP32], out: pl.Out[pl.Tensor[[1, COLS], pl.FP32]],
                  me: pl.Scalar[pl.INT32]) -> pl.Tensor[[1, COLS], pl.FP32]:
        return self.pick(data, out, me)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[NR, NR, COLS], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, COLS], pl.FP32]]):
        data_buf = pld.alloc_window_buffer(NR * COLS * pl.FP32.get_byte())
        signal_buf = pld.alloc_window_buffer(pld.world_size() * pl.INT32.get_byte())
        for r in pl.range(pld.world_size()):
            self.stage_orch(x[r], pld.window(data_buf, [NR, COLS], dtype=pl.FP32), pld.world_size(), device=r)
        data = pld.window(data_buf, [NR, COLS], dtype=pl.FP32)
        signal = pld.window(signal_buf, [pld.world_size()], dtype=pl.INT32)
        data = pld.tensor.reduce_scatter(data, signal, op=pld.ReduceOp.Max)
        for r in pl.range(pld.world_size()):
            self.pick_orch(data, y[r], r, device=r)


@pytest.mark.parametrize("ranks", [2, 4])
def test_host_reduce_scatter_on_a_window_with_a_rank_count_row_dim(ranks):
    """The window's rows are NR (symbolic): the recipe addresses row `rank` and needs only the static columns."""
    c = ir.compile(HostReduceScatterDynamicRows, platform="a2a3sim",
                   distributed_config=DistributedConfig(device_ids=list(range(ranks))))
    x = np.random.default_rng(ranks).standard_normal((ranks, ranks, COLS)).astype(np.float32)
    y = np.zeros((ranks, 1, COLS), np.float32)
    c(x, y)
    np.testing.assert_array_equal(y[:, 0, :], x.max(axis=0))


@pl.program
class HostScratchReturnStyle:
    """A host intermediate from pl.create_tensor carries one chip's result into the next dispatch; the host
    returns its Out tensor, so the program can be called with its input alone."""

    @pl.function(type=pl.FunctionType.Orchestration)
    def double(self, x: pl.Tensor[[ROWS, ROWS], pl.FP32], t: pl.Out[pl.Tensor[[ROWS, ROWS], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.assemble(t, pl.add(x, x), [0, 0])

    @pl.function(type=pl.FunctionType.Orchestration)
    def combine(self, x: pl.Tensor[[ROWS, ROWS], pl.FP32], t: pl.Tensor[[ROWS, ROWS], pl.FP32],
                y: pl.Out[pl.Tensor[[ROWS, ROWS], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.assemble(y, pl.mul(t, x), [0, 0])

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[ROWS, ROWS], pl.FP32],
             y: pl.Out[pl.Tensor[[ROWS, ROWS], pl.FP32]]) -> pl.Tensor[[ROWS, ROWS], pl.FP32]:
        t: pl.Tensor[[ROWS, ROWS], pl.FP32] = pl.create_tensor([ROWS, ROWS], dtype=pl.FP32)
        self.double(x, t)
        self.combine(x, t, y)
        return y


def test_host_intermediates_and_return_style():
    c = ir.compile(HostScratchReturnStyle, platform="a5sim", distributed_config=DistributedConfig(device_ids=[0]))
    x = np.random.default_rng(5).standard_normal((ROWS, ROWS)).astype(np.float32)
    y = c(x)                                     # return style: y is allocated for the call
    assert isinstance(y, np.ndarray) and y.shape == (ROWS, ROWS)
    np.testing.assert_allclose(y, 2 * x * x, rtol=1e-6)
    into = np.zeros_like(x)
    assert c(x, into) is None                    # in place, as before
    np.testing.assert_allclose(into, 2 * x * x, rtol=1e-6)
    with pytest.raises(TypeCheckError, match="takes 2 arguments"):
        c()
