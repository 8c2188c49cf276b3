"""Mutation fuzzer: small AST mutations of the runnable examples, each run and classified.

    python bench/fuzz.py --mutants 10000                  # two processes, 20 s per run, both simulators
    python bench/fuzz.py --mutants 300 --seed 1 --show internal,hang,user_noloc

A mutant is one example script with one small change inside a kernel (a function under a `pl.`
decorator or in a `@pl.program` class): a shape or offset constant, a dtype, an op swapped for
another, an argument or keyword dropped, swapped or renamed, a statement deleted or duplicated,
a variable renamed, a `with pl.at` unwrapped, a loop bound pushed, a never-ending loop, a piece of
Python the DSL does not support. The example's own numpy check stays as it was.

Outcomes (what a new user would meet):
  ok          the script ran to its end
  user_loc    a PyptoError whose span is a line of the mutant (the promise)
  user_noloc  a PyptoError without a span in the mutant file
  internal    InternalError, or any non-pypto exception raised inside pypto
  hang        the run outlived --timeout
  wrong       a semantics-preserving mutant (commuted operands, a consistent rename) failed the
              example's numpy check: a silent wrong answer
  differs     a semantics-changing mutant ran and failed the numpy check (expected)
  harness     the mutant broke the example's own Python outside pypto (an unpacking, ...)
Goal: 0 internal, 0 hang, 0 user_noloc, 0 wrong.

Each worker process imports pypto once and runs mutants in-process (runpy, a fresh namespace and a
fresh file per mutant, so spans and source lines are the mutant's); the parent kills a worker
that outlives the timeout and starts another. Mutant i of seed s is always the same program.
"""

from __future__ import annotations

import argparse
import ast
import collections
import copy
import io
import os
import pathlib
import random
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from typing import Callable, Optional

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
PLATFORMS = ("a2a3sim", "a5sim")
CLASSES = ("ok", "user_loc", "user_noloc", "internal", "hang", "wrong", "differs", "harness")
BAD = ("internal", "hang", "user_noloc", "wrong")
WATCHDOG_SECONDS = 8.0         # below the per-run timeout: a livelock is a diagnosed error, not a hang

# scripts whose own checks read error messages (operand names, lines)
CHECKS_MESSAGES = {"05_deadlock.py", "06_strict_memory.py", "03_error_handling.py"}
# scripts whose kernels are strings or whose point is timing
SKIP = {"02_parse_from_text.py", "02_benchmark.py"}

DTYPES = ["FP32", "FP16", "BF16", "INT32", "INT8", "INT16", "FP64", "UINT8", "INT64", "BOOL", "INDEX"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "matmul", "row_expand_mul", "adds", "muls"]
UNARY = ["exp", "neg", "abs", "sqrt", "rsqrt", "relu", "log", "recip", "row_max", "row_sum", "transpose"]
MEMORY = ["load", "store", "create_tile", "slice", "assemble", "move", "reshape", "fillpad"]
COMMUTATIVE = {"add", "mul", "maximum", "minimum"}
UNSUPPORTED = [
    "print('hello')", "import os", "del {name}", "{name} = [k for k in range(3)]",
    "{name} = lambda z: z", "assert {name} is not None", "global {name}", "{name} = {{'a': 1}}",
    "{name} = f'{{1}}'", "{name} = (yield)", "{name} = 1 if True else 2", "raise ValueError('x')",
    "try:\n    pass\nexcept Exception:\n    pass", "{name}: int = 'text'", "{name} = None",
    "{name} = [1, 2][5]", "{name} = 1 / 0", "{name} = {name}.shape[9]", "{name} = {name}[0]",
]


# ------------------------------------------------------------------ finding kernels
def _is_pl_decorator(dec: ast.expr) -> bool:
    text = ast.unparse(dec)
    return text.startswith(("pl.", "pld."))


