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

from typing import Optional

import numpy as np

from pypto.debug.reference_run import NotRunnable, entry_function, run_reference
from pypto.runtime.validate_ir import (StageFailed, StageReport, StageResult, StageUnchecked, record_stage,
                                       walk_stages)

SIMULATOR_STAGE = "simulator (final IR)"
BisectReport = StageReport                  # one report type for both per-pass checks (runtime/validate_ir.py)
__all__ = ["SIMULATOR_STAGE", "BisectReport", "StageResult", "bisect", "validate_ir"]


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
    names = [p.name_hint for p in entry_function(program).params]

    def tensor_name(key):
        return names[key] if isinstance(key, int) and key < len(names) else str(key)

    def evaluate(name: str, prog) -> dict:
        try:
            out = run_reference(prog, args, platform=base)
        except NotRunnable as e:
            raise StageUnchecked(e.message) from e
        return _by_position(out, entry_function(prog))

    report = BisectReport()
    try:
        reference = evaluate("frontend", program)
    except StageUnchecked as e:
        report.stages.append(StageResult("frontend", "unchecked", e.message))
        reference = None
    if expected is not None:
        given = {names.index(k) if k in names else k: np.asarray(v) for k, v in expected.items()}
        if reference is not None:               # the program as written may already be wrong
            agrees = record_stage(report, "frontend", reference, given, rtol, atol, tensor_name)
            report.stages[-1].detail = "compared with the expected outputs given"
            if not agrees:
                return report
        reference = given
    elif reference is not None:
        report.stages.append(StageResult("frontend", "ok", "the reference every later stage is compared with"))
    if reference is None:
        raise NotRunnable("the frontend program cannot be run with reference semantics, and no expected "
                          "outputs were given: " + report.stages[-1].detail)
    stages = []
    with PassContext(platform=base, parse=parse):
        current = program
        for p in passes:
            after = p(current)
            stages.append((p.name, None if after is current else after))
            current = after
    if simulate:
        stages.append((SIMULATOR_STAGE, current))

    def evaluate_stage(name: str, prog) -> dict:
        return _simulate(program, prog, args, platform) if name == SIMULATOR_STAGE else evaluate(name, prog)

    return walk_stages(stages, evaluate_stage, reference, rtol=rtol, atol=atol, report=report,
                       tensor_name=tensor_name)


def _simulate(program, final, args, platform) -> dict:
    """The final IR on the simulator: its outputs keyed like the interpreter's."""
    from pypto.errors import PyptoError
    from pypto.runtime.compiled_program import CompiledProgram
    compiled = CompiledProgram(program, final, platform=platform)
    copies = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
    try:
        result = compiled(*copies)
    except PyptoError as e:
        raise StageFailed(str(e).splitlines()[0]) from e
    func = entry_function(final)
    got = {i: a for i, (a, d) in enumerate(zip(copies, func.param_directions))
           if isinstance(a, np.ndarray) and d.name != "In"}
    if result is not None:
        values = result if isinstance(result, tuple) else (result,)
        for i, v in enumerate(values):
            got["return" if len(values) == 1 else f"return.{i}"] = v
    return got


def validate_ir(target, args, *, expected: Optional[dict] = None, rtol: float = 5e-2, atol: float = 5e-2,
                platform: str = "a2a3sim", pipeline=None) -> BisectReport:
    """The reference's per-pass check: bisect, and raise ValueCheckError naming the first stage that
    disagrees (its tensor and max error). Pass your own rtol / atol: the defaults are loose, as the
    reference's are."""
    from pypto.errors import ValueCheckError
    report = bisect(target, args, expected=expected, rtol=rtol, atol=atol, platform=platform, pipeline=pipeline)
    if report.culprit:
        bad = report.failing
        raise ValueCheckError(f"the IR after {report.culprit} computes a different result: max |error| "
                              f"{bad.max_error:.3e} in '{bad.tensor}'" if bad.max_error is not None else
                              f"{report.culprit}: {bad.detail}", hint="run pypto.debug.bisect for every stage's status")
    return report
