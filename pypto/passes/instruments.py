"""Pass instruments: small objects with optional before / after hooks run around every pass.

    with PassContext([TimingInstrument(), DumpInstrument("out/passes_dump")]):
        program = passes.simplify()(program)

- VerificationInstrument: required properties before, produced properties after (pypto.ir.verifier).
- RoundtripInstrument: print → parse (the parser handed in) → structural_equal after each pass.
- TimingInstrument, CallbackInstrument, DumpInstrument: profiling, ad-hoc hooks, IR dumps.
- PassSelection: runs only the named passes (`PassManager.run(until=..., after=..., skip=...)`).
"""

from __future__ import annotations

import enum
import os
import time
from typing import Callable, Iterable, Optional

from pypto.errors import InternalError
from pypto.ir.equality import StructuralMismatch, assert_structural_equal
from pypto.ir.printer import python_print
from pypto.ir.verifier import verify_property
from pypto.passes.context import PassContext, VerificationLevel


class Instrument:
    """Base: override `should_run(pass_, program)` (False skips the pass: no hooks, program unchanged),
    `run_before_pass(pass_, program)` and / or `run_after_pass(pass_, program)`."""

    def should_run(self, pass_, program) -> bool:
        return True

    def run_before_pass(self, pass_, program) -> None:
        pass

    def run_after_pass(self, pass_, program) -> None:
        pass


class VerificationMode(enum.Enum):
    BEFORE = 1
    AFTER = 2
    BEFORE_AND_AFTER = 3


def _check(props, program, what: str, verify: Callable = verify_property) -> None:
    if not props:
        return
    key = props if props.__class__ is frozenset else frozenset(props)
    names = _SORTED_NAMES.get(key)
    if names is None:
        names = _SORTED_NAMES[key] = tuple(sorted(p.value for p in key))
    for name in names:
        diags = verify(name, program)
        if diags:
            more = f" (and {len(diags) - 1} more)" if len(diags) > 1 else ""
            raise InternalError(f"{what}: property {name} does not hold: {diags[0].message}{more}",
                                diags[0].span)


_SORTED_NAMES: dict = {}        # a set of properties → their names in order (what `_check` verifies, in turn)


def verify_properties(properties, program, where: str = "verify_properties") -> None:
    """Raise InternalError if one of `properties` does not hold for `program`."""
    _check(properties, program, where)


class VerificationInstrument(Instrument):
    """Checks a pass's required properties before it and its produced properties after it.

    Inside a pipeline run (`begin_pipeline` / `end_pipeline`, called by PassManager.run_passes)
    a property is verified once when a pass produces it and not again before each pass that
    requires it, until some pass invalidates it — the reference pipeline's rule, and most of
    BASIC verification's cost otherwise. A pass called on its own checks everything it requires.
    """

    def __init__(self, mode: VerificationMode = VerificationMode.AFTER, *, verify: Callable = verify_property):
        self.mode = mode
        self.verify = verify                     # (property name, program) → diagnostics; pypto.ir.verifier's
        self._verified: Optional[set] = None     # properties known to hold during a pipeline run

    def begin_pipeline(self) -> None:
        self._verified = set()

    def end_pipeline(self) -> None:
        self._verified = None

    def run_before_pass(self, pass_, program) -> None:
        if self.mode is not VerificationMode.AFTER:
            required = pass_.properties.required
            if self._verified is not None:
                required = required - self._verified
            if required:
                _check(required, program, f"before {pass_.name}", self.verify)
                if self._verified is not None:
                    self._verified |= required

    def run_after_pass(self, pass_, program) -> None:
        props = pass_.properties
        checks = self.mode is not VerificationMode.BEFORE
        if checks and props.produced:
            _check(props.produced, program, f"after {pass_.name}", self.verify)
        if self._verified is not None:
            if checks:
                self._verified |= props.produced
            if props.invalidated:
                self._verified -= props.invalidated


class RoundtripInstrument(Instrument):
    """After each pass: the printed program must parse back to a structurally equal program.

    `parse` (text → Program) is the DSL parser; without one the instrument uses the parser of the
    enclosing PassContext (`PassContext(parse=pl.parse)`). A pass that changed nothing returns the
    very program it got (IRMutator shares unchanged trees), which was checked already: it is not
    printed and parsed again."""

    def __init__(self, parse: Optional[Callable[[str], object]] = None):
        self.parse = parse
        self._checked = None        # the last program that passed the check

    def run_after_pass(self, pass_, program) -> None:
        if program is self._checked:
            return
        where = f"after {pass_.name}"
        parse = self.parse if self.parse is not None else PassContext.current().parser()
        if parse is None:
            raise InternalError(f"{where}: roundtrip verification has no parser to read the printed IR back",
                                hint="open the context with PassContext(parse=pl.parse) (ir.compile does), "
                                     "or set PYPTO_VERIFY_LEVEL=basic to skip the print/parse check")
        roundtrip_check(program, where, parse)
        self._checked = program