def kernel_functions(tree: ast.Module) -> list:
    """FunctionDefs under a `pl.` decorator, and the methods of `@pl.program` classes."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any(_is_pl_decorator(d) for d in node.decorator_list):
            found.append(node)
        elif isinstance(node, ast.ClassDef) and any(_is_pl_decorator(d) for d in node.decorator_list):
            found.extend(n for n in node.body if isinstance(n, ast.FunctionDef))
    return list({id(f): f for f in found}.values())


def _pl_attr(node: ast.AST) -> Optional[str]:
    """'add' for `pl.add` / `pl.tile.add` / `pl.tensor.add`, else None."""
    if isinstance(node, ast.Attribute):
        base = node.value
        while isinstance(base, ast.Attribute):
            base = base.value
        if isinstance(base, ast.Name) and base.id in ("pl", "pld"):
            return node.attr
    return None


def _parents(fn: ast.FunctionDef) -> dict:
    return {id(child): parent for parent in ast.walk(fn) for child in ast.iter_child_nodes(parent)}


def _stmt_lists(fn: ast.FunctionDef) -> list:
    """Every statement list inside a kernel body (body / orelse of every compound statement)."""
    lists = []
    for node in ast.walk(fn):
        for name in ("body", "orelse"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                lists.append(block)
    return lists


def _local_names(fn: ast.FunctionDef) -> list:
    params = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
    stored = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return sorted(stored - params - {"pl", "pld", "self"})


def _all_names(fn: ast.FunctionDef) -> list:
    names = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} | {a.arg for a in fn.args.args}
    return sorted(names - {"pl", "pld", "self"})


# ------------------------------------------------------------------ mutations
@dataclass
class Mutation:
    kind: str
    preserves: bool = False          # the result must equal the original program's
    detail: str = ""


@dataclass
class Mutant:
    index: int
    example: str
    platform: str
    mutation: Mutation
    source: str = field(repr=False, default="")


def _int_mutation(rng: random.Random, v: int) -> int:
    return rng.choice([0, -1, 1, 3, -v, v + 1, v - 1, v * 2, max(1, v // 2), 100000, 7])


def mutate(tree: ast.Module, rng: random.Random) -> Optional[Mutation]:
    """Apply one random mutation to a kernel of `tree` in place; None when the chosen kind has no site."""
    kernels = kernel_functions(tree)
    if not kernels:
        return None
    fn = rng.choice(kernels)
    kind = rng.choice(list(MUTATORS))
    return MUTATORS[kind](fn, rng)


def _m_int(fn, rng):
    sites = [n for n in ast.walk(fn) if isinstance(n, ast.Constant) and type(n.value) is int]
    if not sites:
        return None
    node = rng.choice(sites)
    old, node.value = node.value, _int_mutation(rng, node.value)
    return Mutation("int", detail=f"{old} -> {node.value} at line {node.lineno}")


def _m_float(fn, rng):
    sites = [n for n in ast.walk(fn) if isinstance(n, ast.Constant) and type(n.value) is float]
    if not sites:
        return None
    node = rng.choice(sites)
    old, node.value = node.value, rng.choice([0.0, -1.0, float("inf"), float("nan"), 1e30, 2.5])
    return Mutation("float", detail=f"{old} -> {node.value} at line {node.lineno}")


def _m_dtype(fn, rng):
    sites = [n for n in ast.walk(fn) if _pl_attr(n) in DTYPES]
    if not sites:
        return None
    node = rng.choice(sites)
    old, node.attr = node.attr, rng.choice([d for d in DTYPES if d != node.attr])
    return Mutation("dtype", detail=f"{old} -> {node.attr} at line {node.lineno}")


def _m_op_swap(fn, rng):
    families = (BINARY, UNARY, MEMORY)
    sites = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and any(_pl_attr(n.func) in f for f in families)]
    if not sites:
        return None
    node = rng.choice(sites)
    family = next(f for f in families if node.func.attr in f)
    pool = family if rng.random() < 0.8 else BINARY + UNARY + MEMORY
    old, node.func.attr = node.func.attr, rng.choice([o for o in pool if o != node.func.attr])
    return Mutation("op_swap", detail=f"{old} -> {node.func.attr} at line {node.lineno}")


def _calls(fn):
    return [n for n in ast.walk(fn) if isinstance(n, ast.Call)]


def _m_arg_drop(fn, rng):
    sites = [n for n in _calls(fn) if n.args]
    if not sites:
        return None
    node = rng.choice(sites)
    k = rng.randrange(len(node.args))
    del node.args[k]
    return Mutation("arg_drop", detail=f"argument {k} at line {node.lineno}")


def _m_arg_swap(fn, rng):
    sites = [n for n in _calls(fn) if len(n.args) >= 2]
    if not sites:
        return None
    node = rng.choice(sites)
    i, j = rng.sample(range(len(node.args)), 2)
    node.args[i], node.args[j] = node.args[j], node.args[i]
    return Mutation("arg_swap", detail=f"arguments {i}, {j} at line {node.lineno}")


def _m_arg_dup(fn, rng):
    sites = [n for n in _calls(fn) if n.args]
    if not sites:
        return None
    node = rng.choice(sites)
    node.args.append(copy.deepcopy(rng.choice(node.args)))
    return Mutation("arg_dup", detail=f"line {node.lineno}")


def _m_kwarg(fn, rng):
    sites = [n for n in _calls(fn) if n.keywords]
    if not sites:
        return None
    node = rng.choice(sites)
    kw = rng.choice(node.keywords)
    action = rng.choice(["drop", "rename", "value"])
    if action == "drop":
        node.keywords.remove(kw)
    elif action == "rename":
        kw.arg = (kw.arg or "x") + "_typo"
    else:
        kw.value = rng.choice([ast.Constant(-1), ast.Constant(3.5), ast.Constant("bogus"), ast.Constant(None),
                               ast.List([ast.Constant(1), ast.Constant(2)], ast.Load())])
    return Mutation("kwarg_" + action, detail=f"{kw.arg} at line {node.lineno}")


def _m_list(fn, rng):
    sites = [n for n in ast.walk(fn) if isinstance(n, ast.List) and n.elts]
    if not sites:
        return None
    node = rng.choice(sites)
    if rng.random() < 0.5:
        del node.elts[rng.randrange(len(node.elts))]
        return Mutation("list_drop", detail=f"line {node.lineno}")
    node.elts.append(copy.deepcopy(rng.choice(node.elts)))
    return Mutation("list_add", detail=f"line {node.lineno}")


def _m_stmt_delete(fn, rng):
    lists = _stmt_lists(fn)
    block = rng.choice(lists)
    k = rng.randrange(len(block))
    line = block[k].lineno
    del block[k]
    if not block:
        block.append(ast.Pass())
    return Mutation("stmt_delete", detail=f"line {line}")


def _m_stmt_dup(fn, rng):
    block = rng.choice(_stmt_lists(fn))
    k = rng.randrange(len(block))
    block.insert(k, copy.deepcopy(block[k]))
    return Mutation("stmt_dup", detail=f"line {block[k].lineno}")


def _m_name(fn, rng):
    names = _all_names(fn)
    sites = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in names]
    if len(names) < 2 or not sites:
        return None
    node = rng.choice(sites)
    old = node.id
    node.id = rng.choice([n for n in names if n != old] + ["undefined_name"])
    return Mutation("name", detail=f"{old} -> {node.id} at line {node.lineno}")


def _m_unwrap_at(fn, rng):
    for block in _stmt_lists(fn):
        for k, stmt in enumerate(block):
            if isinstance(stmt, ast.With) and "pl.at" in ast.unparse(stmt.items[0].context_expr):
                block[k:k + 1] = stmt.body
                return Mutation("unwrap_at", detail=f"line {stmt.lineno}")
    return None


def _m_range_bound(fn, rng):
    sites = [n for n in _calls(fn) if _pl_attr(n.func) in ("range", "parallel", "unroll") and n.args]
    if not sites:
        return None
    node = rng.choice(sites)
    k = 0 if len(node.args) == 1 else 1
    node.args[k] = ast.BinOp(node.args[k], ast.Add(), ast.Constant(rng.choice([1, 3, 64])))
    return Mutation("range_bound", detail=f"line {node.lineno}")


def _m_forever(fn, rng):
    block = rng.choice(_stmt_lists(fn))
    k = rng.randrange(len(block) + 1)
    block.insert(k, ast.parse("while True:\n    pass").body[0])
    return Mutation("forever", detail=f"before statement {k} of a block")


def _m_unsupported(fn, rng):
    block = rng.choice(_stmt_lists(fn))
    names = _local_names(fn) or _all_names(fn) or ["x"]
    text = rng.choice(UNSUPPORTED).format(name=rng.choice(names))
    k = rng.randrange(len(block) + 1)
    block[k:k] = ast.parse(text).body
    return Mutation("unsupported", detail=text.splitlines()[0])


def _m_commute(fn, rng):
    sites = [n for n in _calls(fn) if _pl_attr(n.func) in COMMUTATIVE and len(n.args) == 2 and not n.keywords]
    if not sites:
        return None
    node = rng.choice(sites)
    node.args.reverse()
    return Mutation("commute", preserves=True, detail=f"{node.func.attr} at line {node.lineno}")


def _m_rename_local(fn, rng):
    names = _local_names(fn)
    if not names:
        return None
    old = rng.choice(names)
    new = old + "_renamed"
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and n.id == old:
            n.id = new
    return Mutation("rename_local", preserves=True, detail=f"{old} -> {new}")


MUTATORS: dict[str, Callable] = {
    "int": _m_int, "float": _m_float, "dtype": _m_dtype, "op_swap": _m_op_swap, "arg_drop": _m_arg_drop,
    "arg_swap": _m_arg_swap, "arg_dup": _m_arg_dup, "kwarg": _m_kwarg, "list": _m_list,
    "stmt_delete": _m_stmt_delete, "stmt_dup": _m_stmt_dup, "name": _m_name, "unwrap_at": _m_unwrap_at,
    "range_bound": _m_range_bound, "forever": _m_forever, "unsupported": _m_unsupported,
    "commute": _m_commute, "rename_local": _m_rename_local,
}


def example_paths() -> list:
    paths = sorted(p for p in EXAMPLES.rglob("*.py") if p.name not in SKIP)
    return [p for p in paths if kernel_functions(ast.parse(p.read_text()))]


def make_mutant(index: int, seed: int, paths: list, platforms=PLATFORMS, sources: dict = None,
                kinds: Optional[list] = None) -> Mutant:
    """Mutant `index` of campaign `seed`: deterministic, and different from the unmutated example."""
    rng = random.Random(seed * 1_000_003 + index)
    sources = sources if sources is not None else {}
    for _ in range(50):
        path = rng.choice(paths)
        text = sources.setdefault(path, path.read_text())
        tree = ast.parse(text)
        kernels = kernel_functions(tree)
        fn = rng.choice(kernels)
        kind = rng.choice(kinds or list(MUTATORS))
        mutation = MUTATORS[kind](fn, rng)
        if mutation is None:
            continue
        source = ast.unparse(ast.fix_missing_locations(tree))
        if source != ast.unparse(ast.parse(text)):
            rel = str(path.relative_to(EXAMPLES))
            if path.name in CHECKS_MESSAGES:      # its checks read operand names: a commute is not neutral
                mutation.preserves = False
            return Mutant(index, rel, platforms[index % len(platforms)], mutation, source)
    raise RuntimeError(f"no mutation found for mutant {index}")


# ------------------------------------------------------------------ running one mutant (in a worker)
def _in_pypto(tb) -> bool:
    pkg = str(ROOT / "pypto")
    return any(f.filename.startswith(pkg) for f in traceback.extract_tb(tb))


def _raised_in_pypto(tb) -> bool:
    """Of the frames in pypto or in user code, the innermost is pypto's: the failure began in pypto
    (numpy / stdlib frames below it don't count), not in a user callback pypto called."""
    pkg = str(ROOT / "pypto")
    for f in reversed(traceback.extract_tb(tb)):
        if f.filename.startswith(pkg):
            return True
        if "site-packages" not in f.filename and not f.filename.startswith(sys.prefix) \
                and not f.filename.startswith(sys.base_prefix) and not f.filename.startswith("<"):
            return False                          # the user's own code
    return False


def _pypto_frame(tb) -> str:
    """file:line of the innermost pypto frame of a traceback."""
    frames = traceback.extract_tb(tb)
    return next((f"{pathlib.Path(f.filename).relative_to(ROOT)}:{f.lineno}" for f in reversed(frames)
                 if f.filename.startswith(str(ROOT / "pypto"))), "")


def classify(exc: Optional[BaseException], mutant_file: str, preserves: bool) -> tuple:
    """(class, one-line message) of one run's outcome."""
    from pypto.errors import InternalError, PyptoError
    if exc is None:
        return "ok", ""
    msg = f"{type(exc).__name__}: {exc}".splitlines()[0][:300] if str(exc) else type(exc).__name__
    if isinstance(exc, InternalError):
        return "internal", msg
    from pypto.errors import SimulationError
    cause = exc.__cause__          # the simulator's wrapper around a Python exception raised by an op
    if (isinstance(exc, SimulationError) and cause is not None and not isinstance(cause, PyptoError)
            and _raised_in_pypto(cause.__traceback__) and "read-only" not in str(cause)):
        return "internal", f"{msg} [wraps {type(cause).__name__} at {_pypto_frame(cause.__traceback__)}]"
    if isinstance(exc, PyptoError):
        span = exc.span
        if span is not None and os.path.abspath(str(span.filename)) == os.path.abspath(mutant_file):
            return "user_loc", msg
        saved = os.environ.get("PYPTO_PROG_BUILD_DIR")      # a program reloaded from its build directory
        if span is not None and saved and os.path.abspath(str(span.filename)).startswith(os.path.abspath(saved)):
            return "user_loc", msg + " [in the saved build directory it was loaded from]"
        where = f" [span in {span.filename}]" if span is not None else ""
        return "user_noloc", msg + where
    if isinstance(exc, AssertionError) and not _in_pypto(exc.__traceback__):
        return ("wrong" if preserves else "differs"), msg
    if _raised_in_pypto(exc.__traceback__):     # (an error of the user's own callback code is not pypto's)
        return "internal", f"{msg} [{_pypto_frame(exc.__traceback__)}]"
    return "harness", msg


def _use_platform(platform: str) -> Callable:
    """Every RunConfig() without an explicit platform targets `platform` (the examples use the default);
    returns the function that undoes it."""
    import pypto.runtime.compile as compile_module
    import pypto.runtime.config as config
    cls = config.RunConfig
    original = getattr(cls, "_fuzz_original_init", None) or cls.__init__
    cls._fuzz_original_init = original
    defaults = compile_module.compile_program.__defaults__

    def undo():
        cls.__init__ = original
        config._DEFAULT = None
        compile_module.compile_program.__defaults__ = defaults

    def init(self, *args, **kwargs):
        if not args:
            kwargs.setdefault("platform", platform)
            kwargs.setdefault("sim_watchdog_seconds", WATCHDOG_SECONDS)
        original(self, *args, **kwargs)

    cls.__init__ = init
    config._DEFAULT = None
    fn = compile_module.compile_program
    fn.__defaults__ = fn.__defaults__[:-1] + (platform,)       # ir.compile(prog) without a platform
    return undo


def run_mutant(mutant: Mutant, workdir: str) -> tuple:
    """Run one mutant in this process: (class, message)."""
    import contextlib
    import runpy
    import warnings
    undo = _use_platform(mutant.platform)
    folder = os.path.join(workdir, f"mutant_{mutant.index}_{mutant.platform}")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, pathlib.Path(mutant.example).name)    # messages naming the script still match
    with open(path, "w") as f:           # examples that name the platform get the mutant's
        f.write(mutant.source.replace("'a2a3sim'", repr(mutant.platform)))
    exc = None
    sys.path.insert(0, str(EXAMPLES / pathlib.Path(mutant.example).parent))
    try:
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runpy.run_path(path, run_name="__main__")
    except SystemExit as e:
        exc = None if e.code in (0, None) else RuntimeError(f"exit {e.code}")
    except Exception as e:          # noqa: BLE001 - every outcome is classified
        exc = e
    finally:
        sys.path.pop(0)
        undo()
        os.unlink(path)
        os.rmdir(folder)
    return classify(exc, path, mutant.mutation.preserves)


