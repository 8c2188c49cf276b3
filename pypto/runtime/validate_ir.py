"""Which pass made the numbers wrong? The one stage-by-stage numeric check, and its runtime spelling.

The core (`walk_stages`, `compare_outputs`, StageResult / StageReport) walks the stages of the
pipeline in order, has each one evaluated, compares its outputs with a reference and stops at the
first stage that disagrees. How a stage is evaluated is the caller's: `pypto.debug.bisect` runs
each stage's IR in the reference interpreter (and the final IR on the simulator);
`CompiledProgram.validate_ir` (here) takes each file of the build's passes_dump/, finishes it with
the passes after it and runs the result on the simulator.

    compiled = ir.compile(Prog, dump_passes=True)
    compiled.validate_ir(a, b, out)                         # like a call: the first dump is the reference
    compiled.validate_ir(a, b, out, expected={"out": a + b})
    compiled.validate_ir({"a": a, "b": b}, {"out": a + b})   # by name: tensors, expected
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

import numpy as np

from pypto.errors import PyptoError, ValueCheckError

_AFTER = re.compile(r"^\d+_after_(\w+)\.py$")


# ------------------------------------------------------------------ the shared core
class StageUnchecked(PyptoError):
    """An evaluator could not run this stage (reported as unchecked; the walk goes on)."""


class StageFailed(PyptoError):
    """The stage's program raised when run: the walk stops there, naming it."""


@dataclass
class StageResult:
    name: str                               # "frontend", a pass name, a dump file, or the simulator stage
    status: str                             # "ok" | "differs" | "unchecked" | "unchanged" | "failed"
    detail: str = ""
    max_error: Optional[float] = None
    tensor: Optional[str] = None


@dataclass
class StageReport:
    stages: list = field(default_factory=list)
    culprit: Optional[str] = None

    @property
    def failing(self) -> Optional[StageResult]:
        return self.stages[-1] if self.culprit else None

    def __str__(self) -> str:
        lines = []
        for s in self.stages:
            err = f"  max |error| {s.max_error:.3e} in '{s.tensor}'" if s.max_error is not None else ""
            detail = f"  ({s.detail})" if s.detail else ""
            lines.append(f"{s.name:<34} {s.status.upper() if s.status == 'differs' else s.status}{err}{detail}")
        verdict = (f"first stage that disagrees: {self.culprit}" if self.culprit
                   else "every checked stage agrees with the reference")
        return "\n".join(lines + [verdict])


def _array(value) -> np.ndarray:
    from pypto.interop import as_numpy
    arr = as_numpy(value)
    return np.asarray(arr if arr is not None else value, dtype=np.float64)


def compare_outputs(got: dict, want: dict, rtol: float, atol: float) -> list:
    """[(key, max |error|)] of every output in `want` that `got` misses or gets wrong (inf: missing or
    of another shape; a NaN where a number belongs counts as an infinite error)."""
    bad = []
    for key, ref in want.items():
        if key not in got:
            bad.append((key, float("inf")))
            continue
        a, b = _array(got[key]), _array(ref)
        if a.shape != b.shape:
            bad.append((key, float("inf")))
        elif not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=False):
            diff = np.abs(a - b)
            bad.append((key, float(np.nanmax(np.where(np.isnan(diff), np.inf, diff)))))
    return bad


def record_stage(report: StageReport, name: str, got: dict, reference: dict, rtol: float, atol: float,
                 tensor_name: Callable = str) -> bool:
    """Compare one stage's outputs; on a difference the stage becomes the culprit. True if it agrees."""
    bad = compare_outputs(got, reference, rtol, atol)
    if not bad:
        report.stages.append(StageResult(name, "ok"))
        return True
    key, err = bad[0]
    detail = ", ".join(f"'{tensor_name(k)}' ({e:.3g})" for k, e in bad[1:])
    report.stages.append(StageResult(name, "differs", f"also {detail}" if detail else "", max_error=err,
                                     tensor=tensor_name(key)))
    report.culprit = name
    return False


def walk_stages(stages: Iterable, evaluate: Callable, reference: dict, *, rtol: float, atol: float,
                report: Optional[StageReport] = None, tensor_name: Callable = str) -> StageReport:
    """Evaluate each (name, payload) of `stages` in order (payload None: the pass left the IR unchanged)
    and compare with `reference`; stop at the first stage that differs or fails.

    `evaluate(name, payload)` returns the stage's outputs {key: array}; it raises StageUnchecked when
    it cannot run the stage (recorded, the walk goes on) or StageFailed when the program itself fails."""
    report = report if report is not None else StageReport()
    for name, payload in stages:
        if payload is None:
            report.stages.append(StageResult(name, "unchanged"))
            continue
        try:
            got = evaluate(name, payload)
        except StageUnchecked as e:
            report.stages.append(StageResult(name, "unchecked", e.message))
            continue
        except StageFailed as e:
            report.stages.append(StageResult(name, "failed", e.message))
            report.culprit = name
            return report
        if not record_stage(report, name, got, reference, rtol, atol, tensor_name):
            return report
    return report


# ------------------------------------------------------------------ CompiledProgram.validate_ir
def _named_inputs(compiled, args: tuple, tensors: Optional[dict]) -> dict:
    """The arguments by parameter name: a dict as given, or positional like a call (all parameters, or
    the inputs only)."""
    from pypto.ir.enums import ParamDirection
    if tensors is not None:
        return dict(tensors)
    f = compiled.function
    names = [p.name_hint for p in f.params]
    if len(args) == len(names):
        return dict(zip(names, args))
    inputs = [p.name_hint for p, d in zip(f.params, f.param_directions) if d is not ParamDirection.Out]
    if len(args) == len(inputs):
        return dict(zip(inputs, args))
    raise ValueCheckError(f"validate_ir: '{compiled.entry}' takes {len(names)} arguments ({len(inputs)} inputs), "
                          f"{len(args)} given", hint="pass the arguments like a call, or a dict by parameter name")


