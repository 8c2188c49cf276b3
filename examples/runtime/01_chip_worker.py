"""A ChipWorker keeps tensors on the (simulated) device between runs.

Passing numpy arrays copies them to the device and back on every call. For weights used by
many calls, allocate them once on a `ChipWorker` (`alloc_tensor(..., init=array)`): the
`DeviceTensor` stays resident, calls read and write it in place, and only `copy_from`
brings data back. `worker.stats` counts the copies, so you can check nothing moves that
should not.

What it shows:
  - `with ChipWorker() as worker:` and `worker.register(compiled)` (a callable bound to it);
  - a resident weight reused by three calls, a resident output read back explicitly;
  - the copy counters.

Run:  python examples/runtime/01_chip_worker.py
"""

import numpy as np

import pypto.language as pl
from pypto import ir
from pypto.runtime import ChipWorker, RunConfig

M, N = 32, 64
T = pl.Tensor[[M, N], pl.FP32]


@pl.program
class Scale:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: T, w: T, out: pl.Out[T]) -> T:
        out = pl.store(pl.mul(pl.load(x, [0, 0], [M, N]), pl.load(w, [0, 0], [M, N])), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: T, w: T, out: pl.Out[T]) -> T:
        out = self.kernel(x, w, out)
        return out


def main():
    compiled = ir.compile(Scale)
    rng = np.random.default_rng(70)
    weight = rng.standard_normal((M, N), dtype=np.float32)
    with ChipWorker(config=RunConfig()) as worker:
        w = worker.alloc_tensor([M, N], pl.FP32, init=weight)       # copied to the device once
        out = worker.alloc_tensor([M, N], pl.FP32)
        step = worker.register(compiled)
        for i in range(3):
            x = rng.standard_normal((M, N), dtype=np.float32)
            step(x, w, out)
            np.testing.assert_allclose(worker.copy_from(out), x * weight, rtol=1e-6)
        assert worker.stats.copies_to_device == 1 and worker.stats.runs == 3
        assert worker.stats.copies_from_device == 3                   # only the explicit copy_from calls
    assert w.freed                                                    # closing the worker frees its tensors
    print("OK")


if __name__ == "__main__":
    main()
