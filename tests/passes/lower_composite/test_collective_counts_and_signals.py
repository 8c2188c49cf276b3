"""LowerCompositeOps on the collective contracts around counts and signals (seed 001):
all_to_all_v clamps each runtime send count to a literal MAX_RECV when NR is static
("每个目的地 ... 传输 clamp(send_counts[dest], 0, MAX_RECV) 行"), and a ring signal
reaching a mesh rule is a shape mismatch ("共享同一个 buffer 会因形状不匹配被拒绝")."""

import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.errors import ValueCheckError
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.ir.expr import BinaryExpr, Call, ConstInt
from pypto.ir.stmt import AssignStmt, ForStmt
from pypto.ir.visitor import collect
from pypto.passes.lower_composite_ops import lower_composite_ops
from pypto.runtime import RunConfig

from tests.distributed.programs import all_to_all_v

RANKS, CAP, COLS = 2, 3, 8          # CAP = MAX_RECV rows per sender


@pl.program
class Exchange:
    @pl.function(type=pl.FunctionType.InCore)
    def kern(self, x: pl.Tensor[[6, 8], pl.FP32], counts: pl.Tensor[[2, 1], pl.INT32],
             data: pl.InOut[pld.DistributedTensor[[6, 8], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
             recv: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]]) -> pld.DistributedTensor[[6, 8], pl.FP32]:
        data = pld.tensor.all_to_all_v(x, data, signal, counts, recv)
        return data


def _clamp_of(kern):
    """The AssignStmt binding the clamped per-destination count: min(max(read, 0), CAP)."""
    return [s for s in collect(kern.body, lambda n: isinstance(n, AssignStmt))
            if isinstance(s.value, BinaryExpr) and s.value.op == "min"]


def test_static_nr_clamps_each_count_to_a_literal_capacity():
    kern = lower_composite_ops()(Exchange).get_function("kern")
    (clamp,) = _clamp_of(kern)
    low, cap = clamp.value.left, clamp.value.right
    assert isinstance(cap, ConstInt) and cap.value == CAP          # 6 rows / NR 2, folded at compile time
    assert isinstance(low, BinaryExpr) and low.op == "max"
    read = next(s.value for s in collect(kern.body, lambda n: isinstance(n, AssignStmt)) if s.var is low.left)
    assert isinstance(read, Call) and read.op.name == "tensor.read" and read.args[0].name_hint == "counts"
    # the push is bounded by the clamped count, never by the capacity: no loop stops at CAP
    assert not any(isinstance(f.stop, ConstInt) and f.stop.value == CAP
                   for f in collect(kern.body, lambda n: isinstance(n, ForStmt)))
    put = next(c for c in collect(kern.body, lambda n: isinstance(n, Call) and not n.is_function_call())
               if c.op.name == "pld.tile.put")
    assert put.args[6].elements[0] is clamp.var                    # rows moved = the clamped count


def test_target_rows_not_a_multiple_of_nr_is_rejected():
    src = '''
import pypto.language as pl
import pypto.language.distributed as pld
@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def kern(self, x: pl.Tensor[[5, 8], pl.FP32], counts: pl.Tensor[[2, 1], pl.INT32],
             data: pl.InOut[pld.DistributedTensor[[5, 8], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
             recv: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]]) -> pld.DistributedTensor[[5, 8], pl.FP32]:
        data = pld.tensor.all_to_all_v(x, data, signal, counts, recv)
        return data
'''
    with pytest.raises(ValueCheckError, match="not a multiple of NR = 2"):
        lower_composite_ops()(pl.parse(src))


def test_clamped_exchange_matches_numpy_on_the_simulator():
    c = ir.compile(all_to_all_v(RANKS, CAP, COLS), platform="a2a3sim",
                   distributed_config=DistributedConfig(device_ids=list(range(RANKS))))
    rng = np.random.default_rng(3)
    x = rng.standard_normal((RANKS, RANKS * CAP, COLS)).astype(np.float32)
    counts = np.array([[[CAP + 4], [-2]], [[1], [CAP]]], np.int32)    # overflow, negative, partial, full
    y = np.zeros((RANKS, RANKS * CAP, COLS), np.float32)
    rc = np.full((RANKS, RANKS, 1), 7, np.int32)
    c(x, counts, y, rc, config=RunConfig(sim_schedule="random", sim_seed=1))
    for r in range(RANKS):
        for s in range(RANKS):
            n = int(np.clip(counts[s, r, 0], 0, CAP))
            assert rc[r, s, 0] == n
            np.testing.assert_array_equal(y[r, s * CAP:s * CAP + n], x[s, r * CAP:r * CAP + n])
            assert (y[r, s * CAP + n:(s + 1) * CAP] == 0).all()


@pl.program
class RingThenBarrier:
    @pl.function(type=pl.FunctionType.InCore)
    def step(self, data: pl.InOut[pld.DistributedTensor[[1, 16], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[2, 2], pl.INT32]]) -> pld.DistributedTensor[[2, 2], pl.INT32]:
        data = pld.tensor.allreduce(data, signal, mode="ring")
        signal = pld.tensor.barrier(signal)
        return signal


def test_a_ring_signal_reused_by_a_mesh_barrier_is_a_shape_error():
    with pytest.raises(ValueCheckError, match=r"signal shape\[1\] must be 1") as e:
        lower_composite_ops()(RingThenBarrier)
    assert isinstance(e.value, ValueError)                         # callers may catch the builtin
    assert "ring signal is [2*(NR-1), NR]" in str(e.value)