def _arguments(compiled, tensors: dict, expected: dict) -> list:
    from pypto.interop import as_numpy
    from pypto.ir.enums import ParamDirection
    from pypto.ir.types import TensorType
    args = []
    f = compiled.function
    for p, direction in zip(f.params, f.param_directions):
        name = p.name_hint
        if name in tensors:
            value = tensors[name]
            arr = as_numpy(value)
            args.append(np.array(arr, copy=True) if arr is not None else value)
        elif direction is ParamDirection.Out and name in expected:
            ref = as_numpy(expected[name])
            args.append(np.zeros(np.shape(ref), p.type.dtype.to_numpy()))
        elif direction is ParamDirection.Out and isinstance(p.type, TensorType) and p.type.static_shape():
            args.append(np.zeros(p.type.static_shape(), p.type.dtype.to_numpy()))
        else:
            raise ValueCheckError(f"validate_ir: no value for parameter '{name}'",
                                  hint="give every input in `tensors` (and every output's golden in `expected`)")
    return args


def _simulate(lowered, compiled, tensors: dict, expected: dict) -> dict:
    """{Out / InOut parameter name: array} after running `lowered` on the simulator."""
    from pypto.ir.enums import ParamDirection
    from pypto.runtime.compiled_program import CompiledProgram
    platform = compiled.platform if compiled.platform.endswith("sim") else compiled.platform + "sim"
    program = CompiledProgram(lowered, lowered, platform=platform, entry=compiled.entry)
    args = _arguments(program, tensors, expected)
    result = program(*args)
    f = program.function
    out = {p.name_hint: a for p, a, d in zip(f.params, args, f.param_directions) if d is not ParamDirection.In}
    if result is not None:
        values = result if isinstance(result, tuple) else (result,)
        for i, v in enumerate(values):
            out["return" if len(values) == 1 else f"return.{i}"] = v
    return out


def _dump_stages(dumps) -> list:
    files = sorted(p for p in dumps.iterdir() if p.name == "00_frontend.py" or _AFTER.match(p.name))
    if not files:
        raise ValueCheckError(f"validate_ir: {dumps} holds no pass dumps")
    out = []
    for path in files:
        match = _AFTER.match(path.name)
        out.append((f"after {match.group(1)}" if match else "as given", path))
    return out


def validate_pass_dumps(compiled, *args, tensors: Optional[dict] = None, expected: Optional[dict] = None,
                        rtol: float = 5e-2, atol: float = 5e-2) -> StageReport:
    """Each passes_dump/ file, finished by the passes after it, run on the simulator and compared with
    `expected` (default: what the first dump computes); AssertionError names the first that diverges.
    Outputs are the Out / InOut parameters by name and returned values as "return" / "return.<i>"."""
    from pypto.language import parse
    from pypto.passes import PassContext, PassManager
    build = compiled.build_dir
    dumps = build / "passes_dump" if build is not None else None
    if dumps is None or not dumps.is_dir():
        raise ValueCheckError(f"validate_ir: no passes_dump/ in {build or 'this program (it wrote no build)'}",
                              hint="compile with dump_passes=True")
    tensors = _named_inputs(compiled, args, tensors)
    manager = PassManager.get_strategy()
    names = manager.pass_names()
    base = compiled.platform[:-3] if compiled.platform.endswith("sim") else compiled.platform
    stages = _dump_stages(dumps)

    def evaluate(stage: str, path):
        after = stage[len("after "):] if stage.startswith("after ") else None
        with PassContext(platform=base, parse=parse):
            program = parse(path.read_text(), str(path))
            if after is None:
                program = manager.run(program)
            elif after != names[-1]:
                program = manager.run(program, after=after)
        try:
            return _simulate(program, compiled, tensors, expected or {})
        except Exception as e:
            raise StageFailed(f"{e}") from e

    report = StageReport()
    if expected is None:                        # the first dump (the program as given) is the reference
        first, path = stages[0]
        try:
            reference = evaluate(first, path)
        except StageFailed as e:
            raise AssertionError(f"validate_ir: the program {first} ({path.name}) fails to run: {e.message}") from e
        report.stages.append(StageResult(first, "ok", "the reference every later stage is compared with"))
        stages = stages[1:]
    else:
        outputs = {p.name_hint for p, d in zip(compiled.function.params, compiled.function.param_directions)
                   if d.name != "In"}
        for name in expected:
            if name not in outputs and not re.fullmatch(r"return(\.\d+)?", name):
                raise ValueCheckError(f"validate_ir: expected output '{name}' is not a parameter of the entry",
                                      hint="outputs are keyed by the Out / InOut parameter's name, returned values by "
                                           "'return' ('return.0', ... for several)")
        reference = dict(expected)
    if not reference:
        raise ValueCheckError(f"validate_ir: '{compiled.entry}' writes and returns nothing to compare",
                              hint="give the golden outputs in `expected`")
    files = dict(stages)
    walk_stages(stages, evaluate, reference, rtol=rtol, atol=atol, report=report)
    if report.culprit:
        bad, path = report.failing, files[report.culprit]
        if bad.status == "failed":
            raise AssertionError(f"validate_ir: the program {bad.name} ({path.name}) fails to run: {bad.detail}")
        wrong = [f"'{bad.tensor}' (max abs error {bad.max_error:.3g})"] + ([bad.detail[len("also "):]] if bad.detail else [])
        raise AssertionError(f"validate_ir: the program {bad.name} ({path.name}) gives wrong {', '.join(wrong)}")
    return report
