"""The options of `ir.compile` beyond program / output_dir / platform: which ones act here, and a
clear warning for those that cannot (there is no ptoas, no device binary, one memory planner).

    ir.compile(Prog, dump_passes=PassDumpLevel.CONCISE, verification_level=VerificationLevel.ROUNDTRIP,
               profiling=True)                               # all three act
    ir.compile(Prog, emit_source_loc=True)                   # IgnoredOptionWarning: says why

`split_options(options)` returns the acting options and warns once per ignored one; an unknown
keyword is the TypeError Python would raise for a misspelled argument.
"""

from __future__ import annotations

import enum
import warnings


class PassDumpLevel(enum.Enum):
    """How much `dump_passes` writes (a bool is accepted too: True → CONCISE, False → NONE)."""
    NONE = 0
    CONCISE = 1
    EXPLICIT = 2


class IgnoredOptionWarning(UserWarning):
    """A reference compile option that this build accepts but cannot act on."""


def dump_flag(dump_passes):
    """`dump_passes` as the pipeline takes it: False, or True (one snapshot per pass)."""
    if isinstance(dump_passes, PassDumpLevel):
        if dump_passes is PassDumpLevel.EXPLICIT:
            _warn("dump_passes=PassDumpLevel.EXPLICIT", "the dumps print every tile's memory space, layout and "
                  "address already, so EXPLICIT writes the same files as CONCISE")
        return dump_passes is not PassDumpLevel.NONE
    return dump_passes


# option → (the value at which it changes nothing, why it changes nothing here)
_NO_EFFECT = {
    "skip_ptoas": (True, "this build has no ptoas: compilation always stops at the .pto modules in ptoas/"),
    "dump_ptoas_passes": (False, "this build has no ptoas, so there are no ptoas passes to dump"),
    "emit_source_loc": (None, "the .pto modules carry no source locations here; the simulator reports DSL "
                              "lines itself"),
    "memory_planner": (None, "one memory planner (pypto's InitMemRef / MemoryReuse / AllocateMemoryAddr) "
                             "plans every buffer"),
    "diagnostic_phase": (None, "there are no phase-gated compile diagnostics here; errors are always raised"),
    "disabled_diagnostics": (None, "there are no optional compile diagnostics here to disable"),
    "analyze_auto_scopes_for_deps": (False, "the simulator derives task dependencies at run time from "
                                            "parameter directions and buffer overlap"),
    "enable_pypto_l0c_double_buffer": (None, "L0C double buffering is a device code-generation choice with "
                                             "no effect on the simulator"),
    "runtime": (None, "there is one runtime, the simulator"),
}
ACTING = frozenset({"verification_level", "profiling", "compile_profiling", "distributed_config"})


def _warn(option: str, why: str) -> None:
    warnings.warn(f"ir.compile({option}) has no effect in this pure-Python build: {why}", IgnoredOptionWarning,
                  stacklevel=4)


def split_options(options: dict) -> dict:
    """The options that act (verification_level, profiling, distributed_config); warns about the rest."""
    unknown = sorted(set(options) - set(_NO_EFFECT) - ACTING)
    if unknown:
        raise TypeError(f"compile() got an unexpected keyword argument '{unknown[0]}'")
    acting = {}
    for name, value in options.items():
        if name in ACTING:
            acting[name] = value
            continue
        harmless, why = _NO_EFFECT[name]
        if value is not harmless and value != harmless and not (harmless is None and value is False):
            _warn(f"{name}={value!r}", why)
    if acting.pop("compile_profiling", False):
        acting["profiling"] = True
    return acting
