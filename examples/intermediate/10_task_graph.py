"""A task graph: the order the runtime infers, and the edges, opt-outs and predicates you write.

Each `pl.at` region becomes one task. The runtime does not run them in source order: it
records which tensors each task reads and writes and orders two tasks only when they touch
the same tensor (a producer before its consumers). In `four_tasks`, `left` and `right` are
independent (they may run in any order or at the same time); `combine` waits for both.

`banded` shapes the graph by hand:
  - `no_dep_args=[out]` (an opt-out): the four `band` tasks write disjoint row bands of `out`,
    which the runtime would otherwise serialize as four writes of one buffer;
  - `with pl.at(...) as tid` + `tids[i] = tid`: each band's TaskId goes into a
    `pl.array.create(n, pl.TASK_ID)` array, and `deps=[tids]` makes `scale` wait for all four
    (the opt-out removed the edges the runtime would have inferred, so this one is needed);
  - `predicate=(flags[0, 0] > 0)` on the `pl.spmd` region: the scheduler reads the flag when the
    task is ready and skips the task when the comparison is false.

The simulator checks the graph on every run: had the bands overlapped, or `deps=` been left
out, the run would stop with a DataRaceError naming both tasks and their lines.
`RunConfig(sim_schedule="random", sim_seed=N)` picks a different legal order per seed — the
result must not change.

Run:  python examples/intermediate/10_task_graph.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

M, N = 32, 64


@pl.jit
def four_tasks(x: pl.Tensor, y: pl.Tensor, out: pl.Out[pl.Tensor]):
    a = pl.create_tensor([M, N], dtype=pl.FP32)
    b = pl.create_tensor([M, N], dtype=pl.FP32)
    s = pl.create_tensor([M, N], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="left"):
        a[:] = pl.exp(x)                    # writes a
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="right"):
        b[:] = pl.mul(y, 2.0)               # writes b (independent of left)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="combine"):
        s[:] = pl.add(a, b)                 # reads a and b: after left and right
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="finish"):
        out[:] = pl.mul(s, s)               # reads s: after combine
    return out


BANDS, BAND = 4, 8


@pl.jit
def banded(x: pl.Tensor, flags: pl.Tensor, out: pl.Out[pl.Tensor], res: pl.Out[pl.Tensor]):
    tids = pl.array.create(BANDS, pl.TASK_ID)
    for i in pl.range(BANDS):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="band", no_dep_args=[out]) as tid:
            t = pl.load(x, [i * BAND, 0], [BAND, N])
            pl.store(pl.exp(t), [i * BAND, 0], out)       # row band i of out
        tids[i] = tid
    with pl.spmd(2, name_hint="scale", deps=[tids], predicate=(flags[0, 0] > 0)) as scaled:
        b = pl.tile.get_block_idx()
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(out, [b * 16, 0], [16, N])
            pl.store(pl.mul(t, 2.0), [b * 16, 0], out)    # runs only when flags[0, 0] > 0
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="finish", deps=[scaled]):
        res[:] = pl.add(out, 1.0)
    return res


def main():
    rng = np.random.default_rng(25)
    x = rng.uniform(-1, 1, (M, N)).astype(np.float32)
    y = rng.standard_normal((M, N), dtype=np.float32)
    expected = (np.exp(x) + 2 * y) ** 2
    for seed in (None, 1, 2, 3):
        config = RunConfig() if seed is None else RunConfig(sim_schedule="random", sim_seed=seed)
        out = np.zeros_like(x)
        four_tasks(x, y, out, config=config)
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
        for flag in (1, 0):
            flags = np.full((1, 8), flag, np.int32)
            out, res = np.zeros_like(x), np.zeros_like(x)
            banded(x, flags, out, res, config=config)
            scale = 2.0 if flag > 0 else 1.0
            np.testing.assert_allclose(res, np.exp(x) * scale + 1, rtol=1e-5, atol=1e-5)
    print("OK")


if __name__ == "__main__":
    main()
