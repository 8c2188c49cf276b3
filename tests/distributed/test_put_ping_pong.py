"""pld.tensor.put(..., pipeline=True) in a kernel: ConvertTensorToTileOps stages it through two Vec tiles
(the ping-pong pair pto-isa's TPUT alternates between), PTO passes both as buf(%ping, %pong), and the
multi-rank simulator moves the whole region on both platforms."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.codegen.pto import generate
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import RunConfig
from tests.helpers import op_calls

N, SHAPE = 2, [8, 64]


@pl.program
class RingPut:
    @pl.function(type=pl.FunctionType.InCore)
    def kern(self, x: pl.Tensor[SHAPE, pl.FP32], y: pl.Out[pl.Tensor[SHAPE, pl.FP32]],
             data: pl.InOut[pld.DistributedTensor[SHAPE, pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[N, 1], pl.INT32]]) -> pl.Tensor[SHAPE, pl.FP32]:
        ctx = pld.get_comm_ctx(data)
        pld.tensor.put(data, (pld.rank(ctx) + 1) % pld.nranks(ctx), x, chunk_rows=4, chunk_cols=16, pipeline=True)
        signal = pld.tensor.barrier(signal)
        u = pl.load(data, [0, 0], SHAPE)
        y = pl.store(u, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def per_rank(self, x: pl.Tensor[SHAPE, pl.FP32], y: pl.Out[pl.Tensor[SHAPE, pl.FP32]],
                 data: pld.DistributedTensor[SHAPE, pl.FP32],
                 signal: pld.DistributedTensor[[N, 1], pl.INT32]) -> pl.Tensor[SHAPE, pl.FP32]:
        y = self.kern(x, y, data, signal)
        return y

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[N] + SHAPE, pl.FP32], y: pl.Out[pl.Tensor[[N] + SHAPE, pl.FP32]]):
        data_buf = pld.alloc_window_buffer(SHAPE, dtype=pl.FP32)
        signal_buf = pld.alloc_window_buffer([N, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, SHAPE, dtype=pl.FP32)
            signal = pld.window(signal_buf, [N, 1], dtype=pl.INT32)
            self.per_rank(x[r], y[r], data, signal, device=r)


def _compile(platform):
    return ir.compile(RingPut, platform=platform, distributed_config=DistributedConfig(device_ids=list(range(N))))


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_a_pipelined_put_moves_the_whole_region(platform):
    compiled = _compile(platform)
    x = np.random.default_rng(3).standard_normal((N, *SHAPE)).astype(np.float32)
    y = np.zeros_like(x)
    compiled(x, y, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(y, np.roll(x, 1, axis=0))


def test_the_put_carries_both_stages_to_pto():
    lowered = _compile("a2a3sim").lowered
    kern = next(f for name, f in lowered.functions.items() if name.startswith("kern"))
    (put,) = op_calls(kern, "pld.tile.put")
    assert len(put.args) == 5 and [d.value for d in put.args[4].type.shape] == [4, 16]
    text = "\n".join(generate(lowered).values())
    assert "pto.comm.tput(" in text and text.count("buf(%") == 1
    line = next(l for l in text.splitlines() if "pto.comm.tput(" in l)
    assert line.split("buf(")[1].split(")")[0].count("%") == 2
