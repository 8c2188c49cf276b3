"""Import time of `pypto.language`, from `python -X importtime` in fresh interpreters.

    python bench/import_time.py [--runs N] [--limit SECONDS]

Prints the best and median cumulative time of the `pypto.language` import over N runs, the
slowest modules it pulls in (self time, best run), and fails (exit 1) when the best run exceeds
the limit (default 0.3 s) or when the import loaded ml_dtypes, which pypto.ir.dtypes imports only
when a low-precision dtype is first converted to numpy (it costs about a second by itself).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")


def one_run(tree: Path) -> dict:
    """{module: (self us, cumulative us)} for one fresh `import pypto.language`."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", "import pypto.language"], cwd=tree, env=env,
                          capture_output=True, text=True, check=True)
    out = {}
    for line in done.stderr.splitlines():
        m = _LINE.match(line)
        if m:
            out[m.group(4)] = (int(m.group(1)), int(m.group(2)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--limit", type=float, default=0.3)
    opts = parser.parse_args()
    tree = Path(__file__).resolve().parents[1]
    runs = [one_run(tree) for _ in range(opts.runs)]
    totals = [r["pypto.language"][1] / 1e6 for r in runs]
    best = runs[totals.index(min(totals))]
    print(f"import pypto.language: best {min(totals):.3f} s, median {statistics.median(totals):.3f} s "
          f"over {opts.runs} runs (limit {opts.limit} s)")
    print("slowest modules (self time, best run):")
    for name, (self_us, _cum) in sorted(best.items(), key=lambda kv: -kv[1][0])[:8]:
        print(f"  {self_us / 1e3:7.1f} ms  {name}")
    problems = []
    if any(name.split(".")[0] == "ml_dtypes" for r in runs for name in r):
        problems.append("importing pypto.language loaded ml_dtypes")
    if min(totals) > opts.limit:
        problems.append(f"the best import took {min(totals):.3f} s > {opts.limit} s")
    for p in problems:
        print("FAIL:", p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