def roundtrip_check(program, where: str, parse: Callable[[str], object]) -> None:
    """Print `program`, read it back with `parse`, and require a structurally equal result."""
    text = python_print(program)
    try:
        reparsed = parse(text)
    except Exception as e:
        raise InternalError(f"{where}: the printed IR does not parse back: {e}",
                            note=_numbered(text)) from e
    try:
        assert_structural_equal(program, reparsed)
    except StructuralMismatch as e:
        raise InternalError(f"{where}: the printed IR parses to a different program: {e}",
                            note=_numbered(text)) from e


def effective_instruments(ctx: PassContext) -> tuple:
    """`ctx`'s instruments plus those its verification level implies (unless given already); kept
    on the context, since they hold state (what was verified, the last program round-tripped)."""
    return instrument_hooks(ctx).instruments


class InstrumentHooks:
    """The effective instruments of a context, and per hook the bound methods that do something (an
    instrument inheriting Instrument's no-op hook is left out), so a pass call makes no empty calls."""

    __slots__ = ("instruments", "gates", "before", "after", "pipeline")

    def __init__(self, instruments: tuple):
        self.instruments = instruments
        self.gates = _overriding(instruments, "should_run")
        self.before = _overriding(instruments, "run_before_pass")
        self.after = _overriding(instruments, "run_after_pass")
        self.pipeline = tuple(i for i in instruments if hasattr(i, "begin_pipeline"))


def _overriding(instruments: tuple, hook: str) -> tuple:
    noop = getattr(Instrument, hook)
    return tuple(getattr(i, hook) for i in instruments
                 if not (isinstance(i, Instrument) and getattr(type(i), hook) is noop
                         and hook not in getattr(i, "__dict__", ())))


def instrument_hooks(ctx: PassContext) -> InstrumentHooks:
    """The InstrumentHooks of `ctx` at its current verification level (built once per level)."""
    level = ctx.verification_level
    cached = ctx._implied.get(level)
    if cached is not None:
        return cached
    out = list(ctx.instruments)
    if level is not VerificationLevel.NONE and not any(isinstance(i, VerificationInstrument) for i in out):
        out.append(VerificationInstrument(VerificationMode.BEFORE_AND_AFTER))
    if level is VerificationLevel.ROUNDTRIP and not any(isinstance(i, RoundtripInstrument) for i in out):
        out.append(RoundtripInstrument())
    hooks = ctx._implied[level] = InstrumentHooks(tuple(out))
    return hooks


def _numbered(text: str) -> str:
    return "\n".join(f"{i + 1:4d} | {line}" for i, line in enumerate(text.splitlines()))


def make_roundtrip_instrument(parse: Optional[Callable[[str], object]] = None) -> RoundtripInstrument:
    return RoundtripInstrument(parse)


class TimingInstrument(Instrument):
    """Records seconds spent per pass in `self.timings` (a list of (pass name, seconds))."""

    def __init__(self):
        self.timings: list = []
        self._start: Optional[float] = None

    def run_before_pass(self, pass_, program) -> None:
        self._start = time.perf_counter()

    def run_after_pass(self, pass_, program) -> None:
        if self._start is not None:
            self.timings.append((pass_.name, time.perf_counter() - self._start))
            self._start = None

    def report(self) -> str:
        return "\n".join(f"{name:32s} {sec * 1000:8.2f} ms" for name, sec in self.timings)


class CallbackInstrument(Instrument):
    """Ad-hoc hooks: `before(pass_, program)` / `after(pass_, program)`."""

    def __init__(self, before: Optional[Callable] = None, after: Optional[Callable] = None):
        self.before = before
        self.after = after

    def run_before_pass(self, pass_, program) -> None:
        if self.before is not None:
            self.before(pass_, program)

    def run_after_pass(self, pass_, program) -> None:
        if self.after is not None:
            self.after(pass_, program)


class DumpInstrument(Instrument):
    """Writes `NN_after_<PassName>.py` (the printer's text) into `directory` after every pass."""

    def __init__(self, directory: str, start_index: int = 1):
        self.directory = directory
        self.index = start_index
        os.makedirs(directory, exist_ok=True)

    def dump(self, filename: str, program) -> str:
        path = os.path.join(self.directory, filename)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(python_print(program))
        return path

    def run_after_pass(self, pass_, program) -> None:
        self.dump(f"{self.index:02d}_after_{pass_.name}.py", program)
        self.index += 1


class PassSelection(Instrument):
    """Lets only the passes named in `names` run (the others leave the program as it is)."""

    def __init__(self, names: Iterable[str]):
        self.names = frozenset(names)

    def should_run(self, pass_, program) -> bool:
        return pass_.name in self.names
