"""Ring allreduce (seed 001: balanced / FP16-aligned segments, put pushes, ready / push-done generations)."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.errors import TypeCheckError
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.passes.lower_composite_ops import lower_composite_ops
from pypto.runtime import RunConfig

from tests.distributed.programs import ring_allreduce

NP_REDUCE = {pld.ReduceOp.Sum: np.sum, pld.ReduceOp.Max: np.max, pld.ReduceOp.Min: np.min, pld.ReduceOp.Prod: np.prod}


@pytest.mark.parametrize("n,size,dtype,op,calls", [
    (2, 17, pl.FP16, pld.ReduceOp.Max, 1), (3, 17, pl.FP32, pld.ReduceOp.Min, 2),
    (4, 4096, pl.FP16, pld.ReduceOp.Sum, 1), (4, 1, pl.FP32, pld.ReduceOp.Prod, 1), (8, 17, pl.FP32, pld.ReduceOp.Sum, 1),
    (2, 65537, pl.FP32, pld.ReduceOp.Sum, 1)])
def test_ring_allreduce_matches_numpy(n, size, dtype, op, calls):
    c = ir.compile(ring_allreduce(n, size, dtype, op, calls=calls), platform="a2a3sim",
                   distributed_config=DistributedConfig(device_ids=list(range(n))))
    npdt = np.float32 if dtype is pl.FP32 else np.float16
    seeds = range(1)
    for seed in seeds:
        x = np.random.default_rng(seed).uniform(0.8, 1.25, (n, 1, size)).astype(npdt)
        y = np.zeros_like(x)
        sig = np.full((n, max(2 * (n - 1), 1), n), -1, np.int32)
        c(x, y, sig, config=RunConfig(sim_schedule="random", sim_seed=seed))
        ref = x.astype(np.float64)
        for _ in range(calls):
            ref = np.broadcast_to(NP_REDUCE[op](ref, axis=0, keepdims=True), x.shape).astype(npdt).astype(np.float64)
        tol = 1e-5 if dtype is pl.FP32 else 2e-2
        np.testing.assert_allclose(y.astype(np.float64), ref, rtol=tol, atol=tol)
        assert (sig == 0).all(), "2 * subchunks retired from every row"


def _ring_step(signal_shape, signal_dtype=pl.INT32):
    @pl.program
    class RingStep:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, data: pl.InOut[pld.DistributedTensor[[1, 64], pl.FP32]],
              signal: pl.InOut[pld.DistributedTensor[signal_shape, signal_dtype]]) -> pld.DistributedTensor[[1, 64], pl.FP32]:
            data = pld.tensor.allreduce(data, signal, mode="ring")
            return data
    return RingStep


def test_ring_recipe_uses_put_and_two_element_epilogue_offsets():
    from pypto.ir.expr import Call, UnaryExpr
    from pypto.ir.visitor import collect
    after = lower_composite_ops()(_ring_step([2, 2]))
    calls = [c for c in collect(after.get_function("k").body, lambda n: isinstance(n, Call) and not n.is_function_call())]
    names = {c.op.name for c in calls}
    assert "pld.tile.put" in names and "pld.tensor.allreduce" not in names and "pld.tile.remote_load" not in names
    notifies = [c for c in calls if c.op.name == "pld.system.notify"]
    assert isinstance(notifies[-1].args[3], UnaryExpr) and len(notifies[-1].args[2].elements) == 2
    assert all(c.kwargs["cmp"] is pld.WaitCmp.Ge for c in calls if c.op.name == "pld.system.wait")
    from pypto.ir.equality import structural_equal
    assert structural_equal(lower_composite_ops()(after), after)


def test_ring_rejects_a_mesh_signal():
    with pytest.raises(TypeCheckError, match="mesh signal cannot serve a ring"):
        lower_composite_ops()(_ring_step([2, 1]))
