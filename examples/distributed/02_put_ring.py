"""One-sided writes around a ring: rank r puts its vector into rank (r + 1)'s window.

`pld.tensor.put(window, peer, src)` copies a local tensor into the same window on another
rank (the compiler chunks it through UB). A barrier (`pld.tensor.barrier(signal)`, a
self-cleaning credit barrier over an INT32 signal window) makes every put visible before
anyone reads; after it, rank r's window holds rank (r - 1)'s data.

What it shows:
  - symmetric windows (`pld.alloc_window_buffer` + `pld.window`) for data and signals;
  - `pld.tensor.put`, `pld.tensor.barrier`;
  - random rank interleavings (`sim_schedule="random"`): without the barrier some seed
    would read a window before its put landed.

Run:  python examples/distributed/02_put_ring.py
"""

import numpy as np

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import RunConfig

RANKS, SIZE = 4, 128


@pl.program
class PutRing:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
               data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
               signal: pl.InOut[pld.DistributedTensor[[RANKS, 1], pl.INT32]]) -> pl.Tensor[[1, SIZE], pl.FP32]:
        ctx = pld.get_comm_ctx(data)
        pld.tensor.put(data, (pld.rank(ctx) + 1) % pld.nranks(ctx), x)
        signal = pld.tensor.barrier(signal)
        y = pl.store(pl.load(data, [0, 0], [1, SIZE]), [0, 0], y)
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
    compiled = ir.compile(PutRing, distributed_config=DistributedConfig(device_ids=list(range(RANKS))))
    x = np.random.default_rng(51).standard_normal((RANKS, 1, SIZE)).astype(np.float32)
    for seed in (None, 4, 5):
        y = np.zeros_like(x)
        compiled(x, y, config=RunConfig() if seed is None else RunConfig(sim_schedule="random", sim_seed=seed))
        np.testing.assert_array_equal(y, np.roll(x, 1, axis=0))      # y[r] = x[r - 1]
    print("OK")


if __name__ == "__main__":
    main()
