"""`benchmark(compiled, args, rounds=, warmup=)`: time repeated runs of a compiled program.

    from pypto.runtime import benchmark
    result = benchmark(compiled, [a, b, out], rounds=20, warmup=3)
    print(result)            # BenchmarkResult(rounds=20, mean=812.4us, median=..., min=..., max=...)

On the simulator platforms this is the host time of a simulated run (the simulator models
capacities and ordering, not cycles), useful to compare builds and to watch for regressions.
Warmup rounds run first and are not timed (the first call generates the simulator code).
Arguments may be host arrays or DeviceTensors; with a `worker` (or inside `with worker:`) the
runs go through it.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Sequence

from pypto.errors import ValueCheckError


@dataclass(frozen=True)
class BenchmarkResult:
    rounds: int
    warmup: int
    times: tuple                 # seconds per timed round

    @property
    def mean(self) -> float:
        return statistics.fmean(self.times)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def min(self) -> float:
        return min(self.times)

    @property
    def max(self) -> float:
        return max(self.times)

    @property
    def mean_us(self) -> float:
        return self.mean * 1e6

    def __str__(self) -> str:
        us = lambda t: f"{t * 1e6:.1f}us"   # noqa: E731
        return (f"BenchmarkResult(rounds={self.rounds}, mean={us(self.mean)}, median={us(self.median)}, "
                f"min={us(self.min)}, max={us(self.max)})")


def benchmark(compiled, args: Sequence = (), *, rounds: int = 10, warmup: int = 1, config=None,
              worker=None) -> BenchmarkResult:
    if rounds < 1:
        raise ValueCheckError(f"benchmark: rounds must be at least 1, got {rounds}")
    if warmup < 0:
        raise ValueCheckError(f"benchmark: warmup must be non-negative, got {warmup}")
    args = list(args)

    def once():
        if worker is not None:
            return worker.run(compiled, *args)
        return compiled(*args, config=config) if config is not None else compiled(*args)

    for _ in range(warmup):
        once()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        once()
        times.append(time.perf_counter() - start)
    return BenchmarkResult(rounds, warmup, tuple(times))
