"""Host callbacks and a prepared worker: chips stage their rows, the host gathers them, Python inspects.

A HOST `pl.Role.SubWorker` function is plain Python that the host orchestrator calls between
chip dispatches, with host tensors that by then hold the chips' results. A body of `...`
declares a callback point whose implementation `compiled.prepare(callbacks={...})` supplies (and
checks up front). The host collective here, `pld.tensor.allgather`, works on windows the chips
filled in an earlier dispatch, with a rank-1 `[world_size]` signal.

What it shows:
  - a concrete SubWorker (`record_norms`) and a runtime-bound one (`publish`);
  - `compiled.prepare(...)` as a worker dispatched several times;
  - a host allgather on a staged window; `pld.world_size()` sizing the windows.

Run:  python examples/distributed/06_host_callbacks.py
"""

import numpy as np

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.ir.distributed_compiled_program import DistributedConfig

RANKS, SIZE = 2, 64
NR = pl.dynamic("NR")
NORMS: list = []


@pl.program
class GatherAndInspect:
    @pl.function(type=pl.FunctionType.InCore)
    def stage_k(self, x: pl.Tensor[[1, SIZE], pl.FP32],
                st: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]]) -> pld.DistributedTensor[[1, SIZE], pl.FP32]:
        t = pl.load(x, [0, 0], [1, SIZE])
        st = pl.store(pl.mul(t, 2.0), [0, 0], st)
        return st

    @pl.function(type=pl.FunctionType.Orchestration)
    def stage(self, x: pl.Tensor[[1, SIZE], pl.FP32],
              st: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]]) -> pld.DistributedTensor[[1, SIZE], pl.FP32]:
        st = self.stage_k(x, st)
        return st

    @pl.function(type=pl.FunctionType.InCore)
    def read_k(self, d: pld.DistributedTensor[[NR, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[NR, SIZE], pl.FP32]],
               n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[NR, SIZE], pl.FP32]:
        for j in pl.range(n):
            y = pl.store(pl.load(d, [j, 0], [1, SIZE]), [j, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def read(self, d: pld.DistributedTensor[[NR, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[NR, SIZE], pl.FP32]],
             n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[NR, SIZE], pl.FP32]:
        y = self.read_k(d, y, n)
        return y

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def record_norms(gathered: pl.Tensor[[RANKS, RANKS, SIZE], pl.FP32]):
        NORMS.append([float(np.linalg.norm(gathered[r])) for r in range(gathered.shape[0])])

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def publish(gathered: pl.Tensor[[RANKS, RANKS, SIZE], pl.FP32]):
        ...

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, xs: pl.Tensor[[RANKS, 1, SIZE], pl.FP32], ys: pl.Out[pl.Tensor[[RANKS, RANKS, SIZE], pl.FP32]]):
        st_buf = pld.alloc_window_buffer(SIZE * pl.FP32.get_byte())
        data_buf = pld.alloc_window_buffer(pld.world_size() * SIZE * pl.FP32.get_byte())
        sig_buf = pld.alloc_window_buffer(pld.world_size() * pl.INT32.get_byte())
        st = pld.window(st_buf, [1, SIZE], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.stage(xs[r], st, device=r)
        data = pld.window(data_buf, [pld.world_size(), SIZE], dtype=pl.FP32)
        sig = pld.window(sig_buf, [pld.world_size()], dtype=pl.INT32)
        data = pld.tensor.allgather(st, data, sig)
        for r2 in pl.range(pld.world_size()):
            self.read(data, ys[r2], pld.world_size(), device=r2)
        self.record_norms(ys)
        self.publish(ys)


def main():
    compiled = ir.compile(GatherAndInspect, platform="a2a3sim",
                          distributed_config=DistributedConfig(device_ids=list(range(RANKS))))
    published = []
    rng = np.random.default_rng(6)
    with compiled.prepare(callbacks={"publish": lambda args: published.append(args[0].copy())}) as rt:
        for _ in range(2):
            xs = rng.standard_normal((RANKS, 1, SIZE)).astype(np.float32)
            ys = np.zeros((RANKS, RANKS, SIZE), np.float32)
            rt(xs, ys)
            expected = np.broadcast_to(2 * xs[:, 0], ys.shape)      # every rank holds every rank's row
            np.testing.assert_array_equal(ys, expected)
            np.testing.assert_array_equal(published[-1], expected)
            np.testing.assert_allclose(NORMS[-1], [np.linalg.norm(expected[r]) for r in range(RANKS)], rtol=1e-6)
    try:
        compiled.prepare()                                          # `publish` has no implementation
    except ValueError:
        pass
    else:
        raise AssertionError("prepare() should reject the unbound callback")
    print("OK")


if __name__ == "__main__":
    main()
