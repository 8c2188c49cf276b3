"""The one helper behind every compatibility import path (the reference's `pypto.pypto_core`,
`pypto.ir.pass_manager`, `pypto.ir.instruments`, `pypto.ir.distributed_compiled_program`).

Those paths sit in a lower layer than what they name (`pypto.ir.pass_manager` names the passes
layer), so they resolve names on first use instead of importing upward:

    __getattr__, __dir__ = lazy_exports(__name__, {"PassManager": "pypto.passes"})

The layer check (tests/test_layers.py) allows the upward reach only through this helper, and
only in the modules it lists as compatibility paths.
"""

from __future__ import annotations

import importlib
from typing import Callable, Mapping, Tuple


def resolve(target: str):
    """`"pkg.module:attr"` → that attribute; `"pkg.module"` → the module."""
    module, _, attr = target.partition(":")
    mod = importlib.import_module(module)
    return getattr(mod, attr) if attr else mod


def lazy_exports(module_name: str, names: Mapping[str, str]) -> Tuple[Callable, Callable]:
    """`(__getattr__, __dir__)` for a module re-exporting `names`: attribute → module path holding an
    attribute of the same name (or `"module:attr"` for another name)."""

    def __getattr__(name: str):
        target = names.get(name)
        if target is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        return resolve(target if ":" in target else f"{target}:{name}")

    def __dir__():
        return sorted(names)

    return __getattr__, __dir__
