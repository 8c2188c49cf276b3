"""Compile latency per phase (frontend / passes / codegen), side by side with a baseline tree.

    python bench/compile_latency.py                      # this tree vs the baseline tree, paired samples
    python bench/compile_latency.py --baseline none      # this tree only
    python bench/compile_latency.py --baseline /path/to/other/checkout --repeat 30

Kernels: (a) 128x128 tile add, (b) row softmax 64x128, (c) 128^3 matmul + add (a mixed kernel:
AIC + AIV after ExpandMixedKernel), (d) chains of 1 / 10 / 100 elementwise ops (chain100 is (d)).
Each is DSL text: frontend = `pl.parse`, passes = the Default pipeline (`lower`), codegen = PTO
for every kernel + the host orchestration artifact. The 1 -> 10 -> 100 chain gives the per-op
slope; a constant slope means compile time is linear in program size.

Both trees run this same file in a long-lived child process each (`--child`, PYTHONPATH = the
tree); the parent asks them for one compile at a time, alternately, so every sample of this tree has
a baseline sample taken next to it under the same machine load. Times are CPU seconds of the child
(time.process_time: other processes on a shared machine do not count); printed are the medians and
the median of the paired baseline / this ratios (> 1: this tree is faster). The default baseline is
the issue-17 starting commit 4cf2943, checked out on first use into a temporary folder
(`git archive`, no worktree left behind in the repository). PYPTO_VERIFY_LEVEL is removed from the children's environment (both use the default level).

The child also reports the old single-kernel figures: `kernel.compile` of a 64x128 @pl.jit add with a
fresh cache (target <= 25 ms) and a cache-hit call (target <= 200 us).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

BASELINE_COMMIT = "4cf2943"
DEFAULT_BASELINE = "commit"
PHASES = ("frontend", "passes", "codegen", "total")
CHAINS = (1, 10, 100)


def _program(params: str, body: str) -> str:
    lines = "\n".join("            " + line for line in body.strip().splitlines())
    return ("import pypto.language as pl\n\n\n@pl.program\nclass K:\n"
            "    @pl.function(type=pl.FunctionType.Orchestration)\n"
            f"    def main(self, {params}):\n"
            "        with pl.at(level=pl.Level.CORE_GROUP):\n"
            f"{lines}\n"
            "        return out\n")


def _t(r: int, c: int, dtype: str = "FP32") -> str:
    return f"pl.Tensor[[{r}, {c}], pl.{dtype}]"


def _chain(n: int) -> str:
    ops = ("add", "mul", "sub", "maximum")
    body = ["t = pl.load(a, [0, 0], [64, 128])", "u = pl.load(b, [0, 0], [64, 128])"]
    body += [f"t = pl.{ops[i % len(ops)]}(t, u)" for i in range(n)]
    body.append("out = pl.store(t, [0, 0], out)")
    return _program(f"a: {_t(64, 128)}, b: {_t(64, 128)}, out: pl.Out[{_t(64, 128)}]", "\n".join(body))


KERNELS = {
    "a_add128": _program(f"a: {_t(128, 128)}, b: {_t(128, 128)}, out: pl.Out[{_t(128, 128)}]", """
ta = pl.load(a, [0, 0], [128, 128])
tb = pl.load(b, [0, 0], [128, 128])
out = pl.store(pl.add(ta, tb), [0, 0], out)"""),
    "b_softmax": _program(f"x: {_t(64, 128)}, out: pl.Out[{_t(64, 128)}]", """
