"""pld.tile.remote_store writes a window (the peer's copy of it), so a later kernel of the same
orchestration that reads the window runs after the writer, whose barrier means every peer's store
landed. Without that edge the reader may run on the unfilled window."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.ir.enums import ParamDirection
from pypto.runtime import RunConfig

P, W = 3, 32


@pl.program
class ShiftThenRead:
    @pl.function(type=pl.FunctionType.InCore)
    def shift(self, x: pl.Tensor[[1, W], pl.FP32], box: pld.DistributedTensor[[P, W], pl.FP32],
              flags: pld.DistributedTensor[[P, 1], pl.INT32], me: pl.Scalar[pl.INT32]):
        pld.tile.remote_store(pl.load(x, [0, 0], [1, W]), target=box, peer=(me + 1) % P, offsets=[me, 0])
        for p in pl.range(P):
            if p != me:
                pld.system.notify(target=flags, peer=p, offsets=[me, 0], value=1, op=pld.NotifyOp.AtomicAdd)
        for p in pl.range(P):
            if p != me:
                pld.system.wait(signal=flags, offsets=[p, 0], expected=1, cmp=pld.WaitCmp.Ge)

    @pl.function(type=pl.FunctionType.InCore)
    def read(self, box: pld.DistributedTensor[[P, W], pl.FP32],
             y: pl.Out[pl.Tensor[[P, W], pl.FP32]]) -> pl.Tensor[[P, W], pl.FP32]:
        return pl.store(pl.load(box, [0, 0], [P, W]), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[P, W], pl.FP32]],
             box: pld.DistributedTensor[[P, W], pl.FP32], flags: pld.DistributedTensor[[P, 1], pl.INT32],
             me: pl.Scalar[pl.INT32]) -> pl.Tensor[[P, W], pl.FP32]:
        self.shift(x, box, flags, me)
        return self.read(box, y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[P, 1, W], pl.FP32], y: pl.Out[pl.Tensor[[P, P, W], pl.FP32]]):
        box_buf = pld.alloc_window_buffer([P, W], dtype=pl.FP32)
        flag_buf = pld.alloc_window_buffer([P, 1], dtype=pl.INT32)
        for r in pl.range(P):
            self.chip(x[r], y[r], pld.window(box_buf, [P, W], dtype=pl.FP32),
                      pld.window(flag_buf, [P, 1], dtype=pl.INT32), r, device=r)


def test_the_store_target_is_a_written_parameter():
    c = ir.compile(ShiftThenRead, platform="a2a3sim", distributed_config=DistributedConfig(device_ids=list(range(P))))
    shift = c.chip.lowered.functions["shift"]
    assert shift.param_directions[1] is not ParamDirection.In


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_reader_sees_the_filled_window(seed):
    c = ir.compile(ShiftThenRead, platform="a2a3sim", distributed_config=DistributedConfig(device_ids=list(range(P))))
    x = np.random.default_rng(seed).standard_normal((P, 1, W)).astype(np.float32)
    y = np.zeros((P, P, W), np.float32)
    c(x, y, config=RunConfig(sim_schedule="random", sim_seed=seed))
    for r in range(P):
        left = (r - 1) % P                      # rank r's window row `left` came from rank `left`
        np.testing.assert_array_equal(y[r, left], x[left, 0])
