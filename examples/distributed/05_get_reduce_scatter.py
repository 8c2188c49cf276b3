"""One-sided reads and a reduce-scatter: `pld.tensor.get` from a neighbour, then each rank
owning the sum of one row.

Part 1 (`get`): every rank stages its vector in its window, a barrier, then copies rank
(r - 1)'s window into its own output with `pld.tensor.get(dst, peer, window)` — the read
counterpart of `put`.
Part 2 (`reduce_scatter`): the window is [RANKS, SIZE]; after the call, row r of rank r's
window holds the sum of row r over all ranks (each rank reduces the row it owns).

What it shows:
  - `pld.tensor.get` into a plain GM output tensor;
  - `pld.tensor.reduce_scatter(window, signal, op=pld.ReduceOp.Sum)` on a staged window;
  - two distributed programs compiled for the same world of ranks.

Run:  python examples/distributed/05_get_reduce_scatter.py
"""

import numpy as np

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import RunConfig

RANKS, SIZE = 4, 64


@pl.program
class GetPrevious:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
               data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
               signal: pl.InOut[pld.DistributedTensor[[RANKS, 1], pl.INT32]]) -> pl.Tensor[[1, SIZE], pl.FP32]:
        data = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], data)
        signal = pld.tensor.barrier(signal)
        ctx = pld.get_comm_ctx(data)
        pld.tensor.get(y, (pld.rank(ctx) + pld.nranks(ctx) - 1) % pld.nranks(ctx), data)
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


@pl.program
class ReduceScatter:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[RANKS, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[RANKS, SIZE], pl.FP32]],
               data: pld.DistributedTensor[[RANKS, SIZE], pl.FP32],
               signal: pld.DistributedTensor[[RANKS, 1], pl.INT32]) -> pl.Tensor[[RANKS, SIZE], pl.FP32]:
        data = pl.store(pl.load(x, [0, 0], [RANKS, SIZE]), [0, 0], data)
        data = pld.tensor.reduce_scatter(data, signal, op=pld.ReduceOp.Sum)
        signal = pld.tensor.barrier(signal)
        y = pl.store(pl.load(data, [0, 0], [RANKS, SIZE]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def per_rank(self, x: pl.Tensor[[RANKS, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[RANKS, SIZE], pl.FP32]],
                 data: pld.DistributedTensor[[RANKS, SIZE], pl.FP32],
                 signal: pld.DistributedTensor[[RANKS, 1], pl.INT32]) -> pl.Tensor[[RANKS, SIZE], pl.FP32]:
        y = self.kernel(x, y, data, signal)
        return y

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[RANKS, RANKS, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[RANKS, RANKS, SIZE], pl.FP32]]):
        data_buf = pld.alloc_window_buffer([RANKS, SIZE], dtype=pl.FP32)
        signal_buf = pld.alloc_window_buffer([RANKS, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [RANKS, SIZE], dtype=pl.FP32)
            signal = pld.window(signal_buf, [RANKS, 1], dtype=pl.INT32)
            self.per_rank(x[r], y[r], data, signal, device=r)


def main():
    world = DistributedConfig(device_ids=list(range(RANKS)))
    rng = np.random.default_rng(54)

    x = rng.standard_normal((RANKS, 1, SIZE)).astype(np.float32)
    y = np.zeros_like(x)
    ir.compile(GetPrevious, distributed_config=world)(x, y, config=RunConfig(sim_schedule="random", sim_seed=9))
    np.testing.assert_array_equal(y, np.roll(x, 1, axis=0))           # y[r] = x[r - 1]

    x = rng.standard_normal((RANKS, RANKS, SIZE)).astype(np.float32)
    y = np.zeros_like(x)
    ir.compile(ReduceScatter, distributed_config=world)(x, y)
    totals = x.sum(axis=0)                                              # [RANKS, SIZE]
    for r in range(RANKS):
        np.testing.assert_allclose(y[r, r], totals[r], rtol=1e-5, atol=1e-5)   # the row rank r owns
    print("OK")


if __name__ == "__main__":
    main()
