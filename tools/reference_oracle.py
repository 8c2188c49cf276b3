"""Run the reference project's own programs and pass tests against this package.

The reference (hw-native-sys/pypto) is our oracle: its examples and its unit tests for
the seed passes say what the language and the passes must do. This script runs them,
unmodified, from a scratch folder outside the repository, and prints one line per program
(or a per-file tally of tests), so a session can measure fidelity in one command.

    python tools/reference_oracle.py examples --ref /path/to/reference/checkout
    python tools/reference_oracle.py seedtests --ref /path/to/reference/checkout [-k expr]
    python tools/reference_oracle.py guide --ref /path/to/reference/checkout [--only PAGE] [--show PAGE#N]
    python tools/reference_oracle.py distributed --ref /path/to/reference/checkout [--torch DIR] [-- -k expr]

Nothing of the reference is copied into this repository: the checkout stays where it is,
and the seed tests are run from a temporary copy beside a small conftest of our own.

The distributed mode runs the reference's distributed system tests (tests/st/distributed, torch
programs over several simulated ranks) from a scratch copy beside a small conftest of our own: it
offers the `test_config` (a RunConfig of `--platform`, a2a3sim by default) and `device_ids`
(`--device`, 0-7) fixtures and `--codegen-only` the tests read, puts the reference root on the path
for the tests that import its examples, and sets PYPTO_SIMULATE=1 so a2a3 / a5 map to the
simulators. The tests need torch, which is not a dependency of this package: `--torch DIR` adds a
folder holding it (e.g. `pip install --target DIR torch`) to the path.

The guide mode runs every ```python block of the reference's user guide (docs/en/user/**/*.md),
read from the checkout at run time. The guide marks a few blocks with an HTML comment before
the fence: `doctest: setup` (the page's imports and helpers) and `doctest: run` (a complete,
self-checking program). Every block is run, marked or not, as the page's setup blocks plus the
block, with `__PLATFORM__` replaced by a2a3sim (the guide's own substitution). Unmarked blocks
are written to be read in order and often lean on text earlier on the page, so when a block
fails it runs again, first with the page's earlier blocks that ran cleanly prepended (page
order), then also with the guide's import lines (every distinct `import` / `from ... import`
line the guide contains, each guarded) in front; it counts as ok if any run works, and
otherwise the first run's failure is kept unless that was a NameError. Each run is a fresh
subprocess in a scratch folder, with a timeout; the block runs as `__main__`. A failed block is
  pypto     a deliberate user-facing PyptoError (the message is printed),
  internal  any other exception (a pypto InternalError, an AttributeError on `pl`, a crash),
  fragment  not meant to run as written: not valid Python (shell, pseudo-code), a `...`
            placeholder in the code, a name the prose assumes (NameError after all retries), or
            a kernel-body excerpt at module level (pypto's KernelOnlyError for a DSL op there).
The tally also says how many `doctest: run` blocks pass: those are the guide's own promise.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

TREE = Path(__file__).resolve().parents[1]

EXAMPLE_FOLDERS = ("beginner", "intermediate", "advanced", "models", "utils", "runtime", "distributed")

SEED_TEST_FILES = (
    "test_convert_tensor_to_tile_ops.py",
    "test_lower_composite_ops.py",
    "test_lower_composite_ops_numerical.py",
    "test_expand_mixed_kernel_a2a3.py",
    "test_expand_mixed_kernel_a5.py",
    "test_expand_mixed_kernel_split_aiv.py",
)

# A per-test alarm, shared by our conftests: a hang becomes a failure naming the limit.
ALARM_CONFTEST = '''
import signal
import pytest


def _alarm(signum, frame):
    raise TimeoutError(f"test took longer than {ALARM_SECONDS} s")


@pytest.fixture(autouse=True)
def _alarm_guard():
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(ALARM_SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
'''

# Our conftest for the seed tests: the reference's transforms conftest selects the
# Ascend950 backend around every test.
SEED_CONFTEST = ALARM_CONFTEST + '''
from pypto import backend as _backend
from pypto.backend import BackendType

ALARM_SECONDS = 60


@pytest.fixture(autouse=True)
def _ascend950_backend():
    _backend.reset_for_testing()
    _backend.set_backend_type(BackendType.Ascend950)
    try:
        yield
    finally:
        _backend.reset_for_testing()


# The reference's tests/ut conftest also offers these two fixtures; ours are written anew.
@pytest.fixture
def ascend_backend(request):
    chosen = getattr(request, "param", BackendType.Ascend910B)
    _backend.reset_for_testing()
    _backend.set_backend_type(chosen)
    yield chosen


@pytest.fixture
def default_pass_manager():
    from pypto.ir.pass_manager import OptimizationStrategy, PassManager
    return PassManager.get_strategy(OptimizationStrategy.Default)
'''


# Our conftest for the distributed system tests: the fixtures and options they read.
DISTRIBUTED_CONFTEST = ALARM_CONFTEST + '''
from pypto.runtime.runner import RunConfig

ALARM_SECONDS = 300


def pytest_addoption(parser):
    parser.addoption("--platform", default="a2a3sim")
    parser.addoption("--device", default="0-7")
    parser.addoption("--codegen-only", action="store_true", default=False)


def pytest_configure(config):
    config.addinivalue_line("markers", "platforms(*ids): the platforms a test may run on")


def _device_list(text):
    out = []
    for part in text.split(","):
        first, _, last = part.partition("-")
        out += list(range(int(first), int(last or first) + 1))
    return out


@pytest.fixture(scope="session")
def test_config(request):
    return RunConfig(platform=request.config.getoption("--platform"))


@pytest.fixture(scope="session")
def device_ids(request):
    return _device_list(request.config.getoption("--device"))
'''


def _env(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(tree.resolve()), env.get("PYTHONPATH", "")) if p)
    env.setdefault("PYPTO_SIMULATE", "1")
    return env


def _programs(ref: Path) -> list[tuple[str, list[str]]]:
    """(label, argv tail) for every reference example; qwen3_jit runs as a module."""
    out = []
    for folder in EXAMPLE_FOLDERS:
        for path in sorted((ref / "examples" / folder).glob("*.py")):
            if path.name.startswith("_"):
                continue
            out.append((f"{folder}/{path.stem}", [str(path)]))
    if (ref / "examples" / "models" / "qwen3_jit" / "qwen3_decode.py").exists():
        out.append(("models/qwen3_jit", ["-m", "examples.models.qwen3_jit.qwen3_decode"]))
    return out


def run_examples(ref: Path, tree: Path, only: str | None, timeout: float) -> int:
    passed = 0
    programs = [p for p in _programs(ref) if not only or only in p[0]]
    for label, argv in programs:
        start = time.perf_counter()
        with tempfile.TemporaryDirectory() as scratch:
            cwd = str(ref) if argv[0] == "-m" else scratch
            try:
                proc = subprocess.run(
                    [sys.executable, *argv], cwd=cwd, env=_env(tree), capture_output=True,
                    text=True, timeout=timeout,
                )
                ok = proc.returncode == 0
                tail = (proc.stderr.strip().splitlines() or proc.stdout.strip().splitlines() or [""])[-1]
            except subprocess.TimeoutExpired:
                ok, tail = False, f"timed out after {timeout:.0f} s"
        passed += ok
        mark = "PASS" if ok else "FAIL"
        print(f"{mark} {label:48s} {time.perf_counter() - start:6.1f}s  {'' if ok else tail[:160]}", flush=True)
    print(f"{passed}/{len(programs)} reference programs pass")
    return 0


def run_seed_tests(ref: Path, tree: Path, pytest_args: list[str]) -> int:
    source = ref / "tests" / "ut" / "ir" / "transforms"
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch) / "seed_tests"
        work.mkdir()
        for name in SEED_TEST_FILES:
            if (source / name).exists():
                shutil.copy(source / name, work / name)
        (work / "conftest.py").write_text(SEED_CONFTEST)
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf", "--tb=line",
             "-o", "addopts=", "--rootdir", str(work), str(work), *pytest_args],
            cwd=scratch, env=_env(tree),
        )
    return proc.returncode


def run_distributed_tests(ref: Path, tree: Path, torch_dir: Path | None, pytest_args: list[str]) -> int:
    source = ref / "tests" / "st" / "distributed"
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch) / "st"
        shutil.copytree(source, work / "distributed")
        (work / "conftest.py").write_text(DISTRIBUTED_CONFTEST)
        env = _env(tree)
        extra = [str(p) for p in (torch_dir, ref) if p is not None]
        env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], *extra])
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE", "--tb=line",
             "-o", "addopts=", "--continue-on-collection-errors", "--rootdir", str(work),
             str(work / "distributed"), *pytest_args],
            cwd=work, env=env,
        )
    return proc.returncode


# Runs one guide block as __main__ and writes what happened to a JSON file (argv: block, report).
GUIDE_RUNNER = """
import json, runpy, sys, traceback
block, report = sys.argv[1], sys.argv[2]
result = {"status": "ok"}
try:
    runpy.run_path(block, run_name="__main__")
