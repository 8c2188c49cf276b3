"""The `pypto` command: compile a file's kernels to a build directory, read its pass dumps, diff a pass.

    pypto compile examples/intermediate/02_program.py          # → build_output/AddTwice_<timestamp>/
    pypto dumps build_output/AddTwice_<ts>                      # list passes_dump/
    pypto dumps build_output/AddTwice_<ts> ConvertToSSA         # print the IR after that pass
    pypto diff build_output/AddTwice_<ts> InitMemRef            # what the pass changed (side by side)
    pypto diff build_output/AddTwice_<ts> InitMemRef --unified
    pypto run examples/intermediate/01_softmax.py --trace     # → <build dir>/dfx_outputs/swimlane.json
    pypto bisect my_kernels.py                                  # first pass whose result differs
    pypto trace-ir build_output/AddTwice_<ts>                   # → report/ir_trace.html
    pypto memory-map build_output/AddTwice_<ts>                 # → report/memory_map.html
    pypto task-graph build_output/AddTwice_<ts>                 # dfx_outputs/deps.json → deps.html

Every subcommand has `--help`. Errors print as one line on stderr with exit status 1 (2 for
usage errors, as argparse does).
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import os
import re
import runpy
import sys
from pathlib import Path
from typing import Optional

_DUMP = re.compile(r"^(\d+)_(?:after_)?(.+)\.py$")


class CliError(Exception):
    pass


# ---------------------------------------------------------------------------- compile
def _load_module(path: Path) -> dict:
    if not path.is_file():
        raise CliError(f"{path}: no such file")
    sys.path.insert(0, str(path.parent.resolve()))
    try:
        return runpy.run_path(str(path), run_name="__pypto_compile__")
    finally:
        sys.path.pop(0)


def _programs(namespace: dict, wanted: Optional[str]) -> list:
    from pypto.ir.function import Program
    found = [(k, v) for k, v in namespace.items() if isinstance(v, Program)]
    if wanted is not None:
        found = [(k, v) for k, v in found if wanted in (k, v.name)]
        if not found:
            raise CliError(f"no @pl.program named {wanted!r} in the file")
    return [v for _k, v in found]


def _jit_functions(namespace: dict) -> list:
    from pypto.runtime.jit import JITFunction
    return [k for k, v in namespace.items() if isinstance(v, JITFunction)]


def _describe(out: Path) -> str:
    pto = sorted(p.name for p in (out / "ptoas").glob("*.pto")) if (out / "ptoas").is_dir() else []
    dumps = len(list((out / "passes_dump").glob("*.py"))) if (out / "passes_dump").is_dir() else 0
    orch = sorted(p.name for p in (out / "orchestration").glob("*.sim.py")) if (out / "orchestration").is_dir() else []
    text = f"{out}  ({len(pto)} kernel(s): {', '.join(pto) or '-'}; {dumps} pass dump(s))"
    if orch:
        text += f"\n  orchestration (the host code the simulator runs): {', '.join('orchestration/' + o for o in orch)}"
    report = out / "report" / "codegen.txt"
    missing = [x for x in report.read_text().splitlines()[1:] if x] if report.is_file() else []
    for line in missing:
        text += f"\n  warning: no .pto for {line}"
    return text


@contextlib.contextmanager
def _environment(**values):
    """Set environment variables for the duration of a command (the CLI may run inside a larger process)."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update({k: v for k, v in values.items() if v is not None})
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def cmd_compile(args) -> int:
    from pypto.runtime.config import BUILD_DIR_ENV
    with _environment(**{BUILD_DIR_ENV: str(args.output) if args.output else None}):
        return _compile(args)


