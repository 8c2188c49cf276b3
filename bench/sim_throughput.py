"""Simulator throughput: an elementwise add over 2048x2048 FP32, against numpy in the same run.

    python bench/sim_throughput.py [--repeat N] [--recipe]

The kernel loops over 8-row blocks: two 64 KB input tiles, and MemoryReuse lets the sum take
the first input's buffer, so 128 KB fits the 184 KB UB of a2a3. The simulated run does what the
chip would: load two tiles, add, store, per block. The ratio printed is simulator time / numpy time for `np.add(a, b, out=c)`.
Target: <= 3x numpy. The faithful model has a floor above numpy: every byte is copied into
the arena and out again, and an in-place call runs on a private (poisoned) output buffer
that is copied back only after the run succeeded (SIMULATOR.md: a failed run leaves the
caller's arrays untouched).

Host allreduce (4 and 8 ranks, 1 MiB FP32 per rank): one HOST-orchestrator call against numpy's sum
over the ranks; `--recipe` also times the compiled credit-barrier recipe (the mode tests of the
recipes use).
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


# ---------------------------------------------------------------------------- host allreduce (issue 17)
ALLREDUCE_ELEMENTS = 262144      # 1 MiB of FP32 per rank


def allreduce_program(ranks: int):
    """A HOST orchestrator whose only work is one signal-less allreduce of a 1 MiB window per rank."""
    import pypto.language.distributed as pld

    @pl.program
    class HostAllReduce1MiB:
        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, unused: pl.Tensor[[ranks, 8], pl.FP32]):
            buf = pld.alloc_window_buffer([1, ALLREDUCE_ELEMENTS], dtype=pl.FP32)
            data = pld.window(buf, [1, ALLREDUCE_ELEMENTS], dtype=pl.FP32)
            data = pld.tensor.allreduce(data)
    return HostAllReduce1MiB


def allreduce_ratio(ranks: int, repeat: int, mode: str = "native") -> tuple:
    """(simulated seconds, numpy seconds) for an allreduce of 1 MiB per rank against np.sum over the ranks.
    The simulated call includes the whole dispatch: window allocation, every rank's builtin, the rendezvous."""
    from pypto import ir
    from pypto.runtime import DistributedConfig
    compiled = ir.compile(allreduce_program(ranks), platform="a2a3sim",
                          distributed_config=DistributedConfig(device_ids=list(range(ranks))))
    config = RunConfig(extra={"sim_host_collectives": mode})
    unused = np.zeros((ranks, 8), np.float32)
    compiled(unused, config=config)                    # warm up
    sim_s = _median_seconds(lambda: compiled(unused, config=config), repeat)
    stacked = np.random.default_rng(1).standard_normal((ranks, ALLREDUCE_ELEMENTS), dtype=np.float32)
    numpy_s = _median_seconds(lambda: np.sum(stacked, axis=0), max(repeat, 9))
    return sim_s, numpy_s


def report_allreduce(repeat: int, with_recipe: bool) -> None:
    for ranks, target in ((4, "<= 15x numpy"), (8, "<= 1 s")):
        sim_s, numpy_s = allreduce_ratio(ranks, repeat)
        print(f"host allreduce {ranks} ranks x 1 MiB FP32: {sim_s * 1e3:.2f} ms; numpy sum: {numpy_s * 1e3:.3f} ms; "
              f"ratio {sim_s / numpy_s:.1f}x  (target {target})")
        if with_recipe:
            rec_s, _ = allreduce_ratio(ranks, 1, mode="recipe")
            print(f"  (recipe mode, every notify / wait / remote_load simulated: {rec_s * 1e3:.1f} ms, "
                  f"{rec_s / numpy_s:.0f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--recipe", action="store_true", help="also time host collectives in recipe mode (slow)")
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
    report_allreduce(opts.repeat, opts.recipe)


if __name__ == "__main__":
    main()