except SystemExit as exc:
    if exc.code not in (None, 0):
        result = {"status": "exception", "type": "SystemExit", "module": "builtins", "message": str(exc.code)}
except BaseException as exc:
    import pypto.errors as errors
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/pypto/" in f.filename]
    where = f"{frames[-1].filename.split('/pypto/', 1)[1]}:{frames[-1].lineno}" if frames else ""
    result = {"status": "exception", "type": type(exc).__name__, "module": type(exc).__module__,
              "message": str(exc).strip().splitlines()[0] if str(exc).strip() else "",
              "pypto": isinstance(exc, errors.PyptoError),
              "internal": isinstance(exc, errors.InternalError),
              "name_error": isinstance(exc, NameError), "where": where,
              "traceback": traceback.format_exc()}
with open(report, "w") as out:
    json.dump(result, out)
"""


@dataclass
class GuideBlock:
    page: str
    index: int
    line: int
    source: str
    marker: str = ""              # "setup", "run" or "" (the guide's doctest comment)
    verdict: str = ""
    message: str = ""
    detail: dict = field(default_factory=dict)


def _guide_blocks(ref: Path) -> dict[str, list[GuideBlock]]:
    """Every ```python block of the user guide, per page (path relative to docs/en/user)."""
    root = ref / "docs" / "en" / "user"
    pages: dict[str, list[GuideBlock]] = {}
    for path in sorted(root.rglob("*.md")):
        lines = path.read_text(encoding="utf-8").splitlines()
        blocks, i = [], 0
        while i < len(lines):
            if lines[i].strip().startswith("```python"):
                indent = len(lines[i]) - len(lines[i].lstrip())
                j = i + 1
                while j < len(lines) and lines[j].strip() != "```":
                    j += 1
                body = "\n".join(line[indent:] for line in lines[i + 1:j]) + "\n"
                marker = re.match(r"\s*<!--\s*doctest:\s*(setup|run)\s*-->", lines[i - 1]) if i else None
                blocks.append(GuideBlock(str(path.relative_to(root)), len(blocks) + 1, i + 1,
                                         body.replace("__PLATFORM__", "a2a3sim"),
                                         marker.group(1) if marker else ""))
                i = j
            i += 1
        if blocks:
            pages[str(path.relative_to(root))] = blocks
    return pages


