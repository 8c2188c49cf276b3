"""Pass: a named Program → Program transform with a property contract. The name is written once,
where the pass is defined; the pipeline, dumps, timings and `PassManager.run(until=...)` read it.

    def simplify():
        return function_pass("Simplify", _run, PassProperties())

Every call runs inside `PassContext.current()`: an instrument may veto the pass (`should_run`),
and its before / after hooks wrap it (verification, round trip, timing, dumps). `run_pipeline`
runs a sequence of passes, or a slice of it by pass name.
"""

from __future__ import annotations

import logging
import time
from typing import Callable, Iterable, Optional, Sequence

from pypto.errors import ValueCheckError
from pypto.ir.function import Function, Program
from pypto.log_level import pypto_logger
from pypto.passes.context import PassContext
from pypto.passes.instruments import PassSelection, instrument_hooks
from pypto.passes.properties import PassProperties


class Pass:
    """A named program transform with required / produced / invalidated properties."""

    def __init__(self, name: str, transform: Callable[[Program], Program], properties: PassProperties = PassProperties()):
        self.name = name
        self.transform = transform
        self.properties = properties

    def __call__(self, program: Program) -> Program:
        ctx = PassContext.current()
        hooks = ctx._pipeline_hooks             # resolved once per pipeline run (_run_all)
        if hooks is None:
            hooks = instrument_hooks(ctx)
        for should_run in hooks.gates:
            if not should_run(self, program):
                return program
        for before in hooks.before:
            before(self, program)
        result = self.transform(program)
        for after in hooks.after:
            after(self, result)
        return result

    def get_name(self) -> str:
        return self.name

    def get_required_properties(self) -> frozenset:
        return self.properties.required

    def get_produced_properties(self) -> frozenset:
        return self.properties.produced

    def get_invalidated_properties(self) -> frozenset:
        return self.properties.invalidated

    def __repr__(self) -> str:
        return f"Pass({self.name})"


def function_pass(name: str, transform_function: Callable[[Function, Program], Function],
                  properties: PassProperties = PassProperties()) -> Pass:
    """A pass that rewrites each function on its own (`transform_function(func, program)`)."""

    def run(program: Program) -> Program:
        new = [transform_function(f, program) for f in program.functions.values()]
        if all(a is b for a, b in zip(new, program.functions.values())):
            return program
        return program.with_functions(new)

    return Pass(name, run, properties)


def run_pipeline(pipeline: Sequence[Pass], program: Program, *, until: Optional[str] = None,
                 after: Optional[str] = None, skip: Iterable[str] = ()) -> Program:
    """Run `pipeline` in order on `program`: from the pass after `after` (else the first) through
    `until` (else the last), leaving out the passes named in `skip`.

    Skipped passes are vetoed by a PassSelection instrument (`should_run`), so no instrument sees
    them (no dump, no timing, no check). Verification instruments remember what they verified for
    the whole run (`begin_pipeline` / `end_pipeline`).
    """
    names = [p.name for p in pipeline]
    skip = frozenset(skip)
    for what, name in [("until", until), ("after", after), *(("skip", s) for s in sorted(skip))]:
        if name is not None and name not in names:
            raise ValueCheckError(f"{what}={name!r} is not a pass of this pipeline",
                                  hint="the passes are: " + ", ".join(names))
    start = names.index(after) + 1 if after is not None else 0
    stop = names.index(until) + 1 if until is not None else len(names)
    if start >= stop:
        raise ValueCheckError(f"run(after={after!r}, until={until!r}) selects no pass",
                              hint="`after` names the last pass already run, `until` the last one to run")
    chosen = pipeline[start:stop]
    if not skip:
        return _run_all(chosen, program)
    with PassContext.current().derive([PassSelection(n for n in names[start:stop] if n not in skip)]):
        return _run_all(chosen, program)


def _run_all(pipeline: Sequence[Pass], program: Program) -> Program:
    ctx = PassContext.current()
    hooks = instrument_hooks(ctx)
    outer, ctx._pipeline_hooks = ctx._pipeline_hooks, hooks
    instruments = hooks.pipeline
    for inst in instruments:
        inst.begin_pipeline()
    log = pypto_logger("passes")
    try:
        for p in pipeline:
            if not log.isEnabledFor(logging.INFO):
                program = p(program)
                continue
            start, before = time.perf_counter(), program
            program = p(program)
            log.info("pass %-30s %8.2f ms%s", p.name, (time.perf_counter() - start) * 1e3,
                     "" if program is before else "  (returned a new program)")
    finally:
        ctx._pipeline_hooks = outer
        for inst in instruments:
            inst.end_pipeline()
    return program
