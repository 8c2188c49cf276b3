"""Allgather: every rank ends up with every rank's row, in rank order.

`pld.tensor.allgather(local, window, signal)` writes this rank's [1, SIZE] chunk into row
`rank` of every rank's [RANKS, SIZE] window (LowerCompositeOps expands it into remote
stores and a signal handshake).

What it shows:
  - a collective from one call; windows of [RANKS, SIZE];
  - three ranks (any count works: the programs are built for the rank count given).

Run:  python examples/distributed/04_allgather.py
"""

import numpy as np

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import RunConfig

RANKS, SIZE = 3, 64


@pl.program
class AllGather:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[RANKS, SIZE], pl.FP32]],
               data: pld.DistributedTensor[[RANKS, SIZE], pl.FP32],
               signal: pld.DistributedTensor[[RANKS, 1], pl.INT32]) -> pl.Tensor[[RANKS, SIZE], pl.FP32]:
        data = pld.tensor.allgather(x, data, signal)
        signal = pld.tensor.barrier(signal)
        y = pl.store(pl.load(data, [0, 0], [RANKS, SIZE]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def per_rank(self, x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[RANKS, SIZE], pl.FP32]],
                 data: pld.DistributedTensor[[RANKS, SIZE], pl.FP32],
                 signal: pld.DistributedTensor[[RANKS, 1], pl.INT32]) -> pl.Tensor[[RANKS, SIZE], pl.FP32]:
        y = self.kernel(x, y, data, signal)
        return y

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[RANKS, 1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[RANKS, RANKS, SIZE], pl.FP32]]):
        data_buf = pld.alloc_window_buffer([RANKS, SIZE], dtype=pl.FP32)
        signal_buf = pld.alloc_window_buffer([RANKS, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [RANKS, SIZE], dtype=pl.FP32)
            signal = pld.window(signal_buf, [RANKS, 1], dtype=pl.INT32)
            self.per_rank(x[r], y[r], data, signal, device=r)


def main():
    compiled = ir.compile(AllGather, distributed_config=DistributedConfig(device_ids=list(range(RANKS))))
    x = np.random.default_rng(53).standard_normal((RANKS, 1, SIZE)).astype(np.float32)
    y = np.zeros((RANKS, RANKS, SIZE), np.float32)
    compiled(x, y, config=RunConfig(sim_schedule="random", sim_seed=8))
    for r in range(RANKS):
        np.testing.assert_array_equal(y[r], x[:, 0, :])
    print("OK")


if __name__ == "__main__":
    main()
