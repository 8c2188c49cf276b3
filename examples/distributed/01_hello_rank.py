"""Hello, ranks: every simulated device learns who it is and writes it down.

A distributed program has three levels: a HOST orchestrator (allocates the symmetric window
buffers and dispatches one program per rank with `device=r`), a per-rank Orchestration
function, and InCore kernels. Inside a kernel, `pld.get_comm_ctx(t)` is the communication
context of a window-bound tensor, `pld.rank(ctx)` this device's index, `pld.nranks(ctx)` the
count.

What it shows:
  - the host / per-rank / kernel structure and `ir.compile(..., distributed_config=...)`;
  - `x[r]` / `y[r]`: rank r's slice of a stacked host array;
  - scalar rank arithmetic cast to FP32 and added to a tile.

Run:  python examples/distributed/01_hello_rank.py
"""

import numpy as np

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.ir.distributed_compiled_program import DistributedConfig

RANKS, SIZE = 4, 64


@pl.program
class HelloRank:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
               data: pld.DistributedTensor[[1, SIZE], pl.FP32]) -> pl.Tensor[[1, SIZE], pl.FP32]:
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        tag: pl.Scalar[pl.FP32] = pl.cast(me * 100 + n, pl.FP32)      # rank 2 of 4 → 204.0
        t = pl.load(x, [0, 0], [1, SIZE])
        y = pl.store(pl.add(t, tag), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def per_rank(self, x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
                 data: pld.DistributedTensor[[1, SIZE], pl.FP32]) -> pl.Tensor[[1, SIZE], pl.FP32]:
        y = self.kernel(x, y, data)
        return y

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[RANKS, 1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[RANKS, 1, SIZE], pl.FP32]]):
        buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            data = pld.window(buf, [1, SIZE], dtype=pl.FP32)
            self.per_rank(x[r], y[r], data, device=r)


def main():
    compiled = ir.compile(HelloRank, distributed_config=DistributedConfig(device_ids=list(range(RANKS))))
    x = np.random.default_rng(50).standard_normal((RANKS, 1, SIZE)).astype(np.float32)
    y = np.zeros_like(x)
    compiled(x, y)
    tags = (np.arange(RANKS) * 100 + RANKS).astype(np.float32).reshape(RANKS, 1, 1)
    np.testing.assert_allclose(y, x + tags, rtol=1e-6)
    print("OK")


if __name__ == "__main__":
    main()