def _compile(args) -> int:
    from pypto import ir
    from pypto.runtime.config import DUMP_PASSES_ENV, build_dir_base, new_build_dir
    path = Path(args.file)
    namespace = _load_module(path)
    programs = _programs(namespace, args.program)
    for prog in programs:
        out = new_build_dir(prog.name)
        ir.compile(prog, output_dir=out, dump_passes=not args.no_dump, platform=args.platform,
                   distributed_config=_distributed_config(prog, args.ranks))
        print(f"compiled {prog.name}: {_describe(out)}")
    if programs:
        return 0
    jits = _jit_functions(namespace)
    if not jits:
        raise CliError(f"{path} defines no @pl.program class and no @pl.jit function")
    main = namespace.get("main")
    if not callable(main):
        raise CliError(f"{path}: @pl.jit kernels ({', '.join(jits)}) compile for the arrays they are called with; "
                       "the file needs a main() that calls them (it is run with pass dumps on)")
    base = build_dir_base()
    before = set(base.iterdir()) if base.is_dir() else set()
    with _environment(**{DUMP_PASSES_ENV: "1"}):      # every compile main() triggers writes its build dir
        main()
    created = sorted(set(base.iterdir()) - before) if base.is_dir() else []
    if not created:
        raise CliError("main() ran but compiled nothing (were the kernels already cached?)")
    for out in created:
        print(f"compiled {out.name.rsplit('_', 3)[0]}: {_describe(out)}")
    return 0


def _distributed_config(prog, ranks: int):
    """A program with a HOST orchestrator compiles for a world of `ranks` devices; others for one chip."""
    from pypto.runtime.distributed import DistributedConfig, is_host_orchestrator
    if not any(is_host_orchestrator(f) for f in prog.functions.values()):
        return None
    return DistributedConfig(device_ids=list(range(ranks)))


# ---------------------------------------------------------------------------- dumps and diff
def _dumps(build: Path) -> list:
    d = build / "passes_dump"
    if not d.is_dir():
        raise CliError(f"{build} has no passes_dump/ (compile with dump_passes=True or `pypto compile`)")
    out = []
    for p in sorted(d.glob("*.py")):
        m = _DUMP.match(p.name)
        if m:
            out.append((int(m.group(1)), m.group(2), p))
    return sorted(out)


