"""Mesh allreduce with run-time extents (seed 001): a window whose length is dynamic (the credit total
1 + chunk_count is a runtime expression; numpy equality with the signal back at zero after back-to-back
calls), and a static window with a symbolic valid_shape (the physical rectangle is the tile)."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.ir.expr import Call, ConstInt, UnaryExpr
from pypto.ir.visitor import collect
from pypto.passes.lower_composite_ops import lower_composite_ops
from pypto.runtime import RunConfig

M = pl.dynamic("M")
V = pl.dynamic("V")


def dynamic_allreduce(N: int, SIZE: int, calls: int, op=pld.ReduceOp.Sum, mode: str = "mesh"):
    """The kernel sees [1, M] windows (M bound at run time from the host's [1, SIZE] window). A ring
    signal has one row per round; each rank's own cells are back at zero when its call returns."""
    SR, SC = (2 * (N - 1), N) if mode == "ring" else (N, 1)

    @pl.program
    class DynamicAllReduce:
        @pl.function(type=pl.FunctionType.InCore)
        def kern(self, x: pl.Tensor[[1, M], pl.FP32], y: pl.Out[pl.Tensor[[1, M], pl.FP32]],
                 sig: pl.Out[pl.Tensor[[SR, SC], pl.INT32]], data: pl.InOut[pld.DistributedTensor[[1, M], pl.FP32]],
                 signal: pl.InOut[pld.DistributedTensor[[SR, SC], pl.INT32]]) -> tuple[pl.Tensor[[1, M], pl.FP32],
                                                                                    pl.Tensor[[SR, SC], pl.INT32]]:
            for c0 in pl.range(0, M, 4096):
                w = pl.min(4096, M - c0)
                t = pl.load(x, [0, c0], [1, 4096], valid_shape=[1, w])
                data = pl.store(t, [0, c0], data)
            for _ in pl.unroll(calls):
                data = pld.tensor.allreduce(data, signal, op=op, mode=mode)
            if mode == "mesh":
                signal = pld.tensor.barrier(signal)
            for c1 in pl.range(0, M, 4096):
                w1 = pl.min(4096, M - c1)
                u = pl.load(data, [0, c1], [1, 4096], valid_shape=[1, w1])
                y = pl.store(u, [0, c1], y)
            for i in pl.range(SR):
                for j in pl.range(SC):
                    v = pl.read(signal, [i, j])
                    sig = pl.write(sig, [i, j], v)
            return y, sig

        @pl.function(type=pl.FunctionType.Orchestration)
        def per_rank(self, x: pl.Tensor[[1, M], pl.FP32], y: pl.Out[pl.Tensor[[1, M], pl.FP32]],
                     sig: pl.Out[pl.Tensor[[SR, SC], pl.INT32]], data: pld.DistributedTensor[[1, M], pl.FP32],
                     signal: pld.DistributedTensor[[SR, SC], pl.INT32]) -> tuple[pl.Tensor[[1, M], pl.FP32],
                                                                                pl.Tensor[[SR, SC], pl.INT32]]:
            y, sig = self.kern(x, y, sig, data, signal)
            return y, sig

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[N, 1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[N, 1, SIZE], pl.FP32]],
                 sig: pl.Out[pl.Tensor[[N, SR, SC], pl.INT32]]):
            data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
            signal_buf = pld.alloc_window_buffer([SR, SC], dtype=pl.INT32)
            for r in pl.range(pld.world_size()):
                data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
                signal = pld.window(signal_buf, [SR, SC], dtype=pl.INT32)
                self.per_rank(x[r], y[r], sig[r], data, signal, device=r)

    return DynamicAllReduce


def test_dynamic_length_recipe_walks_full_chunks_and_retires_a_runtime_total():
    kern = lower_composite_ops()(dynamic_allreduce(2, 5000, 1)).get_function("kern")
    calls = collect(kern.body, lambda n: isinstance(n, Call) and not n.is_function_call())
    view = next(c for c in calls if c.op.name == "tensor.view")
    assert view.args[1].elements[1] is not None and not isinstance(view.args[1].elements[1], ConstInt)
    epilogue = [c for c in calls if c.op.name == "pld.system.notify" and isinstance(c.args[3], UnaryExpr)]
    assert epilogue and not isinstance(epilogue[0].args[3].operand, ConstInt)
    loads = [c for c in calls if c.op.name == "pld.tile.remote_load"]
    assert [e.value for e in loads[0].args[3].elements] == [1, 4096]


@pytest.mark.parametrize("n,size,calls,mode", [(2, 5000, 2, "mesh"), (3, 17, 1, "mesh"), (3, 4100, 2, "ring")])
def test_dynamic_length_allreduce_matches_numpy_and_clears_the_signal(n, size, calls, mode):
    c = ir.compile(dynamic_allreduce(n, size, calls, mode=mode), platform="a2a3sim",
                   distributed_config=DistributedConfig(device_ids=list(range(n))))
    shape = (n, 2 * (n - 1), n) if mode == "ring" else (n, n, 1)
    for seed in range(2):
        x = np.random.default_rng(seed).uniform(-1, 1, (n, 1, size)).astype(np.float32)
        y, sig = np.zeros_like(x), np.full(shape, -1, np.int32)
        c(x, y, sig, config=RunConfig(sim_schedule="random", sim_seed=seed))
        ref = x.astype(np.float64)
        for _ in range(calls):
            ref = np.broadcast_to(ref.sum(axis=0, keepdims=True), x.shape).astype(np.float32).astype(np.float64)
        np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)
        assert (sig == 0).all(), "the runtime credit total is retired"