def _guide_imports(pages: dict[str, list[GuideBlock]]) -> str:
    """Every distinct import line of the guide, each guarded: the prelude a reader carries along."""
    seen: list[str] = []
    for blocks in pages.values():
        for block in blocks:
            for line in block.source.splitlines():
                if re.match(r"(import |from \S+ import )", line) and "(" not in line and line not in seen:
                    seen.append(line)
    return "".join(f"try:\n    {line}\nexcept ImportError:\n    pass\n" for line in seen)


def _has_placeholder(source: str) -> bool:
    """A bare `...` statement or a `...` argument marks a block as an outline, not a program."""
    tree = ast.parse(source)
    return any(isinstance(node, ast.Constant) and node.value is Ellipsis for node in ast.walk(tree))


def _run_block(source: str, tree: Path, timeout: float) -> dict:
    with tempfile.TemporaryDirectory() as scratch:
        block, report = Path(scratch) / "guide_block.py", Path(scratch) / "report.json"
        block.write_text(source)
        try:
            subprocess.run([sys.executable, "-c", GUIDE_RUNNER, str(block), str(report)], cwd=scratch,
                           env=_env(tree), capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"status": "exception", "type": "Timeout", "message": f"timed out after {timeout:.0f} s"}
        if not report.exists():
            return {"status": "exception", "type": "Crash", "message": "the interpreter died without a report"}
        return json.loads(report.read_text())


def _classify(block: GuideBlock, result: dict) -> None:
    block.detail = result
    if result["status"] == "ok":
        block.verdict = "ok"
        return
    block.message = f"{result['type']}: {result.get('message', '')}"
    if _has_placeholder(block.source):
        block.verdict = "fragment"
    elif result.get("name_error") and not result.get("pypto"):
        block.verdict = "fragment"
    elif result.get("type") == "KernelOnlyError":      # a kernel-body excerpt written at module level
        block.verdict = "fragment"
    elif result.get("pypto") and not result.get("internal"):
        block.verdict = "pypto"
    else:
        block.verdict = "internal"
        if result.get("where"):
            block.message += f"  [{result['where']}]"


