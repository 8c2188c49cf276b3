"""Timing a compiled program: `benchmark(compiled, args, rounds=..., warmup=...)`.

`benchmark` calls the program `warmup` times, then `rounds` times under a timer, and returns
the per-round wall times with min / median / max. On the simulator this measures the
simulation (useful to compare kernel variants' simulated work and to catch slow paths), not
NPU time.

What it shows:
  - one kernel in two variants (one big tile, four row blocks) benchmarked side by side;
  - `BenchmarkResult` fields; the result is still checked against numpy.

Run:  python examples/runtime/02_benchmark.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig, benchmark

M, N = 64, 64


@pl.jit
def one_tile(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.exp(pl.load(x, [0, 0], [M, N])), [0, 0], y)
    return y


@pl.jit
def row_blocks(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            pl.store(pl.exp(pl.load(x, [i * 16, 0], [16, N])), [i * 16, 0], y)
    return y


def main():
    x = np.random.default_rng(71).uniform(-1, 1, (M, N)).astype(np.float32)
    for kernel in (one_tile, row_blocks):
        y = np.zeros_like(x)
        compiled = kernel.compile(x, y)
        result = benchmark(compiled, [x, y], rounds=3, warmup=1, config=RunConfig())
        assert result.rounds == 3 and len(result.times) == 3 and result.min <= result.median <= result.max
        np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)
        print(f"{kernel.__name__:>10}: {result}")
    print("OK")


if __name__ == "__main__":
    main()