def _find_dump(dumps: list, which: str):
    if which.isdigit():
        hits = [d for d in dumps if d[0] == int(which)]
    else:
        hits = [d for d in dumps if d[1] == which] or [d for d in dumps if d[1].lower() == which.lower()]
    if not hits:
        names = ", ".join(sorted({d[1] for d in dumps}))
        close = difflib.get_close_matches(which, [d[1] for d in dumps], n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise CliError(f"no pass dump named {which!r}{hint}; the dumps are: {names}")
    return hits[0]


def cmd_dumps(args) -> int:
    dumps = _dumps(Path(args.dir))
    if args.pass_name is None:
        for n, name, p in dumps:
            print(f"{n:02d}  {name:<32} {len(p.read_text().splitlines()):>5} lines   {p}")
        return 0
    print(_find_dump(dumps, args.pass_name)[2].read_text(), end="")
    return 0


def cmd_diff(args) -> int:
    dumps = _dumps(Path(args.dir))
    n, name, after = _find_dump(dumps, args.pass_name)
    earlier = [d for d in dumps if d[0] < n]
    if not earlier:
        raise CliError(f"{after.name} is the first dump; there is nothing before it to compare with")
    before = earlier[-1][2]
    a, b = before.read_text().splitlines(), after.read_text().splitlines()
    if a == b:
        print(f"{name} changed nothing ({before.name} == {after.name})")
        return 0
    if args.unified or not sys.stdout.isatty() and not args.side_by_side:
        sys.stdout.writelines(line + "\n" for line in difflib.unified_diff(
            a, b, fromfile=before.name, tofile=after.name, n=args.context, lineterm=""))
        return 0
    _side_by_side(a, b, before.name, after.name, args.context, args.width)
    return 0


def _side_by_side(a: list, b: list, left: str, right: str, context: int, width: Optional[int]) -> None:
    """A rich table: removed lines red on the left, added green on the right, unchanged context dim."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text
    console = Console(width=width) if width else Console()
    table = Table(show_header=True, header_style="bold", expand=True, show_lines=False)
    table.add_column(left, ratio=1, overflow="fold")
    table.add_column(right, ratio=1, overflow="fold")
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for group in matcher.get_grouped_opcodes(context):
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for x, y in zip(a[i1:i2], b[j1:j2]):
                    table.add_row(Text(x, style="dim"), Text(y, style="dim"))
                continue
            lhs, rhs = a[i1:i2], b[j1:j2]
            for k in range(max(len(lhs), len(rhs))):
                table.add_row(Text(lhs[k], style="red") if k < len(lhs) else Text(""),
                              Text(rhs[k], style="green") if k < len(rhs) else Text(""))
        table.add_row(Text("…", style="dim"), Text("…", style="dim"))
    console.print(table)


# ---------------------------------------------------------------------------- debugging tools
def cmd_run(args) -> int:
    from pypto.env import SWIMLANE_ENV, build_dir_base
    path = Path(args.file)
    if not path.is_file():
        raise CliError(f"{path}: no such file")
    base = Path(args.output) if args.output else build_dir_base()
    before = set(base.glob("*/dfx_outputs/*.json")) if base.is_dir() else set()
    env = {SWIMLANE_ENV: "1" if args.trace else None, "PYPTO_PROG_BUILD_DIR": str(base) if args.output else None}
    with _environment(**env):
        sys.path.insert(0, str(path.parent.resolve()))
        try:
            runpy.run_path(str(path), run_name="__main__")
        finally:
            sys.path.pop(0)
    if args.trace:
        made = sorted(set(base.glob("*/dfx_outputs/*.json")) - before) if base.is_dir() else []
        for p in made:
            print(f"wrote {p}  (open it in https://ui.perfetto.dev or chrome://tracing)", file=sys.stderr)
        if not made:
            print("no simulated run wrote a timeline (did the file run a kernel on a *sim platform?)", file=sys.stderr)
    return 0


def _bisect_target(namespace: dict, wanted: Optional[str]):
    from pypto.runtime.jit import JITFunction
    found = [(k, v) for k, v in namespace.items() if isinstance(v, JITFunction)] + \
        [(v.name, v) for v in _programs(namespace, None)]
    if wanted is not None:
        found = [(k, v) for k, v in found if k == wanted]
    if len(found) != 1:
        names = ", ".join(k for k, _ in found) or "none"
        raise CliError(f"name the kernel to bisect with --program (candidates: {names})" if found or wanted is None
                       else f"no @pl.program or @pl.jit named {wanted!r}")
    return found[0][1]


def cmd_bisect(args) -> int:
    from pypto.debug.bisect import bisect
    namespace = _load_module(Path(args.file))
    make = namespace.get("bisect_inputs")
    if not callable(make):
        raise CliError(f"{args.file} needs a bisect_inputs() function returning the argument list "
                       "(numpy arrays in the kernel's parameter order)")
    inputs = make()
    target = _bisect_target(namespace, args.program)
    report = bisect(target, list(inputs), platform=args.platform, rtol=args.rtol, atol=args.atol)
    print(report)
    return 1 if report.culprit else 0


def cmd_trace_ir(args) -> int:
    from pypto.debug.ir_trace import dump_stages, trace_program, write_ir_trace
    source = Path(args.source)
    if source.is_dir():
        out = Path(args.output) if args.output else (source / "report" / "ir_trace.html"
                                                     if (source / "passes_dump").is_dir() else source / "ir_trace.html")
        path = write_ir_trace(dump_stages(source), out, title=f"IR trace of {source.name}")
    elif source.suffix == ".py" and source.is_file():
        programs = _programs(_load_module(source), args.program)
        if not programs:
            raise CliError(f"{source} defines no @pl.program class; for @pl.jit kernels run `pypto compile` and "
                           "pass the build directory")
        if len(programs) > 1 and args.output:
            raise CliError("several programs and one --output: choose one with --program")
        path = None
        for prog in programs:
            path = trace_program(prog, Path(args.output) if args.output else Path(f"{prog.name}_ir_trace.html"),
                                 platform=args.platform)
            print(f"wrote {path}")
        return 0
    else:
        raise CliError(f"{source}: expected a build directory or a .py file")
    print(f"wrote {path}")
    return 0


def cmd_memory_map(args) -> int:
    from pypto.debug.memory_map import load_program, write_memory_map
    from pypto.runtime.compile import memory_report
    source = Path(args.source)
    try:
        program = load_program(source)
    except FileNotFoundError as e:
        raise CliError(str(e)) from None
    if args.text:
        print(memory_report(program), end="")
        return 0
    if args.output:
        out = Path(args.output)
    elif source.is_dir():
        out = source / "report" / "memory_map.html"
    else:
        out = source.with_suffix(".memory_map.html")
    print(f"wrote {write_memory_map(program, out, platform=args.platform)}")
    return 0


def cmd_task_graph(args) -> int:
    from pypto.debug.task_graph import write_task_graph
    source = Path(args.source)
    path = source / "dfx_outputs" / "deps.json" if source.is_dir() else source
    if not path.is_file():
        raise CliError(f"{path}: no deps.json (run with RunConfig(enable_dep_gen=True))")
    print(f"wrote {write_task_graph(path, args.output)}")
    return 0


# ---------------------------------------------------------------------------- entry point
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pypto", description="PyPTO: compile kernels to build directories, inspect what each pass did, and "
                                  "debug them (timelines, bisection, IR trace, memory map).",
        epilog="A build directory holds passes_dump/, ptoas/*.pto, orchestration/ (the final IR and <fn>.sim.py, "
               "the host code the simulator runs), kernels/sim/, report/ and kernel_config.py; "
               "reload one in Python with CompiledProgram.from_dir(dir).")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    c = sub.add_parser("compile", help="compile a file's kernels into build directories",
                       description="Import FILE (without running it as a script), compile every @pl.program class "
                                   "in it and write one build directory per program (passes_dump/, ptoas/*.pto, "
                                   "orchestration/<fn>.sim.py, report/, kernel_config.py). A file with only @pl.jit kernels "
                                   "has its main() run with pass dumps on, so each specialization it compiles is "
                                   "written.")
    c.add_argument("file", help="a Python file defining @pl.program classes or @pl.jit kernels")
    c.add_argument("-o", "--output", metavar="DIR",
                   help="base directory for build directories (default: $PYPTO_PROG_BUILD_DIR or ./build_output)")
    c.add_argument("--platform", default="a2a3sim", choices=["a2a3sim", "a5sim", "a2a3", "a5"],
                   help="target platform (default: a2a3sim)")
    c.add_argument("--program", metavar="NAME", help="compile only the @pl.program with this name")
    c.add_argument("--no-dump", action="store_true", help="do not write passes_dump/")
    c.add_argument("--ranks", type=int, default=2, metavar="N",
                   help="world size for programs with a HOST orchestrator (default 2)")
    c.set_defaults(run=cmd_compile)

    d = sub.add_parser("dumps", help="list a build directory's pass dumps, or print one",
                       description="Without PASS: list passes_dump/ (number, pass, size). With PASS (a pass name "
                                   "such as ConvertToSSA, or a dump number): print the IR after that pass.")
    d.add_argument("dir", help="a build directory")
    d.add_argument("pass_name", nargs="?", metavar="PASS", help="pass name or dump number")
    d.set_defaults(run=cmd_dumps)

    f = sub.add_parser("diff", help="show what one pass changed in the IR",
                       description="Compare the IR before PASS (the previous dump) with the IR after it: a "
                                   "side-by-side table in a terminal, a unified diff otherwise or with --unified.")
    f.add_argument("dir", help="a build directory")
    f.add_argument("pass_name", metavar="PASS", help="pass name (e.g. InitMemRef) or dump number")
    style = f.add_mutually_exclusive_group()
    style.add_argument("-u", "--unified", action="store_true", help="unified diff (the default when piped)")
    style.add_argument("-s", "--side-by-side", action="store_true", help="side-by-side table (the default on a tty)")
    f.add_argument("-C", "--context", type=int, default=3, metavar="N", help="unchanged lines around each change")
    f.add_argument("--width", type=int, metavar="COLS", help="table width for --side-by-side")
    f.set_defaults(run=cmd_diff)

    r = sub.add_parser("run", help="run a Python file, optionally writing a swimlane timeline of each simulated run",
                       description="Run FILE as a script. With --trace every simulated run writes "
                                   "<build dir>/dfx_outputs/swimlane.json (Chrome trace format: open it in "
                                   "ui.perfetto.dev); times are estimates from the platform's cost model.")
    r.add_argument("file", help="a Python script that runs kernels")
    r.add_argument("--trace", action="store_true", help="record a swimlane timeline of every simulated run")
    r.add_argument("-o", "--output", metavar="DIR", help="base directory for build directories")
    r.set_defaults(run=cmd_run)

    b = sub.add_parser("bisect", help="name the first pass whose output computes a different result",
                       description="Import FILE, take the arguments its bisect_inputs() returns, run the kernel's IR "
                                   "after every pass of the Default pipeline with reference semantics (and the final "
                                   "IR on the simulator), and report the first stage whose outputs differ from the "
                                   "frontend program's. Exit status 1 when a stage differs.")
    b.add_argument("file", help="a Python file with one @pl.program or @pl.jit kernel and bisect_inputs()")
    b.add_argument("--program", metavar="NAME", help="the kernel to bisect when the file defines several")
    b.add_argument("--platform", default="a2a3sim", choices=["a2a3sim", "a5sim"])
    b.add_argument("--rtol", type=float, default=1e-5)
    b.add_argument("--atol", type=float, default=1e-5)
    b.set_defaults(run=cmd_bisect)

    t = sub.add_parser("trace-ir", help="write an HTML page with the IR after every pass",
                       description="SOURCE is a build directory (its passes_dump/) or a .py file with @pl.program "
                                   "classes (compiled now, so each statement links to its source line). Writes one "
                                   "self-contained page: pass list, highlighted IR, side-by-side diff, search.")
    t.add_argument("source", help="a build directory or a .py file")
    t.add_argument("-o", "--output", metavar="HTML", help="output file (default: <build dir>/report/ir_trace.html)")
    t.add_argument("--program", metavar="NAME", help="only this @pl.program of the file")
    t.add_argument("--platform", default="a2a3sim", choices=["a2a3sim", "a5sim"])
    t.set_defaults(run=cmd_trace_ir)

    m = sub.add_parser("memory-map", help="draw each kernel's on-chip buffers: address x lifetime (HTML)",
                       description="SOURCE is a build directory (its final IR) or a pass dump after InitMemRef. "
                                   "Writes a self-contained HTML page per kernel and memory space, or with --text "
                                   "the text report.")
    m.add_argument("source", help="a build directory or a passes_dump/*.py file")
    m.add_argument("-o", "--output", metavar="HTML", help="output file (default: <build dir>/report/memory_map.html)")
    m.add_argument("--text", action="store_true", help="print the text report instead")
    m.add_argument("--platform", default="a2a3", choices=["a2a3", "a5"])
    m.set_defaults(run=cmd_memory_map)

    g = sub.add_parser("task-graph", help="draw a run's task graph (dfx_outputs/deps.json) as HTML",
                       description="SOURCE is a build directory or its dfx_outputs/deps.json, written by a run with "
                                   "RunConfig(enable_dep_gen=True). Writes deps.html beside it.")
    g.add_argument("source", help="a build directory or a deps.json file")
    g.add_argument("-o", "--output", metavar="HTML", help="output file (default: deps.html beside deps.json)")
    g.set_defaults(run=cmd_task_graph)
    return parser


def main(argv: Optional[list] = None) -> int:
    from pypto.errors import PyptoError
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except CliError as e:
        print(f"pypto {args.command}: error: {e}", file=sys.stderr)
        return 1
    except PyptoError as e:
        print(e.render() if hasattr(e, "render") else str(e), file=sys.stderr)
        return 1
    except BrokenPipeError:                    # `pypto dumps dir | head`: the reader left; not an error
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