def symbolic_valid_allreduce(N: int, R: int, C: int, VR: int, VC: int, mode: str = "mesh"):
    """The reduce kernel sees the [R, C] window with valid_shape [VR, V]; V is bound at run time by the
    `cols` tensor's shape (VC on the host)."""
    SR, SC = (2 * (N - 1), N) if mode == "ring" else (N, 1)
    W = pld.DistributedTensor[[R, C], pl.FP32]
    P = pld.DistributedTensor[[R, C], pl.FP32, pl.TensorView(valid_shape=[VR, V])]

    @pl.program
    class SymbolicValid:
        @pl.function(type=pl.FunctionType.InCore)
        def stage(self, x: pl.Tensor[[R, C], pl.FP32], data: pl.InOut[W]) -> W:
            t = pl.load(x, [0, 0], [R, C])
            data = pl.store(t, [0, 0], data)
            return data

        @pl.function(type=pl.FunctionType.InCore)
        def reduce(self, cols: pl.Tensor[[1, V], pl.INT32], data: pl.InOut[P],
                   signal: pl.InOut[pld.DistributedTensor[[SR, SC], pl.INT32]]) -> P:
            data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Max, mode=mode)
            return data

        @pl.function(type=pl.FunctionType.InCore)
        def unstage(self, data: W, y: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
            u = pl.load(data, [0, 0], [R, C])
            y = pl.store(u, [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def per_rank(self, x: pl.Tensor[[R, C], pl.FP32], cols: pl.Tensor[[1, V], pl.INT32],
                     y: pl.Out[pl.Tensor[[R, C], pl.FP32]], data: W,
                     signal: pld.DistributedTensor[[SR, SC], pl.INT32]) -> pl.Tensor[[R, C], pl.FP32]:
            data = self.stage(x, data)
            data = self.reduce(cols, data, signal)
            y = self.unstage(data, y)
            return y

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[N, R, C], pl.FP32], cols: pl.Tensor[[N, 1, VC], pl.INT32],
                 y: pl.Out[pl.Tensor[[N, R, C], pl.FP32]]):
            data_buf = pld.alloc_window_buffer([R, C], dtype=pl.FP32)
            signal_buf = pld.alloc_window_buffer([SR, SC], dtype=pl.INT32)
            for r in pl.range(pld.world_size()):
                data = pld.window(data_buf, [R, C], dtype=pl.FP32)
                signal = pld.window(signal_buf, [SR, SC], dtype=pl.INT32)
                self.per_rank(x[r], cols[r], y[r], data, signal, device=r)

    return SymbolicValid


def test_symbolic_valid_shape_uses_the_physical_rectangle_and_matches_numpy():
    N, R, C, VR, VC = 3, 8, 64, 3, 20
    prog = symbolic_valid_allreduce(N, R, C, VR, VC)
    kern = lower_composite_ops()(prog).get_function("reduce")
    load = next(c for c in collect(kern.body, lambda n: isinstance(n, Call) and not n.is_function_call())
                if c.op.name == "tile.load")
    assert [e.value for e in load.args[2].elements] == [R, C]
    assert load.args[3].elements[0].value == VR and not isinstance(load.args[3].elements[1], ConstInt)
    c = ir.compile(prog, platform="a2a3sim", distributed_config=DistributedConfig(device_ids=list(range(N))))
    x = np.random.default_rng(4).standard_normal((N, R, C)).astype(np.float32)
    cols = np.zeros((N, 1, VC), np.int32)                         # its width binds V = VC at run time
    y = np.zeros_like(x)
    c(x, cols, y, config=RunConfig(sim_schedule="random", sim_seed=3))
    want = x.copy()
    want[:, :VR, :VC] = x[:, :VR, :VC].max(axis=0)
    np.testing.assert_array_equal(y, want)


def test_ring_takes_a_symbolic_linear_prefix():
    N, R, C, VC = 3, 4, 32, 20                      # valid [1, V] of [4, 32]: the first V elements of row 0
    c = ir.compile(symbolic_valid_allreduce(N, R, C, 1, VC, mode="ring"), platform="a2a3sim",
                   distributed_config=DistributedConfig(device_ids=list(range(N))))
    x = np.random.default_rng(5).standard_normal((N, R, C)).astype(np.float32)
    y = np.zeros_like(x)
    c(x, np.zeros((N, 1, VC), np.int32), y, config=RunConfig(sim_schedule="random", sim_seed=2))
    want = x.copy()
    want[:, 0, :VC] = x[:, 0, :VC].max(axis=0)
    np.testing.assert_array_equal(y, want)