def _worker(conn, workdir: str) -> None:
    os.environ["PYPTO_PROG_BUILD_DIR"] = os.path.join(workdir, "build_output")
    os.environ.pop("PYPTO_DUMP_PASSES", None)
    while True:
        try:
            mutant = conn.recv()
        except EOFError:
            return
        if mutant is None:
            return
        conn.send(run_mutant(mutant, workdir))


# ------------------------------------------------------------------ the campaign (parent)
@dataclass
class Result:
    mutant: Mutant
    outcome: str
    message: str
    seconds: float


def campaign(n: int, *, seed: int = 0, jobs: int = 2, timeout: float = 20.0, platforms=PLATFORMS,
             kinds: Optional[list] = None, progress: Optional[Callable] = None, indices: Optional[list] = None) -> list:
    """Run mutants 0..n-1 of `seed` (or just `indices`) over `jobs` worker processes; a list of Results."""
    import multiprocessing as mp
    import multiprocessing.connection as mpc
    import pypto.language  # noqa: F401  (imported once here, inherited by the forked workers)
    import pypto.runtime  # noqa: F401
    global WATCHDOG_SECONDS
    WATCHDOG_SECONDS = timeout * 0.4            # inherited by the forked workers
    ctx = mp.get_context("fork")
    paths = example_paths()
    sources: dict = {}
    workdir = tempfile.mkdtemp(prefix="pypto_fuzz_")
    pending = collections.deque(indices if indices is not None else range(n))
    n = len(pending)
    results: list = []

    def spawn():
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_worker, args=(child, workdir), daemon=True)
        proc.start()
        child.close()
        return {"proc": proc, "conn": parent, "task": None, "start": 0.0}

    workers = [spawn() for _ in range(max(1, jobs))]
    try:
        while pending or any(w["task"] for w in workers):
            for w in workers:
                if w["task"] is None and pending:
                    mutant = make_mutant(pending.popleft(), seed, paths, platforms, sources, kinds)
                    w["task"], w["start"] = mutant, time.monotonic()
                    w["conn"].send(mutant)
            busy = [w for w in workers if w["task"]]
            ready = mpc.wait([w["conn"] for w in busy], timeout=0.2)
            now = time.monotonic()
            for k, w in enumerate(workers):
                if w["task"] is None:
                    continue
                done = None
                if w["conn"] in ready:
                    try:
                        done = w["conn"].recv()
                    except EOFError:
                        done = ("internal", "the worker process died")
                elif now - w["start"] > timeout:
                    done = ("hang", f"no result after {timeout:.0f} s")
                elif not w["proc"].is_alive():
                    done = ("internal", f"the worker process died (exit {w['proc'].exitcode})")
                if done is None:
                    continue
                results.append(Result(w["task"], done[0], done[1], now - w["start"]))
                if progress:
                    progress(results[-1], len(results), n)
                w["task"] = None
                if done[0] in ("hang", "internal") and not w["proc"].is_alive() or done[0] == "hang":
                    w["proc"].kill()
                    w["proc"].join()
                    workers[k] = spawn()
    finally:
        for w in workers:
            try:
                w["conn"].send(None)
            except (BrokenPipeError, OSError):
                pass
            w["proc"].join(timeout=2)
            if w["proc"].is_alive():
                w["proc"].kill()
    return sorted(results, key=lambda r: (r.mutant.index, r.mutant.platform))


