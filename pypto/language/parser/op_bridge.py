"""The parser's one door to the DSL op layer (`pypto.language.ops`, docs/internals.md §3).

`build_call(path, args, kwargs, span)` builds the IR for `pl.<path>(...)`; `is_dsl_op(path)`
says whether a path names an op; `dsl_op_paths()` lists every accepted spelling (for hints).
"""

from __future__ import annotations

from typing import Any, Optional

from pypto.errors import UnsupportedError
from pypto.ir.span import Span
from pypto.language import ops


def is_dsl_op(path: str) -> bool:
    return ops.is_dsl_op(path)


def dsl_op_paths() -> list:
    return sorted(ops.dsl_op_paths())


def build_call(path: str, args: list, kwargs: dict, span: Optional[Span]) -> Any:
    if not ops.is_dsl_op(path):
        raise UnsupportedError(f"op pl.{path} is not available", span)
    return ops.build_call(path, args, kwargs, span)