tx = pl.load(x, [0, 0], [64, 128])
scratch = pl.create_tile([64, 128], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
mx: pl.Tile[[64, 1], pl.FP32] = pl.row_max(tx, scratch)
e = pl.exp(pl.row_expand_sub(tx, mx))
sm: pl.Tile[[64, 1], pl.FP32] = pl.row_sum(e, scratch)
out = pl.store(pl.row_expand_div(e, sm), [0, 0], out)"""),
    "c_matmul_add": _program(f"a: {_t(128, 128, 'FP16')}, b: {_t(128, 128, 'FP16')}, bias: {_t(128, 128)}, "
                             f"out: pl.Out[{_t(128, 128)}]", """
left = pl.move(pl.load(a, [0, 0], [128, 128], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
right = pl.move(pl.load(b, [0, 0], [128, 128], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
acc = pl.move(pl.matmul(left, right), target_memory=pl.Mem.Vec)
out = pl.store(pl.add(acc, pl.load(bias, [0, 0], [128, 128])), [0, 0], out)"""),
    **{f"chain{n}": _chain(n) for n in CHAINS},
}


# ---------------------------------------------------------------- child: measure one tree
def _compile_once(src: str) -> dict:
    import pypto.language as pl
    from pypto.codegen.orchestration import generate_all
    from pypto.codegen.pto import generate
    from pypto.runtime.compile import lower
    t0 = time.process_time()
    program = pl.parse(src)
    t1 = time.process_time()
    lowered = lower(program, platform="a2a3sim")
    t2 = time.process_time()
    if not generate(lowered) or not generate_all(lowered):
        raise RuntimeError("codegen produced no kernel or no orchestration")
    t3 = time.process_time()
    return {"frontend": t1 - t0, "passes": t2 - t1, "codegen": t3 - t2, "total": t3 - t0}


def _jit_figures(repeat: int) -> dict:
    import numpy as np
    import pypto.language as pl
    from pypto.runtime import RunConfig

    @pl.jit
    def tile_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            ta = pl.load(a, [0, 0], [64, 128])
            tb = pl.load(b, [0, 0], [64, 128])
            pl.store(pl.add(ta, tb), [0, 0], c)
        return c

    config = RunConfig()
    a = np.random.default_rng(0).standard_normal((64, 128), dtype=np.float32)
    b, c = np.ones((64, 128), np.float32), np.zeros((64, 128), np.float32)
    tile_add.compile(a, b, c, config=config)
    compile_s = []
    for _ in range(repeat):
        tile_add.clear_cache()
        t0 = time.process_time()
        tile_add.compile(a, b, c, config=config)
        compile_s.append(time.process_time() - t0)
    tile_add(a, b, c, config=config)
    np.testing.assert_allclose(c, a + b)
    hit_s = []
    for _ in range(repeat * 20):
        t0 = time.process_time()
        tile_add(a, b, c, config=config)
        hit_s.append(time.process_time() - t0)
    return {"jit_compile": compile_s, "jit_hit": hit_s}


def serve() -> None:
    """Child loop: `compile <kernel>` → one compile's phase seconds; `jit <repeat>` → the jit figures."""
    for line in sys.stdin:
        cmd, arg = line.split()
        got = _compile_once(KERNELS[arg]) if cmd == "compile" else _jit_figures(int(arg))
        sys.stdout.write(json.dumps(got) + "\n")
        sys.stdout.flush()


# ---------------------------------------------------------------- parent: alternate trees, report
class _Child:
    def __init__(self, tree: Path):
        env = {k: v for k, v in os.environ.items() if k != "PYPTO_VERIFY_LEVEL"}
        env["PYTHONPATH"] = str(tree)
        self.tree = tree
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--child"], cwd=tree, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(self, cmd: str, arg) -> dict:
        self.proc.stdin.write(f"{cmd} {arg}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"the child run in {self.tree} failed (see its traceback above)")
        return json.loads(line)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def measure(trees: dict, kernels: list, repeat: int) -> tuple:
    """({label: {kernel: {phase: [s]}}}, {kernel: {phase: [baseline / this per pair]}}): each sample of
    one tree is taken right after (or before) the other's, so both see the same machine load."""
    children = {label: _Child(tree) for label, tree in trees.items()}
    samples: dict = {label: {} for label in trees}
    ratios: dict = {}
    try:
        for k in kernels:
            for c in children.values():
                c.ask("compile", k)                       # warm imports and first-use caches
        for r in range(repeat):
            for k in kernels:
                order = list(children) if r % 2 == 0 else list(reversed(children))
                got = {label: children[label].ask("compile", k) for label in order}
                for label, phases in got.items():
                    for phase, sec in phases.items():
                        samples[label].setdefault(k, {}).setdefault(phase, []).append(sec)
                if "base" in got:
                    for phase in PHASES:
                        ratios.setdefault(k, {}).setdefault(phase, []).append(got["base"][phase] / got["this"][phase])
        for label, c in children.items():
            samples[label]["_jit"] = c.ask("jit", max(5, repeat // 2))
    finally:
        for c in children.values():
            c.close()
    return samples, ratios


def _med_ms(samples: dict, kernel: str, phase: str) -> float:
    return statistics.median(samples[kernel][phase]) * 1e3


def _slopes(samples: dict) -> list:
    totals = [_med_ms(samples, f"chain{n}", "total") for n in CHAINS]
    passes = [_med_ms(samples, f"chain{n}", "passes") for n in CHAINS]
    return [((passes[i + 1] - passes[i]) / (CHAINS[i + 1] - CHAINS[i]),
             (totals[i + 1] - totals[i]) / (CHAINS[i + 1] - CHAINS[i])) for i in range(len(CHAINS) - 1)]


def report(samples: dict, ratios: dict, kernels: list) -> None:
    cur, base = samples["this"], samples.get("base")
    head = f"{'kernel':14}" + "".join(f"{p:>10}" for p in PHASES)
    if base:
        head += "".join(f"{'x ' + p:>11}" for p in PHASES)
    print("median ms (this tree)" + ("; 'x' columns: median of paired baseline / this ratios" if base else ""))
    print(head)
    for k in kernels:
        row = f"{k:14}" + "".join(f"{_med_ms(cur, k, p):10.2f}" for p in PHASES)
        if base:
            row += "".join(f"{statistics.median(ratios[k][p]):10.2f}x" for p in PHASES)
        print(row)
    if all(f"chain{n}" in kernels for n in CHAINS):
        for label, got in (("this", cur), ("baseline", base)):
            if got:
                s = _slopes(got)
                print(f"per-op slope ({label}): passes {s[0][0]:.3f} -> {s[1][0]:.3f} ms/op, "
                      f"total {s[0][1]:.3f} -> {s[1][1]:.3f} ms/op  (chain 1->10, 10->100)")
    for label, got in (("this", cur), ("baseline", base)):
        if got:
            j = got["_jit"]
            print(f"jit 64x128 add ({label}): compile {statistics.median(j['jit_compile']) * 1e3:.2f} ms "
                  f"(target <= 25), cache hit {statistics.median(j['jit_hit']) * 1e6:.1f} us (target <= 200)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="paired compiles per kernel")
    parser.add_argument("--baseline", default=DEFAULT_BASELINE,
                        help=f"another checkout, 'none', or 'commit' ({BASELINE_COMMIT}, the default)")
    parser.add_argument("--kernels", default=",".join(KERNELS))
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child:
        serve()
        return
    kernels = opts.kernels.split(",")
    trees = {"this": Path(__file__).resolve().parents[1]}
    if opts.baseline == DEFAULT_BASELINE:
        opts.baseline = str(checkout_baseline(trees["this"]))
    if opts.baseline != "none":
        if not Path(opts.baseline, "pypto").is_dir():
            raise SystemExit(f"no baseline checkout at {opts.baseline} (git worktree add --detach {opts.baseline} "
                             "4cf2943, or --baseline none)")
        trees["base"] = Path(opts.baseline)
    samples, ratios = measure(trees, kernels, opts.repeat)
    report(samples, ratios, kernels)


def checkout_baseline(repo: Path) -> Path:
    """The baseline commit's tree in a temporary folder (reused across runs of the same commit)."""
    import tempfile
    target = Path(tempfile.gettempdir()) / f"pypto-bench-{BASELINE_COMMIT}"
    if not (target / "pypto").is_dir():
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(repo), "archive", BASELINE_COMMIT], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


if __name__ == "__main__":
    main()
