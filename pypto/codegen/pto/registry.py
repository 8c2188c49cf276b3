"""The PTO emitter table, keyed by op name like the op registry and the simulator's op table.

A family module (pypto/codegen/pto/<family>.py, mirroring pypto/ir/ops/<family>.py) registers
one emitter per op, or marks the op as lowered away before codegen with the reason:

    @emits("tile.add")
    def _add(ctx): ctx.emit_ins_outs("pto.tadd")

    lowered_away("tensor.add", "ConvertTensorToTileOps turns it into tile.add")

Family modules are discovered (a new family is one new file) and may register emitters for
ops that are not in the op registry yet (keyed by name, so they are ready when the op lands).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from pypto.errors import InternalError


@dataclass(frozen=True)
class PtoEmitter:
    name: str
    fn: Callable
    binds_result: bool = False      # the instruction defines the result SSA itself (no pto.alloc_tile for it)


_EMITTERS: dict = {}
_LOWERED_AWAY: dict = {}
_NOT_EMITTED: dict = {}
_CORE_MODULES = {"registry", "types", "scalars", "function_emitter", "statements", "verify"}


def emits(*names: str, binds_result: bool = False):
    """Register the decorated function as the emitter of each op in `names`."""
    def register(fn: Callable) -> Callable:
        for name in names:
            if name in _EMITTERS:
                raise InternalError(f"PTO emitter for {name} registered twice")
            _EMITTERS[name] = PtoEmitter(name, fn, binds_result)
        return fn
    return register


def not_emitted(name: str, reason: str) -> None:
    """An op that may reach codegen but has no PTO spelling here: emitting it raises UnsupportedError
    with `reason` (a named gap, never a guessed instruction)."""
    def refuse(ctx):
        from pypto.errors import UnsupportedError
        raise UnsupportedError(f"PTO codegen: {name} is not emitted: {reason}", ctx.call.span)
    emits(name)(refuse)
    _NOT_EMITTED[name] = reason


def not_emitted_ops() -> dict:
    _ensure_loaded()
    return dict(_NOT_EMITTED)


def lowered_away(name: str, reason: str) -> None:
    """Declare that `name` never reaches codegen, and why (checked by the coverage test)."""
    _LOWERED_AWAY[name] = reason


def emitter_for(name: str) -> Optional[PtoEmitter]:
    _ensure_loaded()
    return _EMITTERS.get(name)


def all_emitters() -> dict:
    _ensure_loaded()
    return dict(_EMITTERS)


def lowered_away_ops() -> dict:
    _ensure_loaded()
    return dict(_LOWERED_AWAY)


_LOADED = False


def _ensure_loaded() -> None:
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    import importlib
    import pkgutil

    import pypto.codegen.pto as package
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name not in _CORE_MODULES and not info.name.startswith("_"):
            importlib.import_module(f"pypto.codegen.pto.{info.name}")
