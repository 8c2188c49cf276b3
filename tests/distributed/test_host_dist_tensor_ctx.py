"""MaterializeDistTensorCtx: one CommCtx parameter per DistributedTensor parameter of a kernel (Before / Expected),
and the simulator running the rewritten kernels."""

from __future__ import annotations

import numpy as np

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.ir.types import CommCtxType
from pypto.passes.convert_to_ssa import convert_to_ssa
from pypto.passes.materialize_dist_tensor_ctx import materialize_dist_tensor_ctx


@pl.program
class Before:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, y: pl.Out[pl.Tensor[[4, 1], pl.INT32]], data: pld.DistributedTensor[[1, 8], pl.FP32],
          sig: pld.DistributedTensor[[4, 1], pl.INT32]) -> pl.Tensor[[4, 1], pl.INT32]:
        c = pld.get_comm_ctx(sig)
        me = pld.rank(c)
        pld.system.notify(sig, peer=0, offsets=[me, 0], value=1, op=pld.NotifyOp.AtomicAdd)
        y = pl.write(y, [0, 0], me)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def o(self, y: pl.Out[pl.Tensor[[4, 1], pl.INT32]], data: pld.DistributedTensor[[1, 8], pl.FP32],
          sig: pld.DistributedTensor[[4, 1], pl.INT32]) -> pl.Tensor[[4, 1], pl.INT32]:
        y = self.k(y, data, sig)
        return y


@pl.program
class Expected:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, y: pl.Out[pl.Tensor[[4, 1], pl.INT32]], data: pld.DistributedTensor[[1, 8], pl.FP32],
          sig: pld.DistributedTensor[[4, 1], pl.INT32], data_ctx: pld.CommCtx,
          sig_ctx: pld.CommCtx) -> pl.Tensor[[4, 1], pl.INT32]:
        me = pld.rank(sig_ctx)
        pld.system.notify(sig, peer=0, offsets=[me, 0], value=1, op=pld.NotifyOp.AtomicAdd)
        y = pl.write(y, [0, 0], me)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def o(self, y: pl.Out[pl.Tensor[[4, 1], pl.INT32]], data: pld.DistributedTensor[[1, 8], pl.FP32],
          sig: pld.DistributedTensor[[4, 1], pl.INT32]) -> pl.Tensor[[4, 1], pl.INT32]:
        data_ctx: pld.CommCtx = pld.get_comm_ctx(data)
        sig_ctx: pld.CommCtx = pld.get_comm_ctx(sig)
        y = self.k(y, data, sig, data_ctx, sig_ctx)
        return y


def test_kernel_gets_one_comm_ctx_per_window_parameter():
    after = materialize_dist_tensor_ctx()(convert_to_ssa()(Before))
    ir.assert_structural_equal(after, convert_to_ssa()(Expected))
    k = after.get_function("k")
    assert [type(p.type) for p in k.params[-2:]] == [CommCtxType, CommCtxType]
    assert materialize_dist_tensor_ctx()(after) is after                 # idempotent


def test_the_simulator_runs_kernels_with_explicit_contexts():
    from tests.distributed.programs import handrolled_barrier
    n = 4
    c = ir.compile(handrolled_barrier(n), platform="a2a3sim",
                   distributed_config=DistributedConfig(device_ids=list(range(n))))
    kern = c.chip.lowered.get_function("kern")
    assert isinstance(kern.params[-1].type, CommCtxType)
    y = np.zeros((n, n, 1), np.int32)
    c(y)
    expected = np.ones((n, 1), np.int32)
    for r in range(n):
        e = expected.copy()
        e[r] = 0                                     # a rank does not notify itself
        np.testing.assert_array_equal(y[r], e)
