"""Reading a neighbour's window: stage locally, barrier, `pld.tile.remote_load` from rank r + 1.

The pull-style counterpart of a put: each rank publishes its vector into its own window,
everyone meets at a barrier, then each rank loads rank (r + 1)'s window straight into a
local Vec tile and doubles it.

What it shows:
  - `pl.store` into a `pld.DistributedTensor` (this rank's part of the symmetric window);
  - `pld.tile.remote_load(window, peer=..., offsets=..., shape=...)`;
  - tile math on the fetched data before the store.

Run:  python examples/distributed/03_remote_load.py
"""

import numpy as np

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import RunConfig

RANKS, SIZE = 4, 64


@pl.program
class PullNext:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
               data: pld.DistributedTensor[[1, SIZE], pl.FP32],
               signal: pld.DistributedTensor[[RANKS, 1], pl.INT32]) -> pl.Tensor[[1, SIZE], pl.FP32]:
        ctx = pld.get_comm_ctx(data)
        data = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], data)
        signal = pld.tensor.barrier(signal)
        peer = (pld.rank(ctx) + 1) % pld.nranks(ctx)
        theirs = pld.tile.remote_load(data, peer=peer, offsets=[0, 0], shape=[1, SIZE])
        y = pl.store(pl.mul(theirs, 2.0), [0, 0], y)
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
    compiled = ir.compile(PullNext, distributed_config=DistributedConfig(device_ids=list(range(RANKS))))
    x = np.random.default_rng(52).standard_normal((RANKS, 1, SIZE)).astype(np.float32)
    for seed in (None, 6):
        y = np.zeros_like(x)
        compiled(x, y, config=RunConfig() if seed is None else RunConfig(sim_schedule="random", sim_seed=seed))
        np.testing.assert_array_equal(y, 2 * np.roll(x, -1, axis=0))     # y[r] = 2 * x[r + 1]
    print("OK")


if __name__ == "__main__":
    main()