def _run_page(blocks: list[GuideBlock], tree: Path, timeout: float, imports: str) -> None:
    setup = "".join(b.source + "\n" for b in blocks if b.marker == "setup")
    clean: list[str] = []          # unmarked blocks that ran, in order: the context for later ones
    for block in blocks:
        try:
            ast.parse(block.source)
        except SyntaxError as exc:
            block.verdict, block.message = "fragment", f"not Python: {exc.msg} (line {exc.lineno})"
            continue
        if block.marker == "setup":
            _classify(block, _run_block(block.source, tree, timeout))
            continue
        result = _run_block(setup + block.source, tree, timeout)
        for prelude in ("".join(c + "\n" for c in clean), imports + "".join(c + "\n" for c in clean)):
            if result["status"] == "ok" or block.marker == "run":
                break
            if not prelude:
                continue
            retry = _run_block(prelude + setup + block.source, tree, timeout)
            if retry["status"] == "ok" or result.get("name_error"):
                result = retry
        _classify(block, result)
        if block.verdict == "ok" and not block.marker:
            clean.append(block.source)


def run_guide(ref: Path, tree: Path, only: str | None, show: str | None, timeout: float, jobs: int) -> int:
    every_page = _guide_blocks(ref)
    imports = _guide_imports(every_page)
    pages = {page: blocks for page, blocks in every_page.items() if not only or only in page}
    if show:
        page, _, number = show.partition("#")
        block = pages[page][int(number) - 1]
        print(block.source)
        _run_page(pages[page][: int(number)], tree, timeout, imports)
        print(block.verdict, block.message)
        print(block.detail.get("traceback", ""))
        return 0
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(lambda blocks: _run_page(blocks, tree, timeout, imports), pages.values()))
    kinds = ("ok", "pypto", "internal", "fragment")
    totals = dict.fromkeys(kinds, 0)
    print(f"{'page':52s} {'blocks':>6s} " + " ".join(f"{k:>8s}" for k in kinds))
    for page, blocks in pages.items():
        counts = {k: sum(b.verdict == k for b in blocks) for k in kinds}
        for k in kinds:
            totals[k] += counts[k]
        print(f"{page:52s} {len(blocks):6d} " + " ".join(f"{counts[k]:8d}" for k in kinds))
        for b in blocks:
            if b.verdict != "ok":
                mark = f"[{b.marker}]" if b.marker else ""
                print(f"    #{b.index:<2d} line {b.line:<4d} {b.verdict:8s}{mark:7s} {b.message[:200]}")
    total = sum(totals.values())
    print(f"{'TOTAL':52s} {total:6d} " + " ".join(f"{totals[k]:8d}" for k in kinds))
    runs = [b for blocks in pages.values() for b in blocks if b.marker == "run"]
    print(f"{sum(b.verdict == 'ok' for b in runs)}/{len(runs)} blocks the guide marks `doctest: run` pass")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("examples", "seedtests", "guide", "distributed"))
    parser.add_argument("--ref", type=Path, required=True, help="a checkout of the reference")
    parser.add_argument("--tree", type=Path, default=TREE, help="the pypto tree to test")
    parser.add_argument("--only", help="examples/guide: run the programs (pages) whose label contains this")
    parser.add_argument("--show", help="guide: run one block (PAGE#N) and print its source and traceback")
    parser.add_argument("--jobs", type=int, default=2, help="guide: pages run in parallel")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--torch", type=Path, help="distributed: a folder holding torch (added to the path)")
    args, rest = parser.parse_known_args()
    rest = [arg for arg in rest if arg != "--"]    # `seedtests -- -k expr` passes the tail to pytest
    args.tree, args.ref = args.tree.resolve(), args.ref.resolve()   # the programs run from a scratch folder
    if args.what == "examples":
        return run_examples(args.ref, args.tree, args.only, args.timeout)
    if args.what == "guide":
        return run_guide(args.ref, args.tree, args.only, args.show, min(args.timeout, 120.0), args.jobs)
    if args.what == "distributed":
        return run_distributed_tests(args.ref, args.tree, args.torch.resolve() if args.torch else None,
                                     [a for a in rest if a != "--"])
    return run_seed_tests(args.ref, args.tree, rest)


if __name__ == "__main__":
    raise SystemExit(main())
