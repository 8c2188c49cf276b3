"""Allreduce across 4 simulated ranks: each rank adds every rank's vector to its own.

A HOST orchestrator (`@pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)`) allocates
two symmetric windows — the data every rank can read remotely, and an INT32 signal window for
the notify / wait handshakes — and dispatches the per-rank program with `device=r`; `x[r]` is
rank r's slice of a stacked host array. In the kernel, `pld.tensor.allreduce` is one call:
LowerCompositeOps expands it into the self-cleaning credit-barrier recipe (remote loads, chunks
of at most 16 KiB, notify / wait, signal counters back at zero). The simulator runs the ranks
concurrently; `sim_schedule="random"` interleaves them differently per seed, which is how the
test suite looks for races.

Run:  python examples/intermediate/04_allreduce.py
"""

import numpy as np

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import RunConfig

RANKS, SIZE = 4, 256


@pl.program
class AllReduce:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
               data: pld.DistributedTensor[[1, SIZE], pl.FP32],
               signal: pld.DistributedTensor[[RANKS, 1], pl.INT32]) -> pl.Tensor[[1, SIZE], pl.FP32]:
        mine = pl.load(x, [0, 0], [1, SIZE])
        data = pl.store(mine, [0, 0], data)                       # publish this rank's vector
        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum)
        total = pl.load(data, [0, 0], [1, SIZE])
        y = pl.store(total, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def per_rank(self, x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
                 data: pld.DistributedTensor[[1, SIZE], pl.FP32],
                 signal: pld.DistributedTensor[[RANKS, 1], pl.INT32]) -> pl.Tensor[[1, SIZE], pl.FP32]:
        y = self.kernel(x, y, data, signal)
        return y

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[RANKS, 1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[RANKS, 1, SIZE], pl.FP32]]):
        data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        signal_buf = pld.alloc_window_buffer([RANKS, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
            signal = pld.window(signal_buf, [RANKS, 1], dtype=pl.INT32)
            self.per_rank(x[r], y[r], data, signal, device=r)


def main():
    compiled = ir.compile(AllReduce, platform="a2a3sim",
                          distributed_config=DistributedConfig(device_ids=list(range(RANKS))))
    x = np.random.default_rng(0).standard_normal((RANKS, 1, SIZE)).astype(np.float32)
    expected = np.broadcast_to(x.sum(axis=0, keepdims=True), x.shape)
    for seed in (None, 1, 2):                      # the default schedule, then two random interleavings
        y = np.zeros_like(x)
        config = RunConfig() if seed is None else RunConfig(sim_schedule="random", sim_seed=seed)
        compiled(x, y, config=config)
        np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)
    print("OK")


if __name__ == "__main__":
    main()
