"""Simulator throughput: an elementwise add over 2048x2048 FP32, against numpy in the same run.

    python bench/sim_throughput.py [--repeat N]

The kernel loops over 8-row blocks: two 64 KB input tiles, and MemoryReuse lets the sum take
the first input's buffer, so 128 KB fits the 184 KB UB of a2a3. The simulated run does what the
chip would: load two tiles, add, store, per block. The ratio printed is simulator time / numpy time for `np.add(a, b, out=c)`.
Target: <= 3x numpy. The faithful model has a floor above numpy: every byte is copied into
the arena and out again, and an in-place call runs on a private (poisoned) output buffer
that is copied back only after the run succeeded (SIMULATOR.md: a failed run leaves the
caller's arrays untouched).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

N = 2048
BLOCK_ROWS = 8          # 8 x 2048 x 4 B = 64 KB per tile


@pl.jit
def blocked_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    rows, cols = a.shape
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(rows // BLOCK_ROWS):
            ta = pl.load(a, [i * BLOCK_ROWS, 0], [BLOCK_ROWS, cols])
            tb = pl.load(b, [i * BLOCK_ROWS, 0], [BLOCK_ROWS, cols])
            pl.store(pl.add(ta, tb), [i * BLOCK_ROWS, 0], c)
    return c


def _median_seconds(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    opts = parser.parse_args()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((N, N), dtype=np.float32)
    b = rng.standard_normal((N, N), dtype=np.float32)
    c = np.zeros((N, N), np.float32)
    ref = np.empty_like(c)
    config = RunConfig()
    blocked_add(a, b, c, config=config)                # compile + warm up
    np.testing.assert_array_equal(c, a + b)

    sim_s = _median_seconds(lambda: blocked_add(a, b, c, config=config), opts.repeat)
    numpy_s = _median_seconds(lambda: np.add(a, b, out=ref), opts.repeat)
    alloc_s = _median_seconds(lambda: a + b, opts.repeat)
    print(f"simulated add {N}x{N} FP32: {sim_s * 1e3:.2f} ms; numpy np.add(out=): {numpy_s * 1e3:.2f} ms; "
          f"ratio {sim_s / numpy_s:.2f}x  (target <= 3x)")
    print(f"  (numpy a + b, allocating: {alloc_s * 1e3:.2f} ms; ratio {sim_s / alloc_s:.2f}x)")


if __name__ == "__main__":
    main()
