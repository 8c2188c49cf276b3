"""Simulator figures of this tree against a baseline tree, in the same run, alternating.

    python bench/sim_paired.py --baseline /path/to/other/checkout [--rounds 5]

One long-lived child process per tree (`--child`, PYTHONPATH = the tree) runs this file's
measurements on request; the parent asks each tree in turn, swapping the order every round, so
both see the same machine load. Every figure is CPU time (time.process_time) and the medians
over the rounds are printed with the paired ratios (> 1: this tree is faster / closer to numpy):

- call:  cached `@pl.jit` call of a 64x128 add, call time minus the kernel body's own time
         (bench/sim_throughput.py `cached_jit_call`), microseconds. Target (issue 17): <= 30.
- tasks: dispatch overhead per task, 10,000 tasks of a 16x128 add against the same blocks in two
         tasks, compiled unfused (`many_small_tasks`), microseconds; both runs' CPU ms too. Target: <= 20.
- ew:    a simulated 2048x2048 FP32 add over `np.add(out=)`, the median of per-pair ratios (each
         pair: one simulated call, then one numpy add). Target: <= 2.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

FIGURES = {"call": 2000, "tasks": 10_000, "ew": 5}


def serve() -> None:
    """The child: answer `<figure> <size>` lines with one number each."""
    sys.path.insert(0, str(Path(__file__).parent))
    import numpy as np

    import sim_throughput as st
    from pypto.runtime import RunConfig

    quiet = contextlib.redirect_stdout(io.StringIO())
    n = st.N
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    c, ref, config = np.zeros((n, n), np.float32), np.empty((n, n), np.float32), RunConfig()
    st.blocked_add(a, b, c, config=config)

    def elementwise(pairs: int) -> float:
        ratios = []
        for _ in range(pairs):
            t0 = time.process_time()
            st.blocked_add(a, b, c, config=config)
            t1 = time.process_time()
            np.add(a, b, out=ref)
            ratios.append((t1 - t0) / max(time.process_time() - t1, 1e-9))
        return statistics.median(ratios)

    def call(calls: int) -> float:
        with quiet:
            return st.cached_jit_call(calls) * 1e6

    def tasks(count: int) -> str:
        with quiet:
            overhead = st.many_small_tasks(count, 1) * 1e6
        runs = st.many_small_tasks.last_runs
        return f"{overhead} {runs[0] * 1e3} {runs[1] * 1e3}"       # (and both runs' CPU ms)

    measure = {"call": call, "tasks": tasks, "ew": elementwise}
    for line in sys.stdin:
        figure, size = line.split()
        print(measure[figure](int(size)), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="the other checkout (its pypto and bench/sim_throughput.py)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--figures", default=",".join(FIGURES))
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child:
        serve()
        return
    here = Path(__file__).resolve().parent.parent
    trees = {"baseline": Path(opts.baseline).resolve(), "this": here}
    children = {name: subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--child", "--baseline", "-"],
                                       cwd=tree, env=dict(os.environ, PYTHONPATH=str(tree)), text=True,
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE)
                for name, tree in trees.items()}
    figures = [f for f in opts.figures.split(",") if f]
    got = {(name, f): [] for name in trees for f in figures}
    for r in range(opts.rounds):
        for figure in figures:
            for name in (["baseline", "this"] if r % 2 == 0 else ["this", "baseline"]):
                child = children[name]
                child.stdin.write(f"{figure} {FIGURES[figure]}\n")
                child.stdin.flush()
                line = child.stdout.readline()
                if not line:
                    raise SystemExit(f"the {name} child failed (see its traceback above)")
                value, *extra = (float(x) for x in line.split())
                got[(name, figure)].append(value)
                if extra:
                    got.setdefault((name, figure, "extra"), []).append(extra)
    for child in children.values():
        child.stdin.close()
        child.wait()
    units = {"call": "us overhead per call", "tasks": "us overhead per task", "ew": "x numpy"}
    for figure in figures:
        base, this = got[("baseline", figure)], got[("this", figure)]
        ratio = statistics.median(b / t for b, t in zip(base, this))
        print(f"{figure:5s} baseline {statistics.median(base):7.2f}  this {statistics.median(this):7.2f} "
              f"{units[figure]}  (paired baseline/this {ratio:.2f}; this: {' '.join(f'{x:.1f}' for x in this)})")
        if figure == "tasks" and ("this", figure, "extra") in got:
            runs = {name: [statistics.median(x) for x in zip(*got[(name, figure, "extra")])] for name in trees}
            print(f"      the {FIGURES['tasks']} tasks / the same blocks in two tasks (CPU ms): baseline "
                  f"{runs['baseline'][0]:.0f} / {runs['baseline'][1]:.0f}, this {runs['this'][0]:.0f} / "
                  f"{runs['this'][1]:.0f}")


if __name__ == "__main__":
    main()
