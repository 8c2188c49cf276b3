"""Run the reference project's own programs and pass tests against this package.

The reference (hw-native-sys/pypto) is our oracle: its examples and its unit tests for
the seed passes say what the language and the passes must do. This script runs them,
unmodified, from a scratch folder outside the repository, and prints one line per program
(or a per-file tally of tests), so a session can measure fidelity in one command.

    python tools/reference_oracle.py examples --ref /path/to/reference/checkout
    python tools/reference_oracle.py seedtests --ref /path/to/reference/checkout [-k expr]

Nothing of the reference is copied into this repository: the checkout stays where it is,
and the seed tests are run from a temporary copy beside a small conftest of our own.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
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

# Our conftest for the seed tests: the reference's transforms conftest selects the
# Ascend950 backend around every test; a per-test alarm turns a hang into a failure.
SEED_CONFTEST = '''
import signal
import pytest
from pypto import backend as _backend
from pypto.backend import BackendType


def _alarm(signum, frame):
    raise TimeoutError("test took longer than 60 s")


@pytest.fixture(autouse=True)
def _backend_and_alarm():
    _backend.reset_for_testing()
    _backend.set_backend_type(BackendType.Ascend950)
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(60)
    try:
        yield
    finally:
        signal.alarm(0)
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("examples", "seedtests"))
    parser.add_argument("--ref", type=Path, required=True, help="a checkout of the reference")
    parser.add_argument("--tree", type=Path, default=TREE, help="the pypto tree to test")
    parser.add_argument("--only", help="examples: run the programs whose label contains this")
    parser.add_argument("--timeout", type=float, default=600.0)
    args, rest = parser.parse_known_args()
    args.tree, args.ref = args.tree.resolve(), args.ref.resolve()   # the programs run from a scratch folder
    if args.what == "examples":
        return run_examples(args.ref, args.tree, args.only, args.timeout)
    return run_seed_tests(args.ref, args.tree, rest)


if __name__ == "__main__":
    raise SystemExit(main())