def summary(results: list) -> str:
    counts = collections.Counter(r.outcome for r in results)
    lines = [f"{len(results)} runs: " + ", ".join(f"{c} {counts.get(c, 0)}" for c in CLASSES)]
    per_platform = collections.Counter((r.mutant.platform, r.outcome) for r in results)
    for p in sorted({r.mutant.platform for r in results}):
        lines.append(f"  {p}: " + ", ".join(f"{c} {per_platform.get((p, c), 0)}" for c in CLASSES
                                             if per_platform.get((p, c))))
    kinds = collections.Counter((r.mutant.mutation.kind.split("_")[0], r.outcome) for r in results)
    for kind in sorted({k for k, _ in kinds}):
        lines.append(f"  {kind:<12} " + ", ".join(f"{c} {kinds[(kind, c)]}" for c in CLASSES if kinds[(kind, c)]))
    bad = sum(counts.get(c, 0) for c in BAD)
    lines.append("GOAL MET: 0 internal, 0 hang, 0 user_noloc, 0 wrong" if not bad
                 else f"GOAL NOT MET: {bad} runs in {', '.join(BAD)}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mutants", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--platforms", default=",".join(PLATFORMS))
    ap.add_argument("--kinds", default="", help="comma-separated mutation kinds (default: all)")
    ap.add_argument("--indices", default="", help="comma-separated mutant indices to run again (e.g. the bad "
                                                  "ones of an earlier campaign of the same seed)")
    ap.add_argument("--show", default=",".join(BAD), help="classes whose runs are listed")
    ap.add_argument("--write-mutants", default="", help="directory to save the listed mutants' sources")
    args = ap.parse_args(argv)
    show = set(filter(None, args.show.split(",")))
    t0 = time.monotonic()

    seen: list = []

    def progress(result, done, total):
        seen.append(result)
        if result.outcome in show:
            m = result.mutant
            print(f"[{done}/{total}] {result.outcome:<10} #{m.index} {m.example} {m.platform} "
                  f"{m.mutation.kind} ({m.mutation.detail}): {result.message}", flush=True)
        if done % 500 == 0:                       # a running tally: a long campaign cut short still reports
            print(f"[{done}/{total}] {time.monotonic() - t0:.0f} s: " + summary(seen).splitlines()[0], flush=True)

    indices = [int(i) for i in args.indices.split(",") if i] or None
    results = campaign(args.mutants, seed=args.seed, jobs=args.jobs, timeout=args.timeout, indices=indices,
                       platforms=tuple(args.platforms.split(",")),
                       kinds=[k for k in args.kinds.split(",") if k] or None, progress=progress)
    if args.write_mutants:
        out = pathlib.Path(args.write_mutants)
        out.mkdir(parents=True, exist_ok=True)
        for r in results:
            if r.outcome in show:
                (out / f"mutant_{r.mutant.index}_{r.outcome}.py").write_text(
                    f"# {r.mutant.example} {r.mutant.platform} {r.mutant.mutation}\n# {r.message}\n"
                    + r.mutant.source + "\n")
    print(summary(results))
    print(f"{time.monotonic() - t0:.0f} s wall")
    return 1 if any(r.outcome in BAD for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
