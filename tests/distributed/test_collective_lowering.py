"""LowerCompositeOps on InCore pld.tensor.* collectives: recipe shapes pinned by the reference tests (seed 001)."""

from __future__ import annotations

import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto.errors import PyptoError, UnsupportedError
from pypto.ir.equality import structural_equal
from pypto.ir.expr import Call, ConstInt, UnaryExpr
from pypto.ir.stmt import ForStmt, IfStmt
from pypto.ir.visitor import collect
from pypto.passes.lower_composite_ops import lower_composite_ops


def reduce_step(size, op=pld.ReduceOp.Sum, dtype=pl.FP32):
    @pl.program
    class ReduceStep:
        @pl.function(type=pl.FunctionType.InCore)
        def reduce_step(self, data: pl.InOut[pld.DistributedTensor[[1, size], dtype]],
                        signal: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]]) -> pld.DistributedTensor[[1, size], dtype]:
            data = pld.tensor.allreduce(data, signal, op=op)
            return data
    return ReduceStep


def barriers(n_calls):
    @pl.program
    class Barriers:
        @pl.function(type=pl.FunctionType.InCore)
        def sync(self, signal: pl.InOut[pld.DistributedTensor[[4, 1], pl.INT32]]) -> pld.DistributedTensor[[4, 1], pl.INT32]:
            signal = pld.tensor.barrier(signal)
            if n_calls > 1:
                signal = pld.tensor.barrier(signal)
            return signal
    return Barriers


def ops_of(program, name):
    return [c for c in collect(program.get_function(next(iter(program.functions))).body,
                               lambda n: isinstance(n, Call) and not n.is_function_call()) if c.op.name == name]


def count(program, cls):
    f = program.get_function(next(iter(program.functions)))
    return len(collect(f.body, lambda n: isinstance(n, cls)))


def test_barrier_recipe_three_for_three_if_and_rebind():
    after = lower_composite_ops()(barriers(1))
    assert not ops_of(after, "pld.tensor.barrier")
    assert count(after, ForStmt) == 3 and count(after, IfStmt) == 3
    assert all(c.kwargs["op"] is pld.NotifyOp.AtomicAdd for c in ops_of(after, "pld.system.notify"))
    assert all(c.kwargs["cmp"] is pld.WaitCmp.Ge for c in ops_of(after, "pld.system.wait"))
    assert ops_of(after, "pld.system.notify")[-1].args[3].value == -1        # the epilogue retires the credit


def test_wait_thresholds_restart_at_one_per_call():
    after = lower_composite_ops()(barriers(2))
    assert [w.args[2].value for w in ops_of(after, "pld.system.wait")] == [1, 1]
    assert [n.args[3].value for n in ops_of(after, "pld.system.notify")] == [1, -1, 1, -1]


@pytest.mark.parametrize("size", [1, 3, 17, 4096, 4097, 65537])
def test_mesh_allreduce_recipe_shape(size):
    after = lower_composite_ops()(reduce_step(size))
    names = {c.op.name for c in collect(after.get_function("reduce_step").body,
                                        lambda n: isinstance(n, Call) and not n.is_function_call())}
    assert "pld.tensor.allreduce" not in names
    assert {"pld.get_comm_ctx", "pld.nranks", "pld.rank", "pld.system.notify", "pld.system.wait",
            "pld.tile.remote_load", "tile.add", "tile.load", "tile.store"} <= names
    f = after.get_function("reduce_step")
    loops = collect(f.body, lambda n: isinstance(n, ForStmt))
    assert len(loops) == 7 and len(collect(f.body, lambda n: isinstance(n, IfStmt))) == 6
    chunk = [lp for lp in loops if isinstance(lp.stop, ConstInt) and lp.stop.value == size]
    assert len(chunk) == 1 and chunk[0].step.value == min(4096, -(-size // 8) * 8)
    assert all(len(r.args) == 5 for r in ops_of(after, "pld.tile.remote_load"))
    reset = ops_of(after, "pld.system.notify")[-1].args[3]
    assert reset.value == -(1 + -(-size // chunk[0].step.value))


@pytest.mark.parametrize("op,tile_op", [(pld.ReduceOp.Sum, "tile.add"), (pld.ReduceOp.Max, "tile.maximum"),
                                        (pld.ReduceOp.Min, "tile.minimum"), (pld.ReduceOp.Prod, "tile.mul")])
def test_reduce_op_maps_to_exactly_one_tile_op(op, tile_op):
    after = lower_composite_ops()(reduce_step(64, op))
    present = {n for n in ("tile.add", "tile.maximum", "tile.minimum", "tile.mul") if ops_of(after, n)}
    assert present == {tile_op}


def test_fp16_chunks_are_16_kib():
    after = lower_composite_ops()(reduce_step(65537, dtype=pl.FP16))
    loops = collect(after.get_function("reduce_step").body, lambda n: isinstance(n, ForStmt))
    assert any(isinstance(lp.stop, ConstInt) and lp.stop.value == 65537 and lp.step.value == 8192 for lp in loops)


@pytest.mark.parametrize("program", [lambda: reduce_step(17), lambda: barriers(1)], ids=["allreduce", "barrier"])
def test_lowering_is_idempotent(program):
    once = lower_composite_ops()(program())
    assert structural_equal(lower_composite_ops()(once), once)


def test_allreduce_errors():
    @pl.program
    class NoSignal:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, data: pl.InOut[pld.DistributedTensor[[1, 64], pl.FP32]]) -> pld.DistributedTensor[[1, 64], pl.FP32]:
            data = pld.tensor.allreduce(data)
            return data
    with pytest.raises(UnsupportedError, match="requires an explicit signal outside host orchestrator"):
        lower_composite_ops()(NoSignal)

    @pl.program
    class FourCores:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, data: pl.InOut[pld.DistributedTensor[[1, 64], pl.FP32]],
              signal: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]]) -> pld.DistributedTensor[[1, 64], pl.FP32]:
            data = pld.tensor.allreduce(data, signal, core_num=4)
            return data
    with pytest.raises(UnsupportedError, match="core_num=4"):
        lower_composite_ops()(FourCores)


def test_signal_must_be_int32_window():
    with pytest.raises(PyptoError, match="INT32"):
        @pl.program
        class BadSignal:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, signal: pl.InOut[pld.DistributedTensor[[2, 1], pl.FP32]]) -> pld.DistributedTensor[[2, 1], pl.FP32]:
                signal = pld.tensor.barrier(signal)
                return signal


def test_a_mesh_barrier_on_a_ring_shaped_signal_is_a_value_error():
    """A mesh signal is [NR, 1]; reusing a ring's [2*(NR-1), NR] buffer for a barrier is rejected."""
    @pl.program
    class Reused:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, signal: pl.InOut[pld.DistributedTensor[[2, 2], pl.INT32]]) -> pld.DistributedTensor[[2, 2], pl.INT32]:
            signal = pld.tensor.barrier(signal)
            return signal
    with pytest.raises(ValueError, match=r"signal shape\[1\] must be 1"):
        lower_composite_ops()(Reused)
