"""The parser's one door to the DSL op layer (`pypto.language.ops`, docs/internals.md §3).

`build_call(path, args, kwargs, span)` builds the IR for `pl.<path>(...)`; `is_dsl_op(path)`
says whether a path names an op. When the op layer is not installed, a small fallback reads
the IR op registry directly (registered names, plus the Tensor/Tile dispatch of short
names), so the parser stays usable on its own.
"""

from __future__ import annotations

from typing import Any, Optional

from pypto.ir.ops.registry import all_ops, create_op_call, has_op
from pypto.ir.span import Span
from pypto.ir.types import ScalarType, TensorType, TileType

import importlib

try:
    _ops = importlib.import_module("pypto.language.ops")
except ModuleNotFoundError as _e:  # the op layer is another module; work without it
    if _e.name not in ("pypto.language.ops",):
        raise
    _ops = None


def _layer(name: str):
    return getattr(_ops, name, None) if _ops is not None else None


def is_dsl_op(path: str) -> bool:
    fn = _layer("is_dsl_op")
    if fn is not None and fn(path):
        return True
    return _fallback_target(path) is not None or has_op(path)


def dsl_op_paths() -> list:
    paths = set(_layer("DSL_OP_PATHS") or ())
    for name in all_ops():
        paths.add(name)
        family, _, short = name.partition(".")
        if family in ("tile", "tensor"):
            paths.add(short)
    return sorted(paths)


def build_call(path: str, args: list, kwargs: dict, span: Optional[Span]) -> Any:
    fn = _layer("build_call")
    if fn is not None and (_layer("is_dsl_op") is None or _layer("is_dsl_op")(path)):
        return fn(path, args, kwargs, span)
    target = path if has_op(path) else _fallback_target(path, args)
    if target is None:
        from pypto.errors import UnsupportedError
        raise UnsupportedError(f"op pl.{path} is not available", span)
    return create_op_call(target, args, kwargs, span)


def _fallback_target(path: str, args: Optional[list] = None) -> Optional[str]:
    """Unified dispatch of a short name: Tensor operand → tensor.<op>, Tile → tile.<op>, scalar rhs → <op>s."""
    if "." in path:
        return None
    first = args[0].type if args and hasattr(args[0], "type") else None
    families = ["tile", "tensor"] if first is None else (["tensor"] if isinstance(first, TensorType)
                                                          else ["tile"] if isinstance(first, TileType) else [])
    scalar_rhs = bool(args) and len(args) > 1 and isinstance(getattr(args[1], "type", None), ScalarType)
    for fam in families:
        if scalar_rhs and has_op(f"{fam}.{path}s"):
            return f"{fam}.{path}s"
        if has_op(f"{fam}.{path}"):
            return f"{fam}.{path}"
    return None
