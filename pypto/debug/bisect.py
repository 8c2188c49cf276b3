"""Numeric bisection across passes: which pass first changed what the program computes?

Each stage of the pipeline (the frontend program, then the IR after every pass) runs on the same
inputs with reference semantics (pypto.debug.reference_run); the final IR also runs on the
simulator. Every stage's outputs are compared with the frontend's (or with `expected`), and the
first stage that disagrees names the pass that broke the program.

    report = bisect(MyProgram, [x, y, out])              # a @pl.program, a CompiledProgram or a @pl.jit
    report.culprit                                        # "ExpandMixedKernel" (None: every stage agrees)
    print(report)                                         # one line per stage: ok / DIFFERS (max error) / unchecked

`pypto bisect file.py` does the same for the programs a file defines, with inputs from its
`bisect_inputs()` function.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from pypto.debug.reference_run import NotRunnable, entry_function, run_reference

SIMULATOR_STAGE = "simulator (final IR)"


@dataclass
class StageResult:
    name: str                               # "frontend", a pass name, or SIMULATOR_STAGE
    status: str                             # "ok" | "differs" | "unchecked" | "unchanged" | "failed"
    detail: str = ""
    max_error: Optional[float] = None
    tensor: Optional[str] = None


@dataclass
class BisectReport:
    stages: list = field(default_factory=list)
    culprit: Optional[str] = None

    def __str__(self) -> str:
        lines = []
        for s in self.stages:
            err = f"  max |error| {s.max_error:.3e} in '{s.tensor}'" if s.max_error is not None else ""
            detail = f"  ({s.detail})" if s.detail else ""
            lines.append(f"{s.name:<34} {s.status.upper() if s.status == 'differs' else s.status}{err}{detail}")
        verdict = (f"first stage that disagrees: {self.culprit}" if self.culprit
                   else "every checked stage agrees with the frontend")
        return "\n".join(lines + [verdict])


def _program_and_args(target, args):
    from pypto.ir.function import Program
    from pypto.runtime.compiled_program import CompiledProgram
    from pypto.runtime.jit import JITFunction
    if isinstance(target, JITFunction):
        compiled = target.compile(*args)
        params = entry_function(compiled.program).params
        if len(params) != len(args):           # scalars the specialization folded into constants
            args = [a for a in args if hasattr(a, "shape")]
        return compiled.program, list(args)
    if isinstance(target, CompiledProgram):
        return target.program, list(args)
    if isinstance(target, Program):
        return target, list(args)
    raise TypeError(f"bisect() takes a Program, a CompiledProgram or a @pl.jit function, got {type(target).__name__}")


def _compare(got: dict, want: dict, names: list, rtol: float, atol: float):
    """(index, max error) of the first output that differs, else None."""
    for key in want:
        if key not in got:
            return key, float("inf")
        a, b = np.asarray(got[key], dtype=np.float64), np.asarray(want[key], dtype=np.float64)
        if a.shape != b.shape:
            return key, float("inf")
        if not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=False):
            diff = np.abs(a - b)
            return key, float(np.nanmax(np.where(np.isnan(diff), np.inf, diff)))
    return None


def _by_position(outputs: dict, func) -> dict:
    """Outputs keyed by parameter position (names may change across passes), returns by their key."""
    index = {p.name_hint: i for i, p in enumerate(func.params)}
    return {index.get(k, k): v for k, v in outputs.items()}


def bisect(target, args, *, platform: str = "a2a3sim", pipeline=None, expected: Optional[dict] = None,
           rtol: float = 1e-5, atol: float = 1e-5, simulate: bool = True) -> BisectReport:
    """Run every stage of `pipeline` (default: the Default pipeline) on `args`; see the module doc.

    `expected` maps output parameter names (or "return") to arrays; without it the frontend
    program's own outputs are the reference. A stage the interpreter cannot run is "unchecked" (the
    reason is given) and does not stop the search."""
    from pypto.language import parse
    from pypto.passes import PassContext, PassManager
    program, args = _program_and_args(target, args)
    passes = tuple(PassManager().passes if pipeline is None else pipeline)
    base = platform[:-3] if platform.endswith("sim") else platform
    frontend = entry_function(program)
    names = [p.name_hint for p in frontend.params]
    report = BisectReport()

    def evaluate(name: str, prog) -> Optional[dict]:
        try:
            out = run_reference(prog, args, platform=base)
        except NotRunnable as e:
            report.stages.append(StageResult(name, "unchecked", e.message))
            return None
        return _by_position(out, entry_function(prog))

    reference = evaluate("frontend", program)
    if expected is not None:
        given = {names.index(k) if k in names else k: np.asarray(v) for k, v in expected.items()}
        if reference is not None:               # the program as written may already be wrong
            _record(report, "frontend", reference, given, names, rtol, atol)
            report.stages[-1].detail = "compared with the expected outputs given"
            if report.culprit:
                return report
        reference = given
    elif reference is not None:
        report.stages.append(StageResult("frontend", "ok", "the reference every later stage is compared with"))
    if reference is None:
        raise NotRunnable("the frontend program cannot be run with reference semantics, and no expected "
                          "outputs were given: " + report.stages[-1].detail)
    stage_programs = []
    with PassContext(platform=base, parse=parse):
        current = program
        for p in passes:
            after = p(current)
            stage_programs.append((p.name, after, after is current))
            current = after
    final = current
    for name, prog, unchanged in stage_programs:
        if unchanged:
            report.stages.append(StageResult(name, "unchanged"))
            continue
        got = evaluate(name, prog)
        if got is None:
            continue
        _record(report, name, got, reference, names, rtol, atol)
        if report.culprit:
            return report
    if simulate:
        _simulate(report, program, final, args, platform, reference, names, rtol, atol)
    return report


def _record(report, name, got, reference, names, rtol, atol) -> None:
    bad = _compare(got, reference, names, rtol, atol)
    if bad is None:
        report.stages.append(StageResult(name, "ok"))
        return
    key, err = bad
    tensor = names[key] if isinstance(key, int) and key < len(names) else str(key)
    report.stages.append(StageResult(name, "differs", max_error=err, tensor=tensor))
    report.culprit = name


def _simulate(report, program, final, args, platform, reference, names, rtol, atol) -> None:
    from pypto.errors import PyptoError
    from pypto.runtime.compiled_program import CompiledProgram
    compiled = CompiledProgram(program, final, platform=platform)
    copies = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
    try:
        result = compiled(*copies)
    except PyptoError as e:
        report.stages.append(StageResult(SIMULATOR_STAGE, "failed", str(e).splitlines()[0]))
        report.culprit = SIMULATOR_STAGE
        return
    func = entry_function(final)
    got = {i: a for i, (a, d) in enumerate(zip(copies, func.param_directions))
           if isinstance(a, np.ndarray) and d.name != "In"}
    if result is not None:
        values = result if isinstance(result, tuple) else (result,)
        for i, v in enumerate(values):
            got["return" if len(values) == 1 else f"return.{i}"] = v
    _record(report, SIMULATOR_STAGE, got, reference, names, rtol, atol)


def validate_ir(target, args, *, expected: Optional[dict] = None, rtol: float = 5e-2, atol: float = 5e-2,
                platform: str = "a2a3sim", pipeline=None) -> BisectReport:
    """The reference's per-pass check: bisect, and raise ValueCheckError naming the first stage that
    disagrees (its tensor and max error). Pass your own rtol / atol: the defaults are loose, as the
    reference's are."""
    from pypto.errors import ValueCheckError
    report = bisect(target, args, expected=expected, rtol=rtol, atol=atol, platform=platform, pipeline=pipeline)
    if report.culprit:
        bad = report.stages[-1]
        raise ValueCheckError(f"the IR after {report.culprit} computes a different result: max |error| "
                              f"{bad.max_error:.3e} in '{bad.tensor}'" if bad.max_error is not None else
                              f"{report.culprit}: {bad.detail}", hint="run pypto.debug.bisect for every stage's status")
    return report
