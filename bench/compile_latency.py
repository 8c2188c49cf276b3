"""Compile latency of a small @pl.jit kernel, and the cost of a cache-hit call.

    python bench/compile_latency.py [--repeat N]

Prints the median milliseconds of `kernel.compile(...)` with a fresh cache each time (parse,
the whole pass pipeline, CompiledProgram) and the median microseconds of `kernel(a, b, c)`
on a cache hit (key lookup, argument checks, simulating the 64x128 tile add, write-back).
Targets: compile <= 25 ms, cache hit <= 200 us.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

ROWS, COLS = 64, 128


@pl.jit
def tile_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [ROWS, COLS])
        tb = pl.load(b, [0, 0], [ROWS, COLS])
        pl.store(pl.add(ta, tb), [0, 0], c)
    return c


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    opts = parser.parse_args()
    config = RunConfig()
    a = np.random.default_rng(0).standard_normal((ROWS, COLS), dtype=np.float32)
    b = np.ones((ROWS, COLS), np.float32)
    c = np.zeros((ROWS, COLS), np.float32)

    tile_add.compile(a, b, c, config=config)          # warm imports and first-use caches
    compile_ms = []
    for _ in range(opts.repeat):
        tile_add.clear_cache()
        t0 = time.perf_counter()
        tile_add.compile(a, b, c, config=config)
        compile_ms.append((time.perf_counter() - t0) * 1e3)

    tile_add(a, b, c, config=config)
    np.testing.assert_allclose(c, a + b)
    hit_us = []
    for _ in range(opts.repeat * 20):
        t0 = time.perf_counter()
        tile_add(a, b, c, config=config)
        hit_us.append((time.perf_counter() - t0) * 1e6)

    print(f"compile (fresh cache): median {statistics.median(compile_ms):.2f} ms  (target <= 25 ms)")
    print(f"cache-hit call:        median {statistics.median(hit_us):.1f} us  (target <= 200 us)")


if __name__ == "__main__":
    main()
